/* TEST ONLY, never shipped: exercises the kernel functions so the browser host and the CPython
 * host can be compared call for call.
 *   echo():    output = input (input_load_u64 / input_load_u8)
 *   offset():  output = input, read through input_offset() and load_u8
 *   config():  output = the config value named by the input, or "(none)"
 *   vars():    var_set / var_get / delete; output "a=<value>;gone=<0|1>"
 *   handles(): alloc / free / reuse; output the handles as decimals, one per line
 *   logs():    logs at every level; output get_log_level()
 *   nothing(): sets no output (empty output) */
#include "common.h"

static u8 buf[1 << 16];

static u32 put_decimal(u8 *p, u64 v) {
    u8 t[24];
    u32 n = 0;
    do {
        t[23 - n++] = (u8)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, t + 24 - n, n);
    return n;
}

static u64 text(const char *s) {
    u32 n = 0;
    while (s[n]) n++;
    return pdk_store((const u8 *)s, n);
}

PDK_EXPORT("echo") i32 echo(void) {
    u32 n = 0;
    u8 *in = pdk_input(&n);
    if (!in) return pdk_fail(1, "no memory");
    return pdk_output(in, n);
}

PDK_EXPORT("offset") i32 offset(void) {
    u64 at = pdk_input_offset(), n = pdk_input_length();
    if (n > sizeof buf) return pdk_fail(1, "input too long");
    for (u64 i = 0; i < n; i++) buf[i] = pdk_load_u8(at + i);
    return pdk_output(buf, n);
}

PDK_EXPORT("config") i32 config(void) {
    u32 n = 0;
    u8 *key = pdk_input(&n);
    u64 value = pdk_config_get(pdk_store(key, n));
    if (!value) return pdk_output((const u8 *)"(none)", 6);
    u64 len = pdk_length(value);
    if (len > sizeof buf) return pdk_fail(1, "value too long");
    for (u64 i = 0; i < len; i++) buf[i] = pdk_load_u8(value + i);
    return pdk_output(buf, len);
}

PDK_EXPORT("vars") i32 vars(void) {
    pdk_var_set(text("a"), text("first"));
    pdk_var_set(text("a"), text("second"));
    pdk_var_set(text("b"), text("gone soon"));
    pdk_var_set(text("b"), 0);
    u64 a = pdk_var_get(text("a")), b = pdk_var_get(text("b"));
    u32 k = 0;
    buf[k++] = 'a';
    buf[k++] = '=';
    u64 len = pdk_length(a);
    for (u64 i = 0; i < len; i++) buf[k++] = pdk_load_u8(a + i);
    const char *rest = b ? ";gone=0" : ";gone=1";
    for (const char *p = rest; *p; p++) buf[k++] = (u8)*p;
    return pdk_output(buf, k);
}

PDK_EXPORT("handles") i32 handles(void) {
    u64 h[8];
    h[0] = pdk_alloc(10);
    h[1] = pdk_alloc(100);
    h[2] = pdk_alloc(3);
    pdk_free(h[1]);
    h[3] = pdk_alloc(50);  /* reuses h[1]'s block */
    h[4] = pdk_alloc(200); /* too big for any freed block: a new one */
    pdk_free(h[4]);        /* the last block: the top comes back */
    h[5] = pdk_alloc(8);
    h[6] = pdk_alloc(0);
    h[7] = pdk_length(h[3]) * 1000 + pdk_length_unsafe(h[0]) * 10 + pdk_length(12345);
    u32 k = 0;
    for (int i = 0; i < 8; i++) {
        k += put_decimal(buf + k, h[i]);
        buf[k++] = '\n';
    }
    return pdk_output(buf, k);
}

PDK_EXPORT("logs") i32 logs(void) {
    u64 m = text("a log line");
    pdk_log_trace(m);
    pdk_log_debug(m);
    pdk_log_info(m);
    pdk_log_warn(m);
    pdk_log_error(m);
    return output_decimal((u64)pdk_get_log_level());
}

PDK_EXPORT("nothing") i32 nothing(void) { return 0; }
