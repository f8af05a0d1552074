/* Strict RFC 8259 parser that builds a cJSON tree in one pass.
 *
 * The parser is iterative: open arrays and objects live on an explicit stack
 * bounded by max_depth, so hostile nesting costs neither C stack nor time.
 * Every node is linked into the tree the moment it is created, which makes
 * cleanup after any failure a single cJSON_Delete of the root plus the one
 * key that may be waiting for its value.
 *
 * Allocations are what a message costs most, so the parser makes as few as
 * it can: a string or number node carries its text in its own block, common
 * keys point at static copies, and short raw ids are kept in the document.
 */
#include <cjson/cJSON.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define DEFAULT_DEPTH 64
#define DEFAULT_STRING ((size_t)4 << 20)
#define DEFAULT_MEMBERS 100000
#define DEFAULT_NUMBER 63

/* Raw captures beyond this many are not recorded: a request has one id, and
 * a batch this large is refused long before its ids matter. */
#define MAX_RAWS 4096
/* Raw ids are captured in objects nested at most this deep (root = 1), which
 * reaches params.requestId inside a batch element. */
#define RAW_DEPTH 3

/* Objects up to this many members check each new key against the previous
 * ones as it arrives; larger ones sort their keys once at the closing brace,
 * keeping the cost O(n log n) for any size. */
#define SMALL_OBJECT 16

/* The explicit stack and the key stack start in the parser itself, so a
 * typical message is parsed without allocating either. */
#define INLINE_FRAMES 64
#define INLINE_KEYS 64

/* Byte classes for the string scanner. Everything from QUOTE upwards also
 * needs escaping on output, which mcp__json_quote relies on. */
enum { PLAIN, LEAD2, LEAD3, LEAD4, BAD, QUOTE, ESCAPE, CONTROL };

#define X4(c) c, c, c, c
#define X16(c) X4(c), X4(c), X4(c), X4(c)

static const unsigned char byte_class[256] = {
    /* 0x00-0x1F */
    X16(CONTROL), X16(CONTROL),
    /* 0x20-0x2F: '"' is 0x22 */
    PLAIN, PLAIN, QUOTE, PLAIN, X4(PLAIN), X4(PLAIN), X4(PLAIN),
    /* 0x30-0x4F */
    X16(PLAIN), X16(PLAIN),
    /* 0x50-0x5F: '\\' is 0x5C */
    X4(PLAIN), X4(PLAIN), X4(PLAIN), ESCAPE, PLAIN, PLAIN, PLAIN,
    /* 0x60-0x7F */
    X16(PLAIN), X16(PLAIN),
    /* 0x80-0xBF: continuation bytes cannot start a character */
    X16(BAD), X16(BAD), X16(BAD), X16(BAD),
    /* 0xC0-0xDF: 0xC0 and 0xC1 only start overlong forms */
    BAD, BAD, LEAD2, LEAD2, X4(LEAD2), X4(LEAD2), X4(LEAD2), X16(LEAD2),
    /* 0xE0-0xEF */
    X16(LEAD3),
    /* 0xF0-0xFF: 0xF5 and above start code points beyond U+10FFFF */
    X4(LEAD4), LEAD4, BAD, BAD, BAD, X4(BAD), X4(BAD)};

#undef X4
#undef X16

typedef struct frame {
  cJSON *node;
  cJSON *last;  /* last child, for O(1) appends */
  size_t count; /* members or elements so far */
  size_t keys;  /* where this object's keys start on the key stack */
  int object;
} frame;

typedef struct key_ref {
  const char *key; /* decoded, owned by the tree (or the pending key) */
  size_t len;
  size_t off; /* byte offset of the key's opening quote */
} key_ref;

/* Keys the parser does not copy: the members of MCP messages and of the
 * JSON Schemas tools declare, one line per first character. */
/* clang-format off */
static const char *const keys[] = {
    "$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id",
    "$ref", "$schema", "$vocabulary",
    "_meta",
    "action", "additionalProperties", "allOf", "annotations", "anyOf",
    "argument", "arguments", "audience",
    "blob",
    "cacheScope", "capabilities", "clientInfo", "code", "completion",
    "completions", "const", "contains", "content", "contentEncoding",
    "contentMediaType", "contentSchema", "context", "costPriority", "cursor",
    "data", "default", "definitions", "dependentRequired", "dependentSchemas",
    "deprecated", "description", "destructiveHint",
    "elicitation", "elicitationId", "else", "enum", "error", "examples",
    "exclusiveMaximum", "exclusiveMinimum", "experimental",
    "form", "format",
    "hasMore", "hints",
    "icons", "id", "idempotentHint", "if", "includeContext", "inputRequests",
    "inputResponses", "inputSchema", "intelligencePriority",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/serverInfo", "isError", "items",
    "jsonrpc",
    "lastModified", "level", "listChanged", "logger", "logging",
    "maxContains", "maxItems", "maxLength", "maxProperties", "maxTokens",
    "maximum", "message", "messages", "metadata", "method", "mimeType",
    "minContains", "minItems", "minLength", "minProperties", "minimum", "mode",
    "model", "modelPreferences", "multipleOf",
    "name", "nextCursor", "not",
    "oneOf", "openWorldHint", "outputSchema",
    "params", "pattern", "patternProperties", "prefixItems", "priority",
    "progress", "progressToken", "prompts", "properties", "propertyNames",
    "protocolVersion",
    "readOnly", "readOnlyHint", "reason", "ref", "requestId", "requestState",
    "requestedSchema", "required", "resource", "resources", "result",
    "resultType", "role", "roots",
    "sampling", "serverInfo", "size", "sizes", "speedPriority", "src",
    "stopReason", "stopSequences", "structuredContent", "subscribe",
    "systemPrompt",
    "temperature", "text", "then", "title", "toolChoice", "tools", "total",
    "ttlMs", "type",
    "unevaluatedItems", "unevaluatedProperties", "uniqueItems", "uri",
    "uriTemplate", "url",
    "value", "values", "version",
    "writeOnly"
};
/* clang-format on */

