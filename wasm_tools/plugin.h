/*
 * plugin.h — the Voicebox plugin envelope for freestanding C plugins (docs/plugins.md
 * "Input and output"): a small validating JSON reader, base64, and a bounded JSON writer.
 * Include after defining PDK_DEFINE_MEM in exactly one file (the plugin's only source).
 *
 * Input (UTF-8 JSON):  {"v": 1, "operation": "...", "args": {...},
 *                       "files": [{"arg": "path", "path": "...", "size": n, "base64": "..."}]}
 * Output (UTF-8 JSON): {"ok": true, "result": {...}, "writes": [{"path": "...", "base64": "..."}]}
 *                   or {"ok": false, "message": "..."} (the plugin declines, as data)
 */
#ifndef VBX_PLUGIN_H
#define VBX_PLUGIN_H

#include "pdk.h"

enum { JSON_MAX_DEPTH = 64 };

/* A JSON value: the bytes [at, end). at == 0 means "absent". */
typedef struct {
    const u8 *at, *end;
} span;

static inline const u8 *json_ws(const u8 *p, const u8 *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static inline int hex_digit(u8 c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* p at '"': the byte after the closing quote, or 0 if the string is malformed. */
static inline const u8 *json_string_end(const u8 *p, const u8 *end) {
    p++;
    while (p < end) {
        u8 c = *p++;
        if (c == '"') return p;
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (p >= end) return 0;
            u8 e = *p++;
            if (e == 'u') {
                if (end - p < 4) return 0;
                for (int k = 0; k < 4; k++)
                    if (hex_digit(p[k]) < 0) return 0;
                p += 4;
            } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' &&
                       e != 'r' && e != 't') {
                return 0;
            }
        }
    }
    return 0;
}

static inline const u8 *json_digits(const u8 *p, const u8 *end) {
    const u8 *start = p;
    while (p < end && *p >= '0' && *p <= '9') p++;
    return p > start ? p : 0;
}

static inline const u8 *json_number_end(const u8 *p, const u8 *end) {
    if (p < end && *p == '-') p++;
    if (p < end && *p == '0') {
        p++;
    } else {
        p = json_digits(p, end);
        if (!p) return 0;
    }
    if (p < end && *p == '.') {
        p = json_digits(p + 1, end);
        if (!p) return 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        p = json_digits(p, end);
    }
    return p;
}

static inline const u8 *json_word_end(const u8 *p, const u8 *end, const char *word) {
    for (; *word; word++, p++)
        if (p >= end || *p != (u8)*word) return 0;
    return p;
}

/* p at the start of a value: the byte after it, or 0 if it is not valid JSON. */
static const u8 *json_value_end(const u8 *p, const u8 *end, int depth) {
    if (p >= end || depth > JSON_MAX_DEPTH) return 0;
    u8 c = *p;
    if (c == '"') return json_string_end(p, end);
    if (c == 't') return json_word_end(p, end, "true");
    if (c == 'f') return json_word_end(p, end, "false");
    if (c == 'n') return json_word_end(p, end, "null");
    if (c == '-' || (c >= '0' && c <= '9')) return json_number_end(p, end);
    if (c != '{' && c != '[') return 0;
    u8 close = c == '{' ? '}' : ']';
    p = json_ws(p + 1, end);
    if (p < end && *p == close) return p + 1;
    for (;;) {
        if (c == '{') {
            if (p >= end || *p != '"') return 0;
            p = json_string_end(p, end);
            if (!p) return 0;
            p = json_ws(p, end);
            if (p >= end || *p != ':') return 0;
            p = json_ws(p + 1, end);
        }
        p = json_value_end(p, end, depth + 1);
        if (!p) return 0;
        p = json_ws(p, end);
        if (p >= end) return 0;
        if (*p == close) return p + 1;
        if (*p != ',') return 0;
        p = json_ws(p + 1, end);
    }
}

