/* The address ia_params names, read the same way by every provider
 * (ia_params.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ia_params.h"

#define SEPARATORS " \t"

void dapl_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* Text of the line for a message: at most len - 1 bytes, control bytes
 * but the tab (a separator) as '?' so a message stays one readable line. */
static const char *shown(const char *in, char *buf, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		buf[i] = (((unsigned char)in[i] < 0x20 && in[i] != '\t') ||
			  in[i] == 0x7f) ? '?' : in[i];
	buf[i] = '\0';
	return buf;
}

static socklen_t sa_len(int family)
{
	if (family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/* An IPv4 or IPv6 sockaddr of len bytes into *ss with port 0. */
static bool take(struct sockaddr_storage *ss, const struct sockaddr *sa,
		 size_t len)
{
	socklen_t need;

	memset(ss, 0, sizeof(*ss));
	if (!sa || len < sizeof(sa->sa_family))
		return false;
	need = sa_len(sa->sa_family);
	if (!need || len < need)
		return false;
	memcpy(ss, sa, need);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = 0;
	return true;
}

/* A dotted quad, or an IPv6 address with or without a zone. */
static bool numeric_addr(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct addrinfo hints, *res = NULL;
	bool ok;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return true;
	}
	if (!strchr(text, ':'))
		return false;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET6;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(text, NULL, &hints, &res) || !res)
		return false;
	ok = take(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return ok;
}

/* The address of a netdev: IPv4 first, then (unless ipv4_only) a global
 * IPv6 one, then a link-local one (getifaddrs gives it its zone).
 * NETDEV_FOUND, NETDEV_NO_ADDR, NOT_A_NETDEV, or a negative errno when
 * the interfaces cannot be listed. */
enum { NETDEV_FOUND = 1, NETDEV_NO_ADDR = 2, NOT_A_NETDEV = 3 };

static int netdev_addr(const char *name, bool ipv4_only,
		       struct sockaddr_storage *out)
{
	struct ifaddrs *ifs, *a;
	int best = 0, rank;

	/* the kernel looks an alias label up by the name before its ':' */
	if (strlen(name) >= IF_NAMESIZE || !if_nametoindex(name))
		return NOT_A_NETDEV;
	if (getifaddrs(&ifs))
		return errno ? -errno : -ENOMEM;
	for (a = ifs; a; a = a->ifa_next) {
		if (strcmp(a->ifa_name, name) || !a->ifa_addr)
			continue;
		if (a->ifa_addr->sa_family == AF_INET)
			rank = 3;
		else if (a->ifa_addr->sa_family == AF_INET6 && !ipv4_only)
			rank = IN6_IS_ADDR_LINKLOCAL(
				&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr) ?
				1 : 2;
		else
			continue;
		if (rank > best &&
		    take(out, a->ifa_addr, sa_len(a->ifa_addr->sa_family)))
			best = rank;
	}
	freeifaddrs(ifs);
	return best ? NETDEV_FOUND : NETDEV_NO_ADDR;
}

/* The first IPv4 or IPv6 address a host name resolves to: 0 or a
 * getaddrinfo error (EAI_NONAME when it gives neither family). */
static int host_addr(const char *name, struct sockaddr_storage *out)
{
	struct addrinfo hints, *res = NULL, *r;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	err = getaddrinfo(name, NULL, &hints, &res);
	if (err)
		return err;
	err = EAI_NONAME;
	for (r = res; r; r = r->ai_next)
		if (take(out, r->ai_addr, r->ai_addrlen)) {
			err = 0;
			break;
		}
	freeaddrinfo(res);
	return err;
}

/* A decimal port number of at most max, digits only. */
static bool port_number(const char *text, unsigned max, int *out)
{
	unsigned long v = 0;
	const char *p;

	if (!*text)
		return false;
	for (p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > max)
			return false;
	}
	*out = (int)v;
	return true;
}

/* Can a socket bind to the address (is it one of this host's)? */
static int probe_local(const struct sockaddr_storage *ss, const char *name,
		       char *why, size_t whylen)
{
	int fd, err = 0;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		if (err == -EAFNOSUPPORT && ss->ss_family == AF_INET6)
			dapl_why(why, whylen, "%s is an IPv6 address, and this host "
			    "has no IPv6", name);
		else
			dapl_why(why, whylen, "cannot make a socket to check %s: %s",
			    name, strerror(-err));
		return err;
	}
	if (bind(fd, (const struct sockaddr *)ss, sa_len(ss->ss_family))) {
		err = -errno;
		dapl_why(why, whylen, "%s is not an address of this host (%s)",
		    name, strerror(-err));
	}
	close(fd);
	return err;
}

/* The address word into out->addr. */
static int resolve(const char *where, const struct dapl_ia_form *form,
		   struct dapl_ia_params *out, char *why, size_t whylen)
{
	char w[DAPL_IA_PARAMS_MAX + 1], text[INET6_ADDRSTRLEN] = "?";
	char name[sizeof(w) + sizeof(text) + 3];
	const struct sockaddr_in6 *s6;
	const void *bits;
	int r;

