/*
 * pdk.h — the Extism PDK ABI for freestanding C (clang --target=wasm32, no libc), as Voicebox
 * runs it (docs/plugins.md "The ABI"). Our own declarations, written from the published
 * signatures of the `extism:host/env` kernel (docs.rs extism-pdk, module `extism`; the kernel
 * in github.com/extism/extism, kernel/src/lib.rs).
 *
 * A plugin function is an export `() -> i32`: it reads its input from the host, may set an
 * output and returns 0, or sets an error message and returns non-zero. Every "pointer" the
 * kernel hands out is an opaque u64 handle into HOST memory (not this module's linear
 * memory); 0 means "none" (an allocation the host refused, a missing config key).
 *
 * The helpers below copy between this module's memory and host blocks eight bytes at a time,
 * and keep a bump heap in linear memory above __heap_base (it grows memory page by page and
 * answers 0 when the declared maximum, or the host's cap, refuses).
 */
#ifndef VBX_PDK_H
#define VBX_PDK_H

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef int i32;
typedef unsigned short u16;
typedef unsigned char u8;
typedef unsigned long size_t;

#define PDK_IMPORT(name) __attribute__((import_module("extism:host/env"), import_name(name)))
#define PDK_EXPORT(name) __attribute__((export_name(name)))

PDK_IMPORT("input_length") u64 pdk_input_length(void);
PDK_IMPORT("input_load_u8") u8 pdk_input_load_u8(u64 offset);
PDK_IMPORT("input_load_u64") u64 pdk_input_load_u64(u64 offset);
PDK_IMPORT("alloc") u64 pdk_alloc(u64 length);
PDK_IMPORT("free") void pdk_free(u64 handle);
PDK_IMPORT("length") u64 pdk_length(u64 handle);
PDK_IMPORT("load_u8") u8 pdk_load_u8(u64 at);
PDK_IMPORT("load_u64") u64 pdk_load_u64(u64 at);
PDK_IMPORT("store_u8") void pdk_store_u8(u64 at, u8 value);
PDK_IMPORT("store_u64") void pdk_store_u64(u64 at, u64 value);
PDK_IMPORT("output_set") void pdk_output_set(u64 handle, u64 length);
PDK_IMPORT("error_set") void pdk_error_set(u64 handle);
PDK_IMPORT("config_get") u64 pdk_config_get(u64 key_handle);
PDK_IMPORT("input_offset") u64 pdk_input_offset(void);
PDK_IMPORT("length_unsafe") u64 pdk_length_unsafe(u64 handle);
PDK_IMPORT("var_get") u64 pdk_var_get(u64 key_handle);
PDK_IMPORT("var_set") void pdk_var_set(u64 key_handle, u64 value_handle);
PDK_IMPORT("http_request") u64 pdk_http_request(u64 request_handle, u64 body_handle);
PDK_IMPORT("http_status_code") i32 pdk_http_status_code(void);
PDK_IMPORT("http_headers") u64 pdk_http_headers(void);
PDK_IMPORT("log_info") void pdk_log_info(u64 handle);
PDK_IMPORT("log_debug") void pdk_log_debug(u64 handle);
PDK_IMPORT("log_warn") void pdk_log_warn(u64 handle);
PDK_IMPORT("log_error") void pdk_log_error(u64 handle);
PDK_IMPORT("log_trace") void pdk_log_trace(u64 handle);
PDK_IMPORT("get_log_level") i32 pdk_get_log_level(void);
/* A module imports only the functions it calls: the linker drops the others. In this host
 * vars live for one call, logs are discarded and every http_request fails the call. */

/* clang may emit calls to these even with -fno-builtin; a module defines them once. */
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

#ifdef PDK_DEFINE_MEM
void *memcpy(void *dst, const void *src, size_t n) {
    u8 *d = dst;
    const u8 *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    u8 *d = dst;
    while (n--) *d++ = (u8)c;
    return dst;
}
#endif

/* ---- a bump heap in linear memory ----------------------------------------------------------- */

extern u8 __heap_base;
static u32 pdk_heap_top;

/* `n` bytes of linear memory (8-aligned), or 0 when memory cannot grow that far. */
static inline u8 *pdk_heap(u32 n) {
    if (!pdk_heap_top) pdk_heap_top = (u32)(size_t)&__heap_base;
    u32 start = (pdk_heap_top + 7u) & ~7u;
    if (n > 0x7fffffffu - start) return 0;
    u32 end = start + n;
    u32 have = (u32)__builtin_wasm_memory_size(0) * 65536u;
    if (end > have) {
        u32 pages = (end - have + 65535u) / 65536u;
        if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) return 0;
    }
    pdk_heap_top = end;
    return (u8 *)(size_t)start;
}

/* ---- input, output, error ------------------------------------------------------------------- */

/* The whole input copied into a fresh heap block; its length in *n. 0 if it does not fit. */
static inline u8 *pdk_input(u32 *n) {
    u64 len = pdk_input_length();
    if (len > 0x7fff0000u) return 0;
    u8 *buf = pdk_heap((u32)len + 1);
    if (!buf) return 0;
    u64 i = 0;
    for (; i + 8 <= len; i += 8) {
        u64 w = pdk_input_load_u64(i);
        for (int k = 0; k < 8; k++) buf[i + k] = (u8)(w >> (8 * k));
    }
    for (; i < len; i++) buf[i] = pdk_input_load_u8(i);
    buf[len] = 0;
    *n = (u32)len;
    return buf;
}

/* Copy `n` bytes into a fresh host block; its handle, or 0 if the host refused. */
static inline u64 pdk_store(const u8 *src, u64 n) {
    u64 h = pdk_alloc(n);
    if (h == 0) return 0;
    u64 i = 0;
    for (; i + 8 <= n; i += 8) {
        u64 w = 0;
        for (int k = 0; k < 8; k++) w |= (u64)src[i + k] << (8 * k);
        pdk_store_u64(h + i, w);
    }
    for (; i < n; i++) pdk_store_u8(h + i, src[i]);
    return h;
}

/* Set `n` bytes as the call's output; 0 on success, 1 if the host refused the block. */
static inline i32 pdk_output(const u8 *src, u64 n) {
    if (n == 0) return 0; /* the kernel hands out no empty block: no output set is empty output */
    u64 h = pdk_store(src, n);
    if (h == 0) return 1;
    pdk_output_set(h, n);
    return 0;
}

/* Set `msg` (NUL-terminated) as the call's error and return `code` (non-zero). */
static inline i32 pdk_fail(i32 code, const char *msg) {
    u64 n = 0;
    while (msg[n]) n++;
    u64 h = pdk_store((const u8 *)msg, n);
    if (h) pdk_error_set(h);
    return code;
}

#endif
