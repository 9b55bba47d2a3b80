/* Shared by the test-only modules: the create-asset ABI, with nothing behind it. */
typedef unsigned char u8;
typedef unsigned int u32;
#define EXPORT(name) __attribute__((export_name(name)))

static u8 input[256];
static u8 *output;

EXPORT("alloc_input") u8 *alloc_input(u32 len) { return len <= sizeof input ? input : 0; }
EXPORT("output_ptr") u8 *output_ptr(void) { return output; }
