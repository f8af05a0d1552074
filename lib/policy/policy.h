/* The policy layer (lib/policy): the principal, the scope check, the
 * authorizer hook and the rate limit, as pure decisions. It is given a
 * tool's name and required scopes and nothing else about it: no header of
 * this folder's include path declares a tool, so annotations cannot reach
 * this layer, and cannot decide access (promise 2, docs/architecture.md). Not
 * installed. */
#ifndef MCP_POLICY_H
#define MCP_POLICY_H

#include <pthread.h>
#include <stdatomic.h>

#include "base.h"
#include "json.h"

/* Deep copy of a principal; free with mcp__principal_free. src NULL gives
 * the anonymous principal. */
int mcp__principal_copy(mcp_principal *dst, const mcp_principal *src);
void mcp__principal_free(mcp_principal *p);

/* Is s an RFC 6750 scope-token: 1*( %x21 / %x23-5B / %x5D-7E )? */
bool mcp__scope_token_valid(const char *s);

typedef struct mcp__policy {
  mcp_authorize_fn authorize;
  void *authorize_data;
} mcp__policy;

typedef struct mcp__decision {
  mcp_decision decision;
  const char **missing; /* NULL-terminated, points into the tool's scopes;
                           owned (free with mcp__decision_free) */
  char reason[256];     /* the authorizer's reason, if it gave one */
  const char *const *required; /* every scope the tool needs (borrowed) */
  size_t nrequired;
} mcp__decision;

/* Fills *out. Returns 0 or MCP_ENOMEM (then the call must be refused). */
int mcp__policy_decide(const mcp__policy *policy,
                       const mcp_principal *principal, const char *tool,
                       const char *const *required, size_t nrequired,
                       const struct cJSON *arguments, mcp__decision *out);
void mcp__decision_free(mcp__decision *d);
/* The JSON-RPC error data for a denial: {"requiredScopes":[the missing
 * ones],"scopes":[every scope the tool needs]} plus "reason" when the
 * authorizer gave one. Appended to b. */
int mcp__decision_data(mcp__buf *b, const mcp__decision *d);
/* The error message of a denial of a what ("tool", "prompt", ...): the
 * missing scopes, or that the authorizer denied it. Appended to b. */
int mcp__decision_message(mcp__buf *b, const mcp__decision *d,
                          const char *what);

/* ---- the rate limit (ratelimit.c) ---------------------------------------
 * A token bucket per caller in a bounded table that forgets the least
 * recently used caller first. A caller is a subject, or for an anonymous
 * one a serial number the engine gives its session. */
typedef struct mcp__rate_entry mcp__rate_entry;
typedef struct mcp__ratelimit {
  pthread_mutex_t lock;   /* guards everything below */
  _Atomic unsigned calls; /* bucket size; 0 = off (read without the lock
                             to keep the disabled path free) */
  unsigned per_s;         /* seconds in which calls tokens come back */
  mcp__list *heads;       /* hash chains (heads of mcp__rate_entry.chain); NULL
                             until first used */
  mcp__list lru;          /* mcp__rate_entry.lru, most recently used first */
  size_t n;
} mcp__ratelimit;

/* Returns 0 or MCP_ENOMEM (no lock could be made). */
int mcp__ratelimit_init(mcp__ratelimit *rl);
void mcp__ratelimit_free(mcp__ratelimit *rl);
/* Sets the limit: calls tokens per caller, refilled over per_s seconds;
 * calls 0 turns it off and forgets every caller. Returns 0, or MCP_EINVAL
 * for calls without per_s. Any thread. */
int mcp__ratelimit_set(mcp__ratelimit *rl, unsigned calls, unsigned per_s);
/* Takes one token from the bucket of the caller subject (NULL: the
 * anonymous caller numbered serial). Returns 0 (allowed; also when the
 * limit is off), 1 when the caller is over its rate (then *calls, *per_s
 * and *wait_s say the limit and how many seconds until a token is back),
 * or MCP_ENOMEM. Any thread. */
int mcp__ratelimit_take(mcp__ratelimit *rl, const char *subject,
                        unsigned long long serial, unsigned *calls,
                        unsigned *per_s, unsigned long long *wait_s);

#endif
