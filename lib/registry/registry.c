/* Tools: the rules a definition must meet, its cached wire form, and the
 * ordered table that tools/list pages through.
 *
 * A tool is checked once, at registration, and its Tool object is printed
 * once per protocol version then; tools/list only concatenates those. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* ---- validation ---------------------------------------------------------- */

bool mcp__name_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

int mcp__name_valid(const char *name, size_t max) {
  size_t n = name ? strlen(name) : 0;
  if (n < 1 || n > max)
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (!mcp__name_char((unsigned char)name[i]))
      return 0;
  }
  return 1;
}

void mcp__problems_init(mcp__problems *p, char *err, size_t errlen,
                        const char *what, const char *name) {
  *p = (mcp__problems){.err = err, .errlen = errlen};
  if (errlen == 0)
    return;
  const char *shown = name == NULL                          ? ""
                      : mcp__utf8_valid(name, strlen(name)) ? name
                                                            : "(invalid UTF-8)";
  mcp__fmt(err, errlen, "%s \"%.140s\": ", what, shown);
  mcp__utf8_trim(err);
  p->len = strlen(err);
}

void mcp__problem(mcp__problems *p, const char *fmt, ...) {
  if (p->errlen > p->len + 1) {
    char *at = p->err + p->len;
    size_t room = p->errlen - p->len;
    int sep = 0;
    if (p->n > 0)
      sep = snprintf(at, room, "; ");
    if (sep >= 0 && (size_t)sep < room) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(at + sep, room - (size_t)sep, fmt, ap);
      va_end(ap);
    }
    mcp__utf8_trim(p->err);
    p->len = strlen(p->err);
  }
  p->n++;
}

/* How to write a hint that registration could not read. */
#define HINT_FIX "write MCP_HINT_TRUE or MCP_HINT_FALSE"

/* Checks that member holds a value of mcp_hint, and says what it holds
 * when not. 1 gets its own sentence: it is what C's true converts to, the
 * likeliest mistake. Returns whether the value is one of mcp_hint's. */
static bool hint_value(mcp__problems *p, const char *member, mcp_hint h,
                       const char *fix) {
  if (h == MCP_HINT_UNSET || h == MCP_HINT_FALSE || h == MCP_HINT_TRUE)
    return true;
  if ((int)h == 1)
    mcp__problem(p, "%s is 1 (C true?): %s", member, fix);
  else
    mcp__problem(p, "%s is %d, which is not an mcp_hint: %s", member, (int)h,
                 fix);
  return false;
}

/* The rules of promise 1 (docs/architecture.md), every problem recorded.
 * MCP_HINT_UNSET is 0 and the stated values are letters, so C's false (0) reads
 * as unset and C's true (1) as no hint at all: neither can pass for a stated
 * hint. */
static void check_hints(const mcp_tool_annotations *a, mcp__problems *p) {
  const char *unsure =
      "leave it MCP_HINT_UNSET if the tool is read-only, else " HINT_FIX;
  const char *rw_fix = a->read_only == MCP_HINT_TRUE
                           ? "leave it unset (MCP_HINT_UNSET) on a read-only "
                             "tool, where it means nothing"
                       : a->read_only == MCP_HINT_FALSE ? HINT_FIX
                                                        : unsure;
  bool ro = hint_value(p, "read_only", a->read_only, HINT_FIX);
  bool de = hint_value(p, "destructive", a->destructive, rw_fix);
  bool id = hint_value(p, "idempotent", a->idempotent, rw_fix);
  bool ow = hint_value(p, "open_world", a->open_world, HINT_FIX);
  static const char unset[] = "it is 0, which means unset (C's false is 0, not "
                              "MCP_HINT_FALSE): " HINT_FIX;
  if (ro && a->read_only == MCP_HINT_UNSET)
    mcp__problem(p, "read_only must be stated: %s", unset);
  if (ow && a->open_world == MCP_HINT_UNSET)
    mcp__problem(p, "open_world must be stated: %s", unset);
  if (a->read_only == MCP_HINT_TRUE) {
    if (de && a->destructive == MCP_HINT_TRUE)
      mcp__problem(p, "contradictory hints: a read-only tool cannot be "
                      "destructive");
    else if (de && a->destructive != MCP_HINT_UNSET)
      mcp__problem(p, "destructive is meaningless on a read-only tool; leave "
                      "it unset");
    if (id && a->idempotent != MCP_HINT_UNSET)
      mcp__problem(p, "idempotent is meaningless on a read-only tool; leave "
                      "it unset");
  } else if (a->read_only == MCP_HINT_FALSE) {
    if (de && a->destructive == MCP_HINT_UNSET)
      mcp__problem(p,
                   "destructive must be stated when read_only is "
                   "MCP_HINT_FALSE: %s",
                   unset);
    if (id && a->idempotent == MCP_HINT_UNSET)
      mcp__problem(p,
                   "idempotent must be stated when read_only is "
                   "MCP_HINT_FALSE: %s",
                   unset);
  }
}

