/* Private declarations shared by the engine's request handlers
 * (lib/session.c, lib/surface.c). Not installed. */
#ifndef MCP_ENGINE_H
#define MCP_ENGINE_H

#include "internal.h"

/* Where replies to one incoming message go: straight to the peer, or into
 * the array answering a 2025-03-26 batch. */
typedef struct reply_ctx {
  mcp__sink *sink; /* where replies go; NULL: the session's callback */
  mcp__buf *batch; /* NULL when not in a batch */
  size_t nbatch;
  int err; /* first failure to send or to build a reply */
} reply_ctx;

/* One request as the engine serves it: its envelope, and the era and
 * version whose schema shapes the reply. Legacy requests take them from
 * the session; modern ones carry them in their own _meta. */
typedef struct req {
  const mcp__msg *m;
  const cJSON *params; /* never NULL: an empty object stands in */
  cJSON *params_node;  /* the mutable node, NULL when absent */
  mcp__version v;
  bool modern;
  const cJSON *caps;    /* client capabilities */
  int log_level;        /* requested log level, -1 = none: modern from _meta,
                           legacy from logging/setLevel */
  const char *canon_id; /* methods that start a call: the id's
                           canonical text, checked unused */
  unsigned long long started_us; /* when dispatch began (audit, deadline) */
} req;

/* Sends b (a whole message) where ctx says, or adds it to the batch; frees
 * b. */
void mcp__reply_buf(mcp_session *s, reply_ctx *ctx, mcp__buf *b);
void mcp__reply_error(mcp_session *s, reply_ctx *ctx, const char *id,
                      size_t id_len, int code, const char *message,
                      const char *data);
/* An error addressed to r; data is JSON text or NULL. */
void mcp__req_error(mcp_session *s, reply_ctx *ctx, const req *r, int code,
                    const char *message, const char *data);
/* Sends a result whose members (each with a trailing comma) are in body;
 * the era's common members are added in front. Frees body. */
void mcp__reply_result(mcp_session *s, reply_ctx *ctx, const req *r,
                       mcp__buf *body);
/* Answers r with a tool result whose isError is true and whose one text
 * block says text (a refusal the model can act on). */
void mcp__reply_tool_error(mcp_session *s, reply_ctx *ctx, const req *r,
                           const char *text);
/* -32602 "Invalid params: <why>". */
void mcp__reply_invalid_params(mcp_session *s, reply_ctx *ctx, const req *r,
                               const char *why);
/* The member of obj named key (case-sensitive), or NULL; NULL obj or key
 * find nothing. */
const struct cJSON *mcp__member(const struct cJSON *obj, const char *key);

/* ---- dispatch and admission (lib/dispatch.c) ----------------------------
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
} mcp__target;

/* Releases what t holds (what a handler took, it set to NULL). */
void mcp__target_free(mcp__target *t);

/* Finds what r names into t; false after answering r (not found, bad
 * params). */
typedef bool (*mcp__target_fn)(mcp_session *s, reply_ctx *ctx, const req *r,
                               mcp__target *t);
/* Serves r; t is NULL unless the row admits entries. */
typedef void (*mcp__handle_fn)(mcp_session *s, reply_ctx *ctx, const req *r,
                               mcp__target *t);

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
} mcp__method;

extern const mcp__method mcp__methods[];
extern const size_t mcp__nmethods;
/* The row of a method, or NULL. */
const mcp__method *mcp__method_find(const char *name);
/* Finds, admits and serves r by its row (its era, feature and lifecycle
 * already checked). */
void mcp__dispatch(mcp_session *s, reply_ctx *ctx, req *r,
                   const mcp__method *row);
/* The caller whose view is filtered (hide-forbidden on), or NULL. */
const mcp_principal *mcp__visible_to(mcp_session *s);
/* A new reference to the entry of r named name, or NULL when there is none
 * or it is hidden from visible (non-NULL). */
mcp__tool *mcp__find_visible(mcp_server *srv, const mcp__registry *r,
                             const char *name, const mcp_principal *visible);
/* Finds an unfinished call by canonical id. Call with s->lock held. */
mcp_call *mcp__find_call(mcp_session *s, const char *canon);

/* The rows' functions (lib/session.c, lib/surface.c). */
void mcp__handle_discover(mcp_session *s, reply_ctx *ctx, const req *r,
                          mcp__target *t);
bool mcp__target_tool(mcp_session *s, reply_ctx *ctx, const req *r,
                      mcp__target *t);
