/* Tool resolution (io.modelcontextprotocol/tool-resolution): a tool's
 * resolver gives the hints of one call, and this file holds its answer to
 * the tool's static hints, the conservative bound the draft sets. The
 * engine keeps the bound, never the resolver's author. */
#include <stdio.h>

#include "registry.h"

mcp__hints mcp__tool_hints(const mcp__tool *t) {
  /* A read-only tool destroys nothing and is trivially idempotent. */
  return (mcp__hints){.read_only = t->read_only,
                      .destructive = !t->read_only && t->destructive,
                      .idempotent = t->read_only || t->idempotent,
                      .open_world = t->open_world};
}

static mcp_hint hint_of(bool b) { return b ? MCP_HINT_TRUE : MCP_HINT_FALSE; }

mcp_tool_annotations mcp__hints_annotations(const mcp__hints *h) {
  return (mcp_tool_annotations){.read_only = hint_of(h->read_only),
                                .destructive = hint_of(h->destructive),
                                .idempotent = hint_of(h->idempotent),
                                .open_world = hint_of(h->open_world)};
}

static bool stated(mcp_hint h) {
  return h == MCP_HINT_TRUE || h == MCP_HINT_FALSE;
}

/* The rule an answer a breaks as a set of hints, or NULL: the registration
 * rules, but that a read-only answer may also state its derived two. */
static const char *answer_broken(const mcp_tool_annotations *a) {
  if (!stated(a->read_only) || !stated(a->open_world))
    return "read_only and open_world must be MCP_HINT_TRUE or MCP_HINT_FALSE";
  if (a->read_only == MCP_HINT_FALSE)
    return stated(a->destructive) && stated(a->idempotent)
               ? NULL
               : "a writing answer must state destructive and idempotent";
  if (a->destructive != MCP_HINT_UNSET && a->destructive != MCP_HINT_FALSE)
    return "a read-only answer cannot be destructive";
  if (a->idempotent != MCP_HINT_UNSET && a->idempotent != MCP_HINT_TRUE)
    return "a read-only answer is idempotent";
  return NULL;
}

/* The draft's four rules: an answer may only be tighter than the static
 * hints. NULL when h keeps them, else the rule it breaks. */
static const char *bound_broken(const mcp__hints *st, const mcp__hints *h) {
  if (st->read_only && !h->read_only)
    return "a read-only tool resolved writing";
  if (!st->open_world && h->open_world)
    return "a closed-world tool resolved open-world";
  if (!st->destructive && h->destructive)
    return "a non-destructive tool resolved destructive";
  if (st->idempotent && !h->read_only && !h->idempotent)
    return "an idempotent tool resolved not idempotent";
  return NULL;
}

int mcp__tool_resolve(const mcp__tool *t, const struct cJSON *args,
                      const mcp_principal *principal, mcp__hints *out,
                      char *why, size_t why_len) {
  mcp__hints st = mcp__tool_hints(t);
  /* The resolver starts from the static hints, as the author stated them:
   * a read-only tool's derived two unset, as at registration. */
  mcp_tool_annotations a = {
      .read_only = hint_of(st.read_only),
      .destructive = st.read_only ? MCP_HINT_UNSET : hint_of(st.destructive),
      .idempotent = st.read_only ? MCP_HINT_UNSET : hint_of(st.idempotent),
      .open_world = hint_of(st.open_world)};
  int rc = t->resolve(args, principal, &a, t->user_data);
  if (rc != 0) {
    snprintf(why, why_len, "its resolver failed (%d)", rc);
    return MCP_EIO;
  }
  const char *broken = answer_broken(&a);
  bool ro = a.read_only == MCP_HINT_TRUE;
  mcp__hints h = {.read_only = ro,
                  .destructive = !ro && a.destructive == MCP_HINT_TRUE,
                  .idempotent = ro || a.idempotent == MCP_HINT_TRUE,
                  .open_world = a.open_world == MCP_HINT_TRUE};
  if (broken == NULL)
    broken = bound_broken(&st, &h);
  if (broken) {
    snprintf(why, why_len, "%s", broken);
    return MCP_EINVAL;
  }
  *out = h;
  return 0;
}
