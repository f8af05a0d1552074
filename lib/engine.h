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
  const cJSON *caps; /* client capabilities */
  int log_level;     /* requested log level, -1 = none: modern from _meta,
                        legacy from logging/setLevel */
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

/* Answers one page of a list method from table r (tools, prompts,
 * resources or templates). */
void mcp__handle_list(mcp_session *s, reply_ctx *ctx, const req *r,
                      mcp__registry *table);
/* Runs an allowed, validated request of entry (a new reference the call
 * takes) with args through the call machinery; uri is the resources/read
 * URI or NULL. args is taken, unless args_pool is not NULL: then args are
 * nodes of that pool (detached from the message), which the call keeps a
 * reference to while it runs. */
void mcp__start_call(mcp_session *s, reply_ctx *ctx, const req *r,
                     mcp__tool *entry, struct cJSON *args,
                     mcp__json_pool *args_pool, const char *uri,
                     unsigned long long started);

/* lib/limits.c: takes one token from the caller's rate-limit bucket for a
 * tools/call of tool that passed the scope check and the authorizer.
 * Returns 0 (go on), 1 when the caller is over its rate (the request was
 * answered with an isError result and audited), or MCP_ENOMEM. */
int mcp__rate_take(mcp_session *s, reply_ctx *ctx, const req *r,
                   const char *tool, unsigned long long started);

/* lib/surface.c: the methods beyond tools. */
void mcp__handle_prompts_get(mcp_session *s, reply_ctx *ctx, const req *r);
void mcp__handle_resources_read(mcp_session *s, reply_ctx *ctx, const req *r);
void mcp__handle_subscribe(mcp_session *s, reply_ctx *ctx, const req *r,
                           bool on);
void mcp__handle_set_level(mcp_session *s, reply_ctx *ctx, const req *r);
void mcp__handle_complete(mcp_session *s, reply_ctx *ctx, const req *r);
void mcp__handle_listen(mcp_session *s, reply_ctx *ctx, const req *r);
/* Ends the listener whose canonical id is canon, if any (a client's
 * notifications/cancelled); returns its sink for release, or NULL. Call
 * with s->lock held. */
mcp__sink *mcp__listener_cancel_locked(mcp_session *s, const char *canon);
typedef enum mcp__feature {
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
