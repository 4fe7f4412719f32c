/*
 * mcptrace._scan: the hot path of the line-oriented loaders, in C.
 *
 * Why this exists: turning 10^6 capture lines into the messages table in Python
 * costs ~5x the bare orjson parse (one dict per line, ~30 columns picked out of
 * it, the message re-serialised). This module reads a chunk of lines without the
 * GIL (so two threads use two cores), validates each line as JSON, finds the few
 * members the messages table needs, and hands the columns to Polars through the
 * Arrow C data interface. Strings are Arrow "string view" columns that point into
 * one shared copy of the chunk, so `raw` and `message` (a substring of it) cost no
 * second copy of the text.
 *
 * It only takes lines it can reproduce *exactly* as the Python path would:
 *   - the line is valid JSON (strict RFC 8259, valid UTF-8, no lone surrogates);
 *   - in capture mode the message is compact and canonical, i.e. its text equals
 *     orjson.dumps of the parsed message (no whitespace, only the escapes orjson
 *     writes, integers without leading zeros, plain floats of <= 15 digits, no
 *     duplicate keys), so `message` can be a slice of the line;
 *   - every value it extracts (method, target, ids, ...) needs no unescaping.
 * Any other line is "slow": its position is returned and the Python path
 * (orjson + mcptrace.loaders.rows) handles it, so results never depend on
 * whether this module was built. tests/loaders/test_scan.py checks that
 * equivalence, including with random and mutated lines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html) */

#define ARROW_FLAG_NULLABLE 2

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

/* one Arrow string view: inline when <= 12 bytes, else prefix + (buffer, offset) */
typedef struct {
    int32_t len;
    union {
        uint8_t inl[12];
        struct {
            uint8_t prefix[4];
            int32_t buf;
            int32_t off;
        } ref;
    } u;
} View;

/* the chunk's bytes, shared by every view column that points into them */
typedef struct {
    atomic_long refs;
    uint8_t *data;
    int64_t size;
    /* set when the bytes are a mapping of the file (map()): unmapped, not freed */
    uint8_t *map_base;
    size_t map_len;
} Shared;

static void buf_free(void *p);
static void unmap_guarded(uint8_t *base, size_t len);

static void shared_decref(Shared *s) {
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        if (s->map_base)
            unmap_guarded(s->map_base, s->map_len);
        else
            buf_free(s->data);
        free(s);
    }
}

/* ---- memory for column buffers ------------------------------------------------
 * Column buffers outlive the scan (Polars owns them until it drops the columns) and
 * are freed in any order. From glibc's heap such frees rarely go back to the system,
 * so a process that drops the loader's columns (e.g. after copying them into one
 * chunk) would keep their memory. Big buffers are therefore mapped and unmapped
 * directly. Each block starts with a 16-byte header (its size), keeping the data
 * 16-byte aligned. */
#ifndef _WIN32
#include <sys/mman.h>
#define DIRECT_MIN (64 * 1024)
#endif

#define HEADER 16

/* ---- blocks kept for the next share --------------------------------------------
 * Linting a file in shares loads one share after another: each share's text and
 * columns go into fresh pages, which the kernel must map and zero (on this kind of
 * virtual machine ~1.4-2 us a page: ~0.1 s of kernel time for the 270 MB of text of a
 * 10^6-message share), and the previous share's were just unmapped. While
 * keep_freed(1) is on (from the end of one share's lint until the next share is
 * loaded; see mcptrace/linter/shares.py), blocks freed are kept instead, and the next
 * allocations of the same kind take them, grown or trimmed to size. drop_kept() unmaps
 * what is left. A block's kind is in its header: text, or the values of column i.
 * A column's block is zeroed again when taken (its nulls are left as they are), so
 * only a column's block that was mostly written is kept: zeroing a sparse one would
 * write pages its next column may never touch. */
#define KIND_TEXT 1
#define KIND_COLUMN 2 /* + the column's index */
#if !defined(_WIN32) && defined(__linux__)
#include <pthread.h>
#define KEEPS_BLOCKS 1
#define KEPT_MAX 1024
static struct {
    uint8_t *block;
    size_t total;
    size_t kind;
} kept[KEPT_MAX];
static int n_kept = 0;
static atomic_int keeping = 0;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t page_round(size_t n) {
    size_t page = 4096;
    return (n + page - 1) & ~(page - 1);
}

/* a kept block of `kind` and at least `total` bytes (the smallest such), or the
 * largest one of that kind grown to it; NULL when none is kept */
static uint8_t *take_kept(size_t total, size_t kind) {
    size_t want = page_round(total);
    pthread_mutex_lock(&kept_lock);
    int pick = -1;
    for (int i = 0; i < n_kept; i++) {
        if (kept[i].kind != kind) continue;
        int fits = kept[i].total >= want, picked_fits = pick >= 0 && kept[pick].total >= want;
        if (pick < 0 || (fits && (!picked_fits || kept[i].total < kept[pick].total)) ||
            (!fits && !picked_fits && kept[i].total > kept[pick].total))
            pick = i;
    }
    if (pick < 0) {
        pthread_mutex_unlock(&kept_lock);
        return NULL;
    }
    uint8_t *block = kept[pick].block;
    size_t have = kept[pick].total;
    kept[pick] = kept[--n_kept];
    pthread_mutex_unlock(&kept_lock);
    if (have > want) {
        munmap(block + want, have - want); /* the rest would only hold memory */
    } else if (have < want) {
        void *grown = mremap(block, have, want, MREMAP_MAYMOVE);
        if (grown == MAP_FAILED) {
            munmap(block, have);
            return NULL;
        }
        block = grown;
#ifdef MADV_POPULATE_WRITE
        /* text: the new pages in one go, as MAP_POPULATE maps a fresh block's */
        if (kind == KIND_TEXT) madvise(block + have, want - have, MADV_POPULATE_WRITE);
#endif
    }
    /* a column's nulls are left as they are: what the block held goes (the pages
     * added by growing it are zero already) */
    if (kind != KIND_TEXT) memset(block, 0, have < want ? have : want);
    return block;
}

/* whether at least nine pages in ten of the block are in memory (were written) */
static int mostly_written(uint8_t *block, size_t total) {
    size_t pages = page_round(total) / 4096, in = 0;
    unsigned char *vec = malloc(pages ? pages : 1);
    if (!vec) return 0;
    int ok = mincore(block, page_round(total), vec) == 0;
    for (size_t i = 0; ok && i < pages; i++) in += vec[i] & 1;
    free(vec);
    return ok && in * 10 >= pages * 9;
}

/* keeps a block of `total` bytes while keep_freed(1) is on: 1 if kept */
static int keep_block(uint8_t *block, size_t total, size_t kind) {
    if (!atomic_load(&keeping)) return 0;
    if (kind != KIND_TEXT && !mostly_written(block, total)) return 0;
    int done = 0;
    pthread_mutex_lock(&kept_lock);
    if (n_kept < KEPT_MAX) {
        kept[n_kept].block = block;
        kept[n_kept].total = page_round(total);
        kept[n_kept].kind = kind;
        n_kept++;
        done = 1;
    }
    pthread_mutex_unlock(&kept_lock);
    return done;
}

static size_t drop_all_kept(void) {
    size_t dropped = 0;
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < n_kept; i++) {
        munmap(kept[i].block, kept[i].total);
        dropped += kept[i].total;
    }
    n_kept = 0;
    pthread_mutex_unlock(&kept_lock);
    return dropped;
}
#endif

/* `kind`: 0, or what the block holds, which keep_freed() keeps it as (above). Text
 * (KIND_TEXT) is about to be written whole: its pages are then mapped in one go
 * (MAP_POPULATE) rather than faulted in one by one as they are first written: at 0.5
 * GB of text, ~130,000 page-fault traps fewer (a fifth of the kernel time of a load).
 * Buffers written sparsely (columns that are mostly null) are not populated: their
 * untouched pages then cost neither time nor memory. The header's second word is the
 * kind. */
static void *buf_alloc_kind(size_t n, int zeroed, size_t kind) {
    size_t total = n + HEADER;
    uint8_t *block;
#ifndef _WIN32
    if (total >= DIRECT_MIN) {
        block = NULL;
#ifdef KEEPS_BLOCKS
        if (kind) {
            block = take_kept(total, kind);
            if (block) total = page_round(total);
        }
#endif
        if (!block) {
            int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_POPULATE
            if (kind == KIND_TEXT) flags |= MAP_POPULATE;
#endif
            block = mmap(NULL, total, PROT_READ | PROT_WRITE, flags, -1, 0);
            if (block == MAP_FAILED) return NULL; /* mapped pages are zeroed */
        }
    } else
#endif
    {
        block = zeroed ? calloc(1, total) : malloc(total);
        if (!block) return NULL;
    }
    ((size_t *)block)[0] = total;
    ((size_t *)block)[1] = kind;
    return block + HEADER;
}

/* `filled`: text, every byte about to be written (see buf_alloc_kind) */
static void *buf_alloc_as(size_t n, int zeroed, int filled) {
    return buf_alloc_kind(n, zeroed, filled ? KIND_TEXT : 0);
}

static void *buf_alloc(size_t n, int zeroed) { return buf_alloc_as(n, zeroed, 0); }

static void buf_free(void *p) {
    if (!p) return;
    uint8_t *block = (uint8_t *)p - HEADER;
    size_t total = ((size_t *)block)[0];
#ifndef _WIN32
    if (total >= DIRECT_MIN) {
#ifdef KEEPS_BLOCKS
        if (((size_t *)block)[1] && keep_block(block, total, ((size_t *)block)[1])) return;
#endif
        munmap(block, total);
        return;
    }
#endif
    (void)total;
    free(block);
}

static void *buf_grow(void *p, size_t used, size_t n) {
    void *grown = buf_alloc(n, 0);
    if (!grown) return NULL;
    memcpy(grown, p, used);
    buf_free(p);
    return grown;
}

/* ---- output columns ------------------------------------------------------- */

/* T_CODE: a column of a few fixed words (an Enum of the messages table), one byte a row:
 * 0 for null, else 1 + the word's place in CODE_NAMES. As string views they took 16
 * bytes a row, and Polars then cast each string to the Enum. */
enum { T_INT64, T_BOOL, T_VIEW, T_CODE };

enum {
    C_LINE,
    C_TS_US,
    C_TS_TEXT,
    C_SESSION,
    C_SERVER,
    C_DIRECTION,
    C_TRANSPORT,
    C_KIND,
    C_ID,
    C_ID_TYPE,
    C_METHOD,
    C_TARGET,
    C_ERROR_CODE,
    C_ERROR_CODE_IS_INT,
    C_ERROR_MESSAGE,
    C_RESULT_TYPE,
    C_TOOL_ERROR,
    C_PROTOCOL_VERSION,
    C_PROGRESS_TOKEN,
    C_CANCEL_ID,
    C_HTTP_METHOD,
    C_HTTP_STATUS,
    C_HTTP_HEADERS,
    C_MESSAGE,
    C_RAW,
    NCOLS
};

static const char *COL_NAMES[NCOLS] = {
    "line", "ts_us", "ts_text", "session", "server", "direction", "transport", "kind",
    "id", "id_type", "method", "target", "error_code", "error_code_is_int",
    "error_message", "result_type", "tool_error", "protocol_version",
    "progress_token", "cancel_id", "http_method", "http_status", "http_headers",
    "message", "raw",
};

static const int COL_TYPES[NCOLS] = {
    T_INT64, T_INT64, T_VIEW, T_VIEW, T_VIEW, T_CODE, T_CODE, T_CODE,
    T_VIEW, T_CODE, T_VIEW, T_VIEW, T_INT64, T_BOOL,
    T_VIEW, T_VIEW, T_BOOL, T_VIEW,
    T_VIEW, T_VIEW, T_VIEW, T_INT64, T_VIEW,
    T_VIEW, T_VIEW,
};

enum { DIR_C2S = 1, DIR_S2C, DIR_UNKNOWN };
enum { TRANSPORT_STDIO = 1, TRANSPORT_HTTP };
enum { KIND_REQUEST = 1, KIND_NOTIFICATION, KIND_RESPONSE, KIND_ERROR };
enum { ID_INTEGER = 1, ID_NUMBER, ID_STRING, ID_NULL, ID_BOOLEAN, ID_OBJECT, ID_ARRAY };

