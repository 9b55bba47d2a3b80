/* TEST ONLY, never shipped: create() grows memory one page at a time until the declared
 * maximum refuses, then traps. The sandbox must answer tool-memory-exceeded. */
#include "common.h"

EXPORT("create") int create(u32 len) {
    while (__builtin_wasm_memory_grow(0, 1) != (unsigned long)-1) {
    }
    __builtin_trap();
}
