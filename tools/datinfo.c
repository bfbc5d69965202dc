/* datinfo: the dat.conf files libdat reads and why, every entry in them,
 * whether each opens on this host (and why not), and the attributes of the
 * ones that do.  The DAT counterpart of fi_info and ibv_devinfo; see
 * datinfo(1).
 *
 * It reads the files with libdat's own parser and search order
 * (dat/confpath.c), so it can show what the registry leaves out (kernel,
 * nondefault, other-version and shadowed lines), and opens entries only
 * through the public API.
 *
 * The same source is built twice (dat/dat_gen.h): datinfo against
 * libdat.so.1 for u1.2 entries, and datinfo2 against libdat2.so.2, a
 * helper that datinfo runs for each u2.0 entry ("datinfo2 --entry N:LINE"),
 * since one process cannot hold both generations' structures. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/wait.h>

#include "dat_gen.h"

#include "conf.h"
#include "confpath.h"
#include "datinfo.h"

struct entry {
	struct dat_conf_entry e;
	const char *file;
	char skip[512];		/* why it is not opened, or "" */
	int other_gen;		/* datinfo: a u2.0 entry, for datinfo2 to open */
};

static struct entry *entries;
static size_t nentries;
static int verbose, brief;
static long helper_entry = -1;	/* datinfo2 --entry N:LINE: entry N only */

/* The entries of the other generation: datinfo (DAT 1.2) hands u2.0 lines
 * to datinfo2 (DAT 2.0); datinfo2 is only ever asked about its own. */
#if DAT_GEN == 2
#define OTHER_MAJOR 1
#define OTHER_MINOR 2
#else
#define OTHER_MAJOR 2
#define OTHER_MINOR 0
#endif
#ifndef DATINFO2_PATH
#define DATINFO2_PATH "/usr/local/lib/libdat/datinfo2"
#endif

static void usage(FILE *to)
{
	fprintf(to,
		"usage: datinfo [-v] [-b] [-p NAME]   list dat.conf entries, open each\n"
		"       datinfo --conf                print dat.conf lines for this host\n"
		"       datinfo --list-only           list the registered entries only\n"
		"  -v, --verbose   every IA and provider attribute\n"
		"  -b, --brief     one line per entry: NAME<TAB>STATUS<TAB>DETAIL\n"
		"  -p, --provider NAME   only the entries named NAME\n");
}

static void note_bad_line(void *arg, unsigned line, const char *field,
			  const char *reason)
{
	const char *file = arg;

	if (!brief && helper_entry < 0)
		printf("  %s:%u: %s%s: %s; line skipped\n", file, line,
		       strcmp(field, "end of line") ? "bad " : "", field, reason);
}

static int same_key(const struct dat_conf_entry *a, const struct dat_conf_entry *b)
{
	return a->api_major == b->api_major && a->api_minor == b->api_minor &&
	       !a->thread_safe == !b->thread_safe && !strcmp(a->ia_name, b->ia_name);
}

/* The keys libdat registered from dat.conf (dat_registry_list_providers),
 * read once before anything is opened. */
static DAT_PROVIDER_INFO *registered;
static DAT_COUNT nregistered;

