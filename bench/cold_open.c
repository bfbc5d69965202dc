/* cold_open: what the first dat_ia_open of a process costs, next to what
 * the transport underneath costs when a program opens it by itself.
 *
 * Every measurement runs in a fresh process: this program forks and
 * execs itself (/proc/self/exe) with --child, the child times one thing
 * with CLOCK_MONOTONIC and writes the figures into a pipe, and the parent
 * collects them.  The parent never loads a provider or libfabric, and
 * this program does not link libfabric (it resolves the few libfabric
 * calls it makes with dlsym), so nothing is paid before a child's clock
 * starts but the loading of libdat itself.  Each child is bounded (-T)
 * and reaped; one that overstays is killed.
 *
 * What the children measure, -r times each (default 5), the kinds taking
 * turns within a repetition and the first one rotating:
 *
 *   dat NAME   dat_ia_open(NAME), the first IA of the process (dat.conf
 *              read, provider loaded, its IA opened), then a second
 *              dat_ia_open(NAME) while the first is still open
 *   raw        raw libfabric as libdat's ofi provider uses it:
 *              dlopen("libfabric.so.1"), the first fi_getinfo (tcp,
 *              FI_EP_MSG, node 127.0.0.1 with FI_SOURCE), then
 *              fi_fabric + fi_domain + fi_eq_open; and a second
 *              fi_getinfo after that
 *   sock       socket() + bind(127.0.0.1:0) + listen(), the kernel TCP
 *              that libdat's tcp provider drives
 *
 * The table gives the median, min and max in milliseconds and, for each
 * IA's first open, the ratio of the medians to its baseline: raw
 * libfabric (dlopen to fi_eq_open) when opening the IA loaded libfabric
 * into the child, the socket baseline otherwise.
 *
 * IA names come from -i (default ofi-tcp,tcp); a name no dat.conf entry
 * has (dat_registry_list_providers, so DAT_OVERRIDE counts) is skipped
 * with a line saying so.  bench/cold-open.sh runs this from the top
 * build directory with DAT_OVERRIDE set to the build tree's dat.conf.
 *
 * Exit status: 0; 1 when a measurement failed (said on stderr; the rest
 * is still printed); 2 on a usage error. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1           /* pipe2 */
#endif
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dat/udat.h>

/* Types, flags and the inline calls (fi_domain, fi_eq_open, fi_close go
 * through the fabric's ops table); the exported functions come from
 * dlsym, never from the linker. */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#define MAX_REPS 101
#define MAX_IAS 8
#define RESULT_MAX 512          /* one child's answer */
#define FABRIC_SONAME "libfabric.so.1"

/* ---- common ------------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- the children --------------------------------------------------------- */

static int result_fd = -1;

/* The child's one answer: "ok key=value ..." or "err message". */
__attribute__((format(printf, 1, 2)))
static void answer(const char *fmt, ...)
{
	char buf[RESULT_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(result_fd, buf, (size_t)n) != n) {
		/* the parent will say the child gave no answer */
	}
}

static const char *dat_why(DAT_RETURN rc, char *buf, size_t len)
{
	const char *major = "?", *minor = "";

	dat_strerror(rc, &major, &minor);
	snprintf(buf, len, "%s%s%s (0x%08x)", major, minor && *minor ? " " : "",
		 minor ? minor : "", (unsigned)rc);
	return buf;
}

static int child_dat(const char *name)
{
	DAT_EVD_HANDLE async1 = DAT_HANDLE_NULL, async2 = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia1, ia2;
	DAT_RETURN rc;
	double t0, t1, t2;
	char why[200];
	void *fabric;

	t0 = now_ms();
	rc = dat_ia_open((DAT_NAME_PTR)name, 8, &async1, &ia1);
	t1 = now_ms();
	if (rc != DAT_SUCCESS) {
		answer("err dat_ia_open(\"%s\") failed: %s", name,
		       dat_why(rc, why, sizeof(why)));
		return 1;
	}
	rc = dat_ia_open((DAT_NAME_PTR)name, 8, &async2, &ia2);
	t2 = now_ms();
	if (rc != DAT_SUCCESS) {
		answer("err the second dat_ia_open(\"%s\") failed: %s", name,
		       dat_why(rc, why, sizeof(why)));
		return 1;
	}
	/* Did this IA bring libfabric in?  Then raw libfabric is its
	 * baseline.  RTLD_NOLOAD never loads anything. */
	fabric = dlopen(FABRIC_SONAME, RTLD_NOW | RTLD_NOLOAD);
	answer("ok first=%.6f second=%.6f fabric=%d", t1 - t0, t2 - t1,
	       fabric != NULL);
	if (fabric)
		dlclose(fabric);
	rc = dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG);
	if (rc == DAT_SUCCESS)
		rc = dat_ia_close(ia1, DAT_CLOSE_ABRUPT_FLAG);
	if (rc != DAT_SUCCESS)
		fprintf(stderr, "cold_open: dat_ia_close(\"%s\") failed: %s\n",
			name, dat_why(rc, why, sizeof(why)));
	return 0;
}

