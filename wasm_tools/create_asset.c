/*
 * create-asset: a PNG generator for Voicebox E1 (SPEC §8), freestanding C, no libc. A plugin of
 * the Extism PDK ABI (wasm_tools/pdk.h; docs/plugins.md), run by the host on the same runtime
 * as every plugin: it imports only kernel functions of `extism:host/env`.
 *
 * Export `create() -> i32`: the call's input is the argument bytes below; on success the output
 * is the PNG and `create` returns 0. Otherwise it sets an error message and returns
 * ERR_ARGS (-1) malformed arguments, ERR_RANGE (-2) a value outside its bounds, ERR_MEMORY (-3)
 * memory could not grow, or ERR_HOST (-4) the host refused a block for the output.
 *
 * Argument bytes, version 1, little-endian, exactly 12 + 3 * ncolours bytes:
 *   [0] u8  version = 1
 *   [1] u8  pattern: 0 gradient, 1 identicon, 2 stripes, 3 noise
 *   [2] u8  palette: 0 custom, 1 ember, 2 ocean, 3 forest, 4 dusk, 5 mono
 *   [3] u8  ncolours: 0 for a named palette, 2..8 for a custom one
 *   [4] u16 width  (1..1024 px)
 *   [6] u16 height (1..1024 px)
 *   [8] u32 seed
 *   [12..] ncolours RGB triplets (custom palette only)
 *
 * Output: an 8-bit RGB PNG (colour type 2, no interlace): signature, IHDR, one IDAT holding a
 * zlib stream (one fixed-Huffman deflate block with LZ77 matches, or stored blocks when that
 * would be larger), IEND; CRC-32 on every chunk, Adler-32 on the zlib stream. Only integer
 * arithmetic: the same arguments give the same bytes on every engine.
 *
 * Memory: the image is built above __heap_base, growing memory page by page as needed; the
 * module is linked with a declared maximum (8 MiB), which a 1024 x 1024 image fits in. The PNG
 * is then copied into one host block (the host's memory, capped by the host).
 */

#define PDK_DEFINE_MEM
#include "pdk.h"

enum { ERR_ARGS = -1, ERR_RANGE = -2, ERR_MEMORY = -3, ERR_HOST = -4 };
enum { MAX_SIDE = 1024, MAX_COLOURS = 8, INPUT_CAP = 256 };
enum { PAT_GRADIENT, PAT_IDENTICON, PAT_STRIPES, PAT_NOISE, PAT_COUNT };

/* ---- state -------------------------------------------------------------------------------- */

static u8 input[INPUT_CAP];
static u32 crc_table[256];
static i32 hash_head[1 << 15];
static i32 hash_prev[1 << 15];

static u8 palette[MAX_COLOURS][3];
static u32 ncolours;

static const u8 NAMED[5][5][3] = {
    /* ember  */ {{0x2b, 0x0f, 0x0e}, {0x7a, 0x1f, 0x14}, {0xd9, 0x4f, 0x1e}, {0xf7, 0xa5, 0x41},
                  {0xfd, 0xe8, 0xa8}},
    /* ocean  */ {{0x03, 0x25, 0x4c}, {0x11, 0x67, 0xb1}, {0x18, 0x7b, 0xcd}, {0x2a, 0x9d, 0xf4},
                  {0xd0, 0xef, 0xff}},
    /* forest */ {{0x1b, 0x2e, 0x1b}, {0x2f, 0x5d, 0x34}, {0x5b, 0x8c, 0x4a}, {0xa3, 0xc7, 0x6d},
                  {0xe8, 0xf0, 0xc8}},
    /* dusk   */ {{0x1d, 0x1a, 0x3a}, {0x4b, 0x2c, 0x6b}, {0x8e, 0x3f, 0x7f}, {0xd9, 0x66, 0x7a},
                  {0xf6, 0xb8, 0xa0}},
    /* mono   */ {{0x11, 0x11, 0x11}, {0x44, 0x44, 0x44}, {0x88, 0x88, 0x88}, {0xbb, 0xbb, 0xbb},
                  {0xee, 0xee, 0xee}},
};