static void read_registry(void)
{
	DAT_PROVIDER_INFO **list;
	DAT_COUNT n = 0, i;

	dat_registry_list_providers(0, &n, NULL);	/* counts */
	registered = calloc((size_t)n + 1, sizeof(*registered));
	list = calloc((size_t)n + 1, sizeof(*list));
	if (!registered || !list) {
		fprintf(stderr, "datinfo: out of memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++)
		list[i] = &registered[i];
	if (n && dat_registry_list_providers(n, &n, list) != DAT_SUCCESS)
		n = 0;
	nregistered = n;
	free(list);
}

static int is_registered(const struct dat_conf_entry *e)
{
	DAT_COUNT i;

	for (i = 0; i < nregistered; i++)
		if (registered[i].dapl_version_major == e->api_major &&
		    registered[i].dapl_version_minor == e->api_minor &&
		    !registered[i].is_thread_safe == !e->thread_safe &&
		    !strcmp(registered[i].ia_name, e->ia_name))
			return 1;
	return 0;
}

/* Why datinfo does not open this line, in x->skip ("" when it opens it):
 * a kernel entry, one for another DAT version, a nondefault one, or a key
 * that an earlier line already gave. */
static void classify(struct entry *x, size_t first_of_file)
{
	size_t i;

	if (x->e.api_type != 'u') {
		snprintf(x->skip, sizeof(x->skip), "%c%u.%u: a kernel (kdat) "
			 "entry, not opened", x->e.api_type, x->e.api_major,
			 x->e.api_minor);
		return;
	}
	if (x->e.api_major == OTHER_MAJOR && x->e.api_minor == OTHER_MINOR) {
#if DAT_GEN == 2
		snprintf(x->skip, sizeof(x->skip), "u1.2: a DAT 1.2 entry "
			 "(libdat.so.1: datinfo opens it), not opened");
		return;
#else
		x->other_gen = 1;
#endif
	} else if (x->e.api_major != DAT_VERSION_MAJOR ||
		 x->e.api_minor != DAT_VERSION_MINOR) {
		snprintf(x->skip, sizeof(x->skip),
			 "u%u.%u: for another DAT library, not opened",
			 x->e.api_major, x->e.api_minor);
		return;
	}
	if (!x->e.is_default) {
		snprintf(x->skip, sizeof(x->skip), "nondefault: libdat "
			 "registers default entries only, not opened");
		return;
	}
	for (i = 0; i < nentries; i++) {
		struct entry *y = &entries[i];

		if (y == x || y->skip[0] || !same_key(&y->e, &x->e))
			continue;
		if (i < first_of_file)
			snprintf(x->skip, sizeof(x->skip),
				 "shadowed by %s:%u (the first file read "
				 "wins), not opened", y->file, y->e.line);
		else
			snprintf(x->skip, sizeof(x->skip),
				 "alternative to line %u (libdat loads it "
				 "only when line %u's library does not load), "
				 "not opened", y->e.line, y->e.line);
		return;
	}
}

/* Reads every file libdat would read.  Returns -1 when the listing
 * cannot be made (an unreadable DAT_OVERRIDE). */
static int read_files(void)
{
	struct dat_conf_source src[DAT_CONF_MAX_SOURCES];
	size_t n = dat_conf_sources(src, DAT_CONF_MAX_SOURCES), i, j, k;
	int quiet = brief || helper_entry >= 0;	/* datinfo2: the entry only */

	if (!quiet)
		printf("dat.conf files, in the order libdat reads them:\n");
	for (i = 0; i < n; i++) {
		struct dat_conf_entry *got = NULL;
		struct entry *bigger;
		size_t ngot = 0, len = 0, cap = 0, first = nentries;
		char *text = NULL, *t;
		int err;
		FILE *f = dat_conf_open(src[i].path, &err);

		if (!f) {
			if (getenv("DAT_OVERRIDE")) {
				fprintf(stderr, "datinfo: DAT_OVERRIDE=%s: cannot "
					"open: %s\n", src[i].path, strerror(err));
				return -1;
			}
			if (!quiet)
				printf("  %s (%s): %s\n", src[i].path, src[i].why,
				       err == ENOENT ? "not there"
						     : strerror(err));
			continue;
		}
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 8192;
				t = realloc(text, cap);
				if (!t)
					break;
				text = t;
			}
			j = fread(text + len, 1, cap - len, f);
			if (!j)
				break;
			len += j;
		}
		fclose(f);
		if (!quiet)
			printf("  %s (%s): read\n", src[i].path, src[i].why);
		if (!text || dat_conf_parse(text, len, &got, &ngot, note_bad_line,
					    (void *)src[i].path) != 0) {
			fprintf(stderr, "datinfo: out of memory\n");
			exit(1);
		}
		free(text);
		bigger = realloc(entries, (nentries + ngot + 1) * sizeof(*entries));
		if (!bigger) {
			fprintf(stderr, "datinfo: out of memory\n");
			exit(1);
		}
		entries = bigger;
		for (k = 0; k < ngot; k++) {
			struct entry *x = &entries[nentries];

			memset(x, 0, sizeof(*x));
			x->e = got[k];	/* takes over the strings */
			x->file = src[i].path;
			nentries++;
			classify(x, first);
		}
		free(got);	/* the strings now belong to entries[] */
	}
	return 0;
}

