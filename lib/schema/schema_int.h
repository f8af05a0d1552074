/* The JSON Schema module's private layout, shared by lib/schema*.c only.
 *
 * A schema is compiled into an array of nodes, one per subschema, that
 * refer to each other by index. Everything a node needs at validation time
 * is decided when it is compiled: keyword values are checked and converted
 * (numbers to exact decimals, patterns to programs, property names to a
 * hash table, $ref to a node index), so validating is a walk over the
 * instance with no parsing, no lookups by name and, for all but large
 * objects and arrays, no allocation. */
#ifndef MCP_SCHEMA_INT_H
#define MCP_SCHEMA_INT_H

#include <stddef.h>
#include <stdint.h>

#include "regex.h"
#include "schema.h"

struct cJSON;

/* ---- exact decimals (schema_num.c) ---------------------------------------
 * JSON numbers compared by value, from their text: 1, 1.0 and 10e-1 are
 * equal, 9007199254740993 is not 9007199254740992, and multipleOf does not
 * suffer binary rounding. */
#define MCP__DEC_DIGITS 96 /* significant digits kept; more are cut */

typedef struct mcp__dec {
  int neg;  /* 1 when negative (never for zero) */
  int nd;   /* digits in d; 0 means the value is zero */
  long exp; /* value = 0.d[0]d[1]...d[nd-1] x 10^exp */
  char d[MCP__DEC_DIGITS];
} mcp__dec;

/* Reads a number node: its exact text when the strict parser built it,
 * else its double. Returns 0, or -1 for a non-finite double. */
int mcp__dec_from_json(const struct cJSON *num, mcp__dec *out);
/* <0, 0, >0 as a is below, equal to or above b. */
int mcp__dec_cmp(const mcp__dec *a, const mcp__dec *b);
int mcp__dec_is_integer(const mcp__dec *a);
/* Is x an integer multiple of m (m > 0)? */
int mcp__dec_multiple_of(const mcp__dec *x, const mcp__dec *m);

/* JSON equality as JSON Schema defines it (numbers by value, objects
 * unordered). Adds the nodes compared to *steps; gives up (returning -1)
 * beyond depth levels of nesting. Returns 1 equal, 0 different. */
int mcp__json_equal(const struct cJSON *a, const struct cJSON *b, int depth,
                    unsigned long *steps);
/* A hash consistent with mcp__json_equal; -1 as for it, else 0. */
int mcp__json_hash(const struct cJSON *v, int depth, unsigned long *steps,
                   uint64_t *out);

/* ---- URI references (schema_uri.c) ---------------------------------------
 * Resolves ref against the absolute URI base (RFC 3986 section 5.2) and
 * appends the result to b, dropping an empty fragment. Returns 0, or
 * MCP_ENOMEM. */
int mcp__uri_resolve(mcp__buf *b, const char *base, const char *ref);

/* ---- formats (schema_format.c) ------------------------------------------- */
typedef enum mcp__format {
  MCP__FMT_NONE = 0, /* unknown or annotation-only */
  MCP__FMT_DATE_TIME,
  MCP__FMT_DATE,
  MCP__FMT_EMAIL,
  MCP__FMT_URI,
  MCP__FMT_UUID,
  MCP__FMT_IPV4,
  MCP__FMT_IPV6
} mcp__format;

mcp__format mcp__format_find(const char *name);
const char *mcp__format_name(mcp__format f);
/* A valid example and the defining document, for error messages. */
const char *mcp__format_example(mcp__format f);
/* Does the NUL-terminated s conform to format f? */
int mcp__format_check(mcp__format f, const char *s);

/* ---- compiled schemas (schema.c, validated by schema_eval.c) ------------- */
#define MCP__SK_NONE UINT32_MAX
typedef uint32_t mcp__sk_idx;

/* Instance types as bits of a mask; integer is its own bit so that
 * "type":"integer" can be told from "type":"number". */
enum {
  MCP__T_NULL = 1,
  MCP__T_BOOLEAN = 2,
  MCP__T_OBJECT = 4,
  MCP__T_ARRAY = 8,
  MCP__T_NUMBER = 16,
  MCP__T_STRING = 32,
  MCP__T_INTEGER = 64
};

/* Node flags. */
enum {
  MCP__SK_TRUE = 1, /* accepts everything and evaluates nothing */
  MCP__SK_FALSE = 2 /* the schema false */
};

typedef struct mcp__sk_num {
  unsigned has; /* MCP__NUM_* bits */
  mcp__dec min, max, xmin, xmax, mult;
  const struct cJSON *min_src, *max_src, *xmin_src, *xmax_src, *mult_src;
} mcp__sk_num;

enum {
  MCP__NUM_MIN = 1,
  MCP__NUM_MAX = 2,
  MCP__NUM_XMIN = 4,
  MCP__NUM_XMAX = 8,
  MCP__NUM_MULT = 16
};

typedef struct mcp__sk_str {
  size_t min_len, max_len; /* in code points; max SIZE_MAX = none */
  mcp__regex *pattern;     /* NULL = none */
  const char *pattern_src;
  mcp__format format; /* asserted only when compiled to assert formats */
} mcp__sk_str;

