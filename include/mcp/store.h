/* libmcp: the shared-state store.
 *
 * What must be seen by every process of a deployment (the rate limit's
 * buckets, and the events every process must hear: a resource changed, a
 * list changed) goes through a store. The in-process store
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
  unsigned granted;  /**< from mcp_store_ops.rate_lease: how many tokens
                          were taken (0 when refused); 0 from rate_take */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
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

/** Called with each event a store received (see mcp_store_listen and
 * mcp_store_ops.subscribe): its bytes (len of them, not NUL-terminated;
 * borrowed for the call only). */
typedef void (*mcp_store_event)(void *arg, const char *event,
                                unsigned long len);

/** A budget records are counted in (mcp_store_count): its name and the
 * most records and bytes it may hold. Budgets are shared by every process
 * sharing the store, and count records of any key; the limits are those
 * the put being admitted gives (see mcp_store_put). */
typedef struct mcp_store_budget {
  const char *name;             /**< NUL-terminated, 1 to 255 bytes */
  unsigned long long max_bytes; /**< 0: no limit on bytes */
  unsigned max_records;         /**< 0: no limit on records */
  void *reserved[1];            /**< zero: room to grow */
} mcp_store_budget;

/** The most budgets one put counts in. */
#define MCP_STORE_BUDGETS_MAX 4

/** What a put counts (mcp_store_record.count): the record counts bytes
 * and one record in each of the budgets, for as long as it is stored (see
 * mcp_store_put). */
typedef struct mcp_store_count {
  unsigned long long bytes;        /**< what the record holds, as its writer
                                        counts it */
  const mcp_store_budget *budgets; /**< nbudgets of them, of distinct
                                        names */
  unsigned nbudgets;               /**< 1 to MCP_STORE_BUDGETS_MAX */
  void *reserved[1];               /**< zero: room to grow */
} mcp_store_count;

/** A record of the shared state: a JSON text kept under a key for a
 * while, on behalf of a node (a task: "task:<id>"; a session:
 * "session:<id>"). What an operation is given is borrowed for the call;
 * what an answer holds is the store's, valid for the callback only. */
typedef struct mcp_store_record {
  const char *key;    /**< its name (NUL-terminated, at most 255 bytes) */
  const char *value;  /**< its text, len bytes; a put of NULL deletes it;
                           NULL in an answer: nothing is stored */
  unsigned long len;  /**< value's length (at most MCP_STORE_RECORD_MAX) */
  const char *holder; /**< the node it belongs to (mcp_store_node_join),
                           NUL-terminated, or NULL: nobody's */
  const char *index;  /**< a put: the list it joins (mcp_store_list), or
                           NULL; at most 255 bytes */
  unsigned long long order;  /**< its place in index, ascending (below
                                  2^53; then by key) */
  unsigned long long ttl_ms; /**< a put: how long it is kept (at least 1;
                                  an index is kept as long as its newest
                                  record) */
  bool final;        /**< it is settled: a put on a final record is refused */
  bool holder_alive; /**< an answer: holder is NULL, or joined and its lease
                          runs */
  bool written;      /**< a put's answer: the put took; false: the record
                          stored was final, and the answer holds it (value
                          NULL: it was evicted, see mcp_store_put) */
  const mcp_store_count *count; /**< a put: the budgets it counts in, or
                                     NULL (see mcp_store_put) */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
} mcp_store_record;

/** The most bytes a record's value may have. */
#define MCP_STORE_RECORD_MAX (4ul << 20)

/** Called once per mcp_store_put, mcp_store_get or mcp_store_list with its
 * answer: rc is 0 and recs holds n records (a put: the one written, then
 * those a counted put evicted, or the final one that refused it, or the
 * key alone of an evicted one that refused it; a get: none or the one
 * stored; a list: the next ones of the index, and more says whether
 * others follow), or rc is a negative MCP_E* code (MCP_EIO:
 * the store could not be reached; MCP_ELIMIT: a counted put does not fit
 * a budget) with why, an English text (never NULL). It runs on the
 * calling thread before the operation returned (the in-process store) or
 * on a thread of the store's; it must not free the store. */
typedef void (*mcp_store_records_done)(void *arg, int rc,
                                       const mcp_store_record *recs, unsigned n,
                                       bool more, const char *why);

