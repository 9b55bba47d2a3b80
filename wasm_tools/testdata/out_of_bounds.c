/* TEST ONLY, never shipped: returns a length that runs past the end of its memory.
 * The sandbox must answer tool-output-invalid. */
#include "common.h"

EXPORT("create") int create(u32 len) {
    output = (u8 *)(__builtin_wasm_memory_size(0) * 65536 - 8);
    return 64;
}