/* An open-addressing hash table of the keys, filled once: a lookup costs a
 * hash and usually one comparison, less than the allocation it saves. */
#define INTERN_SLOTS 512
typedef struct intern_slot {
  const char *key; /* NULL: empty */
  size_t len;
  uint64_t head; /* the first (up to) eight bytes, as key_head loads them */
} intern_slot;
static intern_slot intern_table[INTERN_SLOTS];
static pthread_once_t intern_once = PTHREAD_ONCE_INIT;

/* The first min(len, 8) bytes of s, zero-padded, as one word; avail bytes
 * may be read from s (avail >= len). Where eight can be read at once on a
 * little-endian machine, the bytes past the key are masked off instead:
 * the same word, without a copy of variable length. */
static inline uint64_t key_head(const char *s, size_t len, size_t avail) {
  uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (avail >= 8) {
    memcpy(&v, s, 8);
    return len >= 8 ? v : v & (((uint64_t)1 << (len * 8)) - 1);
  }
#else
  (void)avail;
#endif
  memcpy(&v, s, len < 8 ? len : 8);
  return v;
}

/* The slot to start probing at for a key of len bytes whose head (see
 * key_head) and last byte are given: one multiplication spreads them. */
static inline size_t intern_hash(uint64_t head, size_t len,
                                 unsigned char last) {
  uint64_t h = (head ^ ((uint64_t)len << 56) ^ ((uint64_t)last << 48)) *
               0x9E3779B97F4A7C15u;
  return (size_t)(h >> 55) % INTERN_SLOTS;
}

static void intern_fill(void) {
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    size_t len = strlen(keys[i]);
    uint64_t head = key_head(keys[i], len, len);
    size_t h = intern_hash(head, len, (unsigned char)keys[i][len - 1]);
    while (intern_table[h].key != NULL)
      h = (h + 1) % INTERN_SLOTS;
    intern_table[h] = (intern_slot){keys[i], len, head};
  }
}

/* mcp__json_intern once the table is filled: the parser fills it once per
 * document instead of once per key. avail bytes may be read from s (at
 * least len): a key is compared a word at a time, and most keys fit in
 * one. */
static inline const char *intern_find(const char *s, size_t len, size_t avail) {
  if (len == 0)
    return NULL;
  uint64_t head = key_head(s, len, avail);
  for (size_t h = intern_hash(head, len, (unsigned char)s[len - 1]);
       intern_table[h].key != NULL; h = (h + 1) % INTERN_SLOTS) {
    const intern_slot *k = &intern_table[h];
    if (k->len == len && k->head == head &&
        (len <= 8 || memcmp(k->key + 8, s + 8, len - 8) == 0))
      return k->key;
  }
  return NULL;
}

const char *mcp__json_intern(const char *s, size_t len) {
  pthread_once(&intern_once, intern_fill);
  return intern_find(s, len, len);
}

typedef struct parser {
  const unsigned char *s;
  size_t n;
  size_t pos;
  size_t max_depth, max_string, max_members, max_number;
  char *err;
  size_t errlen;
  cJSON *root;
  frame *frames;
  size_t depth, frames_cap;
  key_ref *keys;
  size_t nkeys, keys_cap;
  const char *key; /* a key read but not yet given to its value's node */
  int key_owned;   /* that key is a copy (on the heap, or in the pool),
                      not an interned one */
  int key_is_raw;  /* that key asks for the value's raw text */
  mcp__json_doc *doc;
  size_t more_cap;     /* capacity of doc->more */
  int pooled;          /* nodes come from doc->pool */
  mcp__json_pool *cur; /* the pool block being filled */
  frame frame_buf[INLINE_FRAMES];
  key_ref key_buf[INLINE_KEYS];
} parser;

static int fail(parser *p, int rc, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail(parser *p, int rc, size_t off, const char *fmt, ...) {
  if (p->err != NULL && p->errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(p->err, p->errlen, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < p->errlen)
      snprintf(p->err + k, p->errlen - (size_t)k, " at byte %zu", off);
  }
  return rc;
}

static int oom(parser *p) {
  return fail(p, MCP_ENOMEM, p->pos, "out of memory");
}

/* Names the byte at off without ever printing a non-ASCII or control byte. */
static int unexpected(parser *p, size_t off, const char *what) {
  unsigned char c = p->s[off];
  if (c > 0x20 && c < 0x7F)
    return fail(p, MCP_EPARSE, off, "%s, found '%c'", what, c);
  return fail(p, MCP_EPARSE, off, "%s, found byte 0x%02X", what, c);
}

static inline size_t skip_ws(const unsigned char *s, size_t n, size_t i) {
  /* Compact JSON has no whitespace: one test settles most calls. */
  while (i < n && s[i] <= ' ' &&
         (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
    i++;
  return i;
}

static inline int is_digit(unsigned char c) {
  return (unsigned)(c - '0') < 10u;
}

/* The value of four hex digits at s[i..i+3], or -1. */
static long hex4(const unsigned char *s, size_t n, size_t i) {
  if (n - i < 4)
    return -1;
  long v = 0;
  for (size_t k = i; k < i + 4; k++) {
    unsigned c = s[k];
    if (c - '0' < 10u)
      v = v * 16 + (long)(c - '0');
    else if ((c | 0x20u) - 'a' < 6u)
      v = v * 16 + (long)((c | 0x20u) - 'a' + 10);
    else
      return -1;
  }
  return v;
}

/* The index of the first byte at or after i whose class is at least
 * min_class, n if none: LEAD2 stops at anything but plain ASCII (the
 * parser), QUOTE at what must be escaped (mcp__json_quote). On
 * little-endian machines it looks at eight bytes at a time: each test below
 * sets the high bit of every byte it looks for (a control, a quote, a
 * backslash, and for LEAD2 a non-ASCII byte), and a borrow may set it in
 * bytes above such a one but never below, so the lowest set bit is the
 * byte to stop at. */
static inline size_t scan_run(const unsigned char *s, size_t n, size_t i,
                              int min_class) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                            \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  while (n - i >= 8) {
    uint64_t v;
    memcpy(&v, s + i, 8);
    uint64_t q = v ^ (ones * '"'), e = v ^ (ones * '\\');
    uint64_t stop =
        ((v - ones * 0x20) & ~v) | ((q - ones) & ~q) | ((e - ones) & ~e);
    if (min_class <= LEAD2)
      stop |= v;
    stop &= highs;
    if (stop)
      return i + (size_t)(__builtin_ctzll(stop) >> 3);
    i += 8;
  }
#endif
  while (i < n && byte_class[s[i]] < min_class)
    i++;
  return i;
}

/* The index of the first byte at or after i that is not PLAIN (n if none). */
static inline size_t plain_run(const unsigned char *s, size_t n, size_t i) {
  return scan_run(s, n, i, LEAD2);
}

/* Validates the escape whose backslash is at s[i]: a \u escape (a
 * surrogate pair counts as one) or one of the eight single-letter escapes.
 * Returns how many input bytes it spans, after adding to *shrink how much
 * shorter it decodes, or a negative MCP_E* code. */
static int scan_escape(parser *p, size_t i, size_t *shrink) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  if (i + 1 >= n)
    return fail(p, MCP_EPARSE, p->pos, "unterminated string");
  unsigned char e = s[i + 1];
  if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
      e == 'r' || e == 't') {
    *shrink += 1;
    return 2;
  }
  if (e != 'u')
    return fail(p, MCP_EPARSE, i, "invalid escape sequence");
  long cp = hex4(s, n, i + 2);
  if (cp < 0)
    return fail(p, MCP_EPARSE, i, "\\u escape without four hex digits");
  if (cp == 0)
    return fail(p, MCP_EPARSE, i, "\\u0000 is not allowed in a string");
  if (cp >= 0xDC00 && cp <= 0xDFFF)
    return fail(p, MCP_EPARSE, i, "unpaired low surrogate");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    long lo = -1;
    if (n - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u')
      lo = hex4(s, n, i + 8);
    if (lo < 0xDC00 || lo > 0xDFFF)
      return fail(p, MCP_EPARSE, i, "unpaired high surrogate");
    *shrink += 12 - 4;
    return 12;
  }
  *shrink += cp < 0x80 ? 6 - 1 : cp < 0x800 ? 6 - 2 : 6 - 3;
  return 6;
}