static int text_valid(const char *s) {
  return s == NULL || mcp__utf8_valid(s, strlen(s));
}

/* Parses and compiles an object schema. The compiled form borrows the
 * parsed document, so the tool keeps both. Returns 0, MCP_EINVAL (the
 * problem recorded in p) or MCP_ENOMEM. */
static int parse_object_schema(const char *text, const char *which,
                               unsigned tool_flags, cJSON **out,
                               mcp__schema **compiled, mcp__problems *p) {
  mcp__json_doc doc = {0};
  char why[320];
  int rc = mcp__json_parse(text, strlen(text), NULL, &doc, why, sizeof why);
  if (rc == MCP_ENOMEM)
    return rc;
  if (rc != 0) {
    mcp__problem(p, "%s is not valid JSON: %s", which, why);
    return MCP_EINVAL;
  }
  const cJSON *type = mcp__json_member(doc.root, "type");
  if (!cJSON_IsObject(doc.root) || !cJSON_IsString(type) ||
      strcmp(type->valuestring, "object") != 0) {
    mcp__json_doc_free(&doc);
    mcp__problem(p, "%s must be a JSON object schema with \"type\":\"object\"",
                 which);
    return MCP_EINVAL;
  }
  mcp__schema_options opt = {.flags = (tool_flags & MCP_TOOL_ASSERT_FORMATS)
                                          ? MCP__SCHEMA_ASSERT_FORMAT
                                          : 0};
  rc = mcp__schema_compile(doc.root, &opt, compiled, why, sizeof why);
  if (rc != 0) {
    mcp__json_doc_free(&doc);
    if (rc == MCP_EINVAL)
      mcp__problem(p, "%s is invalid %s", which, why);
    return rc;
  }
  *out = doc.root;
  doc.root = NULL;
  mcp__json_doc_free(&doc);
  return 0;
}

/* ---- wire form ----------------------------------------------------------- */

static void put_hint(mcp__buf *b, const char *key, mcp_hint h, int *first) {
  if (h == MCP_HINT_UNSET)
    return;
  mcp__buf_printf(b, "%s\"%s\":%s", *first ? "" : ",", key,
                  h == MCP_HINT_TRUE ? "true" : "false");
  *first = 0;
}

void mcp__put_string_member(mcp__buf *b, const char *key, const char *val) {
  if (val == NULL)
    return;
  mcp__buf_printf(b, ",\"%s\":", key);
  mcp__json_quote(b, val, strlen(val));
}

/* Prints the Tool object as version v defines it: annotations from
 * 2025-03-26, title, outputSchema and _meta from 2025-06-18, icons from
 * 2025-11-25. Every hint is written explicitly, stated or derived, so no
 * client falls back to the worst-case defaults and a directory scan that
 * requires all four finds them. */
