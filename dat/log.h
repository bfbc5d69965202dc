/* Diagnostics of libdat, gated by DAT_DBG_TYPE and routed by DAT_DBG_DEST. */
#ifndef DAT_LOG_H
#define DAT_LOG_H

/* DAT_DBG_TYPE bits (the values OpenFabrics' libdat used, so existing
 * settings keep their meaning). */
enum dat_log_type {
	DAT_LOG_ERROR = 0x01,        /* on by default */
	DAT_LOG_GENERIC = 0x02,
	DAT_LOG_SR = 0x04,           /* static registry: dat.conf */
	DAT_LOG_DR = 0x08,           /* dynamic registry: add/remove */
	DAT_LOG_PROVIDER_API = 0x10,
	DAT_LOG_CONSUMER_API = 0x20,
	DAT_LOG_ALL = 0xff,
};

/* DAT_DBG_DEST bits. */
enum dat_log_dest {
	DAT_LOG_DEST_STDERR = 0x1,   /* default */
	DAT_LOG_DEST_SYSLOG = 0x2,
};

int dat_log_enabled(enum dat_log_type type);

/* One line, prefixed "libdat: ", if type is enabled. */
void dat_log(enum dat_log_type type, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Re-reads DAT_DBG_TYPE and DAT_DBG_DEST; for tests. */
void dat_log_reset(void);

#endif
