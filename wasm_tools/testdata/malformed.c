/* TEST ONLY, never shipped: create() returns bytes that are not a PNG. The sandbox passes them
 * on; the host's validator must refuse them (tool-output-invalid) and write nothing. */
#include "common.h"

static u8 junk[] = "\x89PNG\r\n\x1a\n but the rest is not a PNG at all";

EXPORT("create") int create(u32 len) {
    output = junk;
    return sizeof junk - 1;
}