static int build_wire(const mcp_tool *def, const mcp__tool *t, mcp__version v,
                      bool marked, mcp__buf *b) {
  const mcp_tool_annotations *a = &def->annotations;
  mcp__buf_puts(b, "{\"name\":");
  mcp__json_quote(b, t->name, strlen(t->name));
  if (v >= MCP__V2025_06_18)
    mcp__put_string_member(b, "title", def->title);
  mcp__put_string_member(b, "description", def->description);
  mcp__buf_puts(b, ",\"inputSchema\":");
  mcp__json_write(b, t->input_schema);
  if (v >= MCP__V2025_06_18 && t->output_schema) {
    mcp__buf_puts(b, ",\"outputSchema\":");
    mcp__json_write(b, t->output_schema);
  }
  if (v >= MCP__V2025_03_26) {
    int first = 1;
    mcp__buf_puts(b, ",\"annotations\":{");
    const char *title = a->title ? a->title : def->title;
    if (title) {
      mcp__buf_puts(b, "\"title\":");
      mcp__json_quote(b, title, strlen(title));
      first = 0;
    }
    /* A tool that changes nothing is not destructive and is trivially
     * idempotent: its author may not state those two (registration refuses
     * it), so they are derived here, and every hint reaches the client. */
    bool ro = a->read_only == MCP_HINT_TRUE;
    put_hint(b, "readOnlyHint", a->read_only, &first);
    put_hint(b, "destructiveHint", ro ? MCP_HINT_FALSE : a->destructive,
             &first);
    put_hint(b, "idempotentHint", ro ? MCP_HINT_TRUE : a->idempotent, &first);
    put_hint(b, "openWorldHint", a->open_world, &first);
    mcp__buf_putc(b, '}');
  }
  /* Task support is a field of 2025-11-25 alone: 2026-07-28 moved tasks
   * to an extension that lists nothing per tool. */
  if (v == MCP__V2025_11_25 && t->task_support)
    mcp__buf_printf(b, ",\"execution\":{\"taskSupport\":\"%s\"}",
                    t->task_support == MCP_TOOL_TASK_REQUIRED ? "required"
                                                              : "optional");
  if (!marked) {
    mcp__put_extras(b, t->icons, t->meta, v);
    return mcp__buf_putc(b, '}');
  }
  /* The marker joins the tool's own _meta (whose keys cannot be the
   * protocol's: mcp__meta_render refuses them). */
  mcp__put_extras(b, t->icons, NULL, v);
  mcp__buf_puts(b, ",\"_meta\":{\"" MCP__RESOLUTION "\":{\"resolvable\":true}");
  if (t->meta && strcmp(t->meta, "{}") != 0) {
    mcp__buf_putc(b, ',');
    mcp__buf_puts(b, t->meta + 1); /* its members and closing brace */
  } else {
    mcp__buf_putc(b, '}');
  }
  return mcp__buf_putc(b, '}');
}

/* Builds t's wire form for each version, and a resolvable tool's marked
 * form for each version that has _meta. 0 or MCP_ENOMEM. */
static int build_wires(const mcp_tool *def, mcp__tool *t) {
  for (int v = 0; v < MCP__VERSION_COUNT; v++) {
    mcp__buf b = {0};
    build_wire(def, t, (mcp__version)v, false, &b);
    if (mcp__wire_take(t, v, &b) != 0)
      return MCP_ENOMEM;
    if (t->resolve == NULL || v < MCP__V2025_06_18)
      continue;
    build_wire(def, t, (mcp__version)v, true, &b);
    if ((t->marked[v] = mcp__buf_take(&b, &t->marked_len[v])) == NULL)
      return MCP_ENOMEM;
  }
  return 0;
}

int mcp__wire_take(mcp__tool *t, int v, mcp__buf *b) {
  size_t len;
  char *w = mcp__buf_take(b, &len);
  if (w == NULL)
    return MCP_ENOMEM;
  if (v > 0 && t->wire[v - 1] && t->wire_len[v - 1] == len &&
      memcmp(t->wire[v - 1], w, len) == 0) {
    mcp__free(w);
    w = t->wire[v - 1];
  }
  t->wire[v] = w;
  t->wire_len[v] = len;
  return 0;
}

/* ---- tool objects -------------------------------------------------------- */