static const char *addr_text(DAT_IA_ADDRESS_PTR a, char *buf, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)a;

	if (!sa)
		return "(none)";
	if (sa->sa_family == AF_INET)
		return inet_ntop(AF_INET,
				 &((const struct sockaddr_in *)a)->sin_addr,
				 buf, (socklen_t)len);
	if (sa->sa_family == AF_INET6)
		return inet_ntop(AF_INET6,
				 &((const struct sockaddr_in6 *)a)->sin6_addr,
				 buf, (socklen_t)len);
	snprintf(buf, len, "(address family %d)", sa->sa_family);
	return buf;
}

static void print_named(const char *what, DAT_COUNT n, const DAT_NAMED_ATTR *a)
{
	DAT_COUNT i;

	printf("    %-36s %d\n", what, (int)n);
	for (i = 0; a && i < n; i++)
		printf("      %s = %s\n", a[i].name ? a[i].name : "(null)",
		       a[i].value ? a[i].value : "(null)");
}

#define U(f) printf("    %-36s %llu\n", #f, (unsigned long long)ia->f)
#define I(f) printf("    %-36s %d\n", #f, (int)ia->f)
#define B(f) printf("    %-36s %s\n", #f, ia->f ? "true" : "false")
#define PU(f) printf("    %-36s %llu\n", #f, (unsigned long long)pa->f)
#define PI(f) printf("    %-36s %d\n", #f, (int)pa->f)
#define PB(f) printf("    %-36s %s\n", #f, pa->f ? "true" : "false")
#define PX(f) printf("    %-36s 0x%llx\n", #f, (unsigned long long)pa->f)

