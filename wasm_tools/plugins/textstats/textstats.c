/*
 * textstats — an example READER plugin for Voicebox (docs/plugins.md). Extism PDK ABI,
 * freestanding C. The host reads the file the call's `path` argument names and passes its
 * bytes in the input envelope; the plugin only computes. Effect `read`, receipt `internal-read`:
 * its result is its own account, with no host effect to prove.
 *
 * count:   {"path", "bytes", "lines", "words", "utf8", "chars"} where
 *          lines = LF bytes, plus one if the text is not empty and does not end with LF;
 *          words = maximal runs of bytes that are not ASCII whitespace (space, \t \n \v \f \r);
 *          utf8  = the bytes are valid UTF-8; chars = its code points (null when not UTF-8).
 * outline: the Markdown ATX headings outside fenced code blocks, as
 *          {"path", "headings": [{"level", "line", "text"}], "toc", "truncated"}; toc is one
 *          "- text" line per heading, indented two spaces per level below the top one. At most
 *          MAX_HEADINGS headings. A file that is not UTF-8 is declined ({"ok": false, ...}).
 */
#define PDK_DEFINE_MEM
#include "plugin.h"

enum { MAX_HEADINGS = 500 };

static int is_space(u8 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* The input envelope, the `path` argument and the bytes the host read for it. */
static i32 load(envelope *e, u8 **path, u32 *path_len, u8 **data, u32 *n) {
    i32 rc = envelope_read(e);
    if (rc) return rc;
    *path = envelope_arg(e, "path", path_len);
    if (!*path) return pdk_fail(1, "the call names no path");
    *data = envelope_file(e, "path", n);
    if (!*data) return pdk_fail(1, "the host passed no file for 'path'");
    return 0;
}

PDK_EXPORT("count") i32 count(void) {
    envelope e;
    u8 *path, *data;
    u32 path_len = 0, n = 0;
    i32 rc = load(&e, &path, &path_len, &data, &n);
    if (rc) return rc;
    u64 lines = 0, words = 0, chars = 0;
    int in_word = 0;
    for (u32 i = 0; i < n; i++) {
        u8 c = data[i];
        if (c == '\n') lines++;
        if (is_space(c)) {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            words++;
        }
    }
    if (n && data[n - 1] != '\n') lines++;
    int utf8 = utf8_valid(data, n, &chars);

    out_t o = out_new(6 * path_len + 256);
    out_cstr(&o, "{\"ok\":true,\"result\":{\"path\":");
    out_json_string(&o, path, path_len);
    out_cstr(&o, ",\"bytes\":");
    out_u64(&o, n);
    out_cstr(&o, ",\"lines\":");
    out_u64(&o, lines);
    out_cstr(&o, ",\"words\":");
    out_u64(&o, words);
    out_cstr(&o, utf8 ? ",\"utf8\":true,\"chars\":" : ",\"utf8\":false,\"chars\":null");
    if (utf8) out_u64(&o, chars);
    out_cstr(&o, "}}");
    return out_finish(&o);
}

/* Leading spaces of a line (0..3 count as indentation; 4 or more make it code). */
static u32 indent(const u8 *s, u32 n) {
    u32 k = 0;
    while (k < n && s[k] == ' ') k++;
    return k;
}

/* A fence line: 3+ backticks or tildes after at most 3 spaces. Its char and run length. */
static int fence(const u8 *s, u32 n, u8 *ch, u32 *run) {
    u32 k = indent(s, n);
    if (k > 3 || k >= n || (s[k] != '`' && s[k] != '~')) return 0;
    u32 r = 0;
    while (k + r < n && s[k + r] == s[k]) r++;
    if (r < 3) return 0;
    *ch = s[k];
    *run = r;
    return 1;
}

/* Only spaces and tabs from `from` to the end of the line? */
static int blank_from(const u8 *s, u32 from, u32 n) {
    for (u32 i = from; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* An ATX heading: its level (1..6, 0 if none) and its text [*at, *at + *len). */
static u32 heading(const u8 *s, u32 n, u32 *at, u32 *len) {
    u32 k = indent(s, n);
    if (k > 3) return 0;
    u32 level = 0;
    while (k + level < n && s[k + level] == '#') level++;
    if (level < 1 || level > 6) return 0;
    u32 p = k + level;
    if (p < n && s[p] != ' ' && s[p] != '\t') return 0;
    while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
    u32 end = n;
    while (end > p && (s[end - 1] == ' ' || s[end - 1] == '\t')) end--;
    /* an optional closing run of '#', preceded by a space or tab (or making up the whole text) */
    u32 hashes = end;
    while (hashes > p && s[hashes - 1] == '#') hashes--;
    if (hashes < end && (hashes == p || s[hashes - 1] == ' ' || s[hashes - 1] == '\t')) {
        end = hashes;
        while (end > p && (s[end - 1] == ' ' || s[end - 1] == '\t')) end--;
    }
    *at = p;
    *len = end - p;
    return level;
}

typedef struct {
    u32 level, line, at, len;
} found_heading;

static found_heading found[MAX_HEADINGS];

PDK_EXPORT("outline") i32 outline(void) {
    envelope e;
    u8 *path, *data;
    u32 path_len = 0, n = 0;
    i32 rc = load(&e, &path, &path_len, &data, &n);
    if (rc) return rc;
    u64 chars;
    if (!utf8_valid(data, n, &chars)) return plugin_decline("the file is not UTF-8 text");

    u32 count = 0, line = 0, top = 7;
    int truncated = 0, fenced = 0;
    u8 fence_ch = 0;
    u32 fence_run = 0;
    for (u32 start = 0; start < n;) {
        u32 end = start;
        while (end < n && data[end] != '\n') end++;
        u32 len = end - start;
        if (len && data[start + len - 1] == '\r') len--;
        const u8 *s = data + start;
        line++;
        u8 ch;
        u32 run;
        if (fenced) {
            if (fence(s, len, &ch, &run) && ch == fence_ch && run >= fence_run &&
                blank_from(s, indent(s, len) + run, len))
                fenced = 0;
        } else if (fence(s, len, &fence_ch, &fence_run)) {
            fenced = 1;
        } else {
            u32 at, text_len;
            u32 level = heading(s, len, &at, &text_len);
            if (level) {
                if (count == MAX_HEADINGS) {
                    truncated = 1;
                } else {
                    found_heading h = {level, line, start + at, text_len};
                    found[count++] = h;
                    if (level < top) top = level;
                }
            }
        }
        start = end + 1;
    }

    out_t o = out_new(12 * n + 96 * count + 6 * path_len + 256);
    out_cstr(&o, "{\"ok\":true,\"result\":{\"path\":");
    out_json_string(&o, path, path_len);
    out_cstr(&o, ",\"headings\":[");
    for (u32 i = 0; i < count; i++) {
        out_cstr(&o, i ? ",{\"level\":" : "{\"level\":");
        out_u64(&o, found[i].level);
        out_cstr(&o, ",\"line\":");
        out_u64(&o, found[i].line);
        out_cstr(&o, ",\"text\":");
        out_json_string(&o, data + found[i].at, found[i].len);
        out_cstr(&o, "}");
    }
    out_cstr(&o, "],\"toc\":\"");
    for (u32 i = 0; i < count; i++) {
        for (u32 k = top; k < found[i].level; k++) out_cstr(&o, "  ");
        out_cstr(&o, "- ");
        /* the text inside the already-open string: escape it, then drop its quotes */
        u32 mark = o.n;
        out_json_string(&o, data + found[i].at, found[i].len);
        if (!o.overflow) {
            memcpy(o.p + mark, o.p + mark + 1, o.n - mark - 2);
            o.n -= 2;
        }
        out_cstr(&o, "\\n");
    }
    out_cstr(&o, truncated ? "\",\"truncated\":true}}" : "\",\"truncated\":false}}");
    return out_finish(&o);
}