/* Validates the multi-byte UTF-8 sequence whose lead byte, of class cls, is
 * at s[i]: its continuation bytes, no overlong form (E0, F0), no surrogate
 * (ED), nothing above U+10FFFF (F4). Returns its length, or a negative
 * MCP_E* code. */
static inline int scan_utf8(parser *p, size_t i, int cls) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  unsigned char c = s[i];
  switch (cls) {
  case LEAD2:
    if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80)
      break;
    return 2;
  case LEAD3: {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (n - i < 3 || s[i + 1] < lo || s[i + 1] > hi ||
        (s[i + 2] & 0xC0) != 0x80)
      break;
    return 3;
  }
  case LEAD4: {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    if (n - i < 4 || s[i + 1] < lo || s[i + 1] > hi ||
        (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
      break;
    return 4;
  }
  default:
    break;
  }
  return fail(p, MCP_EPARSE, i, "invalid UTF-8");
}

/* Validates the string whose opening quote is at p->pos: UTF-8, escapes,
 * surrogate pairs, no raw controls, no U+0000. Sets *end to the index of the
 * closing quote, *dlen to the decoded length and *escaped when the string
 * needs decoding, so the copy can be allocated once at its exact size.
 * Scanning resumes at i: everything before it is plain. */
static int scan_string(parser *p, size_t i, size_t *end, size_t *dlen,
                       int *escaped) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  size_t shrink = 0;
  int esc = 0, step;
  for (;;) {
    i = plain_run(s, n, i);
    if (i >= n)
      return fail(p, MCP_EPARSE, p->pos, "unterminated string");
    int cls = byte_class[s[i]];
    if (cls == QUOTE) {
      *end = i;
      *dlen = i - p->pos - 1 - shrink;
      *escaped = esc;
      return 0;
    }
    if (cls == CONTROL)
      return fail(p, MCP_EPARSE, i, "raw control character 0x%02X in a string",
                  s[i]);
    if (cls == ESCAPE) {
      esc = 1;
      step = scan_escape(p, i, &shrink);
    } else {
      step = scan_utf8(p, i, cls);
    }
    if (step < 0)
      return step;
    i += (size_t)step;
  }
}

char *mcp__utf8_put(char *out, unsigned long cp) {
  if (cp < 0x80) {
    *out++ = (char)cp;
  } else if (cp < 0x800) {
    *out++ = (char)(0xC0 | (cp >> 6));
    *out++ = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out++ = (char)(0xE0 | (cp >> 12));
    *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *out++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *out++ = (char)(0xF0 | (cp >> 18));
    *out++ = (char)(0x80 | ((cp >> 12) & 0x3F));
    *out++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *out++ = (char)(0x80 | (cp & 0x3F));
  }
  return out;
}

/* Decodes s[i..end) into out; scan_string already validated every escape. */
static void decode(const unsigned char *s, size_t i, size_t end, char *out) {
  while (i < end) {
    const unsigned char *bs = memchr(s + i, '\\', end - i);
    size_t run = bs ? (size_t)(bs - (s + i)) : end - i;
    memcpy(out, s + i, run);
    out += run;
    i += run;
    if (i >= end)
      break;
    unsigned char e = s[i + 1];
    switch (e) {
    case 'b':
      *out++ = '\b';
      break;
    case 'f':
      *out++ = '\f';
      break;
    case 'n':
      *out++ = '\n';
      break;
    case 'r':
      *out++ = '\r';
      break;
    case 't':
      *out++ = '\t';
      break;
    case 'u': {
      unsigned long cp = (unsigned long)hex4(s, end, i + 2);
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned long lo = (unsigned long)hex4(s, end, i + 8);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i += 6;
      }
      out = mcp__utf8_put(out, cp);
      i += 4;
      break;
    }
    default: /* '"', '\\' and '/' stand for themselves */
      *out++ = (char)e;
      break;
    }
    i += 2;
  }
  *out = '\0';
}