typedef struct mcp__sk_arr {
  mcp__sk_idx *prefix; /* prefixItems */
  size_t nprefix;
  mcp__sk_idx items, contains, unevaluated;
  size_t min_items, max_items;       /* max SIZE_MAX = none */
  size_t min_contains, max_contains; /* 1 and SIZE_MAX by default */
  int unique;
} mcp__sk_arr;

/* A name the object keywords mention: a property, a required name, a
 * dependentRequired or dependentSchemas trigger or dependency. */
typedef struct mcp__sk_ent {
  const char *name;
  size_t len;
  uint32_t hash;
  mcp__sk_idx prop; /* properties[name], or MCP__SK_NONE */
  uint32_t stamp;   /* compile time: the name list that last listed it */
} mcp__sk_ent;

typedef struct mcp__sk_pat {
  mcp__regex *re;
  const char *src;
  mcp__sk_idx node;
} mcp__sk_pat;

typedef struct mcp__sk_depreq {
  uint32_t trigger; /* entry indexes */
  uint32_t *deps;
  size_t ndeps;
} mcp__sk_depreq;

typedef struct mcp__sk_depsch {
  uint32_t trigger;
  mcp__sk_idx node;
} mcp__sk_depsch;

typedef struct mcp__sk_obj {
  mcp__sk_ent *ents;
  size_t nents;
  uint32_t *slots; /* open addressing: entry index + 1, 0 = empty */
  size_t mask;     /* slot count - 1 */
  size_t nprops;   /* entries with a properties subschema */
  mcp__sk_pat *pats;
  size_t npats;
  mcp__sk_idx additional, unevaluated, names;
  size_t min_props, max_props; /* max SIZE_MAX = none */
  uint32_t *required;          /* entry indexes, in the schema's order */
  size_t nrequired;
  mcp__sk_depreq *depreq;
  size_t ndepreq;
  mcp__sk_depsch *depsch;
  size_t ndepsch;
} mcp__sk_obj;

/* Where a $dynamicAnchor of some name lives. */
typedef struct mcp__sk_cand {
  uint32_t res;
  mcp__sk_idx node;
} mcp__sk_cand;

typedef struct mcp__sk_app {
  mcp__sk_idx *all_of, *any_of, *one_of;
  size_t nall_of, nany_of, none_of;
  mcp__sk_idx not_, if_, then_, else_;
  mcp__sk_idx ref;     /* $ref */
  mcp__sk_idx dynref;  /* $dynamicRef, as first resolved */
  mcp__sk_cand *cands; /* when dynamic: the anchors it may land on */
  size_t ncands;
  const char *dynname;                /* when dynamic: the anchor's name */
  const char *ref_path, *dynref_path; /* schema pointers, for errors */
} mcp__sk_app;

/* An enum value and its hash (mcp__json_hash). */
typedef struct mcp__sk_hv {
  uint64_t h;
  const struct cJSON *v;
} mcp__sk_hv;

typedef struct mcp__sk_node {
  unsigned flags;
  unsigned types; /* MCP__T_* mask; 0 = no "type" keyword */
  uint32_t res;   /* the schema resource (by $id) it belongs to */
  const struct cJSON *src;
  const struct cJSON *enum_;  /* the array, or NULL */
  const struct cJSON *const_; /* the value, or NULL */
  mcp__sk_hv *enum_index;     /* large enums: by hash; else NULL */
  size_t nenum;
  mcp__sk_num *num;
  mcp__sk_str *str;
  mcp__sk_arr *arr;
  mcp__sk_obj *obj;
  mcp__sk_app *app;
} mcp__sk_node;

/* A schema resource: the document, or a subschema with "$id". */
typedef struct mcp__sk_res {
  char *uri; /* absolute, without fragment */
  mcp__sk_idx root;
  const struct cJSON *json;
} mcp__sk_res;

typedef struct mcp__sk_block mcp__sk_block;

struct mcp__schema {
  mcp__sk_node *nodes;
  size_t nnodes, capnodes;
  mcp__sk_res *res;
  size_t nres, capres;
  mcp__sk_idx root;
  unsigned flags;          /* MCP__SCHEMA_* from the options */
  int dynamic;             /* some $dynamicRef is dynamic: track scope */
  unsigned long max_steps; /* per validation */
  size_t max_scratch;      /* the largest regex scratch needed */
  int flat;                /* an object of typed members only (see
                              mcp__sk_flat): most instances are settled
                              without the evaluator */
  mcp__sk_block *blocks;   /* the arena everything else lives in */
  mcp__regex **regexes;    /* to free */
  size_t nregexes, capregexes;
};

/* Whether a compiled schema is flat: its root asks only for an object
 * (type, properties, required, additionalProperties, min/maxProperties)
 * whose property and additionalProperties subschemas are true, false or
 * only a "type" (schema_eval.c). */
int mcp__sk_flat(const mcp__schema *s);

/* Hash of a property name, shared by the compiler and the validator. */
uint32_t mcp__sk_hash(const char *s, size_t len);

/* Limits of validation (schema_eval.c). Nested evaluations recurse;
 * at this depth validation uses about 130 KB of stack (gcc -O2, x86-64). */
#define MCP__SK_MAX_EVAL_DEPTH 256 /* nested subschema evaluations */

#endif
