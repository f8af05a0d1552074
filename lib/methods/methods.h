/* The methods layer's private header (lib/methods): the protocol's method
 * handlers (lifecycle, lists, tools, prompts and resources, subscriptions)
 * and the dispatch table with its one admission point, over the engine's
 * core (lib/engine: calls, results, input rounds, the timer, sessions, the
 * task record), which never sees this header. A transport reaches it only
 * through the public engine API (mcp_session_receive and friends). Not
 * installed. */
#ifndef MCP_LIB_METHODS_H
#define MCP_LIB_METHODS_H

#include "task.h"

/* ---- dispatch and admission (dispatch.c) ---------------------------------
 * Every method the engine serves is a row of mcp__methods. A method that
 * names something a scope guards has a target function, which finds it
 * (answering the request itself when nothing is found), and its handler
 * runs only after the one admission point allowed every entry found. */

/* What a request names, found before it is admitted. */
typedef struct mcp__target {
  mcp__tool *entry;    /* the one entry it names (a reference), or NULL */
  mcp__tool **entries; /* subscriptions/listen: one per URI of
                          resourceSubscriptions, NULL where nothing serves
                          it (references); nentries of them */
  size_t nentries;
  struct cJSON *args; /* tools/call, prompts/get: the request's arguments
                         node (borrowed, NULL when absent): the authorizer
                         sees them */
  struct cJSON *vars; /* resources/read of a template: its variables
                         (owned) */
  const char *uri;    /* resources/read and subscribe: the URI asked for
                         (borrowed from the request) */
  struct mcp__listener *listener; /* subscriptions/listen: the listener
                                     read from the request (owned) */
  struct mcp__task *task;         /* tasks/get and the like: the task named (a
                                     reference) */
  const mcp__task_view *view;     /* or another node's task, its record
                                     (tasks_remote.c's, borrowed) */
} mcp__target;

/* Releases what t holds (what a handler took, it set to NULL). */
void mcp__target_free(mcp__target *t);

/* Finds what r names into t; false after answering r (not found, bad
 * params). */
typedef bool (*mcp__target_fn)(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, mcp__target *t);
/* Serves r; t is NULL unless the row admits entries. */
typedef void (*mcp__handle_fn)(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, mcp__target *t);

typedef enum mcp__admission {
  MCP__ADMIT_NONE, /* touches nothing a scope guards */
  MCP__ADMIT_LIST, /* a list: with hide-forbidden on, shows each caller
                      only what it may use */
  MCP__ADMIT_ENTRY /* names entries: their scopes are required, checked by
                      the admission point before the handler */
} mcp__admission;

enum { MCP__ERA_LEGACY = 1, MCP__ERA_MODERN = 2 };

typedef struct mcp__method {
  const char *name;
  mcp__handle_fn handle;
  mcp__target_fn target; /* MCP__ADMIT_ENTRY only */
  int feature;           /* an mcp__feature the server must offer, or
                            MCP__FEATURE_NONE */
  unsigned eras;         /* MCP__ERA_* bits: where the method exists */
  bool needs_init;       /* legacy: refused before initialize */
  mcp__admission admission;
  bool calls; /* starts a call: its id must not be one in progress */
  /* 2026-07-28: the params member its Mcp-Name header must equal, and what
   * that member is (for the refusal's text); NULL for none. */
  const char *name_member, *name_what;
  bool modern_bare; /* modern even without _meta (server/discover) */
  /* The legacy handshake (initialize): served before the era is read, it
   * starts a legacy session; only a protocol version named in its _meta
   * makes it a modern request. */
  bool handshake;
} mcp__method;

extern const mcp__method mcp__methods[];
extern const size_t mcp__nmethods;
/* The row of a method, or NULL. */
const mcp__method *mcp__method_find(const char *name);
/* The era (MCP__ERA_*) a request of row (NULL: a method not served) with
 * params (NULL: none) is served in: modern when its _meta names a protocol
 * version or client capabilities, or its row is modern_bare; for a
 * handshake row, only a named version counts. The one era rule, read by
 * the session (receive.c) and by transports (route.c). */
unsigned mcp__method_era(const mcp__method *row, const struct cJSON *params);
/* Finds, admits and serves r by its row (its era, feature and lifecycle
 * already checked). */
void mcp__dispatch(mcp_session *s, mcp__reply_ctx *ctx, mcp__req *r,
                   const mcp__method *row);
/* skills/get: finds the skill params.uri names (false after answering
 * -32602), and answers with its entry (prompts_resources.c). */
bool mcp__target_skill(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__target *t);
void mcp__handle_skills_get(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t);
/* Finds an unfinished call by canonical id. Call with s->home.lock held. */
mcp_call *mcp__find_call(mcp_session *s, const char *canon);

/* initialize (lifecycle.c), which receive.c runs before the table: it
 * starts a legacy session. */
void mcp__handle_initialize(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r);
/* The rows' functions (lifecycle.c, tools.c, prompts_resources.c,
 * subscriptions.c). */
void mcp__handle_discover(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t);
/* -32021: r did not declare extension (why, the sentence after "Missing
 * required client capability: ", names what needs it); data names the
 * extension in requiredCapabilities. */
void mcp__reply_missing_extension(mcp_session *s, mcp__reply_ctx *ctx,
                                  const mcp__req *r, const char *extension,
                                  const char *why);
