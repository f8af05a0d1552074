/* libFuzzer target: the strict JSON layer (lib/json.h).
 *
 * Input: one options byte, then the JSON text. The options byte picks small
 * limits now and then (bit 0 depth, bit 1 members, bit 2 string bytes, bit
 * 3 number characters; the high nibble gives the small value), so every
 * limit's refusal is reached too.
 *
 * Checked beyond "no crash, no sanitizer report":
 *  - parse returns only its documented codes, explains a refusal in one
 *    valid UTF-8 line, and accepts nothing that is not valid UTF-8;
 *  - round trip: write(parse(x)) parses again to an equal tree, which
 *    writes to the same bytes, and the output never holds a raw newline;
 *  - every number node keeps its text, and the integer readers agree with
 *    strtoll and with each other;
 *  - the raw text kept for "id" members parses to the value it stands for;
 *  - differential: the JWT module's in-place reader (lib/jwt_json.c), which
 *    claims the same strict rules with smaller limits, accepts exactly the
 *    objects this parser accepts within those limits, and reads the same
 *    members, strings and numbers from them. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"
#include "jwt_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_reason(const char *err, size_t cap) {
  size_t n = strlen(err);
  if (n == 0 || n >= cap || !mcp__utf8_valid(err, n) || memchr(err, '\n', n))
    abort();
}

/* Number nodes: the text is there, and the integer readers agree. */
static void check_number(const cJSON *node) {
  const char *text = mcp__json_number_text(node);
  if (text == NULL || *text == '\0')
    abort();
  long long v = 0, w = 0;
  int overflow = 0, overflow2 = 0;
  if (mcp__json_integer(node, &v, &overflow)) {
    if (!overflow) {
      errno = 0;
      char *end;
      long long s = strtoll(text, &end, 10);
      if (errno != 0 || *end != '\0' || s != v)
        abort();
    }
    /* An integer in the strict sense is one in the schema sense. */
    if (!mcp__json_integral(node, &w, &overflow2) || overflow2 != overflow ||
        (!overflow && w != v))
      abort();
  }
}

/* Structural equality, numbers compared by their text (cJSON_Compare
 * compares doubles, and 1e999 is no number it can compare). */
static bool same_tree(const cJSON *a, const cJSON *b) {
  if ((a->type & 0xff) != (b->type & 0xff))
    return false;
  if (cJSON_IsString(a))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsNumber(a)) {
    const char *x = mcp__json_number_text(a), *y = mcp__json_number_text(b);
    return x && y && strcmp(x, y) == 0;
  }
  const cJSON *x = a->child, *y = b->child;
  for (; x && y; x = x->next, y = y->next) {
    if ((x->string == NULL) != (y->string == NULL) ||
        (x->string && strcmp(x->string, y->string) != 0) || !same_tree(x, y))
      return false;
  }
  return x == NULL && y == NULL;
}

static void walk(const mcp__json_doc *doc, const cJSON *node, int depth) {
  if (depth > 64)
    abort();
  if (cJSON_IsNumber(node))
    check_number(node);
  if (cJSON_IsString(node) &&
      !mcp__utf8_valid(node->valuestring, strlen(node->valuestring)))
    abort();
  if (node->string != NULL &&
      !mcp__utf8_valid(node->string, strlen(node->string)))
    abort();
  size_t raw_len = 0;
  const char *raw = mcp__json_raw_text(doc, node, &raw_len);
  if (raw != NULL) {
    /* The raw text of an id is one JSON value: parse it alone. */
    mcp__json_doc one;
    if (cJSON_IsArray(node) || cJSON_IsObject(node) ||
        mcp__json_parse(raw, raw_len, NULL, &one, NULL, 0) != 0)
      abort();
    if (!same_tree(one.root, node))
      abort();
    mcp__json_doc_free(&one);
  }
  for (const cJSON *c = node->child; c; c = c->next)
    walk(doc, c, depth + 1);
}

/* ---- the differential check against lib/jwt_json.c ----------------------- */

static void same_value(const cJSON *node, mcp__jspan v, int depth);

static void same_string(const char *s, mcp__jspan v) {
  size_t n = strlen(s), got = 0;
  char *out = malloc(v.n + 1);
  if (out == NULL)
    abort();
  if (!mcp__jwt_json_string(v, out, v.n + 1, &got) || got != n ||
      memcmp(out, s, n) != 0 || !mcp__jwt_json_string_is(v, s, n))
    abort();
  free(out);
}

