/* TEST ONLY, never shipped: declares a 64 MiB maximum, more than the sandbox allows. The sandbox
 * must refuse it before it runs (tool-memory-exceeded). */
// max-memory: 67108864
#include "common.h"

EXPORT("create") int create(u32 len) { return -1; }
