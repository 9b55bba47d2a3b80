/* TEST ONLY, never shipped. create(): grows linear memory one page at a time until the
 * (capped) maximum refuses, then traps — tool-memory-exceeded. kernel(): asks the host for
 * 1 MiB blocks until it refuses one, then fails — tool-memory-exceeded. kernel_count(): the
 * same, but then succeeds with the number of bytes it got (never more than the host's cap). */
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    while (__builtin_wasm_memory_grow(0, 1) != (size_t)-1) {
    }
    __builtin_trap();
}

static u64 hoard(void) {
    u64 total = 0;
    while (pdk_alloc(1 << 20)) total += 1 << 20;
    return total;
}

PDK_EXPORT("kernel") i32 kernel(void) {
    hoard();
    return pdk_fail(1, "the host refused a block");
}

PDK_EXPORT("kernel_count") i32 kernel_count(void) { return output_decimal(hoard()); }
