/* Shared by the test-only modules (TEST ONLY, never shipped): the PDK ABI, and a decimal. */
#define PDK_DEFINE_MEM
#include "pdk.h"

/* Set the decimal digits of `v` as the call's output; 0 on success. */
static inline i32 output_decimal(u64 v) {
    u8 t[24];
    u32 n = 0;
    do {
        t[23 - n++] = (u8)('0' + v % 10);
        v /= 10;
    } while (v);
    return pdk_output(t + 24 - n, n);
}