void mcp__handle_tools_call(mcp_session *s, reply_ctx *ctx, const req *r,
                            mcp__target *t);
bool mcp__target_prompt(mcp_session *s, reply_ctx *ctx, const req *r,
                        mcp__target *t);
void mcp__handle_prompts_get(mcp_session *s, reply_ctx *ctx, const req *r,
                             mcp__target *t);
bool mcp__target_resource(mcp_session *s, reply_ctx *ctx, const req *r,
                          mcp__target *t);
void mcp__handle_resources_read(mcp_session *s, reply_ctx *ctx, const req *r,
                                mcp__target *t);
void mcp__handle_subscribe(mcp_session *s, reply_ctx *ctx, const req *r,
                           mcp__target *t);
void mcp__handle_unsubscribe(mcp_session *s, reply_ctx *ctx, const req *r,
                             mcp__target *t);
void mcp__handle_set_level(mcp_session *s, reply_ctx *ctx, const req *r,
                           mcp__target *t);
bool mcp__target_completion(mcp_session *s, reply_ctx *ctx, const req *r,
                            mcp__target *t);
void mcp__handle_complete(mcp_session *s, reply_ctx *ctx, const req *r,
                          mcp__target *t);
bool mcp__target_listen(mcp_session *s, reply_ctx *ctx, const req *r,
                        mcp__target *t);
void mcp__handle_listen(mcp_session *s, reply_ctx *ctx, const req *r,
                        mcp__target *t);

/* Takes the arguments t names out of r's message for a call to own: the
 * node detached, with *pool the message's pool it lives in (NULL when it
 * has none), or a new empty object when the request sent none. */
struct cJSON *mcp__take_args(const req *r, mcp__target *t,
                             mcp__json_pool **pool);
/* Answers one page of a list method from table r (tools, prompts,
 * resources or templates). */
void mcp__handle_list(mcp_session *s, reply_ctx *ctx, const req *r,
                      mcp__registry *table);
/* Runs an admitted, validated request of entry (a new reference the call
 * takes) with args through the call machinery; uri is the resources/read
 * URI or NULL. args is taken, unless args_pool is not NULL: then args are
 * nodes of that pool (detached from the message), which the call keeps a
 * reference to while it runs. */
void mcp__start_call(mcp_session *s, reply_ctx *ctx, const req *r,
                     mcp__tool *entry, struct cJSON *args,
                     mcp__json_pool *args_pool, const char *uri);

/* lib/limits.c: takes one token from the caller's rate-limit bucket for a
 * tools/call of tool that passed the scope check and the authorizer.
 * Returns 0 (go on), 1 when the caller is over its rate (the request was
 * answered with an isError result and audited), or MCP_ENOMEM. */
int mcp__rate_take(mcp_session *s, reply_ctx *ctx, const req *r,
                   const char *tool, unsigned long long started);

/* Frees a listener that never joined its session. NULL does nothing. */
void mcp__listener_free(mcp__listener *l);
/* Finds what serves uri: the resource registered under it, else the first
 * matching template (its variables in *vars unless vars is NULL), passing
 * over what is hidden from visible (non-NULL). A new reference, or NULL
 * with *rc MCP_ENOENT or MCP_ENOMEM (lib/surface.c). */
mcp__tool *mcp__find_resource(mcp_server *srv, const char *uri,
                              const mcp_principal *visible, struct cJSON **vars,
                              int *rc);
/* Ends the listener whose canonical id is canon, if any (a client's
 * notifications/cancelled); returns its sink for release, or NULL. Call
 * with s->lock held. */
mcp__sink *mcp__listener_cancel_locked(mcp_session *s, const char *canon);
typedef enum mcp__feature {
  MCP__FEATURE_NONE = -1, /* always offered */
  MCP__FEATURE_PROMPTS,
  MCP__FEATURE_RESOURCES,
  MCP__FEATURE_COMPLETIONS
} mcp__feature;
/* Does the server offer f now (something of it is registered)? */
bool mcp__offers(mcp_server *srv, mcp__feature f);
/* The capabilities object members the server offers now, after "tools"
 * (each preceded by a comma): prompts, resources, completions. */
unsigned mcp__put_capabilities(mcp__buf *b, mcp_server *srv, mcp__version v);

/* Log level names of the protocol, indexed by level. */
extern const char *const mcp__log_levels[8];

#endif
