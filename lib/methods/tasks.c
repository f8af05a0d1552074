/* The tasks methods: tasks/get, tasks/update, tasks/cancel, tasks/result
 * and tasks/list, their admission (a task is admitted as a tools/call of
 * its tool), how a tools/call runs as a task (2025-11-25's task param,
 * 2026-07-28's extension), and the taskIds of subscriptions/listen. What
 * they read or change of a task record is the core's (lib/engine/task.c). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <string.h>

#include "methods.h"

#define EXTENSION "io.modelcontextprotocol/tasks"

/* -32021 naming the tasks extension. */
static void missing_extension(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, const char *why) {
  mcp__reply_missing_extension(s, ctx, r, EXTENSION, why);
}

static bool declares_tasks(const cJSON *caps) {
  return cJSON_IsObject(
      mcp__json_member(mcp__json_member(caps, "extensions"), EXTENSION));
}

int mcp__task_mode_of(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      const mcp__tool *tool, unsigned *ttl_ms) {
  *ttl_ms = 0;
  char msg[240];
  if (r->modern) {
    /* The server decides, for a client that declared the extension on
     * this request; a task param (2025-11-25's) means nothing here. */
    if (tool->task_support && declares_tasks(r->caps))
      return MCP__TASK_MAYBE;
    if (tool->task_support == MCP_TOOL_TASK_REQUIRED) {
      mcp__fmt(msg, sizeof msg,
               "tool %.128s runs only as a task; declare the " EXTENSION
               " extension",
               tool->name);
      mcp__utf8_trim(msg);
      missing_extension(s, ctx, r, msg);
      return -1;
    }
    return MCP__TASK_NONE;
  }
  /* 2025-11-25: the client asks, with a task param, where the server
   * declared tasks (an older version has none: the param is ignored). */
  const cJSON *task = mcp__json_member(r->params, "task");
  if (task &&
      (r->v < MCP__V2025_11_25 ||
       (!tool->task_support && !mcp__offers(s->home.srv, MCP__FEATURE_TASKS))))
    task = NULL;
  if (task == NULL) {
    if (tool->task_support != MCP_TOOL_TASK_REQUIRED)
      return MCP__TASK_NONE;
    mcp__fmt(msg, sizeof msg,
             "Method not found: tool %.128s runs only as a task "
             "(tools/call with a task param, protocol 2025-11-25)",
             tool->name);
    mcp__utf8_trim(msg);
    mcp__req_error(s, ctx, r, MCP__RPC_METHOD_NOT_FOUND, msg, NULL);
    return -1;
  }
  if (!tool->task_support) {
    mcp__fmt(msg, sizeof msg,
             "Method not found: tool %.128s does not run as a task",
             tool->name);
    mcp__utf8_trim(msg);
    mcp__req_error(s, ctx, r, MCP__RPC_METHOD_NOT_FOUND, msg, NULL);
    return -1;
  }
  const cJSON *ttl = mcp__json_member(task, "ttl");
  long long ms = 0;
  int overflow = 0;
  if (!cJSON_IsObject(task) ||
      (ttl && !cJSON_IsNull(ttl) &&
       (!cJSON_IsNumber(ttl) || !mcp__json_integer(ttl, &ms, &overflow) ||
        ms < 0))) {
    mcp__reply_invalid_params(s, ctx, r,
                              "task must be an object whose ttl, if any, is "
                              "a number of milliseconds");
    return -1;
  }
  *ttl_ms = overflow || ms > UINT_MAX ? UINT_MAX : (unsigned)ms;
  return MCP__TASK_NOW;
}

bool mcp__task_listen_allowed(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r) {
  if (declares_tasks(r->caps))
    return true;
  missing_extension(s, ctx, r,
                    "taskIds on subscriptions/listen need the " EXTENSION
                    " extension");
  return false;
}

bool mcp__task_visible(mcp_server *srv, const char *id,
                       const mcp_principal *caller) {
  mcp__task *t = mcp__task_find(srv, id, caller);
  bool ok = t && mcp__tool_callable_by(mcp__task_tool(t), caller);
  mcp__task_unref(t);
  return ok;
}

static bool same_subject(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* A task this server does not have: another node's, when the store keeps
 * its record (asked for now, or read back as r is dispatched again). */
static bool target_remote(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t, const char *id,
                          const mcp_principal *visible) {
  const mcp__task_view *v = mcp__task_remote_view(id);
  if (v == NULL && mcp__task_remote_ask(s, ctx, r, id))
    return false; /* answered when the store answers */
  /* Another principal's task does not exist for this caller; nor, with
   * hide-forbidden on, one whose tool it may not use. */
  if (v && same_subject(v->rec.subject, s->home.principal.subject))
    t->entry =
        mcp__find_visible(s->home.srv, &s->home.srv->reg, v->rec.tool, visible);
  if (t->entry == NULL) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS,
                   "Failed to retrieve task: Task not found", NULL);
    return false;
  }
  t->view = v;
  t->args = (cJSON *)v->rec.args;
  return true;
}

