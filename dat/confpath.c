/* Which dat.conf files libdat reads (see confpath.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "confpath.h"

size_t dat_conf_sources_from(const char *override, const char *const *defaults,
			     size_t ndefaults, struct dat_conf_source *out,
			     size_t max)
{
	size_t i, n = 0;

	if (override) {
		if (max) {
			out[0].path = override;
			out[0].why = "DAT_OVERRIDE is set; no other file is read";
			n = 1;
		}
		return n;
	}
	for (i = 0; i < ndefaults && n < max; i++) {
		out[n].path = defaults[i];
		out[n].why = i == 0 ? "libdat's own dat.conf"
				    : "the system-wide dat.conf, also read by "
				      "other DAT libraries; read after libdat's own";
		n++;
	}
	return n;
}

size_t dat_conf_sources(struct dat_conf_source *out, size_t max)
{
	static const char *const defaults[] = { DAT_SYSCONF_PATH, DAT_ETC_PATH };
	/* a build with sysconfdir=/etc reads /etc/dat.conf once */
	size_t ndefaults = strcmp(defaults[0], defaults[1]) ? 2 : 1;

	return dat_conf_sources_from(getenv("DAT_OVERRIDE"), defaults,
				     ndefaults, out, max);
}

FILE *dat_conf_open(const char *path, int *err)
{
	struct stat st;
	FILE *f = fopen(path, "r");

	if (!f) {
		*err = errno;
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0) {
		*err = errno;
		fclose(f);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = EISDIR;
		fclose(f);
		return NULL;
	}
	*err = 0;
	return f;
}
