/* libmcp: the shared-state store.
 *
 * What must be seen by every process of a deployment (today: the rate
 * limit's buckets) goes through a store. The in-process store
 * (mcp_store_new_local) keeps it in this process; another library (the
 * Redis store of mcp/redis.h, mcp::redis) keeps it where every process
 * sees it. A store is an object with a table of operations, so an
 * embedder may bring its own: mcp_store_new wraps one.
 *
 * Every operation answers through a callback, which may run before the
 * operation returns (the in-process store) or later on a thread of the
 * store's own (a store that talks to a server): a caller never blocks on
 * the network, and must be ready for either. Included by mcp/mcp.h. */
#ifndef MCP_STORE_H
#define MCP_STORE_H

#include <stdbool.h>

#include "mcp/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A store: an in-process one, or one an implementation made with
 * mcp_store_new. Opaque. */
typedef struct mcp_store mcp_store;

/** What a rate take answered (see mcp_store_rate_take). */
typedef struct mcp_store_rate_answer {
  bool allowed;               /**< true: a token was taken */
  unsigned long long wait_ms; /**< when refused: milliseconds until a
                                   token is back (at least 1); 0 when
                                   allowed */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_store_rate_answer;

/** Called once per mcp_store_rate_take with its answer: rc is 0 and
 * answer says whether the call may go on, or rc is a negative MCP_E* code
 * (MCP_EIO: the store could not be reached; MCP_ENOMEM) and why is an
 * English text saying what failed (never NULL; the store's, valid for the
 * callback's duration only), and answer is NULL. It runs on the thread that
 * called mcp_store_rate_take, before that returns, or on a thread of the
 * store's; it must not free the store. */
typedef void (*mcp_store_rate_done)(void *arg, int rc,
                                    const mcp_store_rate_answer *answer,
                                    const char *why);

/** The operations of a store an implementation provides (static storage;
 * the store keeps the pointer). */
typedef struct mcp_store_ops {
  /** Takes one token of the bucket named key (a NUL-terminated string,
   * borrowed for the call only) holding at most calls tokens, refilled
   * evenly, calls per per_seconds (both above 0). A bucket seen the first
   * time is full. The take must be atomic across every process sharing
   * the store. Calls done exactly once with (arg, ...), on any thread, and
   * returns 0; or returns a negative MCP_E* code without calling it. */
  int (*rate_take)(void *impl, const char *key, unsigned calls,
                   unsigned per_seconds, mcp_store_rate_done done, void *arg);
  /** Writes into buf (size bytes, NUL-terminated, truncated) where the
   * state is kept, for log lines ("redis://host:6379/0"); never a
   * password. */
  void (*describe)(void *impl, char *buf, unsigned long size);
  /** Frees impl, after answering every take it accepted (with an error
   * when it cannot answer otherwise). May be NULL. */
  void (*free)(void *impl);
  /** true when the state is shared with other processes. */
  bool shared;
  /** zero: room to grow, for the operations of the state still to come
   * (tasks, events, sessions; see the README, Versioning) */
  void *reserved[8];
} mcp_store_ops;

/** Makes a store of an implementation's: ops (kept, not copied) and impl
 * (passed to every operation; freed by ops->free with the store).
 * Returns the store, or NULL (ops or ops->rate_take or ops->describe NULL,
 * or out of memory; impl is then not freed). Any thread. */
MCP_API mcp_store *mcp_store_new(const mcp_store_ops *ops, void *impl);

/** Makes an in-process store: its buckets live in this process, in a
 * table of at most 4096 keys that forgets the least recently used first
 * (as mcp_server_set_rate_limit's). Each take answers at once, on the
 * calling thread. Returns the store, or NULL when out of memory. Any
 * thread. */
MCP_API mcp_store *mcp_store_new_local(void);

/** Takes one token of the bucket key (see mcp_store_ops.rate_take): done
 * is called exactly once with the answer, on this thread before the
 * function returns or on one of the store's, when the function returned 0.
 * Returns 0, or MCP_EINVAL (st, key or done NULL, calls or per_seconds 0)
 * or another negative MCP_E* code, and then done is not called. Any
 * thread. */
MCP_API int mcp_store_rate_take(mcp_store *st, const char *key, unsigned calls,
                                unsigned per_seconds, mcp_store_rate_done done,
                                void *arg);

/** Whether st's state is shared with other processes (false for NULL and
 * for an in-process store). Any thread. */
MCP_API bool mcp_store_shared(const mcp_store *st);

/** Writes into buf (size bytes, always NUL-terminated when size > 0)
 * where st keeps its state: "this process" for an in-process store, the
 * implementation's text otherwise (never a password). Any thread. */
MCP_API void mcp_store_describe(const mcp_store *st, char *buf,
                                unsigned long size);

/** Frees st and its implementation; a take still in flight is answered
 * first (see mcp_store_ops.free). NULL is a no-op. Not while another
 * thread uses st. */
MCP_API void mcp_store_free(mcp_store *st);

#ifdef __cplusplus
}
#endif

#endif