static void same_value(const cJSON *node, mcp__jspan v, int depth) {
  mcp__jtype t = mcp__jwt_json_type(v);
  if (cJSON_IsObject(node)) {
    if (t != MCP__J_OBJECT)
      abort();
    for (const cJSON *c = node->child; c; c = c->next) {
      mcp__jspan m;
      if (!mcp__jwt_json_get(v, c->string, &m))
        abort();
      same_value(c, m, depth + 1);
    }
  } else if (cJSON_IsArray(node)) {
    if (t != MCP__J_ARRAY)
      abort();
    size_t pos = 0;
    mcp__jspan e;
    const cJSON *c = node->child;
    while (mcp__jwt_json_next(v, &pos, &e)) {
      if (c == NULL)
        abort();
      same_value(c, e, depth + 1);
      c = c->next;
    }
    if (c != NULL)
      abort();
  } else if (cJSON_IsString(node)) {
    if (t != MCP__J_STRING)
      abort();
    same_string(node->valuestring, v);
  } else if (cJSON_IsNumber(node)) {
    const char *text = mcp__json_number_text(node);
    if (t != MCP__J_NUMBER || v.n != strlen(text) ||
        memcmp(v.p, text, v.n) != 0)
      abort();
  } else {
    const char *lit = cJSON_IsTrue(node)    ? "true"
                      : cJSON_IsFalse(node) ? "false"
                                            : "null";
    if (t != MCP__J_LITERAL || v.n != strlen(lit) || memcmp(v.p, lit, v.n))
      abort();
  }
}

static void differential(const char *text, size_t len) {
  size_t cap = MCP__JSON_SCRATCH(len);
  uint32_t *scratch = malloc(cap * sizeof *scratch);
  if (scratch == NULL)
    abort();
  mcp__jspan root;
  const char *why = NULL;
  bool jwt_ok = mcp__jwt_json_check(text, len, scratch, cap, &root, &why);
  if (!jwt_ok && (why == NULL || *why == '\0'))
    abort();

  /* The JWT reader's limits, in the terms of mcp__json_limits. */
  const mcp__json_limits lim = {.max_depth = MCP__JSON_MAX_DEPTH,
                                .max_members = MCP__JSON_MAX_MEMBERS,
                                .max_number = MCP__JSON_MAX_NUMBER};
  mcp__json_doc doc;
  int rc = mcp__json_parse(text, len, &lim, &doc, NULL, 0);
  bool ok = rc == 0 && cJSON_IsObject(doc.root);
  if (rc == MCP_ENOMEM) {
    free(scratch);
    return;
  }
  if (ok && !jwt_ok)
    abort(); /* the JWT reader refuses what the strict parser accepts */
  if (jwt_ok && rc == MCP_EPARSE)
    abort(); /* the JWT reader accepts what is not strict JSON */
  if (ok && jwt_ok)
    same_value(doc.root, root, 0);
  if (rc == 0)
    mcp__json_doc_free(&doc);
  free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > (1u << 20))
    return 0;
  unsigned options = data[0];
  const char *text = (const char *)data + 1;
  size--;
  mcp__json_limits lim = {0};
  size_t small = 1 + (options >> 4);
  if (options & 1)
    lim.max_depth = small;
  if (options & 2)
    lim.max_members = small;
  if (options & 4)
    lim.max_string = small;
  if (options & 8)
    lim.max_number = small;

  mcp__json_doc doc;
  char err[160];
  int rc = mcp__json_parse(text, size, &lim, &doc, err, sizeof err);

  /* Parsed into a pool, as messages are: the same answer, the same tree. */
  mcp__json_limits plim = lim;
  plim.pooled = 1;
  mcp__json_doc pdoc;
  char perr[160];
  int prc = mcp__json_parse(text, size, &plim, &pdoc, perr, sizeof perr);
  if (prc != rc && prc != MCP_ENOMEM && rc != MCP_ENOMEM)
    abort();
  if (prc == rc && rc != 0 && strcmp(perr, err) != 0)
    abort();
  if (prc == 0 && rc == 0 && !same_tree(doc.root, pdoc.root))
    abort();
  if (prc != 0 && (pdoc.root != NULL || pdoc.pool != NULL))
    abort();
  mcp__json_doc_free(&pdoc);

  if (rc != 0) {
    if (rc != MCP_EPARSE && rc != MCP_ELIMIT && rc != MCP_ENOMEM)
      abort();
    if (doc.root != NULL || doc.more != NULL || doc.nraws != 0)
      abort();
    check_reason(err, sizeof err);
  } else {
    if (doc.root == NULL || !mcp__utf8_valid(text, size))
      abort();
    walk(&doc, doc.root, 0);

    /* Round trip. */
    mcp__buf once = {0}, twice = {0};
    if (mcp__json_write(&once, doc.root) != 0)
      abort();
    const char *out = mcp__buf_str(&once);
    if (out == NULL || memchr(out, '\n', once.len) != NULL ||
        !mcp__utf8_valid(out, once.len))
      abort();
    mcp__json_doc again;
    if (mcp__json_parse(out, once.len, &lim, &again, err, sizeof err) != 0)
      abort();
    if (!same_tree(doc.root, again.root))
      abort();
    if (mcp__json_write(&twice, again.root) != 0 || twice.len != once.len ||
        memcmp(mcp__buf_str(&twice), out, once.len) != 0)
      abort();
    mcp__json_doc_free(&again);
    mcp__buf_free(&once);
    mcp__buf_free(&twice);
    mcp__json_doc_free(&doc);
  }
  differential(text, size);
  return 0;
}