static void tool_free(mcp__tool *t) {
  if (t == NULL)
    return;
  mcp__params_free(t);
  mcp__free(t->name);
  mcp__free(t->mime_type);
  mcp__uritemplate_free(t->tmpl);
  for (size_t i = 0; i < t->nargs; i++)
    mcp__free(t->arg_names[i]);
  mcp__free(t->arg_names);
  mcp__free(t->arg_required);
  for (size_t i = 0; t->scopes && t->scopes[i]; i++)
    mcp__free(t->scopes[i]);
  mcp__free(t->scopes);
  mcp__schema_free(t->input); /* borrows the documents: freed first */
  mcp__schema_free(t->output);
  cJSON_Delete(t->input_schema);
  cJSON_Delete(t->output_schema);
  mcp__free(t->icons);
  mcp__free(t->meta);
  mcp__free(t->owned);
  for (int v = 0; v < MCP__VERSION_COUNT; v++) {
    if (v == 0 || t->wire[v] != t->wire[v - 1]) /* shared: freed once */
      mcp__free(t->wire[v]);
    mcp__free(t->marked[v]);
  }
  mcp__free(t);
}

void mcp__tool_ref(mcp__tool *t) { atomic_fetch_add(&t->refs, 1); }

void mcp__tool_unref(mcp__tool *t) {
  if (t && atomic_fetch_sub(&t->refs, 1) == 1)
    tool_free(t);
}

static void check_definition(const mcp_tool *def, mcp__problems *p) {
  if (!mcp__name_valid(def->name, 128))
    mcp__problem(p, "the name must be 1-128 characters of [A-Za-z0-9_.-]");
  if (def->handler == NULL)
    mcp__problem(p, "a handler is required");
  if (def->description == NULL || def->description[0] == '\0')
    mcp__problem(p, "a description is required (clients show it to the "
                    "model)");
  if (!text_valid(def->title) || !text_valid(def->description) ||
      !text_valid(def->annotations.title))
    mcp__problem(p, "title and description must be UTF-8");
  check_hints(&def->annotations, p);
  mcp__scopes_check(def->scopes, p);
  unsigned task =
      def->flags & (MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED);
  if (task == (MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED))
    mcp__problem(p, "flags name both MCP_TOOL_TASK_OPTIONAL and "
                    "MCP_TOOL_TASK_REQUIRED (a task is optional or required, "
                    "not both)");
  if (def->flags & ~(MCP_TOOL_ASSERT_FORMATS | MCP_TOOL_TASK_OPTIONAL |
                     MCP_TOOL_TASK_REQUIRED))
    mcp__problem(p, "flags has bits that are no MCP_TOOL_* option");
}

void mcp__scopes_check(const char *const *scopes, mcp__problems *p) {
  for (const char *const *s = scopes; s && *s; s++) {
    bool twice = false;
    for (const char *const *o = scopes; o != s && !twice; o++)
      twice = strcmp(*o, *s) == 0;
    if (twice)
      mcp__problem(p, "scope \"%.64s\" is listed twice", *s);
    else if (!mcp__scope_token_valid(*s))
      mcp__problem(p,
                   "scope \"%.64s\" is not an RFC 6750 scope token "
                   "(printable ASCII without space, '\"' or '\\')",
                   mcp__utf8_valid(*s, strlen(*s)) ? *s : "(invalid)");
  }
}

int mcp__scopes_copy(const char *const *scopes, mcp__tool *t) {
  size_t n = 0;
  while (scopes && scopes[n])
    n++;
  if ((t->scopes = mcp__calloc(n + 1, sizeof *t->scopes)) == NULL)
    return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if ((t->scopes[i] = mcp__strdup(scopes[i])) == NULL)
      return MCP_ENOMEM;
  t->nscopes = n;
  return 0;
}

