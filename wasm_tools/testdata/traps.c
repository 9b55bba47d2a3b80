/* TEST ONLY, never shipped: create() traps (unreachable). The sandbox must answer
 * tool-output-invalid. */
#include "common.h"

PDK_EXPORT("create") i32 create(void) { __builtin_trap(); }
