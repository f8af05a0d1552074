/* libmcp redis: the shared-state store on Redis (mcp::redis, pkg-config
 * libmcp-redis).
 *
 * A store (mcp/store.h) whose state lives in one Redis server, so every
 * process configured with the same URL shares it: a rate-limit bucket is
 * one Redis hash, taken by one Lua script (EVALSHA, falling back to EVAL),
 * so two processes never both spend its last token. Its clock is Redis's
 * (TIME), so the processes' clocks need not agree.
 *
 * The store talks to Redis (hiredis) on one thread of its own, through a
 * queue: a caller never blocks on the network. When the connection is
 * lost, requests fail at once with MCP_EIO and a text saying Redis is
 * unavailable, while the thread reconnects with a growing pause (100 ms,
 * doubling, at most 5 s); a request never waits longer than the command
 * timeout (2 s) for an answer. A connection that was idle for a second or
 * more and turns out closed (Redis's timeout, a tunnel's or a proxy's idle
 * limit) is no outage: what it failed to send goes again, once, on a new
 * connection. Debian 12's hiredis has no TLS: keep Redis on a private
 * network or reach it through a tunnel.
 *
 * Answers (the callbacks of mcp_store_rate_take) are not called on that
 * thread: two answer threads of the store's call them, in the order Redis
 * answered, so that a callback that does slow work (a server given the
 * store with mcp_server_set_store runs the call's handler there when no
 * executor is installed) delays neither Redis's round trips nor, up to
 * two at once, other answers. mcp_store_free returns once every answer was
 * delivered.
 *
 * Events (mcp_store_publish, mcp_store_listen) go through one Redis
 * stream, `mcp:events`, of the URL's database: every store on the same
 * server and database hears every event published by any of them (itself
 * included), and only those; stores on another database never do. An
 * event goes out on the store's thread, in the order of the calls with the
 * takes, as one XADD that keeps about the last 10000 entries
 * (MAXLEN ~ 10000); publishing is not confirmed: while the store knows
 * Redis is down it returns MCP_EIO at once, and an event queued when the
 * connection then fails is dropped, as are those still queued when the
 * store is freed. Every store hears the events in the stream's one order,
 * so each publisher's in the order it published them. The first
 * mcp_store_listen opens a second connection (it blocks while it connects
 * and logs in, 2 s at most for each step, as mcp_redis_store_new) and
 * starts a thread of the store's that reads the stream from its end as of
 * then (XREVRANGE, then XREAD BLOCK) and calls the listeners there. When
 * that connection is lost, the thread reconnects with the same growing
 * pause and reads on from the last entry it saw: events published
 * meanwhile are heard once it is back, as long as the stream still holds
 * them (the last 10000). If Redis cannot be reached at the first
 * mcp_store_listen, the listener is added all the same and hears what is
 * published once the thread reached Redis. mcp_store_free stops that
 * thread without waiting for Redis.
 *
 * None of the store's threads takes a signal sent to the process: each
 * starts with every signal blocked but the faults (SIGSEGV and the like),
 * whatever the caller's mask. A SIGTERM meant for a daemon waiting for it
 * in sigwait (mcp_http_serve_until_signal) reaches the daemon's thread,
 * never one of these, where its default action would end the process.
 *
 * Records (mcp_store_put, mcp_store_get, mcp_store_list) are Redis hashes,
 * `mcp:rec:KEY`, expiring with their ttl, each put, get or list one Lua
 * script on the store's thread, in the order of the calls with the takes;
 * an index is a sorted set, `mcp:idx:INDEX`, of its records' keys scored
 * by their order, from which a list drops those that expired (reading at
 * most 4 max + 64 of them per call: when it met that many, more is true
 * even if it answered none). A node joined (mcp_store_node_join) is the
 * key `mcp:node:NAME` set with its lease (SET PX) on the store's thread,
 * and set again every third of the lease; leaving, and mcp_store_free
 * while Redis is reachable, delete it. While Redis is unavailable, a
 * record's operation is answered with MCP_EIO.
 *
 * A budget of counted puts (mcp_store_count) is four keys,
 * `mcp:bud:KIND:NAME`: its totals, what each of its records counts, its
 * records by expiry, and its final ones (those it may evict) by order; a
 * counted put keeps them in its script, with the record, so admission and
 * eviction are atomic across the processes. The records of a budget that
 * expired stop counting at the next counted put in it; its bytes and
 * limits are exact below 2^53 (Lua's numbers: above, they are cut there).
 * A record evicted leaves `mcp:gone:KEY` for the rest of its ttl, which
 * refuses its key's puts.
 * Nodes of one cluster run one version of libmcp-redis: an older one
 * neither leaves nor heeds these keys.
 *
 * An ACL user for the store needs the keys `~mcp:*` and the commands
 * `+time +hmget +hset +pexpire +eval +evalsha +script +select` for the
 * rate limit, `+xadd +xread +xrevrange` for events, and `+del +exists
 * +pttl +set +zadd +zcount +zrange +zrem +hdel` for records and nodes
 * (hdel: the budgets of counted puts, keys `mcp:bud:KIND:NAME`, updated by
 * the put's script with the record). */
#ifndef MCP_REDIS_H
#define MCP_REDIS_H

#include <stddef.h>

#include "mcp/mcp.h" /* the MCP_E* codes, and mcp/store.h */

#ifdef __cplusplus
extern "C" {
#endif

/** Connects to the Redis server url names and makes a store on it.
 *
 * url is `redis://[[user]:password@]host[:port][/db]` (port 6379 and db 0
 * by default; a host in brackets for IPv6; user and password
 * percent-decoded) or `unix://[[user]:password@]/path/to/socket[?db=N]`,
 * or an absolute socket path alone. With a password it authenticates
 * (`AUTH user password`, Redis 6 ACL, or `AUTH password` without a user),
 * then selects db and loads its script.
 *
 * Returns 0 and the store in *out (free it with mcp_store_free), or
 * MCP_EINVAL (a NULL argument or a malformed URL), MCP_EIO (Redis could
 * not be reached, refused the password or the database), MCP_ENOMEM;
 * then, when err is not NULL, err (errlen bytes) says why, naming the URL
 * without its password. Blocks while it connects and logs in (2 s at most
 * for the connection and for each of AUTH, SELECT and SCRIPT LOAD): call
 * it at start-up, not on a transport thread. Any thread. */
MCP_API int mcp_redis_store_new(const char *url, mcp_store **out, char *err,
                                size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