/* Scans the string at p->pos (see scan_string) and applies the length
 * limit to its decoded form. Most strings of a message are plain ASCII up
 * to their closing quote, and one run settles them here. */
static inline int string_bounds(parser *p, size_t *end, size_t *dlen,
                                int *escaped) {
  size_t i = plain_run(p->s, p->n, p->pos + 1);
  if (i < p->n && p->s[i] == '"') {
    *end = i;
    *dlen = i - p->pos - 1;
    *escaped = 0;
  } else {
    int rc = scan_string(p, i, end, dlen, escaped);
    if (rc)
      return rc;
  }
  if (*dlen > p->max_string)
    return fail(p, MCP_ELIMIT, p->pos, "string longer than %zu bytes",
                p->max_string);
  return 0;
}

/* memcpy of n bytes; up to 16 of them (most keys and values of a message)
 * are moved by two fixed-size copies that may overlap, inline. */
static inline void copy_bytes(char *out, const unsigned char *src, size_t n) {
  if (n > 16) {
    memcpy(out, src, n);
  } else if (n >= 8) {
    memcpy(out, src, 8);
    memcpy(out + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(out, src, 4);
    memcpy(out + n - 4, src + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; i++)
      out[i] = (char)src[i];
  }
}

/* Copies the string whose opening quote is at p->pos and whose closing
 * quote is at end into out (dlen + 1 bytes), decoding it if escaped. */
static inline void string_copy(const parser *p, size_t end, size_t dlen,
                               int escaped, char *out) {
  if (escaped) {
    decode(p->s, p->pos + 1, end, out);
  } else {
    copy_bytes(out, p->s + p->pos + 1, dlen);
    out[dlen] = '\0';
  }
}

/* The blocks of a pooled document. The first one carries the reference
 * count and heads the list of the others; each hands out its room in
 * order, and a full one is followed by one twice its size (or the size
 * asked for), so a message costs a few allocations whatever its shape. */
struct mcp__json_pool {
  atomic_uint refs;     /* in the first block only */
  mcp__json_pool *more; /* the first block: the other blocks */
  size_t used, cap;
};

#define POOL_ALIGN _Alignof(cJSON)
#define POOL_HEAD                                                              \
  ((sizeof(mcp__json_pool) + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN)
/* Room in the first block: a tools/call of a few arguments fits, and with
 * the header it stays within 1 KiB, which glibc serves from its per-thread
 * cache (a larger first block made the pool cost more than it saved). */
#define POOL_FIRST (1024 - POOL_HEAD)

/* pool_alloc when the current block lacks room (or there is none yet):
 * chains a new block. size is already rounded. */
static void *pool_alloc_block(parser *p, size_t size) {
  const mcp__json_pool *b = p->cur;
  size_t cap = b == NULL               ? POOL_FIRST
               : b->cap < SIZE_MAX / 4 ? b->cap * 2
                                       : size;
  if (cap < size)
    cap = size;
  if (cap > SIZE_MAX - POOL_HEAD)
    return NULL;
  mcp__json_pool *nb = mcp__malloc(POOL_HEAD + cap);
  if (nb == NULL)
    return NULL;
  nb->used = size;
  nb->cap = cap;
  nb->more = NULL;
  atomic_init(&nb->refs, 1);
  if (b == NULL) {
    p->doc->pool = nb;
  } else {
    nb->more = p->doc->pool->more;
    p->doc->pool->more = nb;
  }
  p->cur = nb;
  return (char *)nb + POOL_HEAD;
}

/* size bytes, aligned for a node, from the document's pool. */
static inline void *pool_alloc(parser *p, size_t size) {
  if (size > SIZE_MAX / 4)
    return NULL;
  size = (size + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
  mcp__json_pool *b = p->cur;
  if (b == NULL || b->cap - b->used < size)
    return pool_alloc_block(p, size);
  void *r = (char *)b + POOL_HEAD + b->used;
  b->used += size;
  return r;
}

mcp__json_pool *mcp__json_pool_ref(mcp__json_pool *pool) {
  if (pool)
    atomic_fetch_add(&pool->refs, 1);
  return pool;
}

void mcp__json_pool_release(mcp__json_pool *pool) {
  if (pool == NULL || atomic_fetch_sub(&pool->refs, 1) != 1)
    return;
  for (mcp__json_pool *b = pool->more, *next; b; b = next) {
    next = b->more;
    mcp__free(b);
  }
  mcp__free(pool);
}

/* A node of type with nothing in it, from the pool or the heap. */
static inline cJSON *new_node(parser *p, int type) {
  cJSON *node =
      p->pooled ? pool_alloc(p, sizeof(cJSON)) : mcp__malloc(sizeof(cJSON));
  if (node == NULL)
    return NULL;
  memset(node, 0, sizeof *node);
  node->type = type;
  return node;
}

/* A string or number node whose text (len bytes plus a NUL, filled in by
 * the caller) shares the node's block: one allocation instead of two. The
 * reference flag keeps cJSON_Delete from freeing the text on its own, and
 * cJSON_Duplicate gives a copy text of its own. */
static inline cJSON *new_leaf(parser *p, int type, size_t len) {
  if (len > SIZE_MAX - sizeof(cJSON) - 1)
    return NULL;
  cJSON *node = p->pooled ? pool_alloc(p, sizeof(cJSON) + len + 1)
                          : mcp__malloc(sizeof(cJSON) + len + 1);
  if (node == NULL)
    return NULL;
  memset(node, 0, sizeof *node);
  node->type = type | cJSON_IsReference;
  node->valuestring = (char *)(node + 1);
  return node;
}

/* Converts number text to double without depending on the locale. The
 * common case (at most 19 significant digits forming a value below 2^53,
 * decimal exponent within +-22) is exact with one correctly rounded IEEE
 * operation (Clinger's fast path); only the rest goes to strtod. */
static int fast_double(const char *t, size_t len, double *out) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
  static const double powers[] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t i = 0;
  int neg = 0, digits = 0;
  uint64_t m = 0;
  long exp10 = 0;
  if (t[i] == '-') {
    neg = 1;
    i++;
  }
  for (; i < len && is_digit((unsigned char)t[i]); i++) {
    if (digits >= 19)
      return 0;
    m = m * 10 + (uint64_t)(t[i] - '0');
    digits += m != 0;
  }
  if (i < len && t[i] == '.') {
    for (i++; i < len && is_digit((unsigned char)t[i]); i++) {
      if (digits >= 19)
        return 0;
      m = m * 10 + (uint64_t)(t[i] - '0');
      digits += m != 0;
      exp10--;
    }
  }
  if (i < len) { /* 'e' or 'E' */
    int eneg = 0;
    long e = 0;
    i++;
    if (t[i] == '+' || t[i] == '-')
      eneg = t[i++] == '-';
    for (; i < len; i++)
      if (e < 100000)
        e = e * 10 + (t[i] - '0');
    exp10 += eneg ? -e : e;
  }
  if (m == 0) {
    *out = neg ? -0.0 : 0.0;
    return 1;
  }
  if (m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22)
    return 0;
  double v = (double)m;
  v = exp10 < 0 ? v / powers[-exp10] : v * powers[exp10];
  *out = neg ? -v : v;
  return 1;
#else
  (void)t;
  (void)len;
  (void)out;
  return 0;
#endif
}

static int number_value(const char *t, size_t len, double *out) {
  if (fast_double(t, len, out))
    return 0;
  /* strtod reads the locale's decimal point, so a '.' is swapped for it. */
  const char *dot = memchr(t, '.', len);
  const char *dp = localeconv()->decimal_point;
  if (dot == NULL || dp == NULL || dp[0] == '\0' ||
      (dp[0] == '.' && dp[1] == '\0')) {
    *out = strtod(t, NULL);
    return 0;
  }
  size_t dpl = strlen(dp), pre = (size_t)(dot - t);
  char small[128], *tmp = small;
  if (len + dpl > sizeof small) {
    tmp = mcp__malloc(len + dpl);
    if (tmp == NULL)
      return MCP_ENOMEM;
  }
  memcpy(tmp, t, pre);
  memcpy(tmp + pre, dp, dpl);
  memcpy(tmp + pre + dpl, dot + 1, len - pre - 1);
  tmp[len - 1 + dpl] = '\0';
  *out = strtod(tmp, NULL);
  if (tmp != small)
    mcp__free(tmp);
  return 0;
}

static void attach(parser *p, cJSON *node) {
  if (p->depth == 0) {
    p->root = node;
    return;
  }
  frame *f = &p->frames[p->depth - 1];
  if (f->last) {
    f->last->next = node;
    node->prev = f->last;
    f->node->child->prev = node;
  } else {
    /* cJSON keeps the first child's prev pointing at the last child. */
    f->node->child = node;
    node->prev = node;
  }
  f->last = node;
  if (f->object) {
    /* cJSON_Delete leaves a key flagged constant alone. */
    node->string = (char *)p->key;
    if (!p->key_owned)
      node->type |= cJSON_StringIsConst;
    p->key = NULL;
    p->key_owned = 0;
  }
}

/* Grows an array that starts in the inline buffer inline_buf (and moves to
 * the heap on its first growth) to cap elements of size bytes, keeping its
 * first used elements. Returns the new array, or NULL when cap elements do
 * not fit in a size_t or the allocation fails; array is then unchanged. */
static void *grow_stack(void *array, const void *inline_buf, size_t used,
                        size_t cap, size_t size) {
  if (cap > SIZE_MAX / size)
    return NULL;
  if (array != inline_buf)
    return mcp__realloc(array, cap * size);
  void *r = mcp__malloc(cap * size);
  if (r)
    memcpy(r, array, used * size);
  return r;
}

static int push(parser *p, cJSON *node, int object) {
  if (p->depth == p->frames_cap) {
    size_t cap = p->frames_cap * 2;
    if (cap > p->max_depth)
      cap = p->max_depth;
    frame *f = grow_stack(p->frames, p->frame_buf, p->depth, cap, sizeof *f);
    if (f == NULL)
      return oom(p);
    p->frames = f;
    p->frames_cap = cap;
  }
  frame *f = &p->frames[p->depth++];
  f->node = node;
  f->last = NULL;
  f->count = 0;
  f->keys = p->nkeys;
  f->object = object;
  return 0;
}

static int record_raw(parser *p, const cJSON *node, size_t start, size_t end) {
  mcp__json_doc *d = p->doc;
  if (d->nraws >= MAX_RAWS)
    return 0;
  mcp__json_raw *r;
  if (d->nraws < MCP__JSON_RAW_SLOTS) {
    r = &d->raws[d->nraws];
  } else {
    size_t k = d->nraws - MCP__JSON_RAW_SLOTS;
    if (k == p->more_cap) {
      size_t cap = p->more_cap ? p->more_cap * 2 : 8;
      mcp__json_raw *m = mcp__realloc(d->more, cap * sizeof *m);
      if (m == NULL)
        return oom(p);
      d->more = m;
      p->more_cap = cap;
    }
    r = &d->more[k];
  }
  size_t len = end - start;
  char *text = r->small;
  r->heap = NULL;
  if (len >= sizeof r->small) {
    if ((text = mcp__malloc(len + 1)) == NULL)
      return oom(p);
    r->heap = text;
  }
  memcpy(text, p->s + start, len);
  text[len] = '\0';
  r->node = node;
  r->len = len;
  d->nraws++;
  return 0;
}

/* Writes key into dst for an error message: printable ASCII as is, the rest
 * as \xHH, cut after a few dozen bytes, so no raw byte reaches a log. */
static void describe_key(char *dst, size_t cap, const char *key, size_t len) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)key[i];
    if (o + 8 >= cap || i >= 40) {
      memcpy(dst + o, "...", 3);
      o += 3;
      break;
    }
    if (c == '"' || c == '\\') {
      dst[o++] = '\\';
      dst[o++] = (char)c;
    } else if (c >= 0x20 && c < 0x7F) {
      dst[o++] = (char)c;
    } else {
      dst[o++] = '\\';
      dst[o++] = 'x';
      dst[o++] = hex[c >> 4];
      dst[o++] = hex[c & 15];
    }
  }
  dst[o] = '\0';
}

