/* TEST ONLY, never shipped: asks the host for a function no host here gives. Refused before
 * it runs (tool-output-invalid, import-refused). */
#include "common.h"

__attribute__((import_module("env"), import_name("reach_out"))) i32 reach_out(i32);

PDK_EXPORT("create") i32 create(void) { return reach_out(1); }
