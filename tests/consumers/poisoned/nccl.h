// Stands in for <nccl.h> in the pure-header check: a pure pgroups header that includes it
// fails to compile.
#error "<nccl.h> included by a header that must not need it"