/* tools/resolve (resolve.c): the tool params.name names, for a request
 * that declared tool resolution, if it is resolvable; and its answer. */
/* Whether r declared tool resolution: on the request itself in
 * 2026-07-28, at initialize in a legacy session. The settings object of
 * this revision is empty; a non-empty one is a revision this server does
 * not know, and counts as undeclared. */
bool mcp__declares_resolution(const mcp_session *s, const mcp__req *r);
bool mcp__target_resolve(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         mcp__target *t);
void mcp__handle_tools_resolve(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, mcp__target *t);
bool mcp__target_tool(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__target *t);
void mcp__handle_tools_call(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t);
bool mcp__target_prompt(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t);
void mcp__handle_prompts_get(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r, mcp__target *t);
bool mcp__target_resource(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t);
void mcp__handle_resources_read(mcp_session *s, mcp__reply_ctx *ctx,
                                const mcp__req *r, mcp__target *t);
void mcp__handle_subscribe(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t);
void mcp__handle_unsubscribe(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r, mcp__target *t);
void mcp__handle_set_level(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t);
bool mcp__target_completion(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t);
void mcp__handle_complete(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t);
bool mcp__target_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t);
void mcp__handle_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t);

/* The uri param of r, checked as a requested URI; NULL after answering
 * -32602 (prompts_resources.c). */
const char *mcp__request_uri(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r);
/* Takes the arguments t names out of r's message for a call to own: the
 * node detached, with *pool the message's pool it lives in (NULL when it
 * has none), or a new empty object when the request sent none. */
struct cJSON *mcp__take_args(const mcp__req *r, mcp__target *t,
                             mcp__json_pool **pool);
/* Answers one page of a list method from table r (tools, prompts,
 * resources or templates). */
void mcp__handle_list(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__registry *table);
/* Runs an admitted, validated request of entry (a new reference the call
 * takes) with args through the call machinery; uri is the resources/read
 * URI or NULL. args is taken, unless args_pool is not NULL: then args are
 * nodes of that pool (detached from the message), which the call keeps a
 * reference to while it runs. */
void mcp__start_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     mcp__tool *entry, struct cJSON *args,
                     mcp__json_pool *args_pool, const char *uri);

/* lifecycle.c: the capabilities object members the server offers now,
 * after "tools" (each preceded by a comma): prompts, resources, completions,
 * and the extensions (skills, from 2025-11-25). */
unsigned mcp__put_capabilities(mcp__buf *b, mcp_server *srv, mcp__version v);

/* tools.c: takes one token from the caller's rate-limit bucket for a
 * tools/call of tool that passed the scope check and the authorizer.
 * Returns 0 (go on), 1 when the caller is over its rate (the request was
 * answered with an isError result and audited), or MCP_ENOMEM. */
int mcp__rate_take(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                   const char *tool, unsigned long long started);

/* ---- tasks (tasks.c) ------------------------------------------------------
 */
/* How a tools/call of tool runs, from its task support and what the request
 * asked for or declares; *ttl_ms is the TTL a 2025-11-25 client asked for
 * (0 = the default). Returns an mcp__task_mode, or -1 after answering r
 * (the tool requires a task the client did not ask for, or forbids one it
 * asked for). */
int mcp__task_mode_of(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      const mcp__tool *tool, unsigned *ttl_ms);

/* The rows of tasks/get, tasks/update, tasks/cancel, tasks/result (the
 * target finds the caller's task, whose tool is then admitted as for
 * tools/call) and tasks/list. */
bool mcp__target_task(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__target *t);
void mcp__handle_tasks_get(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t);
void mcp__handle_tasks_update(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t);
void mcp__handle_tasks_cancel(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t);
void mcp__handle_tasks_result(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r, mcp__target *t);
void mcp__handle_tasks_list(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t);
/* subscriptions/listen's taskIds (subscriptions.c): whether r declared the
 * extension they need (false after answering -32021), and whether the
 * caller may hear of task id (its own task, of a tool it may use). */
bool mcp__task_listen_allowed(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r);
bool mcp__task_visible(mcp_server *srv, const char *id,
                       const mcp_principal *caller);

/* Answers tasks/cancel of a task that was was (a status name): ended
 * already, 2025-11-25 says it cannot be cancelled; otherwise a result of
 * b's members (the Task in 2025-11-25, none in 2026-07-28). Frees b. */
void mcp__reply_cancel(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       const char *was, bool ended, mcp__buf *b);

/* ---- tasks another node runs (tasks_remote.c) ----------------------------
 * With a store that keeps records: a tasks method naming a task this
 * server does not have asks the store and is dispatched again, on the
 * store's thread, with the task's record as its target. */

/* Asks the store for task_id's record for r; true: r is answered when the
 * store answers (dispatched again, or with an error); false: no store
 * with records, or this is already r dispatched again, or no memory
 * (r is then the caller's to answer). */
bool mcp__task_remote_ask(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *task_id);
/* The record of task_id, while its request is dispatched again on this
 * thread; else NULL. */
const mcp__task_view *mcp__task_remote_view(const char *task_id);
/* The tasks methods served from another node's record. */
void mcp__remote_get(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     const mcp__task_view *v);
void mcp__remote_cancel(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v);
void mcp__remote_update(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v, const struct cJSON *answers);
void mcp__remote_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v);
/* tasks/list from the store's records (every node's tasks of the caller);
 * false: no store with records (r is the caller's to answer). */
bool mcp__remote_list(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r);

#endif
