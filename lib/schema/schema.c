/* JSON Schema 2020-12: compiling a schema document once, at registration.
 *
 * The compiler walks the document through the keywords that hold
 * subschemas, checks every keyword it knows (an invalid schema is refused,
 * naming the JSON pointer of the offending value), and turns each
 * subschema into a node (see schema_int.h). Identifiers come next: every
 * "$id", "$anchor" and "$dynamicAnchor" is resolved to an absolute URI and
 * every "$ref" and "$dynamicRef" to a node, within the same document (or
 * documents the caller hands over already parsed) — nothing is ever
 * fetched, from the network or the filesystem. A reference
 * cycle that never descends into the instance would make validation loop,
 * so it is refused here too. Cost is bounded by a cap on subschemas, on
 * nesting, and on the size of each regular expression.
 *
 * The compiled form borrows the document (names, enum and const values point
 * into it), so the document must outlive it. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema_int.h"

#define DEFAULT_BASE "mcp://schema/root"
#define META_2020_12 "https://json-schema.org/draft/2020-12/schema"
#define MAX_SCHEMA_DEPTH 128
#define MAX_PATH 512

/* ---- arena --------------------------------------------------------------- */

struct mcp__sk_block {
  mcp__sk_block *next;
  size_t used, cap;
  max_align_t data[];
};