/* ---- memory ------------------------------------------------------------------------------- */

/* Make sure [__heap_base, __heap_base + bytes) is inside memory; 0 if it cannot grow. */
static int reserve(u32 bytes) {
    u32 base = (u32)(size_t)&__heap_base;
    u32 have = (u32)__builtin_wasm_memory_size(0) * 65536u;
    if (bytes > 0x7fffffffu - base) return 0;
    u32 need = base + bytes;
    if (need <= have) return 1;
    u32 pages = (need - have + 65535u) / 65536u;
    return __builtin_wasm_memory_grow(0, pages) != (size_t)-1;
}

/* ---- a deterministic generator (splitmix32-style) ----------------------------------------- */

static u32 rng_state;

static u32 rng(void) {
    u32 z = (rng_state += 0x9e3779b9u);
    z = (z ^ (z >> 16)) * 0x85ebca6bu;
    z = (z ^ (z >> 13)) * 0xc2b2ae35u;
    return z ^ (z >> 16);
}

/* ---- patterns: each writes one RGB pixel --------------------------------------------------- */

static void put(u8 *px, const u8 *c) {
    px[0] = c[0];
    px[1] = c[1];
    px[2] = c[2];
}

static void gradient(u8 *raw, u32 w, u32 h, u32 seed) {
    u32 dir = seed & 3, reverse = (seed >> 2) & 1;
    u32 stride = 1 + 3 * w;
    u32 den = dir == 0 ? w - 1 : dir == 1 ? h - 1 : w + h - 2;
    if (den == 0) den = 1;
    for (u32 y = 0; y < h; y++) {
        u8 *row = raw + y * stride + 1;
        for (u32 x = 0; x < w; x++) {
            u32 num = dir == 0 ? x : dir == 1 ? y : dir == 2 ? x + y : (w - 1 - x) + y;
            if (reverse) num = den - (num > den ? den : num);
            u32 s = num * (ncolours - 1) * 256u / den;
            u32 seg = s >> 8, frac = s & 255;
            if (seg >= ncolours - 1) {
                seg = ncolours - 2;
                frac = 256;
            }
            const u8 *a = palette[seg], *b = palette[seg + 1];
            u8 c[3];
            for (int k = 0; k < 3; k++) c[k] = (u8)((a[k] * (256 - frac) + b[k] * frac) >> 8);
            put(row + 3 * x, c);
        }
    }
}

static void identicon(u8 *raw, u32 w, u32 h, u32 seed) {
    rng_state = seed;
    u32 cells = 0; /* 15 bits: 5 rows x 3 columns, mirrored to 5 columns */
    for (int i = 0; i < 15; i++)
        if (rng() & 1) cells |= 1u << i;
    if (cells == 0) cells = 1u << 12; /* never an empty icon: light the middle cell */
    const u8 *bg = palette[0];
    const u8 *fg = palette[1 + rng() % (ncolours - 1)];
    u32 side = w < h ? w : h;
    u32 grid = side - 2 * (side / 8);
    u32 ox = (w - grid) / 2, oy = (h - grid) / 2;
    u32 stride = 1 + 3 * w;
    for (u32 y = 0; y < h; y++) {
        u8 *row = raw + y * stride + 1;
        for (u32 x = 0; x < w; x++) {
            const u8 *c = bg;
            if (x >= ox && x < ox + grid && y >= oy && y < oy + grid) {
                u32 cx = (x - ox) * 5 / grid, cy = (y - oy) * 5 / grid;
                u32 col = cx < 3 ? cx : 4 - cx;
                if (cells & (1u << (cy * 3 + col))) c = fg;
            }
            put(row + 3 * x, c);
        }
    }
}

