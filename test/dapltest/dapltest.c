/*
 * dapltest: the DAT 1.2 conformance and performance test, command-line
 * compatible with OpenFabrics' dapltest.
 *
 *   dapltest                       a server with the defaults (-T S)
 *   dapltest -f script_file        the arguments, read from a file
 *   dapltest -T S|Q|T|P|L|F ...    see dtc_usage() / dapltest(1)
 *
 * This file only dispatches: S in dt_server.c, Q/T/P in dt_client.c (with
 * dt_trans.c and dt_perf.c), L in dt_limit.c, F in dt_fft.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_common.h"
#include "dt_tests.h"

/* "-T X" / "-TX" in argv[1..]: the test letter, and where its args start. */
static char test_letter(int argc, char **argv, int *rest)
{
	if (argc < 2 || strncmp(argv[1], "-T", 2))
		return 0;
	if (argv[1][2]) {
		*rest = 2;
		return argv[1][3] ? '?' : argv[1][2];
	}
	*rest = 3;
	return argc > 2 && strlen(argv[2]) == 1 ? argv[2][0] : '?';
}

/* -T L / -T F: their own parsers get "dapltest" and what follows -T x. */
static int run_other(int (*fn)(int, char **), int argc, char **argv, int rest)
{
	int n = argc - rest + 1, ret;
	char **args = calloc((size_t)n + 1, sizeof(*args));

	if (!args) {
		dtc_err("out of memory");
		return DT_EXIT_FAIL;
	}
	args[0] = (char *)"dapltest";
	for (int i = rest; i < argc; i++)
		args[i - rest + 1] = argv[i];
	ret = fn(n, args);
	free(args);
	return ret;
}

static int run(int argc, char **argv)
{
	struct dt_params p;
	int rest = 1, ret;
	char t;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		dtc_usage(0, 0);
		return DT_EXIT_PASS;
	}
	t = test_letter(argc, argv, &rest);
	if (t == 'L' || t == 'l')
		return run_other(dt_limit_main, argc, argv, rest);
	if (t == 'F' || t == 'f')
		return run_other(dt_fft_main, argc, argv, rest);

	ret = dtc_parse_args(argc, argv, &p);
	if (ret)
		return ret;
	if (p.test == 'S')
		return dtc_server_main(&p);
	return dtc_client_main(&p);
}

int main(int argc, char **argv)
{
	char **sargv = NULL, *storage = NULL;
	int sargc, ret;

	/* whole lines, at once: scripts read the server's output through
	 * pipes and wait for its ready line */
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc < 2 || strcmp(argv[1], "-f"))
		return run(argc, argv);

	if (argc != 3) {
		dtc_err("-f <script_file> must be the only option");
		dtc_usage(0, 1);
		return DT_EXIT_USAGE;
	}
	ret = dtc_read_script(argv[2], &sargc, &sargv, &storage);
	if (ret)
		return ret;
	if (sargc > 1 && !strcmp(sargv[1], "-f")) {
		dtc_err("%s: a script file cannot name another one (-f)", argv[2]);
		ret = DT_EXIT_USAGE;
	} else {
		ret = run(sargc, sargv);
	}
	free(sargv);
	free(storage);
	return ret;
}
