/* TEST ONLY, never shipped: imports the kernel's `alloc` with a signature that is not the
 * kernel's ((i32) -> i32). Refused before it runs. */
#include "common.h"

__attribute__((import_module("extism:host/env"), import_name("alloc"))) u32 alloc32(u32);

PDK_EXPORT("create") i32 create(void) { return output_decimal(alloc32(8)); }