/* The libfabric calls that are real functions, resolved by name. */
struct fabric_fns {
	int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
		       const struct fi_info *, struct fi_info **);
	struct fi_info *(*dupinfo)(const struct fi_info *);
	void (*freeinfo)(struct fi_info *);
	int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
	const char *(*strerror)(int);
	uint32_t (*version)(void);
};

static int resolve(void *lib, const char *sym, void *fnp)
{
	void *p = dlsym(lib, sym);

	if (!p) {
		answer("err dlsym(%s) in %s: %s", sym, FABRIC_SONAME, dlerror());
		return -1;
	}
	memcpy(fnp, &p, sizeof(p));
	return 0;
}

static int child_raw(void)
{
	struct fabric_fns f;
	struct fi_info *hints, *info = NULL, *again = NULL;
	struct fid_fabric *fab = NULL;
	struct fid_domain *dom = NULL;
	struct fid_eq *eq = NULL;
	struct fi_eq_attr eqa;
	double t0, t1, t2, t3, t4, t5;
	uint32_t ver;
	void *lib;
	int ret;

	t0 = now_ms();
	/* as libdat's registry loads a provider (and with it libfabric) */
	lib = dlopen(FABRIC_SONAME, RTLD_NOW | RTLD_GLOBAL);
	t1 = now_ms();
	if (!lib) {
		answer("err dlopen(%s): %s", FABRIC_SONAME, dlerror());
		return 1;
	}
	if (resolve(lib, "fi_getinfo", &f.getinfo) ||
	    resolve(lib, "fi_dupinfo", &f.dupinfo) ||
	    resolve(lib, "fi_freeinfo", &f.freeinfo) ||
	    resolve(lib, "fi_fabric", &f.fabric) ||
	    resolve(lib, "fi_strerror", &f.strerror) ||
	    resolve(lib, "fi_version", &f.version))
		return 1;

	hints = f.dupinfo(NULL);        /* fi_allocinfo() */
	if (!hints || !(hints->fabric_attr->prov_name = strdup("tcp"))) {
		answer("err out of memory");
		return 1;
	}
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	ver = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
	t2 = now_ms();
	ret = f.getinfo(ver, "127.0.0.1", NULL, FI_SOURCE, hints, &info);
	t3 = now_ms();
	if (ret) {
		answer("err fi_getinfo(tcp, FI_EP_MSG, 127.0.0.1): %s",
		       f.strerror(-ret));
		return 1;
	}
	ret = f.fabric(info->fabric_attr, &fab, NULL);
	if (ret) {
		answer("err fi_fabric: %s", f.strerror(-ret));
		return 1;
	}
	ret = fi_domain(fab, info, &dom, NULL);
	if (ret) {
		answer("err fi_domain: %s", f.strerror(-ret));
		return 1;
	}
	memset(&eqa, 0, sizeof(eqa));
	eqa.size = 1024;
	eqa.wait_obj = FI_WAIT_FD;
	ret = fi_eq_open(fab, &eqa, &eq, NULL);
	t4 = now_ms();
	if (ret) {
		answer("err fi_eq_open: %s", f.strerror(-ret));
		return 1;
	}
	ret = f.getinfo(ver, "127.0.0.1", NULL, FI_SOURCE, hints, &again);
	t5 = now_ms();
	if (ret) {
		answer("err the second fi_getinfo: %s", f.strerror(-ret));
		return 1;
	}
	/* hints built and symbols resolved between t1 and t2: in the total */
	answer("ok dlopen=%.6f getinfo=%.6f open=%.6f total=%.6f getinfo2=%.6f "
	       "version=%u.%u", t1 - t0, t3 - t2, t4 - t3, t4 - t0, t5 - t4,
	       FI_MAJOR(f.version()), FI_MINOR(f.version()));
	f.freeinfo(again);
	fi_close(&eq->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	f.freeinfo(info);
	f.freeinfo(hints);
	return 0;
}

static int child_sock(void)
{
	struct sockaddr_in sin;
	double t0, t1;
	int s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t0 = now_ms();
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(s, 128)) {
		answer("err socket/bind/listen on 127.0.0.1: %s", strerror(errno));
		return 1;
	}
	t1 = now_ms();
	answer("ok sock=%.6f", t1 - t0);
	close(s);
	return 0;
}

