/* Diagnostics of libdat.  Silent unless something is wrong: by default only
 * errors are printed, and to standard error (never standard output, which
 * belongs to the consumer). */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_ready;
static unsigned log_types = DAT_LOG_ERROR;
static unsigned log_dest = DAT_LOG_DEST_STDERR;

static unsigned env_number(const char *name, unsigned fallback)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return fallback;
	v = strtoul(s, &end, 0);
	return *end ? fallback : (unsigned)v;
}

static void log_setup_locked(void)
{
	if (log_ready)
		return;
	log_types = env_number("DAT_DBG_TYPE", DAT_LOG_ERROR);
	log_dest = env_number("DAT_DBG_DEST", DAT_LOG_DEST_STDERR);
	log_ready = 1;
}

void dat_log_reset(void)
{
	pthread_mutex_lock(&log_lock);
	log_ready = 0;
	log_setup_locked();
	pthread_mutex_unlock(&log_lock);
}

int dat_log_enabled(enum dat_log_type type)
{
	int on;

	pthread_mutex_lock(&log_lock);
	log_setup_locked();
	on = (log_types & type) != 0;
	pthread_mutex_unlock(&log_lock);
	return on;
}

void dat_log(enum dat_log_type type, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	unsigned dest;

	if (!dat_log_enabled(type))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&log_lock);
	dest = log_dest;
	pthread_mutex_unlock(&log_lock);
	/* One fprintf per line so lines of concurrent threads do not mix. */
	if (dest & DAT_LOG_DEST_STDERR)
		fprintf(stderr, "libdat: %s\n", line);
	if (dest & DAT_LOG_DEST_SYSLOG)
		syslog(type == DAT_LOG_ERROR ? LOG_ERR : LOG_DEBUG,
		       "libdat: %s", line);
}
