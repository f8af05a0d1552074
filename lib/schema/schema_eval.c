/* JSON Schema 2020-12: validating an instance against a compiled schema.
 *
 * This runs on every tools/call, so it is a plain walk: each keyword was
 * turned into data the walk can use directly when the schema was compiled.
 * Three things shape the code:
 *
 *  - Annotations. unevaluatedProperties and unevaluatedItems depend on what
 *    the other keywords, including those of in-place subschemas (allOf,
 *    $ref, a passing anyOf branch...), evaluated. A node that has one keeps
 *    a bit set over the members or items of its instance and passes it down
 *    through in-place applicators; branches whose result is thrown away get
 *    a fresh set. Without those keywords nothing is tracked.
 *  - Errors. The first failure decides; evaluation stops there. A failure
 *    is recorded as a few pointers and numbers, and put into words only
 *    once, at the end, so branches of anyOf that fail cost almost nothing.
 *    The instance path is found then too, by looking for the failing node.
 *  - Cost. Every subschema visit, member, item and regex step counts; past
 *    the limit validation stops with MCP_ELIMIT, so no instance or schema
 *    can make it run long. Scratch memory comes from a stack buffer first
 *    and from the allocator only for large objects, arrays and patterns. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema_int.h"

enum { V_FAIL = 0, V_OK = 1, V_STOP = -1 };

/* Evaluation recurses once per subschema level, so its frames are kept
 * small: the helpers a level may not need stay out of line, where their
 * locals cost stack only when they run. */
#if defined(__GNUC__)
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif

/* The keywords a failure can be attributed to. */
enum {
  KW_FALSE,
  KW_TYPE,
  KW_ENUM,
  KW_CONST,
  KW_MULTIPLE_OF,
  KW_MAXIMUM,
  KW_EXCLUSIVE_MAXIMUM,
  KW_MINIMUM,
  KW_EXCLUSIVE_MINIMUM,
  KW_MAX_LENGTH,
  KW_MIN_LENGTH,
  KW_PATTERN,
  KW_FORMAT,
  KW_ITEMS,
  KW_CONTAINS,
  KW_MAX_CONTAINS,
  KW_MAX_ITEMS,
  KW_MIN_ITEMS,
  KW_UNIQUE_ITEMS,
  KW_UNEVALUATED_ITEMS,
  KW_ADDITIONAL_PROPERTIES,
  KW_UNEVALUATED_PROPERTIES,
  KW_REQUIRED,
  KW_DEPENDENT_REQUIRED,
  KW_MAX_PROPERTIES,
  KW_MIN_PROPERTIES,
  KW_ANY_OF,
  KW_ONE_OF,
  KW_NOT
};

static const char *const kw_names[] = {"false",
                                       "type",
                                       "enum",
                                       "const",
                                       "multipleOf",
                                       "maximum",
                                       "exclusiveMaximum",
                                       "minimum",
                                       "exclusiveMinimum",
                                       "maxLength",
                                       "minLength",
                                       "pattern",
                                       "format",
                                       "items",
                                       "contains",
                                       "maxContains",
                                       "maxItems",
                                       "minItems",
                                       "uniqueItems",
                                       "unevaluatedItems",
                                       "additionalProperties",
                                       "unevaluatedProperties",
                                       "required",
                                       "dependentRequired",
                                       "maxProperties",
                                       "minProperties",
                                       "anyOf",
                                       "oneOf",
                                       "not"};

/* A failure, in data; put into words by describe(). */
typedef struct verr {
  int kw;
  const mcp__sk_node *node; /* whose keyword failed */
  const cJSON *inst;        /* where; for a property name, the member */
  int is_name;              /* the failing value is inst's name */
  size_t a, b;              /* keyword-specific numbers */
  const char *name, *name2; /* keyword-specific names */
  unsigned mask;            /* KW_TYPE: the accepted types */
  int union_types;          /* mask comes from anyOf/oneOf branches */
  int depth;                /* instance depth, to rank alternatives */
  /* The anyOf or oneOf none of whose alternatives matched, when the
   * failure is that of its closest alternative. */
  int via_kw;
  const cJSON *via_inst;
  size_t via_k, via_n;
} verr;

/* ---- scratch memory ------------------------------------------------------ */

typedef struct chunk {
  struct chunk *prev;
  size_t cap, used;
  unsigned char *data;
} chunk;

typedef struct mark {
  chunk *top;
  size_t used;
} mark;

typedef struct vctx {
  const mcp__schema *s;
  unsigned long steps, max_steps;
  int depth;  /* nested evaluations */
  int idepth; /* instance nesting */
  int rc;     /* why validation stopped */
  const char *stop_why;
  verr err;
  uint32_t scope[MCP__SK_MAX_EVAL_DEPTH]; /* dynamic scope: resources */
  size_t nscope;
  chunk *top;
  chunk first;
  max_align_t buf[1024 / sizeof(max_align_t)];
} vctx;

static int stop(vctx *c, int rc, const char *why) {
  if (c->rc == 0) {
    c->rc = rc;
    c->stop_why = why;
  }
  return V_STOP;
}

static void *scratch(vctx *c, size_t n) {
  n = (n + 15) & ~(size_t)15;
  chunk *t = c->top;
  if (t->cap - t->used < n) {
    size_t cap = n > 8192 ? n : 8192;
    chunk *nc = mcp__malloc(sizeof *nc + cap + 16);
    if (nc == NULL)
      return NULL;
    uintptr_t p = (uintptr_t)(nc + 1);
    nc->data = (unsigned char *)((p + 15) & ~(uintptr_t)15);
    nc->cap = cap;
    nc->used = 0;
    nc->prev = t;
    c->top = t = nc;
  }
  void *p = t->data + t->used;
  t->used += n;
  return p;
}

static mark scratch_mark(const vctx *c) { return (mark){c->top, c->top->used}; }

static void scratch_release(vctx *c, mark m) {
  while (c->top != m.top) {
    chunk *prev = c->top->prev;
    mcp__free(c->top);
    c->top = prev;
  }
  c->top->used = m.used;
}

/* ---- evaluated members and items ----------------------------------------- */

typedef struct ev {
  uint64_t *bits;
  size_t n;
} ev;

/* A fresh, empty set over n members or items; small sets live in *word. */
static int ev_new(vctx *c, ev *e, uint64_t *word, size_t n) {
  size_t words = (n + 63) / 64;
  e->n = n;
  if (words <= 1) {
    *word = 0;
    e->bits = word;
    return 0;
  }
  e->bits = scratch(c, words * sizeof(uint64_t));
  if (e->bits == NULL)
    return stop(c, MCP_ENOMEM, NULL);
  memset(e->bits, 0, words * sizeof(uint64_t));
  return 0;
}

