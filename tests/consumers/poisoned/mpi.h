// Stands in for <mpi.h> in the pure-header check: a pure pgroups header that includes it
// fails to compile.
#error "<mpi.h> included by a header that must not need it"