int mcp__tool_new(const mcp_tool *def, void *user_data, mcp__tool **out,
                  char *err, size_t errlen) {
  if (def == NULL) {
    mcp__fmt(err, errlen, "the tool definition is NULL");
    return MCP_EINVAL;
  }
  /* Every rule is checked, and every problem named in one message, so an
   * author fixes a definition in one build rather than one per rule. */
  mcp__problems p;
  mcp__problems_init(&p, err, errlen, "tool", def->name);
  check_definition(def, &p);
  mcp__tool *t = mcp__calloc(1, sizeof *t);
  if (t == NULL) {
    mcp__fmt(err, errlen, "out of memory");
    return MCP_ENOMEM;
  }
  atomic_init(&t->refs, 1);
  t->handler = def->handler;
  t->user_data = user_data;
  t->read_only = def->annotations.read_only == MCP_HINT_TRUE;
  t->destructive = def->annotations.destructive == MCP_HINT_TRUE;
  t->idempotent = def->annotations.idempotent == MCP_HINT_TRUE;
  t->open_world = def->annotations.open_world == MCP_HINT_TRUE;
  t->resolve = def->resolve;
  t->task_support =
      def->flags & (MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED);
  int rc = MCP_ENOMEM;
  if ((t->name = mcp__strdup(def->name ? def->name : "")) == NULL ||
      (p.n == 0 && mcp__scopes_copy(def->scopes, t) != 0))
    goto fail;
  rc = parse_object_schema(
      def->input_schema
          ? def->input_schema
          : "{\"type\":\"object\",\"additionalProperties\":false}",
      "input_schema", def->flags, &t->input_schema, &t->input, &p);
  if (rc == 0)
    rc = mcp__params_collect(t, &p);
  if (rc == MCP_ENOMEM)
    goto fail;
  if (def->output_schema) {
    rc = parse_object_schema(def->output_schema, "output_schema", def->flags,
                             &t->output_schema, &t->output, &p);
    if (rc == MCP_ENOMEM)
      goto fail;
  }
  if ((rc = mcp__icons_render(def->icons, &p, &t->icons)) != 0 ||
      (rc = mcp__meta_render(def->meta, MCP_CALL_TOOL, &p, &t->meta)) != 0)
    goto fail;
  if (p.n > 0) {
    rc = MCP_EINVAL;
    goto fail;
  }
  if (build_wires(def, t) != 0) {
    rc = MCP_ENOMEM;
    goto fail;
  }
  mcp__free(t->icons); /* in the wire forms now, needed nowhere else */
  t->icons = NULL;
  *out = t;
  return 0;
fail:
  if (rc == MCP_ENOMEM)
    mcp__fmt(err, errlen, "out of memory");
  tool_free(t);
  return rc;
}

/* ---- the table ----------------------------------------------------------- */

/* FNV-1a of a name. */
static size_t name_hash(const char *name) {
  uint64_t h = 14695981039346656037u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211u;
  return (size_t)h;
}

/* Enters position i of r->tools in the index (which has room). */
static void index_put(mcp__registry *r, size_t i) {
  size_t mask = r->nindex - 1, h = name_hash(r->tools[i]->name) & mask;
  while (r->index[h] != 0)
    h = (h + 1) & mask;
  r->index[h] = i + 1;
}

/* Takes position i (still in r->tools) out of the index: its slot is
 * emptied and the run of slots after it closed up, as linear probing needs
 * (each entry whose home slot is not between the hole and itself moves
 * back into the hole); then every position above i moves down by one, as
 * the array is about to. No allocation, and no rehash of the whole table. */
static void index_remove(mcp__registry *r, size_t i) {
  size_t mask = r->nindex - 1, hole = name_hash(r->tools[i]->name) & mask;
  while (r->index[hole] != i + 1)
    hole = (hole + 1) & mask;
  for (size_t j = (hole + 1) & mask; r->index[j] != 0; j = (j + 1) & mask) {
    size_t home = name_hash(r->tools[r->index[j] - 1]->name) & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      r->index[hole] = r->index[j];
      hole = j;
    }
  }
  r->index[hole] = 0;
  for (size_t k = 0; k < r->nindex; k++)
    if (r->index[k] > i + 1)
      r->index[k]--;
}

/* Enters every tool into a fresh (empty) index. */
static void index_refill(mcp__registry *r) {
  for (size_t i = 0; i < r->n; i++)
    index_put(r, i);
}

static size_t index_of(const mcp__registry *r, const char *name) {
  if (r->nindex == 0)
    return (size_t)-1;
  size_t mask = r->nindex - 1;
  for (size_t h = name_hash(name) & mask; r->index[h] != 0; h = (h + 1) & mask)
    if (strcmp(r->tools[r->index[h] - 1]->name, name) == 0)
      return r->index[h] - 1;
  return (size_t)-1;
}