static void stripes(u8 *raw, u32 w, u32 h, u32 seed) {
    rng_state = seed;
    u32 orient = rng() % 3;
    u32 side = w < h ? w : h;
    u32 band = side / (3 + rng() % 10);
    if (band == 0) band = 1;
    u32 offset = rng() % (band * ncolours);
    u32 stride = 1 + 3 * w;
    for (u32 y = 0; y < h; y++) {
        u8 *row = raw + y * stride + 1;
        for (u32 x = 0; x < w; x++) {
            u32 p = orient == 0 ? x : orient == 1 ? y : x + y;
            put(row + 3 * x, palette[((p + offset) / band) % ncolours]);
        }
    }
}

static void noise(u8 *raw, u32 w, u32 h, u32 seed) {
    rng_state = seed;
    u32 stride = 1 + 3 * w;
    for (u32 y = 0; y < h; y++) {
        u8 *row = raw + y * stride + 1;
        for (u32 x = 0; x < w; x++) {
            u32 r = rng();
            const u8 *base = palette[r % ncolours];
            for (int k = 0; k < 3; k++) {
                int v = (int)base[k] + (int)((r >> (8 + 5 * k)) & 31) - 16;
                row[3 * x + k] = (u8)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
}

/* ---- checksums ---------------------------------------------------------------------------- */

static void crc_init(void) {
    for (u32 n = 0; n < 256; n++) {
        u32 c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static u32 crc32(const u8 *p, u32 n) {
    u32 c = 0xffffffffu;
    while (n--) c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static u32 adler32(const u8 *p, u32 n) {
    u32 a = 1, b = 0;
    while (n) {
        u32 chunk = n < 5552 ? n : 5552; /* largest run that cannot overflow b */
        n -= chunk;
        while (chunk--) {
            a += *p++;
            b += a;
        }
        a %= 65521u;
        b %= 65521u;
    }
    return (b << 16) | a;
}

static void be32(u8 *p, u32 v) {
    p[0] = (u8)(v >> 24);
    p[1] = (u8)(v >> 16);
    p[2] = (u8)(v >> 8);
    p[3] = (u8)v;
}

/* ---- deflate ------------------------------------------------------------------------------ */

/* Bits go out least-significant first; writing stops (ok = 0) at the limit. */
typedef struct {
    u8 *p, *end;
    u32 acc, nbits;
    int ok;
} Bits;

static void bits_put(Bits *b, u32 value, u32 n) {
    b->acc |= value << b->nbits;
    b->nbits += n;
    while (b->nbits >= 8) {
        if (b->p == b->end) {
            b->ok = 0;
            b->nbits = 0;
            return;
        }
        *b->p++ = (u8)b->acc;
        b->acc >>= 8;
        b->nbits -= 8;
    }
}

/* Huffman codes are defined most-significant bit first: reverse them for the LSB-first stream. */
static void bits_code(Bits *b, u32 code, u32 n) {
    u32 r = 0;
    for (u32 i = 0; i < n; i++) r |= ((code >> i) & 1) << (n - 1 - i);
    bits_put(b, r, n);
}

static void fixed_literal(Bits *b, u32 sym) {
    if (sym < 144) bits_code(b, 0x30 + sym, 8);
    else if (sym < 256) bits_code(b, 0x190 + sym - 144, 9);
    else if (sym < 280) bits_code(b, sym - 256, 7);
    else bits_code(b, 0xc0 + sym - 280, 8);
}

static const u16 LEN_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const u8 LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const u16 DIST_BASE[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                  33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                  1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const u8 DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                  6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void fixed_match(Bits *b, u32 len, u32 dist) {
    u32 i = 28;
    while (LEN_BASE[i] > len) i--;
    fixed_literal(b, 257 + i);
    bits_put(b, len - LEN_BASE[i], LEN_EXTRA[i]);
    u32 j = 29;
    while (DIST_BASE[j] > dist) j--;
    bits_code(b, j, 5);
    bits_put(b, dist - DIST_BASE[j], DIST_EXTRA[j]);
}

enum { WINDOW = 32768, MIN_MATCH = 3, MAX_MATCH = 258, MAX_CHAIN = 32 };

static u32 hash3(const u8 *p) {
    return ((u32)p[0] << 10 ^ (u32)p[1] << 5 ^ (u32)p[2]) & ((1 << 15) - 1);
}

static void insert(const u8 *data, u32 i) {
    u32 h = hash3(data + i);
    hash_prev[i & (WINDOW - 1)] = hash_head[h];
    hash_head[h] = (i32)i;
}

/* One final fixed-Huffman block with greedy LZ77 matches. Returns bytes written, 0 if > cap. */
static u32 deflate_fixed(const u8 *data, u32 n, u8 *out, u32 cap) {
    Bits b = {out, out + cap, 0, 0, 1};
    for (u32 k = 0; k < (1u << 15); k++) hash_head[k] = -1;
    bits_put(&b, 1, 1); /* BFINAL */
    bits_put(&b, 1, 2); /* BTYPE = 01, fixed Huffman */
    u32 i = 0;
    while (i < n && b.ok) {
        u32 best_len = 0, best_dist = 0;
        if (i + MIN_MATCH <= n) {
            u32 limit = n - i < MAX_MATCH ? n - i : MAX_MATCH;
            i32 cand = hash_head[hash3(data + i)];
            for (int chain = 0; cand >= 0 && chain < MAX_CHAIN; chain++) {
                u32 dist = i - (u32)cand;
                if (dist > WINDOW - 1) break;
                u32 len = 0;
                while (len < limit && data[cand + len] == data[i + len]) len++;
                if (len > best_len) {
                    best_len = len;
                    best_dist = dist;
                    if (len == limit) break;
                }
                i32 next = hash_prev[(u32)cand & (WINDOW - 1)];
                if (next >= cand) break; /* a stale slot from an older window: stop */
                cand = next;
            }
            insert(data, i);
        }
        if (best_len >= MIN_MATCH) {
            fixed_match(&b, best_len, best_dist);
            for (u32 k = 1; k < best_len; k++)
                if (i + k + MIN_MATCH <= n) insert(data, i + k);
            i += best_len;
        } else {
            fixed_literal(&b, data[i]);
            i++;
        }
    }
    fixed_literal(&b, 256); /* end of block */
    if (b.nbits) bits_put(&b, 0, 8 - b.nbits);
    return b.ok ? (u32)(b.p - out) : 0;
}

/* Stored blocks of at most 65535 bytes. The caller sized `out` for this. */
static u32 deflate_stored(const u8 *data, u32 n, u8 *out) {
    u8 *p = out;
    do {
        u32 len = n < 65535 ? n : 65535;
        n -= len;
        *p++ = n == 0 ? 1 : 0; /* BFINAL, BTYPE = 00, byte-aligned */
        p[0] = (u8)len;
        p[1] = (u8)(len >> 8);
        p[2] = (u8)~len;
        p[3] = (u8)(~len >> 8);
        p += 4;
        memcpy(p, data, len);
        p += len;
        data += len;
    } while (n);
    return (u32)(p - out);
}

static u32 stored_size(u32 n) {
    u32 blocks = n == 0 ? 1 : (n + 65534) / 65535;
    return n + 5 * blocks;
}

/* ---- PNG ---------------------------------------------------------------------------------- */

static u8 *chunk_start(u8 *p, u32 len, const char *type) {
    be32(p, len);
    for (int k = 0; k < 4; k++) p[4 + k] = (u8)type[k];
    return p + 8;
}

static u8 *chunk_end(u8 *start, u32 len) {
    be32(start + len, crc32(start - 4, len + 4));
    return start + len + 4;
}

static i32 parse_args(u32 len, u32 *w, u32 *h, u32 *seed, u32 *pattern) {
    if (len < 12 || len > INPUT_CAP || input[0] != 1) return ERR_ARGS;
    u32 pal = input[2], n = input[3];
    if (len != 12 + 3 * n) return ERR_ARGS;
    *pattern = input[1];
    *w = input[4] | (u32)input[5] << 8;
    *h = input[6] | (u32)input[7] << 8;
    *seed = input[8] | (u32)input[9] << 8 | (u32)input[10] << 16 | (u32)input[11] << 24;
    if (*pattern >= PAT_COUNT) return ERR_RANGE;
    if (*w < 1 || *w > MAX_SIDE || *h < 1 || *h > MAX_SIDE) return ERR_RANGE;
    if (pal == 0) {
        if (n < 2 || n > MAX_COLOURS) return ERR_RANGE;
        for (u32 k = 0; k < n; k++) put(palette[k], input + 12 + 3 * k);
        ncolours = n;
    } else {
        if (pal > 5 || n != 0) return ERR_RANGE;
        for (u32 k = 0; k < 5; k++) put(palette[k], NAMED[pal - 1][k]);
        ncolours = 5;
    }
    return 0;
}

/* The call's input into `input`; its length, or INPUT_CAP + 1 when it is longer. */
static u32 read_input(void) {
    u64 n = pdk_input_length();
    if (n > INPUT_CAP) return INPUT_CAP + 1;
    for (u32 i = 0; i < (u32)n; i++) input[i] = pdk_input_load_u8(i);
    return (u32)n;
}

PDK_EXPORT("create") i32 create(void) {
    u32 w, h, seed, pattern;
    i32 err = parse_args(read_input(), &w, &h, &seed, &pattern);
    if (err == ERR_ARGS) return pdk_fail(err, "malformed arguments");
    if (err) return pdk_fail(err, "a value is outside its bounds");

    u32 raw_len = h * (1 + 3 * w); /* each row: filter byte 0 (None), then RGB pixels */
    u32 zlib_cap = 2 + stored_size(raw_len) + 4;
    u32 png_cap = 8 + 25 + 8 + zlib_cap + 4 + 12;
    if (!reserve(raw_len + png_cap)) return pdk_fail(ERR_MEMORY, "memory could not grow");
    u8 *raw = &__heap_base;
    u8 *png = raw + raw_len;

    memset(raw, 0, raw_len);
    if (pattern == PAT_GRADIENT) gradient(raw, w, h, seed);
    else if (pattern == PAT_IDENTICON) identicon(raw, w, h, seed);
    else if (pattern == PAT_STRIPES) stripes(raw, w, h, seed);
    else noise(raw, w, h, seed);

    crc_init();
    static const u8 SIGNATURE[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(png, SIGNATURE, 8);

    u8 *ihdr = chunk_start(png + 8, 13, "IHDR");
    be32(ihdr, w);
    be32(ihdr + 4, h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* compression: deflate */
    ihdr[11] = 0; /* filter method 0 */
    ihdr[12] = 0; /* no interlace */
    u8 *p = chunk_end(ihdr, 13);

    u8 *idat = p + 8;
    idat[0] = 0x78; /* CMF: deflate, 32 KiB window */
    idat[1] = 0x01; /* FLG: fastest level, (0x78 << 8 | 0x01) % 31 == 0 */
    u32 body_cap = stored_size(raw_len);
    u32 body = deflate_fixed(raw, raw_len, idat + 2, body_cap);
    if (body == 0) body = deflate_stored(raw, raw_len, idat + 2);
    be32(idat + 2 + body, adler32(raw, raw_len));
    u32 idat_len = 2 + body + 4;
    chunk_start(p, idat_len, "IDAT");
    p = chunk_end(idat, idat_len);

    p = chunk_end(chunk_start(p, 0, "IEND"), 0);
    if (pdk_output(png, (u64)(p - png))) return pdk_fail(ERR_HOST, "the host refused the output");
    return 0;
}
