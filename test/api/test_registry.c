/* The registry through the public API: dat.conf lookup and listing, loading
 * providers with fallback, add/remove, IA handle mapping, dispatch of every
 * call to the right table slot, handle checks, and concurrent opens.
 *
 * Every test runs in a process of its own (forced CK_FORK): libdat reads
 * dat.conf once per process, and each test writes the dat.conf it needs. */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dat/udat.h>
#include <dat/dat_registry.h>

#include "dattest_provider.h"

#define NOT_FOUND(sub) DAT_ERROR(DAT_PROVIDER_NOT_FOUND, sub)
#define BAD_HANDLE(sub) DAT_ERROR(DAT_INVALID_HANDLE, sub)
#define BAD_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)

static char tmpdir[4096];
static char stderr_path[4200];

static const char *provider_lib(void)
{
	const char *p = getenv("DAT_TEST_PROVIDER");

	ck_assert_msg(p != NULL, "DAT_TEST_PROVIDER is not set (run via make check)");
	return p;
}

/* Writes a dat.conf from printf-style text and points DAT_OVERRIDE at it.
 * "@LIB@" in the text stands for the test provider's path. */
static void use_conf(const char *fmt, ...)
{
	char text[8192], path[4200];
	const char *lib = provider_lib(), *p;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/dat.conf", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (p = text; *p; p++) {
		if (!strncmp(p, "@LIB@", 5)) {
			fputs(lib, f);
			p += 4;
		} else {
			fputc(*p, f);
		}
	}
	fclose(f);
	setenv("DAT_OVERRIDE", path, 1);
}

/* Sends this process's stderr to a file, to check what libdat said. */
static void capture_stderr(void)
{
	int fd;

	snprintf(stderr_path, sizeof(stderr_path), "%s/stderr.txt", tmpdir);
	fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 2);
	close(fd);
}