static void print_all(const DAT_IA_ATTR *ia, const DAT_PROVIDER_ATTR *pa)
{
	char buf[INET6_ADDRSTRLEN + 32];
	int i, j;

	printf("    DAT_IA_ATTR:\n");
	printf("    %-36s %s\n", "adapter_name", ia->adapter_name);
	printf("    %-36s %s\n", "vendor_name", ia->vendor_name);
	U(hardware_version_major); U(hardware_version_minor);
	U(firmware_version_major); U(firmware_version_minor);
	printf("    %-36s %s\n", "ia_address_ptr",
	       addr_text(ia->ia_address_ptr, buf, sizeof(buf)));
	I(max_eps); I(max_dto_per_ep); I(max_rdma_read_per_ep_in);
	I(max_rdma_read_per_ep_out); I(max_evds); I(max_evd_qlen);
	I(max_iov_segments_per_dto); I(max_lmrs); U(max_lmr_block_size);
	U(max_lmr_virtual_address); I(max_pzs); U(max_message_size);
	U(max_rdma_size); I(max_rmrs); U(max_rmr_target_address);
	I(max_srqs); I(max_ep_per_srq); I(max_recv_per_srq);
	I(max_iov_segments_per_rdma_read); I(max_iov_segments_per_rdma_write);
	I(max_rdma_read_in); I(max_rdma_read_out);
	B(max_rdma_read_per_ep_in_guaranteed);
	B(max_rdma_read_per_ep_out_guaranteed);
#if DAT_GEN == 2
	B(zb_supported);
	printf("    %-36s %d (%s)\n", "extension_supported",
	       (int)ia->extension_supported,
	       ia->extension_supported == DAT_EXTENSION_IB ? "DAT_EXTENSION_IB" :
	       ia->extension_supported == DAT_EXTENSION_IW ? "DAT_EXTENSION_IW" :
	       ia->extension_supported == DAT_EXTENSION_NONE ?
	       "DAT_EXTENSION_NONE" : "?");
	I(extension_version);
#endif
	print_named("num_transport_attr", ia->num_transport_attr,
		    ia->transport_attr);
	print_named("num_vendor_attr", ia->num_vendor_attr, ia->vendor_attr);
	printf("    DAT_PROVIDER_ATTR:\n");
	printf("    %-36s %s\n", "provider_name", pa->provider_name);
	PU(provider_version_major); PU(provider_version_minor);
	PU(dapl_version_major); PU(dapl_version_minor);
	PX(lmr_mem_types_supported);
	printf("    %-36s %d (%s)\n", "iov_ownership_on_return",
	       (int)pa->iov_ownership_on_return,
	       pa->iov_ownership_on_return == DAT_IOV_CONSUMER ? "DAT_IOV_CONSUMER" :
	       pa->iov_ownership_on_return == DAT_IOV_PROVIDER_NOMOD ?
	       "DAT_IOV_PROVIDER_NOMOD" :
	       pa->iov_ownership_on_return == DAT_IOV_PROVIDER_MOD ?
	       "DAT_IOV_PROVIDER_MOD" : "?");
	PX(dat_qos_supported); PX(completion_flags_supported);
	PB(is_thread_safe); PI(max_private_data_size); PB(supports_multipath);
	printf("    %-36s %d (%s)\n", "ep_creator", (int)pa->ep_creator,
	       pa->ep_creator == DAT_PSP_CREATES_EP_NEVER ?
	       "DAT_PSP_CREATES_EP_NEVER" :
	       pa->ep_creator == DAT_PSP_CREATES_EP_IFASKED ?
	       "DAT_PSP_CREATES_EP_IFASKED" :
	       pa->ep_creator == DAT_PSP_CREATES_EP_ALWAYS ?
	       "DAT_PSP_CREATES_EP_ALWAYS" : "?");
	printf("    %-36s %d (%s)\n", "pz_support", (int)pa->pz_support,
	       pa->pz_support == DAT_PZ_UNIQUE ? "DAT_PZ_UNIQUE" :
	       pa->pz_support == DAT_PZ_SHAREABLE ? "DAT_PZ_SHAREABLE" : "?");
	PU(optimal_buffer_alignment);
	printf("    %-36s", "evd_stream_merging_supported");
	for (i = 0; i < 6; i++) {
		printf(" ");
		for (j = 0; j < 6; j++)
			printf("%d", pa->evd_stream_merging_supported[i][j] ? 1 : 0);
	}
	printf("\n");
	PB(srq_supported); PI(srq_watermarks_supported);
	PB(srq_ep_pz_difference_supported); PI(srq_info_supported);
	PI(ep_recv_info_supported); PB(lmr_sync_req);
	PB(dto_async_return_guaranteed); PB(rdma_write_for_rdma_read_req);
	print_named("num_provider_specific_attr", pa->num_provider_specific_attr,
		    pa->provider_specific_attr);
}

