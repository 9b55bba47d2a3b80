/* TEST ONLY, never shipped: a WASI import (fd_write). WASI is off: refused before it runs. */
#include "common.h"

__attribute__((import_module("wasi_snapshot_preview1"), import_name("fd_write"))) i32
fd_write(i32 fd, void *iov, i32 n, void *written);

PDK_EXPORT("create") i32 create(void) {
    u32 iov[2] = {0, 0}, written = 0;
    fd_write(1, iov, 1, &written);
    return output_decimal(written);
}
