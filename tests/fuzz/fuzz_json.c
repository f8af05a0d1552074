/* libFuzzer target: the strict JSON layer (lib/json/json.h).
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
 *  - the raw text kept for "id" members parses to the value it stands for.
 * The JWT verifier reads its JSON through this same parser (lib/json is the
 * one grammar of lib/), so there is no second reader to compare with. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"

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
  return 0;
}