/** The most bytes one event may have (mcp_store_publish). */
#define MCP_STORE_EVENT_MAX 65536

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
  /** Publishes event (len bytes, 1 to MCP_STORE_EVENT_MAX; borrowed for
   * the call) to every process sharing the store, this one included, after
   * every event this store published before it. Returns 0 once it is on its
   * way (delivery is not confirmed), MCP_EIO when the store knows it cannot
   * reach the others now, or another negative MCP_E* code. NULL: a store
   * without events (then subscribe is NULL too). */
  int (*publish)(void *impl, const char *event, unsigned long len);
  /** Starts delivering events: from its return on, every event published
   * by a process sharing the store (this one included) is passed to
   * deliver(arg, ...), one at a time, on one thread of the store's (or, for
   * a store that is inside this process, the publisher's), in the order
   * the store received them, until ops->free returned. Called once, by the
   * first mcp_store_listen. Returns 0 or a negative MCP_E* code. */
  int (*subscribe)(void *impl, mcp_store_event deliver, void *arg);
  /** Takes up to want tokens (2 or more) of the bucket key at once, as
   * rate_take takes one: as many as the bucket holds, up to want; the
   * answer's granted says how many (then allowed is true), or none
   * (allowed false, wait_ms until one is back). May be NULL: then every
   * take is one rate_take. See mcp_store_rate_take for how the store
   * object spends what a lease took. */
  int (*rate_lease)(void *impl, const char *key, unsigned calls,
                    unsigned per_seconds, unsigned want,
                    mcp_store_rate_done done, void *arg);
  /** Writes rec (see mcp_store_put): atomic across every process sharing
   * the store, with the counting of rec->count when it is not NULL (its
   * admission, evictions and answer as mcp_store_put says; the count is
   * checked before). May be NULL, with record_get, record_list and
   * node_join: a store without records. */
  int (*record_put)(void *impl, const mcp_store_record *rec,
                    mcp_store_records_done done, void *arg);
  /** Reads the record key (see mcp_store_get). */
  int (*record_get)(void *impl, const char *key, mcp_store_records_done done,
                    void *arg);
  /** Reads at most max records of index after (after_order, after_key)
   * (see mcp_store_list). */
  int (*record_list)(void *impl, const char *index,
                     unsigned long long after_order, const char *after_key,
                     unsigned max, mcp_store_records_done done, void *arg);
  /** Keeps node alive (see mcp_store_node_join); lease_ms 0: it leaves. */
  int (*node_join)(void *impl, const char *node, unsigned lease_ms);
  /** zero: room to grow (see the README, Versioning) */
  void *reserved[1];
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
 *
 * With a high limit, a store whose implementation leases
 * (mcp_store_ops.rate_lease: the Redis store does) takes several tokens
 * of a bucket in one round trip and answers the next takes of that key in
 * this process at once, on the calling thread, from what it took: at most
 * 64 tokens, 1% of calls, and what the bucket refills in 100 ms, whichever
 * is least (below 2, every take goes to the store), each spent within 100
 * ms of the lease or lost. So the processes together never take more than
 * the limit; a process may take a few tokens up to 100 ms before it
 * spends them, and one that leased and then had no more calls leaves a few
 * unspent (they come back with the bucket's refill).
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

/** Publishes event (len bytes) to every process sharing st: each
 * listener (mcp_store_listen) of every store on the same state, in every
 * such process and in this one, receives it once, after the events st
 * published before it. An in-process store delivers it to its own
 * listeners on this thread before returning. Returns 0 when it is on its
 * way; MCP_EINVAL (st or event NULL, len 0), MCP_ELIMIT (len above
 * MCP_STORE_EVENT_MAX), MCP_ENOTSUP (a store without events), MCP_EIO (the
 * store cannot reach the others now: nobody else will hear it) or
 * MCP_ENOMEM. Any thread, also from inside a listener of st: the event
 * then follows the one being delivered (the in-process store delivers it
 * on the same thread once the listeners of that one returned). */
MCP_API int mcp_store_publish(mcp_store *st, const char *event,
                              unsigned long len);

/** Adds a listener to st: from this call's return, fn(arg, event, len)
 * receives every event published to st's state (mcp_store_publish, by any
 * process), one at a time, in the order the store received them, on a
 * thread of the store's (an in-process store: the publisher's). fn must
 * return quickly (the next event waits for it) and must not call
 * mcp_store_listen, mcp_store_unlisten or mcp_store_free on st; the same
 * fn and arg may be added once. Returns 0, MCP_EINVAL (st or fn NULL),
 * MCP_EEXIST (fn and arg already listen), MCP_ENOTSUP (a store without
 * events) or MCP_ENOMEM. Any thread. */
MCP_API int mcp_store_listen(mcp_store *st, mcp_store_event fn, void *arg);

/** Removes the listener fn and arg from st. When it returns, fn is not
 * running for st and will not be called again by it (it waits for a call
 * in progress on another thread). Returns 0, MCP_EINVAL (st or fn NULL)
 * or MCP_ENOENT (not listening). Any thread, but not from inside a
 * listener of st. */
MCP_API int mcp_store_unlisten(mcp_store *st, mcp_store_event fn,
                               const void *arg);

/** Whether st keeps records (mcp_store_put and the others below): the
 * in-process store and the Redis store do. false for NULL. Any thread. */
MCP_API bool mcp_store_has_records(const mcp_store *st);

/** Writes rec->value under rec->key for rec->ttl_ms, with its holder, its
 * final flag, and its place in rec->index (when not NULL), atomically: a
 * record stored final is kept as it is, and the answer holds it with
 * written false; otherwise the answer holds rec's key with written true.
 * A NULL value deletes the record (and its place in its index), unless it
 * is final. So the first of several processes to settle a record wins,
 * and the others learn what it was settled as. done is called exactly once
 * (see mcp_store_records_done) when the function returned 0.
 *
 * A put with rec->count (and a value) is counted, atomically with the
 * write: the record then counts count->bytes bytes and one record in each
 * budget count->budgets names, for as long as it is stored (until it
 * expires, is deleted by a NULL put, or is evicted). A later counted put
 * of the same key replaces its bytes and budgets with its own; a put
 * without count leaves a record's counting as it was. A counted put that
 * adds the record to a budget, or counts more bytes there than the record
 * did before, must fit in it, with the limits this put gives: the
 * budget's other records and this one at most max_records, their bytes
 * at most max_bytes (0: no limit). When it does not, the store evicts the
 * budget's oldest final records (least order, then key; never rec->key)
 * until it fits, deleting each (its value, its place in its index and its
 * counting in every budget go; its key stays refused, see below). When it
 * would not fit even with every final record of the budget evicted,
 * nothing is written and nothing evicted: done gets MCP_ELIMIT, and why
 * names the budget. A put that neither joins a budget nor grows its bytes
 * there is never refused by it. The answer of a counted put that took
 * holds the record written (written true) followed by the records it
 * evicted, each with its key, holder and order, value NULL, final true
 * and written false; a put refused because the stored record is final
 * answers as any put and counts nothing.
 *
 * An evicted record stays settled for the rest of its ttl: a put of its
 * key (a value or NULL) changes nothing, and its answer holds the key
 * alone, value NULL, final true and written false; a get answers none. So
 * a holder that has not heard of the eviction cannot write the record
 * anew (its task settled elsewhere would seem to run again).
 *
 * Returns 0, MCP_EINVAL (st, rec, rec->key or done NULL, ttl_ms 0 with a
 * value; a count with a NULL value, with nbudgets 0 or budgets NULL, a
 * budget whose name is NULL or empty, or the same name twice), MCP_ELIMIT
 * (a key, index or budget name above 255 bytes, a value above
 * MCP_STORE_RECORD_MAX, nbudgets above MCP_STORE_BUDGETS_MAX),
 * MCP_ENOTSUP (a store without records) or another negative MCP_E* code;
 * done is then not called. Any thread. */
MCP_API int mcp_store_put(mcp_store *st, const mcp_store_record *rec,
                          mcp_store_records_done done, void *arg);

/** Reads the record key: done gets it (value, holder, final, and whether
 * its holder is alive), or no record once it expired or was never
 * written. Returns as mcp_store_put does. Any thread. */
MCP_API int mcp_store_get(mcp_store *st, const char *key,
                          mcp_store_records_done done, void *arg);

/** Reads the records of index whose (order, key) comes after (after_order,
 * after_key) (after_key NULL or "": from the first of after_order on), at
 * most max (1 to 1000) of them, in ascending order; more says whether
 * others follow (it may be true with fewer than max records, even none,
 * when the store cleared expired ones on the way: ask again from the last
 * record answered, or from the same place when none was). Records that expired
 * are no longer listed. Returns as mcp_store_put does (MCP_EINVAL also for max
 * 0 or above 1000). Any thread. */
MCP_API int mcp_store_list(mcp_store *st, const char *index,
                           unsigned long long after_order,
                           const char *after_key, unsigned max,
                           mcp_store_records_done done, void *arg);

/** Keeps node (a name of at most 64 bytes) alive in st's state for
 * lease_ms (at least 100), renewed by the store itself (about every third
 * of the lease) until mcp_store_node_join(st, node, 0) or mcp_store_free:
 * a process that dies stops renewing, and a lease later its records'
 * holder_alive turns false in every process. Returns 0, MCP_EINVAL,
 * MCP_ENOTSUP (a store without records) or another negative MCP_E* code.
 * Any thread. */
MCP_API int mcp_store_node_join(mcp_store *st, const char *node,
                                unsigned lease_ms);

/** Frees st and its implementation; a take still in flight is answered
 * first (see mcp_store_ops.free). NULL is a no-op. Not while another
 * thread uses st. */
MCP_API void mcp_store_free(mcp_store *st);

#ifdef __cplusplus
}
#endif

#endif
