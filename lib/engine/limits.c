/* What one call may cost: the size of its result, and the setting of how
 * often a caller may call tools (taken in lib/methods/tools.c). How long
 * a call may take is part of its state machine, in call.c. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"

/* ---- result size --------------------------------------------------------- */

size_t mcp__quoted_len(const char *s) {
  size_t n = 2;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' ||
        c == '\r' || c == '\t')
      n += 2;
    else if (c < 0x20 || c == 0x7f)
      n += 6;
    else
      n++;
  }
  return n;
}

int mcp__call_room_text(mcp_call *c, const char *text) {
  /* Quoting writes at most six bytes for one, and two quotes: a text that
   * fits even so needs no count (the usual case, where the maximum is
   * megabytes and the text a line). */
  size_t max = atomic_load(&c->home->srv->max_result);
  size_t have = mcp__call_result_len(c);
  if (!c->latched && have <= max && max - have >= 2 &&
      strlen(text) <= (max - have - 2) / 6)
    return 0;
  return mcp__call_room(c, mcp__quoted_len(text));
}

int mcp__call_room(mcp_call *c, size_t more) {
  if (c->latched)
    return c->latched;
  size_t max = atomic_load(&c->home->srv->max_result);
  size_t have = mcp__call_result_len(c);
  if (have <= max && more <= max - have)
    return 0;
  /* Nothing of an oversized result is ever sent: let go of it now rather
   * than hold it until the handler returns. */
  c->too_large = true;
  c->latched = MCP_ELIMIT;
  mcp__call_clear_result(c);
  return MCP_ELIMIT;
}

void mcp__call_too_large(mcp_call *c, mcp__buf *out) {
  mcp_server *srv = c->home->srv;
  size_t max = atomic_load(&srv->max_result);
  char text[120];
  mcp__fmt(text, sizeof text, "result too large: limit %zu bytes", max);
  mcp__log(srv, MCP_LOG_ERROR, "%s \"%s\": %s", mcp__call_noun(c),
           c->tool->name, text);
  /* The model can act on this (ask for less), so for a tool it is a tool
   * error. */
  if (c->kind == MCP_CALL_TOOL)
    c->is_error = true;
  mcp__call_failure_reply(c, out, text);
}
