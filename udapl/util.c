/* Small helpers of the core: errno → DAT codes, the clock, logging. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <time.h>

#include "core.h"

/* The class bit is always set, so a caller may return this as it is or
 * OR a subtype into it (DAT_ERROR(dapl_errno_to_dat(err), sub)). */
DAT_RETURN dapl_errno_to_dat(int err)
{
	switch (err) {
	case 0:
		return DAT_SUCCESS;
	case -ENOMEM:
	case -ENOSPC:
	case -EMFILE:
	case -ENFILE:
	case -EAGAIN:
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, 0);
	case -EADDRINUSE:
		return DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0);
	case -EINVAL:
		return DAT_ERROR(DAT_INVALID_PARAMETER, 0);
	case -EOPNOTSUPP:
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	case -ENOTCONN:
		return DAT_ERROR(DAT_INVALID_STATE, 0);
	default:
		return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
	}
}

uint64_t dapl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same switches libdat reads: DAT_DBG_TYPE (bit 0 = errors, the
 * default) and DAT_DBG_DEST (1 stderr, 2 syslog). */
static void log_if(unsigned long bit, const char *fmt, va_list ap)
{
	const char *type = getenv("DAT_DBG_TYPE");
	const char *dest = getenv("DAT_DBG_DEST");
	unsigned long mask = type ? strtoul(type, NULL, 0) : 1;
	unsigned long where = dest ? strtoul(dest, NULL, 0) : 1;
	char line[512];

	if (!(mask & bit))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (where & 1)
		fprintf(stderr, "libdat: %s\n", line);
	if (where & 2)
		syslog(bit == 1 ? LOG_ERR : LOG_DEBUG, "libdat: %s", line);
}

void dapl_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_if(1, fmt, ap);
	va_end(ap);
}

DAT_RETURN dapl_not_implemented(const char *call, const char *why)
{
	dapl_log("%s: not implemented: %s", call, why);
	return DAT_ERROR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE);
}

void dapl_dbg(unsigned long bit, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_if(bit, fmt, ap);
	va_end(ap);
}
