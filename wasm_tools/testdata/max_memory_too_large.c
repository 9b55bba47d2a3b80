/* TEST ONLY, never shipped: declares a 64 MiB maximum, more than the host's cap. The host
 * rewrites it to the cap: create() outputs the page count where growth stopped. */
// max-memory: 67108864
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    while (__builtin_wasm_memory_grow(0, 1) != (size_t)-1) {
    }
    return output_decimal(__builtin_wasm_memory_size(0));
}