/* see PyInit__scan: accel.SCAN_INTERFACE must equal it */
#define SCAN_INTERFACE 6
#define MAX_CODES 7
/* the words of the T_CODE columns, in the order of their codes (from 1) */
static const char *const CODE_NAMES[NCOLS][MAX_CODES + 1] = {
    [C_DIRECTION] = {"c2s", "s2c", "unknown", NULL},
    [C_TRANSPORT] = {"stdio", "http", NULL},
    [C_KIND] = {"request", "notification", "response", "error", NULL},
    [C_ID_TYPE] = {"integer", "number", "string", "null", "boolean", "object", "array", NULL},
};

typedef struct {
    void *values;      /* int64_t[], bit-packed bools, or View[] */
    uint8_t *validity; /* bit set = value present */
    int64_t nulls;
    /* view columns other than message and raw keep their long strings in a buffer of
     * their own: short values pointing into the whole chunk would make every later
     * Polars operation on them (hashing, joins, compaction) walk the chunk's buffer */
    uint8_t *data;
    int64_t data_len, data_cap;
    /* each distinct long value is stored once per chunk (sessions, methods and tool
     * names repeat on nearly every row); the table stops growing when half full */
    struct Interned *interned;
    int32_t n_interned;
} Col;

#define INTERN_SLOTS 4096

typedef struct Interned {
    uint64_t hash;
    int32_t off, len; /* len 0: empty slot (interned values are > 12 bytes) */
} Interned;

static inline uint64_t fnv1a(const uint8_t *s, int32_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (int32_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

/* the hash of a value to intern (longer than 12 bytes), eight bytes at a step: a byte
 * at a time (FNV-1a) it took ~4% of a scan. Only the intern tables use it. */
static inline uint64_t intern_hash(const uint8_t *s, int32_t n) {
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL, w;
    for (int32_t i = 0; i + 8 < n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    memcpy(&w, s + n - 8, 8); /* the last eight bytes (n > 8) */
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

static inline void bit_set(uint8_t *bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

/* ---- JSON scanning ----------------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
    int canon; /* inside a value whose text must equal orjson's output */
} Cur;

typedef struct {
    const uint8_t *s; /* whole JSON text of the value (strings with their quotes) */
    int32_t n;
    uint8_t type;    /* 0 absent, '"' string, '{', '[', 't', 'f', 'n', 'i' integer, 'd' float */
    uint8_t escaped; /* a string with backslash escapes: its value needs decoding */
} Slot;

enum {
    S_TS, S_DIR, S_SESSION, S_MSG, S_RAW, S_SERVER, S_TRANSPORT,
    S_HTTP, S_H_METHOD, S_H_STATUS, S_H_HEADERS,
    S_ID, S_METHOD, S_PARAMS, S_ERROR, S_RESULT,
    S_P_NAME, S_P_URI, S_P_REF, S_P_META, S_P_PV, S_P_TOKEN, S_P_REQID,
    S_REF_NAME, S_REF_URI, S_META_TOKEN, S_META_PV,
    S_E_CODE, S_E_MESSAGE,
    S_R_TYPE, S_R_ISERROR, S_R_PV, S_R_SERVERINFO, S_R_CAPS,
    NSLOTS
};

typedef struct Want {
    const char *key;
    int klen;
    int slot;
    const struct Want *sub; /* members wanted from the value, when it is an object */
    int nsub;
    int canon; /* the value's text is kept as a column: it must be canonical */
} Want;

#define W(k, s) {k, (int)sizeof(k) - 1, s, NULL, 0, 0}
#define WC(k, s) {k, (int)sizeof(k) - 1, s, NULL, 0, 1}
#define WS(k, s, sub) {k, (int)sizeof(k) - 1, s, sub, (int)(sizeof(sub) / sizeof(sub[0])), 0}
#define WSC(k, s, sub) {k, (int)sizeof(k) - 1, s, sub, (int)(sizeof(sub) / sizeof(sub[0])), 1}

static const Want REF_WANTS[] = {W("name", S_REF_NAME), W("uri", S_REF_URI)};
static const Want META_WANTS[] = {
    WC("progressToken", S_META_TOKEN),
    W("io.modelcontextprotocol/protocolVersion", S_META_PV),
};
static const Want PARAMS_WANTS[] = {
    W("name", S_P_NAME),          W("uri", S_P_URI),
    WS("ref", S_P_REF, REF_WANTS), WS("_meta", S_P_META, META_WANTS),
    W("protocolVersion", S_P_PV), WC("progressToken", S_P_TOKEN),
    WC("requestId", S_P_REQID),
};
static const Want ERROR_WANTS[] = {WC("code", S_E_CODE), W("message", S_E_MESSAGE)};
static const Want RESULT_WANTS[] = {
    W("resultType", S_R_TYPE),          W("isError", S_R_ISERROR),
    W("protocolVersion", S_R_PV),       W("serverInfo", S_R_SERVERINFO),
    W("capabilities", S_R_CAPS),
};
static const Want MSG_WANTS[] = {
    WC("id", S_ID),
    W("method", S_METHOD),
    WS("params", S_PARAMS, PARAMS_WANTS),
    WS("error", S_ERROR, ERROR_WANTS),
    WS("result", S_RESULT, RESULT_WANTS),
};
/* the HTTP exchange of a Streamable HTTP capture line: its headers are kept as text,
 * which must then be what orjson.dumps writes; a status is an int64 only when its
 * text is canonical (no exponent, at most 18 digits) */
static const Want HTTP_WANTS[] = {
    W("method", S_H_METHOD), WC("status", S_H_STATUS), WC("headers", S_H_HEADERS),
};
static const Want ENV_WANTS[] = {
    W("ts", S_TS),         W("dir", S_DIR),          W("session", S_SESSION),
    WSC("msg", S_MSG, MSG_WANTS), W("raw", S_RAW),    W("server", S_SERVER),
    W("transport", S_TRANSPORT), WS("http", S_HTTP, HTTP_WANTS),
};
#define NWANTS(a) ((int)(sizeof(a) / sizeof(a[0])))

#define MAX_DEPTH 200 /* deeper documents take the Python path (orjson's own limit is 1024) */
#define MAX_KEYS 32   /* objects with more members take the Python path (duplicate check) */

static int scan_value(Cur *c, int depth, const Want *wants, int nwants, Slot *slots, Slot *out);

/* A line's text is scanned up to the end of its chunk, not of the line (so that the
 * line's end need not be searched for first): a newline, where a value would go on,
 * ends the line inside the value. No other token takes a newline: strings stop at
 * control characters, numbers and literals at anything else. */
static inline int skip_ws(Cur *c) {
    while (c->p < c->end) {
        uint8_t ch = *c->p;
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            if (c->canon) return -1; /* orjson writes no whitespace */
            c->p++;
        } else if (ch == '\n') {
            return -1;
        } else {
            break;
        }
    }
    return 0;
}

/* length of one valid UTF-8 sequence of 2..4 bytes at p, or 0 */
static inline int utf8_seq(const uint8_t *p, const uint8_t *end) {
    uint8_t b0 = p[0];
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        return (end - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (end - p < 3) return 0;
        uint8_t b1 = p[1];
        if (b0 == 0xE0) {
            if (b1 < 0xA0 || b1 > 0xBF) return 0;
        } else if (b0 == 0xED) {
            if (b1 < 0x80 || b1 > 0x9F) return 0; /* UTF-16 surrogates */
        } else if ((b1 & 0xC0) != 0x80) {
            return 0;
        }
        return (p[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (end - p < 4) return 0;
        uint8_t b1 = p[1];
        if (b0 == 0xF0) {
            if (b1 < 0x90 || b1 > 0xBF) return 0;
        } else if (b0 == 0xF4) {
            if (b1 < 0x80 || b1 > 0x8F) return 0;
        } else if ((b1 & 0xC0) != 0x80) {
            return 0;
        }
        return ((p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) ? 4 : 0;
    }
    return 0;
}

static inline int hexval(uint8_t ch, int *upper) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') {
        *upper = 1;
        return ch - 'A' + 10;
    }
    return -1;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
/* whether any of the eight bytes in v is a quote, a backslash, a control character
 * or not ASCII (the bytes a string scan must stop at) */
static inline uint64_t swar_special(uint64_t v) {
    uint64_t q = v ^ (ONES * '"');
    uint64_t b = v ^ (ONES * '\\');
    uint64_t has_quote = (q - ONES) & ~q;
    uint64_t has_backslash = (b - ONES) & ~b;
    uint64_t below_space = v - ONES * 0x20; /* high bit set where a byte < 0x20 (or >= 0xA0) */
    return (has_quote | has_backslash | below_space | v) & HIGHS;
}

static int scan_string(Cur *c, Slot *out) {
    const uint8_t *start = c->p;
    const uint8_t *p = c->p + 1, *end = c->end;
    int escaped = 0;
    for (;;) {
        /* fast skip of plain ASCII, sixteen (SSE2) or eight bytes at a time, then byte
         * by byte: string text is most of a capture's bytes */
#ifdef __SSE2__
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            /* a signed compare: bytes >= 0x80 count as negative, so as below 0x20 */
            __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
            __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
            __m128i stop = _mm_or_si128(_mm_or_si128(quote, backslash),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            int mask = _mm_movemask_epi8(stop);
            if (mask) {
                /* p is at the byte to stop at: the loops below would only find it again */
                p += __builtin_ctz((unsigned)mask);
                goto stopped;
            }
            p += 16;
        }
#endif
        while (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            if (swar_special(v)) break;
            p += 8;
        }
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p >= end) return -1;
#ifdef __SSE2__
    stopped:;
#endif
        uint8_t ch = *p;
        if (ch == '"') {
            p++;
            break;
        }
        if (ch == '\\') {
            escaped = 1;
            if (p + 1 >= end) return -1;
            uint8_t e = p[1];
            if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p += 2;
            } else if (e == '/') {
                if (c->canon) return -1;
                p += 2;
            } else if (e == 'u') {
                if (end - p < 6) return -1;
                int upper = 0, v = 0;
                for (int i = 2; i < 6; i++) {
                    int h = hexval(p[i], &upper);
                    if (h < 0) return -1;
                    v = v * 16 + h;
                }
                if (v >= 0xD800 && v <= 0xDFFF) return -1; /* surrogates: orjson decides */
                if (c->canon && (upper || v >= 0x20 || v == 0x08 || v == 0x09 || v == 0x0A ||
                                 v == 0x0C || v == 0x0D))
                    return -1; /* orjson writes these differently */
                p += 6;
            } else {
                return -1;
            }
            continue;
        }
        if (ch < 0x20) return -1;
        int n = utf8_seq(p, end);
        if (!n) return -1;
        p += n;
    }
    c->p = p;
    if (out) {
        out->s = start;
        out->n = (int32_t)(p - start);
        out->type = '"';
        out->escaped = (uint8_t)escaped;
    }
    return 0;
}

static inline int is_digit(uint8_t ch) { return ch >= '0' && ch <= '9'; }

static int scan_number(Cur *c, Slot *out) {
    const uint8_t *p = c->p, *end = c->end, *start = c->p;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || !is_digit(*p)) return -1;
    const uint8_t *ip = p;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && is_digit(*p)) p++;
    }
    int idigits = (int)(p - ip);
    const uint8_t *fp = NULL;
    int fdigits = 0, expo = 0;
    if (p < end && *p == '.') {
        p++;
        fp = p;
        while (p < end && is_digit(*p)) p++;
        fdigits = (int)(p - fp);
        if (!fdigits) return -1;
    }
    long exponent = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        const uint8_t *ep = p;
        while (p < end && is_digit(*p)) {
            if (exponent < 100000) exponent = exponent * 10 + (*p - '0');
            p++;
        }
        if (p == ep) return -1;
        if (eneg) exponent = -exponent;
        expo = 1;
    }
    /* orjson refuses a number that overflows a double ("number is infinity"): a number
     * that may come near that range is left to the Python path, which reports it */
    if ((*ip == '0' ? 0 : idigits) + exponent > 300) return -1;
    if (c->canon) {
        if (expo) return -1;
        if (!fp) {
            if (idigits > 18) return -1;               /* may not be an int64 */
            if (neg && idigits == 1 && *ip == '0') return -1; /* -0 reads as 0 */
        } else {
            /* a float whose shortest round-trip form is this very text: <= 15 significant
             * digits, plain notation well inside the range orjson prints plainly */
            if (idigits > 15) return -1;
            if (fdigits > 1 && fp[fdigits - 1] == '0') return -1;
            int sig;
            if (*ip == '0') {
                int z = 0;
                while (z < fdigits && fp[z] == '0') z++;
                if (z == fdigits) {
                    sig = 1; /* 0.0 */
                } else {
                    if (z > 3) return -1;
                    sig = fdigits - z;
                }
            } else {
                sig = idigits + fdigits;
            }
            if (sig > 15) return -1;
        }
    }
    c->p = p;
    if (out) {
        out->s = start;
        out->n = (int32_t)(p - start);
        out->type = (!fp && !expo) ? 'i' : 'd';
        out->escaped = 0;
    }
    return 0;
}

