/* TEST ONLY, never shipped: starts with 32 MiB of memory, more than the host's default cap.
 * Refused before it runs (tool-memory-exceeded). */
// max-memory: 33554432
// initial-memory: 33554432
#include "common.h"

PDK_EXPORT("create") i32 create(void) { return output_decimal(1); }