/* argv: --child KIND FD [IA] */
static int child_main(int argc, char **argv)
{
	int rc;

	if (argc < 4)
		return 2;
	result_fd = atoi(argv[3]);
	if (!strcmp(argv[2], "dat") && argc >= 5)
		rc = child_dat(argv[4]);
	else if (!strcmp(argv[2], "raw"))
		rc = child_raw();
	else if (!strcmp(argv[2], "sock"))
		rc = child_sock();
	else
		rc = 2;
	/* _exit: no destructors.  libfabric's can deadlock against a thread
	 * still inside it (libdat's progress thread). */
	fflush(NULL);
	_exit(rc);
}

/* ---- the parent --------------------------------------------------------------- */

enum kind { K_DAT, K_RAW, K_SOCK };

struct item {
	enum kind kind;
	const char *ia;         /* K_DAT */
};

/* One table row: a figure over the repetitions. */
enum row_id {
	R_DAT_FIRST, R_DAT_SECOND,              /* per IA: 2 * i + R_DAT_... */
	R_RAW_DLOPEN = 2 * MAX_IAS, R_RAW_GETINFO, R_RAW_OPEN, R_RAW_TOTAL,
	R_RAW_GETINFO2, R_SOCK, NROWS
};

static struct {
	int reps;
	int timeout_s;
	int verbose;
	const char *ias[MAX_IAS];
	int nias;
} opt = {
	.reps = 5,
	.timeout_s = 30,
	.ias = { "ofi-tcp", "tcp" },
	.nias = 2,
};

static double samples[NROWS][MAX_REPS];
static int nsamples[NROWS];
static int fabric_seen[MAX_IAS];        /* opening IA i loaded libfabric */
static int fabric_unseen[MAX_IAS];
static char fabric_version[32];
static char self[4096];
static int failures;

static void usage(FILE *to)
{
	fprintf(to,
		"usage: cold_open [-r reps] [-i ia,...] [-T seconds] [-v]\n"
		"  -r reps     fresh processes per measurement (default 5, at most %d)\n"
		"  -i ia,...   DAT IA names (default ofi-tcp,tcp, at most %d)\n"
		"  -T seconds  a child that takes longer is killed (default 30)\n"
		"  -v          print every run's figures on stderr\n",
		MAX_REPS, MAX_IAS);
}

static void add_sample(int row, double v)
{
	if (nsamples[row] < MAX_REPS)
		samples[row][nsamples[row]++] = v;
}

/* "key=value" out of a child's answer; -1 when it is not there. */
static double field(const char *line, const char *key)
{
	size_t len = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[len] == '=')
			return strtod(p + len + 1, NULL);
		p += len;
	}
	return -1;
}

static void load_average(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a = 0, b = 0, c = 0;

	if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	else
		snprintf(buf, len, "unknown");
	if (f)
		fclose(f);
}

/* Runs one child for it and reads its answer into out.  Returns 0 when
 * the child answered "ok" and exited 0; otherwise says why on stderr. */
