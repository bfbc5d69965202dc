/* ia_params: the address a provider's dat.conf line names.
 *
 * Every provider's ia_params is a few words split on blanks and tabs: an
 * optional word of the provider's own before the address (ofi's
 * libfabric provider), the address, and an optional or required port
 * number (tcp's and verbs', kept for OpenFabrics' syntax and not used).
 * The address word is read the same way everywhere:
 *
 *  1. an IPv4 address (dotted quad) or an IPv6 one, a link-local IPv6
 *     address with its zone ("fe80::1%eth0"); brackets are not taken;
 *  2. else a netdev (network interface, alias labels such as "eth0:1"
 *     included): its IPv4 address, else its global IPv6 address, else
 *     its link-local one; only the IPv4 one with DAPL_IA_NETDEV_IPV4;
 *  3. else, with DAPL_IA_HOST_NAMES, a host name that resolves.
 *
 * A link-local IPv6 address without its zone is refused, and with
 * DAPL_IA_LOCAL so is an address a socket cannot bind (not this host's).
 * The line is hostile text: at most DAPL_IA_PARAMS_MAX bytes, every copy
 * bounded, and the words echoed in messages with control bytes shown as
 * '?'.
 *
 * A transport includes this header; the code is in the core
 * (udapl/ia_params.c), which every provider links.  No DAT header here:
 * transports include none. */
#ifndef UDAPL_IA_PARAMS_H
#define UDAPL_IA_PARAMS_H

#include <stddef.h>
#include <sys/socket.h>

/* The longest ia_params taken, in bytes (the dat.conf parser's field
 * limit is larger). */
#define DAPL_IA_PARAMS_MAX 255

/* How the address word is read (struct dapl_ia_form.flags). */
#define DAPL_IA_HOST_NAMES  0x1u  /* a word that is no address or netdev
				   * may be a host name (getaddrinfo) */
#define DAPL_IA_NETDEV_IPV4 0x2u  /* a netdev stands for its IPv4 address
				   * only */
#define DAPL_IA_LOCAL       0x4u  /* the address must be one a socket can
				   * bind (this host's) */

enum dapl_ia_port {
	DAPL_IA_PORT_NONE,      /* no port word */
	DAPL_IA_PORT_OPTIONAL,  /* "<address> [<port>]" */
	DAPL_IA_PORT_REQUIRED,  /* "<address> <port>" */
};

/* A provider's ia_params grammar: [<word>] <address> [<port>]. */
struct dapl_ia_form {
	const char *word;       /* NULL, or what a first word before the
				 * address names ("libfabric provider") */
	size_t word_max;        /* its buffer, NUL included (at most
				 * sizeof(struct dapl_ia_params.word)) */
	enum dapl_ia_port port;
	unsigned port_max;      /* the largest port number taken */
	unsigned flags;         /* DAPL_IA_* */
	/* The syntax message says: ia_params "<params>" must be <usage>. */
	const char *usage;
	/* Said after "give it one" when a netdev has no address, or NULL. */
	const char *netdev_hint;
};

struct dapl_ia_params {
	char word[64];                  /* the first word, when form->word */
	char where[DAPL_IA_PARAMS_MAX + 1]; /* the address word as written */
	struct sockaddr_storage addr;   /* what it names; port 0 */
	socklen_t addr_len;             /* of a sockaddr_in or sockaddr_in6 */
	int port;                       /* the port word's number, -1 none */
};

/* Reads params by form into *out.  0, or a negative errno with the reason
 * in why (a user reads it in the log):
 *   -EINVAL        not of the form (no line, too long, words missing or
 *                  extra, a bad port, the word too long); a link-local
 *                  IPv6 address without its zone;
 *   -ENODEV        no such address, netdev or host name; a netdev without
 *                  the address asked for;
 *   -EADDRNOTAVAIL (or bind's errno) with DAPL_IA_LOCAL: not this host's;
 *   -EAFNOSUPPORT  an IPv6 address on a host without IPv6 (DAPL_IA_LOCAL);
 *   -ENOMEM, -EMFILE... the interfaces cannot be listed, no socket. */
int dapl_ia_params_parse(const char *params, const struct dapl_ia_form *form,
			 struct dapl_ia_params *out, char *why, size_t whylen);

/* Writes the reason a device cannot be opened into why (whylen bytes;
 * nothing when why is NULL or whylen 0), for the parser and for every
 * transport's dev_open. */
void dapl_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The transports' forms, each in providers/<name>/<name>_ia_form.c (a
 * file with no other dependency, so that test/unit/test_ia_params.c
 * reads them too).  DAPL_OFI_PROV_MAX: the ofi device's provider name
 * buffer (ofi_dev.c checks it). */
#define DAPL_OFI_PROV_MAX 32
extern const struct dapl_ia_form dapl_tcp_ia_form;
extern const struct dapl_ia_form dapl_verbs_ia_form;
extern const struct dapl_ia_form dapl_ofi_ia_form;

#endif