static int scan_literal(Cur *c, const char *word, int n, uint8_t type, Slot *out) {
    if (c->end - c->p < n || memcmp(c->p, word, (size_t)n) != 0) return -1;
    if (out) {
        out->s = c->p;
        out->n = n;
        out->type = type;
        out->escaped = 0;
    }
    c->p += n;
    return 0;
}

/* memcmp(a, b, n) == 0 inlined for the short keys of objects: a call to libc's memcmp
 * per member (the duplicate check and the wanted names) cost more than the compare.
 * Every load stays within the n bytes. */
static inline int same_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
    uint64_t x, y;
    uint32_t u, v;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y) return 0;
        }
        memcpy(&x, a + n - 8, 8); /* the last eight bytes */
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        memcpy(&u, a, 4);
        memcpy(&v, b, 4);
        if (u != v) return 0;
        memcpy(&u, a + n - 4, 4);
        memcpy(&v, b + n - 4, 4);
        return u == v;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* after a member or element: 1 when a comma announces another, 0 at `close`, -1 otherwise */
static inline int next_item(Cur *c, uint8_t close) {
    if (skip_ws(c) || c->p >= c->end) return -1;
    if (*c->p == ',') {
        c->p++;
        return skip_ws(c) ? -1 : 1;
    }
    if (*c->p == close) {
        c->p++;
        return 0;
    }
    return -1;
}

/* an object; members named in `wants` are recorded in `slots` (and their objects
 * scanned with their own wants); `strict` makes any other member a reason to decline */
static int scan_object(Cur *c, int depth, const Want *wants, int nwants, Slot *slots, int strict) {
    /* the keys seen, for the duplicate check: kept as their two fields, not as Slots (a
     * Slot that scan_string has just written field by field, copied whole, is read
     * back in one load that cannot be served from those stores, and stalls) */
    const uint8_t *key_s[MAX_KEYS];
    int32_t key_n[MAX_KEYS];
    int nkeys = 0;
    c->p++; /* '{' */
    if (skip_ws(c)) return -1;
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 0;
    }
    for (;;) {
        if (c->p >= c->end || *c->p != '"') return -1;
        Slot key;
        if (scan_string(c, &key)) return -1;
        if (nkeys == MAX_KEYS) return -1;
        for (int i = 0; i < nkeys; i++) {
            if (key_n[i] == key.n && same_bytes(key_s[i], key.s, (size_t)key.n))
                return -1; /* duplicate member: orjson keeps the last */
        }
        key_s[nkeys] = key.s;
        key_n[nkeys++] = key.n;
        if (skip_ws(c)) return -1;
        if (c->p >= c->end || *c->p != ':') return -1;
        c->p++;
        if (skip_ws(c)) return -1;
        /* outside canonical text one member could be spelt two ways ("id", "i\u0064"):
         * the duplicate check and the wanted names compare raw bytes, so decline */
        if (key.escaped && !c->canon) return -1;
        const Want *want = NULL;
        if (!key.escaped) {
            for (int i = 0; i < nwants; i++) {
                const char *k = wants[i].key;
                if (key.n - 2 == wants[i].klen &&
                    same_bytes(key.s + 1, (const uint8_t *)k, (size_t)wants[i].klen)) {
                    want = &wants[i];
                    break;
                }
            }
        }
        if (want) {
            int saved = c->canon;
            if (want->canon) c->canon = 1;
            int rc = scan_value(c, depth + 1, want->sub, want->nsub, slots, &slots[want->slot]);
            c->canon = saved;
            if (rc) return -1;
        } else {
            if (strict) return -1;
            if (scan_value(c, depth + 1, NULL, 0, slots, NULL)) return -1;
        }
        int more = next_item(c, '}');
        if (more <= 0) return more;
    }
}

static int scan_array(Cur *c, int depth, Slot *slots) {
    c->p++; /* '[' */
    if (skip_ws(c)) return -1;
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 0;
    }
    for (;;) {
        if (scan_value(c, depth + 1, NULL, 0, slots, NULL)) return -1;
        int more = next_item(c, ']');
        if (more <= 0) return more;
    }
}

static int scan_value(Cur *c, int depth, const Want *wants, int nwants, Slot *slots, Slot *out) {
    if (depth > MAX_DEPTH || c->p >= c->end) return -1;
    const uint8_t *start = c->p;
    switch (*c->p) {
    case '{':
        if (scan_object(c, depth, wants, nwants, slots, 0)) return -1;
        break;
    case '[':
        if (scan_array(c, depth, slots)) return -1;
        break;
    case '"':
        return scan_string(c, out);
    case 't':
        return scan_literal(c, "true", 4, 't', out);
    case 'f':
        return scan_literal(c, "false", 5, 'f', out);
    case 'n':
        return scan_literal(c, "null", 4, 'n', out);
    default:
        if (*c->p == '-' || is_digit(*c->p)) return scan_number(c, out);
        return -1;
    }
    if (out) {
        out->s = start;
        out->n = (int32_t)(c->p - start);
        out->type = *start;
        out->escaped = 0;
    }
    return 0;
}

/* ---- RFC 3339 times ---------------------------------------------------------- */

