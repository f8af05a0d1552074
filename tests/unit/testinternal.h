/* Helpers for the unit suites that reach lib-internal functions (those
 * linked with the static library). Header only: testutil.c is also linked
 * into suites that see nothing but the public API. */
#ifndef MCP_TESTINTERNAL_H
#define MCP_TESTINTERNAL_H

#include <check.h>
#include <stddef.h>

#include "engine.h"

/* Asserts the len bytes at msg are strict JSON by the library's own parser
 * (valid UTF-8, no raw control characters, no duplicate members...); about
 * names the message in the failure. */
static inline void tu_assert_strict(const char *msg, size_t len,
                                    const char *about) {
  mcp__json_doc doc;
  char err[200];
  ck_assert_msg(mcp__json_parse(msg, len, NULL, &doc, err, sizeof err) == 0,
                "%s: not strict JSON (%s): %.*s", about, err, (int)len, msg);
  mcp__json_doc_free(&doc);
}

#endif
