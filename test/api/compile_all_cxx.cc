// The all-72-calls program again, compiled as C++: the public headers must
// be usable from C++ programs exactly as from C.
#include "compile_all.c"
