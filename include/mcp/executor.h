/* libmcp for executors: where handlers run.
 *
 * mcp/mcp.h is for someone writing a server; mcp/engine.h for whoever moves
 * the bytes. This header is for whoever decides on which thread a handler
 * runs: a daemon handing calls to its worker pool or its event loop's
 * thread, or a sandbox such as mcp/guard.h. An executor is installed on a
 * server once, before serving; the engine hands it every call that passed
 * its checks, and the executor runs it with mcp_call_execute.
 *
 * mcp/mcp.h includes this header, so including either is enough; the
 * declarations are part of libmcp under the same conventions (see the top
 * of mcp/mcp.h: return codes, ownership, threads).
 */
#ifndef MCP_EXECUTOR_H
#define MCP_EXECUTOR_H

#include "mcp/mcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Where handlers run
 *
 * By default a handler runs on the thread that drives its session (the one
 * calling mcp_session_receive, or mcp_serve_stdio's). An executor changes
 * that: the engine hands it every call instead of running the handler, and
 * the executor runs it on a thread of its choice (a daemon's worker pool,
 * its event loop's thread) by calling mcp_call_execute there. Everything
 * else stays as it is: the reply, the deadline (a call waiting in the
 * executor's queue is answered "timeout" when its deadline passes),
 * cancellation (a call cancelled while queued is never run), input
 * requests in both eras (each round is handed over again) and the audit.
 * A handed-over call is answered later, like a deferred one, through the
 * session's sink; the engine does no I/O and starts no thread either way.
 * mcp/guard.h is one executor: it runs tools on threads the kernel
 * restricts by the hints they state.
 * ------------------------------------------------------------------------ */

/** An executor's submit returns this to decline a call: the engine then
 * runs the handler at once on the calling thread, as without an executor.
 * Positive, so it never collides with an error code. */
#define MCP_EXECUTE_HERE 3

/** Where handlers run (see above). Plain data, copied by
 * mcp_server_set_executor. */
typedef struct mcp_executor {
  /** Required. Called, on the thread that drives the session (or, for a
   * later round of a call, on whichever thread finished the round before,
   * the executor's own included), with each call that is about to run.
   * Return 0 after arranging for mcp_call_execute(call) to be called
   * exactly once, on any thread, at once or later (even before submit
   * returns): from then on the call is the executor's, and its session
   * stays alive until that mcp_call_execute returns. Return
   * MCP_EXECUTE_HERE to let the engine run it now on this thread (an
   * executor for chosen tools declines the others; mcp_call_name,
   * mcp_call_kind_of and mcp_call_hints tell which call this is). Any
   * negative code fails the call with a JSON-RPC internal error (logged,
   * never the detail to the client). Must not block for long: it runs on
   * a thread serving a session. */
  int (*submit)(mcp_call *call, void *user_data);
  /** Optional. mcp_server_lint asks it for one sentence on what the
   * executor does, written into buf
   * (size bytes, NUL-terminated). Return 1 when the sentence is a warning
   * (logged at MCP_LOG_WARNING and counted by mcp_server_lint), 0 for
   * information (MCP_LOG_INFO, not counted), negative for nothing to say.
   * Any thread. */
  int (*lint)(char *buf, size_t size, void *user_data);
  /** Optional. Called once when the server is finally freed (by
   * mcp_server_free, or by the end of its last session after that), when
   * no call of the server exists any more; it may free user_data. It may
   * run on a thread of the executor's own, the one whose mcp_call_execute
   * finished the last call. */
  void (*release)(void *user_data);
  void *user_data;   /**< handed to each callback; stored, never read */
  void *reserved[4]; /**< zero: room to grow (see the README, Versioning) */
} mcp_executor;

/** Installs ex (copied) as srv's executor: every tools/call, prompts/get
 * and resources/read that passed its checks (scopes, authorizer, rate,
 * arguments) is handed to ex->submit instead of running on the session's
 * thread. Set it once, before serving; the executor stays until the
 * server is freed. Returns 0; MCP_EINVAL (NULL srv or ex, or no submit);
 * MCP_ESTATE when srv has an executor already. Any thread. */
MCP_API int mcp_server_set_executor(mcp_server *srv, const mcp_executor *ex);

/** Runs call, which srv's executor accepted from submit, on the calling
 * thread: the handler runs here, with mcp_call_* and mcp_result_* as
 * usual, and the call is completed here (its reply sent through its sink,
 * its audit record written), unless the handler returns MCP_DEFERRED.
 * When the call was cancelled or its deadline passed while it waited, the
 * handler does not run: the call is answered (nothing for a cancelled
 * call, "timeout" for a late one) and freed. ran_under, when not NULL,
 * names where the handler ran ("guard: read-only, closed-world", at most
 * 63 bytes, copied): the audit record carries it as ran_under. call is
 * invalid after this returns, unless the handler deferred it. Returns 0,
 * or MCP_EINVAL (logged) when call is not waiting in an executor: its
 * handler runs, it was deferred, or it waits for the client's input.
 * Any thread, exactly once per accepted submit: after it returns the call
 * may be freed, and using it again is undefined. */
MCP_API int mcp_call_execute(mcp_call *call, const char *ran_under);

/** The hints the call runs under, all four stated (title NULL): for a
 * tool with a resolver (mcp_tool.resolve), the hints it gave for this
 * call's arguments and caller, evaluated before the call was handed to
 * the executor and held to the tool's static hints (never taken from the
 * client); otherwise, or when the resolver failed or answered looser than
 * the static hints, the tool's static hints, a read-only tool's
 * destructive FALSE and idempotent TRUE derived. The audit record carries
 * the same. A prompt's or a resource's call has no hints: every member
 * UNSET. For an executor that narrows what a handler may do by what its
 * tool says of itself (mcp/guard.h); a hint must never widen access,
 * which scopes decide. Any thread, while the call lives. */
MCP_API mcp_tool_annotations mcp_call_hints(const mcp_call *call);

/** Whether mcp_call_hints are the ones the tool's resolver gave for this
 * call (true), rather than the tool's static hints (false: no resolver,
 * the resolver failed or answered looser, or not a tool's call). For an
 * executor that keeps what a tool needs for its writing calls away from a
 * call resolved read-only (mcp/guard.h's tool_paths). Any thread, while
 * the call lives. */
MCP_API bool mcp_call_hints_resolved(const mcp_call *call);

/** The call's JSON-RPC request id as the client sent it, as JSON text (7,
 * "abc" with its quotes), for an executor that reports about the call
 * (mcp/guard.h). Owned by the call; valid while it lives. NULL for a NULL
 * call. Any thread. */
MCP_API const char *mcp_call_request_id(const mcp_call *call);

/** Adds line (copied) to what call did outside its tool's hints, for its
 * audit record (mcp_audit_record.effects). For an executor that watches
 * its handlers (mcp/guard.h). The first 64 lines are kept; later ones are
 * dropped (0 returned). Returns 0, MCP_EINVAL (NULL call or line) or
 * MCP_ENOMEM. Any thread, while the call lives and before it is answered
 * (a line added later is in no record); it takes a lock of the call's
 * own and no other, so it may run while the call's thread is stopped
 * holding any lock. */
MCP_API int mcp_call_report_effect(mcp_call *call, const char *line);

#ifdef __cplusplus
}
#endif

#endif
