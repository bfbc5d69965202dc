/* ia_params as every provider reads it (udapl/ia_params.h): the words, the
 * port, an address, a netdev, a host name, the messages a user reads, and
 * hostile lines.  The forms are the providers' own (their *_ia_form.c are
 * compiled in); fixture_*.c open the providers themselves.
 * What needs a netdev without an address or a name that cannot resolve
 * runs in a network namespace of a child's own, where lo is down and has
 * no address (skipped, and said, where one cannot be made). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* unshare */
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ia_params.h"

/* The providers' own forms (providers/<name>/<name>_ia_form.c). */
#define tcp_form dapl_tcp_ia_form
#define verbs_form dapl_verbs_ia_form
#define ofi_form dapl_ofi_ia_form

/* ofi's rules without the bind probe: addresses of no host's */
static const struct dapl_ia_form numeric_form = {
	.port = DAPL_IA_PORT_NONE,
	.flags = DAPL_IA_NETDEV_IPV4,
	.usage = "\"<address>\"",
};

static struct dapl_ia_params p;
static char why[512];

static int parse(const char *params, const struct dapl_ia_form *form)
{
	memset(why, 0, sizeof(why));
	return dapl_ia_params_parse(params, form, &p, why, sizeof(why));
}

/* params parses to an address of family whose text is want. */
static void parses_to(const char *params, const struct dapl_ia_form *form,
		      int family, const char *want)
{
	char text[INET6_ADDRSTRLEN] = "";
	const void *bits;
	int rc = parse(params, form);

	ck_assert_msg(rc == 0, "\"%s\": %d %s", params, rc, why);
	ck_assert_int_eq(p.addr.ss_family, family);
	if (family == AF_INET) {
		ck_assert_uint_eq(p.addr_len, sizeof(struct sockaddr_in));
		ck_assert_uint_eq(((struct sockaddr_in *)&p.addr)->sin_port, 0);
		bits = &((struct sockaddr_in *)&p.addr)->sin_addr;
	} else {
		ck_assert_uint_eq(p.addr_len, sizeof(struct sockaddr_in6));
		ck_assert_uint_eq(((struct sockaddr_in6 *)&p.addr)->sin6_port, 0);
		bits = &((struct sockaddr_in6 *)&p.addr)->sin6_addr;
	}
	ck_assert_ptr_nonnull(inet_ntop(family, bits, text, sizeof(text)));
	ck_assert_str_eq(text, want);
}

static bool begins(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* params fails with err and why begins with msg. */
static void fails(const char *params, const struct dapl_ia_form *form,
		  int err, const char *msg)
{
	int rc = parse(params, form);

	ck_assert_msg(rc == err, "\"%s\": %d, not %d (%s)", params ? params :
		      "(null)", rc, err, why);
	ck_assert_msg(begins(why, msg),
		      "\"%s\": why \"%s\", not \"%s...\"", params ? params :
		      "(null)", why, msg);
}

static bool ipv6_loopback(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	bool ok = fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a));

	if (fd >= 0)
		close(fd);
	return ok;
}

START_TEST(ipv4_and_port)
{
	parses_to("127.0.0.1", &tcp_form, AF_INET, "127.0.0.1");
	ck_assert_int_eq(p.port, -1);
	ck_assert_str_eq(p.where, "127.0.0.1");
	parses_to("127.0.0.1 0", &tcp_form, AF_INET, "127.0.0.1");
	ck_assert_int_eq(p.port, 0);
	parses_to(" \t127.0.0.1\t65535 ", &tcp_form, AF_INET, "127.0.0.1");
	ck_assert_int_eq(p.port, 65535);
	ck_assert_str_eq(p.where, "127.0.0.1");
	parses_to("127.0.0.1 255", &verbs_form, AF_INET, "127.0.0.1");
	ck_assert_int_eq(p.port, 255);
	parses_to("tcp 127.0.0.1", &ofi_form, AF_INET, "127.0.0.1");
	ck_assert_str_eq(p.word, "tcp");
	ck_assert_int_eq(p.port, -1);
}
END_TEST

