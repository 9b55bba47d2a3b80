/* TEST ONLY, never shipped: sets 5 MiB of output, past the default output cap of 4 MiB.
 * tool-output-invalid (output-too-large), refused when it is set, never copied. */
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    u64 want = 5u << 20;
    u64 h = pdk_alloc(want);
    if (!h) return pdk_fail(1, "no block");
    pdk_output_set(h, want);
    return 0;
}