static int duplicate(parser *p, const key_ref *k) {
  char name[64];
  describe_key(name, sizeof name, k->key, k->len);
  return fail(p, MCP_EPARSE, k->off, "duplicate key \"%s\"", name);
}

static int key_order(const void *a, const void *b) {
  const key_ref *x = a, *y = b;
  if (x->len != y->len)
    return x->len < y->len ? -1 : 1;
  int c = memcmp(x->key, y->key, x->len);
  if (c != 0)
    return c;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* Records a new key of the innermost object and refuses it if an earlier
 * member of the same object has the same decoded key. */
static int add_key(parser *p, const char *key, size_t len, size_t off) {
  const frame *f = &p->frames[p->depth - 1];
  key_ref *k = p->keys + f->keys;
  size_t have = p->nkeys - f->keys;
  if (have < SMALL_OBJECT) {
    for (size_t j = 0; j < have; j++)
      if (k[j].len == len && memcmp(k[j].key, key, len) == 0) {
        key_ref dup = {key, len, off};
        return duplicate(p, &dup);
      }
  }
  if (p->nkeys == p->keys_cap) {
    size_t cap = p->keys_cap * 2;
    key_ref *r = grow_stack(p->keys, p->key_buf, p->nkeys, cap, sizeof *r);
    if (r == NULL)
      return oom(p);
    p->keys = r;
    p->keys_cap = cap;
  }
  p->keys[p->nkeys++] = (key_ref){key, len, off};
  return 0;
}

/* Closes the innermost object: large objects are checked for duplicate
 * keys here, reporting the earliest key that repeats an earlier one. */
static int close_object(parser *p) {
  const frame *f = &p->frames[p->depth - 1];
  size_t have = p->nkeys - f->keys;
  if (have > SMALL_OBJECT) {
    key_ref *k = p->keys + f->keys;
    qsort(k, have, sizeof *k, key_order);
    const key_ref *dup = NULL;
    for (size_t j = 1; j < have; j++)
      if (k[j].len == k[j - 1].len &&
          memcmp(k[j].key, k[j - 1].key, k[j].len) == 0 &&
          (dup == NULL || k[j].off < dup->off))
        dup = &k[j];
    if (dup)
      return duplicate(p, dup);
  }
  p->nkeys = f->keys;
  return 0;
}

static int read_number(parser *p, cJSON **out) {
  const unsigned char *s = p->s;
  const size_t n = p->n, start = p->pos;
  size_t i = start;
  if (s[i] == '-')
    i++;
  if (i >= n || !is_digit(s[i]))
    return fail(p, MCP_EPARSE, start, "invalid number: no digit after '-'");
  if (s[i] == '0') {
    i++;
    if (i < n && is_digit(s[i]))
      return fail(p, MCP_EPARSE, start, "invalid number: leading zero");
  } else {
    while (i < n && is_digit(s[i]))
      i++;
  }
  if (i < n && s[i] == '.') {
    i++;
    if (i >= n || !is_digit(s[i]))
      return fail(p, MCP_EPARSE, i, "invalid number: no digit after '.'");
    while (i < n && is_digit(s[i]))
      i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    if (i >= n || !is_digit(s[i]))
      return fail(p, MCP_EPARSE, i, "invalid number: no digit in exponent");
    while (i < n && is_digit(s[i]))
      i++;
  }
  size_t len = i - start;
  if (len > p->max_number)
    return fail(p, MCP_ELIMIT, start, "number longer than %zu characters",
                p->max_number);
  cJSON *node = new_leaf(p, cJSON_Number, len);
  if (node == NULL)
    return oom(p);
  char *text = node->valuestring;
  memcpy(text, s + start, len);
  text[len] = '\0';
  attach(p, node);
  double v = 0;
  if (number_value(text, len, &v))
    return oom(p);
  node->valuedouble = v;
  /* valueint saturates the way cJSON's own parser sets it. */
  if (v >= INT_MAX)
    node->valueint = INT_MAX;
  else if (v <= (double)INT_MIN)
    node->valueint = INT_MIN;
  else
    node->valueint = (int)v;
  p->pos = i;
  *out = node;
  return 0;
}

static int read_literal(parser *p) {
  static const char *const words[] = {"true", "false", "null"};
  const char *w = p->s[p->pos] == 't'   ? words[0]
                  : p->s[p->pos] == 'f' ? words[1]
                                        : words[2];
  size_t len = strlen(w);
  if (p->n - p->pos < len || memcmp(p->s + p->pos, w, len) != 0)
    return unexpected(p, p->pos, "expected a value");
  cJSON *node = new_node(p, w == words[0]   ? cJSON_True
                            : w == words[1] ? cJSON_False
                                            : cJSON_NULL);
  if (node == NULL)
    return oom(p);
  attach(p, node);
  p->pos += len;
  return 0;
}

/* The states of parse_document's loop; each step returns the next one, DONE
 * when the document is complete, or a negative MCP_E* code. */
enum { DONE, WANT_VALUE, WANT_KEY, AFTER_VALUE };

/* Opens the object or array whose bracket is at p->pos: attaches its node,
 * pushes its frame, and closes it at once when it is empty. */
static inline int open_container(parser *p, unsigned char c) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  int rc;
  if (p->depth >= p->max_depth)
    return fail(p, MCP_ELIMIT, p->pos, "nesting deeper than %zu", p->max_depth);
  cJSON *node = new_node(p, c == '{' ? cJSON_Object : cJSON_Array);
  if (node == NULL)
    return oom(p);
  attach(p, node);
  if ((rc = push(p, node, c == '{')) != 0)
    return rc;
  p->pos = skip_ws(s, n, p->pos + 1);
  if (p->pos < n && s[p->pos] == (c == '{' ? '}' : ']')) {
    p->depth--;
    p->pos++;
    return AFTER_VALUE;
  }
  return c == '{' ? WANT_KEY : WANT_VALUE;
}

