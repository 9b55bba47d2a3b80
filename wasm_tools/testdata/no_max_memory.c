/* TEST ONLY, never shipped: declares no memory maximum. The host rewrites the maximum to its
 * cap, so growing page by page stops there: create() outputs the page count it reached. */
// max-memory: none
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    while (__builtin_wasm_memory_grow(0, 1) != (size_t)-1) {
    }
    return output_decimal(__builtin_wasm_memory_size(0));
}
