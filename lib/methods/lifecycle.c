/* The lifecycle methods: initialize (the legacy era's handshake) and
 * server/discover (the modern era's), with the capabilities both announce,
 * and logging/setLevel. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* ---- capabilities -------------------------------------------------------- */

unsigned mcp__put_capabilities(mcp__buf *b, mcp_server *srv, mcp__version v) {
  bool prompts = mcp__offers(srv, MCP__FEATURE_PROMPTS);
  bool resources = mcp__offers(srv, MCP__FEATURE_RESOURCES);
  bool complete = mcp__offers(srv, MCP__FEATURE_COMPLETIONS);
  if (prompts)
    mcp__buf_puts(b, ",\"prompts\":{\"listChanged\":true}");
  if (resources)
    mcp__buf_puts(b,
                  ",\"resources\":{\"subscribe\":true,\"listChanged\":true}");
  /* completion/complete arrived in 2025-03-26. */
  if (complete && v >= MCP__V2025_03_26)
    mcp__buf_puts(b, ",\"completions\":{}");
  bool tasks = v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_TASKS);
  /* 2025-11-25's tasks are a capability of their own; 2026-07-28 made them
   * an extension. */
  if (tasks && v < MCP__VERSION_MODERN)
    mcp__buf_puts(b, ",\"tasks\":{\"list\":{},\"cancel\":{},\"requests\":"
                     "{\"tools\":{\"call\":{}}}}");
  /* Extensions are declared from 2025-11-25, where capabilities have room
   * for them. */
  bool skills = v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_SKILLS);
  bool resolution =
      v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_RESOLUTION);
  bool trust = v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_TRUST);
  tasks = tasks && v >= MCP__VERSION_MODERN;
  const char *ext[] = {skills ? "\"io.modelcontextprotocol/skills\":{}" : NULL,
                       tasks ? "\"io.modelcontextprotocol/tasks\":{}" : NULL,
                       resolution ? "\"" MCP__RESOLUTION "\":{}" : NULL,
                       trust ? "\"" MCP__TRUST_EXTENSION "\":{}" : NULL};
  size_t listed = 0;
  for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
    if (ext[i] == NULL)
      continue;
    mcp__buf_puts(b, listed++ ? "," : ",\"extensions\":{");
    mcp__buf_puts(b, ext[i]);
  }
  if (listed)
    mcp__buf_putc(b, '}');
  return (prompts ? (unsigned)MCP__LISTEN_PROMPTS : 0u) |
         (resources ? (unsigned)MCP__LISTEN_RESOURCES : 0u);
}

/* ---- initialize and server/discover -------------------------------------- */

void mcp__handle_initialize(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r) {
  if (ctx->batch) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: initialize must not be part of a batch",
                   NULL);
    return;
  }
  if (atomic_load(&s->state) != MCP__STATE_NEW) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: the session is already initialized", NULL);
    return;
  }
  const cJSON *version = mcp__json_member(r->params, "protocolVersion");
  const cJSON *caps = mcp__json_member(r->params, "capabilities");
  const cJSON *client = mcp__json_member(r->params, "clientInfo");
  if (!cJSON_IsString(version) || !cJSON_IsObject(caps) ||
      !cJSON_IsObject(client) ||
      !cJSON_IsString(mcp__json_member(client, "name"))) {
    mcp__reply_invalid_params(
        s, ctx, r,
        "initialize needs protocolVersion (string), "
        "capabilities (object) and clientInfo (object with "
        "a name)");
    return;
  }
  /* The client's version if initialize can serve it, else our latest: the
   * client then decides whether it can go on. */
  int v = mcp__version_find(version->valuestring);
  if (v < 0 || v > MCP__VERSION_LATEST)
    v = MCP__VERSION_LATEST;
  cJSON *copy = cJSON_Duplicate(caps, 1);
  mcp_server *srv = s->home.srv;
  mcp__buf b = {0};
  mcp__buf_printf(&b,
                  "\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":{"
                  "\"listChanged\":true},\"logging\":{}",
                  mcp__version_name((mcp__version)v));
  unsigned announced =
      MCP__LISTEN_TOOLS | mcp__put_capabilities(&b, srv, (mcp__version)v);
  mcp__buf_puts(&b, "},\"serverInfo\":");
  mcp__server_info(&b, srv, (mcp__version)v, true);
  mcp__buf_putc(&b, ',');
  if (srv->instructions) {
    mcp__buf_puts(&b, "\"instructions\":");
    mcp__json_quote(&b, srv->instructions, strlen(srv->instructions));
    mcp__buf_putc(&b, ',');
  }
  if (b.err || copy == NULL) {
    mcp__buf_free(&b);
    cJSON_Delete(copy);
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  pthread_mutex_lock(&s->home.lock);
  cJSON_Delete(s->home.client_caps);
  s->home.client_caps = copy;
  s->announced = announced;
  pthread_mutex_unlock(&s->home.lock);
  atomic_store(&s->version, v);
  atomic_store(&s->state, MCP__STATE_INITIALIZED);
  int before = ctx->err;
  mcp__reply_result(s, ctx, r, &b);
  if (ctx->err == MCP_ENOMEM && before != MCP_ENOMEM) {
    /* The answer could not be built, so the client never heard of this
     * handshake: it may try again. */
    atomic_store(&s->state, MCP__STATE_NEW);
    pthread_mutex_lock(&s->home.lock);
    cJSON_Delete(s->home.client_caps);
    s->home.client_caps = NULL;
    s->announced = 0;
    pthread_mutex_unlock(&s->home.lock);
    return;
  }
  mcp__session_changed(s);
}

void mcp__handle_discover(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t) {
  (void)t;
  mcp_server *srv = s->home.srv;
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"supportedVersions\":[");
  for (int v = MCP__VERSION_COUNT - 1; v >= 0; v--)
    mcp__buf_printf(&b, "\"%s\"%s", mcp__version_name((mcp__version)v),
                    v ? "," : "");
  /* list_changed reaches modern clients through subscriptions/listen. Log
   * messages go to requests that ask for them (_meta logLevel), which the
   * logging capability announces. */
  mcp__buf_puts(&b, "],\"capabilities\":{\"tools\":{\"listChanged\":true},"
                    "\"logging\":{}");
  mcp__put_capabilities(&b, srv, MCP__VERSION_MODERN);
  mcp__buf_puts(&b, "},");
  if (srv->instructions) {
    mcp__buf_puts(&b, "\"instructions\":");
    mcp__json_quote(&b, srv->instructions, strlen(srv->instructions));
    mcp__buf_putc(&b, ',');
  }
  mcp__put_cache(&b, srv, false);
  /* server/discover says all the server says of itself. */
  mcp__reply_result_info(s, ctx, r, &b, "complete", true);
}

/* ---- logging/setLevel ---------------------------------------------------- */

void mcp__handle_set_level(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  (void)t;
  const cJSON *level = mcp__json_member(r->params, "level");
  int found = -1;
  for (int i = 0; i < 8 && cJSON_IsString(level); i++)
    if (strcmp(level->valuestring, mcp__log_levels[i]) == 0)
      found = i;
  if (found < 0) {
    mcp__reply_invalid_params(s, ctx, r,
                              "level must be one of debug, info, notice, "
                              "warning, error, critical, alert, emergency");
    return;
  }
  atomic_store(&s->log_level, found);
  mcp__session_changed(s);
  mcp__buf b = {0};
  mcp__reply_result(s, ctx, r, &b);
}
