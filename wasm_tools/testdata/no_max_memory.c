/* TEST ONLY, never shipped: declares no memory maximum. The sandbox must refuse it before it
 * runs (tool-memory-exceeded). */
// max-memory: none
#include "common.h"

EXPORT("create") int create(u32 len) { return -1; }