static inline int two_digits(const uint8_t *p) {
    if (!is_digit(p[0]) || !is_digit(p[1])) return -1;
    return (p[0] - '0') * 10 + (p[1] - '0');
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Microseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.f{1,6}](Z|+HH:MM|-HH:MM)`; -1 for
 * any other text, which Polars then parses (so both paths agree on every time). */
static int parse_time_us(const uint8_t *s, int32_t n, int64_t *out) {
    if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
        return -1;
    int hi = two_digits(s), lo = two_digits(s + 2);
    int month = two_digits(s + 5), day = two_digits(s + 8);
    int hour = two_digits(s + 11), minute = two_digits(s + 14), second = two_digits(s + 17);
    if (hi < 0 || lo < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
        minute < 0 || minute > 59 || second < 0 || second > 59)
        return -1;
    int year = hi * 100 + lo;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (year < 1 || day > mdays[month - 1] + (month == 2 && leap)) return -1;
    int i = 19;
    int64_t frac = 0;
    if (s[i] == '.') {
        int digits = 0;
        i++;
        while (i < n && is_digit(s[i])) {
            if (++digits > 6) return -1; /* finer than microseconds: Polars decides */
            frac = frac * 10 + (s[i] - '0');
            i++;
        }
        if (!digits) return -1;
        for (; digits < 6; digits++) frac *= 10;
    }
    int64_t offset = 0;
    if (i == n - 1 && s[i] == 'Z') {
        offset = 0;
    } else if (i == n - 6 && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh = two_digits(s + i + 1), om = two_digits(s + i + 4);
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return -1;
        offset = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    } else {
        return -1;
    }
    int64_t secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
    *out = (secs - offset) * 1000000 + frac;
    return 0;
}

/* ---- one line -> one row ------------------------------------------------------ */

typedef struct {
    const uint8_t *s;
    int32_t n;
} Str;

typedef struct {
    Str v[NCOLS]; /* view columns; s == NULL means null */
    uint8_t code[NCOLS]; /* T_CODE columns; 0 means null */
    int64_t ts_us;
    int8_t has_ts_us;
    int64_t error_code;
    int8_t has_error_code, error_code_is_int, tool_error; /* -1 null */
    int64_t http_status;
    int8_t has_http_status;
} Row;

static inline int str_eq(const Slot *s, const char *lit) {
    size_t n = strlen(lit);
    return s->type == '"' && (size_t)(s->n - 2) == n && memcmp(s->s + 1, lit, n) == 0;
}

/* the decoded value of a string slot as a view; -1 when it would need unescaping */
static inline int str_value(const Slot *s, Str *out) {
    if (s->escaped) return -1;
    out->s = s->s + 1;
    out->n = s->n - 2;
    return 0;
}

static inline Str json_text(const Slot *s) { return (Str){s->s, s->n}; }

static int parse_int64(const Slot *s, int64_t *out) {
    const uint8_t *p = s->s, *end = s->s + s->n;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    int64_t v = 0;
    for (; p < end; p++) v = v * 10 + (*p - '0'); /* <= 18 digits: no overflow */
    *out = neg ? -v : v;
    return 0;
}

/* The JSON-RPC columns, exactly as mcptrace.loaders.rows.rpc_fields derives them
 * from the parsed message; -1 where the Python path must decide (invalid messages,
 * values that need unescaping, rare shapes). */
static int rpc_row(const Slot *sl, Row *row) {
    const Slot *id = &sl[S_ID];
    if (id->type) {
        row->v[C_ID] = json_text(id);
        uint8_t t;
        switch (id->type) {
        case 'i': t = ID_INTEGER; break;
        case 'd': t = ID_NUMBER; break;
        case '"': t = ID_STRING; break;
        case 'n': t = ID_NULL; break;
        case 't': case 'f': t = ID_BOOLEAN; break;
        case '{': t = ID_OBJECT; break;
        default: t = ID_ARRAY; break;
        }
        row->code[C_ID_TYPE] = t;
    }
    const Slot *method = &sl[S_METHOD];
    if (method->type && method->type != 'n') {
        if (method->type != '"') return -1;
        if (str_value(method, &row->v[C_METHOD])) return -1;
        row->code[C_KIND] = id->type ? KIND_REQUEST : KIND_NOTIFICATION;
        if (sl[S_PARAMS].type == '{') {
            const Slot *target = NULL;
            if (str_eq(method, "tools/call") || str_eq(method, "prompts/get")) {
                target = &sl[S_P_NAME];
            } else if (str_eq(method, "resources/read") || str_eq(method, "resources/subscribe") ||
                       str_eq(method, "resources/unsubscribe") ||
                       str_eq(method, "notifications/resources/updated")) {
                target = &sl[S_P_URI];
            } else if (str_eq(method, "completion/complete") && sl[S_P_REF].type == '{') {
                /* Python: ref.get("name") or ref.get("uri") */
                const Slot *name = &sl[S_REF_NAME];
                if (name->type == '"' && name->n > 2) {
                    target = name;
                } else if (name->type == 0 || name->type == 'n' || name->type == 'f' ||
                           name->type == '"') {
                    target = &sl[S_REF_URI];
                } else {
                    return -1; /* truthiness of other values: leave to Python */
                }
            }
            if (target && target->type == '"' && str_value(target, &row->v[C_TARGET])) return -1;
            if (sl[S_P_META].type == '{') {
                if (sl[S_META_TOKEN].type) row->v[C_PROGRESS_TOKEN] = json_text(&sl[S_META_TOKEN]);
                if (sl[S_META_PV].type == '"' && str_value(&sl[S_META_PV], &row->v[C_PROTOCOL_VERSION]))
                    return -1;
            }
            if (str_eq(method, "initialize")) {
                if (sl[S_P_PV].type == '"' && str_value(&sl[S_P_PV], &row->v[C_PROTOCOL_VERSION]))
                    return -1;
            } else if (str_eq(method, "notifications/progress")) {
                if (sl[S_P_TOKEN].type) row->v[C_PROGRESS_TOKEN] = json_text(&sl[S_P_TOKEN]);
            } else if (str_eq(method, "notifications/cancelled")) {
                if (sl[S_P_REQID].type) row->v[C_CANCEL_ID] = json_text(&sl[S_P_REQID]);
            }
        }
        return 0;
    }
    if (sl[S_ERROR].type) {
        row->code[C_KIND] = KIND_ERROR;
        row->error_code_is_int = 0;
        if (sl[S_ERROR].type == '{') {
            const Slot *code = &sl[S_E_CODE];
            if (code->type == 'i') {
                parse_int64(code, &row->error_code);
                row->has_error_code = 1;
                row->error_code_is_int = 1;
            } else if (code->type == 'd') {
                return -1; /* an integral float code: Python's rule */
            }
            if (sl[S_E_MESSAGE].type == '"' && str_value(&sl[S_E_MESSAGE], &row->v[C_ERROR_MESSAGE]))
                return -1;
        }
        return 0;
    }
    if (sl[S_RESULT].type) {
        row->code[C_KIND] = KIND_RESPONSE;
        if (sl[S_RESULT].type == '{') {
            if (sl[S_R_TYPE].type == '"' && str_value(&sl[S_R_TYPE], &row->v[C_RESULT_TYPE])) return -1;
            if (sl[S_R_ISERROR].type == 't') row->tool_error = 1;
            if (sl[S_R_PV].type == '"' && (sl[S_R_SERVERINFO].type || sl[S_R_CAPS].type) &&
                str_value(&sl[S_R_PV], &row->v[C_PROTOCOL_VERSION]))
                return -1;
        }
        return 0;
    }
    return -1; /* not a JSON-RPC message: the Python path words the problem */
}

enum { MODE_CAPTURE = 0, MODE_STDIO = 1 };

/* The line starting at ls, in text that goes on to `end` (the chunk's end, or the
 * line's newline and beyond). 0: row filled, *eol set to the line's newline (or `end`,
 * the last line having none); -1: the line takes the Python path. */
static int scan_line(const uint8_t *ls, const uint8_t *end, int mode, Row *row,
                     const uint8_t **eol) {
    /* only what says "absent" is cleared: a slot's type (the rest of it is written with
     * it), a view's pointer, a value's flag. Clearing all of both (~1 KB a line, with
     * `rep stos`) took 1-2% of a scan. */
    Slot slots[NSLOTS];
    for (int i = 0; i < NSLOTS; i++) slots[i].type = 0;
    for (int i = 0; i < NCOLS; i++) row->v[i].s = NULL;
    memset(row->code, 0, sizeof(row->code));
    row->has_ts_us = 0;
    row->has_error_code = 0;
    row->error_code_is_int = -1;
    row->tool_error = -1;
    row->has_http_status = 0;
    Cur c = {ls, end, 0};
    if (skip_ws(&c)) return -1;
    if (c.p >= c.end || *c.p != '{') return -1;
    if (mode == MODE_CAPTURE) {
        if (scan_object(&c, 0, ENV_WANTS, NWANTS(ENV_WANTS), slots, 1)) return -1;
    } else {
        if (scan_object(&c, 0, MSG_WANTS, NWANTS(MSG_WANTS), slots, 0)) return -1;
    }
    /* nothing but blanks after the value, up to the line's end */
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t' || *c.p == '\r')) c.p++;
    if (c.p < c.end && *c.p != '\n') return -1;
    *eol = c.p;
    /* the line's text, as split_lines cuts it: without its newline, nor a CR before it */
    const uint8_t *le = c.p[-1] == '\r' ? c.p - 1 : c.p;
    row->v[C_RAW] = (Str){ls, (int32_t)(le - ls)};
    if (mode == MODE_STDIO) {
        row->v[C_MESSAGE] = row->v[C_RAW];
        row->code[C_DIRECTION] = DIR_UNKNOWN;
        return rpc_row(slots, row);
    }
    /* capture envelope: the cases capture.parse_chunk's hot path takes */
    const Slot *msg = &slots[S_MSG];
    if (msg->type != '{' || slots[S_RAW].type) return -1;
    /* the message was scanned in canonical mode, so its text is orjson.dumps(msg) */
    row->v[C_MESSAGE] = json_text(msg);
    if (str_eq(&slots[S_DIR], "c2s") && !slots[S_DIR].escaped) {
        row->code[C_DIRECTION] = DIR_C2S;
    } else if (str_eq(&slots[S_DIR], "s2c") && !slots[S_DIR].escaped) {
        row->code[C_DIRECTION] = DIR_S2C;
    } else {
        return -1;
    }
    const int text_slots[2] = {S_TS, S_SESSION};
    const int text_cols[2] = {C_TS_TEXT, C_SESSION};
    for (int i = 0; i < 2; i++) {
        const Slot *s = &slots[text_slots[i]];
        if (s->type == '"') {
            if (str_value(s, &row->v[text_cols[i]])) return -1;
        } else if (s->type && s->type != 'n') {
            return -1;
        }
    }
    const Slot *server = &slots[S_SERVER];
    if (server->type == '"' && str_value(server, &row->v[C_SERVER])) return -1;
    const Slot *transport = &slots[S_TRANSPORT];
    if (transport->type == '"') {
        if (transport->escaped) return -1;
        if (str_eq(transport, "stdio")) row->code[C_TRANSPORT] = TRANSPORT_STDIO;
        else if (str_eq(transport, "http")) row->code[C_TRANSPORT] = TRANSPORT_HTTP;
    }
    /* as capture._envelope reads `http`: only an object counts, and each member only
     * when of its type (a string method, an integer status, an object of headers) */
    if (slots[S_HTTP].type == '{') {
        const Slot *method = &slots[S_H_METHOD];
        if (method->type == '"' && str_value(method, &row->v[C_HTTP_METHOD])) return -1;
        if (slots[S_H_STATUS].type == 'i') {
            parse_int64(&slots[S_H_STATUS], &row->http_status);
            row->has_http_status = 1;
        }
        if (slots[S_H_HEADERS].type == '{') row->v[C_HTTP_HEADERS] = json_text(&slots[S_H_HEADERS]);
        if (!row->code[C_TRANSPORT]) row->code[C_TRANSPORT] = TRANSPORT_HTTP;
    }
    return rpc_row(slots, row);
}

/* ---- the scan result: columns waiting to be exported ------------------------ */

typedef struct {
    PyObject_HEAD
    int64_t rows;
    int64_t lines;
    Col cols[NCOLS];
    Shared *shared;
    uint64_t exported; /* bit i: column i handed to Arrow */
} ColumnsObject;

static inline int shares_chunk(int col) { return col == C_MESSAGE || col == C_RAW; }

static void free_cols(Col *cols) {
    for (int i = 0; i < NCOLS; i++) {
        buf_free(cols[i].values);
        buf_free(cols[i].validity);
        buf_free(cols[i].data);
        free(cols[i].interned);
        cols[i].interned = NULL;
        cols[i].values = NULL;
        cols[i].validity = NULL;
        cols[i].data = NULL;
    }
}

static void Columns_dealloc(ColumnsObject *self) {
    free_cols(self->cols);
    shared_decref(self->shared);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* private data of one exported column */
typedef struct {
    Shared *shared;
    void *values;
    uint8_t *validity;
    uint8_t *data;
    const void *buffers[4];
    int64_t variadic_sizes[1];
} ColPrivate;

static void release_col_array(struct ArrowArray *a) {
    if (!a->release) return;
    ColPrivate *pd = (ColPrivate *)a->private_data;
    buf_free(pd->values);
    buf_free(pd->validity);
    buf_free(pd->data);
    shared_decref(pd->shared);
    free(pd);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s) {
    if (!s->release) return;
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema *ch = s->children[i];
        if (ch->release) ch->release(ch);
        free(ch);
    }
    free(s->children);
    s->release = NULL;
}

static void schema_capsule_destructor(PyObject *cap) {
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
    if (s) {
        if (s->release) s->release(s);
        free(s);
    }
}

static void array_capsule_destructor(PyObject *cap) {
    struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
    if (a) {
        if (a->release) a->release(a);
        free(a);
    }
}

/* the PyCapsules that hand an exported (schema, array) pair to Polars: 0, or -1 with
 * both released and an exception set */
static int wrap_capsules(struct ArrowSchema *cs, struct ArrowArray *ca, PyObject **sc,
                         PyObject **ac) {
    *sc = PyCapsule_New(cs, "arrow_schema", schema_capsule_destructor);
    if (!*sc) {
        cs->release(cs);
        free(cs);
        ca->release(ca);
        free(ca);
        return -1;
    }
    *ac = PyCapsule_New(ca, "arrow_array", array_capsule_destructor);
    if (!*ac) {
        Py_CLEAR(*sc);
        ca->release(ca);
        free(ca);
        return -1;
    }
    return 0;
}

static const char *format_of(int type) {
    switch (type) {
    case T_INT64: return "l";
    case T_BOOL: return "b";
    case T_CODE: return "C";
    default: return "vu";
    }
}

/* Column i as a (schema, array) pair of Arrow PyCapsules, once. Columns are exported
 * one by one, not as one struct array, so that each is released on its own when
 * Polars drops it: an imported struct keeps all its children alive together. */
static PyObject *Columns_column(ColumnsObject *self, PyObject *arg) {
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= NCOLS) {
        PyErr_SetString(PyExc_IndexError, "no such column");
        return NULL;
    }
    if (self->exported & (1ULL << i)) {
        PyErr_SetString(PyExc_RuntimeError, "column was already exported");
        return NULL;
    }
    struct ArrowSchema *cs = calloc(1, sizeof(*cs));
    struct ArrowArray *ca = calloc(1, sizeof(*ca));
    ColPrivate *pd = calloc(1, sizeof(*pd));
    if (!cs || !ca || !pd) {
        free(cs);
        free(ca);
        free(pd);
        return PyErr_NoMemory();
    }
    cs->format = format_of(COL_TYPES[i]);
    cs->name = COL_NAMES[i];
    cs->flags = ARROW_FLAG_NULLABLE;
    cs->release = release_schema;

    Col *col = &self->cols[i];
    ca->private_data = pd;
    pd->values = col->values;
    pd->validity = col->nulls ? col->validity : NULL;
    if (!col->nulls) buf_free(col->validity);
    col->values = NULL;
    col->validity = NULL;
    ca->length = self->rows;
    ca->null_count = col->nulls;
    ca->buffers = pd->buffers;
    pd->buffers[0] = pd->validity;
    pd->buffers[1] = pd->values;
    if (COL_TYPES[i] == T_VIEW && shares_chunk((int)i)) {
        atomic_fetch_add(&self->shared->refs, 1);
        pd->shared = self->shared;
        pd->buffers[2] = self->shared->data;
        pd->variadic_sizes[0] = self->shared->size;
        pd->buffers[3] = pd->variadic_sizes;
        ca->n_buffers = 4;
    } else if (COL_TYPES[i] == T_VIEW) {
        free(col->interned);
        col->interned = NULL;
        pd->data = col->data; /* allocated by alloc_cols, never NULL */
        col->data = NULL;
        pd->buffers[2] = pd->data;
        pd->variadic_sizes[0] = col->data_len;
        pd->buffers[3] = pd->variadic_sizes;
        ca->n_buffers = 4;
    } else {
        ca->n_buffers = 2;
    }
    ca->release = release_col_array;
    self->exported |= 1ULL << i;

    PyObject *sc, *ac;
    if (wrap_capsules(cs, ca, &sc, &ac)) return NULL;
    return Py_BuildValue("(sNN)", COL_NAMES[i], sc, ac);
}

/* ---- whole numbers between bytes and Arrow arrays ---------------------------------
 * The lint in shares keeps a number or two per line of the file (states, session
 * hashes, shares) in Polars columns. These two bring them from the light pass's bytes
 * and back to the bytes the scanner selects lines by, without NumPy, which the lint
 * would otherwise import (~0.04 s, and its BLAS threads then spin on the cores the
 * lint uses). */

PyDoc_STRVAR(numbers_doc,
"numbers(data, width) -> (schema capsule, array capsule): the bytes of `data` as an\n"
"Arrow array of unsigned integers of `width` bytes (1 or 8, this machine's order), copied.");

static PyObject *numbers(PyObject *Py_UNUSED(mod), PyObject *args) {
    Py_buffer buf;
    int width;
    if (!PyArg_ParseTuple(args, "y*i", &buf, &width)) return NULL;
    if ((width != 1 && width != 8) || buf.len % width) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "width must be 1 or 8 and divide the length");
        return NULL;
    }
    struct ArrowSchema *cs = calloc(1, sizeof(*cs));
    struct ArrowArray *ca = calloc(1, sizeof(*ca));
    ColPrivate *pd = calloc(1, sizeof(*pd));
    void *values = buf_alloc((size_t)(buf.len ? buf.len : 1), 0);
    if (!cs || !ca || !pd || !values) {
        free(cs);
        free(ca);
        free(pd);
        buf_free(values);
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    memcpy(values, buf.buf, (size_t)buf.len);
    int64_t n = (int64_t)(buf.len / width);
    PyBuffer_Release(&buf);
    cs->format = width == 1 ? "C" : "L";
    cs->name = "";
    cs->flags = ARROW_FLAG_NULLABLE;
    cs->release = release_schema;
    pd->values = values;
    pd->buffers[0] = NULL;
    pd->buffers[1] = values;
    ca->private_data = pd;
    ca->length = n;
    ca->n_buffers = 2;
    ca->buffers = pd->buffers;
    ca->release = release_col_array;
    PyObject *sc, *ac;
    if (wrap_capsules(cs, ca, &sc, &ac)) return NULL;
    return Py_BuildValue("(NN)", sc, ac);
}

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

PyDoc_STRVAR(bytes_of_doc,
"bytes_of(stream capsule) -> bytes: the values of an Arrow stream of 8-bit unsigned\n"
"integers without nulls (a Polars UInt8 column's __arrow_c_stream__()), a byte each.");

static PyObject *bytes_of(PyObject *Py_UNUSED(mod), PyObject *capsule) {
    struct ArrowArrayStream *stream = PyCapsule_GetPointer(capsule, "arrow_array_stream");
    if (!stream) return NULL;
    if (!stream->release) {
        PyErr_SetString(PyExc_ValueError, "the stream was consumed already");
        return NULL;
    }
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    const char *problem = NULL;
    if (stream->get_schema(stream, &schema) != 0)
        problem = "the stream has no schema";
    else if (strcmp(schema.format, "C") != 0)
        problem = "not a stream of 8-bit unsigned integers";
    if (schema.release) schema.release(&schema);
    PyObject *out = problem ? NULL : PyBytes_FromStringAndSize(NULL, 0);
    while (out) {
        struct ArrowArray array;
        memset(&array, 0, sizeof array);
        if (stream->get_next(stream, &array) != 0) {
            problem = "the stream failed";
            break;
        }
        if (!array.release) break; /* the end */
        if (array.null_count != 0) {
            problem = "the column has nulls";
        } else if (array.length > 0) {
            Py_ssize_t had = PyBytes_GET_SIZE(out);
            if (_PyBytes_Resize(&out, had + (Py_ssize_t)array.length) == 0)
                memcpy(PyBytes_AS_STRING(out) + had,
                       (const uint8_t *)array.buffers[1] + array.offset, (size_t)array.length);
        }
        array.release(&array);
        if (problem) break;
    }
    stream->release(stream);
    if (problem) {
        Py_XDECREF(out);
        PyErr_SetString(PyExc_ValueError, problem);
        return NULL;
    }
    return out;
}

static PyObject *Columns_len(ColumnsObject *self, PyObject *Py_UNUSED(ignored)) {
    return PyLong_FromLongLong((long long)self->rows);
}

static PyMethodDef Columns_methods[] = {
    {"column", (PyCFunction)Columns_column, METH_O,
     "column(i) -> (name, schema capsule, array capsule): export column i (once)."},
    {"rows", (PyCFunction)Columns_len, METH_NOARGS, "Number of rows taken."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ColumnsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mcptrace._scan.Columns",
    .tp_basicsize = sizeof(ColumnsObject),
    .tp_dealloc = (destructor)Columns_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Rows the scanner took, as Arrow columns.",
    .tp_methods = Columns_methods,
};

/* ---- a chunk of a file, read straight into memory the columns can share ----------
 * scan() keeps a copy of the text it is given, because the columns point into it and
 * outlive the caller's buffer. A chunk read with read() is already such a copy: scan()
 * takes it over instead of copying (0.5 GB less to copy and fault in at 10^6 lines). */

typedef struct {
    PyObject_HEAD
    Shared *shared;
    int64_t lines; /* as lines() counts them */
} ChunkObject;

static void Chunk_dealloc(ChunkObject *self) {
    shared_decref(self->shared);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Chunk_getbuffer(ChunkObject *self, Py_buffer *view, int flags) {
    /* read-only: the columns made from it must never see it change */
    return PyBuffer_FillInfo(view, (PyObject *)self, self->shared->data,
                             (Py_ssize_t)self->shared->size, 1, flags);
}

static Py_ssize_t Chunk_length(ChunkObject *self) { return (Py_ssize_t)self->shared->size; }

static PyBufferProcs Chunk_as_buffer = {(getbufferproc)Chunk_getbuffer, NULL};
static PySequenceMethods Chunk_as_sequence = {.sq_length = (lenfunc)Chunk_length};

static PyTypeObject ChunkType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mcptrace._scan.Chunk",
    .tp_basicsize = sizeof(ChunkObject),
    .tp_dealloc = (destructor)Chunk_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Bytes of a file read by read(): a read-only buffer that scan() need not copy.",
    .tp_as_buffer = &Chunk_as_buffer,
    .tp_as_sequence = &Chunk_as_sequence,
};

/* the newlines in p[0..n): with SSE2, sixteen bytes at a time into byte counters
 * summed every 255 steps (a memchr call per line costs more on lines this short) */
static int64_t count_newlines(const uint8_t *p, size_t n) {
    int64_t count = 0;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (n - i >= 16) {
        size_t steps = (n - i) / 16 < 255 ? (n - i) / 16 : 255;
        __m128i counters = zero;
        for (size_t k = 0; k < steps; k++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(v, nl)); /* a match is -1 */
        }
        __m128i sums = _mm_sad_epu8(counters, zero); /* two 16-bit sums */
        count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
    }
#endif
    for (; i < n; i++) count += p[i] == '\n';
    return count;
}

#ifndef _WIN32
#include <errno.h>
#include <unistd.h>

#define READ_BLOCK (1 << 20)

/* the (fd, offset, length) of read() and map(): 0, or -1 with an exception set */
static int file_range_args(PyObject *args, int *fd, long long *offset, long long *length) {
    if (!PyArg_ParseTuple(args, "iLL", fd, offset, length)) return -1;
    if (*offset < 0 || *length < 0 || *length >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "bad offset or length");
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(read_doc,
"read(fd, offset, length) -> Chunk: up to `length` bytes of the open file `fd` from\n"
"`offset` (fewer when the file ends first), as a read-only buffer. Runs without the GIL.");

static PyObject *read_chunk(PyObject *Py_UNUSED(mod), PyObject *args) {
    int fd;
    long long offset, length;
    if (file_range_args(args, &fd, &offset, &length)) return NULL;
    Shared *shared = calloc(1, sizeof(Shared));
    uint8_t *data = buf_alloc_as((size_t)(length ? length : 1), 0, 1);
    if (!shared || !data) {
        free(shared);
        buf_free(data);
        return PyErr_NoMemory();
    }
    int64_t got = 0, newlines = 0;
    int error = 0;
    Py_BEGIN_ALLOW_THREADS
    while (got < length) {
        /* a block at a time, its lines counted while it is still in the cache: scan()
         * and lines() need the count, and a memchr pass of each over the chunk took
         * ~25 ms of CPU at 0.5 GB */
        size_t block = (size_t)(length - got) < READ_BLOCK ? (size_t)(length - got) : READ_BLOCK;
        ssize_t r = pread(fd, data + got, block, (off_t)(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            error = errno;
            break;
        }
        if (r == 0) break; /* the file ends here */
        newlines += count_newlines(data + got, (size_t)r);
        got += r;
    }
    Py_END_ALLOW_THREADS
    if (error) {
        free(shared);
        buf_free(data);
        errno = error;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    atomic_init(&shared->refs, 1);
    shared->data = data;
    shared->size = got;
    ChunkObject *chunk = PyObject_New(ChunkObject, &ChunkType);
    if (!chunk) {
        shared_decref(shared);
        return NULL;
    }
    chunk->shared = shared;
    chunk->lines = newlines + (got && data[got - 1] != '\n'); /* as scan() splits them */
    return (PyObject *)chunk;
}
#endif

/* ---- file text mapped, guarded against a cut file ------------------------------
 * map() maps a range of a capture file where read() would copy it: no copy, and no
 * fresh pages for the kernel to hand out (~0.1 s of kernel time for the 270 MB of a
 * 10^6-message share on the virtual machines we measure on). The risk of a mapping:
 * when the file is cut shorter while its text is still read (a log truncated by its
 * rotation), the kernel sends SIGBUS to the reader, which would kill the process. The
 * handler installed with the first mapping puts a page of zeros where the cut page
 * was, counts the cut (cut_faults()) and lets the reader go on; the caller sees the
 * count change, drops what it read and reads the file anew. A SIGBUS at any other
 * address goes to the handler that was there before (or kills, as by default). Only
 * the lint in shares maps files, for the time a share is loaded and linted: a trace
 * a user keeps must not change when its file does. */
#if defined(__linux__)
#include <signal.h>
#include <sys/stat.h>
#define MAPS_FILES 1
#define GUARDED_MAX 256
static struct {
    _Atomic uintptr_t start, end;
} guarded[GUARDED_MAX];
static pthread_mutex_t guarded_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long cut_count = 0;
static struct sigaction previous_bus;
static int bus_installed = 0;
static uintptr_t page_size = 4096;

static void on_bus(int sig, siginfo_t *info, void *context) {
    uintptr_t at = (uintptr_t)info->si_addr;
    if (info->si_code > 0) { /* a fault, not a kill() */
        for (int i = 0; i < GUARDED_MAX; i++) {
            uintptr_t start = atomic_load(&guarded[i].start);
            if (!start || at < start || at >= atomic_load(&guarded[i].end)) continue;
            void *page = (void *)(at & ~(page_size - 1));
            /* a raw system call, safe in a handler */
            if (mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                MAP_FAILED) {
                atomic_fetch_add(&cut_count, 1);
                return; /* the read is made again, of zeros */
            }
            break;
        }
    }
    if (previous_bus.sa_flags & SA_SIGINFO) {
        if (previous_bus.sa_sigaction) {
            previous_bus.sa_sigaction(sig, info, context);
            return;
        }
    } else if (previous_bus.sa_handler == SIG_IGN) {
        return;
    } else if (previous_bus.sa_handler != SIG_DFL) {
        previous_bus.sa_handler(sig);
        return;
    }
    /* the default: a fault happens again as this returns and kills; a kill() is sent again */
    signal(sig, SIG_DFL);
    if (info->si_code <= 0) raise(sig);
}

/* registers a mapping with the handler (installed the first time): 0, or -1 when it
 * cannot be guarded (the caller reads the file instead) */
static int guard(uint8_t *base, size_t len) {
    int done = -1;
    pthread_mutex_lock(&guarded_lock);
    if (!bus_installed) {
        struct sigaction act;
        memset(&act, 0, sizeof act);
        act.sa_sigaction = on_bus;
        act.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&act.sa_mask);
        long page = sysconf(_SC_PAGESIZE);
        if (page > 0) page_size = (uintptr_t)page;
        if (sigaction(SIGBUS, &act, &previous_bus) == 0) bus_installed = 1;
    }
    for (int i = 0; bus_installed && i < GUARDED_MAX; i++) {
        if (atomic_load(&guarded[i].start)) continue;
        atomic_store(&guarded[i].end, (uintptr_t)(base + len));
        atomic_store(&guarded[i].start, (uintptr_t)base);
        done = 0;
        break;
    }
    pthread_mutex_unlock(&guarded_lock);
    return done;
}

static void unmap_guarded(uint8_t *base, size_t len) {
    pthread_mutex_lock(&guarded_lock);
    for (int i = 0; i < GUARDED_MAX; i++) {
        if (atomic_load(&guarded[i].start) != (uintptr_t)base) continue;
        atomic_store(&guarded[i].start, 0); /* before the range can be mapped again */
        atomic_store(&guarded[i].end, 0);
        break;
    }
    pthread_mutex_unlock(&guarded_lock);
    munmap(base, len);
}

PyDoc_STRVAR(map_doc,
"map(fd, offset, length) -> Chunk | None: read() by mapping the file (read-only,\n"
"private) instead of copying it; None when the mapping cannot be made or guarded.\n"
"A page cut from the file meanwhile reads as zeros and counts in cut_faults().");

static PyObject *map_chunk(PyObject *Py_UNUSED(mod), PyObject *args) {
    int fd;
    long long offset, length;
    if (file_range_args(args, &fd, &offset, &length)) return NULL;
    struct stat info;
    if (fstat(fd, &info) != 0) return PyErr_SetFromErrno(PyExc_OSError);
    /* as read(): fewer bytes when the file ends first */
    if (offset + length > (long long)info.st_size)
        length = (long long)info.st_size > offset ? (long long)info.st_size - offset : 0;
    if (length == 0) Py_RETURN_NONE; /* nothing to map: read() makes the empty chunk */
    long long base = offset - offset % (long long)page_size;
    size_t len = (size_t)(offset - base + length);
    uint8_t *block;
    Py_BEGIN_ALLOW_THREADS
    /* populated: the pages are mapped in one go, not faulted in one by one */
    block = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, (off_t)base);
    Py_END_ALLOW_THREADS
    if (block == MAP_FAILED) Py_RETURN_NONE;
    if (guard(block, len) != 0) {
        munmap(block, len);
        Py_RETURN_NONE;
    }
    Shared *shared = calloc(1, sizeof(Shared));
    ChunkObject *chunk = shared ? PyObject_New(ChunkObject, &ChunkType) : NULL;
    if (!chunk) {
        free(shared);
        unmap_guarded(block, len);
        return PyErr_NoMemory();
    }
    atomic_init(&shared->refs, 1);
    shared->data = block + (offset - base);
    shared->size = length;
    shared->map_base = block;
    shared->map_len = len;
    chunk->shared = shared;
    int64_t newlines;
    Py_BEGIN_ALLOW_THREADS
    newlines = count_newlines(shared->data, (size_t)length);
    Py_END_ALLOW_THREADS
    chunk->lines = newlines + (shared->data[length - 1] != '\n'); /* as scan() splits them */
    return (PyObject *)chunk;
}
#else
static void unmap_guarded(uint8_t *base, size_t len) {
    (void)base;
    (void)len;
}
#endif

PyDoc_STRVAR(cut_faults_doc,
"cut_faults() -> int: how many times a mapped page was found cut from its file (see map).");

static PyObject *cut_faults(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored)) {
#ifdef MAPS_FILES
    return PyLong_FromLong(atomic_load(&cut_count));
#else
    return PyLong_FromLong(0);
#endif
}

/* ---- the entry point ------------------------------------------------------------ */

/* the Chunk from read() whose bytes `buf` is, all of them (given as is or as a
 * memoryview of it), or NULL */
static ChunkObject *chunk_of(const Py_buffer *buf) {
    PyObject *owner =
        buf->obj && PyMemoryView_Check(buf->obj) ? PyMemoryView_GET_BASE(buf->obj) : buf->obj;
    if (!owner || !PyObject_TypeCheck(owner, &ChunkType)) return NULL;
    ChunkObject *chunk = (ChunkObject *)owner;
    return chunk->shared->data == buf->buf && chunk->shared->size == (int64_t)buf->len ? chunk : NULL;
}

typedef struct {
    int64_t line, start, end;
} SlowLine;

static int alloc_cols(Col *cols, int64_t cap) {
    for (int i = 0; i < NCOLS; i++) {
        size_t width = COL_TYPES[i] == T_INT64  ? 8
                       : COL_TYPES[i] == T_VIEW ? sizeof(View)
                       : COL_TYPES[i] == T_CODE ? 1
                                                : 0;
        size_t bitmap = (size_t)(cap / 8 + 1);
        /* zeroed, so that a null is left as it is: a column null on most rows then
         * touches few of its pages */
        /* (kept for the next share as column i's: see keep_freed) */
        cols[i].values = width ? buf_alloc_kind(width * (size_t)(cap ? cap : 1), 1, KIND_COLUMN + (size_t)i)
                               : buf_alloc(bitmap, 1);
        cols[i].validity = buf_alloc(bitmap, 1);
        cols[i].nulls = 0;
        cols[i].data_len = 0;
        cols[i].data_cap = 64;
        cols[i].data = buf_alloc((size_t)cols[i].data_cap, 0);
        cols[i].n_interned = 0;
        cols[i].interned = NULL;
        if (COL_TYPES[i] == T_VIEW && !shares_chunk(i)) {
            /* scratch, freed with the chunk's scan: from the heap, whose pages the next
             * chunk's tables reuse. (Mapped afresh, its probes read the zero page and
             * each first insert then faulted and flushed every core's TLB.) */
            cols[i].interned = calloc(INTERN_SLOTS, sizeof(Interned));
            if (!cols[i].interned) return -1;
        }
        if (!cols[i].values || !cols[i].validity || !cols[i].data) return -1;
    }
    return 0;
}

/* -1 when out of memory. The values buffer is zeroed and each row is put once, so a
 * null view (all zero) and the zero padding of an inline one need no writing. */
static inline int put_view(Col *col, int64_t i, const uint8_t *base, Str s, int shared) {
    if (!s.s) {
        col->nulls++;
        return 0;
    }
    View *v = &((View *)col->values)[i];
    bit_set(col->validity, i);
    v->len = s.n;
    if (s.n <= 12) {
        memcpy(v->u.inl, s.s, (size_t)s.n);
        return 0;
    }
    memcpy(v->u.ref.prefix, s.s, 4);
    v->u.ref.buf = 0;
    if (shared) {
        v->u.ref.off = (int32_t)(s.s - base);
        return 0;
    }
    Interned *slot = NULL;
    uint64_t h = 0;
    if (col->interned) {
        h = intern_hash(s.s, s.n);
        for (uint32_t k = (uint32_t)h & (INTERN_SLOTS - 1);; k = (k + 1) & (INTERN_SLOTS - 1)) {
            Interned *e = &col->interned[k];
            if (!e->len) {
                if (col->n_interned < INTERN_SLOTS / 2) slot = e;
                break;
            }
            if (e->hash == h && e->len == s.n && memcmp(col->data + e->off, s.s, (size_t)s.n) == 0) {
                v->u.ref.off = e->off;
                return 0;
            }
        }
    }
    if (col->data_len + s.n > col->data_cap) {
        int64_t cap = col->data_cap * 2;
        while (cap < col->data_len + s.n) cap *= 2;
        uint8_t *grown = buf_grow(col->data, (size_t)col->data_len, (size_t)cap);
        if (!grown) return -1;
        col->data = grown;
        col->data_cap = cap;
    }
    memcpy(col->data + col->data_len, s.s, (size_t)s.n);
    v->u.ref.off = (int32_t)col->data_len;
    if (slot) {
        slot->hash = h;
        slot->off = (int32_t)col->data_len;
        slot->len = s.n;
        col->n_interned++;
    }
    col->data_len += s.n;
    return 0;
}

static inline void put_bool(Col *col, int64_t i, int8_t value) {
    if (value < 0) {
        col->nulls++;
        return;
    }
    bit_set(col->validity, i);
    if (value) bit_set((uint8_t *)col->values, i);
}

static inline void put_int(Col *col, int64_t i, int64_t value, int present) {
    if (present) {
        ((int64_t *)col->values)[i] = value; /* zeroed where null */
        bit_set(col->validity, i);
    } else {
        col->nulls++;
    }
}

PyDoc_STRVAR(scan_doc,
"scan(data, first_line, mode, select=None, wanted=0) -> (columns, lines, slow)\n\n"
"Scan the lines of `data` (bytes; lines end with \\n, a trailing \\r is dropped).\n"
"mode 0: mcptrace capture envelopes; mode 1: bare JSON-RPC messages (raw stdio).\n"
"`columns` exports the rows taken, column by column (Arrow PyCapsules),\n"
"`lines` counts the lines, `slow` lists (line number, start, end) of the lines\n"
"left to the Python path. With `select` (one byte per line), only the lines whose\n"
"byte is `wanted` are read, the others skipped (still counted), and only their text\n"
"is kept. Runs without the GIL.");

static PyObject *scan(PyObject *Py_UNUSED(mod), PyObject *args) {
    Py_buffer buf, sel;
    long long first_line;
    int mode, wanted = 0;
    PyObject *select = Py_None;
    if (!PyArg_ParseTuple(args, "y*Li|Oi", &buf, &first_line, &mode, &select, &wanted))
        return NULL;
    if (buf.len >= INT32_MAX || (mode != MODE_CAPTURE && mode != MODE_STDIO)) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "chunk too big for 32-bit view offsets, or bad mode");
        return NULL;
    }
    int selecting = select != Py_None;
    if (selecting && PyObject_GetBuffer(select, &sel, PyBUF_SIMPLE)) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    ChunkObject *chunk = chunk_of(&buf);
    const uint8_t *pick = selecting ? (const uint8_t *)sel.buf : NULL;
    int64_t npick = selecting ? (int64_t)sel.len : 0;
    ColumnsObject *cols = PyObject_New(ColumnsObject, &ColumnsType);
    if (!cols) {
        PyBuffer_Release(&buf);
        if (selecting) PyBuffer_Release(&sel);
        return NULL;
    }
    memset(cols->cols, 0, sizeof(cols->cols));
    cols->shared = NULL;
    cols->exported = 0;
    cols->rows = 0;
    cols->lines = 0;

    int failed = 0;
    SlowLine *slow = NULL;
    int64_t nslow = 0;
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *src = (const uint8_t *)buf.buf;
    int64_t size = (int64_t)buf.len;
    /* rows to make room for and bytes to keep: every line (of a whole Chunk, counted
     * as it was read), or the selected ones */
    int64_t cap = 0, keep = 0, index = 0;
    if (!pick && chunk) {
        cap = chunk->lines;
        keep = size;
    } else {
        for (const uint8_t *q = src, *e = src + size; q < e; index++) {
            const uint8_t *nl = memchr(q, '\n', (size_t)(e - q));
            const uint8_t *next = nl ? nl + 1 : e;
            if (!pick || (index < npick && pick[index] == wanted)) {
                cap++;
                keep += next - q;
            }
            q = next;
        }
    }
    /* a whole Chunk is already a copy of its own: its text is shared, not copied */
    Shared *adopted = !pick && chunk ? chunk->shared : NULL;
    Shared *shared = adopted ? adopted : calloc(1, sizeof(Shared));
    uint8_t *copy = adopted ? adopted->data : buf_alloc_as((size_t)(keep ? keep : 1), 0, 1);
    slow = malloc(sizeof(SlowLine) * (size_t)(cap ? cap : 1));
    if (!shared || !copy || !slow || alloc_cols(cols->cols, cap)) {
        failed = 1;
        if (!adopted) {
            free(shared);
            buf_free(copy);
        }
    } else if (adopted) {
        atomic_fetch_add(&adopted->refs, 1);
        cols->shared = adopted;
    } else {
        if (!pick) memcpy(copy, src, (size_t)size);
        atomic_init(&shared->refs, 1);
        shared->data = copy;
        shared->size = keep;
        cols->shared = shared;
    }
    if (!failed) {
        /* lines are read from `src`; the text scanned (and pointed into) is the copy */
        const uint8_t *base = copy, *q = src, *e = src + size;
        uint8_t *kept = copy;
        int64_t line = first_line, n = 0;
        index = 0;
        Row row;
        while (q < e) {
            /* a selected line is copied whole first; any other is scanned in the copy of
             * the chunk up to its end, and its end found by the scan (a memchr for each
             * line cost 4% of a scan) unless the Python path is to read it */
            const uint8_t *nl = NULL, *ls, *stop, *eol;
            if (pick) {
                nl = memchr(q, '\n', (size_t)(e - q));
                const uint8_t *next = nl ? nl + 1 : e;
                if (!(index++ < npick && pick[index - 1] == wanted)) {
                    line++;
                    q = next;
                    continue;
                }
                memcpy(kept, q, (size_t)(next - q));
                ls = kept;
                stop = kept + (next - q);
                kept += next - q;
            } else {
                ls = copy + (q - src);
                stop = copy + size;
            }
            if (scan_line(ls, stop, mode, &row, &eol) == 0) {
                Col *c = cols->cols;
                put_int(&c[C_LINE], n, line, 1);
                if (row.v[C_TS_TEXT].s &&
                    parse_time_us(row.v[C_TS_TEXT].s, row.v[C_TS_TEXT].n, &row.ts_us) == 0) {
                    /* the text of a time read here is not needed: left null, it costs
                     * no copy (each time is a distinct long string) and no page */
                    row.has_ts_us = 1;
                    row.v[C_TS_TEXT].s = NULL;
                }
                put_int(&c[C_TS_US], n, row.ts_us, row.has_ts_us);
                for (int i = 0; i < NCOLS; i++) {
                    if (COL_TYPES[i] == T_VIEW && put_view(&c[i], n, base, row.v[i], shares_chunk(i)))
                        failed = 1;
                    else if (COL_TYPES[i] == T_CODE)
                        ((uint8_t *)c[i].values)[n] = row.code[i]; /* a code, never null */
                }
                if (failed) break;
                put_int(&c[C_ERROR_CODE], n, row.error_code, row.has_error_code);
                put_int(&c[C_HTTP_STATUS], n, row.http_status, row.has_http_status);
                put_bool(&c[C_ERROR_CODE_IS_INT], n, row.error_code_is_int);
                put_bool(&c[C_TOOL_ERROR], n, row.tool_error);
                n++;
                /* the next line starts after this one's newline, where the scan ended */
                q += eol - ls + (eol < stop);
            } else {
                if (!pick) nl = memchr(q, '\n', (size_t)(e - q));
                const uint8_t *le = nl ? nl : e;
                if (le > q && le[-1] == '\r') le--;
                /* positions in `data`, where the Python path reads the line */
                slow[nslow].line = line;
                slow[nslow].start = q - src;
                slow[nslow].end = le - src;
                nslow++;
                q = nl ? nl + 1 : e;
            }
            line++;
        }
        cols->rows = n;
        cols->lines = line - first_line;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (selecting) PyBuffer_Release(&sel);
    if (failed) {
        free(slow);
        Py_DECREF(cols);
        return PyErr_NoMemory();
    }
    PyObject *slow_list = PyList_New((Py_ssize_t)nslow);
    if (!slow_list) {
        free(slow);
        Py_DECREF(cols);
        return NULL;
    }
    for (int64_t i = 0; i < nslow; i++) {
        PyObject *t = Py_BuildValue("(LLL)", (long long)slow[i].line, (long long)slow[i].start,
                                    (long long)slow[i].end);
        if (!t) {
            free(slow);
            Py_DECREF(slow_list);
            Py_DECREF(cols);
            return NULL;
        }
        PyList_SET_ITEM(slow_list, (Py_ssize_t)i, t);
    }
    free(slow);
    return Py_BuildValue("(NLN)", (PyObject *)cols, (long long)cols->lines, slow_list);
}

/* ---- sessions of capture lines, for linting a big capture session by session ----
 * A light pass: it follows the structure of each line (strings, brackets) without
 * validating the values, to find the top-level `session` member. Its answer must be
 * the loader's (the session the row gets before gaps are filled), so it says
 * "unsure" whenever the loader might see the line differently: escapes in the key or
 * value, a session that is not a string or null, no `msg` member, anything that does
 * not look like one object. Python decides those lines; the lines it calls sure but
 * the loader then rejects (bad UTF-8 deep inside, say) are caught after loading. */

enum { SESSION_NONE = 0, SESSION_OWN = 1, SESSION_UNSURE = 2 };

/* after the string opening at p (a quote), or NULL; *escaped when it has a backslash.
 * With SSE2, sixteen bytes at a time: the first quote or backslash of a block is found
 * from its bitmasks (most keys and header values fit in one or two blocks, and a memchr
 * call for each quote and each backslash cost a third of the pass); the rest of a line
 * (under 16 bytes) is read byte by byte */
static const uint8_t *skip_str(const uint8_t *p, const uint8_t *e, int *escaped) {
    p++;
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    while (e - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned quotes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
        unsigned backslashes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash));
        if (!(quotes | backslashes)) {
            p += 16;
            continue;
        }
        /* the lowest of the two: a quote before any backslash ends the string */
        int q = quotes ? __builtin_ctz(quotes) : 16, b = backslashes ? __builtin_ctz(backslashes) : 16;
        if (q < b) return p + q + 1;
        *escaped = 1;
        p += b + 2; /* the escaped byte too */
    }
#endif
    while (p < e) {
        if (*p == '"') return p + 1;
        if (*p == '\\') {
            *escaped = 1;
            p += 2; /* past e when the line ends in the backslash: no end found */
            continue;
        }
        p++;
    }
    return NULL;
}

static inline int is_ws(uint8_t ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; }

/* after the object or array whose bytes from p on are still to read, or NULL: byte by
 * byte, from `depth` brackets deep, inside a string when `in_string`, p escaped when
 * `escaped` (the rest of a line after the 64-byte blocks below) */
static inline const uint8_t *skip_container_bytes(const uint8_t *p, const uint8_t *e, int depth,
                                                  int in_string, int escaped) {
    if (escaped) p++; /* inside a string: an escape never ends one */
    while (p < e) {
        uint8_t ch = *p;
        if (in_string) {
            if (ch == '\\') {
                p += 2; /* the escaped byte too, even past the end */
                continue;
            }
            if (ch == '"') in_string = 0;
        } else if (ch == '"') {
            in_string = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            return p + 1;
        }
        p++;
    }
    return NULL;
}

/* The 64-byte blocks of skip_container: the unescaped quotes of a block give which of
 * its bytes are inside strings, so its brackets are counted without visiting each
 * byte; only where the depth may come back to zero are they walked one by one. This is
 * most of the light pass: the `msg` member is skipped whole (the pass took about a
 * third longer with a byte loop). `bits(p, c)` is the bitmask of the block's bytes
 * equal to c, `bits_folded` the same of the bytes with bit 0x20 set (so that '[' and
 * ']' read as '{' and '}'), `in_string_of(quotes)` the prefix XOR of the quote mask. */
#define SKIP_CONTAINER_BLOCKS(bits, bits_folded, in_string_of, popcount)                    \
    int depth = 0;                                                                          \
    uint64_t in_string = 0;    /* all ones when the block starts inside a string */        \
    uint64_t escape_carry = 0; /* the next block's first byte is escaped */                \
    while (e - p >= 64) {                                                                   \
        /* bytes escaped by a backslash: backslashes are few, so walked one by one. A    \
         * backslash that is itself escaped escapes nothing. Valid JSON has backslashes  \
         * only inside strings; on other lines the pass may misread the structure, which \
         * loading the share then catches (see the comment above SESSION_NONE) */        \
        uint64_t backslashes = bits(p, '\\');                                             \
        uint64_t escaped = escape_carry;                                                    \
        escape_carry = 0;                                                                   \
        for (uint64_t b = backslashes & ~escaped; b;) {                                     \
            int i = __builtin_ctzll(b);                                                     \
            if (i == 63) {                                                                  \
                escape_carry = 1;                                                           \
                break;                                                                      \
            }                                                                               \
            escaped |= 1ULL << (i + 1);                                                     \
            b &= ~(3ULL << i);                                                              \
        }                                                                                   \
        uint64_t inside = in_string_of(bits(p, '"') & ~escaped) ^ in_string;               \
        uint64_t opens = bits_folded(p, '{') & ~inside;                                     \
        uint64_t closes = bits_folded(p, '}') & ~inside;                                    \
        in_string = (uint64_t)0 - (inside >> 63); /* whether the block ends inside one */  \
        int n_closes = closes ? popcount(closes) : 0;                                       \
        if (n_closes && depth - n_closes <= 0) {                                            \
            for (uint64_t m = opens | closes; m; m &= m - 1) {                              \
                int i = __builtin_ctzll(m);                                                 \
                if (opens >> i & 1) {                                                       \
                    depth++;                                                                \
                } else if (--depth == 0) {                                                  \
                    return p + i + 1;                                                       \
                }                                                                           \
            }                                                                               \
        } else {                                                                            \
            depth += (opens ? popcount(opens) : 0) - n_closes;                              \
        }                                                                                   \
        p += 64;                                                                            \
    }                                                                                       \
    return skip_container_bytes(p, e, depth, in_string != 0, escape_carry != 0);

#ifdef __SSE2__
/* bit i set where an odd number of the bits 0..i of x are set: which bytes of a block
 * lie inside a string, from the bitmask of its quotes */
static inline uint64_t prefix_xor64(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* set bits of x; __builtin_popcountll is a libgcc call without -mpopcnt */
static inline int popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

static inline uint64_t mask16(const uint8_t *p, int k, __m128i c) {
    return (uint64_t)(unsigned)_mm_movemask_epi8(
               _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * k)), c))
           << (16 * k);
}

/* the bitmask of the 64 bytes at p equal to c */
static inline uint64_t bits_sse2(const uint8_t *p, uint8_t c) {
    __m128i v = _mm_set1_epi8((char)c);
    return mask16(p, 0, v) | mask16(p, 1, v) | mask16(p, 2, v) | mask16(p, 3, v);
}

static inline uint64_t folded16(const uint8_t *p, int k, __m128i c) {
    __m128i v = _mm_or_si128(_mm_loadu_si128((const __m128i *)(p + 16 * k)), _mm_set1_epi8(0x20));
    return (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, c)) << (16 * k);
}

static inline uint64_t bits_folded_sse2(const uint8_t *p, uint8_t c) {
    __m128i v = _mm_set1_epi8((char)c);
    return folded16(p, 0, v) | folded16(p, 1, v) | folded16(p, 2, v) | folded16(p, 3, v);
}
#endif

/* after the object or array opening at p, or NULL (see SKIP_CONTAINER_BLOCKS) */
static const uint8_t *skip_container(const uint8_t *p, const uint8_t *e) {
#ifdef __SSE2__
    SKIP_CONTAINER_BLOCKS(bits_sse2, bits_folded_sse2, prefix_xor64, popcount64)
#else
    return skip_container_bytes(p, e, 0, 0, 0);
#endif
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(_WIN32)
/* The same with AVX2, on the processors that have it (checked when the module loads;
 * the build targets plain x86-64): a block is two vectors instead of four, the prefix
 * XOR one carry-less multiply and the popcounts one instruction each, which took the
 * light pass from ~0.185 to ~0.17 CPU-s at 10^6 messages. */
#include <immintrin.h>
#define SKIP_AVX2 1
#define AVX2_TARGET __attribute__((target("avx2,pclmul,popcnt")))

AVX2_TARGET static inline uint64_t bits_avx2(const uint8_t *p, uint8_t c) {
    __m256i v = _mm256_set1_epi8((char)c);
    uint64_t lo = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), v));
    uint64_t hi = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), v));
    return lo | hi << 32;
}

AVX2_TARGET static inline uint64_t bits_folded_avx2(const uint8_t *p, uint8_t c) {
    __m256i v = _mm256_set1_epi8((char)c), fold = _mm256_set1_epi8(0x20);
    uint64_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_or_si256(_mm256_loadu_si256((const __m256i *)p), fold), v));
    uint64_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_or_si256(_mm256_loadu_si256((const __m256i *)(p + 32)), fold), v));
    return lo | hi << 32;
}

AVX2_TARGET static inline uint64_t prefix_xor_clmul(uint64_t x) {
    return (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)x), _mm_set1_epi8((char)0xFF), 0));
}

AVX2_TARGET static inline int popcount_hw(uint64_t x) { return __builtin_popcountll(x); }

AVX2_TARGET static const uint8_t *skip_container_avx2(const uint8_t *p, const uint8_t *e) {
    SKIP_CONTAINER_BLOCKS(bits_avx2, bits_folded_avx2, prefix_xor_clmul, popcount_hw)
}
#endif

/* skip_container or its AVX2 twin, chosen when the module loads */
static const uint8_t *(*skip_container_fn)(const uint8_t *, const uint8_t *) = skip_container;

/* after the value at p, or NULL */
static const uint8_t *skip_val(const uint8_t *p, const uint8_t *e) {
    int escaped = 0;
    if (p >= e) return NULL;
    if (*p == '"') return skip_str(p, e, &escaped);
    if (*p == '{' || *p == '[') return skip_container_fn(p, e);
    const uint8_t *start = p;
    while (p < e && *p != ',' && *p != '}' && *p != ']' && !is_ws(*p)) p++;
    return p > start ? p : NULL;
}

/* `quick`: once the session is read, `msg` is not followed through (a third of the
 * pass's time) on a line that looks whole: it has its newline (a line still being
 * written has none yet) and ends in a brace. Its session is then taken to be its
 * last. A line that is not so (it names its session again after `msg`, or it is
 * broken inside `msg`) puts the plan out of step with the rows loaded, which loading
 * a share checks row by row (PlanMismatch); the caller then plans again without it. */
static int line_session(const uint8_t *p, const uint8_t *e, int quick, uint64_t *hash) {
    if (p == e) return SESSION_NONE; /* a blank line: the loader gives it no session */
    int skip_msg = 0;
    if (quick) {
        const uint8_t *last = e;
        while (last > p && is_ws(last[-1])) last--;
        skip_msg = last > p && last[-1] == '}';
    }
    while (p < e && is_ws(*p)) p++;
    if (p >= e || *p != '{') return SESSION_UNSURE;
    p++;
    int own = 0, msg = 0;
    uint64_t h = 0;
    for (;;) {
        while (p < e && is_ws(*p)) p++;
        if (p >= e || *p != '"') return SESSION_UNSURE;
        int escaped = 0;
        const uint8_t *key = p + 1, *after = skip_str(p, e, &escaped);
        if (!after || escaped) return SESSION_UNSURE;
        size_t klen = (size_t)(after - 1 - key);
        p = after;
        while (p < e && is_ws(*p)) p++;
        if (p >= e || *p != ':') return SESSION_UNSURE;
        p++;
        while (p < e && is_ws(*p)) p++;
        if (p >= e) return SESSION_UNSURE;
        if (klen == 3 && memcmp(key, "msg", 3) == 0) {
            if (own && skip_msg) {
                *hash = h;
                return SESSION_OWN;
            }
            msg = 1;
        }
        if (klen == 7 && memcmp(key, "session", 7) == 0) {
            /* the last member of a name counts, as orjson keeps the last */
            if (*p == '"') {
                const uint8_t *v = skip_str(p, e, &escaped);
                if (!v || escaped || v - 2 - p >= INT32_MAX) return SESSION_UNSURE;
                h = fnv1a(p + 1, (int32_t)(v - 2 - p));
                own = 1;
                p = v;
            } else if (e - p >= 4 && memcmp(p, "null", 4) == 0) {
                own = 0;
                p += 4;
            } else {
                return SESSION_UNSURE; /* the loader writes other values as JSON text */
            }
        } else {
            p = skip_val(p, e);
            if (!p) return SESSION_UNSURE;
        }
        while (p < e && is_ws(*p)) p++;
        if (p < e && *p == ',') {
            p++;
            continue;
        }
        if (p < e && *p == '}') {
            p++;
            break;
        }
        return SESSION_UNSURE;
    }
    while (p < e && is_ws(*p)) p++;
    if (p != e || !msg) return SESSION_UNSURE;
    *hash = h;
    return own ? SESSION_OWN : SESSION_NONE;
}

PyDoc_STRVAR(sessions_doc,
"sessions(data, quick=0) -> (states, hashes)\n\n"
"For each line of `data` (capture envelopes, split as scan() splits them): a state\n"
"byte (0: no session of its own, 1: its own session, 2: unsure, ask the Python path)\n"
"and, for state 1, the 64-bit FNV-1a hash of the session's UTF-8 text (native byte\n"
"order, 8 bytes a line). With `quick`, state 1 is read from the envelope's members\n"
"up to `msg` on a line with its newline that ends in a brace: a session named again\n"
"after `msg`, or a line broken inside it, is then not seen. Runs without the GIL.");

static PyObject *sessions(PyObject *Py_UNUSED(mod), PyObject *args) {
    Py_buffer buf;
    int quick = 0;
    if (!PyArg_ParseTuple(args, "y*|i", &buf, &quick)) return NULL;
    const uint8_t *src = (const uint8_t *)buf.buf, *end = src + buf.len;
    /* as the loop below splits them (a memchr call a line took a tenth of the pass) */
    int64_t lines = count_newlines(src, (size_t)buf.len) + (end > src && end[-1] != '\n');
    PyObject *states = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)lines);
    PyObject *hashes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(lines * 8));
    if (!states || !hashes) {
        Py_XDECREF(states);
        Py_XDECREF(hashes);
        PyBuffer_Release(&buf);
        return NULL;
    }
    uint8_t *st = (uint8_t *)PyBytes_AS_STRING(states);
    uint64_t *hs = (uint64_t *)(void *)PyBytes_AS_STRING(hashes);
    Py_BEGIN_ALLOW_THREADS
    int64_t i = 0;
    for (const uint8_t *q = src; q < end; i++) {
        const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
        const uint8_t *le = nl ? nl : end;
        if (le > q && le[-1] == '\r') le--;
        uint64_t h = 0;
        st[i] = (uint8_t)line_session(q, le, quick && nl != NULL, &h);
        memcpy(&hs[i], &h, 8);
        q = nl ? nl + 1 : end;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return Py_BuildValue("(NN)", states, hashes);
}

static PyObject *fnv(PyObject *Py_UNUSED(mod), PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    if (buf.len >= INT32_MAX) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "text too long");
        return NULL;
    }
    uint64_t h = fnv1a((const uint8_t *)buf.buf, (int32_t)buf.len);
    PyBuffer_Release(&buf);
    return PyLong_FromUnsignedLongLong(h);
}

PyDoc_STRVAR(lines_doc,
"lines(data) -> the number of lines in `data`: its newlines, plus one for a last line\n"
"without one. Runs without the GIL (bytes.count holds it: parsing threads would wait).");

static PyObject *lines(PyObject *Py_UNUSED(mod), PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    const uint8_t *src = (const uint8_t *)buf.buf, *end = src + buf.len;
    /* a Chunk's lines were counted as it was read: a second pass over 0.5 GB took
     * ~25 ms of CPU */
    ChunkObject *chunk = chunk_of(&buf);
    int64_t n = chunk ? chunk->lines : 0;
    if (!chunk) {
        Py_BEGIN_ALLOW_THREADS
        for (const uint8_t *q = src; q < end; n++) {
            const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
            q = nl ? nl + 1 : end;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&buf);
    return PyLong_FromLongLong(n);
}

PyDoc_STRVAR(keep_freed_doc,
"keep_freed(on) -> None: while on, blocks freed (text, and columns mostly written) are\n"
"kept for the next allocations of their kind instead of going back to the system\n"
"(see drop_kept).");

static PyObject *keep_freed(PyObject *Py_UNUSED(mod), PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
#ifdef KEEPS_BLOCKS
    atomic_store(&keeping, on);
#endif
    Py_RETURN_NONE;
}

PyDoc_STRVAR(kept_doc, "kept(text) -> int: bytes kept (see keep_freed): of text, or of columns.");

static PyObject *kept_bytes(PyObject *Py_UNUSED(mod), PyObject *arg) {
    int text = PyObject_IsTrue(arg);
    if (text < 0) return NULL;
    size_t bytes = 0;
#ifdef KEEPS_BLOCKS
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < n_kept; i++)
        if ((kept[i].kind == KIND_TEXT) == (text != 0)) bytes += kept[i].total;
    pthread_mutex_unlock(&kept_lock);
#endif
    return PyLong_FromSize_t(bytes);
}

PyDoc_STRVAR(drop_kept_doc, "drop_kept() -> int: give the kept blocks back to the system; their bytes.");

static PyObject *drop_kept(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored)) {
    size_t dropped = 0;
#ifdef KEEPS_BLOCKS
    dropped = drop_all_kept();
#endif
    return PyLong_FromSize_t(dropped);
}

static PyMethodDef methods[] = {
    {"lines", lines, METH_VARARGS, lines_doc},
    {"keep_freed", keep_freed, METH_O, keep_freed_doc},
    {"kept", kept_bytes, METH_O, kept_doc},
    {"cut_faults", cut_faults, METH_NOARGS, cut_faults_doc},
    {"numbers", numbers, METH_VARARGS, numbers_doc},
    {"bytes_of", bytes_of, METH_O, bytes_of_doc},
    {"drop_kept", drop_kept, METH_NOARGS, drop_kept_doc},
#ifndef _WIN32
    {"read", read_chunk, METH_VARARGS, read_doc},
#ifdef MAPS_FILES
    {"map", map_chunk, METH_VARARGS, map_doc},
#endif
#endif
    {"scan", scan, METH_VARARGS, scan_doc},
    {"sessions", sessions, METH_VARARGS, sessions_doc},
    {"fnv", fnv, METH_VARARGS, "fnv(data) -> the 64-bit FNV-1a hash sessions() gives a session's text"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "mcptrace._scan",
    "The loaders' hot path in C: line scanning and column extraction without the GIL.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__scan(void) {
#ifdef SKIP_AVX2
    /* MCPTRACE_NO_AVX2=1 keeps the SSE2 variant, so that tests can hold the two side by
     * side on a processor that has AVX2 */
    const char *no_avx2 = getenv("MCPTRACE_NO_AVX2");
    __builtin_cpu_init();
    if (!(no_avx2 && *no_avx2 && strcmp(no_avx2, "0") != 0) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("popcnt"))
        skip_container_fn = skip_container_avx2;
#endif
    if (PyType_Ready(&ColumnsType) < 0 || PyType_Ready(&ChunkType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    PyModule_AddIntConstant(m, "CAPTURE", MODE_CAPTURE);
    PyModule_AddIntConstant(m, "STDIO", MODE_STDIO);
    PyModule_AddIntConstant(m, "NCOLS", NCOLS);
    /* what accel.py expects of this module's columns and functions: bumped with every
     * change to them, so that a build left from an older checkout is not used */
    PyModule_AddIntConstant(m, "INTERFACE", SCAN_INTERFACE);
    /* {column: (word of code 1, word of code 2, ...)} of the T_CODE columns */
    PyObject *codes = PyDict_New();
    if (!codes || PyModule_AddObject(m, "CODES", codes)) {
        Py_XDECREF(codes);
        Py_DECREF(m);
        return NULL;
    }
    for (int i = 0; i < NCOLS; i++) {
        if (COL_TYPES[i] != T_CODE) continue;
        int n = 0;
        while (CODE_NAMES[i][n]) n++;
        PyObject *words = PyTuple_New(n);
        if (!words) {
            Py_DECREF(m);
            return NULL;
        }
        for (int k = 0; k < n; k++) {
            PyObject *w = PyUnicode_FromString(CODE_NAMES[i][k]);
            if (!w) {
                Py_DECREF(words);
                Py_DECREF(m);
                return NULL;
            }
            PyTuple_SET_ITEM(words, k, w);
        }
        int rc = PyDict_SetItemString(codes, COL_NAMES[i], words);
        Py_DECREF(words);
        if (rc) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
