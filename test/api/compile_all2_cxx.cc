// The every-DAT-2.0-call program again, compiled as C++: the <dat2/*.h>
// headers must be usable from C++ programs exactly as from C.
#include "compile_all2.c"