/* The whole of [p, end) is one JSON value (whitespace around it allowed). */
static inline span json_document(const u8 *p, const u8 *end) {
    span none = {0, 0};
    p = json_ws(p, end);
    const u8 *after = json_value_end(p, end, 0);
    if (!after || json_ws(after, end) != end) return none;
    span s = {p, after};
    return s;
}

/* The value of member `key` of object `obj` (a validated value), or an absent span. Keys are
 * compared byte for byte as written (a key spelled with escapes does not match). */
static span json_get(span obj, const char *key) {
    span none = {0, 0};
    if (!obj.at || *obj.at != '{') return none;
    const u8 *p = json_ws(obj.at + 1, obj.end);
    while (p < obj.end && *p == '"') {
        const u8 *key_end = json_string_end(p, obj.end);
        const u8 *k = p + 1;
        const char *want = key;
        while (k < key_end - 1 && *want && *k == (u8)*want) {
            k++;
            want++;
        }
        int match = k == key_end - 1 && !*want;
        p = json_ws(json_ws(key_end, obj.end) + 1, obj.end); /* past ':' */
        const u8 *value_end = json_value_end(p, obj.end, 1);
        if (match) {
            span s = {p, value_end};
            return s;
        }
        p = json_ws(value_end, obj.end);
        if (p < obj.end && *p == ',') p = json_ws(p + 1, obj.end);
    }
    return none;
}

/* Item `index` of array `arr` (a validated value), or an absent span. */
static span json_item(span arr, u32 index) {
    span none = {0, 0};
    if (!arr.at || *arr.at != '[') return none;
    const u8 *p = json_ws(arr.at + 1, arr.end);
    for (u32 i = 0; p < arr.end && *p != ']'; i++) {
        const u8 *value_end = json_value_end(p, arr.end, 1);
        if (i == index) {
            span s = {p, value_end};
            return s;
        }
        p = json_ws(value_end, arr.end);
        if (p < arr.end && *p == ',') p = json_ws(p + 1, arr.end);
    }
    return none;
}

static inline u32 utf8_put(u8 *out, u32 cp) {
    if (cp < 0x80) {
        out[0] = (u8)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (u8)(0xc0 | cp >> 6);
        out[1] = (u8)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (u8)(0xe0 | cp >> 12);
        out[1] = (u8)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (u8)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (u8)(0xf0 | cp >> 18);
    out[1] = (u8)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (u8)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (u8)(0x80 | (cp & 0x3f));
    return 4;
}

static inline u32 hex4(const u8 *p) {
    return (u32)(hex_digit(p[0]) << 12 | hex_digit(p[1]) << 8 | hex_digit(p[2]) << 4 |
                 hex_digit(p[3]));
}

/* Decode string value `s` (validated) into out (cap bytes); its length, or -1 if `s` is not a
 * string, holds a lone surrogate, or does not fit. */
static i64 json_str(span s, u8 *out, u32 cap) {
    if (!s.at || *s.at != '"') return -1;
    const u8 *p = s.at + 1, *end = s.end - 1;
    u32 n = 0;
    while (p < end) {
        if (cap - n < 4) return -1;
        u8 c = *p++;
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        u8 e = *p++;
        if (e == 'u') {
            u32 cp = hex4(p);
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) return -1;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
                u32 low = hex4(p + 2);
                if (low < 0xdc00 || low > 0xdfff) return -1;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                p += 6;
            }
            n += utf8_put(out + n, cp);
        } else {
            out[n++] = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' :
                       e == 't' ? '\t' : e;
        }
    }
    return n;
}

/* Is `s` the string `text` (n bytes, decoded)? */
static int json_str_is(span s, const u8 *text, u32 n, u8 *scratch, u32 cap) {
    i64 got = json_str(s, scratch, cap);
    if (got != (i64)n) return 0;
    for (u32 i = 0; i < n; i++)
        if (scratch[i] != text[i]) return 0;
    return 1;
}