/* Reads the string value at p->pos into a new leaf; sets *node to it. */
static inline int read_string_value(parser *p, cJSON **node) {
  size_t end = 0, len = 0;
  int escaped = 0, rc;
  if ((rc = string_bounds(p, &end, &len, &escaped)) != 0)
    return rc;
  if ((*node = new_leaf(p, cJSON_String, len)) == NULL)
    return oom(p);
  string_copy(p, end, len, escaped, (*node)->valuestring);
  attach(p, *node);
  p->pos = end + 1;
  return 0;
}

/* WANT_VALUE: counts the value against its array's limit, reads it by its
 * first byte, and keeps its raw text when the key before it asked for it
 * (an "id" or "requestId"). */
static inline int want_value(parser *p) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  int rc;
  if (p->pos >= n)
    return fail(p, MCP_EPARSE, n, "unexpected end of input");
  if (p->depth > 0) {
    frame *f = &p->frames[p->depth - 1];
    if (!f->object && ++f->count > p->max_members)
      return fail(p, MCP_ELIMIT, p->pos, "more than %zu elements in one array",
                  p->max_members);
  }
  unsigned char c = s[p->pos];
  size_t start = p->pos;
  cJSON *node = NULL;
  /* Set by the key just read, if this value is an object member. */
  int raw = p->key_is_raw;
  p->key_is_raw = 0;
  if (c == '{' || c == '[')
    return open_container(p, c);
  if (c == '"') {
    rc = read_string_value(p, &node);
  } else if (c == 't' || c == 'f' || c == 'n') {
    rc = read_literal(p);
    raw = 0;
  } else if (c == '-' || is_digit(c)) {
    rc = read_number(p, &node);
  } else {
    return unexpected(p, p->pos, "expected a value");
  }
  if (rc != 0)
    return rc;
  if (raw && (rc = record_raw(p, node, start, p->pos)) != 0)
    return rc;
  return AFTER_VALUE;
}

