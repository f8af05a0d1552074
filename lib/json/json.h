/* The strict JSON layer (lib/json): RFC 8259 parsing straight into a
 * cJSON tree, and the writer and text checks that go with it; the one JSON
 * grammar of lib/, for messages, schemas and JWTs alike.
 *
 * Private to lib/. cJSON 1.7.15 accepts a great deal that RFC 8259 forbids
 * (invalid UTF-8, raw control characters, "\u0000", duplicate keys, trailing
 * garbage); this parser refuses all of it and builds the tree in one pass, so
 * nothing the rest of the library reads ever went through cJSON's own parser.
 *
 * Invariants of a tree built here, which the rest of lib/ relies on:
 *  - every string is valid UTF-8 without NUL bytes, so C string functions are
 *    safe on it;
 *  - no object holds two members with the same (decoded) key, so a
 *    case-sensitive lookup is unambiguous;
 *  - every number node keeps the exact text it was written as in its
 *    valuestring (read it with mcp__json_number_text), so integers beyond
 *    2^53 are not rounded when they matter (request ids, typed getters);
 *    such nodes are read-only: cJSON_SetNumberValue would leave the old
 *    text behind;
 *  - the raw bytes of members named "id" or "requestId" (at depth <= 3) are
 *    kept, so a request id can be echoed exactly as received.
 *
 * To save allocations, a node's type may carry cJSON's flag bits: a string
 * or number node keeps its text in the same block as the node itself
 * (cJSON_IsReference), and a member whose key is a common MCP or JSON Schema
 * name points at a static copy of it (cJSON_StringIsConst). cJSON_Delete,
 * cJSON_Duplicate, cJSON_Detach* and re-adding a detached member elsewhere
 * all honour these flags, but code must read a type with cJSON_Is* or
 * (type & 0xFF), never compare it whole, and must not change a parsed
 * node's valuestring or string in place (cJSON_SetValuestring refuses).
 */
#ifndef MCP_JSON_H
#define MCP_JSON_H

#include <stddef.h>

#include "base.h"

struct cJSON;

/* Limits; a zero member means the default given in its comment. */
typedef struct mcp__json_limits {
  size_t max_depth;   /* nesting of arrays and objects; 0 = 64 */
  size_t max_string;  /* bytes in one decoded string or key; 0 = 4 MiB */
  size_t max_members; /* members of one object or elements of one array;
                         0 = 100000 */
  size_t max_number;  /* characters in one number; 0 = 63 */
  int pooled; /* nonzero: the nodes live in blocks the document owns (see
                 mcp__json_doc.pool), for messages: a handful of
                 allocations per message instead of one per node */
} mcp__json_limits;

/* Captured texts shorter than this many bytes live in the capture itself;
 * request ids are short, so a typical capture needs no allocation. */
#define MCP__JSON_RAW_INLINE 40
/* This many captures live in the document itself: a request has one id, a
 * cancellation one requestId; only a batch needs more. */
#define MCP__JSON_RAW_SLOTS 2

/* The raw text of one scalar value, as it appeared in the input. Read it
 * with mcp__json_raw_text or mcp__json_raw_at. */
typedef struct mcp__json_raw {
  const struct cJSON *node; /* the node built for the value */
  size_t len;
  char *heap; /* the text when len >= MCP__JSON_RAW_INLINE; owned */
  char small[MCP__JSON_RAW_INLINE]; /* the text otherwise, NUL-terminated */
} mcp__json_raw;

/* The blocks that hold the nodes of a pooled parse; reference-counted, so
 * that a subtree detached from the document (the arguments of a call) can
 * outlive it. */
typedef struct mcp__json_pool mcp__json_pool;

/* A parsed document. Raw texts handed out point into it, so a document is
 * used where mcp__json_parse filled it, never copied.
 *
 * In a pooled document (mcp__json_limits.pooled) no node may be freed on
 * its own: never cJSON_Delete a node of it, and never add one to a tree
 * that will be (cJSON_Duplicate makes an independent copy). A subtree
 * detached from it stays valid while a reference to the pool is held
 * (mcp__json_pool_ref). */
typedef struct mcp__json_doc {
  struct cJSON *root;   /* owned; NULL only after a failure */
  mcp__json_pool *pool; /* one reference, or NULL: nodes are allocated one
                           by one and root is freed with cJSON_Delete */
  size_t nraws;         /* captured "id"/"requestId" values */
  mcp__json_raw raws[MCP__JSON_RAW_SLOTS]; /* the first captures */
  mcp__json_raw *more; /* the rest, nraws - MCP__JSON_RAW_SLOTS of them;
                          owned, NULL when there are none */
} mcp__json_doc;

