/* TEST ONLY, never shipped: calls that end wrongly. said(): sets an error and returns 1.
 * silent(): returns 7 and says nothing. Both tool-output-invalid (plugin-error). nothing() and
 * wide() do not have the plugin signature () -> i32: refused before they run (abi). */
#include "common.h"

PDK_EXPORT("said") i32 said(void) { return pdk_fail(1, "refused on purpose: \"quoted\" text"); }

PDK_EXPORT("silent") i32 silent(void) { return 7; }

PDK_EXPORT("nothing") void nothing(void) {}

PDK_EXPORT("wide") i64 wide(void) { return 0; }
