/*
 * dat.conf parser: text in, entries out.
 *
 * Pure and thread safe: no file I/O, no globals, no output of its own.  The
 * caller reads the file, hands the bytes over and decides what to do with
 * the entries (drop kdat and nondefault lines, log the errors, ...).
 */
#ifndef LIBDAT_CONF_H
#define LIBDAT_CONF_H

#include <stddef.h>

/* DAT_NAME_MAX_LENGTH: ia_name must be shorter */
#define DAT_CONF_NAME_MAX 256

struct dat_conf_entry {
	char ia_name[DAT_CONF_NAME_MAX]; /* NUL-terminated, 1..255 chars */
	char api_type;                   /* 'u' (udat) or 'k' (kdat) */
	unsigned api_major, api_minor;   /* from u<major>.<minor> */
	int thread_safe;                 /* 1 = threadsafe, 0 = nonthreadsafe */
	int is_default;                  /* 1 = default, 0 = nondefault */
	char *lib_path;                  /* non-empty */
	char *provider_id;               /* "dapl" of "dapl.1.2" */
	unsigned provider_major, provider_minor;
	char *ia_params;                 /* may be "" */
	char *platform_params;           /* may be "" */
	unsigned line;                   /* 1-based line number it came from */
};

/*
 * Called once per malformed line (which is then skipped).  field is one of
 * "ia_name", "api_version", "thread_safety", "default", "lib_path",
 * "provider_version", "ia_params", "platform_params", "end of line";
 * reason is a short lower-case phrase, e.g. "missing", "unterminated quote",
 * "expected u<major>.<minor> or k<major>.<minor>", "name too long (max 255)",
 * "unexpected text after the 8th field", "contains a NUL byte".
 * Both strings are static; they stay valid after the call.
 */
typedef void (*dat_conf_error_fn)(void *arg, unsigned line, const char *field,
				  const char *reason);

/*
 * Parses len bytes of text (NOT NUL-terminated; may contain NULs or any
 * bytes).  On success returns 0 and stores a malloc'ed array of *count
 * entries (NULL when 0) in *entries, valid lines only, in file order;
 * returns -1 only on allocation failure (then *entries = NULL, *count = 0).
 * err may be NULL.
 */
int dat_conf_parse(const char *text, size_t len, struct dat_conf_entry **entries,
		   size_t *count, dat_conf_error_fn err, void *arg);

/* Frees what dat_conf_parse() returned; (NULL, 0) is fine. */
void dat_conf_free(struct dat_conf_entry *entries, size_t count);

#endif /* LIBDAT_CONF_H */
