// Stands in for <cuda_runtime.h> in the pure-header check: a pure pgroups header that includes it
// fails to compile.
#error "<cuda_runtime.h> included by a header that must not need it"
