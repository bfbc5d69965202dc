/* Entry points of the dapltest test types that parse their own options.
 * argv[0] is "dapltest"; the rest are the arguments after "-T L" / "-T F"
 * (common options such as -D, -d, -R, -n included).  They return the
 * process exit status: 0 all passed, 1 a test failed, 2 bad usage. */
#ifndef DAPLTEST_DT_TESTS_H
#define DAPLTEST_DT_TESTS_H

#include <stdio.h>

int dt_limit_main(int argc, char **argv);
int dt_fft_main(int argc, char **argv);

/* Their usage text (the "---- LIMIT TEST ----" and "----FFT TEST----"
 * parts of dapltest's usage), for the main usage message too. */
void dt_limit_usage(FILE *out);
void dt_fft_usage(FILE *out);

#endif
