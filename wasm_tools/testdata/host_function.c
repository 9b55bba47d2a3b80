/* TEST ONLY, never shipped: an Extism host function (extism:host/user). No host functions are
 * given to plugins here: refused before it runs. */
#include "common.h"

__attribute__((import_module("extism:host/user"), import_name("read_secret"))) u64 read_secret(u64);

PDK_EXPORT("create") i32 create(void) { return output_decimal(read_secret(0)); }
