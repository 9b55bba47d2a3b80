/* TEST ONLY, never shipped: asks the host for a function. The sandbox grants no imports and
 * must refuse it (tool-output-invalid) before it runs. */
#include "common.h"

__attribute__((import_module("env"), import_name("reach_out"))) int reach_out(int);

EXPORT("create") int create(u32 len) { return reach_out((int)len); }
