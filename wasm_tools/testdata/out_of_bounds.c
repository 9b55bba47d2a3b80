/* TEST ONLY, never shipped. create(): names an output range that is no block of the host's.
 * load(): reads host memory past everything allocated. Both trap: tool-output-invalid. */
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    u64 h = pdk_alloc(16);
    pdk_output_set(h + 8, 64);
    return 0;
}

PDK_EXPORT("load") i32 load(void) {
    u64 h = pdk_alloc(16);
    return output_decimal(pdk_load_u64(h + (1 << 20)));
}