bool mcp__target_task(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__target *t) {
  if (r->modern && !declares_tasks(r->caps)) {
    char why[80];
    mcp__fmt(why, sizeof why, "%s needs the " EXTENSION " extension",
             r->m->method);
    missing_extension(s, ctx, r, why);
    return false;
  }
  if (!r->modern && r->v < MCP__V2025_11_25) {
    char msg[80];
    mcp__fmt(msg, sizeof msg, "Method not found: %s", r->m->method);
    mcp__req_error(s, ctx, r, MCP__RPC_METHOD_NOT_FOUND, msg, NULL);
    return false;
  }
  const cJSON *id = mcp__json_member(r->params, "taskId");
  if (!cJSON_IsString(id)) {
    char why[80];
    mcp__fmt(why, sizeof why, "%s needs a taskId (string)", r->m->method);
    mcp__reply_invalid_params(s, ctx, r, why);
    return false;
  }
  /* Another caller's task does not exist for this one: the same answer as
   * an unknown id, so ids cannot be probed. */
  t->task = mcp__task_find(s->home.srv, id->valuestring, &s->home.principal);
  /* With hide-forbidden on, a task whose tool the caller may not use is
   * no more there than the tool is. */
  const mcp_principal *visible = mcp__visible_to(s);
  bool hidden = t->task && visible &&
                !mcp__tool_callable_by(mcp__task_tool(t->task), visible);
  if (hidden) {
    mcp__task_unref(t->task);
    t->task = NULL;
  }
  if (t->task == NULL && !hidden)
    return target_remote(s, ctx, r, t, id->valuestring, visible);
  if (t->task == NULL) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS,
                   "Failed to retrieve task: Task not found", NULL);
    return false;
  }
  /* Admitted as a tools/call of its tool: its scopes, the authorizer. */
  t->entry = mcp__task_tool(t->task);
  mcp__tool_ref(t->entry);
  t->args = mcp__task_args(t->task);
  return true;
}

void mcp__handle_tasks_get(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  if (t->view) {
    mcp__remote_get(s, ctx, r, t->view);
    return;
  }
  mcp__buf b = {0};
  mcp__task_describe(t->task, r->modern, &b);
  mcp__reply_result(s, ctx, r, &b);
}

void mcp__handle_tasks_update(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t) {
  const cJSON *answers = mcp__json_member(r->params, "inputResponses");
  if (!cJSON_IsObject(answers)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "tasks/update needs inputResponses (an object)");
    return;
  }
  if (t->view) {
    mcp__remote_update(s, ctx, r, t->view, answers);
    return;
  }
  char why[320];
  bool ready;
  int rc = mcp__task_update(t->task, answers, why, sizeof why, &ready);
  if (rc == MCP_EINVAL) {
    mcp__reply_invalid_params(s, ctx, r, why);
    return;
  }
  if (rc) {
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY, why, NULL);
    return;
  }
  mcp__buf b = {0};
  mcp__reply_result(s, ctx, r, &b);
  /* Acknowledged first: the round may take a while, and the client sees
   * its effect on tasks/get. */
  if (ready)
    mcp__task_resume(t->task);
}

/* How tasks/cancel is answered, called by the core once the task's state
 * changed and before anyone else hears of it. */
typedef struct cancel_reply {
  mcp_session *s;
  mcp__reply_ctx *ctx;
  const mcp__req *r;
} cancel_reply;

void mcp__reply_cancel(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       const char *was, bool ended, mcp__buf *b) {
  if (!r->modern && ended) {
    /* 2026-07-28 acknowledges with an empty result, also for a task that
     * had ended already; 2025-11-25 says it cannot be cancelled. */
    char msg[120];
    mcp__fmt(msg, sizeof msg,
             "Invalid params: the task is %s already and cannot be cancelled",
             was);
    mcp__buf_free(b);
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS, msg, NULL);
    return;
  }
  mcp__reply_result(s, ctx, r, b);
}

static void answer_cancel(const char *was, bool ended, mcp__buf *b, void *arg) {
  const cancel_reply *c = arg;
  mcp__reply_cancel(c->s, c->ctx, c->r, was, ended, b);
}

void mcp__handle_tasks_cancel(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t) {
  if (t->view) {
    mcp__remote_cancel(s, ctx, r, t->view);
    return;
  }
  cancel_reply c = {s, ctx, r};
  mcp__task_cancel(t->task, !r->modern, answer_cancel, &c);
}

void mcp__handle_tasks_result(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t) {
  if (t->view) {
    mcp__remote_result(s, ctx, r, t->view);
    return;
  }
  mcp__buf b = {0};
  int rc = mcp__task_result(t->task, s, ctx->sink, r->m->id, r->m->id_len, &b);
  if (b.len || b.err) {
    ctx->facts.kind = MCP_SENT_RESULT;
    mcp__reply_buf(s, ctx, &b);
  } else if (rc == MCP_ELIMIT) {
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY,
                   "Server busy: too many tasks/result requests wait on this "
                   "task",
                   NULL);
  } else if (rc) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  }
}

void mcp__handle_tasks_list(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t) {
  (void)t;
  mcp_server *srv = s->home.srv;
  if (!ctx->batch && mcp__remote_list(s, ctx, r))
    return;
  const cJSON *cursor = mcp__json_member(r->params, "cursor");
  unsigned long long after = 0;
  /* The registry's codec: serials count every caller's tasks, so they are
   * enciphered as the lists' positions are. */
  if (cursor &&
      mcp__cursor_decode(srv->state_key, 'k', cJSON_GetStringValue(cursor),
                         mcp__tasks_newest(srv), &after) != 0) {
    mcp__reply_invalid_params(s, ctx, r, "cursor is not one this server gave");
    return;
  }
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"tasks\":[");
  unsigned long long last;
  bool more = mcp__tasks_page(srv, &s->home.principal, mcp__visible_to(s),
                              after, atomic_load(&srv->page_size), &b, &last);
  mcp__buf_puts(&b, "],");
  if (more) {
    char next[MCP__CURSOR_LEN + 1];
    mcp__cursor_encode(srv->state_key, 'k', last, next);
    mcp__buf_printf(&b, "\"nextCursor\":\"%s\",", next);
  }
  mcp__reply_result(s, ctx, r, &b);
}
