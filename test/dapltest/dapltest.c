/* placeholder, replaced by the real dapltest main */
#include "dt_tests.h"
int main(int argc, char **argv) { (void)argc; (void)argv; return 2; }