	shown(where, w, sizeof(w));
	if (numeric_addr(where, &out->addr))
		goto found;
	r = netdev_addr(where, form->flags & DAPL_IA_NETDEV_IPV4, &out->addr);
	if (r == NETDEV_FOUND)
		goto found;
	if (r == NETDEV_NO_ADDR && (form->flags & DAPL_IA_NETDEV_IPV4)) {
		dapl_why(why, whylen, "network interface %s has no IPv4 address: "
		    "give it one, or name another interface or address in "
		    "ia_params", w);
		return -ENODEV;
	}
	if (r == NETDEV_NO_ADDR) {
		dapl_why(why, whylen, "netdev %s has no IP address: give it one%s, "
		    "or name another netdev or address in ia_params", w,
		    form->netdev_hint ? form->netdev_hint : "");
		return -ENODEV;
	}
	if (r < 0) {
		dapl_why(why, whylen, "cannot list network interfaces to find %s: %s",
		    w, strerror(-r));
		return r;
	}
	if (!(form->flags & DAPL_IA_HOST_NAMES)) {
		dapl_why(why, whylen, "\"%s\" is neither an IPv4 or IPv6 address nor "
		    "a network interface of this host", w);
		return -ENODEV;
	}
	r = host_addr(where, &out->addr);
	if (r) {
		dapl_why(why, whylen, "\"%s\" is neither a netdev, an IP address nor "
		    "a host name that resolves (%s)", w, gai_strerror(r));
		return -ENODEV;
	}

found:
	out->addr_len = sa_len(out->addr.ss_family);
	s6 = (const struct sockaddr_in6 *)&out->addr;
	bits = out->addr.ss_family == AF_INET6 ? (const void *)&s6->sin6_addr :
		(const void *)&((const struct sockaddr_in *)&out->addr)->sin_addr;
	inet_ntop(out->addr.ss_family, bits, text, sizeof(text));
	/* the word as written, and what it stands for when that differs */
	if (strcmp(w, text))
		snprintf(name, sizeof(name), "%s (%s)", w, text);
	else
		snprintf(name, sizeof(name), "%s", w);
	/* which link it is on is part of such an address */
	if (out->addr.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) && !s6->sin6_scope_id) {
		dapl_why(why, whylen, "%s is a link-local IPv6 address: name its "
		    "interface too, e.g. %s%%eth0", name, text);
		return -EINVAL;
	}
	if (form->flags & DAPL_IA_LOCAL)
		return probe_local(&out->addr, name, why, whylen);
	return 0;
}

int dapl_ia_params_parse(const char *params, const struct dapl_ia_form *form,
			 struct dapl_ia_params *out, char *why, size_t whylen)
{
	char buf[DAPL_IA_PARAMS_MAX + 1], show[DAPL_IA_PARAMS_MAX + 1];
	char *save = NULL, *words[4], *tok;
	size_t len, word_max;
	int n = 0, first, least, most;

	memset(out, 0, sizeof(*out));
	out->port = -1;
	if (!params) {
		params = "";
		goto syntax;
	}
	len = strnlen(params, sizeof(buf));
	if (len >= sizeof(buf)) {
		char head[33];

		dapl_why(why, whylen, "ia_params \"%s...\" is too long (more than %d "
		    "bytes)", shown(params, head, sizeof(head)),
		    DAPL_IA_PARAMS_MAX);
		return -EINVAL;
	}
	memcpy(buf, params, len + 1);
	for (tok = strtok_r(buf, SEPARATORS, &save); tok;
	     tok = strtok_r(NULL, SEPARATORS, &save)) {
		if (n == (int)(sizeof(words) / sizeof(words[0])))
			goto syntax;
		words[n++] = tok;
	}
	first = form->word ? 1 : 0;     /* the address word's index */
	least = first + 1 + (form->port == DAPL_IA_PORT_REQUIRED);
	most = first + 1 + (form->port != DAPL_IA_PORT_NONE);
	if (n < least || n > most)
		goto syntax;
	if (n > first + 1 &&
	    !port_number(words[first + 1], form->port_max, &out->port))
		goto syntax;
	if (form->word) {
		word_max = form->word_max < sizeof(out->word) ?
			   form->word_max : sizeof(out->word);
		if (strlen(words[0]) >= word_max) {
			dapl_why(why, whylen, "%s name \"%s\" is too long", form->word,
			    shown(words[0], show, sizeof(show)));
			return -EINVAL;
		}
		strcpy(out->word, words[0]);
	}
	/* fits: no longer than the line */
	strcpy(out->where, words[first]);
	return resolve(out->where, form, out, why, whylen);

syntax:
	dapl_why(why, whylen, "ia_params \"%s\" must be %s",
	    shown(params, show, sizeof(show)), form->usage);
	return -EINVAL;
}