static void print_summary(const DAT_IA_ATTR *ia, const DAT_PROVIDER_ATTR *pa)
{
	char buf[INET6_ADDRSTRLEN + 32];

	printf("    transport %s, address %s, provider %s %u.%u, %s\n",
	       ia->adapter_name, addr_text(ia->ia_address_ptr, buf, sizeof(buf)),
	       pa->provider_name, (unsigned)pa->provider_version_major,
	       (unsigned)pa->provider_version_minor,
	       pa->is_thread_safe ? "thread safe" : "not thread safe");
	printf("    max EPs %d, max EVD size %d, max message %llu bytes, "
	       "max RDMA %llu bytes\n", (int)ia->max_eps, (int)ia->max_evd_qlen,
	       (unsigned long long)ia->max_message_size,
	       (unsigned long long)ia->max_rdma_size);
	printf("    RDMA Reads per EP: in (IRD) %d, out (ORD) %d; private data "
	       "%d bytes per message\n", (int)ia->max_rdma_read_per_ep_in,
	       (int)ia->max_rdma_read_per_ep_out, (int)pa->max_private_data_size);
	printf("    IOV segments: %d per DTO, %d per RDMA Read, %d per RDMA "
	       "Write\n", (int)ia->max_iov_segments_per_dto,
	       (int)ia->max_iov_segments_per_rdma_read,
	       (int)ia->max_iov_segments_per_rdma_write);
	printf("    memory windows (RMRs): %d; SRQ: %s", (int)ia->max_rmrs,
	       pa->srq_supported ? "yes" : "no");
	if (pa->srq_supported)
		printf(" (max %d, %d receives each)", (int)ia->max_srqs,
		       (int)ia->max_recv_per_srq);
	printf("\n");
#if DAT_GEN == 2
	printf("    extensions: %s, version %d\n",
	       ia->extension_supported == DAT_EXTENSION_IB ? "IB" :
	       ia->extension_supported == DAT_EXTENSION_IW ? "iWARP" : "none",
	       (int)ia->extension_version);
#endif
}

/* Standard error caught into a temporary file around libdat calls, so
 * that what libdat says can be shown next to the entry it is about. */
struct catch {
	FILE *file;
	int saved;
};

static void catch_begin(struct catch *c)
{
	fflush(stderr);
	c->saved = -1;
	c->file = tmpfile();
	if (!c->file)
		return;
	c->saved = dup(2);
	if (c->saved < 0 || dup2(fileno(c->file), 2) < 0) {
		if (c->saved >= 0)
			close(c->saved);
		c->saved = -1;
		fclose(c->file);
		c->file = NULL;
	}
}

/* Restores standard error; what was caught goes to out (NUL-terminated,
 * one "libdat: "-less line per message), or is dropped when out is NULL. */
static void catch_end(struct catch *c, char *out, size_t len)
{
	char line[1024];
	size_t used = 0;

	if (out)
		out[0] = '\0';
	fflush(stderr);
	if (!c->file)
		return;
	dup2(c->saved, 2);
	close(c->saved);
	rewind(c->file);
	while (out && fgets(line, sizeof(line), c->file)) {
		const char *t = line;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(t, "libdat: ", 8))
			t += 8;
		if (!*t || used + strlen(t) + 2 > len)
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 used ? "\n" : "", t);
	}
	fclose(c->file);
}

/* Opens x through the public API; what libdat says meanwhile (the reason
 * it fails, or an alternative line that did not load) goes to said. */
static DAT_RETURN try_open(const struct entry *x, DAT_IA_HANDLE *ia,
			   char *said, size_t len)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	struct catch c;
	DAT_RETURN rc;

	catch_begin(&c);
	rc = dat_ia_openv((DAT_NAME_PTR)x->e.ia_name, 8, &async, ia,
			  x->e.api_major, x->e.api_minor,
			  x->e.thread_safe ? DAT_TRUE : DAT_FALSE);
	catch_end(&c, said, len);
	return rc;
}

/* Prints libdat's lines, each indented (or all on one line, "; " between
 * them, for --brief). */
static void print_said(const char *said, const char *prefix)
{
	const char *p = said;

	while (*p) {
		size_t n = strcspn(p, "\n");

		if (brief)
			printf("%s%.*s", p == said ? "" : "; ", (int)n, p);
		else
			printf("    %s%.*s\n", prefix, (int)n, p);
		p += n;
		if (*p)
			p++;
	}
}

/* A --brief field: tabs and newlines would break the line's format. */
static void print_field(const char *s)
{
	for (; *s; s++)
		putchar(*s == '\t' || *s == '\n' ? ' ' : *s);
}

