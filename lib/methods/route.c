/* Routes: what the engine says of a parsed message before a session gets
 * it (mcp_message_route), for transports. Every fact comes from the
 * dispatch table (dispatch.c: a method's eras, whether it starts a call)
 * or is the era rule the session applies (receive.c: a request is modern
 * when its _meta names a version or client capabilities, or when it is
 * server/discover), so a transport never keeps a copy of either. The
 * Mcp-Name rules of the modern transport, which no session needs, are
 * kept here, beside the table they extend. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* The one method modern without _meta: the modern era's discovery, as
 * receive.c's read_era has it. */
#define DISCOVER "server/discover"

/* The 2026-07-28 requests that carry the header Mcp-Name, and what it
 * carries: one params member of the body, which it must equal. The
 * tasks extension routes a task's requests by its id. */
static const struct {
  const char *method;
  const char *member;
  const char *description;
} name_rules[] = {
    {"tools/call", "name", "the tool's name"},
    {"prompts/get", "name", "the prompt's name"},
    {"resources/read", "uri", "the resource's URI"},
    {"tasks/get", "taskId", "the task id"},
    {"tasks/update", "taskId", "the task id"},
    {"tasks/cancel", "taskId", "the task id"},
};

/* Whether o (one message) is a request that starts a call. */
static bool starts_call(const cJSON *o) {
  const cJSON *m = mcp__json_member(o, "method");
  if (!cJSON_IsString(m) || mcp__json_member(o, "id") == NULL)
    return false;
  const mcp__method *row = mcp__method_find(m->valuestring);
  return row && row->calls;
}

/* The era facts of a single request's params: its _meta's version, and
 * the modern era's requirements. */
static void route_meta(const cJSON *params, mcp_route *route) {
  const cJSON *meta = mcp__json_member(params, "_meta");
  const cJSON *v =
      mcp__json_member(meta, "io.modelcontextprotocol/protocolVersion");
  const cJSON *caps =
      mcp__json_member(meta, "io.modelcontextprotocol/clientCapabilities");
  const cJSON *level =
      mcp__json_member(meta, "io.modelcontextprotocol/logLevel");
  bool modern = strcmp(route->method, "initialize") == 0
                    ? v != NULL
                    : v || caps || strcmp(route->method, DISCOVER) == 0;
  route->era = modern ? MCP_ERA_MODERN : MCP_ERA_LEGACY;
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
  route->initialize =
      route->request && strcmp(route->method, "initialize") == 0;
  route->starts_call = route->request && row && row->calls;
  route->calls = route->starts_call;
  const cJSON *params = mcp__json_member(root, "params");
  route_meta(params, route);
  for (size_t i = 0; i < sizeof name_rules / sizeof *name_rules; i++)
    if (strcmp(name_rules[i].method, route->method) == 0) {
      route->name_member = name_rules[i].member;
      route->name_description = name_rules[i].description;
      route->name = mcp__json_member(params, name_rules[i].member);
      break;
    }
  return 0;
}
