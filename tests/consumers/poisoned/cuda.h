// Stands in for <cuda.h> in the pure-header check: a pure pgroups header that includes it
// fails to compile.
#error "<cuda.h> included by a header that must not need it"
