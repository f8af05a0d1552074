/* The list methods: one page of tools/list, prompts/list, resources/list
 * or resources/templates/list, with its cursor, shown to each caller as
 * hide-forbidden says. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* ---- tools --------------------------------------------------------------- */

void mcp__handle_list(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__registry *table) {
  const cJSON *cursor = mcp__json_member(r->params, "cursor");
  if (cursor && !cJSON_IsString(cursor)) {
    mcp__reply_invalid_params(s, ctx, r, "cursor must be a string");
    return;
  }
  mcp_server *srv = s->home.srv;
  bool hide = atomic_load(&srv->hide_forbidden);
  mcp__buf b = {0};
  pthread_mutex_lock(&srv->lock);
  /* Hidden or not, an entry marked readers_only (a skill, its files) is
   * listed only to a caller who may read it. */
  _Static_assert(sizeof srv->state_key == MCP__CURSOR_KEY, "a cursor key");
  mcp__page_reader who = {.caller = &s->home.principal,
                          .hide = hide,
                          .resolution = mcp__declares_resolution(s, r),
                          .key = srv->state_key};
  int rc = mcp__registry_page(table, r->v, cursor ? cursor->valuestring : NULL,
                              atomic_load(&srv->page_size), &who, &b);
  pthread_mutex_unlock(&srv->lock);
  if (rc == MCP_EINVAL) {
    mcp__buf_free(&b);
    mcp__reply_invalid_params(s, ctx, r, "unknown cursor");
    return;
  }
  if (r->modern)
    mcp__put_cache(&b, srv, hide || who.per_caller); /* this caller's own */
  mcp__reply_result(s, ctx, r, &b);
}