/* A u2.0 entry: datinfo2 (the same program built for DAT 2.0, linked to
 * libdat2.so.2) reads the same files and shows entry x in the same form;
 * datinfo checks the helper is there first, so that a host without the
 * DAT 2.0 package still gets every line explained. */
static void show_other(const struct entry *x)
{
	const char *helper = getenv("DATINFO2");	/* the build tree's */
	char arg[64];
	pid_t pid;
	int st;

	if (!helper || !*helper)
		helper = DATINFO2_PATH;
	if (access(helper, X_OK) != 0) {
		char why[512];

		snprintf(why, sizeof(why), "u2.0: a DAT 2.0 entry; %s, which "
			 "opens them, is not installed (the DAT 2.0 package "
			 "ships it), not opened", helper);
		if (brief) {
			printf("%s\tnot-opened\t", x->e.ia_name);
			print_field(why);
			printf("\n");
		} else {
			printf("    %s\n", why);
		}
		return;
	}
	snprintf(arg, sizeof(arg), "%zu:%u", (size_t)(x - entries), x->e.line);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(helper, helper, "--entry", arg, "--provider", x->e.ia_name,
		      brief ? "-b" : verbose ? "-v" : NULL, (char *)NULL);
		fprintf(stderr, "datinfo: cannot run %s: %s\n", helper,
			strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		if (brief)
			printf("%s\tunavailable\t%s failed\n", x->e.ia_name,
			       helper);
		else
			printf("    unavailable here: %s failed\n", helper);
	}
}

static void show(const struct entry *x)
{
	DAT_PROVIDER_ATTR pa;
	DAT_IA_ATTR ia;
	DAT_EVD_HANDLE async;
	const char *major, *minor;
	DAT_IA_HANDLE h;
	char said[4096];
	DAT_RETURN rc;
	/* --brief: a u2.0 line's detail says so (the name may be a u1.2 one's) */
	const char *gen = DAT_GEN == 2 ? "u2.0: " : "";

	if (!brief && helper_entry < 0)
		printf("\n%s %c%u.%u %s %s (%s:%u)\n    library %s, ia_params \"%s\"\n",
		       x->e.ia_name, x->e.api_type, x->e.api_major, x->e.api_minor,
		       x->e.thread_safe ? "threadsafe" : "nonthreadsafe",
		       x->e.is_default ? "default" : "nondefault", x->file,
		       x->e.line, x->e.lib_path, x->e.ia_params);
	if (x->skip[0]) {
		if (brief) {
			printf("%s\tnot-opened\t", x->e.ia_name);
			print_field(x->skip);
			printf("\n");
		} else {
			printf("    %s\n", x->skip);
		}
		return;
	}
	if (x->other_gen) {
		show_other(x);
		return;
	}
	rc = try_open(x, &h, said, sizeof(said));
	for (char *t = said; *t; t++)
		if (*t == '\t')
			*t = ' ';
	if (rc != DAT_SUCCESS) {
		dat_strerror(rc, &major, &minor);
		if (brief) {
			printf("%s\tunavailable\t%s%s %s%s", x->e.ia_name, gen,
			       major, minor, said[0] ? ": " : "");
			print_said(said, "");
			printf("\n");
		} else {
			printf("    unavailable here: %s %s\n", major, minor);
			print_said(said, "");
		}
		return;
	}
	memset(&ia, 0, sizeof(ia));
	memset(&pa, 0, sizeof(pa));
	rc = dat_ia_query(h, &async, DAT_IA_ALL, &ia, DAT_PROVIDER_FIELD_ALL, &pa);
	if (rc != DAT_SUCCESS) {
		dat_strerror(rc, &major, &minor);
		if (brief)
			printf("%s\tunavailable\t%sdat_ia_query: %s %s\n",
			       x->e.ia_name, gen, major, minor);
		else
			printf("    opened, but dat_ia_query failed: %s %s\n",
			       major, minor);
	} else if (brief) {
		printf("%s\tavailable\t%s", x->e.ia_name, gen);
		print_field(ia.adapter_name);
		printf("\n");
	} else {
		printf("    available\n");
		/* e.g. an earlier alternative line whose library did not load */
		print_said(said, "libdat: ");
		if (verbose)
			print_all(&ia, &pa);
		else
			print_summary(&ia, &pa);
	}
	dat_ia_close(h, DAT_CLOSE_ABRUPT_FLAG);
}