static char *captured(void)
{
	static char buf[16384];
	size_t n;
	FILE *f;

	fflush(stderr);
	f = fopen(stderr_path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void setup(void)
{
	const char *base = getenv("DAT_TEST_TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/regtest.XXXXXX",
		 base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[4300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static DAT_IA_HANDLE open_ok(const char *name)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;

	ck_assert_uint_eq(dat_ia_open((DAT_NAME_PTR)name, 8, &async, &ia), DAT_SUCCESS);
	ck_assert_ptr_nonnull(async);
	return ia;
}

static DAT_RETURN try_open(const char *name)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;

	return dat_ia_open((DAT_NAME_PTR)name, 8, &async, &ia);
}

static int library_loaded(void)
{
	void *h = dlopen(provider_lib(), RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

static struct dattest_last_call *last_call(void)
{
	dattest_last_call_fn fn;

	*(void **)&fn = dlsym(RTLD_DEFAULT, DATTEST_LAST_CALL);
	ck_assert_msg(fn != NULL, "test provider not loaded");
	return fn();
}

/* ---- dat.conf and listing ------------------------------------------------ */

START_TEST(list_three_good_three_bad)
{
	DAT_PROVIDER_INFO infos[8], *list[8];
	DAT_COUNT n = -1, i;
	char *err;

	for (i = 0; i < 8; i++)
		list[i] = &infos[i];
	capture_stderr();
	use_conf("# three good, three broken\n"
		 "good-a u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n"
		 "bad-1 v1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n"
		 "good-b u1.2 threadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n"
		 "bad-2 u1.2 sometimes default @LIB@ dapl.1.2 \"\" \"\"\n"
		 "bad-3 u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"unterminated\n"
		 "good-c u2.0 nonthreadsafe default @LIB@ dapl.2.0 \"ok\" \"\"\n");
	ck_assert_uint_eq(dat_registry_list_providers(8, &n, list), DAT_SUCCESS);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(infos[0].ia_name, "good-a");
	ck_assert_uint_eq(infos[0].dapl_version_major, 1);
	ck_assert_uint_eq(infos[0].dapl_version_minor, 2);
	ck_assert_uint_eq(infos[0].is_thread_safe, DAT_FALSE);
	ck_assert_str_eq(infos[1].ia_name, "good-b");
	ck_assert_uint_eq(infos[1].is_thread_safe, DAT_TRUE);
	ck_assert_str_eq(infos[2].ia_name, "good-c");
	ck_assert_uint_eq(infos[2].dapl_version_major, 2);
	err = captured();
	ck_assert_ptr_nonnull(strstr(err, "dat.conf:3: bad api_version"));
	ck_assert_ptr_nonnull(strstr(err, "dat.conf:5: bad thread_safety"));
	ck_assert_ptr_nonnull(strstr(err, "dat.conf:6: bad ia_params"));
	ck_assert_ptr_null(strstr(err, "dat.conf:2:"));
}
END_TEST

START_TEST(list_skips_kernel_nondefault_and_duplicate_keys)
{
	DAT_PROVIDER_INFO infos[4], *list[4] = { &infos[0], &infos[1],
						 &infos[2], &infos[3] };
	DAT_COUNT n = -1;

	use_conf("a u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n"
		 "a u1.2 nonthreadsafe default /other/lib.so dapl.1.2 \"\" \"\"\n"
		 "k k1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n"
		 "n u1.2 nonthreadsafe nondefault @LIB@ dapl.1.2 \"\" \"\"\n"
		 "b u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n");
	ck_assert_uint_eq(dat_registry_list_providers(4, &n, list), DAT_SUCCESS);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(infos[0].ia_name, "a");
	ck_assert_str_eq(infos[1].ia_name, "b");
}
END_TEST

START_TEST(list_max_zero_counts)
{
	DAT_PROVIDER_INFO info, *list[1] = { &info };
	DAT_COUNT n = -1;

	use_conf("a u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n"
		 "b u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"\" \"\"\n");
	ck_assert_uint_eq(dat_registry_list_providers(0, &n, NULL), BAD_ARG(1));
	ck_assert_int_eq(n, 2);
	/* max 1 of 2: the first, and success */
	ck_assert_uint_eq(dat_registry_list_providers(1, &n, list), DAT_SUCCESS);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(info.ia_name, "a");
	ck_assert_uint_eq(dat_registry_list_providers(-1, &n, list), BAD_ARG(1));
	ck_assert_uint_eq(dat_registry_list_providers(1, NULL, list), BAD_ARG(2));
	ck_assert_uint_eq(dat_registry_list_providers(1, &n, NULL), BAD_ARG(3));
	list[0] = NULL;
	ck_assert_uint_eq(dat_registry_list_providers(1, &n, list), BAD_ARG(3));
}
END_TEST

START_TEST(override_missing_is_reported)
{
	char *err;

	capture_stderr();
	setenv("DAT_OVERRIDE", "/nonexistent/dir/dat.conf", 1);
	ck_assert_uint_eq(try_open("anything"), NOT_FOUND(DAT_NAME_NOT_REGISTERED));
	err = captured();
	ck_assert_ptr_nonnull(strstr(err, "DAT_OVERRIDE=/nonexistent/dir/dat.conf: cannot open"));
	/* dat_ia_open repeats why it failed */
	ck_assert_ptr_nonnull(strstr(err, "dat_ia_open(\"anything\"): DAT_OVERRIDE"));
}
END_TEST

START_TEST(debug_type_zero_is_silent)
{
	capture_stderr();
	setenv("DAT_DBG_TYPE", "0", 1);
	use_conf("broken line\n");
	ck_assert_uint_eq(try_open("x"), NOT_FOUND(DAT_NAME_NOT_REGISTERED));
	ck_assert_str_eq(captured(), "");
}
END_TEST

/* ---- opening and closing --------------------------------------------------- */

START_TEST(open_query_close)
{
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	ck_assert(!library_loaded());
	ia = open_ok("dattest");
	/* consumers get a small integer, never the provider's pointer */
	ck_assert_uint_ge((uintptr_t)ia, 1);
	ck_assert_uint_lt((uintptr_t)ia, 4096);
	ck_assert(library_loaded());
	ck_assert_uint_eq(dat_ia_query(ia, &async, DAT_IA_ALL, &ia_attr,
				       DAT_PROVIDER_FIELD_ALL, &prov_attr),
			  DAT_SUCCESS);
	ck_assert_str_eq(ia_attr.adapter_name, "dattest");
	ck_assert_str_eq(prov_attr.provider_name, "dattest");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	/* last close: fini and dlclose */
	ck_assert(!library_loaded());
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG),
			  BAD_HANDLE(DAT_INVALID_HANDLE_IA));
	ck_assert_uint_eq(dat_ia_query(ia, &async, 0, NULL, 0, NULL),
			  BAD_HANDLE(DAT_INVALID_HANDLE_IA));
	/* and a later open loads it again */
	ia = open_ok("dattest");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(unload_only_on_last_close)
{
	DAT_IA_HANDLE a, b;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	a = open_ok("dattest");
	b = open_ok("dattest");
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(dat_ia_close(a, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert(library_loaded());
	ck_assert_uint_eq(dat_ia_close(b, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert(!library_loaded());
}
END_TEST

START_TEST(open_argument_checks)
{
	char longname[300];
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_uint_eq(dat_ia_open(NULL, 8, &async, &ia), BAD_ARG(1));
	ck_assert_uint_eq(dat_ia_open("", 8, &async, &ia), BAD_ARG(1));
	ck_assert_uint_eq(dat_ia_open(longname, 8, &async, &ia), BAD_ARG(1));
	ck_assert_uint_eq(dat_ia_open("dattest", 8, NULL, &ia), BAD_ARG(3));
	ck_assert_uint_eq(dat_ia_open("dattest", 8, &async, NULL), BAD_ARG(4));
	ck_assert(!library_loaded());
}
END_TEST

START_TEST(not_found_subtypes)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	ck_assert_uint_eq(try_open("nope"), NOT_FOUND(DAT_NAME_NOT_REGISTERED));
	ck_assert_uint_eq(dat_ia_openv("dattest", 8, &async, &ia, 2, 0, DAT_FALSE),
			  NOT_FOUND(DAT_MAJOR_NOT_FOUND));
	ck_assert_uint_eq(dat_ia_openv("dattest", 8, &async, &ia, 1, 1, DAT_FALSE),
			  NOT_FOUND(DAT_MINOR_NOT_FOUND));
	ck_assert_uint_eq(dat_ia_openv("dattest", 8, &async, &ia, 1, 2, DAT_TRUE),
			  NOT_FOUND(DAT_THREAD_SAFETY_NOT_FOUND));
	ck_assert(!library_loaded());
}
END_TEST

/* libdat.so.1 never loads the library of a u2.0 line (libdat2.so.2's), even
 * for a program that asks dat_ia_openv for 2.0 by hand. */
START_TEST(u20_entry_not_loaded)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;

	use_conf("dattest u2.0 nonthreadsafe default @LIB@ dapl.2.0 \"ok\" \"\"\n");
	ck_assert_uint_eq(dat_ia_openv("dattest", 8, &async, &ia, 2, 0, DAT_FALSE),
			  NOT_FOUND(DAT_MAJOR_NOT_FOUND));
	ck_assert_uint_eq(try_open("dattest"), NOT_FOUND(DAT_MAJOR_NOT_FOUND));
	ck_assert(!library_loaded());
}
END_TEST

START_TEST(load_failure_falls_back)
{
	DAT_IA_HANDLE ia;
	char *err;

	capture_stderr();
	use_conf("fb u1.2 nonthreadsafe default /nonexistent/libnope.so dapl.1.2 \"\" \"\"\n"
		 "fb u1.2 nonthreadsafe default libm.so.6 dapl.1.2 \"\" \"\"\n"
		 "fb u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"no-register\" \"\"\n"
		 "fb u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	ia = open_ok("fb");
	err = captured();
	ck_assert_ptr_nonnull(strstr(err, "cannot load /nonexistent/libnope.so for \"fb\""));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/libnope.so: cannot open shared object file"));
	ck_assert_ptr_nonnull(strstr(err, "libm.so.6 (for \"fb\", "));
	ck_assert_ptr_nonnull(strstr(err, "has no dat_provider_init"));
	ck_assert_ptr_nonnull(strstr(err, "did not register \"fb\" (ia_params \"no-register\""));
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(every_entry_failing_is_not_found)
{
	char *err;

	capture_stderr();
	use_conf("fb u1.2 nonthreadsafe default /nonexistent/libnope.so dapl.1.2 \"\" \"\"\n"
		 "fb u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"no-register\" \"\"\n");
	ck_assert_uint_eq(try_open("fb"), NOT_FOUND(DAT_NAME_NOT_REGISTERED));
	err = captured();
	ck_assert_ptr_nonnull(strstr(err, "no library for it could be loaded"));
	ck_assert(!library_loaded());
}
END_TEST

START_TEST(provider_open_error_is_returned_and_unloads)
{
	use_conf("bad u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"open-fails\" \"\"\n");
	ck_assert_uint_eq(try_open("bad"),
			  DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_DEVICE));
	ck_assert(!library_loaded());
}
END_TEST

START_TEST(fini_that_forgets_to_remove)
{
	DAT_IA_HANDLE ia;

	use_conf("nr u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"no-remove\" \"\"\n");
	ia = open_ok("nr");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert(!library_loaded());
	/* libdat dropped the stale table; a new open loads a fresh one */
	ia = open_ok("nr");
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(close_flags_and_graceful_close)
{
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	ia = open_ok("dattest");
	ck_assert_uint_eq(dat_ia_close(ia, (DAT_CLOSE_FLAGS)7), BAD_ARG(2));
	ck_assert_uint_eq(dat_pz_create(ia, &pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG),
			  DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE));
	/* a refused close leaves the handle usable */
	ck_assert_uint_eq(dat_pz_free(pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
	ck_assert(!library_loaded());
}
END_TEST

/* ---- the dynamic registry ------------------------------------------------------ */

static char dyn_ia_object[64];
static DAT_PROVIDER dyn_table;

static DAT_RETURN dyn_ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
			      DAT_EVD_HANDLE *async, DAT_IA_HANDLE *ia)
{
	(void)name;
	(void)qlen;
	*async = (DAT_EVD_HANDLE)&dyn_ia_object[8];
	*(DAT_PROVIDER **)dyn_ia_object = &dyn_table;
	*ia = dyn_ia_object;
	return DAT_SUCCESS;
}

static DAT_RETURN dyn_ia_close(DAT_IA_HANDLE ia, DAT_CLOSE_FLAGS flags)
{
	(void)flags;
	return ia == dyn_ia_object ? DAT_SUCCESS
				   : BAD_HANDLE(DAT_INVALID_HANDLE_IA);
}

START_TEST(add_and_remove_provider)
{
	DAT_PROVIDER_INFO info, listed[2], *list[2] = { &listed[0], &listed[1] };
	DAT_PROVIDER empty;
	DAT_COUNT n;
	DAT_IA_HANDLE ia;

	use_conf("# nothing\n");
	memset(&dyn_table, 0, sizeof(dyn_table));
	dyn_table.device_name = "dyn";
	dyn_table.ia_open_func = dyn_ia_open;
	dyn_table.ia_close_func = dyn_ia_close;
	memset(&info, 0, sizeof(info));
	strcpy(info.ia_name, "dyn");
	info.dapl_version_major = 1;
	info.dapl_version_minor = 2;
	info.is_thread_safe = DAT_FALSE;

	memset(&empty, 0, sizeof(empty));
	ck_assert_uint_eq(dat_registry_add_provider(NULL, &info), BAD_ARG(1));
	ck_assert_uint_eq(dat_registry_add_provider(&empty, &info), BAD_ARG(1));
	ck_assert_uint_eq(dat_registry_add_provider(&dyn_table, NULL), BAD_ARG(2));
	ck_assert_uint_eq(dat_registry_remove_provider(&dyn_table, &info),
			  NOT_FOUND(DAT_NAME_NOT_REGISTERED));

	ck_assert_uint_eq(dat_registry_add_provider(&dyn_table, &info), DAT_SUCCESS);
	ck_assert_uint_eq(dat_registry_add_provider(&dyn_table, &info),
			  DAT_ERROR(DAT_PROVIDER_ALREADY_REGISTERED, DAT_NO_SUBTYPE));
	ck_assert_uint_eq(dat_registry_list_providers(2, &n, list), DAT_SUCCESS);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(listed[0].ia_name, "dyn");

	ia = open_ok("dyn");
	ck_assert_uint_eq(dat_registry_remove_provider(&dyn_table, &info),
			  DAT_ERROR(DAT_PROVIDER_IN_USE, DAT_NO_SUBTYPE));
	ck_assert_uint_eq(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_uint_eq(dat_registry_remove_provider(&dyn_table, &info), DAT_SUCCESS);
	ck_assert_uint_eq(try_open("dyn"), NOT_FOUND(DAT_NAME_NOT_REGISTERED));
	/* a removed table no longer dispatches: its objects are unknown */
	ck_assert_uint_eq(dat_pz_free((DAT_PZ_HANDLE)dyn_ia_object),
			  BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
}
END_TEST

/* ---- handles ------------------------------------------------------------------ */

struct objects {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd;
	DAT_CNO_HANDLE cno;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_LMR_HANDLE lmr;
	DAT_RMR_HANDLE rmr;
	DAT_PSP_HANDLE psp;
	DAT_RSP_HANDLE rsp;
	DAT_SRQ_HANDLE srq;
	DAT_CR_HANDLE cr;
};

/* One object of each type, of a test provider with the given ia_params. */
static void make_objects_with(struct objects *o, const char *params)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR addr;
	DAT_SRQ_ATTR srq_attr = { 8, 1, 0 };
	static char buf[64];
	dattest_new_cr_fn new_cr;

	use_conf("dattest u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"%s\" \"\"\n", params);
	o->async = DAT_HANDLE_NULL;
	ck_assert_uint_eq(dat_ia_open("dattest", 8, &o->async, &o->ia), DAT_SUCCESS);
	ck_assert_uint_eq(dat_evd_create(o->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &o->evd), DAT_SUCCESS);
	ck_assert_uint_eq(dat_cno_create(o->ia, agent, &o->cno), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_create(o->ia, &o->pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ep_create(o->ia, o->pz, o->evd, o->evd, o->evd, NULL, &o->ep), DAT_SUCCESS);
	region.for_va = buf;
	ck_assert_uint_eq(dat_lmr_create(o->ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof(buf), o->pz,
					 DAT_MEM_PRIV_ALL_FLAG, &o->lmr, &lctx, &rctx, &len, &addr),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dat_rmr_create(o->pz, &o->rmr), DAT_SUCCESS);
	ck_assert_uint_eq(dat_psp_create(o->ia, 1234, o->evd, DAT_PSP_CONSUMER_FLAG, &o->psp), DAT_SUCCESS);
	ck_assert_uint_eq(dat_rsp_create(o->ia, 1235, o->ep, o->evd, &o->rsp), DAT_SUCCESS);
	ck_assert_uint_eq(dat_srq_create(o->ia, o->pz, &srq_attr, &o->srq), DAT_SUCCESS);
	*(void **)&new_cr = dlsym(RTLD_DEFAULT, DATTEST_NEW_CR);
	ck_assert_ptr_nonnull(new_cr);
	o->cr = new_cr(o->ep);
	ck_assert_ptr_nonnull(o->cr);
}

static void make_objects(struct objects *o)
{
	make_objects_with(o, "ok");
}

/* Calls expr and checks it reached table slot `member` with handle h. */
#define REACHES(expr, member, h)                                              \
	do {                                                                  \
		struct dattest_last_call *lc_ = last_call();                  \
		lc_->slot = -1;                                               \
		lc_->handle = NULL;                                           \
		(void)(expr);                                                 \
		ck_assert_msg(lc_->slot == (int)(offsetof(DAT_PROVIDER, member) / sizeof(void *)), \
			      "%s reached slot %d, not %s", #expr, lc_->slot, #member); \
		ck_assert_msg(lc_->handle == (DAT_HANDLE)(h), "%s: wrong handle", #expr); \
	} while (0)

START_TEST(every_call_reaches_its_slot)
{
	struct objects o;
	DAT_IA_HANDLE pia; /* the provider's IA behind our small integer */
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_TRIPLET iov = { 0, 0, 0, 0 };
	DAT_RMR_TRIPLET riov = { 0, 0, 0, 0 };
	DAT_DTO_COOKIE cookie;
	DAT_RMR_COOKIE rcookie;
	DAT_CONTEXT ctx;
	DAT_HANDLE_TYPE type;
	DAT_EVENT ev;
	DAT_COUNT c1, c2;
	DAT_EP_STATE st;
	DAT_BOOLEAN b1, b2;
	DAT_CONN_QUAL q;
	DAT_EVD_HANDLE evd_out, h;
	DAT_RMR_CONTEXT rctx;
	DAT_LMR_CONTEXT lctx;
	DAT_VLEN len;
	DAT_VADDR addr;
	DAT_EP_PARAM ep_param;
	DAT_SRQ_ATTR srq_attr = { 8, 1, 0 };
	struct sockaddr sa;

	make_objects(&o);
	memset(&ep_param, 0, sizeof(ep_param));
	memset(&sa, 0, sizeof(sa));
	memset(&ev, 0, sizeof(ev));
	cookie.as_64 = 1;
	rcookie.as_64 = 2;
	ctx.as_64 = 3;
	region.for_va = &iov;
	REACHES(dat_pz_create(o.ia, &h), pz_create_func, last_call()->handle);
	pia = last_call()->handle;
	ck_assert_ptr_ne(pia, o.ia);

	REACHES(dat_ia_query(o.ia, &evd_out, 0, NULL, 0, NULL), ia_query_func, pia);
	REACHES(dat_set_consumer_context(o.ep, ctx), set_consumer_context_func, o.ep);
	REACHES(dat_get_consumer_context(o.ep, &ctx), get_consumer_context_func, o.ep);
	REACHES(dat_get_handle_type(o.ep, &type), get_handle_type_func, o.ep);
	REACHES(dat_set_consumer_context(o.ia, ctx), set_consumer_context_func, pia);
	REACHES(dat_get_consumer_context(o.ia, &ctx), get_consumer_context_func, pia);
	REACHES(dat_get_handle_type(o.ia, &type), get_handle_type_func, pia);
	REACHES(dat_cno_create(o.ia, agent, &h), cno_create_func, pia);
	REACHES(dat_cno_modify_agent(o.cno, agent), cno_modify_agent_func, o.cno);
	REACHES(dat_cno_query(o.cno, 0, NULL), cno_query_func, o.cno);
	REACHES(dat_cno_wait(o.cno, 0, &evd_out), cno_wait_func, o.cno);
	REACHES(dat_cr_query(o.cr, 0, NULL), cr_query_func, o.cr);
	REACHES(dat_cr_accept(o.cr, o.ep, 0, NULL), cr_accept_func, o.cr);
	REACHES(dat_cr_reject(o.cr), cr_reject_func, o.cr);
	REACHES(dat_cr_handoff(o.cr, 7), cr_handoff_func, o.cr);
	REACHES(dat_evd_create(o.ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &h), evd_create_func, pia);
	REACHES(dat_evd_query(o.evd, 0, NULL), evd_query_func, o.evd);
	REACHES(dat_evd_modify_cno(o.evd, o.cno), evd_modify_cno_func, o.evd);
	REACHES(dat_evd_enable(o.evd), evd_enable_func, o.evd);
	REACHES(dat_evd_disable(o.evd), evd_disable_func, o.evd);
	REACHES(dat_evd_wait(o.evd, 0, 1, &ev, &c1), evd_wait_func, o.evd);
	REACHES(dat_evd_resize(o.evd, 16), evd_resize_func, o.evd);
	REACHES(dat_evd_post_se(o.evd, &ev), evd_post_se_func, o.evd);
	REACHES(dat_evd_dequeue(o.evd, &ev), evd_dequeue_func, o.evd);
	REACHES(dat_evd_set_unwaitable(o.evd), evd_set_unwaitable_func, o.evd);
	REACHES(dat_evd_clear_unwaitable(o.evd), evd_clear_unwaitable_func, o.evd);
	REACHES(dat_ep_create(o.ia, o.pz, o.evd, o.evd, o.evd, NULL, &h), ep_create_func, pia);
	REACHES(dat_ep_create_with_srq(o.ia, o.pz, o.evd, o.evd, o.evd, o.srq, NULL, &h),
		ep_create_with_srq_func, pia);
	REACHES(dat_ep_query(o.ep, 0, &ep_param), ep_query_func, o.ep);
	REACHES(dat_ep_modify(o.ep, 0, &ep_param), ep_modify_func, o.ep);
	REACHES(dat_ep_connect(o.ep, &sa, 1, 1000, 0, NULL, DAT_QOS_BEST_EFFORT,
			       DAT_CONNECT_DEFAULT_FLAG), ep_connect_func, o.ep);
	REACHES(dat_ep_dup_connect(o.ep, o.ep, 1000, 0, NULL, DAT_QOS_BEST_EFFORT),
		ep_dup_connect_func, o.ep);
	REACHES(dat_ep_disconnect(o.ep, DAT_CLOSE_ABRUPT_FLAG), ep_disconnect_func, o.ep);
	REACHES(dat_ep_post_send(o.ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG),
		ep_post_send_func, o.ep);
	REACHES(dat_ep_post_recv(o.ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG),
		ep_post_recv_func, o.ep);
	REACHES(dat_ep_post_rdma_read(o.ep, 1, &iov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		ep_post_rdma_read_func, o.ep);
	REACHES(dat_ep_post_rdma_write(o.ep, 1, &iov, cookie, &riov, DAT_COMPLETION_DEFAULT_FLAG),
		ep_post_rdma_write_func, o.ep);
	REACHES(dat_ep_get_status(o.ep, &st, &b1, &b2), ep_get_status_func, o.ep);
	REACHES(dat_ep_reset(o.ep), ep_reset_func, o.ep);
	REACHES(dat_ep_recv_query(o.ep, &c1, &c2), ep_recv_query_func, o.ep);
	REACHES(dat_ep_set_watermark(o.ep, 1, 2), ep_set_watermark_func, o.ep);
	REACHES(dat_lmr_create(o.ia, DAT_MEM_TYPE_VIRTUAL, region, 8, o.pz, DAT_MEM_PRIV_ALL_FLAG,
			       &h, &lctx, &rctx, &len, &addr), lmr_create_func, pia);
	REACHES(dat_lmr_query(o.lmr, 0, NULL), lmr_query_func, o.lmr);
	REACHES(dat_lmr_sync_rdma_read(o.ia, &iov, 1), lmr_sync_rdma_read_func, pia);
	REACHES(dat_lmr_sync_rdma_write(o.ia, &iov, 1), lmr_sync_rdma_write_func, pia);
	REACHES(dat_rmr_create(o.pz, &h), rmr_create_func, o.pz);
	REACHES(dat_rmr_query(o.rmr, 0, NULL), rmr_query_func, o.rmr);
	REACHES(dat_rmr_bind(o.rmr, &iov, DAT_MEM_PRIV_ALL_FLAG, o.ep, rcookie,
			     DAT_COMPLETION_DEFAULT_FLAG, &rctx), rmr_bind_func, o.rmr);
	REACHES(dat_psp_create(o.ia, 99, o.evd, DAT_PSP_CONSUMER_FLAG, &h), psp_create_func, pia);
	REACHES(dat_psp_create_any(o.ia, &q, o.evd, DAT_PSP_CONSUMER_FLAG, &h),
		psp_create_any_func, pia);
	REACHES(dat_psp_query(o.psp, 0, NULL), psp_query_func, o.psp);
	REACHES(dat_rsp_create(o.ia, 98, o.ep, o.evd, &h), rsp_create_func, pia);
	REACHES(dat_rsp_query(o.rsp, 0, NULL), rsp_query_func, o.rsp);
	REACHES(dat_pz_query(o.pz, 0, NULL), pz_query_func, o.pz);
	REACHES(dat_srq_create(o.ia, o.pz, &srq_attr, &h), srq_create_func, pia);
	REACHES(dat_srq_post_recv(o.srq, 1, &iov, cookie), srq_post_recv_func, o.srq);
	REACHES(dat_srq_query(o.srq, 0, NULL), srq_query_func, o.srq);
	REACHES(dat_srq_resize(o.srq, 16), srq_resize_func, o.srq);
	REACHES(dat_srq_set_lw(o.srq, 2), srq_set_lw_func, o.srq);
	/* the frees last */
	REACHES(dat_cno_free(o.cno), cno_free_func, o.cno);
	REACHES(dat_rmr_free(o.rmr), rmr_free_func, o.rmr);
	REACHES(dat_lmr_free(o.lmr), lmr_free_func, o.lmr);
	REACHES(dat_psp_free(o.psp), psp_free_func, o.psp);
	REACHES(dat_rsp_free(o.rsp), rsp_free_func, o.rsp);
	REACHES(dat_srq_free(o.srq), srq_free_func, o.srq);
	REACHES(dat_ep_free(o.ep), ep_free_func, o.ep);
	REACHES(dat_evd_free(o.evd), evd_free_func, o.evd);
	REACHES(dat_pz_free(o.pz), pz_free_func, o.pz);
	REACHES(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), ia_close_func, pia);
}
END_TEST

START_TEST(queries_and_events_name_the_consumer_ia)
{
	struct objects o;
	DAT_EP_PARAM ep;
	DAT_PZ_PARAM pz;
	DAT_EVD_PARAM evd;
	DAT_CNO_PARAM cno;
	DAT_LMR_PARAM lmr;
	DAT_RMR_PARAM rmr;
	DAT_PSP_PARAM psp;
	DAT_RSP_PARAM rsp;
	DAT_SRQ_PARAM srq;
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT in, out;
	DAT_EVENT ev;
	DAT_COUNT nmore;

	make_objects(&o);
	ck_assert_uint_eq(dat_ep_query(o.ep, DAT_EP_FIELD_IA_HANDLE, &ep), DAT_SUCCESS);
	ck_assert_ptr_eq(ep.ia_handle, o.ia);
	ck_assert_uint_eq(dat_pz_query(o.pz, DAT_PZ_FIELD_IA_HANDLE, &pz), DAT_SUCCESS);
	ck_assert_ptr_eq(pz.ia_handle, o.ia);
	ck_assert_uint_eq(dat_evd_query(o.evd, DAT_EVD_FIELD_IA_HANDLE, &evd), DAT_SUCCESS);
	ck_assert_ptr_eq(evd.ia_handle, o.ia);
	ck_assert_uint_eq(dat_cno_query(o.cno, DAT_CNO_FIELD_IA_HANDLE, &cno), DAT_SUCCESS);
	ck_assert_ptr_eq(cno.ia_handle, o.ia);
	ck_assert_uint_eq(dat_lmr_query(o.lmr, DAT_LMR_FIELD_IA_HANDLE, &lmr), DAT_SUCCESS);
	ck_assert_ptr_eq(lmr.ia_handle, o.ia);
	ck_assert_uint_eq(dat_rmr_query(o.rmr, DAT_RMR_FIELD_IA_HANDLE, &rmr), DAT_SUCCESS);
	ck_assert_ptr_eq(rmr.ia_handle, o.ia);
	ck_assert_uint_eq(dat_psp_query(o.psp, DAT_PSP_FIELD_IA_HANDLE, &psp), DAT_SUCCESS);
	ck_assert_ptr_eq(psp.ia_handle, o.ia);
	ck_assert_uint_eq(dat_rsp_query(o.rsp, DAT_RSP_FIELD_IA_HANDLE, &rsp), DAT_SUCCESS);
	ck_assert_ptr_eq(rsp.ia_handle, o.ia);
	ck_assert_uint_eq(dat_srq_query(o.srq, DAT_SRQ_FIELD_IA_HANDLE, &srq), DAT_SUCCESS);
	ck_assert_ptr_eq(srq.ia_handle, o.ia);

	/* the test provider's async EVD holds an event naming its IA */
	ck_assert_uint_eq(dat_evd_dequeue(o.async, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_number, DAT_ASYNC_ERROR_IA_CATASTROPHIC);
	ck_assert_ptr_eq(ev.event_data.asynch_error_event_data.dat_handle, o.ia);
	ck_assert_uint_eq(dat_evd_wait(o.async, 0, 1, &ev, &nmore), DAT_SUCCESS);
	ck_assert_ptr_eq(ev.event_data.asynch_error_event_data.dat_handle, o.ia);

	ck_assert_uint_eq(dat_get_handle_type(o.ia, &type), DAT_SUCCESS);
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_IA);
	ck_assert_uint_eq(dat_get_handle_type(o.lmr, &type), DAT_SUCCESS);
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_LMR);
	in.as_64 = 0x1234567890ULL;
	ck_assert_uint_eq(dat_set_consumer_context(o.ia, in), DAT_SUCCESS);
	ck_assert_uint_eq(dat_get_consumer_context(o.ia, &out), DAT_SUCCESS);
	ck_assert_uint_eq(out.as_64, in.as_64);
	ck_assert_uint_eq(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

/* Every handle-taking call given h_ia where an IA belongs and h_obj where
 * an object belongs.  generic: h_obj is not valid for the calls that take
 * any handle either (an IA handle is). */
static void expect_bad_handles(DAT_HANDLE h_ia, DAT_HANDLE h_obj, int generic)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { NULL, NULL };
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_TRIPLET iov = { 0, 0, 0, 0 };
	DAT_RMR_TRIPLET riov = { 0, 0, 0, 0 };
	DAT_DTO_COOKIE cookie;
	DAT_RMR_COOKIE rcookie;
	DAT_CONTEXT ctx;
	DAT_HANDLE_TYPE type;
	DAT_EVENT ev;
	DAT_COUNT c1, c2;
	DAT_EP_STATE st;
	DAT_BOOLEAN b1, b2;
	DAT_CONN_QUAL q;
	DAT_HANDLE out;
	DAT_RMR_CONTEXT rctx;
	DAT_LMR_CONTEXT lctx;
	DAT_VLEN len;
	DAT_VADDR addr;
	DAT_EP_PARAM ep_param;
	DAT_SRQ_ATTR srq_attr = { 8, 1, 0 };
	struct sockaddr sa;

	memset(&ep_param, 0, sizeof(ep_param));
	memset(&sa, 0, sizeof(sa));
	memset(&ev, 0, sizeof(ev));
	cookie.as_64 = 1;
	rcookie.as_64 = 2;
	ctx.as_64 = 3;
	region.for_va = &iov;

#define BAD(expr, sub) ck_assert_msg((expr) == BAD_HANDLE(sub), "%s did not give %s", #expr, #sub)
	BAD(dat_ia_query(h_ia, &out, 0, NULL, 0, NULL), DAT_INVALID_HANDLE_IA);
	BAD(dat_ia_close(h_ia, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE_IA);
	if (generic) {
		BAD(dat_set_consumer_context(h_obj, ctx), DAT_INVALID_HANDLE1);
		BAD(dat_get_consumer_context(h_obj, &ctx), DAT_INVALID_HANDLE1);
		BAD(dat_get_handle_type(h_obj, &type), DAT_INVALID_HANDLE1);
	}
	BAD(dat_pz_create(h_ia, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_pz_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_PZ);
	BAD(dat_pz_free(h_obj), DAT_INVALID_HANDLE_PZ);
	BAD(dat_lmr_create(h_ia, DAT_MEM_TYPE_VIRTUAL, region, 8, h_obj, DAT_MEM_PRIV_ALL_FLAG,
			   &out, &lctx, &rctx, &len, &addr), DAT_INVALID_HANDLE_IA);
	BAD(dat_lmr_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_LMR);
	BAD(dat_lmr_free(h_obj), DAT_INVALID_HANDLE_LMR);
	BAD(dat_lmr_sync_rdma_read(h_ia, &iov, 1), DAT_INVALID_HANDLE_IA);
	BAD(dat_lmr_sync_rdma_write(h_ia, &iov, 1), DAT_INVALID_HANDLE_IA);
	BAD(dat_rmr_create(h_obj, &out), DAT_INVALID_HANDLE_PZ);
	BAD(dat_rmr_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_RMR);
	BAD(dat_rmr_bind(h_obj, &iov, DAT_MEM_PRIV_ALL_FLAG, h_obj, rcookie,
			 DAT_COMPLETION_DEFAULT_FLAG, &rctx), DAT_INVALID_HANDLE_RMR);
	BAD(dat_rmr_free(h_obj), DAT_INVALID_HANDLE_RMR);
	BAD(dat_evd_create(h_ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_evd_query(h_obj, 0, NULL), DAT_INVALID_HANDLE1);
	BAD(dat_evd_modify_cno(h_obj, DAT_HANDLE_NULL), DAT_INVALID_HANDLE1);
	BAD(dat_evd_enable(h_obj), DAT_INVALID_HANDLE1);
	BAD(dat_evd_disable(h_obj), DAT_INVALID_HANDLE1);
	BAD(dat_evd_wait(h_obj, 0, 1, &ev, &c1), DAT_INVALID_HANDLE1);
	BAD(dat_evd_resize(h_obj, 8), DAT_INVALID_HANDLE1);
	BAD(dat_evd_post_se(h_obj, &ev), DAT_INVALID_HANDLE1);
	BAD(dat_evd_dequeue(h_obj, &ev), DAT_INVALID_HANDLE1);
	BAD(dat_evd_free(h_obj), DAT_INVALID_HANDLE1);
	BAD(dat_evd_set_unwaitable(h_obj), DAT_INVALID_HANDLE1);
	BAD(dat_evd_clear_unwaitable(h_obj), DAT_INVALID_HANDLE1);
	BAD(dat_cno_create(h_ia, agent, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_cno_modify_agent(h_obj, agent), DAT_INVALID_HANDLE_CNO);
	BAD(dat_cno_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_CNO);
	BAD(dat_cno_free(h_obj), DAT_INVALID_HANDLE_CNO);
	BAD(dat_cno_wait(h_obj, 0, &out), DAT_INVALID_HANDLE_CNO);
	BAD(dat_ep_create(h_ia, h_obj, h_obj, h_obj, h_obj, NULL, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_ep_create_with_srq(h_ia, h_obj, h_obj, h_obj, h_obj, h_obj, NULL, &out),
	    DAT_INVALID_HANDLE_IA);
	BAD(dat_ep_query(h_obj, 0, &ep_param), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_modify(h_obj, 0, &ep_param), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_connect(h_obj, &sa, 1, 1000, 0, NULL, DAT_QOS_BEST_EFFORT,
			   DAT_CONNECT_DEFAULT_FLAG), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_dup_connect(h_obj, h_obj, 1000, 0, NULL, DAT_QOS_BEST_EFFORT),
	    DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_disconnect(h_obj, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_post_send(h_obj, 1, &iov, cookie, 0), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_post_recv(h_obj, 1, &iov, cookie, 0), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_post_rdma_read(h_obj, 1, &iov, cookie, &riov, 0), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_post_rdma_write(h_obj, 1, &iov, cookie, &riov, 0), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_get_status(h_obj, &st, &b1, &b2), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_free(h_obj), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_reset(h_obj), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_recv_query(h_obj, &c1, &c2), DAT_INVALID_HANDLE_EP);
	BAD(dat_ep_set_watermark(h_obj, 1, 2), DAT_INVALID_HANDLE_EP);
	BAD(dat_psp_create(h_ia, 1, h_obj, DAT_PSP_CONSUMER_FLAG, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_psp_create_any(h_ia, &q, h_obj, DAT_PSP_CONSUMER_FLAG, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_psp_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_PSP);
	BAD(dat_psp_free(h_obj), DAT_INVALID_HANDLE_PSP);
	BAD(dat_rsp_create(h_ia, 1, h_obj, h_obj, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_rsp_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_RSP);
	BAD(dat_rsp_free(h_obj), DAT_INVALID_HANDLE_RSP);
	BAD(dat_cr_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_CR);
	BAD(dat_cr_accept(h_obj, h_obj, 0, NULL), DAT_INVALID_HANDLE_CR);
	BAD(dat_cr_reject(h_obj), DAT_INVALID_HANDLE_CR);
	BAD(dat_cr_handoff(h_obj, 1), DAT_INVALID_HANDLE_CR);
	BAD(dat_srq_create(h_ia, h_obj, &srq_attr, &out), DAT_INVALID_HANDLE_IA);
	BAD(dat_srq_free(h_obj), DAT_INVALID_HANDLE_SRQ);
	BAD(dat_srq_post_recv(h_obj, 1, &iov, cookie), DAT_INVALID_HANDLE_SRQ);
	BAD(dat_srq_query(h_obj, 0, NULL), DAT_INVALID_HANDLE_SRQ);
	BAD(dat_srq_resize(h_obj, 8), DAT_INVALID_HANDLE_SRQ);
	BAD(dat_srq_set_lw(h_obj, 1), DAT_INVALID_HANDLE_SRQ);
#undef BAD
}

START_TEST(null_and_foreign_handles)
{
	struct objects o;
	/* a consumer's own memory: its first word is no provider table */
	void *not_an_object[4] = { &not_an_object, NULL, NULL, NULL };

	expect_bad_handles(NULL, NULL, 1);
	make_objects(&o);
	expect_bad_handles((DAT_HANDLE)(uintptr_t)77, not_an_object, 1);
	/* an IA number where an object belongs */
	expect_bad_handles((DAT_HANDLE)(uintptr_t)4095, o.ia, 0);
	/* an object where an IA belongs; DAT_EVD_ASYNC_EXISTS (1) as an
	 * object: for the generic calls 1 is our open IA, rightly */
	expect_bad_handles(o.pz, DAT_EVD_ASYNC_EXISTS, 0);
	ck_assert_uint_eq(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

/* Values that were never handles (issue 24), while every provider
 * announced its object memory: refused by every call before anything at
 * them is read.  The copies carry a live PZ's first 64 bytes, provider
 * table and magic included. */
START_TEST(forged_handles_every_call)
{
	struct objects o;
	uint64_t on_stack[8] __attribute__((aligned(64)));
	uint64_t *on_heap = aligned_alloc(64, sizeof(on_stack));

	ck_assert_ptr_nonnull(on_heap);
	make_objects(&o);
	expect_bad_handles((DAT_HANDLE)(uintptr_t)0xdeadbeef000ULL,
			   (DAT_HANDLE)(uintptr_t)0xdeadbeef000ULL, 1);
	expect_bad_handles((DAT_HANDLE)(uintptr_t)0x7ffff0000000ULL,
			   (DAT_HANDLE)(uintptr_t)0x7ffff0000000ULL, 1);
	memcpy(on_stack, o.pz, sizeof(on_stack));
	expect_bad_handles(on_stack, on_stack, 1);
	memcpy(on_heap, o.pz, sizeof(on_stack));
	expect_bad_handles(on_heap, on_heap, 1);
	free(on_heap);
	ck_assert_uint_eq(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

/* A provider that never announces its object memory (another vendor's):
 * its handles still work, and libdat falls back to reading the first word
 * of a value in no announced range (readable junk is still refused). */
START_TEST(unannounced_provider_keeps_working)
{
	struct objects o;
	DAT_PZ_PARAM pz;
	DAT_HANDLE_TYPE type;
	void *not_an_object[4] = { &not_an_object, NULL, NULL, NULL };

	make_objects_with(&o, "ok no-announce");
	ck_assert_uint_eq(dat_pz_query(o.pz, DAT_PZ_FIELD_ALL, &pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_get_handle_type(o.ep, &type), DAT_SUCCESS);
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_EP);
	REACHES(dat_ep_post_send(o.ep, 0, NULL, (DAT_DTO_COOKIE){ .as_64 = 0 },
				 DAT_COMPLETION_DEFAULT_FLAG), ep_post_send_func, o.ep);
	expect_bad_handles((DAT_HANDLE)(uintptr_t)77, not_an_object, 1);
	ck_assert_uint_eq(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

START_TEST(freed_and_wrong_type_handles)
{
	struct objects o;
	DAT_LMR_TRIPLET iov = { 0, 0, 0, 0 };
	DAT_DTO_COOKIE cookie;
	DAT_PZ_PARAM param;
	DAT_EVENT ev;
	DAT_IA_HANDLE closed;

	make_objects(&o);
	cookie.as_64 = 0;
	/* wrong type: the provider names the argument's type */
	ck_assert_uint_eq(dat_ep_post_send(o.evd, 1, &iov, cookie, 0),
			  BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	ck_assert_uint_eq(dat_pz_free(o.ep), BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	ck_assert_uint_eq(dat_evd_dequeue(o.pz, &ev), BAD_HANDLE(DAT_INVALID_HANDLE1));
	/* freed: still readable, so an error and not a crash */
	ck_assert_uint_eq(dat_ep_free(o.ep), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ep_free(o.ep), BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	ck_assert_uint_eq(dat_ep_post_send(o.ep, 1, &iov, cookie, 0),
			  BAD_HANDLE(DAT_INVALID_HANDLE_EP));
	ck_assert_uint_eq(dat_pz_free(o.pz), DAT_SUCCESS);
	ck_assert_uint_eq(dat_pz_query(o.pz, DAT_PZ_FIELD_ALL, &param),
			  BAD_HANDLE(DAT_INVALID_HANDLE_PZ));
	/* a closed IA number is no longer an IA, even while another is open */
	closed = o.ia;
	o.ia = open_ok("dattest");
	ck_assert_uint_eq(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
	ck_assert_uint_eq(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG),
			  BAD_HANDLE(DAT_INVALID_HANDLE_IA));
	ck_assert_uint_eq(dat_pz_create(closed, &o.pz), BAD_HANDLE(DAT_INVALID_HANDLE_IA));
	ck_assert_uint_eq(dat_ia_close(o.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);
}
END_TEST

/* ---- threads ------------------------------------------------------------------ */

#define THREADS 8
#define ROUNDS 150

static void *open_close_loop(void *arg)
{
	const char *name = arg;
	DAT_IA_ATTR attr;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	long failures = 0;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		async = DAT_HANDLE_NULL;
		if (dat_ia_open((DAT_NAME_PTR)name, 8, &async, &ia) != DAT_SUCCESS) {
			failures++;
			continue;
		}
		if (dat_ia_query(ia, &async, DAT_IA_ALL, &attr, 0, NULL) != DAT_SUCCESS ||
		    strcmp(attr.adapter_name, name) != 0)
			failures++;
		if (dat_pz_create(ia, &pz) != DAT_SUCCESS || dat_pz_free(pz) != DAT_SUCCESS)
			failures++;
		if (dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS)
			failures++;
	}
	return (void *)failures;
}

START_TEST(concurrent_open_close)
{
	static const char *names[2] = { "conc-a", "conc-b" };
	pthread_t t[THREADS];
	void *failures;
	int i;

	use_conf("conc-a u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n"
		 "conc-b u1.2 nonthreadsafe default @LIB@ dapl.1.2 \"ok\" \"\"\n");
	for (i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, open_close_loop,
						(void *)names[i % 2]), 0);
	for (i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], &failures), 0);
		ck_assert_int_eq((long)failures, 0);
	}
	ck_assert(!library_loaded());
}
END_TEST

static Suite *registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc;

	tc = tcase_create("dat.conf");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, list_three_good_three_bad);
	tcase_add_test(tc, list_skips_kernel_nondefault_and_duplicate_keys);
	tcase_add_test(tc, list_max_zero_counts);
	tcase_add_test(tc, override_missing_is_reported);
	tcase_add_test(tc, debug_type_zero_is_silent);
	suite_add_tcase(s, tc);

	tc = tcase_create("open");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_query_close);
	tcase_add_test(tc, unload_only_on_last_close);
	tcase_add_test(tc, open_argument_checks);
	tcase_add_test(tc, not_found_subtypes);
	tcase_add_test(tc, u20_entry_not_loaded);
	tcase_add_test(tc, load_failure_falls_back);
	tcase_add_test(tc, every_entry_failing_is_not_found);
	tcase_add_test(tc, provider_open_error_is_returned_and_unloads);
	tcase_add_test(tc, fini_that_forgets_to_remove);
	tcase_add_test(tc, close_flags_and_graceful_close);
	tcase_add_test(tc, add_and_remove_provider);
	suite_add_tcase(s, tc);

	tc = tcase_create("handles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_call_reaches_its_slot);
	tcase_add_test(tc, queries_and_events_name_the_consumer_ia);
	tcase_add_test(tc, null_and_foreign_handles);
	tcase_add_test(tc, freed_and_wrong_type_handles);
	tcase_add_test(tc, forged_handles_every_call);
	tcase_add_test(tc, unannounced_provider_keeps_working);
	tcase_add_test(tc, concurrent_open_close);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(registry_suite());
	int failed;

	/* One process per test: libdat reads dat.conf once per process. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
