/* tools/resolve, the io.modelcontextprotocol/tool-resolution extension's
 * method: the hints of one intended call, without running it. Admitted as
 * a tools/call of its tool (dispatch.c: its scopes, the authorizer); the
 * resolver's answer is held to the tool's static hints (lib/registry/
 * resolve.c). */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

bool mcp__declares_resolution(const mcp_session *s, const mcp__req *r) {
  const cJSON *caps = r->modern ? r->caps : s->home.client_caps;
  const cJSON *ext =
      mcp__json_member(mcp__json_member(caps, "extensions"), MCP__RESOLUTION);
  return cJSON_IsObject(ext) && ext->child == NULL;
}

bool mcp__target_resolve(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         mcp__target *t) {
  if (!mcp__declares_resolution(s, r)) {
    mcp__reply_missing_extension(s, ctx, r, MCP__RESOLUTION,
                                 "tools/resolve needs the " MCP__RESOLUTION
                                 " extension declared on this request");
    return false;
  }
  if (!mcp__target_tool(s, ctx, r, t))
    return false;
  const char *why = NULL;
  if (t->entry->resolve == NULL)
    why = "is not resolvable";
  else if (!cJSON_IsObject(t->args))
    why = "needs arguments (an object; {} for none)";
  if (why == NULL)
    return true;
  char msg[240];
  mcp__fmt(msg, sizeof msg, "tool %.128s %s", t->entry->name, why);
  mcp__utf8_trim(msg);
  mcp__reply_invalid_params(s, ctx, r, msg);
  return false; /* the dispatcher lets go of the entry */
}

static void put_hint(mcp__buf *b, const char *key, bool value, bool last) {
  mcp__buf_printf(b, "\"%s\":%s%s", key, value ? "true" : "false",
                  last ? "" : ",");
}

void mcp__handle_tools_resolve(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, mcp__target *t) {
  const mcp__tool *tool = t->entry;
  char why[512];
  /* The arguments are the call's, checked as a call's are; invalid ones
   * are the client's to correct (-32602), not a tool error. */
  int rc = mcp__schema_validate(tool->input, t->args, "Invalid arguments", why,
                                sizeof why);
  if (rc == MCP_ENOMEM) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  if (rc) {
    mcp__reply_invalid_params(s, ctx, r, why);
    return;
  }
  mcp__hints h;
  rc =
      mcp__tool_resolve(tool, t->args, &s->home.principal, &h, why, sizeof why);
  if (rc) {
    /* Never sent: the client falls back to the static hints. */
    mcp__log(s->home.srv, MCP_LOG_ERROR, "tools/resolve \"%s\": %s%s",
             tool->name,
             rc == MCP_EINVAL ? "its resolver's answer is refused: " : "", why);
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  mcp__buf b = {0};
  if (!r->modern) /* the modern result's discriminator is the core's */
    mcp__buf_puts(&b, "\"resultType\":\"complete\",");
  mcp__buf_puts(&b, "\"name\":");
  mcp__json_quote(&b, tool->name, strlen(tool->name));
  mcp__buf_puts(&b, ",\"annotations\":{");
  put_hint(&b, "readOnlyHint", h.read_only, false);
  put_hint(&b, "destructiveHint", h.destructive, false);
  put_hint(&b, "idempotentHint", h.idempotent, false);
  put_hint(&b, "openWorldHint", h.open_world, true);
  mcp__buf_puts(&b, "},");
  mcp__reply_result(s, ctx, r, &b);
}
