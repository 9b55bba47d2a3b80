/* TEST ONLY, never shipped: create() returns bytes that are not a PNG. The sandbox passes them
 * on; the host's validator must refuse them (tool-output-invalid) and write nothing. */
#include "common.h"

static const u8 junk[] = "\x89PNG\r\n\x1a\n but the rest is not a PNG at all";

PDK_EXPORT("create") i32 create(void) { return pdk_output(junk, sizeof junk - 1); }