static int run_child(const struct item *it, int rep, char *out, size_t outlen)
{
	char fdarg[16], label[80];
	double deadline;
	size_t got = 0;
	int p[2], status = 0, timed_out = 0;
	pid_t pid;

	if (it->kind == K_DAT)
		snprintf(label, sizeof(label), "dat_ia_open(\"%s\")", it->ia);
	else
		snprintf(label, sizeof(label), "%s",
			 it->kind == K_RAW ? "raw libfabric" : "socket+bind+listen");
	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC)) {
		fprintf(stderr, "cold_open: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cold_open: fork: %s\n", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		const char *kind = it->kind == K_DAT ? "dat" :
				   it->kind == K_RAW ? "raw" : "sock";

		/* the write end alone survives the exec */
		if (fcntl(p[1], F_SETFD, 0))
			_exit(127);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		execl(self, "cold_open", "--child", kind, fdarg,
		      it->kind == K_DAT ? it->ia : (char *)NULL, (char *)NULL);
		dprintf(p[1], "err exec %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	close(p[1]);

	/* The answer, until the child closes its end (exits) or overstays. */
	deadline = now_ms() + opt.timeout_s * 1e3;
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		double left = deadline - now_ms();
		ssize_t n;
		int r;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		r = poll(&pfd, 1, (int)left + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;       /* the deadline check ends it */
		n = read(p[0], out + got, outlen - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		out[got] = '\0';
		if (got >= outlen - 1)
			break;
	}
	close(p[0]);
	/* Reaped in any case: waited for until the same deadline, then killed. */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "cold_open: waitpid: %s\n", strerror(errno));
			break;
		}
		if (timed_out || now_ms() >= deadline) {
			timed_out = 1;
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	out[strcspn(out, "\n")] = '\0';
	if (timed_out) {
		fprintf(stderr, "cold_open: %s, run %d: no end within %d s; killed\n",
			label, rep + 1, opt.timeout_s);
		return -1;
	}
	if (!strncmp(out, "err ", 4)) {
		fprintf(stderr, "cold_open: %s, run %d: %s\n", label, rep + 1, out + 4);
		return -1;
	}
	if (strncmp(out, "ok ", 3)) {
		fprintf(stderr, "cold_open: %s, run %d: the child gave no answer", label,
			rep + 1);
		if (WIFSIGNALED(status))
			fprintf(stderr, " (killed by signal %d)\n", WTERMSIG(status));
		else
			fprintf(stderr, " (exit %d)\n", WEXITSTATUS(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "cold_open: %s, run %d: answered, then %s %d\n", label,
			rep + 1, WIFSIGNALED(status) ? "killed by signal" : "exit",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		return -1;
	}
	if (opt.verbose)
		fprintf(stderr, "cold_open: run %d: %s: %s\n", rep + 1, label, out + 3);
	return 0;
}

static void record(const struct item *it, int ia, const char *out)
{
	switch (it->kind) {
	case K_DAT:
		add_sample(2 * ia + R_DAT_FIRST, field(out, "first"));
		add_sample(2 * ia + R_DAT_SECOND, field(out, "second"));
		if (field(out, "fabric") > 0)
			fabric_seen[ia]++;
		else
			fabric_unseen[ia]++;
		break;
	case K_RAW:
		add_sample(R_RAW_DLOPEN, field(out, "dlopen"));
		add_sample(R_RAW_GETINFO, field(out, "getinfo"));
		add_sample(R_RAW_OPEN, field(out, "open"));
		add_sample(R_RAW_TOTAL, field(out, "total"));
		add_sample(R_RAW_GETINFO2, field(out, "getinfo2"));
		if (!fabric_version[0]) {
			const char *v = strstr(out, "version=");

			if (v)
				snprintf(fabric_version, sizeof(fabric_version), "%.*s",
					 (int)strcspn(v + 8, " "), v + 8);
		}
		break;
	case K_SOCK:
		add_sample(R_SOCK, field(out, "sock"));
		break;
	}
}

/* Median of a row, or -1 when it has no samples; min and max too. */
static double row_stats(int row, double *min, double *max)
{
	double v[MAX_REPS];
	int n = nsamples[row];

	if (n == 0)
		return -1;
	memcpy(v, samples[row], (size_t)n * sizeof(v[0]));
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_row(const char *what, int row, int base_row, const char *base)
{
	double med, min, max, bmed, bmin, bmax;
	char ratio[16] = "-";

	med = row_stats(row, &min, &max);
	if (med < 0) {
		printf("%-46s %10s %9s %9s %9s\n", what, "failed", "-", "-", "-");
		return;
	}
	if (base_row >= 0) {
		bmed = row_stats(base_row, &bmin, &bmax);
		if (bmed > 0)
			snprintf(ratio, sizeof(ratio), "%.2f", med / bmed);
		else
			base = "its baseline failed";
	}
	printf("%-46s %10.3f %9.3f %9.3f %9s%s%s\n", what, med, min, max, ratio,
	       base ? "  " : "", base ? base : "");
	if (nsamples[row] < opt.reps)
		printf("%-46s (%d of %d runs failed)\n", "", opt.reps - nsamples[row],
		       opt.reps);
}

/* The names dat.conf has; the others are said and left out. */
static void keep_known_ias(void)
{
	DAT_PROVIDER_INFO infos[64], *list[64];
	DAT_COUNT n = 0;
	int i, j, k, kept = 0;

	for (i = 0; i < 64; i++)
		list[i] = &infos[i];
	if (dat_registry_list_providers(64, &n, list) != DAT_SUCCESS)
		n = 0;
	for (i = 0; i < opt.nias; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(infos[j].ia_name, opt.ias[i]))
				break;
		if (j == n) {
			const char *o = getenv("DAT_OVERRIDE");

			printf("cold_open: no \"%s\" entry in dat.conf (%s%s): skipped\n",
			       opt.ias[i], o ? "DAT_OVERRIDE=" : "DAT_OVERRIDE unset",
			       o ? o : "");
			continue;
		}
		for (k = 0; k < kept; k++)
			if (!strcmp(opt.ias[k], opt.ias[i]))
				break;
		if (k == kept)
			opt.ias[kept++] = opt.ias[i];
	}
	opt.nias = kept;
}

int main(int argc, char **argv)
{
	struct item items[MAX_IAS + 2];
	char out[RESULT_MAX], la0[64], la1[64], *list = NULL;
	int nitems = 0, c, rep, i;
	ssize_t len;

	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_main(argc, argv);

	while ((c = getopt(argc, argv, "r:i:T:vh")) != -1) {
		switch (c) {
		case 'r':
			opt.reps = atoi(optarg);
			if (opt.reps < 1 || opt.reps > MAX_REPS) {
				fprintf(stderr, "cold_open: -r takes 1 to %d\n", MAX_REPS);
				return 2;
			}
			break;
		case 'i':
			free(list);
			list = strdup(optarg);
			if (!list)
				return 2;
			opt.nias = 0;
			for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
				if (opt.nias == MAX_IAS) {
					fprintf(stderr, "cold_open: at most %d IAs\n", MAX_IAS);
					return 2;
				}
				opt.ias[opt.nias++] = s;
			}
			break;
		case 'T':
			opt.timeout_s = atoi(optarg);
			if (opt.timeout_s < 1) {
				fprintf(stderr, "cold_open: -T takes seconds, at least 1\n");
				return 2;
			}
			break;
		case 'v':
			opt.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		fprintf(stderr, "cold_open: cannot find myself (/proc/self/exe): %s\n",
			strerror(errno));
		return 1;
	}
	self[len] = '\0';

	keep_known_ias();
	for (i = 0; i < opt.nias; i++)
		items[nitems++] = (struct item){ .kind = K_DAT, .ia = opt.ias[i] };
	items[nitems++] = (struct item){ .kind = K_RAW };
	items[nitems++] = (struct item){ .kind = K_SOCK };

	load_average(la0, sizeof(la0));
	printf("cold_open: %d runs of each, every one in a fresh process; %ld CPUs "
	       "online, load average %s\n", opt.reps, sysconf(_SC_NPROCESSORS_ONLN), la0);
	fflush(stdout);
	for (rep = 0; rep < opt.reps; rep++) {
		for (i = 0; i < nitems; i++) {
			const struct item *it = &items[(i + rep) % nitems];

			if (run_child(it, rep, out, sizeof(out))) {
				failures++;
				continue;
			}
			record(it, it->kind == K_DAT ? (int)(it - items) : -1, out + 3);
		}
	}
	load_average(la1, sizeof(la1));

	printf("\n%-46s %10s %9s %9s %9s  %s\n", "what (ms)", "median", "min", "max",
	       "ratio", "baseline");
	for (i = 0; i < opt.nias; i++) {
		char what[96];
		int fab = fabric_seen[i] > 0;

		snprintf(what, sizeof(what), "dat_ia_open(\"%s\"), first IA", opt.ias[i]);
		print_row(what, 2 * i + R_DAT_FIRST, fab ? R_RAW_TOTAL : R_SOCK,
			  fab ? "raw libfabric, dlopen to fi_eq_open" :
				"socket+bind+listen");
		snprintf(what, sizeof(what), "dat_ia_open(\"%s\"), second IA", opt.ias[i]);
		print_row(what, 2 * i + R_DAT_SECOND, -1, NULL);
		if (fabric_seen[i] && fabric_unseen[i])
			printf("%-46s (libfabric loaded in %d runs, not in %d)\n", "",
			       fabric_seen[i], fabric_unseen[i]);
	}
	print_row("raw libfabric: dlopen(\"" FABRIC_SONAME "\")", R_RAW_DLOPEN, -1, NULL);
	print_row("raw libfabric: first fi_getinfo", R_RAW_GETINFO, -1, NULL);
	print_row("raw libfabric: fi_fabric+fi_domain+fi_eq_open", R_RAW_OPEN, -1, NULL);
	print_row("raw libfabric: dlopen to fi_eq_open", R_RAW_TOTAL, -1, NULL);
	print_row("raw libfabric: a second fi_getinfo", R_RAW_GETINFO2, -1, NULL);
	print_row("socket+bind+listen", R_SOCK, -1, NULL);
	printf("\nratio: median / median of the baseline.  libfabric %s; "
	       "load average at the end %s\n",
	       fabric_version[0] ? fabric_version : "?", la1);
	free(list);
	return failures ? 1 : 0;
}
