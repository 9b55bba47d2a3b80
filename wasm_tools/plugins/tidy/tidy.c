/*
 * tidy — an example WRITER plugin for Voicebox (docs/plugins.md). Extism PDK ABI, freestanding
 * C. The host reads the file named by `path`; the plugin returns the tidied text as a WRITE
 * REQUEST for the file named by `target` — data, never an effect: the host asks the broker,
 * writes it itself and issues the local-write receipt. Effect `write`, receipt `local-write`.
 *
 * text: the rules, in order —
 *   1. the file must be UTF-8 without NUL bytes, else the call is declined ({"ok": false});
 *   2. line ends CRLF and lone CR become LF;
 *   3. spaces and tabs at the end of every line are removed;
 *   4. blank lines at the start and the end go, and a run of blank lines becomes one;
 *   5. a text that is not empty ends with exactly one LF.
 * Result: {"path", "target", "bytesBefore", "bytesAfter", "changed"}; writes: one request for
 * `target`, unless nothing changed and `target` is `path` (then none).
 */
#define PDK_DEFINE_MEM
#include "plugin.h"

/* Apply rules 2-5 to [in, in + n) into out (n + 1 bytes suffice); the new length. */
static u32 tidy(const u8 *in, u32 n, u8 *out) {
    u32 o = 0;
    int pending_blank = 0, any = 0;
    for (u32 i = 0; i < n;) {
        u32 start = i;
        while (i < n && in[i] != '\n' && in[i] != '\r') i++;
        u32 end = i;
        if (i < n && in[i] == '\r' && i + 1 < n && in[i + 1] == '\n') i++;
        if (i < n) i++; /* past the line end */
        while (end > start && (in[end - 1] == ' ' || in[end - 1] == '\t')) end--;
        if (end == start) {
            pending_blank = any;
            continue;
        }
        if (pending_blank) out[o++] = '\n';
        pending_blank = 0;
        memcpy(out + o, in + start, end - start);
        o += end - start;
        out[o++] = '\n';
        any = 1;
    }
    return o;
}

static int same(const u8 *a, u32 an, const u8 *b, u32 bn) {
    if (an != bn) return 0;
    for (u32 i = 0; i < an; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

PDK_EXPORT("text") i32 text(void) {
    envelope e;
    i32 rc = envelope_read(&e);
    if (rc) return rc;
    u32 path_len = 0, target_len = 0, n = 0;
    u8 *path = envelope_arg(&e, "path", &path_len);
    u8 *target = envelope_arg(&e, "target", &target_len);
    if (!path || !target) return pdk_fail(1, "the call names no path or no target");
    u8 *data = envelope_file(&e, "path", &n);
    if (!data) return pdk_fail(1, "the host passed no file for 'path'");
    u64 chars;
    for (u32 i = 0; i < n; i++)
        if (data[i] == 0) return plugin_decline("the file holds NUL bytes: not a text file");
    if (!utf8_valid(data, n, &chars)) return plugin_decline("the file is not UTF-8 text");

    u8 *tidied = pdk_heap(n + 1);
    if (!tidied) return pdk_fail(1, "no memory for the tidied text");
    u32 m = tidy(data, n, tidied);
    int changed = !same(data, n, tidied, m);
    int write = changed || !same(path, path_len, target, target_len);

    out_t o = out_new(4 * (m / 3 + 1) + 12 * (path_len + target_len) + 256);
    out_cstr(&o, "{\"ok\":true,\"result\":{\"path\":");
    out_json_string(&o, path, path_len);
    out_cstr(&o, ",\"target\":");
    out_json_string(&o, target, target_len);
    out_cstr(&o, ",\"bytesBefore\":");
    out_u64(&o, n);
    out_cstr(&o, ",\"bytesAfter\":");
    out_u64(&o, m);
    out_cstr(&o, changed ? ",\"changed\":true},\"writes\":[" : ",\"changed\":false},\"writes\":[");
    if (write) {
        out_cstr(&o, "{\"path\":");
        out_json_string(&o, target, target_len);
        out_cstr(&o, ",\"base64\":");
        out_base64_string(&o, tidied, m);
        out_cstr(&o, "}");
    }
    out_cstr(&o, "]}");
    return out_finish(&o);
}
