/*
 * dapltest -T F: function feature tests ("FFT").
 *
 *   dapltest -T F [-D ia] [-d] [-R qos] [-n port] -f feature
 *                 [-i iter] [-t threads] [-v vis] [-s server] [caseN ...]
 *
 * Runs the cases of one feature (all, or those named caseN) and prints,
 * for each, OpenFabrics dapltest's frame ("Function feature: ... case:
 * N", "Result: PASS") around the lines of the checks that failed.  The
 * case lists of hwconn, endpoint, pz, mem, connmgt and queryinfo start
 * with OpenFabrics' cases, in its numbering; the cases after those, and
 * the stress and connmgt_client features OpenFabrics never implemented,
 * are ours.  Exit status: 0 when no case failed, 1 when one did, 2 on
 * bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_tests.h"
#include "dt_lf_fft.h"

/* Stress defaults: a few seconds on a small machine. */
#define DT_STRESS_ITERS		100
#define DT_STRESS_THREADS	4
#define DT_STRESS_VIS		32

static const struct dt_fft_feature *const features[] = {
	&dt_fft_hwconn,
	&dt_fft_endpoint,
	&dt_fft_pz,
	&dt_fft_mem,
	&dt_fft_connmgt,
	&dt_fft_queryinfo,
	&dt_fft_stress,
	&dt_fft_connmgt_client,
};
#define NFEATURES (sizeof(features) / sizeof(features[0]))

/* The case numbers a feature may have at most (for the selection). */
#define DT_MAX_CASES 64

void dt_fft_usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"USAGE: -------FFT TEST------------\n"
		"dapltest -T F [-D <dev_name>] -f <funcfeature> "
		"[-i <iter_num>]\n"
		"[-t <num_threads>] [-v <num_vis>] [-s <server_name>] "
		"[case0] [case1] [...]\n"
		"USAGE:        [-D <device Name>] (default %s)\n"
		"USAGE:        [-n <server port number>] (connmgt_client; "
		"default %d)\n"
		"USAGE:        [-d] : debug: also print the checks that "
		"hold\n"
		"USAGE:         -f <func_feature>\n", DT_DEFAULT_IA,
		DT_SERVER_PORT);
	for (i = 0; i < NFEATURES; i++)
		fprintf(out, "USAGE:             %-15s (%zu cases%s)\n",
			features[i]->name, features[i]->ncases,
			features[i]->needs_server ? ", needs -s" : "");
	fprintf(out,
		"USAGE:         -i <iter_num>: iterations for the stress "
		"test (%d)\n"
		"USAGE:         -t <num_threads>: number of threads for the "
		"stress test (%d)\n"
		"USAGE:         -v <num_vis>: number of endpoints (VIs) for "
		"the stress test (%d)\n"
		"USAGE:         -s <server_name>\n"
		"USAGE:             server host name or ip address\n"
		"USAGE:        [-R <service reliability>]   (BE/HT/LL/EC/PM)\n"
		"NOTE: -i, -t and -v apply to the stress feature only.\n"
		"NOTE: Server_name must be specified for connmgt_client.\n"
		"NOTE: if test cases are not specified, test all cases in "
		"that function\n"
		"      feature. else just test the specified cases (case0, "
		"case1, ...)\n"
		"NOTE: -h prints this text.\n",
		DT_STRESS_ITERS, DT_STRESS_THREADS, DT_STRESS_VIS);
}

static int usage_error(void)
{
	dt_fft_usage(stderr);
	return 2;
}

static const struct dt_fft_feature *find_feature(const char *name)
{
	size_t i;

	for (i = 0; i < NFEATURES; i++)
		if (strcmp(features[i]->name, name) == 0)
			return features[i];
	return NULL;
}

enum case_result { CASE_PASS, CASE_FAIL, CASE_SKIP };

static enum case_result run_case(struct dt_fft_ctx *ctx,
				 const struct dt_fft_feature *f, size_t i)
{
	static const char star[] =
	  "*********************************************************************";
	enum case_result result;

	printf("%s\n", star);
	printf("Function feature: %s        case: %zu\n", f->title, i);
	printf("Description: %s\n", f->cases[i].description);
	fflush(stdout);

	ctx->failed_checks = 0;
	ctx->skip_reason = NULL;
	f->cases[i].run(ctx);

	if (ctx->failed_checks) {
		result = CASE_FAIL;
		printf("Result: FAIL (%u check%s failed)\n",
		       ctx->failed_checks, ctx->failed_checks == 1 ? "" : "s");
	} else if (ctx->skip_reason) {
		result = CASE_SKIP;
		printf("Result: SKIP (%s)\n", ctx->skip_reason);
	} else {
		result = CASE_PASS;
		printf("Result: PASS\n");
	}
	printf("%s\n", star);
	fflush(stdout);
	return result;
}

