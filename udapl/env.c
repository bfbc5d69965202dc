/* Settings from the environment (env.h). */
#include "config.h"

#include <stdlib.h>

#include "core.h"
#include "env.h"

/* The value as the log shows it: at most 40 bytes, control bytes as '?'
 * (an environment is the user's, but a log line should stay one line). */
static void shown(const char *v, char *buf, size_t len)
{
	size_t i;

	for (i = 0; v[i] && i + 1 < len; i++)
		buf[i] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
	buf[i] = '\0';
}

int64_t dapl_env_number(const char *name, int64_t def, int64_t lo, int64_t hi)
{
	const char *v = getenv(name), *p;
	int64_t n = 0;
	char buf[41];

	if (!v || !*v)
		return def;
	for (p = v; *p; p++) {
		/* past hi the digits are only checked: n never overflows */
		if (*p < '0' || *p > '9')
			goto refuse;
		if (n <= hi)
			n = n * 10 + (*p - '0');
	}
	if (n >= lo && n <= hi)
		return n;
refuse:
	shown(v, buf, sizeof(buf));
	dapl_log("%s=%s ignored: not a whole number from %lld to %lld; the "
		 "default stays", name, buf, (long long)lo, (long long)hi);
	return def;
}

bool dapl_env_switch(const char *name)
{
	const char *v = getenv(name);

	return v && *v && !(v[0] == '0' && !v[1]);
}