START_TEST(bad_ports)
{
	static const char *const tcp_bad[] = {
		"127.0.0.1 65536", "127.0.0.1 -0", "127.0.0.1 +1",
		"127.0.0.1 1x", "127.0.0.1 x", "127.0.0.1 0x10",
		"127.0.0.1 99999999999999999999999",
	};
	const char *want = "ia_params \"127.0.0.1 65536\" must be \"<netdev, "
		"IP address or host name> [<port>]\", e.g. \"127.0.0.1 0\" or "
		"\"eth0 0\"";
	size_t i;

	for (i = 0; i < sizeof(tcp_bad) / sizeof(tcp_bad[0]); i++)
		fails(tcp_bad[i], &tcp_form, -EINVAL, "ia_params \"127.0.0.1 ");
	fails(tcp_bad[0], &tcp_form, -EINVAL, want);
	ck_assert_str_eq(why, want);
	/* verbs: the port is required, and at most 255 */
	fails("127.0.0.1 256", &verbs_form, -EINVAL, "ia_params");
	fails("127.0.0.1", &verbs_form, -EINVAL,
	      "ia_params \"127.0.0.1\" must be \"<netdev, IP address or host "
	      "name> <port>\", e.g. \"ib0 0\" or \"10.0.0.1 0\"");
	/* ofi: no port */
	fails("tcp 127.0.0.1 0", &ofi_form, -EINVAL,
	      "ia_params \"tcp 127.0.0.1 0\" must be \"<libfabric provider> "
	      "<IPv4 or IPv6 address or interface>\", e.g. \"tcp 127.0.0.1\", "
	      "\"tcp ::1\" or \"tcp eth0\"");
}
END_TEST

/* A netdev stands for its IPv4 address first: lo's is 127.0.0.1. */
START_TEST(netdev)
{
	parses_to("lo 0", &tcp_form, AF_INET, "127.0.0.1");
	ck_assert_str_eq(p.where, "lo");
	parses_to("lo 0", &verbs_form, AF_INET, "127.0.0.1");
	parses_to("tcp lo", &ofi_form, AF_INET, "127.0.0.1");
	/* the longest name a netdev has, and one longer: neither is lo */
	fails("tcp abcdefghijklmno", &ofi_form, -ENODEV,
	      "\"abcdefghijklmno\" is neither an IPv4 or IPv6 address nor a "
	      "network interface of this host");
	fails("tcp abcdefghijklmnop", &ofi_form, -ENODEV, "\"abcdefghijklmnop\"");
	fails("tcp nosuchif0", &ofi_form, -ENODEV,
	      "\"nosuchif0\" is neither an IPv4 or IPv6 address nor a network "
	      "interface of this host");
	ck_assert_str_eq(why, "\"nosuchif0\" is neither an IPv4 or IPv6 "
			 "address nor a network interface of this host");
}
END_TEST

START_TEST(ipv6)
{
	char want[64];

	parses_to("::1", &numeric_form, AF_INET6, "::1");
	parses_to("2001:db8::77", &numeric_form, AF_INET6, "2001:db8::77");
	/* a link-local address takes its zone, by name or number */
	parses_to("fe80::1%lo", &numeric_form, AF_INET6, "fe80::1");
	ck_assert_uint_eq(((struct sockaddr_in6 *)&p.addr)->sin6_scope_id,
			  if_nametoindex("lo"));
	snprintf(want, sizeof(want), "fe80::1%%%u", if_nametoindex("lo"));
	parses_to(want, &numeric_form, AF_INET6, "fe80::1");
	ck_assert_uint_eq(((struct sockaddr_in6 *)&p.addr)->sin6_scope_id,
			  if_nametoindex("lo"));
	/* and is refused without: which link would it be on? */
	fails("fe80::1", &numeric_form, -EINVAL,
	      "fe80::1 is a link-local IPv6 address: name its interface too, "
	      "e.g. fe80::1%eth0");
	fails("fe80::1 0", &verbs_form, -EINVAL, "fe80::1 is a link-local");
	/* not an address, not a netdev (brackets are not taken) */
	fails("2001:db8::77::1", &numeric_form, -ENODEV,
	      "\"2001:db8::77::1\" is neither an IPv4 or IPv6 address nor");
	fails("[::1]", &numeric_form, -ENODEV, "\"[::1]\" is neither");
	fails("fe80::1%nosuchif0", &numeric_form, -ENODEV,
	      "\"fe80::1%nosuchif0\" is neither");
	if (ipv6_loopback()) {
		parses_to("::1", &tcp_form, AF_INET6, "::1");
		parses_to("tcp ::1", &ofi_form, AF_INET6, "::1");
	} else {
		printf("ipv6: ::1 is not this host's; its opens not tried\n");
	}
}
END_TEST