static void ev_set(ev *e, size_t i) {
  if (e)
    e->bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static int ev_has(const ev *e, size_t i) {
  return (e->bits[i / 64] >> (i % 64)) & 1;
}

static void ev_merge(ev *dst, const ev *src) {
  for (size_t w = 0; w < (dst->n + 63) / 64; w++)
    dst->bits[w] |= src->bits[w];
}

static void ev_fill(ev *e) {
  for (size_t i = 0; i < e->n; i++)
    ev_set(e, i);
}

/* ---- helpers ------------------------------------------------------------- */

static verr *fail_at(vctx *c, int kw, const mcp__sk_node *n,
                     const cJSON *inst) {
  verr *f = &c->err;
  memset(f, 0, sizeof *f);
  f->kw = kw;
  f->node = n;
  f->inst = inst;
  f->depth = c->idepth;
  return f;
}

static unsigned inst_type(const cJSON *v) {
  switch (v->type & 0xFF) {
  case cJSON_NULL:
    return MCP__T_NULL;
  case cJSON_False:
  case cJSON_True:
    return MCP__T_BOOLEAN;
  case cJSON_Number:
    /* A non-finite double goes out as null, so it is judged as one. */
    return mcp__json_number_text(v) || isfinite(v->valuedouble) ? MCP__T_NUMBER
                                                                : MCP__T_NULL;
  case cJSON_String:
    return MCP__T_STRING;
  case cJSON_Array:
    return MCP__T_ARRAY;
  case cJSON_Object:
    return MCP__T_OBJECT;
  default:
    return 0;
  }
}

static size_t count_children(const cJSON *v) {
  size_t n = 0;
  for (const cJSON *x = v->child; x; x = x->next)
    n++;
  return n;
}

static int eval(vctx *c, mcp__sk_idx idx, const cJSON *inst, ev *e);

/* Evaluates a member or item: one level deeper in the instance. */
static int eval_child(vctx *c, mcp__sk_idx idx, const cJSON *v) {
  c->idepth++;
  int r = eval(c, idx, v, NULL);
  c->idepth--;
  return r;
}

static const mcp__sk_node *node_of(const vctx *c, mcp__sk_idx i) {
  return &c->s->nodes[i];
}

/* ---- numbers and strings ------------------------------------------------- */

OUT_OF_LINE static int eval_number(vctx *c, const mcp__sk_node *n,
                                   const cJSON *inst) {
  const mcp__sk_num *k = n->num;
  mcp__dec d;
  const mcp__dec *x = &d;
  if (mcp__dec_from_json(inst, &d) != 0)
    return V_OK; /* not finite: judged as null, like the wire form */
  if ((k->has & MCP__NUM_MIN) && mcp__dec_cmp(x, &k->min) < 0)
    return fail_at(c, KW_MINIMUM, n, inst), V_FAIL;
  if ((k->has & MCP__NUM_MAX) && mcp__dec_cmp(x, &k->max) > 0)
    return fail_at(c, KW_MAXIMUM, n, inst), V_FAIL;
  if ((k->has & MCP__NUM_XMIN) && mcp__dec_cmp(x, &k->xmin) <= 0)
    return fail_at(c, KW_EXCLUSIVE_MINIMUM, n, inst), V_FAIL;
  if ((k->has & MCP__NUM_XMAX) && mcp__dec_cmp(x, &k->xmax) >= 0)
    return fail_at(c, KW_EXCLUSIVE_MAXIMUM, n, inst), V_FAIL;
  if ((k->has & MCP__NUM_MULT) && !mcp__dec_multiple_of(x, &k->mult))
    return fail_at(c, KW_MULTIPLE_OF, n, inst), V_FAIL;
  return V_OK;
}

OUT_OF_LINE static int eval_string(vctx *c, const mcp__sk_node *n,
                                   const cJSON *inst) {
  const mcp__sk_str *k = n->str;
  const char *s = inst->valuestring ? inst->valuestring : "";
  size_t len = strlen(s);
  c->steps += len / 64;
  if (k->min_len > 0 || k->max_len != SIZE_MAX) {
    size_t cps = mcp__utf8_count(s, len);
    if (cps < k->min_len || cps > k->max_len) {
      verr *f =
          fail_at(c, cps < k->min_len ? KW_MIN_LENGTH : KW_MAX_LENGTH, n, inst);
      f->a = cps < k->min_len ? k->min_len : k->max_len;
      f->b = cps;
      return V_FAIL;
    }
  }
  if (k->pattern) {
    mark m = scratch_mark(c);
    void *buf = scratch(c, mcp__regex_scratch_size(k->pattern));
    if (buf == NULL)
      return stop(c, MCP_ENOMEM, NULL);
    int hit = mcp__regex_search(k->pattern, s, len, buf, &c->steps);
    scratch_release(c, m);
    if (!hit)
      return fail_at(c, KW_PATTERN, n, inst), V_FAIL;
    if (c->steps > c->max_steps)
      return stop(c, MCP_ELIMIT, "steps");
  }
  if (k->format != MCP__FMT_NONE && !mcp__format_check(k->format, s))
    return fail_at(c, KW_FORMAT, n, inst), V_FAIL;
  return V_OK;
}

/* ---- enum, const, uniqueItems -------------------------------------------- */

static int equal(vctx *c, const cJSON *a, const cJSON *b) {
  int r = mcp__json_equal(a, b, MCP__SK_MAX_EVAL_DEPTH, &c->steps);
  if (r < 0)
    return stop(c, MCP_ELIMIT, "depth");
  if (c->steps > c->max_steps)
    return stop(c, MCP_ELIMIT, "steps");
  return r;
}

OUT_OF_LINE static int eval_enum(vctx *c, const mcp__sk_node *n,
                                 const cJSON *inst) {
  if (n->enum_index) {
    /* Only values with the instance's hash need comparing. */
    uint64_t h;
    if (mcp__json_hash(inst, MCP__SK_MAX_EVAL_DEPTH, &c->steps, &h))
      return stop(c, MCP_ELIMIT, "depth");
    size_t lo = 0, hi = n->nenum;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (n->enum_index[mid].h < h)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (; lo < n->nenum && n->enum_index[lo].h == h; lo++) {
      int r = equal(c, inst, n->enum_index[lo].v);
      if (r != 0)
        return r;
    }
    return fail_at(c, KW_ENUM, n, inst), V_FAIL;
  }
  for (const cJSON *v = n->enum_->child; v; v = v->next) {
    int r = equal(c, inst, v);
    if (r != 0)
      return r;
  }
  return fail_at(c, KW_ENUM, n, inst), V_FAIL;
}

typedef struct hashed {
  uint64_t h;
  size_t i;
  const cJSON *v;
} hashed;

static int hashed_cmp(const void *a, const void *b) {
  const hashed *x = a, *y = b;
  if (x->h != y->h)
    return x->h < y->h ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

static int unique_fail(vctx *c, const mcp__sk_node *n, const cJSON *inst,
                       size_t i, size_t j) {
  verr *f = fail_at(c, KW_UNIQUE_ITEMS, n, inst);
  f->a = i < j ? i : j;
  f->b = i < j ? j : i;
  return V_FAIL;
}

OUT_OF_LINE static int eval_unique(vctx *c, const mcp__sk_node *n,
                                   const cJSON *inst, size_t count) {
  if (count <= 16) {
    size_t i = 0;
    for (const cJSON *a = inst->child; a; a = a->next, i++) {
      size_t j = i + 1;
      for (const cJSON *b = a->next; b; b = b->next, j++) {
        int r = equal(c, a, b);
        if (r < 0)
          return r;
        if (r)
          return unique_fail(c, n, inst, i, j);
      }
    }
    return V_OK;
  }
  /* Sort by hash; only neighbours with equal hashes need comparing. */
  mark m = scratch_mark(c);
  hashed *h = scratch(c, count * sizeof *h);
  if (h == NULL)
    return stop(c, MCP_ENOMEM, NULL);
  size_t i = 0;
  for (const cJSON *a = inst->child; a; a = a->next, i++) {
    h[i].i = i;
    h[i].v = a;
    if (mcp__json_hash(a, MCP__SK_MAX_EVAL_DEPTH, &c->steps, &h[i].h)) {
      scratch_release(c, m);
      return stop(c, MCP_ELIMIT, "depth");
    }
  }
  qsort(h, count, sizeof *h, hashed_cmp);
  for (size_t bits = count; bits; bits >>= 1)
    c->steps += count;
  int r = V_OK;
  for (size_t a = 0; a < count && r == V_OK; a++) {
    for (size_t b = a + 1; b < count && h[b].h == h[a].h; b++) {
      int eq = equal(c, h[a].v, h[b].v);
      if (eq < 0) {
        r = eq;
        break;
      }
      if (eq) {
        r = unique_fail(c, n, inst, h[a].i, h[b].i);
        break;
      }
    }
  }
  scratch_release(c, m);
  return r;
}

/* ---- arrays -------------------------------------------------------------- */

OUT_OF_LINE static int eval_array(vctx *c, const mcp__sk_node *n,
                                  const cJSON *inst, ev *use, size_t count) {
  const mcp__sk_arr *k = n->arr;
  if (count < k->min_items || count > k->max_items) {
    verr *f =
        fail_at(c, count < k->min_items ? KW_MIN_ITEMS : KW_MAX_ITEMS, n, inst);
    f->a = count < k->min_items ? k->min_items : k->max_items;
    f->b = count;
    return V_FAIL;
  }
  if (k->nprefix || k->items != MCP__SK_NONE) {
    const mcp__sk_node *items =
        k->items != MCP__SK_NONE ? node_of(c, k->items) : NULL;
    size_t i = 0;
    for (const cJSON *v = inst->child; v; v = v->next, i++) {
      int r;
      if (i < k->nprefix) {
        r = eval_child(c, k->prefix[i], v);
      } else if (items == NULL) {
        break;
      } else if (items->flags & MCP__SK_FALSE) {
        verr *f = fail_at(c, KW_ITEMS, n, v);
        f->depth++;
        f->a = k->nprefix;
        return V_FAIL;
      } else {
        r = eval_child(c, k->items, v);
      }
      if (r != V_OK)
        return r;
      ev_set(use, i);
    }
  }
  if (k->contains != MCP__SK_NONE) {
    size_t found = 0, i = 0;
    int all = use != NULL || k->max_contains != SIZE_MAX;
    for (const cJSON *v = inst->child; v; v = v->next, i++) {
      int r = eval_child(c, k->contains, v);
      if (r == V_STOP)
        return r;
      if (r == V_OK) {
        found++;
        ev_set(use, i);
        if (!all && found >= k->min_contains)
          break;
      }
    }
    if (found < k->min_contains || found > k->max_contains) {
      verr *f = fail_at(
          c, found < k->min_contains ? KW_CONTAINS : KW_MAX_CONTAINS, n, inst);
      f->a = found < k->min_contains ? k->min_contains : k->max_contains;
      f->b = found;
      return V_FAIL;
    }
  }
  if (k->unique)
    return eval_unique(c, n, inst, count);
  return V_OK;
}

/* ---- objects ------------------------------------------------------------- */

static long ent_find(const mcp__sk_obj *o, const char *key, size_t len) {
  uint32_t h = mcp__sk_hash(key, len);
  for (size_t j = h & o->mask; o->slots[j]; j = (j + 1) & o->mask) {
    const mcp__sk_ent *e = &o->ents[o->slots[j] - 1];
    if (e->hash == h && e->len == len && memcmp(e->name, key, len) == 0)
      return (long)(o->slots[j] - 1);
  }
  return -1;
}

/* Checks a property name against propertyNames. The name is not a node of
 * the instance, so a string node is made for it on the stack; a failure is
 * then pinned on the member, marked as being about its name. */
OUT_OF_LINE static int eval_name(vctx *c, mcp__sk_idx names,
                                 const cJSON *member) {
  cJSON tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.type = cJSON_String;
  tmp.valuestring = member->string ? member->string : (char *)"";
  c->idepth++;
  int r = eval(c, names, &tmp, NULL);
  c->idepth--;
  if (r == V_FAIL) {
    c->err.inst = member;
    c->err.is_name = 1;
    if (c->err.via_inst == &tmp)
      c->err.via_inst = member;
  }
  return r;
}

/* minProperties and maxProperties, against the instance's member count. */
static inline int eval_prop_count(vctx *c, const mcp__sk_node *n,
                                  const cJSON *inst, size_t count) {
  const mcp__sk_obj *o = n->obj;
  if (count >= o->min_props && count <= o->max_props)
    return V_OK;
  verr *f = fail_at(
      c, count < o->min_props ? KW_MIN_PROPERTIES : KW_MAX_PROPERTIES, n, inst);
  f->a = count < o->min_props ? o->min_props : o->max_props;
  f->b = count;
  return V_FAIL;
}

/* patternProperties for member v named key: every pattern the name matches
 * evaluates the value, and *matched is set when one does. */
static inline int eval_patterns(vctx *c, const mcp__sk_obj *o, const cJSON *v,
                                const char *key, int *matched) {
  for (size_t p = 0; p < o->npats; p++) {
    mark pm = scratch_mark(c);
    void *buf = scratch(c, mcp__regex_scratch_size(o->pats[p].re));
    if (buf == NULL)
      return stop(c, MCP_ENOMEM, NULL);
    int hit =
        mcp__regex_search(o->pats[p].re, key, strlen(key), buf, &c->steps);
    scratch_release(c, pm);
    if (!hit)
      continue;
    *matched = 1;
    int r = eval_child(c, o->pats[p].node, v);
    if (r != V_OK)
      return r;
  }
  return V_OK;
}

/* Member v, the i-th of the instance: its entry in properties, the
 * patterns its name matches, else additionalProperties (additional, NULL
 * when absent), then propertyNames. Records its entry in present, and in
 * use that a keyword evaluated it. */
static inline int eval_member(vctx *c, const mcp__sk_node *n, const cJSON *v,
                              size_t i, const mcp__sk_node *additional,
                              ev *present, ev *use) {
  const mcp__sk_obj *o = n->obj;
  int r, matched = 0;
  if (++c->steps > c->max_steps)
    return stop(c, MCP_ELIMIT, "steps");
  const char *key = v->string ? v->string : "";
  if (o->nents) {
    long k = ent_find(o, key, strlen(key));
    if (k >= 0) {
      ev_set(present, (size_t)k);
      if (o->ents[k].prop != MCP__SK_NONE) {
        matched = 1;
        if ((r = eval_child(c, o->ents[k].prop, v)) != V_OK)
          return r;
      }
    }
  }
  if ((r = eval_patterns(c, o, v, key, &matched)) != V_OK)
    return r;
  if (!matched && additional) {
    if (additional->flags & MCP__SK_FALSE) {
      verr *f = fail_at(c, KW_ADDITIONAL_PROPERTIES, n, v);
      f->depth++;
      f->name = key;
      return V_FAIL;
    }
    matched = 1;
    if ((r = eval_child(c, o->additional, v)) != V_OK)
      return r;
  }
  if (matched)
    ev_set(use, i);
  if (o->names != MCP__SK_NONE)
    return eval_name(c, o->names, v);
  return V_OK;
}

/* required and dependentRequired, against the table entries the instance
 * has (present). */
static inline int eval_required(vctx *c, const mcp__sk_node *n,
                                const cJSON *inst, const ev *present) {
  const mcp__sk_obj *o = n->obj;
  for (size_t k = 0; k < o->nrequired; k++) {
    if (!ev_has(present, o->required[k])) {
      verr *f = fail_at(c, KW_REQUIRED, n, inst);
      f->name = o->ents[o->required[k]].name;
      return V_FAIL;
    }
  }
  for (size_t k = 0; k < o->ndepreq; k++) {
    const mcp__sk_depreq *d = &o->depreq[k];
    if (!ev_has(present, d->trigger))
      continue;
    for (size_t j = 0; j < d->ndeps; j++) {
      if (!ev_has(present, d->deps[j])) {
        verr *f = fail_at(c, KW_DEPENDENT_REQUIRED, n, inst);
        f->name = o->ents[d->deps[j]].name;
        f->name2 = o->ents[d->trigger].name;
        return V_FAIL;
      }
    }
  }
  return V_OK;
}

/* The object keywords of node n on instance inst of count members: one
 * pass over the members, then the keywords about which ones are present. */
OUT_OF_LINE static int eval_object(vctx *c, const mcp__sk_node *n,
                                   const cJSON *inst, ev *use, size_t count) {
  const mcp__sk_obj *o = n->obj;
  int r = eval_prop_count(c, n, inst, count);
  if (r != V_OK)
    return r;
  mark m = scratch_mark(c);
  uint64_t word;
  ev present = {NULL, 0}; /* which table entries the instance has */
  if (o->nents && ev_new(c, &present, &word, o->nents))
    return V_STOP;
  const mcp__sk_node *additional =
      o->additional != MCP__SK_NONE ? node_of(c, o->additional) : NULL;
  size_t i = 0;
  for (const cJSON *v = inst->child; v && r == V_OK; v = v->next, i++)
    r = eval_member(c, n, v, i, additional, &present, use);
  if (r == V_OK)
    r = eval_required(c, n, inst, &present);
  for (size_t k = 0; r == V_OK && k < o->ndepsch; k++)
    if (ev_has(&present, o->depsch[k].trigger))
      r = eval(c, o->depsch[k].node, inst, use);
  scratch_release(c, m);
  return r;
}

/* ---- applicators --------------------------------------------------------- */

/* Could a subschema whose "type" is mask accept a value of type t? Used to
 * pick which failed alternative to explain. */
static int admits(unsigned mask, unsigned t) {
  return mask == 0 || (mask & t) ||
         (t == MCP__T_NUMBER && (mask & MCP__T_INTEGER));
}

/* anyOf (one == 0) and oneOf (one == 1). */
OUT_OF_LINE static int eval_alternatives(vctx *c, const mcp__sk_node *n,
                                         const cJSON *inst, ev *use,
                                         const mcp__sk_idx *alts, size_t count,
                                         int one) {
  unsigned t = inst_type(inst), union_mask = 0;
  int all_typed = 1, have_best = 0;
  size_t matches = 0, first = 0, best_k = 0;
  verr best;
  memset(&best, 0, sizeof best);
  mark m = scratch_mark(c);
  uint64_t kw_word, fw;
  ev keep = {NULL, 0};
  if (use && ev_new(c, &keep, &kw_word, use->n))
    return V_STOP;
  int r = V_OK;
  for (size_t k = 0; k < count; k++) {
    mark bm = scratch_mark(c);
    ev fresh;
    if (use && ev_new(c, &fresh, &fw, use->n)) {
      r = V_STOP;
      break;
    }
    int b = eval(c, alts[k], inst, use ? &fresh : NULL);
    if (b == V_OK && use)
      ev_merge(&keep, &fresh);
    scratch_release(c, bm);
    if (b == V_STOP) {
      r = V_STOP;
      break;
    }
    if (b == V_OK) {
      if (++matches == 1)
        first = k;
      if (one && matches > 1) {
        verr *f = fail_at(c, KW_ONE_OF, n, inst);
        f->a = first + 1;
        f->b = k + 1;
        r = V_FAIL;
        break;
      }
      if (!one && !use)
        break; /* nothing more to learn */
      continue;
    }
    const mcp__sk_node *alt = node_of(c, alts[k]);
    unsigned mask = alt->flags & MCP__SK_FALSE ? 0 : alt->types;
    if (mask == 0)
      all_typed = 0;
    union_mask |= mask;
    if (admits(mask, t) && (!have_best || c->err.depth > best.depth)) {
      best = c->err;
      best_k = k;
      have_best = 1;
    }
  }
  if (r == V_OK && matches == 0) {
    if (all_typed && !have_best) {
      verr *f = fail_at(c, KW_TYPE, n, inst);
      f->mask = union_mask;
      f->union_types = 1;
    } else {
      c->err = best;
      c->err.via_kw = one ? KW_ONE_OF : KW_ANY_OF;
      c->err.via_inst = inst;
      c->err.via_k = best_k + 1;
      c->err.via_n = count;
    }
    r = V_FAIL;
  }
  if (r == V_OK && use)
    ev_merge(use, &keep);
  scratch_release(c, m);
  return r;
}

/* The outermost resource in the dynamic scope that has the anchor. The
 * search is charged to the step budget, so a schema with thousands of
 * same-named anchors cannot make it slow. */
static mcp__sk_idx dynamic_target(vctx *c, const mcp__sk_app *a) {
  for (size_t i = 0; i < c->nscope; i++) {
    c->steps += a->ncands;
    for (size_t k = 0; k < a->ncands; k++)
      if (a->cands[k].res == c->scope[i])
        return a->cands[k].node;
  }
  return a->dynref;
}

OUT_OF_LINE static int eval_applicators(vctx *c, const mcp__sk_node *n,
                                        const cJSON *inst, ev *use) {
  const mcp__sk_app *a = n->app;
  int r;
  if (a->ref != MCP__SK_NONE && (r = eval(c, a->ref, inst, use)) != V_OK)
    return r;
  if (a->dynref != MCP__SK_NONE &&
      (r = eval(c, a->ncands ? dynamic_target(c, a) : a->dynref, inst, use)) !=
          V_OK)
    return r;
  for (size_t k = 0; k < a->nall_of; k++)
    if ((r = eval(c, a->all_of[k], inst, use)) != V_OK)
      return r;
  if (a->nany_of && (r = eval_alternatives(c, n, inst, use, a->any_of,
                                           a->nany_of, 0)) != V_OK)
    return r;
  if (a->none_of && (r = eval_alternatives(c, n, inst, use, a->one_of,
                                           a->none_of, 1)) != V_OK)
    return r;
  if (a->not_ != MCP__SK_NONE) {
    r = eval(c, a->not_, inst, NULL);
    if (r == V_STOP)
      return r;
    if (r == V_OK)
      return fail_at(c, KW_NOT, n, inst), V_FAIL;
  }
  if (a->if_ != MCP__SK_NONE &&
      (use || a->then_ != MCP__SK_NONE || a->else_ != MCP__SK_NONE)) {
    mark m = scratch_mark(c);
    uint64_t word;
    ev fresh;
    if (use && ev_new(c, &fresh, &word, use->n))
      return V_STOP;
    r = eval(c, a->if_, inst, use ? &fresh : NULL);
    if (r == V_OK && use)
      ev_merge(use, &fresh);
    scratch_release(c, m);
    if (r == V_STOP)
      return r;
    mcp__sk_idx next = r == V_OK ? a->then_ : a->else_;
    if (next != MCP__SK_NONE && (r = eval(c, next, inst, use)) != V_OK)
      return r;
  }
  return V_OK;
}

/* ---- unevaluated --------------------------------------------------------- */

OUT_OF_LINE static int eval_unevaluated(vctx *c, const mcp__sk_node *n,
                                        const cJSON *inst, const ev *seen,
                                        mcp__sk_idx un, int object) {
  const mcp__sk_node *u = node_of(c, un);
  size_t i = 0;
  for (const cJSON *v = inst->child; v; v = v->next, i++) {
    if (ev_has(seen, i))
      continue;
    if (u->flags & MCP__SK_FALSE) {
      verr *f = fail_at(
          c, object ? KW_UNEVALUATED_PROPERTIES : KW_UNEVALUATED_ITEMS, n, v);
      f->depth++;
      f->name = v->string;
      return V_FAIL;
    }
    int r = eval_child(c, un, v);
    if (r != V_OK)
      return r;
  }
  return V_OK;
}

/* ---- a subschema --------------------------------------------------------- */

/* Is a number integral? Kept out of eval_node so the decimal does not sit
 * in every recursive frame. */
static int is_integral(const cJSON *inst) {
  mcp__dec d;
  return mcp__dec_from_json(inst, &d) == 0 && mcp__dec_is_integer(&d);
}

static int eval_node(vctx *c, const mcp__sk_node *n, const cJSON *inst, ev *e) {
  unsigned t = inst_type(inst);
  int r;
  if (n->types && !(n->types & t) &&
      !(t == MCP__T_NUMBER && (n->types & MCP__T_INTEGER) &&
        is_integral(inst))) {
    fail_at(c, KW_TYPE, n, inst)->mask = n->types;
    return V_FAIL;
  }
  if (n->const_ && (r = equal(c, inst, n->const_)) != 1)
    return r < 0 ? r : (fail_at(c, KW_CONST, n, inst), V_FAIL);
  if (n->enum_ && (r = eval_enum(c, n, inst)) != V_OK)
    return r;
  r = V_OK;

  /* A node with unevaluatedProperties/Items keeps its own record of what
   * was evaluated, and reports everything evaluated upward afterwards. */
  mcp__sk_idx un = MCP__SK_NONE;
  if (t == MCP__T_OBJECT && n->obj)
    un = n->obj->unevaluated;
  else if (t == MCP__T_ARRAY && n->arr)
    un = n->arr->unevaluated;
  size_t count = 0;
  if ((t == MCP__T_OBJECT && n->obj) || (t == MCP__T_ARRAY && n->arr))
    count = count_children(inst);
  ev own, *use = e;
  uint64_t word;
  mark m = scratch_mark(c);
  if (un != MCP__SK_NONE) {
    if (ev_new(c, &own, &word, count))
      return V_STOP;
    use = &own;
  }
  switch (t) {
  case MCP__T_NUMBER:
    if (n->num)
      r = eval_number(c, n, inst);
    break;
  case MCP__T_STRING:
    if (n->str)
      r = eval_string(c, n, inst);
    break;
  case MCP__T_ARRAY:
    if (n->arr)
      r = eval_array(c, n, inst, use, count);
    break;
  case MCP__T_OBJECT:
    if (n->obj)
      r = eval_object(c, n, inst, use, count);
    break;
  default:
    break;
  }
  if (r == V_OK && n->app)
    r = eval_applicators(c, n, inst, use);
  if (r == V_OK && un != MCP__SK_NONE) {
    r = eval_unevaluated(c, n, inst, use, un, t == MCP__T_OBJECT);
    if (r == V_OK && e)
      ev_fill(e);
  }
  scratch_release(c, m);
  return r;
}

static int eval(vctx *c, mcp__sk_idx idx, const cJSON *inst, ev *e) {
  const mcp__sk_node *n = &c->s->nodes[idx];
  if (n->flags & MCP__SK_TRUE)
    return V_OK;
  if (n->flags & MCP__SK_FALSE)
    return fail_at(c, KW_FALSE, n, inst), V_FAIL;
  if (++c->steps > c->max_steps)
    return stop(c, MCP_ELIMIT, "steps");
  if (c->depth >= MCP__SK_MAX_EVAL_DEPTH)
    return stop(c, MCP_ELIMIT, "depth");
  c->depth++;
  int pushed = 0;
  if (c->s->dynamic && (c->nscope == 0 || c->scope[c->nscope - 1] != n->res)) {
    c->scope[c->nscope++] = n->res;
    pushed = 1;
  }
  int r = eval_node(c, n, inst, e);
  if (pushed)
    c->nscope--;
  c->depth--;
  return r;
}

/* ---- messages ------------------------------------------------------------ */

/* A bounded writer that never splits a UTF-8 sequence. */
typedef struct out {
  char *p;
  size_t cap, len; /* len may pass cap - 1: then the text was cut */
} out;

static void out_raw(out *o, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++, o->len++)
    if (o->len + 1 < o->cap)
      o->p[o->len] = s[i];
  if (o->cap)
    o->p[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

static void out_puts(out *o, const char *s) { out_raw(o, s, strlen(s)); }

static void out_printf(out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void out_printf(out *o, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0)
    out_raw(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* At most max bytes of s, cut at a character boundary, with "..." when
 * cut. */
static void out_cut(out *o, const char *s, size_t max) {
  size_t n = strlen(s);
  if (n <= max) {
    out_raw(o, s, n);
    return;
  }
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
    max--;
  out_raw(o, s, max);
  out_puts(o, "...");
}

static void out_quoted(out *o, const char *s, size_t max) {
  out_puts(o, "\"");
  out_cut(o, s, max);
  out_puts(o, "\"");
}

/* A short JSON rendering of v for messages: scalars in full (strings cut),
 * containers abbreviated. */
static void out_json(out *o, const cJSON *v) {
  switch (v->type & 0xFF) {
  case cJSON_NULL:
    out_puts(o, "null");
    break;
  case cJSON_True:
    out_puts(o, "true");
    break;
  case cJSON_False:
    out_puts(o, "false");
    break;
  case cJSON_Number: {
    const char *t = mcp__json_number_text(v);
    if (t)
      out_puts(o, t);
    else
      out_printf(o, "%.17g", v->valuedouble);
    break;
  }
  case cJSON_String:
    out_quoted(o, v->valuestring ? v->valuestring : "", 60);
    break;
  case cJSON_Array:
    out_puts(o, v->child ? "[...]" : "[]");
    break;
  case cJSON_Object:
    out_puts(o, v->child ? "{...}" : "{}");
    break;
  default:
    out_puts(o, "?");
  }
}

static const char *type_name(const cJSON *v) {
  switch (inst_type(v)) {
  case MCP__T_NULL:
    return "null";
  case MCP__T_BOOLEAN:
    return "boolean";
  case MCP__T_OBJECT:
    return "object";
  case MCP__T_ARRAY:
    return "array";
  case MCP__T_STRING:
    return "string";
  case MCP__T_NUMBER: {
    mcp__dec d;
    return mcp__dec_from_json(v, &d) == 0 && mcp__dec_is_integer(&d) ? "integer"
                                                                     : "number";
  }
  default:
    return "unknown";
  }
}

static const char *article(const char *type) {
  if (strcmp(type, "null") == 0)
    return "";
  return strchr("aeiou", type[0]) ? "an " : "a ";
}

/* "a string", or "one of string, null" in the schema's order. */
static void out_types(out *o, const verr *f) {
  static const char *const order[] = {"string", "number", "integer", "boolean",
                                      "object", "array",  "null"};
  const char *names[8];
  size_t n = 0;
  const cJSON *t =
      f->union_types ? NULL : mcp__json_member(f->node->src, "type");
  if (cJSON_IsString(t)) {
    names[n++] = t->valuestring;
  } else if (cJSON_IsArray(t)) {
    for (const cJSON *e = t->child; e && n < 8; e = e->next)
      names[n++] = e->valuestring;
  } else {
    static const unsigned bits[] = {
        MCP__T_STRING, MCP__T_NUMBER, MCP__T_INTEGER, MCP__T_BOOLEAN,
        MCP__T_OBJECT, MCP__T_ARRAY,  MCP__T_NULL};
    for (size_t i = 0; i < 7; i++)
      if (f->mask & bits[i])
        names[n++] = order[i];
  }
  if (n == 1) {
    out_printf(o, "%s%s", article(names[0]), names[0]);
    return;
  }
  out_puts(o, "one of ");
  for (size_t i = 0; i < n; i++)
    out_printf(o, "%s%s", i ? ", " : "", names[i]);
}

static const char *plural(size_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

static void out_number_of(out *o, const cJSON *src) { out_json(o, src); }

/* The property names an object schema declares, for "unexpected property"
 * messages: the model learns what it may send. For unevaluatedProperties
 * the accepted names may come from subschemas; only the node's own are
 * listed, and none is claimed when it has none. */
static void out_allowed(out *o, const mcp__sk_obj *ob, int unevaluated) {
  size_t total = ob ? ob->nprops : 0, npats = ob ? ob->npats : 0;
  if (total == 0 && npats == 0) {
    out_puts(o, unevaluated ? "; no part of the schema accepts it"
                            : "; no properties are accepted here");
    return;
  }
  if (total > 0) {
    size_t shown = 0;
    out_puts(o, total == 1 ? "; the accepted property is "
                           : "; the accepted properties are ");
    for (size_t i = 0; i < ob->nents && shown < 12; i++) {
      if (ob->ents[i].prop == MCP__SK_NONE)
        continue;
      out_puts(o, shown ? ", " : "");
      out_quoted(o, ob->ents[i].name, 40);
      shown++;
    }
    if (total > shown)
      out_printf(o, " and %zu more", total - shown);
  }
  for (size_t p = 0; p < npats && p < 3; p++) {
    if (p > 0)
      out_puts(o, " or ");
    else
      out_puts(o, total ? ", and names matching " : "; names must match ");
    out_cut(o, ob->pats[p].src, 60);
  }
}

/* The sentence of one keyword's failure, about value v; text is its row's
 * words (see sentences below). */
typedef void describer(out *o, const verr *f, const cJSON *v, const char *text);

/* A sentence that says nothing about the value or the schema. */
static void say_text(out *o, const verr *f, const cJSON *v, const char *text) {
  (void)f, (void)v;
  out_puts(o, text);
}

/* "type": the accepted types, and the type the value has. */
static void say_type(out *o, const verr *f, const cJSON *v, const char *text) {
  out_puts(o, text);
  out_types(o, f);
  out_printf(o, ", not %s.", type_name(v));
}

/* The first ten allowed values, and how many more there are. */
static void say_enum(out *o, const verr *f, const cJSON *v, const char *text) {
  const cJSON *allowed = f->node->enum_;
  size_t i = 0;
  (void)v;
  out_puts(o, text);
  for (const cJSON *e = allowed->child; e; e = e->next, i++) {
    if (i == 10) {
      out_printf(o, ", and %d more", cJSON_GetArraySize(allowed) - (int)i);
      break;
    }
    out_puts(o, i ? ", " : "");
    out_json(o, e);
  }
  out_puts(o, i == 0 ? "nothing: no value is allowed." : ".");
}

/* "const": the one value allowed. */
static void say_const(out *o, const verr *f, const cJSON *v, const char *text) {
  (void)v;
  out_puts(o, text);
  out_json(o, f->node->const_);
  out_puts(o, ".");
}

/* A numeric bound, written as the schema wrote it. */
static void say_bound(out *o, const verr *f, const cJSON *v, const char *text) {
  const mcp__sk_num *num = f->node->num;
  const cJSON *src = f->kw == KW_MULTIPLE_OF         ? num->mult_src
                     : f->kw == KW_MAXIMUM           ? num->max_src
                     : f->kw == KW_EXCLUSIVE_MAXIMUM ? num->xmax_src
                     : f->kw == KW_MINIMUM           ? num->min_src
                                                     : num->xmin_src;
  (void)v;
  out_puts(o, text);
  out_number_of(o, src);
  out_puts(o, ".");
}

/* "maxLength" and "minLength", in characters. */
static void say_length(out *o, const verr *f, const cJSON *v,
                       const char *text) {
  (void)v, (void)text;
  out_printf(o, "must be at %s %zu character%s long, not %zu.",
             f->kw == KW_MAX_LENGTH ? "most" : "least", f->a,
             plural(f->a, "", "s"), f->b);
}

/* "pattern": the regular expression, cut to 120 bytes. */
static void say_pattern(out *o, const verr *f, const cJSON *v,
                        const char *text) {
  (void)v;
  out_puts(o, text);
  out_cut(o, f->node->str->pattern_src, 120);
  out_puts(o, ".");
}

/* "format": the format's name and an example of it. */
static void say_format(out *o, const verr *f, const cJSON *v,
                       const char *text) {
  mcp__format format = f->node->str->format;
  (void)v, (void)text;
  out_printf(o, "must be a valid %s: %s.", mcp__format_name(format),
             mcp__format_example(format));
}

/* "items": false after the prefix items; how many are accepted. */
static void say_items(out *o, const verr *f, const cJSON *v, const char *text) {
  (void)v, (void)text;
  out_printf(o, "unexpected item; this array accepts at most %zu item%s.", f->a,
             plural(f->a, "", "s"));
}

/* "contains" and "minContains": how many items must match. */
static void say_contains(out *o, const verr *f, const cJSON *v,
                         const char *text) {
  (void)v, (void)text;
  if (f->a == 1)
    out_puts(o, "must contain at least one item that matches \"contains\".");
  else
    out_printf(o,
               "must contain at least %zu items that match \"contains\", "
               "not %zu.",
               f->a, f->b);
}

/* "maxContains": how many items may match, and how many did. */
static void say_max_contains(out *o, const verr *f, const cJSON *v,
                             const char *text) {
  (void)v, (void)text;
  out_printf(o,
             "must contain at most %zu item%s that match%s \"contains\", "
             "not %zu.",
             f->a, plural(f->a, "", "s"), plural(f->a, "es", ""), f->b);
}

/* "maxItems" and "minItems". */
static void say_item_count(out *o, const verr *f, const cJSON *v,
                           const char *text) {
  (void)v, (void)text;
  out_printf(o, "must have at %s %zu item%s, not %zu.",
             f->kw == KW_MAX_ITEMS ? "most" : "least", f->a,
             plural(f->a, "", "s"), f->b);
}

/* "uniqueItems": the first two equal items. */
static void say_unique(out *o, const verr *f, const cJSON *v,
                       const char *text) {
  (void)v, (void)text;
  out_printf(o, "must not repeat items; items %zu and %zu are equal.", f->a,
             f->b);
}

/* A property no keyword accepts, and which ones the schema would. */
static void say_unexpected_property(out *o, const verr *f, const cJSON *v,
                                    const char *text) {
  (void)v;
  out_puts(o, text);
  out_quoted(o, f->name ? f->name : "", 60);
  out_allowed(o, f->node->obj, f->kw == KW_UNEVALUATED_PROPERTIES);
  out_puts(o, ".");
}

/* "required": the first missing property. */
static void say_required(out *o, const verr *f, const cJSON *v,
                         const char *text) {
  (void)v;
  out_puts(o, text);
  out_quoted(o, f->name, 60);
  out_puts(o, ".");
}

/* "dependentRequired": the missing property and the one requiring it. */
static void say_dependent_required(out *o, const verr *f, const cJSON *v,
                                   const char *text) {
  (void)v;
  out_puts(o, text);
  out_quoted(o, f->name, 60);
  out_puts(o, ", which is required when ");
  out_quoted(o, f->name2, 60);
  out_puts(o, " is present.");
}

/* "maxProperties" and "minProperties". */
static void say_property_count(out *o, const verr *f, const cJSON *v,
                               const char *text) {
  (void)v, (void)text;
  out_printf(o, "must have at %s %zu propert%s, not %zu.",
             f->kw == KW_MAX_PROPERTIES ? "most" : "least", f->a,
             plural(f->a, "y", "ies"), f->b);
}

/* "oneOf": the first two alternatives that matched. */
static void say_one_of(out *o, const verr *f, const cJSON *v,
                       const char *text) {
  (void)v, (void)text;
  out_printf(o,
             "matches alternatives %zu and %zu of \"oneOf\", but must "
             "match exactly one.",
             f->a, f->b);
}

/* One row per keyword: the function that writes its sentence and the words
 * it starts with. A keyword without a row is "not valid". */
static const struct sentence {
  describer *say;
  const char *text;
} sentences[] = {
    [KW_FALSE] = {say_text, "is not allowed here."},
    [KW_TYPE] = {say_type, "must be "},
    [KW_ENUM] = {say_enum, "must be one of "},
    [KW_CONST] = {say_const, "must be exactly "},
    [KW_MULTIPLE_OF] = {say_bound, "must be a multiple of "},
    [KW_MAXIMUM] = {say_bound, "must be at most "},
    [KW_EXCLUSIVE_MAXIMUM] = {say_bound, "must be less than "},
    [KW_MINIMUM] = {say_bound, "must be at least "},
    [KW_EXCLUSIVE_MINIMUM] = {say_bound, "must be greater than "},
    [KW_MAX_LENGTH] = {say_length, NULL},
    [KW_MIN_LENGTH] = {say_length, NULL},
    [KW_PATTERN] = {say_pattern, "must match the regular expression "},
    [KW_FORMAT] = {say_format, NULL},
    [KW_ITEMS] = {say_items, NULL},
    [KW_CONTAINS] = {say_contains, NULL},
    [KW_MAX_CONTAINS] = {say_max_contains, NULL},
    [KW_MAX_ITEMS] = {say_item_count, NULL},
    [KW_MIN_ITEMS] = {say_item_count, NULL},
    [KW_UNIQUE_ITEMS] = {say_unique, NULL},
    [KW_UNEVALUATED_ITEMS] =
        {say_text, "unexpected item; no part of the schema accepts it."},
    [KW_ADDITIONAL_PROPERTIES] = {say_unexpected_property,
                                  "unexpected property "},
    [KW_UNEVALUATED_PROPERTIES] = {say_unexpected_property,
                                   "unexpected property "},
    [KW_REQUIRED] = {say_required, "missing required property "},
    [KW_DEPENDENT_REQUIRED] = {say_dependent_required, "missing property "},
    [KW_MAX_PROPERTIES] = {say_property_count, NULL},
    [KW_MIN_PROPERTIES] = {say_property_count, NULL},
    [KW_ONE_OF] = {say_one_of, NULL},
    [KW_NOT] = {say_text, "must not match the schema in \"not\"."},
};

/* The sentence for a failure, about value v. */
static void describe(out *o, const verr *f, const cJSON *v) {
  if (f->kw < 0 || (size_t)f->kw >= sizeof sentences / sizeof *sentences ||
      sentences[f->kw].say == NULL) {
    out_puts(o, "is not valid.");
    return;
  }
  sentences[f->kw].say(o, f, v, sentences[f->kw].text);
}

/* ---- instance paths ------------------------------------------------------ */

typedef struct pathbuf {
  char s[256];
  size_t len; /* may exceed the buffer: then it was cut */
} pathbuf;

static void path_add(pathbuf *p, const char *s, size_t n) {
  /* One byte past the cut is kept, to tell whether the cut splits a
   * character. */
  for (size_t i = 0; i < n; i++, p->len++)
    if (p->len < sizeof p->s - 3)
      p->s[p->len] = s[i];
}

/* Finds target under cur, writing its JSON pointer. */
static int find_path(const cJSON *cur, const cJSON *target, pathbuf *p,
                     int depth) {
  if (cur == target)
    return 1;
  if (depth > MCP__SK_MAX_EVAL_DEPTH ||
      !(cJSON_IsArray(cur) || cJSON_IsObject(cur)))
    return 0;
  size_t i = 0;
  for (const cJSON *ch = cur->child; ch; ch = ch->next, i++) {
    size_t save = p->len;
    path_add(p, "/", 1);
    if (cJSON_IsObject(cur)) {
      for (const char *k = ch->string ? ch->string : ""; *k; k++) {
        if (*k == '~')
          path_add(p, "~0", 2);
        else if (*k == '/')
          path_add(p, "~1", 2);
        else
          path_add(p, k, 1);
      }
    } else {
      char tmp[24];
      int n = snprintf(tmp, sizeof tmp, "%zu", i);
      path_add(p, tmp, (size_t)n);
    }
    if (find_path(ch, target, p, depth + 1))
      return 1;
    p->len = save;
  }
  return 0;
}

static void out_path(out *o, const cJSON *root, const cJSON *target) {
  pathbuf p;
  p.len = 0;
  if (!find_path(root, target, &p, 0) || p.len == 0)
    return;
  size_t n = p.len < sizeof p.s - 4 ? p.len : sizeof p.s - 4;
  while (n > 0 && n < p.len && ((unsigned char)p.s[n] & 0xC0) == 0x80)
    n--;
  out_puts(o, " at ");
  out_raw(o, p.s, n);
  if (n < p.len)
    out_puts(o, "...");
}

static void format_error(const vctx *c, const cJSON *root, const char *label,
                         char *msg, size_t msglen) {
  out o = {msg, msglen, 0};
  const verr *f = &c->err;
  out_puts(&o, label);
  cJSON name;
  const cJSON *subject = f->inst;
  if (f->is_name) {
    memset(&name, 0, sizeof name);
    name.type = cJSON_String;
    name.valuestring = f->inst->string ? f->inst->string : (char *)"";
    subject = &name;
  }
  if (f->via_kw) {
    out_path(&o, root, f->via_inst);
    out_printf(&o,
               ": %s: matches none of the %zu alternatives; alternative "
               "%zu fails",
               kw_names[f->via_kw], f->via_n, f->via_k);
    if (f->inst != f->via_inst)
      out_path(&o, root, f->inst);
    out_puts(&o, ": ");
  } else {
    out_path(&o, root, f->inst);
    out_puts(&o, ": ");
  }
  if (f->is_name) {
    out_puts(&o, "propertyNames: the property name ");
    out_quoted(&o, name.valuestring, 60);
    out_puts(&o, " ");
  } else {
    out_printf(&o, "%s: ", kw_names[f->kw]);
  }
  describe(&o, f, subject);
  if (msglen)
    mcp__utf8_trim(msg);
}

/* ---- the API ------------------------------------------------------------- */

/* ---- flat schemas ---------------------------------------------------------
 * Most tools take an object of a few typed members. For such a schema the
 * members' types, the required names and the counts settle validity in one
 * walk; only an instance that may fail goes through eval, which alone
 * explains failures. The walk counts the steps eval would take, so that a
 * schema's step limit ends both alike. */

/* A member's subschema the walk can judge: true, false, or a node with
 * nothing but a "type". */
static int flat_member(const mcp__sk_node *n) {
  if (n->flags)
    return 1;
  return !n->enum_ && !n->const_ && !n->num && !n->str && !n->arr && !n->obj &&
         !n->app;
}

int mcp__sk_flat(const mcp__schema *s) {
  const mcp__sk_node *n = &s->nodes[s->root];
  const mcp__sk_obj *o = n->obj;
  if (s->dynamic || n->flags || (n->types && !(n->types & MCP__T_OBJECT)) ||
      n->enum_ || n->const_ || n->app || o == NULL || o->nents > 64 ||
      o->npats || o->names != MCP__SK_NONE || o->unevaluated != MCP__SK_NONE ||
      o->ndepreq || o->ndepsch)
    return 0;
  if (o->additional != MCP__SK_NONE && !flat_member(&s->nodes[o->additional]))
    return 0;
  for (size_t k = 0; k < o->nents; k++)
    if (o->ents[k].prop != MCP__SK_NONE &&
        !flat_member(&s->nodes[o->ents[k].prop]))
      return 0;
  return 1;
}

/* Whether inst certainly passes the flat schema s; 0 when it may not
 * (eval decides, and explains). */
static int flat_passes(const mcp__schema *s, const cJSON *inst) {
  const mcp__sk_obj *o = s->nodes[s->root].obj;
  if ((inst->type & 0xFF) != cJSON_Object)
    return 0;
  uint64_t present = 0;
  size_t count = 0;
  unsigned long steps = 1; /* the root */
  for (const cJSON *v = inst->child; v; v = v->next) {
    count++;
    steps++; /* each member */
    const char *key = v->string ? v->string : "";
    long k = o->nents ? ent_find(o, key, strlen(key)) : -1;
    mcp__sk_idx p = MCP__SK_NONE;
    if (k >= 0) {
      present |= (uint64_t)1 << k;
      p = o->ents[k].prop;
    }
    if (p == MCP__SK_NONE)
      p = o->additional;
    if (p == MCP__SK_NONE)
      continue;
    const mcp__sk_node *m = &s->nodes[p];
    if (m->flags & MCP__SK_TRUE)
      continue;
    if (m->flags & MCP__SK_FALSE)
      return 0;
    steps++; /* its subschema */
    unsigned t = inst_type(v);
    if (m->types && !(m->types & t) &&
        !(t == MCP__T_NUMBER && (m->types & MCP__T_INTEGER) && is_integral(v)))
      return 0;
  }
  if (steps > s->max_steps || count < o->min_props || count > o->max_props)
    return 0;
  for (size_t k = 0; k < o->nrequired; k++)
    if (!((present >> o->required[k]) & 1))
      return 0;
  return 1;
}

int mcp__schema_validate(const mcp__schema *s, const cJSON *instance,
                         const char *label, char *msg, size_t msglen) {
  if (s->flat && flat_passes(s, instance)) {
    if (msg && msglen)
      msg[0] = '\0';
    return 0;
  }
  vctx c;
  c.s = s;
  c.steps = 0;
  c.max_steps = s->max_steps;
  c.depth = c.idepth = 0;
  c.rc = 0;
  c.stop_why = NULL;
  c.nscope = 0;
  c.first.prev = NULL;
  c.first.cap = sizeof c.buf;
  c.first.used = 0;
  c.first.data = (unsigned char *)c.buf;
  c.top = &c.first;
  memset(&c.err, 0, sizeof c.err);
  if (label == NULL)
    label = "Invalid value";
  if (msg && msglen)
    msg[0] = '\0';
  int r = eval(&c, s->root, instance, NULL);
  scratch_release(&c, (mark){&c.first, 0});
  if (r == V_OK)
    return 0;
  if (r == V_FAIL) {
    if (msg && msglen)
      format_error(&c, instance, label, msg, msglen);
    return MCP_EINVAL;
  }
  if (c.rc == MCP_ENOMEM) {
    mcp__fmt(msg, msglen, "%s: out of memory while validating", label);
  } else if (c.stop_why && strcmp(c.stop_why, "depth") == 0) {
    mcp__fmt(msg, msglen,
             "%s: the value is nested too deeply to check against the "
             "schema (more than %d levels of subschemas).",
             label, MCP__SK_MAX_EVAL_DEPTH);
  } else {
    mcp__fmt(msg, msglen,
             "%s: the value is too large to check against the schema "
             "(more than %lu validation steps).",
             label, s->max_steps);
  }
  return c.rc;
}