/* WANT_KEY: reads a member's key (interned when it is a common one), checks
 * it against the object's limits and duplicates, notes whether its value's
 * raw text is kept, and steps over the colon. */
static inline int want_key(parser *p) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  int rc;
  if (p->pos >= n)
    return fail(p, MCP_EPARSE, n, "unexpected end of input");
  if (s[p->pos] != '"')
    return unexpected(p, p->pos, "expected a string key");
  frame *f = &p->frames[p->depth - 1];
  if (++f->count > p->max_members)
    return fail(p, MCP_ELIMIT, p->pos, "more than %zu members in one object",
                p->max_members);
  size_t off = p->pos, end = 0, len = 0;
  int escaped = 0;
  if ((rc = string_bounds(p, &end, &len, &escaped)) != 0)
    return rc;
  p->key =
      escaped ? NULL : intern_find((const char *)s + off + 1, len, n - off - 1);
  if (p->key == NULL) {
    char *key = p->pooled ? pool_alloc(p, len + 1) : mcp__malloc(len + 1);
    if (key == NULL)
      return oom(p);
    string_copy(p, end, len, escaped, key);
    p->key = key;
    p->key_owned = 1;
  }
  p->pos = end + 1;
  if ((rc = add_key(p, p->key, len, off)) != 0)
    return rc;
  p->key_is_raw = p->depth <= RAW_DEPTH &&
                  ((len == 2 && memcmp(p->key, "id", 2) == 0) ||
                   (len == 9 && memcmp(p->key, "requestId", 9) == 0));
  p->pos = skip_ws(s, n, p->pos);
  if (p->pos >= n)
    return fail(p, MCP_EPARSE, n, "unexpected end of input");
  if (s[p->pos] != ':')
    return unexpected(p, p->pos, "expected ':' after a key");
  p->pos = skip_ws(s, n, p->pos + 1);
  return WANT_VALUE;
}

/* AFTER_VALUE: ends the document at depth 0 (nothing may follow), or takes
 * the comma to the next member or element, or the bracket that closes the
 * innermost object or array. */
static inline int after_value(parser *p) {
  const unsigned char *s = p->s;
  const size_t n = p->n;
  int rc;
  p->pos = skip_ws(s, n, p->pos);
  if (p->depth == 0) {
    if (p->pos < n)
      return fail(p, MCP_EPARSE, p->pos,
                  "unexpected character after the JSON value");
    return DONE;
  }
  if (p->pos >= n)
    return fail(p, MCP_EPARSE, n, "unexpected end of input");
  const frame *f = &p->frames[p->depth - 1];
  unsigned char c = s[p->pos];
  if (c == ',') {
    p->pos = skip_ws(s, n, p->pos + 1);
    return f->object ? WANT_KEY : WANT_VALUE;
  }
  if (c != (f->object ? '}' : ']'))
    return unexpected(
        p, p->pos, f->object ? "expected ',' or '}'" : "expected ',' or ']'");
  if (f->object && (rc = close_object(p)) != 0)
    return rc;
  p->depth--;
  p->pos++;
  return AFTER_VALUE;
}

/* The strict grammar as one loop over three states, without recursion, so
 * the nesting depth costs heap frames, never stack. */
static int parse_document(parser *p) {
  int state = WANT_VALUE;
  p->pos = skip_ws(p->s, p->n, 0);
  if (p->pos == p->n)
    return fail(p, MCP_EPARSE, p->pos, "empty input");
  while (state > DONE) {
    switch (state) {
    case WANT_VALUE:
      state = want_value(p);
      break;
    case WANT_KEY:
      state = want_key(p);
      break;
    default:
      state = after_value(p);
      break;
    }
  }
  return state;
}

static void release(parser *p) {
  if (p->frames != p->frame_buf)
    mcp__free(p->frames);
  if (p->keys != p->key_buf)
    mcp__free(p->keys);
}

