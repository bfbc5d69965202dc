/* env: the settings a provider reads from its environment.
 *
 * The core and every transport read their knobs (DAPL_TCP_PEER_TIMEOUT_MS,
 * DAPL_OFI_TICK_MS, DAT_PROGRESS_SPIN_US, ...) the same way: a number is
 * plain decimal digits within the knob's range; anything else (a sign, a
 * unit, blanks, hex, too large) leaves the default in place and says so in
 * one line naming the setting, through the core's log (DAT_DBG_TYPE bit 0,
 * on by default), so a mistyped knob is never silently taken for another
 * value.  A switch is on when set to anything but empty or "0".
 *
 * A transport includes this header; the code is in the core
 * (udapl/env.c), which every provider links.  No DAT header here:
 * transports include none. */
#ifndef UDAPL_ENV_H
#define UDAPL_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* NAME from lo to hi (0 <= lo <= hi < 10^17); unset or empty: def, which
 * may lie outside the range (a "not set" marker). */
int64_t dapl_env_number(const char *name, int64_t def, int64_t lo, int64_t hi);

/* NAME set to anything but "" or "0". */
bool dapl_env_switch(const char *name);

#endif