/* Is [s, s + n) valid UTF-8, exactly as a strict decoder says (no overlong forms, no
 * surrogates, nothing past U+10FFFF)? The number of code points goes to *chars. */
static int utf8_valid(const u8 *s, u32 n, u64 *chars) {
    u64 count = 0;
    for (u32 i = 0; i < n; count++) {
        u8 c = s[i];
        u32 more;
        u8 low = 0x80, high = 0xbf;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            more = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            more = 2;
            if (c == 0xe0) low = 0xa0;
            if (c == 0xed) high = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            more = 3;
            if (c == 0xf0) low = 0x90;
            if (c == 0xf4) high = 0x8f;
        } else {
            return 0;
        }
        if (n - i - 1 < more) return 0;
        if (s[i + 1] < low || s[i + 1] > high) return 0;
        for (u32 k = 2; k <= more; k++)
            if ((s[i + k] & 0xc0) != 0x80) return 0;
        i += more + 1;
    }
    *chars = count;
    return 1;
}

/* ---- base64 (RFC 4648, standard alphabet, padded) ----------------------------------------- */

static inline int b64_value(u8 c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decode `n` base64 characters into out (at least n / 4 * 3 bytes); the length, or -1. */
static i64 base64_decode(const u8 *in, u32 n, u8 *out) {
    if (n % 4) return -1;
    u32 o = 0;
    for (u32 i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            u8 c = in[i + k];
            if (c == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
            } else {
                if (pad) return -1;
                v[k] = b64_value(c);
                if (v[k] < 0) return -1;
            }
        }
        u32 w = (u32)v[0] << 18 | (u32)v[1] << 12 | (u32)v[2] << 6 | (u32)v[3];
        out[o++] = (u8)(w >> 16);
        if (pad < 2) out[o++] = (u8)(w >> 8);
        if (pad < 1) out[o++] = (u8)w;
    }
    return o;
}

/* ---- output ---------------------------------------------------------------------------------- */

typedef struct {
    u8 *p;
    u32 n, cap;
    int overflow;
} out_t;