/* Parses exactly one JSON text of len bytes (no NUL terminator needed;
 * leading and trailing JSON whitespace allowed, anything else after the value
 * is an error). lim may be NULL for the defaults.
 * Returns 0 and fills *doc, or a negative MCP_E* code (MCP_EPARSE for input
 * that is not strict JSON, MCP_ELIMIT when a limit was exceeded, MCP_ENOMEM)
 * and writes a one-line, human-readable reason with the byte offset into err
 * (errlen bytes, may be 0). On failure *doc is left empty and nothing leaks. */
int mcp__json_parse(const char *buf, size_t len, const mcp__json_limits *lim,
                    mcp__json_doc *doc, char *err, size_t errlen);

/* Frees what *doc owns and empties it; a zeroed doc is fine. A pooled
 * document's nodes go when the last reference to its pool does. */
void mcp__json_doc_free(mcp__json_doc *doc);

/* Takes one more reference to pool (NULL is fine) and returns it. Drop it
 * with mcp__json_pool_release. Any thread. */
mcp__json_pool *mcp__json_pool_ref(mcp__json_pool *pool);

/* Drops one reference to pool (NULL is fine); the last one frees every
 * node of the document. Any thread. */
void mcp__json_pool_release(mcp__json_pool *pool);

/* The raw text of node if it is one of the captured "id"/"requestId" values,
 * else NULL. *len receives its length when not NULL. The text belongs to
 * doc and lives as long as it does. */
const char *mcp__json_raw_text(const mcp__json_doc *doc,
                               const struct cJSON *node, size_t *len);

/* The raw text of capture i (0 <= i < doc->nraws, in input order), or NULL
 * beyond the last. *node and *len receive its node and length when not
 * NULL. The text belongs to doc. */
const char *mcp__json_raw_at(const mcp__json_doc *doc, size_t i,
                             const struct cJSON **node, size_t *len);

/* The static copy of the len bytes at s if they spell one of the keys the
 * parser interns, else NULL. Two parses of an interned key give the same
 * pointer. */
const char *mcp__json_intern(const char *s, size_t len);

/* The member of obj named key, compared case-sensitively (byte for byte),
 * or NULL. NULL obj or key, and an obj that is not an object, find
 * nothing. The one member lookup of lib/: a tree from mcp__json_parse has no
 * duplicate keys, so the first match is the only one. The node returned
 * belongs to obj's tree. */
const struct cJSON *mcp__json_member(const struct cJSON *obj, const char *key);

/* The exact text of a number node built by mcp__json_parse (NULL for other
 * nodes, or for numbers created elsewhere). */
const char *mcp__json_number_text(const struct cJSON *node);

/* Returns nonzero when a number node's text is an integer (no fraction, no
 * exponent) and stores its value in *out if it fits in int64_t; a valid
 * integer that does not fit returns nonzero with *overflow set to 1.
 * Returns 0 for anything else. out and overflow may be NULL. */
int mcp__json_integer(const struct cJSON *node, long long *out, int *overflow);

/* Appends the JSON encoding of the len bytes at s (valid UTF-8) as a quoted
 * string to buf. Escapes '"', '\\' and control characters only, so output
 * stays compact and identical for identical input. */
int mcp__json_quote(mcp__buf *buf, const char *s, size_t len);

/* Appends the compact JSON text of node to b (json_write.c). Numbers
 * built by mcp__json_parse are written exactly as received; other numbers as
 * cJSON would write them (non-finite ones as null). Never writes a raw
 * newline, so the output is a valid stdio frame. */
int mcp__json_write(mcp__buf *b, const struct cJSON *node);

/* Returns nonzero when the len bytes at s are valid UTF-8 without NUL
 * (json_write.c). */
int mcp__utf8_valid(const char *s, size_t len);

/* The code points of the len bytes of valid UTF-8 at s (json_write.c). */
size_t mcp__utf8_count(const char *s, size_t len);

/* Writes code point cp (at most U+10FFFF, not a surrogate) as UTF-8 at out,
 * which has room for 4 bytes; returns the end of what it wrote (json.c). */
char *mcp__utf8_put(char *out, unsigned long cp);

/* Cuts s (NUL-terminated) to its longest valid UTF-8 prefix, so text that
 * a truncating format may have split mid-character can still go into JSON
 * (json_write.c). */
void mcp__utf8_trim(char *s);

/* Like mcp__json_integer, but with JSON Schema's meaning of "integer": any
 * number whose value has no fractional part, so 2.0 and 1e2 count
 * (json_write.c). Request ids keep the stricter mcp__json_integer. */
int mcp__json_integral(const struct cJSON *node, long long *out, int *overflow);

#endif