int mcp__registry_add(mcp__registry *r, mcp__tool *t) {
  if (index_of(r, t->name) != (size_t)-1)
    return MCP_EEXIST;
  /* Room first, in both arrays, so that a failure changes nothing. */
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    mcp__tool **p = mcp__realloc(r->tools, cap * sizeof *p);
    if (p == NULL)
      return MCP_ENOMEM;
    r->tools = p;
    r->cap = cap;
  }
  if ((r->n + 1) * 2 > r->nindex) {
    size_t nindex = r->nindex ? r->nindex * 2 : 32;
    size_t *index = mcp__calloc(nindex, sizeof *index);
    if (index == NULL)
      return MCP_ENOMEM;
    mcp__free(r->index);
    r->index = index;
    r->nindex = nindex;
    index_refill(r);
  }
  t->seq = ++r->next_seq;
  r->tools[r->n++] = t;
  index_put(r, r->n - 1);
  r->ntask += t->task_support != 0;
  r->nresolve += t->resolve != NULL;
  return 0;
}

int mcp__registry_remove(mcp__registry *r, const char *name) {
  size_t i = name ? index_of(r, name) : (size_t)-1;
  if (i == (size_t)-1)
    return MCP_ENOENT;
  mcp__tool *t = r->tools[i];
  index_remove(r, i);
  memmove(&r->tools[i], &r->tools[i + 1], (r->n - i - 1) * sizeof *r->tools);
  r->n--;
  r->ntask -= t->task_support != 0;
  r->nresolve -= t->resolve != NULL;
  mcp__tool_unref(t);
  return 0;
}

mcp__tool *mcp__registry_find(const mcp__registry *r, const char *name) {
  size_t i = index_of(r, name);
  if (i == (size_t)-1)
    return NULL;
  mcp__tool_ref(r->tools[i]);
  return r->tools[i];
}

bool mcp__tool_callable_by(const mcp__tool *t, const mcp_principal *p) {
  for (size_t i = 0; i < t->nscopes; i++)
    if (!mcp_principal_has_scope(p, t->scopes[i]))
      return false;
  return true;
}

/* Is t listed to who? Notes in who when the answer depends on the caller. */
static bool listed_to(const mcp__tool *t, mcp__page_reader *who) {
  bool conditional = t->nscopes > 0 && (who->hide || t->readers_only);
  if (!conditional)
    return true;
  who->per_caller = true;
  return mcp__tool_callable_by(t, who->caller);
}

int mcp__registry_page(const mcp__registry *r, mcp__version v,
                       const char *cursor, unsigned page_size,
                       mcp__page_reader *who, mcp__buf *b) {
  unsigned long long after = 0;
  if (cursor != NULL &&
      mcp__cursor_decode(who->key, r->tag, cursor, r->next_seq, &after))
    return MCP_EINVAL;
  /* Sequence numbers grow with the index, so binary search the start. */
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->tools[mid]->seq <= after)
      lo = mid + 1;
    else
      hi = mid;
  }
  mcp__buf_printf(b, "\"%s\":[", r->key);
  size_t i = lo, shown = 0;
  unsigned long long last = after;
  for (; i < r->n && shown < page_size; i++) {
    if (!listed_to(r->tools[i], who))
      continue;
    if (shown++)
      mcp__buf_putc(b, ',');
    const mcp__tool *t = r->tools[i];
    if (who->resolution && t->marked[v])
      mcp__buf_append(b, t->marked[v], t->marked_len[v]);
    else
      mcp__buf_append(b, t->wire[v], t->wire_len[v]);
    last = r->tools[i]->seq;
  }
  mcp__buf_puts(b, "],");
  /* The next page starts after the last entry listed: one the caller does
   * not see leaves no trace in the cursor. */
  while (i < r->n && !listed_to(r->tools[i], who))
    i++;
  if (i < r->n) {
    char next[MCP__CURSOR_LEN + 1];
    mcp__cursor_encode(who->key, r->tag, last, next);
    mcp__buf_printf(b, "\"nextCursor\":\"%s\",", next);
  }
  return b->err;
}

void mcp__registry_clear(mcp__registry *r) {
  for (size_t i = 0; i < r->n; i++)
    mcp__tool_unref(r->tools[i]);
  mcp__free(r->tools);
  mcp__free(r->index);
  *r = (mcp__registry){.key = r->key, .tag = r->tag};
}