static inline void out_bytes(out_t *o, const u8 *s, u32 n) {
    if (o->overflow || o->cap - o->n < n) {
        o->overflow = 1;
        return;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static inline void out_cstr(out_t *o, const char *s) {
    u32 n = 0;
    while (s[n]) n++;
    out_bytes(o, (const u8 *)s, n);
}

static inline void out_u64(out_t *o, u64 v) {
    u8 t[24];
    u32 n = 0;
    do {
        t[23 - n++] = (u8)('0' + v % 10);
        v /= 10;
    } while (v);
    out_bytes(o, t + 24 - n, n);
}

/* `s` as a JSON string: quotes, backslashes and control bytes escaped; other bytes as they are
 * (the caller passes UTF-8). At most 6 * n + 2 bytes. */
static void out_json_string(out_t *o, const u8 *s, u32 n) {
    static const char HEX[] = "0123456789abcdef";
    out_bytes(o, (const u8 *)"\"", 1);
    for (u32 i = 0; i < n; i++) {
        u8 c = s[i];
        if (c == '"' || c == '\\') {
            u8 e[2] = {'\\', c};
            out_bytes(o, e, 2);
        } else if (c == '\n') {
            out_cstr(o, "\\n");
        } else if (c == '\t') {
            out_cstr(o, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            u8 e[6] = {'\\', 'u', '0', '0', (u8)HEX[c >> 4], (u8)HEX[c & 15]};
            out_bytes(o, e, 6);
        } else {
            out_bytes(o, &c, 1);
        }
    }
    out_bytes(o, (const u8 *)"\"", 1);
}

/* `s` in base64, quoted: 4 * ceil(n / 3) + 2 bytes. */
static void out_base64_string(out_t *o, const u8 *s, u32 n) {
    static const char ABC[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out_bytes(o, (const u8 *)"\"", 1);
    for (u32 i = 0; i < n; i += 3) {
        u32 w = (u32)s[i] << 16 | (i + 1 < n ? (u32)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        u8 q[4] = {(u8)ABC[w >> 18], (u8)ABC[(w >> 12) & 63], (u8)ABC[(w >> 6) & 63],
                   (u8)ABC[w & 63]};
        if (i + 1 >= n) q[2] = '=';
        if (i + 2 >= n) q[3] = '=';
        out_bytes(o, q, 4);
    }
    out_bytes(o, (const u8 *)"\"", 1);
}

/* A fresh output buffer of `cap` bytes on the heap (o->p == 0 if memory ran out). */
static inline out_t out_new(u32 cap) {
    out_t o = {pdk_heap(cap), 0, cap, 0};
    if (!o.p) o.overflow = 1;
    return o;
}

/* Finish: set the buffer as the call's output (0), or fail (non-zero). */
static inline i32 out_finish(out_t *o) {
    if (o->overflow) return pdk_fail(2, "the plugin's output did not fit its buffer");
    return pdk_output(o->p, o->n) ? pdk_fail(3, "the host refused the output") : 0;
}

/* Decline as data: {"ok": false, "message": msg}. */
static i32 plugin_decline(const char *msg) {
    u32 n = 0;
    while (msg[n]) n++;
    out_t o = out_new(6 * n + 32);
    out_cstr(&o, "{\"ok\":false,\"message\":");
    out_json_string(&o, (const u8 *)msg, n);
    out_cstr(&o, "}");
    return out_finish(&o);
}

/* ---- the envelope ------------------------------------------------------------------------------ */

typedef struct {
    span root, args, files;
} envelope;

/* Read and check the input: a JSON object with v = 1, an "args" object and a "files" array. */
static i32 envelope_read(envelope *e) {
    u32 n = 0;
    const u8 *in = pdk_input(&n);
    if (!in) return pdk_fail(1, "the input does not fit in memory");
    e->root = json_document(in, in + n);
    if (!e->root.at || *e->root.at != '{') return pdk_fail(1, "the input is not a JSON object");
    span v = json_get(e->root, "v");
    if (!v.at || v.end - v.at != 1 || *v.at != '1') return pdk_fail(1, "unknown envelope version");
    e->args = json_get(e->root, "args");
    e->files = json_get(e->root, "files");
    if (!e->args.at || *e->args.at != '{' || !e->files.at || *e->files.at != '[')
        return pdk_fail(1, "the envelope lacks args or files");
    return 0;
}

/* A string argument, decoded onto the heap (NUL-terminated); its length in *n. 0 if absent. */
static u8 *envelope_arg(envelope *e, const char *name, u32 *n) {
    span s = json_get(e->args, name);
    if (!s.at || *s.at != '"') return 0;
    u32 cap = (u32)(s.end - s.at) + 4;
    u8 *out = pdk_heap(cap + 1);
    if (!out) return 0;
    i64 len = json_str(s, out, cap);
    if (len < 0) return 0;
    out[len] = 0;
    *n = (u32)len;
    return out;
}

/* The bytes of the file the host read for argument `arg`, decoded onto the heap; 0 if absent. */
static u8 *envelope_file(envelope *e, const char *arg, u32 *n) {
    u8 scratch[64];
    u32 want = 0;
    while (arg[want]) want++;
    for (u32 i = 0;; i++) {
        span file = json_item(e->files, i);
        if (!file.at) return 0;
        if (!json_str_is(json_get(file, "arg"), (const u8 *)arg, want, scratch, sizeof scratch))
            continue;
        span b64 = json_get(file, "base64");
        if (!b64.at || *b64.at != '"') return 0;
        u32 chars = (u32)(b64.end - b64.at) - 2;
        u8 *out = pdk_heap(chars / 4 * 3 + 1);
        if (!out) return 0;
        i64 len = base64_decode(b64.at + 1, chars, out);
        if (len < 0) return 0;
        *n = (u32)len;
        return out;
    }
}

#endif
