/* libFuzzer target: compile a schema, validate an instance against it.
 *
 * Input: one options byte, then the schema text, a NUL byte, and the
 * instance text (without a NUL, the schema document is validated against
 * itself). Both texts go through the strict parser first, as everything
 * the library validates does. The options byte turns format assertion on
 * and picks a small step limit now and then, so the limits' paths are
 * fuzzed too.
 *
 * Checked beyond "no crash, no sanitizer report": compile and validate
 * return only their documented codes, a refusal always explains itself,
 * and every message is valid UTF-8 that fits its buffer. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const char *msg, size_t cap) {
  size_t n = strlen(msg);
  if (n == 0 || n >= cap || !mcp__utf8_valid(msg, n))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  unsigned options = data[0];
  const char *text = (const char *)data + 1;
  size--;
  const char *nul = memchr(text, '\0', size);
  size_t schema_len = nul ? (size_t)(nul - text) : size;
  mcp__json_doc schema, instance = {0};
  if (mcp__json_parse(text, schema_len, NULL, &schema, NULL, 0) != 0)
    return 0;
  const cJSON *inst = schema.root;
  if (nul) {
    if (mcp__json_parse(nul + 1, size - schema_len - 1, NULL, &instance, NULL,
                        0) != 0) {
      mcp__json_doc_free(&schema);
      return 0;
    }
    inst = instance.root;
  }
  mcp__schema_options opt = {0};
  if (options & 1)
    opt.flags |= MCP__SCHEMA_ASSERT_FORMAT;
  if (options & 2)
    opt.max_steps = 1 + (options >> 2) * 16;
  if ((options & 0xF0) == 0xF0)
    opt.max_subschemas = 8;
  mcp__schema *s = NULL;
  char err[256];
  int rc = mcp__schema_compile(schema.root, &opt, &s, err, sizeof err);
  if (rc != 0) {
    if ((rc != MCP_EINVAL && rc != MCP_ENOMEM) || s != NULL)
      abort();
    check_message(err, sizeof err);
  } else {
    char msg[200];
    for (int i = 0; i < 2; i++) { /* twice: validation leaves no state */
      rc = mcp__schema_validate(s, inst, "Invalid arguments", msg, sizeof msg);
      if (rc != 0 && rc != MCP_EINVAL && rc != MCP_ELIMIT && rc != MCP_ENOMEM)
        abort();
      if (rc != 0)
        check_message(msg, sizeof msg);
    }
    mcp__schema_free(s);
  }
  mcp__json_doc_free(&instance);
  mcp__json_doc_free(&schema);
  return 0;
}