/* Zeroed memory that lives as long as the schema. */
static void *arena(mcp__schema *s, size_t n) {
  size_t a = sizeof(max_align_t);
  n = (n + a - 1) / a * a;
  mcp__sk_block *b = s->blocks;
  if (b == NULL || b->cap - b->used < n) {
    size_t cap = b ? b->cap * 2 : 1024;
    if (cap > 65536)
      cap = 65536;
    if (cap < n)
      cap = n;
    b = mcp__malloc(sizeof *b + cap);
    if (b == NULL)
      return NULL;
    b->next = s->blocks;
    b->used = 0;
    b->cap = cap;
    s->blocks = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

static char *arena_strdup(mcp__schema *s, const char *str, size_t n) {
  char *p = arena(s, n + 1);
  if (p) {
    memcpy(p, str, n);
    p[n] = '\0';
  }
  return p;
}

uint32_t mcp__sk_hash(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* ---- the compiler's state ------------------------------------------------ */

/* What an absolute URI (with or without fragment) names. */
enum { ID_RESOURCE, ID_ANCHOR, ID_DYNAMIC_ANCHOR };

typedef struct id_ent {
  const char *key; /* in the arena; NULL = empty slot */
  uint32_t hash;
  int kind;
  uint32_t res;
  mcp__sk_idx node;
} id_ent;

typedef struct ptr_ent {
  const cJSON *json; /* NULL = empty slot */
  mcp__sk_idx node;
} ptr_ent;

typedef struct pending {
  mcp__sk_idx node;
  int dynamic;
  const char *uri;  /* resolved, in the arena */
  const char *path; /* the keyword's pointer, in the arena */
} pending;

typedef struct dyn_anchor {
  uint32_t res;
  const char *name;
  mcp__sk_idx node;
} dyn_anchor;

typedef struct cc {
  mcp__schema *s;
  const mcp__schema_options *opt;
  size_t max_nodes, max_prog;
  char *err;
  size_t errlen;
  int rc;
  char path[MAX_PATH]; /* JSON pointer of what is being compiled */
  size_t plen;
  int depth;
  id_ent *ids;
  size_t nids, capids; /* capids is a power of two */
  ptr_ent *ptrs;
  size_t nptrs, capptrs;
  pending *refs;
  size_t nrefs, caprefs;
  dyn_anchor *dyns;
  size_t ndyns, capdyns;
  uint32_t stamp; /* see name_list */
} cc;

static void cc_error(cc *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Drops the bytes of s that are not part of a valid UTF-8 sequence. The
 * messages quote names and patterns from the schema, cut to a length, and
 * a cut can fall inside a character; the message must stay UTF-8 (it may
 * end up in JSON). */
static void utf8_repair(char *s) {
  size_t w = 0;
  for (size_t r = 0; s[r];) {
    unsigned char b = (unsigned char)s[r];
    size_t n = b < 0x80         ? 1
               : (b >> 5) == 6  ? 2
               : (b >> 4) == 14 ? 3
               : (b >> 3) == 30 ? 4
                                : 0;
    size_t k = 0;
    while (k < n && s[r + k])
      k++;
    if (n == 0 || k < n || !mcp__utf8_valid(s + r, n)) {
      r++;
      continue;
    }
    memmove(s + w, s + r, n);
    w += n;
    r += n;
  }
  s[w] = '\0';
}

/* Records the first error, prefixed with where it is. */
static void cc_error(cc *c, const char *fmt, ...) {
  if (c->rc)
    return;
  c->rc = MCP_EINVAL;
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (c->plen == 0)
    mcp__fmt(c->err, c->errlen, "at the root: %s", why);
  else
    mcp__fmt(c->err, c->errlen, "at %s: %s", c->path, why);
  if (c->err && c->errlen)
    utf8_repair(c->err);
}

static void cc_oom(cc *c) {
  if (c->rc == 0) {
    c->rc = MCP_ENOMEM;
    mcp__fmt(c->err, c->errlen, "out of memory");
  }
}

static void *cc_arena(cc *c, size_t n) {
  void *p = arena(c->s, n);
  if (p == NULL)
    cc_oom(c);
  return p;
}

/* Appends "/token" (escaped as RFC 6901 says) to the path; returns the
 * length to restore. A path too long to keep ends in "...". */
static size_t path_push(cc *c, const char *token) {
  size_t save = c->plen;
  size_t n = c->plen;
  const size_t cap = MAX_PATH - 4;
  if (n < cap)
    c->path[n++] = '/';
  for (const char *t = token; *t && n < cap; t++) {
    if (*t == '~' || *t == '/') {
      c->path[n++] = '~';
      if (n < cap)
        c->path[n++] = *t == '~' ? '0' : '1';
    } else {
      c->path[n++] = *t;
    }
  }
  if (n >= cap) {
    memcpy(c->path + cap, "...", 4);
    n = cap + 3;
  }
  c->path[n] = '\0';
  c->plen = n;
  return save;
}

static size_t path_push_index(cc *c, size_t i) {
  char tmp[24];
  snprintf(tmp, sizeof tmp, "%zu", i);
  return path_push(c, tmp);
}

static void path_pop(cc *c, size_t save) {
  c->plen = save;
  c->path[save] = '\0';
}

/* ---- identifier and pointer maps ------------------------------------------
 */

static int ids_grow(cc *c) {
  size_t cap = c->capids ? c->capids * 2 : 64;
  id_ent *t = mcp__calloc(cap, sizeof *t);
  if (t == NULL) {
    cc_oom(c);
    return -1;
  }
  for (size_t i = 0; i < c->capids; i++) {
    if (c->ids[i].key == NULL)
      continue;
    size_t j = c->ids[i].hash & (cap - 1);
    while (t[j].key)
      j = (j + 1) & (cap - 1);
    t[j] = c->ids[i];
  }
  mcp__free(c->ids);
  c->ids = t;
  c->capids = cap;
  return 0;
}

static id_ent *ids_find(const cc *c, const char *key) {
  if (c->capids == 0)
    return NULL;
  uint32_t h = mcp__sk_hash(key, strlen(key));
  for (size_t j = h & (c->capids - 1); c->ids[j].key;
       j = (j + 1) & (c->capids - 1))
    if (c->ids[j].hash == h && strcmp(c->ids[j].key, key) == 0)
      return &c->ids[j];
  return NULL;
}

/* Registers key; returns 0, or -1 with the error recorded (a duplicate is
 * an error: two subschemas cannot share an identifier). */
static int ids_add(cc *c, const char *key, int kind, uint32_t res,
                   mcp__sk_idx node) {
  const id_ent *old = ids_find(c, key);
  if (old && old->kind == kind && old->node == node)
    return 0; /* a document whose "$id" is the URI it was given under */
  if (old) {
    cc_error(c, "the identifier \"%.200s\" is defined twice", key);
    return -1;
  }
  if ((c->nids + 1) * 2 > c->capids && ids_grow(c))
    return -1;
  char *k = arena_strdup(c->s, key, strlen(key));
  if (k == NULL) {
    cc_oom(c);
    return -1;
  }
  uint32_t h = mcp__sk_hash(k, strlen(k));
  size_t j = h & (c->capids - 1);
  while (c->ids[j].key)
    j = (j + 1) & (c->capids - 1);
  c->ids[j] = (id_ent){k, h, kind, res, node};
  c->nids++;
  return 0;
}

static size_t ptr_hash(const cJSON *p) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 17;
  v *= 0x9E3779B1u;
  return (size_t)(v ^ (v >> 15));
}

static int ptrs_add(cc *c, const cJSON *json, mcp__sk_idx node) {
  if ((c->nptrs + 1) * 2 > c->capptrs) {
    size_t cap = c->capptrs ? c->capptrs * 2 : 64;
    ptr_ent *t = mcp__calloc(cap, sizeof *t);
    if (t == NULL) {
      cc_oom(c);
      return -1;
    }
    for (size_t i = 0; i < c->capptrs; i++) {
      if (c->ptrs[i].json == NULL)
        continue;
      size_t j = ptr_hash(c->ptrs[i].json) & (cap - 1);
      while (t[j].json)
        j = (j + 1) & (cap - 1);
      t[j] = c->ptrs[i];
    }
    mcp__free(c->ptrs);
    c->ptrs = t;
    c->capptrs = cap;
  }
  size_t j = ptr_hash(json) & (c->capptrs - 1);
  while (c->ptrs[j].json)
    j = (j + 1) & (c->capptrs - 1);
  c->ptrs[j] = (ptr_ent){json, node};
  c->nptrs++;
  return 0;
}

static mcp__sk_idx ptrs_find(const cc *c, const cJSON *json) {
  if (c->capptrs == 0)
    return MCP__SK_NONE;
  for (size_t j = ptr_hash(json) & (c->capptrs - 1); c->ptrs[j].json;
       j = (j + 1) & (c->capptrs - 1))
    if (c->ptrs[j].json == json)
      return c->ptrs[j].node;
  return MCP__SK_NONE;
}

/* Grows a caller-owned array (mcp__realloc) to hold one more element. */
static int push_slot(cc *c, void **arr, size_t *cap, size_t n, size_t sz) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  void *q = mcp__realloc(*arr, ncap * sz);
  if (q == NULL) {
    cc_oom(c);
    return -1;
  }
  *arr = q;
  *cap = ncap;
  return 0;
}

/* ---- keyword values ------------------------------------------------------ */

static mcp__sk_node *node_at(cc *c, mcp__sk_idx i) { return &c->s->nodes[i]; }

/* A non-negative integer keyword ("maxLength": 3, or 3.0). */
static int get_count(cc *c, const cJSON *obj, const char *key, size_t *out) {
  const cJSON *v = mcp__json_member(obj, key);
  if (v == NULL)
    return 0;
  mcp__dec d;
  size_t save = path_push(c, key);
  if (!cJSON_IsNumber(v) || mcp__dec_from_json(v, &d) != 0 ||
      !mcp__dec_is_integer(&d) || d.neg) {
    cc_error(c, "must be a non-negative integer");
    path_pop(c, save);
    return -1;
  }
  path_pop(c, save);
  size_t n = 0;
  if (d.exp > 19) {
    n = SIZE_MAX; /* more than any instance can have */
  } else {
    for (long i = 0; i < d.exp; i++) {
      unsigned digit = i < d.nd ? (unsigned)(d.d[i] - '0') : 0;
      n = n > (SIZE_MAX - digit) / 10 ? SIZE_MAX : n * 10 + digit;
    }
  }
  *out = n;
  return 1;
}

/* A number keyword; returns 1 when present, 0 when absent, -1 on error. */
static int get_number(cc *c, const cJSON *obj, const char *key, mcp__dec *out,
                      const cJSON **src) {
  const cJSON *v = mcp__json_member(obj, key);
  if (v == NULL)
    return 0;
  if (!cJSON_IsNumber(v) || mcp__dec_from_json(v, out) != 0) {
    size_t save = path_push(c, key);
    cc_error(c, "must be a number");
    path_pop(c, save);
    return -1;
  }
  *src = v;
  return 1;
}

static int anchor_name_valid(const char *s) {
  if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
    return 0;
  for (s++; *s; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
          (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
      return 0;
  return 1;
}

static int type_bit(const char *name) {
  static const struct {
    const char *name;
    int bit;
  } types[] = {{"null", MCP__T_NULL},      {"boolean", MCP__T_BOOLEAN},
               {"object", MCP__T_OBJECT},  {"array", MCP__T_ARRAY},
               {"number", MCP__T_NUMBER},  {"string", MCP__T_STRING},
               {"integer", MCP__T_INTEGER}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strcmp(name, types[i].name) == 0)
      return types[i].bit;
  return 0;
}

static mcp__sk_idx compile_node(cc *c, const cJSON *j, uint32_t res);

/* Compiles the subschema obj[key] (path .../key); MCP__SK_NONE when absent
 * or on error (then c->rc is set). */
static mcp__sk_idx child(cc *c, const cJSON *obj, const char *key,
                         uint32_t res) {
  const cJSON *v = mcp__json_member(obj, key);
  if (v == NULL)
    return MCP__SK_NONE;
  size_t save = path_push(c, key);
  mcp__sk_idx i = compile_node(c, v, res);
  path_pop(c, save);
  return i;
}

/* A non-empty array of subschemas (allOf, anyOf, oneOf, prefixItems). */
static int child_array(cc *c, const cJSON *obj, const char *key, uint32_t res,
                       mcp__sk_idx **out, size_t *n) {
  const cJSON *v = mcp__json_member(obj, key);
  if (v == NULL)
    return 0;
  size_t save = path_push(c, key);
  size_t count = (size_t)cJSON_GetArraySize(v);
  if (!cJSON_IsArray(v) || count == 0) {
    cc_error(c, "must be a non-empty array of schemas");
    path_pop(c, save);
    return -1;
  }
  mcp__sk_idx *arr = cc_arena(c, count * sizeof *arr);
  if (arr == NULL) {
    path_pop(c, save);
    return -1;
  }
  size_t i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    size_t s2 = path_push_index(c, i);
    arr[i] = compile_node(c, e, res);
    path_pop(c, s2);
    if (c->rc)
      break;
  }
  path_pop(c, save);
  *out = arr;
  *n = count;
  return c->rc ? -1 : 1;
}

/* ---- object keywords ----------------------------------------------------- */

/* Finds or adds name to the object's table; returns its index or -1. */
static long ent_add(cc *c, mcp__sk_obj *o, size_t cap, const char *name) {
  size_t len = strlen(name);
  uint32_t h = mcp__sk_hash(name, len);
  size_t j = h & o->mask;
  for (; o->slots[j]; j = (j + 1) & o->mask) {
    const mcp__sk_ent *e = &o->ents[o->slots[j] - 1];
    if (e->hash == h && e->len == len && memcmp(e->name, name, len) == 0)
      return (long)(o->slots[j] - 1);
  }
  if (o->nents >= cap) {
    cc_error(c, "internal error: name table overflow");
    return -1;
  }
  o->ents[o->nents] = (mcp__sk_ent){name, len, h, MCP__SK_NONE, 0};
  o->slots[j] = (uint32_t)++o->nents;
  return (long)o->nents - 1;
}

/* An array of unique strings (required, dependentRequired values), added to
 * the table; entry indexes go to *out. */
static int name_list(cc *c, mcp__sk_obj *o, size_t cap, const cJSON *v,
                     uint32_t **out, size_t *n) {
  if (!cJSON_IsArray(v)) {
    cc_error(c, "must be an array of strings");
    return -1;
  }
  size_t count = (size_t)cJSON_GetArraySize(v), i = 0;
  uint32_t stamp = ++c->stamp; /* marks the names of this list */
  uint32_t *arr = cc_arena(c, (count ? count : 1) * sizeof *arr);
  if (arr == NULL)
    return -1;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    if (!cJSON_IsString(e)) {
      size_t save = path_push_index(c, i);
      cc_error(c, "must be a string");
      path_pop(c, save);
      return -1;
    }
    long k = ent_add(c, o, cap, e->valuestring);
    if (k < 0)
      return -1;
    if (o->ents[k].stamp == stamp) {
      size_t save = path_push_index(c, i);
      cc_error(c, "\"%.100s\" is listed twice", e->valuestring);
      path_pop(c, save);
      return -1;
    }
    o->ents[k].stamp = stamp;
    arr[i] = (uint32_t)k;
  }
  *out = arr;
  *n = count;
  return 0;
}

static int compile_regex(cc *c, const char *src, mcp__regex **out) {
  char why[160];
  int rc =
      mcp__regex_compile(src, strlen(src), c->max_prog, out, why, sizeof why);
  if (rc == MCP_ENOMEM) {
    cc_oom(c);
    return -1;
  }
  if (rc) {
    cc_error(c, "the regular expression \"%.80s\" is not supported: %s", src,
             why);
    return -1;
  }
  mcp__schema *s = c->s;
  if (push_slot(c, (void **)&s->regexes, &s->capregexes, s->nregexes,
                sizeof *s->regexes)) {
    mcp__regex_free(*out);
    return -1;
  }
  s->regexes[s->nregexes++] = *out;
  size_t need = mcp__regex_scratch_size(*out);
  if (need > s->max_scratch)
    s->max_scratch = need;
  return 0;
}

static int must_be_object(cc *c, const cJSON *v) {
  if (!cJSON_IsObject(v)) {
    cc_error(c, "must be an object");
    return 0;
  }
  return 1;
}

/* The name table of object node o: checks that properties,
 * dependentRequired and dependentSchemas are objects, and makes room for
 * every name they and required mention. Sets *cap to that room. */
static int object_table(cc *c, mcp__sk_obj *o, const cJSON *props,
                        const cJSON *req, const cJSON *dreq, const cJSON *dsch,
                        size_t *cap) {
  const cJSON *checks[] = {props, dreq, dsch};
  const char *check_names[] = {"properties", "dependentRequired",
                               "dependentSchemas"};
  *cap = 0;
  for (int k = 0; k < 3; k++) {
    if (checks[k] == NULL)
      continue;
    size_t save = path_push(c, check_names[k]);
    int ok = must_be_object(c, checks[k]);
    path_pop(c, save);
    if (!ok)
      return -1;
    for (const cJSON *e = checks[k]->child; e; e = e->next)
      *cap += 1 + (k == 1 ? (size_t)cJSON_GetArraySize(e) : 0);
  }
  if (req)
    *cap += (size_t)cJSON_GetArraySize(req);
  if (*cap == 0)
    return 0;
  size_t slots = 8;
  while (slots < *cap * 2)
    slots *= 2;
  o->ents = cc_arena(c, *cap * sizeof *o->ents);
  o->slots = cc_arena(c, slots * sizeof *o->slots);
  if (o->ents == NULL || o->slots == NULL)
    return -1;
  o->mask = slots - 1;
  return 0;
}

/* properties: each name's entry gets its compiled subschema. */
static int compile_properties(cc *c, mcp__sk_obj *o, size_t cap,
                              const cJSON *props, uint32_t res) {
  size_t save = path_push(c, "properties");
  for (const cJSON *e = props->child; e && !c->rc; e = e->next) {
    long k = ent_add(c, o, cap, e->string);
    if (k < 0)
      break;
    size_t s2 = path_push(c, e->string);
    mcp__sk_idx ch = compile_node(c, e, res);
    path_pop(c, s2);
    o->ents[k].prop = ch;
    o->nprops++;
  }
  path_pop(c, save);
  return c->rc ? -1 : 0;
}

/* required: the entries of the names an instance must have. */
static int compile_required(cc *c, mcp__sk_obj *o, size_t cap,
                            const cJSON *req) {
  size_t save = path_push(c, "required");
  int rc = name_list(c, o, cap, req, &o->required, &o->nrequired);
  path_pop(c, save);
  return rc ? -1 : 0;
}

/* dependentRequired: for each trigger name, the names it requires. */
static int compile_dependent_required(cc *c, mcp__sk_obj *o, size_t cap,
                                      const cJSON *dreq) {
  size_t save = path_push(c, "dependentRequired");
  size_t n = (size_t)cJSON_GetArraySize(dreq), i = 0;
  o->depreq = cc_arena(c, (n ? n : 1) * sizeof *o->depreq);
  if (o->depreq == NULL)
    return -1;
  for (const cJSON *e = dreq->child; e && !c->rc; e = e->next, i++) {
    long k = ent_add(c, o, cap, e->string);
    if (k < 0)
      break;
    o->depreq[i].trigger = (uint32_t)k;
    size_t s2 = path_push(c, e->string);
    name_list(c, o, cap, e, &o->depreq[i].deps, &o->depreq[i].ndeps);
    path_pop(c, s2);
  }
  o->ndepreq = n;
  path_pop(c, save);
  return c->rc ? -1 : 0;
}

/* dependentSchemas: for each trigger name, the subschema it applies. */
static int compile_dependent_schemas(cc *c, mcp__sk_obj *o, size_t cap,
                                     const cJSON *dsch, uint32_t res) {
  size_t save = path_push(c, "dependentSchemas");
  size_t n = (size_t)cJSON_GetArraySize(dsch), i = 0;
  o->depsch = cc_arena(c, (n ? n : 1) * sizeof *o->depsch);
  if (o->depsch == NULL)
    return -1;
  for (const cJSON *e = dsch->child; e && !c->rc; e = e->next, i++) {
    long k = ent_add(c, o, cap, e->string);
    if (k < 0)
      break;
    o->depsch[i].trigger = (uint32_t)k;
    size_t s2 = path_push(c, e->string);
    o->depsch[i].node = compile_node(c, e, res);
    path_pop(c, s2);
  }
  o->ndepsch = n;
  path_pop(c, save);
  return c->rc ? -1 : 0;
}

/* patternProperties: each regular expression and its subschema. */
static int compile_pattern_properties(cc *c, mcp__sk_obj *o, const cJSON *pats,
                                      uint32_t res) {
  size_t save = path_push(c, "patternProperties");
  if (!must_be_object(c, pats)) {
    path_pop(c, save);
    return -1;
  }
  size_t n = (size_t)cJSON_GetArraySize(pats), i = 0;
  o->pats = cc_arena(c, (n ? n : 1) * sizeof *o->pats);
  if (o->pats == NULL)
    return -1;
  for (const cJSON *e = pats->child; e && !c->rc; e = e->next, i++) {
    size_t s2 = path_push(c, e->string);
    o->pats[i].src = e->string;
    if (compile_regex(c, e->string, &o->pats[i].re) == 0)
      o->pats[i].node = compile_node(c, e, res);
    path_pop(c, s2);
  }
  o->npats = n;
  path_pop(c, save);
  return c->rc ? -1 : 0;
}

/* The object keywords of 2020-12, compiled together because they share one
 * name table: the evaluator finds a member's entry once for all of them. */
static int compile_object_keywords(cc *c, const cJSON *j, mcp__sk_idx idx,
                                   uint32_t res) {
  const cJSON *props = mcp__json_member(j, "properties"),
              *pats = mcp__json_member(j, "patternProperties");
  const cJSON *req = mcp__json_member(j, "required"),
              *dreq = mcp__json_member(j, "dependentRequired");
  const cJSON *dsch = mcp__json_member(j, "dependentSchemas");
  if (!props && !pats && !req && !dreq && !dsch &&
      !mcp__json_member(j, "additionalProperties") &&
      !mcp__json_member(j, "unevaluatedProperties") &&
      !mcp__json_member(j, "propertyNames") &&
      !mcp__json_member(j, "minProperties") &&
      !mcp__json_member(j, "maxProperties"))
    return 0;
  mcp__sk_obj *o = cc_arena(c, sizeof *o);
  if (o == NULL)
    return -1;
  o->additional = o->unevaluated = o->names = MCP__SK_NONE;
  o->max_props = SIZE_MAX;
  node_at(c, idx)->obj = o;
  if (get_count(c, j, "minProperties", &o->min_props) < 0 ||
      get_count(c, j, "maxProperties", &o->max_props) < 0)
    return -1;
  size_t cap = 0;
  if (object_table(c, o, props, req, dreq, dsch, &cap) < 0 ||
      (props && compile_properties(c, o, cap, props, res) < 0) ||
      (req && compile_required(c, o, cap, req) < 0) ||
      (dreq && compile_dependent_required(c, o, cap, dreq) < 0) ||
      (dsch && compile_dependent_schemas(c, o, cap, dsch, res) < 0) ||
      (pats && compile_pattern_properties(c, o, pats, res) < 0))
    return -1;
  o->additional = child(c, j, "additionalProperties", res);
  o->unevaluated = child(c, j, "unevaluatedProperties", res);
  o->names = child(c, j, "propertyNames", res);
  return c->rc ? -1 : 0;
}

/* ---- array, string and number keywords ----------------------------------- */

static int compile_array_keywords(cc *c, const cJSON *j, mcp__sk_idx idx,
                                  uint32_t res) {
  static const char *const kws[] = {
      "prefixItems", "items",       "contains",
      "minContains", "maxContains", "minItems",
      "maxItems",    "uniqueItems", "unevaluatedItems"};
  int any = 0;
  for (size_t i = 0; i < sizeof kws / sizeof *kws; i++)
    any |= mcp__json_member(j, kws[i]) != NULL;
  if (!any)
    return 0;
  mcp__sk_arr *a = cc_arena(c, sizeof *a);
  if (a == NULL)
    return -1;
  a->items = a->contains = a->unevaluated = MCP__SK_NONE;
  a->max_items = a->max_contains = SIZE_MAX;
  a->min_contains = 1;
  node_at(c, idx)->arr = a;
  const cJSON *items = mcp__json_member(j, "items");
  if (cJSON_IsArray(items)) {
    size_t save = path_push(c, "items");
    cc_error(c, "must be a schema; JSON Schema 2020-12 writes tuples as "
                "\"prefixItems\"");
    path_pop(c, save);
    return -1;
  }
  if (child_array(c, j, "prefixItems", res, &a->prefix, &a->nprefix) < 0)
    return -1;
  a->items = child(c, j, "items", res);
  a->contains = child(c, j, "contains", res);
  a->unevaluated = child(c, j, "unevaluatedItems", res);
  if (c->rc || get_count(c, j, "minItems", &a->min_items) < 0 ||
      get_count(c, j, "maxItems", &a->max_items) < 0 ||
      get_count(c, j, "minContains", &a->min_contains) < 0 ||
      get_count(c, j, "maxContains", &a->max_contains) < 0)
    return -1;
  const cJSON *u = mcp__json_member(j, "uniqueItems");
  if (u) {
    if (!cJSON_IsBool(u)) {
      size_t save = path_push(c, "uniqueItems");
      cc_error(c, "must be true or false");
      path_pop(c, save);
      return -1;
    }
    a->unique = cJSON_IsTrue(u);
  }
  return 0;
}

static int compile_string_keywords(cc *c, const cJSON *j, mcp__sk_idx idx,
                                   int assert_format) {
  const cJSON *pattern = mcp__json_member(j, "pattern"),
              *format = mcp__json_member(j, "format");
  const cJSON *minl = mcp__json_member(j, "minLength"),
              *maxl = mcp__json_member(j, "maxLength");
  if (format && !cJSON_IsString(format)) {
    size_t save = path_push(c, "format");
    cc_error(c, "must be a string");
    path_pop(c, save);
    return -1;
  }
  mcp__format f = format && assert_format
                      ? mcp__format_find(format->valuestring)
                      : MCP__FMT_NONE;
  if (!pattern && !minl && !maxl && f == MCP__FMT_NONE)
    return 0;
  mcp__sk_str *s = cc_arena(c, sizeof *s);
  if (s == NULL)
    return -1;
  s->max_len = SIZE_MAX;
  s->format = f;
  node_at(c, idx)->str = s;
  if (get_count(c, j, "minLength", &s->min_len) < 0 ||
      get_count(c, j, "maxLength", &s->max_len) < 0)
    return -1;
  if (pattern) {
    size_t save = path_push(c, "pattern");
    if (!cJSON_IsString(pattern))
      cc_error(c, "must be a string");
    else if (compile_regex(c, pattern->valuestring, &s->pattern) == 0)
      s->pattern_src = pattern->valuestring;
    path_pop(c, save);
  }
  return c->rc ? -1 : 0;
}

static int compile_number_keywords(cc *c, const cJSON *j, mcp__sk_idx idx) {
  mcp__sk_num tmp;
  memset(&tmp, 0, sizeof tmp);
  static const struct {
    const char *key;
    unsigned bit;
  } kws[] = {{"minimum", MCP__NUM_MIN},
             {"maximum", MCP__NUM_MAX},
             {"exclusiveMinimum", MCP__NUM_XMIN},
             {"exclusiveMaximum", MCP__NUM_XMAX},
             {"multipleOf", MCP__NUM_MULT}};
  mcp__dec *dst[] = {&tmp.min, &tmp.max, &tmp.xmin, &tmp.xmax, &tmp.mult};
  const cJSON **src[] = {&tmp.min_src, &tmp.max_src, &tmp.xmin_src,
                         &tmp.xmax_src, &tmp.mult_src};
  for (size_t i = 0; i < 5; i++) {
    int r = get_number(c, j, kws[i].key, dst[i], src[i]);
    if (r < 0)
      return -1;
    if (r)
      tmp.has |= kws[i].bit;
  }
  if ((tmp.has & MCP__NUM_MULT) && (tmp.mult.nd == 0 || tmp.mult.neg)) {
    size_t save = path_push(c, "multipleOf");
    cc_error(c, "must be greater than 0");
    path_pop(c, save);
    return -1;
  }
  if (tmp.has == 0)
    return 0;
  mcp__sk_num *n = cc_arena(c, sizeof *n);
  if (n == NULL)
    return -1;
  *n = tmp;
  node_at(c, idx)->num = n;
  return 0;
}

/* ---- generic and applicator keywords ------------------------------------- */

static int compile_type(cc *c, const cJSON *j, mcp__sk_idx idx) {
  const cJSON *t = mcp__json_member(j, "type");
  if (t == NULL)
    return 0;
  size_t save = path_push(c, "type");
  unsigned mask = 0;
  if (cJSON_IsString(t)) {
    mask = (unsigned)type_bit(t->valuestring);
    if (mask == 0)
      cc_error(c,
               "\"%.40s\" is not a JSON Schema type (null, boolean, "
               "object, array, number, string, integer)",
               t->valuestring);
  } else if (cJSON_IsArray(t) && t->child) {
    size_t i = 0;
    for (const cJSON *e = t->child; e && !c->rc; e = e->next, i++) {
      unsigned bit = cJSON_IsString(e) ? (unsigned)type_bit(e->valuestring) : 0;
      size_t s2 = path_push_index(c, i);
      if (bit == 0)
        cc_error(c, "must be one of null, boolean, object, array, number, "
                    "string, integer");
      else if (mask & bit)
        cc_error(c, "\"%s\" is listed twice", e->valuestring);
      path_pop(c, s2);
      mask |= bit;
    }
  } else {
    cc_error(c, "must be a type name or a non-empty array of type names");
  }
  path_pop(c, save);
  node_at(c, idx)->types = mask;
  return c->rc ? -1 : 0;
}

static int hv_cmp(const void *a, const void *b) {
  uint64_t x = ((const mcp__sk_hv *)a)->h, y = ((const mcp__sk_hv *)b)->h;
  return x < y ? -1 : x > y;
}

static int compile_enum_const(cc *c, const cJSON *j, mcp__sk_idx idx) {
  const cJSON *e = mcp__json_member(j, "enum");
  mcp__sk_node *n = node_at(c, idx);
  n->const_ = mcp__json_member(j, "const");
  if (e == NULL)
    return 0;
  if (!cJSON_IsArray(e)) {
    size_t save = path_push(c, "enum");
    cc_error(c, "must be an array");
    path_pop(c, save);
    return -1;
  }
  n->enum_ = e;
  /* A long enum is looked up by hash rather than compared in turn. */
  size_t count = (size_t)cJSON_GetArraySize(e);
  if (count <= 8)
    return 0;
  mcp__sk_hv *index = cc_arena(c, count * sizeof *index);
  if (index == NULL)
    return -1;
  size_t i = 0;
  unsigned long steps = 0;
  for (const cJSON *v = e->child; v; v = v->next, i++) {
    index[i].v = v;
    if (mcp__json_hash(v, MCP__SK_MAX_EVAL_DEPTH, &steps, &index[i].h)) {
      size_t save = path_push(c, "enum");
      cc_error(c, "a value is nested too deeply");
      path_pop(c, save);
      return -1;
    }
  }
  qsort(index, count, sizeof *index, hv_cmp);
  n = node_at(c, idx);
  n->enum_index = index;
  n->nenum = count;
  return 0;
}

static int add_ref(cc *c, const cJSON *j, mcp__sk_idx idx, const char *key,
                   int dynamic, uint32_t res) {
  const cJSON *r = mcp__json_member(j, key);
  if (r == NULL)
    return 0;
  size_t save = path_push(c, key);
  if (!cJSON_IsString(r)) {
    cc_error(c, "must be a string (a URI reference)");
    path_pop(c, save);
    return -1;
  }
  mcp__buf b = {0};
  mcp__uri_resolve(&b, c->s->res[res].uri, r->valuestring);
  const char *uri = b.err ? NULL : arena_strdup(c->s, b.data, b.len);
  const char *path = arena_strdup(c->s, c->path, c->plen);
  mcp__buf_free(&b);
  path_pop(c, save);
  if (uri == NULL || path == NULL ||
      push_slot(c, (void **)&c->refs, &c->caprefs, c->nrefs, sizeof *c->refs)) {
    cc_oom(c);
    return -1;
  }
  c->refs[c->nrefs++] = (pending){idx, dynamic, uri, path};
  return 0;
}

static int compile_applicators(cc *c, const cJSON *j, mcp__sk_idx idx,
                               uint32_t res) {
  static const char *const kws[] = {"allOf", "anyOf", "oneOf",
                                    "not",   "if",    "then",
                                    "else",  "$ref",  "$dynamicRef"};
  int any = 0;
  for (size_t i = 0; i < sizeof kws / sizeof *kws; i++)
    any |= mcp__json_member(j, kws[i]) != NULL;
  if (!any)
    return 0;
  mcp__sk_app *a = cc_arena(c, sizeof *a);
  if (a == NULL)
    return -1;
  a->not_ = a->if_ = a->then_ = a->else_ = MCP__SK_NONE;
  a->ref = a->dynref = MCP__SK_NONE;
  node_at(c, idx)->app = a;
  if (child_array(c, j, "allOf", res, &a->all_of, &a->nall_of) < 0 ||
      child_array(c, j, "anyOf", res, &a->any_of, &a->nany_of) < 0 ||
      child_array(c, j, "oneOf", res, &a->one_of, &a->none_of) < 0)
    return -1;
  a->not_ = child(c, j, "not", res);
  a->if_ = child(c, j, "if", res);
  a->then_ = child(c, j, "then", res);
  a->else_ = child(c, j, "else", res);
  if (c->rc || add_ref(c, j, idx, "$ref", 0, res) ||
      add_ref(c, j, idx, "$dynamicRef", 1, res))
    return -1;
  return 0;
}

/* "$schema": only 2020-12 is compiled. */
static int check_dialect(cc *c, const cJSON *j) {
  const cJSON *dialect = mcp__json_member(j, "$schema");
  if (dialect == NULL)
    return 0;
  size_t save = path_push(c, "$schema");
  if (!cJSON_IsString(dialect) ||
      (strcmp(dialect->valuestring, META_2020_12) != 0 &&
       strcmp(dialect->valuestring, META_2020_12 "#") != 0))
    cc_error(c, "only JSON Schema 2020-12 (\"" META_2020_12 "\") is "
                "supported");
  path_pop(c, save);
  return c->rc ? -1 : 0;
}

/* "$id" of a subschema below the root: starts a new resource at the URI it
 * resolves to against resource res. Returns the resource the subschema
 * belongs to (res when it has no "$id"), or -1. */
static long compile_id(cc *c, const cJSON *j, mcp__sk_idx idx, uint32_t res) {
  const cJSON *id = mcp__json_member(j, "$id");
  if (id == NULL || idx == c->s->root)
    return (long)res;
  size_t save = path_push(c, "$id");
  const char *hash = cJSON_IsString(id) ? strchr(id->valuestring, '#') : NULL;
  if (!cJSON_IsString(id))
    cc_error(c, "must be a string (a URI reference)");
  else if (hash && hash[1] != '\0')
    cc_error(c, "must not contain a fragment; name a location with "
                "\"$anchor\" instead");
  path_pop(c, save);
  if (c->rc)
    return -1;
  mcp__buf b = {0};
  mcp__uri_resolve(&b, c->s->res[res].uri, id->valuestring);
  mcp__schema *s = c->s;
  if (b.err ||
      push_slot(c, (void **)&s->res, &s->capres, s->nres, sizeof *s->res)) {
    mcp__buf_free(&b);
    cc_oom(c);
    return -1;
  }
  char *uri = arena_strdup(s, b.data, b.len);
  mcp__buf_free(&b);
  if (uri == NULL) {
    cc_oom(c);
    return -1;
  }
  res = (uint32_t)s->nres;
  s->res[s->nres++] = (mcp__sk_res){uri, idx, j};
  if (ids_add(c, uri, ID_RESOURCE, res, idx))
    return -1;
  return (long)res;
}

/* "$anchor" (dynamic == 0) or "$dynamicAnchor" (dynamic == 1): names node
 * idx within resource res; a dynamic anchor is also kept for $dynamicRef. */
static int compile_anchor(cc *c, const cJSON *j, mcp__sk_idx idx, uint32_t res,
                          int dynamic) {
  const char *keyword = dynamic ? "$dynamicAnchor" : "$anchor";
  const cJSON *a = mcp__json_member(j, keyword);
  if (a == NULL)
    return 0;
  size_t save = path_push(c, keyword);
  if (!cJSON_IsString(a) || !anchor_name_valid(a->valuestring))
    cc_error(c, "must be a name of letters, digits, '-', '_' and '.' that "
                "starts with a letter or '_'");
  path_pop(c, save);
  if (c->rc)
    return -1;
  mcp__buf b = {0};
  mcp__buf_printf(&b, "%s#%s", c->s->res[res].uri, a->valuestring);
  if (b.err) {
    cc_oom(c);
    return -1;
  }
  save = path_push(c, keyword);
  int rc =
      ids_add(c, b.data, dynamic ? ID_DYNAMIC_ANCHOR : ID_ANCHOR, res, idx);
  path_pop(c, save);
  mcp__buf_free(&b);
  if (rc)
    return -1;
  if (dynamic) {
    if (push_slot(c, (void **)&c->dyns, &c->capdyns, c->ndyns, sizeof *c->dyns))
      return -1;
    c->dyns[c->ndyns++] = (dyn_anchor){res, a->valuestring, idx};
  }
  return 0;
}

/* "$schema", "$id", "$anchor" and "$dynamicAnchor": the identifiers a
 * subschema declares. May start a new resource; returns its index. */
static long compile_identifiers(cc *c, const cJSON *j, mcp__sk_idx idx,
                                uint32_t res) {
  if (check_dialect(c, j) < 0)
    return -1;
  long r = compile_id(c, j, idx, res);
  if (r < 0)
    return -1;
  node_at(c, idx)->res = (uint32_t)r;
  if (compile_anchor(c, j, idx, (uint32_t)r, 0) < 0 ||
      compile_anchor(c, j, idx, (uint32_t)r, 1) < 0)
    return -1;
  return r;
}

static mcp__sk_idx compile_node(cc *c, const cJSON *j, uint32_t res) {
  if (c->rc)
    return MCP__SK_NONE;
  mcp__schema *s = c->s;
  if (!cJSON_IsBool(j) && !cJSON_IsObject(j)) {
    cc_error(c, "a schema must be an object or a boolean");
    return MCP__SK_NONE;
  }
  if (s->nnodes >= c->max_nodes) {
    cc_error(c, "the schema has more than %zu subschemas", c->max_nodes);
    return MCP__SK_NONE;
  }
  if (c->depth >= MAX_SCHEMA_DEPTH) {
    cc_error(c, "subschemas are nested more than %d deep", MAX_SCHEMA_DEPTH);
    return MCP__SK_NONE;
  }
  if (push_slot(c, (void **)&s->nodes, &s->capnodes, s->nnodes,
                sizeof *s->nodes))
    return MCP__SK_NONE;
  mcp__sk_idx idx = (mcp__sk_idx)s->nnodes++;
  mcp__sk_node *n = &s->nodes[idx];
  memset(n, 0, sizeof *n);
  n->src = j;
  n->res = res;
  if (ptrs_add(c, j, idx))
    return MCP__SK_NONE;
  if (cJSON_IsBool(j)) {
    n->flags = cJSON_IsTrue(j) ? MCP__SK_TRUE : MCP__SK_FALSE;
    return idx;
  }
  c->depth++;
  long r = compile_identifiers(c, j, idx, res);
  if (r >= 0) {
    res = (uint32_t)r;
    const cJSON *defs = mcp__json_member(j, "$defs");
    if (defs) {
      size_t save = path_push(c, "$defs");
      if (must_be_object(c, defs)) {
        for (const cJSON *d = defs->child; d && !c->rc; d = d->next) {
          size_t s2 = path_push(c, d->string);
          compile_node(c, d, res);
          path_pop(c, s2);
        }
      }
      path_pop(c, save);
    }
    if (c->rc == 0 && compile_type(c, j, idx) == 0 &&
        compile_enum_const(c, j, idx) == 0 &&
        compile_number_keywords(c, j, idx) == 0 &&
        compile_string_keywords(
            c, j, idx, (s->flags & MCP__SCHEMA_ASSERT_FORMAT) != 0) == 0 &&
        compile_array_keywords(c, j, idx, res) == 0 &&
        compile_object_keywords(c, j, idx, res) == 0)
      compile_applicators(c, j, idx, res);
  }
  c->depth--;
  return c->rc ? MCP__SK_NONE : idx;
}

/* ---- references ---------------------------------------------------------- */

static int unhex(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* Follows the JSON pointer ptr (percent-encoded, as in a URI fragment) from
 * root; NULL if it leads nowhere. */
static const cJSON *follow_pointer(cc *c, const cJSON *root, const char *ptr) {
  mcp__buf tok = {0};
  const cJSON *cur = root;
  const char *p = ptr;
  while (cur && *p == '/') {
    p++;
    tok.len = 0;
    while (*p && *p != '/') {
      char ch = *p++;
      if (ch == '%' && unhex(p[0]) >= 0 && unhex(p[1]) >= 0) {
        ch = (char)(unhex(p[0]) * 16 + unhex(p[1]));
        p += 2;
      }
      mcp__buf_putc(&tok, ch);
    }
    /* RFC 6901 unescaping, after the percent-decoding above. */
    const char *t = mcp__buf_str(&tok);
    if (t == NULL) {
      cc_oom(c);
      cur = NULL;
      break;
    }
    size_t w = 0;
    for (size_t i = 0; i < tok.len; i++) {
      if (tok.data[i] == '~' && i + 1 < tok.len &&
          (tok.data[i + 1] == '0' || tok.data[i + 1] == '1')) {
        tok.data[w++] = tok.data[i + 1] == '0' ? '~' : '/';
        i++;
      } else {
        tok.data[w++] = tok.data[i];
      }
    }
    tok.data[w] = '\0';
    tok.len = w;
    if (cJSON_IsObject(cur)) {
      cur = mcp__json_member(cur, tok.data);
    } else if (cJSON_IsArray(cur)) {
      char *end;
      unsigned long k = strtoul(tok.data, &end, 10);
      int ok = w > 0 && *end == '\0' && (tok.data[0] != '0' || w == 1) &&
               tok.data[0] >= '0' && tok.data[0] <= '9';
      cur = ok && k < (unsigned long)cJSON_GetArraySize(cur)
                ? cJSON_GetArrayItem(cur, (int)k)
                : NULL;
    } else {
      cur = NULL;
    }
  }
  mcp__buf_free(&tok);
  return *p == '\0' ? cur : NULL;
}

/* Compiles the caller-supplied document named uri, if there is one, as a
 * resource of its own; returns its entry. Errors inside it are reported at
 * "uri#/pointer". */
static const id_ent *load_doc(cc *c, const char *uri) {
  const mcp__schema_doc *d = NULL;
  for (size_t i = 0; i < c->opt->ndocs && d == NULL; i++)
    if (c->opt->docs[i].uri && strcmp(c->opt->docs[i].uri, uri) == 0)
      d = &c->opt->docs[i];
  if (d == NULL || d->json == NULL)
    return NULL;
  mcp__schema *s = c->s;
  char *key = arena_strdup(s, uri, strlen(uri));
  if (key == NULL ||
      push_slot(c, (void **)&s->res, &s->capres, s->nres, sizeof *s->res)) {
    cc_oom(c);
    return NULL;
  }
  uint32_t res = (uint32_t)s->nres;
  mcp__sk_idx root = (mcp__sk_idx)s->nnodes; /* compile_node's next index */
  s->res[s->nres++] = (mcp__sk_res){key, root, d->json};
  if (ids_add(c, key, ID_RESOURCE, res, root))
    return NULL;
  size_t save = c->plen;
  size_t n = strlen(uri);
  if (n > MAX_PATH / 2)
    n = MAX_PATH / 2;
  memcpy(c->path, uri, n);
  c->path[n] = '#';
  c->path[n + 1] = '\0';
  c->plen = n + 1;
  compile_node(c, d->json, res);
  path_pop(c, save);
  return c->rc ? NULL : ids_find(c, uri);
}

/* Resolves an absolute URI to a node, compiling the target when a JSON
 * pointer leads into a part of the document no keyword marked as a schema
 * (under "definitions", say). *anchor receives the anchor entry when the
 * fragment is a name. */
static mcp__sk_idx resolve(cc *c, const char *uri, const id_ent **anchor) {
  *anchor = NULL;
  const char *hash = strchr(uri, '#');
  size_t blen = hash ? (size_t)(hash - uri) : strlen(uri);
  char *base = mcp__strndup(uri, blen);
  if (base == NULL) {
    cc_oom(c);
    return MCP__SK_NONE;
  }
  const id_ent *r = ids_find(c, base);
  if (r == NULL)
    r = load_doc(c, base);
  mcp__free(base);
  if (r == NULL || r->kind != ID_RESOURCE)
    return MCP__SK_NONE;
  if (hash == NULL || hash[1] == '\0')
    return r->node;
  if (hash[1] != '/') {
    const id_ent *a = ids_find(c, uri);
    if (a == NULL || a->kind == ID_RESOURCE)
      return MCP__SK_NONE;
    *anchor = a;
    return a->node;
  }
  const cJSON *target = follow_pointer(c, c->s->res[r->res].json, hash + 1);
  if (target == NULL)
    return MCP__SK_NONE;
  mcp__sk_idx idx = ptrs_find(c, target);
  if (idx != MCP__SK_NONE)
    return idx;
  /* Compile it now, reporting errors at the pointer. */
  size_t save = c->plen;
  c->plen = 0;
  c->path[0] = '\0';
  size_t n = strlen(hash + 1);
  if (n >= MAX_PATH - 4)
    n = MAX_PATH - 4;
  memcpy(c->path, hash + 1, n);
  c->path[n] = '\0';
  c->plen = n;
  idx = compile_node(c, target, r->res);
  c->plen = save;
  return idx;
}

static int dyn_cmp(const void *a, const void *b) {
  return strcmp(((const dyn_anchor *)a)->name, ((const dyn_anchor *)b)->name);
}

static int resolve_refs(cc *c) {
  for (size_t i = 0; i < c->nrefs && c->rc == 0; i++) {
    pending p = c->refs[i]; /* resolving may grow c->refs */
    const id_ent *anchor;
    mcp__sk_idx target = resolve(c, p.uri, &anchor);
    if (c->rc)
      break;
    if (target == MCP__SK_NONE) {
      size_t n = strlen(p.path);
      memcpy(c->path, p.path, n + 1);
      c->plen = n;
      cc_error(c,
               "\"%.200s\" does not name a subschema of this document; "
               "libmcp resolves references within the same document "
               "only and never fetches one",
               p.uri);
      break;
    }
    mcp__sk_app *a = node_at(c, p.node)->app;
    if (!p.dynamic) {
      a->ref = target;
      a->ref_path = p.path;
      continue;
    }
    a->dynref = target;
    a->dynref_path = p.path;
    if (anchor == NULL || anchor->kind != ID_DYNAMIC_ANCHOR)
      continue; /* a plain $ref in effect */
    a->dynname = strchr(p.uri, '#') + 1;
    c->s->dynamic = 1;
  }
  /* Dynamic: any $dynamicAnchor of the name may be the landing point,
   * chosen at validation time by the outermost resource in scope. The
   * candidates are gathered once every document is loaded, from the
   * anchors sorted by name. */
  if (c->ndyns > 1)
    qsort(c->dyns, c->ndyns, sizeof *c->dyns, dyn_cmp);
  for (size_t i = 0; i < c->s->nnodes && c->rc == 0; i++) {
    mcp__sk_app *a = c->s->nodes[i].app;
    if (a == NULL || a->dynname == NULL)
      continue;
    size_t lo = 0, hi = c->ndyns;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(c->dyns[mid].name, a->dynname) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t end = lo;
    while (end < c->ndyns && strcmp(c->dyns[end].name, a->dynname) == 0)
      end++;
    a->cands = cc_arena(c, (end - lo) * sizeof *a->cands);
    if (a->cands == NULL)
      break;
    for (size_t d = lo; d < end; d++)
      a->cands[a->ncands++] = (mcp__sk_cand){c->dyns[d].res, c->dyns[d].node};
  }
  return c->rc ? -1 : 0;
}

/* ---- reference cycles ---------------------------------------------------- */

#define EDGE_END (MCP__SK_NONE - 1)

/* The i-th subschema applied to the same instance location as node n, or
 * MCP__SK_NONE past the last. */
static mcp__sk_idx inplace_edge(const mcp__sk_node *n, size_t i) {
  const mcp__sk_app *a = n->app;
  if (a) {
    if (i < a->nall_of)
      return a->all_of[i];
    i -= a->nall_of;
    if (i < a->nany_of)
      return a->any_of[i];
    i -= a->nany_of;
    if (i < a->none_of)
      return a->one_of[i];
    i -= a->none_of;
    const mcp__sk_idx singles[] = {a->not_,  a->if_, a->then_,
                                   a->else_, a->ref, a->dynref};
    if (i < 6)
      return singles[i];
    i -= 6;
    if (i < a->ncands)
      return a->cands[i].node;
    i -= a->ncands;
  }
  if (n->obj && i < n->obj->ndepsch)
    return n->obj->depsch[i].node;
  return EDGE_END;
}

/* Depth-first search over in-place edges; a back edge is a cycle that
 * validation would follow forever on some instance. */
static int check_cycles(cc *c) {
  mcp__schema *s = c->s;
  size_t n = s->nnodes;
  unsigned char *color = mcp__calloc(n ? n : 1, 1);
  struct frame {
    mcp__sk_idx node;
    size_t edge;
  } *stack = mcp__malloc((n ? n : 1) * sizeof *stack);
  if (color == NULL || stack == NULL) {
    mcp__free(color);
    mcp__free(stack);
    cc_oom(c);
    return -1;
  }
  for (mcp__sk_idx start = 0; start < n && !c->rc; start++) {
    if (color[start])
      continue;
    size_t sp = 0;
    stack[sp++] = (struct frame){start, 0};
    color[start] = 1;
    while (sp > 0 && !c->rc) {
      struct frame *f = &stack[sp - 1];
      mcp__sk_idx next = inplace_edge(&s->nodes[f->node], f->edge++);
      if (next == EDGE_END) {
        color[f->node] = 2;
        sp--;
      } else if (next == MCP__SK_NONE) {
        continue;
      } else if (color[next] == 0) {
        color[next] = 1;
        stack[sp++] = (struct frame){next, 0};
      } else if (color[next] == 1) {
        /* Name a reference on the cycle: without one it could not close. */
        const char *where = NULL;
        for (size_t k = sp; k-- > 0 && where == NULL;) {
          const mcp__sk_app *a = s->nodes[stack[k].node].app;
          if (a && a->ref_path)
            where = a->ref_path;
          else if (a && a->dynref_path)
            where = a->dynref_path;
          if (stack[k].node == next)
            break;
        }
        size_t len = where ? strlen(where) : 0;
        memcpy(c->path, where ? where : "", len + 1);
        c->plen = len;
        cc_error(c, "this reference leads back to itself without descending "
                    "into the instance, so validation would never end");
      }
    }
  }
  mcp__free(color);
  mcp__free(stack);
  return c->rc ? -1 : 0;
}

/* ---- the API ------------------------------------------------------------- */

void mcp__schema_free(mcp__schema *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->nregexes; i++)
    mcp__regex_free(s->regexes[i]);
  mcp__free(s->regexes);
  mcp__free(s->nodes);
  mcp__free(s->res);
  while (s->blocks) {
    mcp__sk_block *b = s->blocks;
    s->blocks = b->next;
    mcp__free(b);
  }
  mcp__free(s);
}

int mcp__schema_compile(const cJSON *schema, const mcp__schema_options *opt,
                        mcp__schema **out, char *err, size_t errlen) {
  mcp__schema_options defaults = {0};
  if (opt == NULL)
    opt = &defaults;
  if (err && errlen)
    err[0] = '\0';
  mcp__schema *s = mcp__calloc(1, sizeof *s);
  if (s == NULL) {
    mcp__fmt(err, errlen, "out of memory");
    return MCP_ENOMEM;
  }
  s->flags = opt->flags;
  s->max_steps = opt->max_steps ? opt->max_steps : 1000000ul;
  cc c;
  memset(&c, 0, sizeof c);
  c.s = s;
  c.opt = opt;
  c.max_nodes = opt->max_subschemas ? opt->max_subschemas : 10000;
  c.max_prog = 4096;
  c.err = err;
  c.errlen = errlen;
  c.path[0] = '\0';

  /* The document is the first resource; its base URI is its own "$id"
   * when it has one. */
  const cJSON *id =
      cJSON_IsObject(schema) ? mcp__json_member(schema, "$id") : NULL;
  mcp__buf b = {0};
  if (id && cJSON_IsString(id) &&
      (strchr(id->valuestring, '#') == NULL ||
       strchr(id->valuestring, '#')[1] == '\0'))
    mcp__uri_resolve(&b, DEFAULT_BASE, id->valuestring);
  else
    mcp__buf_puts(&b, DEFAULT_BASE);
  if (id && !cJSON_IsString(id)) {
    path_push(&c, "$id");
    cc_error(&c, "must be a string (a URI reference)");
  } else if (id && strchr(id->valuestring, '#') &&
             strchr(id->valuestring, '#')[1] != '\0') {
    path_push(&c, "$id");
    cc_error(&c, "must not contain a fragment; name a location with "
                 "\"$anchor\" instead");
  }
  c.plen = 0;
  c.path[0] = '\0';
  if (c.rc == 0) {
    s->res = mcp__calloc(4, sizeof *s->res);
    char *uri = b.err ? NULL : arena_strdup(s, b.data, b.len);
    if (s->res == NULL || uri == NULL) {
      cc_oom(&c);
    } else {
      s->capres = 4;
      s->nres = 1;
      s->res[0] = (mcp__sk_res){uri, 0, schema};
      s->root = 0;
      if (ids_add(&c, uri, ID_RESOURCE, 0, 0) == 0)
        compile_node(&c, schema, 0);
    }
  }
  mcp__buf_free(&b);
  if (c.rc == 0)
    resolve_refs(&c);
  if (c.rc == 0)
    check_cycles(&c);
  if (c.rc == 0)
    s->flat = mcp__sk_flat(s);
  mcp__free(c.ids);
  mcp__free(c.ptrs);
  mcp__free(c.refs);
  mcp__free(c.dyns);
  if (c.rc) {
    mcp__schema_free(s);
    return c.rc;
  }
  *out = s;
  return 0;
}
