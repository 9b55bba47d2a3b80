/* TEST ONLY, never shipped: a read operation whose output nests 100,000 arrays (issue 29
 * item 5). The host's one bounded JSON parser refuses it as tool-output-invalid; the stdlib's
 * parser overflowed the Wasm stack in Pyodide and took the whole host down. */
#include "common.h"

#define DEPTH 100000
static const char HEAD[] = "{\"ok\":true,\"result\":{\"x\":";
static const char TAIL[] = "}}";
static u8 text[sizeof HEAD - 1 + 2 * DEPTH + sizeof TAIL - 1];

PDK_EXPORT("nest") i32 nest(void) {
    u32 n = 0;
    for (u32 i = 0; i < sizeof HEAD - 1; i++) text[n++] = (u8)HEAD[i];
    for (u32 i = 0; i < DEPTH; i++) text[n++] = '[';
    for (u32 i = 0; i < DEPTH; i++) text[n++] = ']';
    for (u32 i = 0; i < sizeof TAIL - 1; i++) text[n++] = (u8)TAIL[i];
    return pdk_output(text, n);
}
