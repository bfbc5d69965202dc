/* Which dat.conf files libdat reads, and opening one of them.
 *
 * Shared by the registry (dat/registry.c) and datinfo, so both always
 * agree on the order.  No globals; reads only the environment. */
#ifndef LIBDAT_CONFPATH_H
#define LIBDAT_CONFPATH_H

#include <stddef.h>
#include <stdio.h>

/* libdat's own file: $(sysconfdir)/dat.conf (the Debian package uses
 * /etc/libdat/dat.conf).  The system-wide /etc/dat.conf is read after it,
 * so a host whose /etc/dat.conf belongs to another DAT library (Debian's
 * libdapl2 ships one full of u2.0 lines) keeps both working. */
#ifndef DAT_SYSCONF_PATH
#define DAT_SYSCONF_PATH "/usr/local/etc/dat.conf"
#endif
#ifndef DAT_ETC_PATH
#define DAT_ETC_PATH "/etc/dat.conf"
#endif

#define DAT_CONF_MAX_SOURCES 2

struct dat_conf_source {
	const char *path;
	const char *why;	/* a phrase: why libdat reads this file */
};

/* The files libdat reads, in the order it reads them: DAT_OVERRIDE alone
 * when it is set (even when it cannot be read: the user asked for it);
 * otherwise libdat's own file, then /etc/dat.conf, whether or not they
 * exist (a missing one is skipped when read).  An entry seen in an earlier
 * file wins over the same key in a later one.  Returns how many it put in
 * out[] (at most max). */
size_t dat_conf_sources(struct dat_conf_source *out, size_t max);

/* The same, with the override and the default paths given (for tests). */
size_t dat_conf_sources_from(const char *override, const char *const *defaults,
			     size_t ndefaults, struct dat_conf_source *out,
			     size_t max);

/* Opens path for reading when it is a file that can be read; otherwise
 * returns NULL with *err set to the errno that says why (EISDIR for a
 * directory, which fopen() alone would accept). */
FILE *dat_conf_open(const char *path, int *err);

#endif