int mcp__json_parse(const char *buf, size_t len, const mcp__json_limits *lim,
                    mcp__json_doc *doc, char *err, size_t errlen) {
  parser p;
  p.s = (const unsigned char *)buf;
  p.n = len;
  p.pos = 0;
  p.max_depth = lim && lim->max_depth ? lim->max_depth : DEFAULT_DEPTH;
  p.max_string = lim && lim->max_string ? lim->max_string : DEFAULT_STRING;
  p.max_members = lim && lim->max_members ? lim->max_members : DEFAULT_MEMBERS;
  p.max_number = lim && lim->max_number ? lim->max_number : DEFAULT_NUMBER;
  p.err = err;
  p.errlen = errlen;
  p.root = NULL;
  p.frames = p.frame_buf;
  p.depth = 0;
  p.frames_cap = INLINE_FRAMES;
  p.keys = p.key_buf;
  p.nkeys = 0;
  p.keys_cap = INLINE_KEYS;
  p.key = NULL;
  p.key_owned = 0;
  p.key_is_raw = 0;
  p.doc = doc;
  p.more_cap = 0;
  p.pooled = lim && lim->pooled;
  p.cur = NULL;
  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (doc == NULL || (buf == NULL && len > 0))
    return fail(&p, MCP_EINVAL, 0, "invalid argument");
  *doc = (mcp__json_doc){0};
  if (buf == NULL)
    p.s = (const unsigned char *)"";

  pthread_once(&intern_once, intern_fill);
  int rc = parse_document(&p);
  release(&p);
  doc->root = p.root;
  if (rc != 0) {
    if (p.key_owned && !p.pooled)
      mcp__free((char *)p.key);
    mcp__json_doc_free(doc);
  }
  return rc;
}

static const mcp__json_raw *raw_entry(const mcp__json_doc *doc, size_t i) {
  return i < MCP__JSON_RAW_SLOTS ? &doc->raws[i]
                                 : &doc->more[i - MCP__JSON_RAW_SLOTS];
}

void mcp__json_doc_free(mcp__json_doc *doc) {
  if (doc == NULL)
    return;
  for (size_t i = 0; i < doc->nraws; i++)
    mcp__free(raw_entry(doc, i)->heap);
  mcp__free(doc->more);
  if (doc->pool)
    mcp__json_pool_release(doc->pool);
  else
    cJSON_Delete(doc->root);
  *doc = (mcp__json_doc){0};
}

const char *mcp__json_raw_at(const mcp__json_doc *doc, size_t i,
                             const cJSON **node, size_t *len) {
  if (doc == NULL || i >= doc->nraws)
    return NULL;
  const mcp__json_raw *r = raw_entry(doc, i);
  if (node)
    *node = r->node;
  if (len)
    *len = r->len;
  return r->heap ? r->heap : r->small;
}

const char *mcp__json_raw_text(const mcp__json_doc *doc, const cJSON *node,
                               size_t *len) {
  if (doc == NULL || node == NULL)
    return NULL;
  for (size_t i = 0; i < doc->nraws; i++)
    if (raw_entry(doc, i)->node == node)
      return mcp__json_raw_at(doc, i, NULL, len);
  return NULL;
}

const cJSON *mcp__json_member(const cJSON *obj, const char *key) {
  if (obj == NULL || key == NULL || !cJSON_IsObject(obj))
    return NULL;
  for (const cJSON *e = obj->child; e; e = e->next)
    if (e->string && mcp__streq(e->string, key))
      return e;
  return NULL;
}

const char *mcp__json_number_text(const cJSON *node) {
  if (node == NULL || (node->type & 0xFF) != cJSON_Number)
    return NULL;
  return node->valuestring;
}

int mcp__json_integer(const cJSON *node, long long *out, int *overflow) {
  const char *t = mcp__json_number_text(node);
  if (overflow)
    *overflow = 0;
  if (t == NULL)
    return 0;
  int neg = *t == '-';
  if (neg)
    t++;
  if (!is_digit((unsigned char)*t))
    return 0;
  if (out == NULL && overflow == NULL) {
    /* Only whether it is one (a request id, say): every byte a digit. */
    while (is_digit((unsigned char)*t))
      t++;
    return *t == '\0';
  }
  /* The magnitude of LLONG_MIN is one more than LLONG_MAX. v * 10 + d
   * passes limit exactly when v passes limit / 10, or equals it and d
   * passes the last digit of limit: no division per digit. */
  unsigned long long limit = (unsigned long long)LLONG_MAX + (neg ? 1 : 0);
  const unsigned long long top = limit / 10;
  const unsigned last = (unsigned)(limit % 10);
  unsigned long long v = 0;
  int over = 0;
  for (; *t; t++) {
    if (!is_digit((unsigned char)*t))
      return 0;
    unsigned d = (unsigned)(*t - '0');
    if (over || v > top || (v == top && d > last))
      over = 1;
    else
      v = v * 10 + d;
  }
  if (over) {
    if (overflow)
      *overflow = 1;
    return 1;
  }
  if (out)
    *out = neg ? (v == 0 ? 0 : -(long long)(v - 1) - 1) : (long long)v;
  return 1;
}

int mcp__json_quote(mcp__buf *buf, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  size_t run = 0;
  mcp__buf_putc(buf, '"');
  for (size_t i = 0; (i = scan_run(u, len, i, QUOTE)) < len; i++) {
    unsigned char c = u[i];
    char e[6] = {'\\', (char)c, 0, 0, 0, 0};
    size_t elen = 2;
    switch (c) {
    case '"':
    case '\\':
      break;
    case '\b':
      e[1] = 'b';
      break;
    case '\f':
      e[1] = 'f';
      break;
    case '\n':
      e[1] = 'n';
      break;
    case '\r':
      e[1] = 'r';
      break;
    case '\t':
      e[1] = 't';
      break;
    default:
      e[1] = 'u';
      e[2] = '0';
      e[3] = '0';
      e[4] = hex[c >> 4];
      e[5] = hex[c & 15];
      elen = 6;
      break;
    }
    mcp__buf_append(buf, s + run, i - run);
    mcp__buf_append(buf, e, elen);
    run = i + 1;
  }
  mcp__buf_append(buf, s + run, len - run);
  return mcp__buf_putc(buf, '"');
}