/* With DAPL_IA_LOCAL, an address a socket cannot bind is refused; the
 * message names the word and, when it differs, the address it stands
 * for. */
START_TEST(not_this_hosts)
{
	fails("198.51.100.77", &tcp_form, -EADDRNOTAVAIL,
	      "198.51.100.77 is not an address of this host (");
	fails("tcp 198.51.100.77", &ofi_form, -EADDRNOTAVAIL,
	      "198.51.100.77 is not an address of this host (");
	ck_assert_int_eq(parse("2001:0db8::77", &tcp_form) < 0, 1);
	ck_assert_msg(strstr(why, "2001:0db8::77 (2001:db8::77) is not an "
			     "address of this host (") == why ||
		      strstr(why, "has no IPv6"), "%s", why);
	/* verbs leaves the question to rdma_bind_addr */
	parses_to("198.51.100.77 0", &verbs_form, AF_INET, "198.51.100.77");
}
END_TEST

START_TEST(host_names)
{
	int rc = parse("localhost 0", &tcp_form);

	ck_assert_msg(rc == 0, "localhost: %d %s", rc, why);
	ck_assert_str_eq(p.where, "localhost");
	if (p.addr.ss_family == AF_INET)
		ck_assert_uint_eq(ntohl(((struct sockaddr_in *)&p.addr)->
					sin_addr.s_addr) >> 24, 127);
	else
		ck_assert(IN6_IS_ADDR_LOOPBACK(
			&((struct sockaddr_in6 *)&p.addr)->sin6_addr));
	/* ofi takes addresses and netdevs only */
	fails("tcp localhost", &ofi_form, -ENODEV,
	      "\"localhost\" is neither an IPv4 or IPv6 address nor a network "
	      "interface of this host");
}
END_TEST

START_TEST(bad_lines)
{
	char line[DAPL_IA_PARAMS_MAX + 2], msg[600];

	fails(NULL, &tcp_form, -EINVAL, "ia_params \"\" must be \"<netdev");
	fails("", &tcp_form, -EINVAL,
	      "ia_params \"\" must be \"<netdev, IP address or host name> "
	      "[<port>]\"");
	fails(" \t ", &verbs_form, -EINVAL, "ia_params \" \t \" must be");
	fails("tcp", &ofi_form, -EINVAL,
	      "ia_params \"tcp\" must be \"<libfabric provider>");
	fails("127.0.0.1 0 extra", &tcp_form, -EINVAL, "ia_params \"127.0.0.1 0 "
	      "extra\" must be");
	fails("a b c d e f g", &tcp_form, -EINVAL, "ia_params \"a b c d e f g\"");
	/* control bytes are shown as '?', the line stays one line */
	fails("tcp eth\n0\x1b[2J", &ofi_form, -ENODEV,
	      "\"eth?0?[2J\" is neither");
	fails("x\ny\x7f 1 2", &tcp_form, -EINVAL, "ia_params \"x?y? 1 2\" must");
	/* the longest line is taken, one byte more is too long */
	memset(line, 'a', sizeof(line));
	memcpy(line, "tcp ", 4);
	line[DAPL_IA_PARAMS_MAX] = '\0';
	snprintf(msg, sizeof(msg), "\"%s\" is neither", line + 4);
	fails(line, &ofi_form, -ENODEV, msg);
	line[DAPL_IA_PARAMS_MAX] = 'a';
	line[DAPL_IA_PARAMS_MAX + 1] = '\0';
	/* its first 32 bytes shown */
	snprintf(msg, sizeof(msg), "ia_params \"%.32s...\" is too long (more "
		 "than 255 bytes)", line);
	fails(line, &ofi_form, -EINVAL, msg);
	ck_assert_str_eq(why, msg);
	/* ofi's word fits its buffer, NUL included */
	memset(line, 'p', 31);
	strcpy(line + 31, " 127.0.0.1");
	parses_to(line, &ofi_form, AF_INET, "127.0.0.1");
	ck_assert_uint_eq(strlen(p.word), 31);
	memset(line, 'p', 32);
	strcpy(line + 32, " 127.0.0.1");
	fails(line, &ofi_form, -EINVAL, "libfabric provider name \"pppp");
	ck_assert_ptr_nonnull(strstr(why, "\" is too long"));
}
END_TEST