int dt_fft_main(int argc, char **argv)
{
	struct dt_fft_ctx ctx;
	struct dt_opt_scan scan;
	const struct dt_fft_feature *f = NULL;
	bool selected[DT_MAX_CASES] = { false };
	bool any = false;
	unsigned counts[3] = { 0, 0, 0 };
	size_t i;
	int c;

	memset(&ctx, 0, sizeof(ctx));
	dt_common_opts_init(&ctx.common);
	ctx.iters = DT_STRESS_ITERS;
	ctx.threads = DT_STRESS_THREADS;
	ctx.vis = DT_STRESS_VIS;

	dt_opt_begin(&scan, argc, argv);
	while ((c = dt_opt_next(&scan, "D:dR:n:f:i:t:v:s:h")) != -1) {
		int done;

		if (c == '?')
			return usage_error();
		if (c == 'h') {
			dt_fft_usage(stdout);
			return 0;
		}
		done = dt_common_opt(&ctx.common, c, scan.arg);
		if (done < 0)
			return usage_error();
		if (done)
			continue;
		switch (c) {
		case 'f':
			f = find_feature(scan.arg);
			if (!f) {
				fprintf(stderr, "dapltest: don't know this "
					"function feature: %s\n", scan.arg);
				return usage_error();
			}
			break;
		case 'i':
			if (!dt_parse_ulong(scan.arg, 1, 1000000,
					    &ctx.iters)) {
				fprintf(stderr, "dapltest: Syntax Error "
					"-i<iterations> option: '%s' (1 to "
					"1000000)\n", scan.arg);
				return usage_error();
			}
			break;
		case 't':
			if (!dt_parse_ulong(scan.arg, 1, 64, &ctx.threads)) {
				fprintf(stderr, "dapltest: Syntax Error "
					"-t<num_threads> option: '%s' (1 to "
					"64)\n", scan.arg);
				return usage_error();
			}
			break;
		case 'v':
			if (!dt_parse_ulong(scan.arg, 1, 4096, &ctx.vis)) {
				fprintf(stderr, "dapltest: Syntax Error "
					"-v<num_vis> option: '%s' (1 to "
					"4096)\n", scan.arg);
				return usage_error();
			}
			break;
		case 's':
			if (scan.arg[0] == '\0') {
				fprintf(stderr, "dapltest: -s needs a server "
					"name\n");
				return usage_error();
			}
			ctx.server = scan.arg;
			break;
		}
	}
	if (!f) {
		fprintf(stderr, "dapltest: must define the function feature "
			"with -f to test\n");
		return usage_error();
	}
	if (f->needs_server && !ctx.server) {
		fprintf(stderr, "dapltest: must define the server name with "
			"-s option for %s\n", f->name);
		return usage_error();
	}
	for (c = scan.ind; c < argc; c++) {
		unsigned long n;

		if (strncmp(argv[c], "case", 4) != 0 ||
		    !dt_parse_ulong(argv[c] + 4, 0, 1000000, &n)) {
			fprintf(stderr, "dapltest: test cases format is not "
				"correct: %s (want caseN)\n", argv[c]);
			return usage_error();
		}
		if (n >= f->ncases || n >= DT_MAX_CASES) {
			fprintf(stderr, "dapltest: test case number must be "
				"within range : 0 -- %zu\n", f->ncases - 1);
			return usage_error();
		}
		selected[n] = true;
		any = true;
	}

	pthread_mutex_init(&ctx.lock, NULL);
	printf("dapltest -T F: IA %s, feature %s\n", ctx.common.ia_name,
	       f->name);
	for (i = 0; i < f->ncases; i++)
		if (!any || (i < DT_MAX_CASES && selected[i]))
			counts[run_case(&ctx, f, i)]++;
	pthread_mutex_destroy(&ctx.lock);
	printf("FFT %s: %u passed, %u failed, %u skipped\n", f->name,
	       counts[CASE_PASS], counts[CASE_FAIL], counts[CASE_SKIP]);
	fflush(stdout);
	return counts[CASE_FAIL] ? 1 : 0;
}
