/* TEST ONLY, never shipped: create() traps (unreachable). The sandbox must answer
 * tool-output-invalid. */
#include "common.h"

EXPORT("create") int create(u32 len) { __builtin_trap(); }
