/* Routes: what the engine says of a parsed message before a session gets
 * it (mcp_message_route), for transports. Every fact of a method comes
 * from its row of the dispatch table (dispatch.c: its eras, whether it
 * starts a call, whether it is the handshake, the member its Mcp-Name
 * header must equal), and the era is the table's one rule
 * (mcp__method_era), which the session applies too (receive.c's read_era),
 * so a transport never keeps a copy of either. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* Whether o (one message) is a request that starts a call. */
static bool starts_call(const cJSON *o) {
  const cJSON *m = mcp__json_member(o, "method");
  if (!cJSON_IsString(m) || mcp__json_member(o, "id") == NULL)
    return false;
  const mcp__method *row = mcp__method_find(m->valuestring);
  return row && row->calls;
}

/* The era facts of a single request's params: the era the session
 * serves it in (the table's rule, mcp__method_era), its _meta's version,
 * and the modern era's requirements. */
static void route_meta(const cJSON *params, const mcp__method *row,
                       mcp_route *route) {
  const cJSON *meta = mcp__json_member(params, "_meta");
  const cJSON *v =
      mcp__json_member(meta, "io.modelcontextprotocol/protocolVersion");
  const cJSON *caps =
      mcp__json_member(meta, "io.modelcontextprotocol/clientCapabilities");
  const cJSON *level =
      mcp__json_member(meta, "io.modelcontextprotocol/logLevel");
  route->era = mcp__method_era(row, params) == MCP__ERA_MODERN ? MCP_ERA_MODERN
                                                               : MCP_ERA_LEGACY;
  route->meta_version = cJSON_IsString(v) ? v->valuestring : NULL;
  route->meta_complete = route->meta_version && cJSON_IsObject(caps) &&
                         (level == NULL || cJSON_IsString(level));
}

int mcp_message_route(const mcp_message *msg, mcp_route *route) {
  if (msg == NULL || route == NULL)
    return MCP_EINVAL;
  const cJSON *root = mcp_message_json(msg);
  *route = (mcp_route){0};
  if (cJSON_IsArray(root)) {
    route->batch = true;
    for (const cJSON *e = root->child; e; e = e->next)
      route->calls += starts_call(e);
    return 0;
  }
  const cJSON *method = mcp__json_member(root, "method");
  if (!cJSON_IsString(method))
    return 0;
  route->method = method->valuestring;
  route->request = mcp__json_member(root, "id") != NULL;
  const mcp__method *row = mcp__method_find(route->method);
  route->method_eras = row ? row->eras : 0;
  route->initialize = route->request && row && row->handshake;
  route->starts_call = route->request && row && row->calls;
  route->calls = route->starts_call;
  const cJSON *params = mcp__json_member(root, "params");
  route_meta(params, row, route);
  if (row && row->name_member) {
    route->name_member = row->name_member;
    route->name_description = row->name_what;
    route->name = mcp__json_member(params, row->name_member);
  }
  return 0;
}
