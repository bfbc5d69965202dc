/* placeholder, replaced by the real -T limit implementation */
#include <stdio.h>
#include "dt_tests.h"

int dt_limit_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "dapltest: -T limit is not built yet\n");
	return 2;
}
