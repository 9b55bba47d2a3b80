/* TEST ONLY, never shipped: claims 5 MiB of output, past the sandbox's output cap.
 * The sandbox must answer tool-output-invalid without copying it. */
#include "common.h"

EXPORT("create") int create(u32 len) {
    u32 want = 5u << 20;
    if (__builtin_wasm_memory_grow(0, (want >> 16) + 1) == (unsigned long)-1) return -3;
    output = (u8 *)(__builtin_wasm_memory_size(0) * 65536 - want - 16);
    return (int)want;
}