/* The registered keys, one per line (libdat's own messages about bad
 * lines stay on standard error). */
static int list_only(void)
{
	DAT_COUNT i;

	read_registry();
	printf("%d provider%s:\n", (int)nregistered, nregistered == 1 ? "" : "s");
	for (i = 0; i < nregistered; i++)
		printf("  %-16s u%u.%u %s\n", registered[i].ia_name,
		       registered[i].dapl_version_major,
		       registered[i].dapl_version_minor,
		       registered[i].is_thread_safe ? "threadsafe" : "nonthreadsafe");
	free(registered);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "brief", no_argument, NULL, 'b' },
		{ "provider", required_argument, NULL, 'p' },
		{ "conf", no_argument, NULL, 'c' },
		{ "list-only", no_argument, NULL, 'l' },
		{ "entry", required_argument, NULL, 'e' },	/* datinfo2 */
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *only = NULL;
	struct catch quiet;
	int c, conf = 0, listonly = 0, found = 0;
	unsigned helper_line = 0;
	size_t i;

	opterr = 0;	/* datinfo says it itself, with its own name */
	while ((c = getopt_long(argc, argv, "vbp:h", opts, NULL)) != -1) {
		switch (c) {
		case 'v': verbose = 1; break;
		case 'b': brief = 1; break;
		case 'p': only = optarg; break;
		case 'c': conf = 1; break;
		case 'l': listonly = 1; break;
		case 'e':
			if (sscanf(optarg, "%ld:%u", &helper_entry,
				   &helper_line) != 2 || helper_entry < 0) {
				fprintf(stderr, "datinfo: bad --entry %s\n",
					optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "datinfo: bad option or missing "
				"argument: %s\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "datinfo: unexpected argument: %s\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (conf)
		return datinfo_conf();
	if (listonly)
		return list_only();
	if (read_files() != 0)
		return 1;
	/* libdat reads dat.conf itself here; what it says about bad lines
	 * datinfo has shown already */
	catch_begin(&quiet);
	read_registry();
	catch_end(&quiet, NULL, 0);
	for (i = 0; i < nentries; i++)
		if (!entries[i].skip[0] && !entries[i].other_gen &&
		    !is_registered(&entries[i].e))
			snprintf(entries[i].skip, sizeof(entries[i].skip),
				 "not registered by libdat "
				 "(dat_registry_list_providers does not list "
				 "it), not opened");
	for (i = 0; i < nentries; i++) {
		if (only && strcmp(entries[i].e.ia_name, only))
			continue;
		/* datinfo2 --entry: the one entry datinfo asks about, which
		 * must still be where datinfo saw it */
		if (helper_entry >= 0 && (i != (size_t)helper_entry ||
					  entries[i].e.line != helper_line))
			continue;
		found++;
		show(&entries[i]);
	}
	if (!brief && !only && helper_entry < 0)
		printf("\n%zu entr%s\n", nentries, nentries == 1 ? "y" : "ies");
	for (i = 0; i < nentries; i++) {
		free(entries[i].e.lib_path);
		free(entries[i].e.provider_id);
		free(entries[i].e.ia_params);
		free(entries[i].e.platform_params);
	}
	free(entries);
	free(registered);
	if (only && !found) {
		fprintf(stderr, "datinfo: no dat.conf entry is named %s\n", only);
		return 1;
	}
	return 0;
}