/* No reason asked for, or a short buffer: cut, never overrun. */
START_TEST(why_buffers)
{
	char small[8];

	memset(small, 'z', sizeof(small));
	ck_assert_int_eq(dapl_ia_params_parse("", &tcp_form, &p, small, 5),
			 -EINVAL);
	ck_assert_str_eq(small, "ia_p");
	ck_assert_int_eq(small[5], 'z');
	ck_assert_int_eq(dapl_ia_params_parse("", &tcp_form, &p, NULL, 0),
			 -EINVAL);
	ck_assert_int_eq(dapl_ia_params_parse("tcp nosuchif0", &ofi_form, &p,
					      small, 0), -ENODEV);
	ck_assert_int_eq(small[5], 'z');
}
END_TEST

/* What a fresh network namespace shows: lo, down and without an address,
 * and no name server that answers. */
#define NS_CASES 4
struct ns_result {
	int unshared;                   /* errno of unshare, 0 done */
	int rc[NS_CASES];
	char why[NS_CASES][256];
};

static const struct {
	const char *params;
	const struct dapl_ia_form *form;
} ns_cases[NS_CASES] = {
	{ "lo", &tcp_form },
	{ "lo 0", &verbs_form },
	{ "tcp lo", &ofi_form },
	{ "nosuchif0 0", &verbs_form },
};

START_TEST(netdev_without_address)
{
	struct ns_result r;
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	int fds[2], st, i;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		r.unshared = unshare(CLONE_NEWNET) ? errno : 0;
		for (i = 0; i < NS_CASES && !r.unshared; i++)
			r.rc[i] = dapl_ia_params_parse(ns_cases[i].params,
						       ns_cases[i].form, &p,
						       r.why[i],
						       sizeof(r.why[i]));
		if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	while (got < sizeof(r) &&
	       (n = read(fds[0], (char *)&r + got, sizeof(r) - got)) > 0)
		got += (size_t)n;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_uint_eq(got, sizeof(r));
	if (r.unshared) {
		printf("netdev_without_address: no network namespace (%s); "
		       "not tried\n", strerror(r.unshared));
		return;
	}
	ck_assert_int_eq(r.rc[0], -ENODEV);
	ck_assert_str_eq(r.why[0], "netdev lo has no IP address: give it one, "
			 "or name another netdev or address in ia_params");
	ck_assert_int_eq(r.rc[1], -ENODEV);
	ck_assert_str_eq(r.why[1], "netdev lo has no IP address: give it one "
			 "(the RDMA CM finds devices by address), or name "
			 "another netdev or address in ia_params");
	ck_assert_int_eq(r.rc[2], -ENODEV);
	ck_assert_str_eq(r.why[2], "network interface lo has no IPv4 address: "
			 "give it one, or name another interface or address "
			 "in ia_params");
	/* a name that is no netdev, address or host name */
	ck_assert_int_eq(r.rc[3], -ENODEV);
	ck_assert_msg(begins(r.why[3], "\"nosuchif0\" is neither a netdev, an "
			     "IP address nor a host name that resolves ("),
		      "%s", r.why[3]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ia_params");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, ipv4_and_port);
	tcase_add_test(tc, bad_ports);
	tcase_add_test(tc, netdev);
	tcase_add_test(tc, ipv6);
	tcase_add_test(tc, not_this_hosts);
	tcase_add_test(tc, host_names);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, why_buffers);
	tcase_add_test(tc, netdev_without_address);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
