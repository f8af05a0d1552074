/* The task record's header (lib/engine): what a task is to the tasks
 * methods (lib/methods/tasks.c) and to tools/call, and the pure writers of
 * what a task sends (task_wire.c). The rest of the core knows a task only
 * as a call's owner (engine.h). Not installed. */
#ifndef MCP_LIB_TASK_H
#define MCP_LIB_TASK_H

#include "engine.h"

/* ---- the task wire (task_wire.c) ---------------------------------------- */

/* What a task's wire shapes show of it. */
typedef struct mcp__task_facts {
  const char *id;
  const char *status;               /* "working", "input_required", ... */
  const char *status_message;       /* or NULL */
  long long created_ms, updated_ms; /* wall clock */
  unsigned ttl_ms, poll_ms;
} mcp__task_facts;

/* The Task object's members, each followed by a comma, as the era names
 * them (ttlMs and pollIntervalMs in 2026-07-28, ttl and pollInterval
 * before). */
void mcp__wire_task(mcp__buf *b, const mcp__task_facts *f, bool modern);
/* A 2026-07-28 DetailedTask's members: the Task, then what its status
 * inlines: inputRequests (requests: wire key -> {method, params}, when not
 * NULL), else the result or error of outcome (when not NULL). */
void mcp__wire_detail(mcp__buf *b, const mcp__task_facts *f,
                      const struct cJSON *requests, const mcp__outcome *o);
/* A CreateTaskResult's members: flat in 2026-07-28, a task member in
 * 2025-11-25. */
void mcp__wire_created(mcp__buf *b, const mcp__task_facts *f, bool modern);
/* notifications/tasks/status (2025-11-25), the whole message. */
void mcp__wire_status_note(mcp__buf *b, const mcp__task_facts *f);
/* The reply to a 2025-11-25 tasks/result for request id: outcome's result
 * with the related-task _meta, or its error; o NULL: the error of a task
 * that has no result. task_id NULL: the call's own reply, no _meta (the
 * answer of a call whose task was never kept). */
void mcp__wire_task_result(mcp__buf *b, const char *id, size_t id_len,
                           const char *task_id, const mcp__outcome *o);

/* The record of a task in a store, what every node reads of a task
 * another node runs: its facts, the node that runs it, whose it is (the
 * principal's subject, NULL for an anonymous caller), its tool and the
 * arguments the authorizer sees, the input requests it waits for (NULL:
 * none) and its outcome (NULL: none yet). */
typedef struct mcp__task_record {
  mcp__task_facts f;
  const char *node, *subject, *tool;
  bool modern; /* a 2026-07-28 task (tasks/update), else 2025-11-25 */
  const struct cJSON *args, *requests;
  const mcp__outcome *outcome;
} mcp__task_record;

/* The record's text (one JSON object). */
void mcp__wire_record(mcp__buf *b, const mcp__task_record *r);

/* A record read back: rec points into doc. */
typedef struct mcp__task_view {
  struct cJSON *doc;
  mcp__task_record rec;
  mcp__outcome outcome;
  bool final;        /* the store keeps it settled */
  bool holder_alive; /* its node's lease runs */
} mcp__task_view;

/* The index of the records of subject's tasks (NULL: every anonymous
 * caller's), into buf. */
void mcp__task_index(char *buf, size_t size, const char *subject);
/* Parses a record's text; NULL when it is not one (or no memory). */
mcp__task_view *mcp__task_view_parse(const char *text, size_t len, bool final,
                                     bool holder_alive);
void mcp__task_view_free(mcp__task_view *v);

/* ---- the task record (task.c) ----------------------------------------------
 * A call that is or may become a task lives in the record's own home
 * (engine.h's mcp__home: the caller's principal and client capabilities,
 * no transport), so that it can outlive the request and the session that
 * started it. The task is the
 * call's owner (mcp__call_owner): it keeps the call's outcome for
 * tasks/get, and sends its notifications on (before the call became a
 * task, to the request's own sink). The
 * record lives in the server's table from before the handler runs (it
 * counts against the limits) and is visible once published: when the call
 * becomes a task (docs/architecture.md has its states). */

typedef enum mcp__task_mode {
  MCP__TASK_NONE = 0, /* an ordinary call */
  MCP__TASK_MAYBE,    /* 2026-07-28: a task if the handler defers, or calls
                         mcp_call_start_task */
  MCP__TASK_NOW       /* 2025-11-25: a task from the start (task param) */
} mcp__task_mode;

/* Builds the record of a call of tool (with args, copied) that is or may
 * become a task, counted against the limits, with one reference for the
 * caller. Returns 0; 1 after answering r (the limits are reached); or
 * MCP_ENOMEM. */
int mcp__task_new(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                  mcp__tool *tool, const struct cJSON *args,
                  mcp__task_mode mode, unsigned ttl_ms, mcp__task **out);
/* The home a task's call is made in (the record's own: the caller's
 * principal and client capabilities, a lock of its own), and the sink the
 * call holds (a reference to it holds the record; nothing is sent through
 * it: the call's messages reach the task through its owner interface). */
mcp__home *mcp__task_home(mcp__task *t);
mcp__sink *mcp__task_sink(mcp__task *t);
/* Runs c, the call of task t, and answers r: with a CreateTaskResult once
 * it is a task, else with the call's own reply. Takes the caller's
 * reference to t. */
void mcp__task_start(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     mcp_call *c, mcp__task *t);
/* Drops a reference; the last frees the record (and its home). Never
 * call with a lock held. NULL does nothing. */
void mcp__task_unref(mcp__task *t);
/* Makes t the owner of c, its call (lib/methods/tools.c, before it runs):
 * the call machinery tells the task of the call's life through the owner
 * interface (mcp__call_owner). */
void mcp__task_own(mcp_call *c, mcp__task *t);
/* Whether t is published (a task, not a call that may become one). */
bool mcp__task_published(mcp__task *t);
/* What the tasks methods (lib/methods/tasks.c) ask of a record; each
 * takes task_lock itself. The caller's task named id (a new reference), or
 * NULL: unknown, retired, not yet a task, or another principal's. */
mcp__task *mcp__task_find(mcp_server *srv, const char *id,
                          const mcp_principal *caller);
/* The tool a task runs (the record's reference), and the copy of its
 * arguments kept for the authorizer (the record's). */
mcp__tool *mcp__task_tool(const mcp__task *t);
struct cJSON *mcp__task_args(const mcp__task *t);
/* Appends t's Task object (detailed: 2026-07-28's DetailedTask) members. */
void mcp__task_describe(mcp__task *t, bool detailed, mcp__buf *b);
/* tasks/update's inputResponses: every answer checked first, then those
 * outstanding kept (within the budgets). Returns 0 with *ready when the
 * last outstanding one came (then call mcp__task_resume after answering),
 * MCP_EINVAL (an answer of the wrong shape) or MCP_ELIMIT (no budget has
 * room), with the sentence in why. */
int mcp__task_update(mcp__task *t, const struct cJSON *answers, char *why,
                     size_t whylen, bool *ready);
/* Runs the next round of t, whose answers all came. */
void mcp__task_resume(mcp__task *t);
/* tasks/cancel: t ends cancelled unless it ended already; reply is then
 * called, before anyone else hears of it, with the status it had, whether
 * that was terminal, and (legacy_body, not terminal) its Task members in
 * b, which reply owns. Then the call is cancelled, the client's
 * outstanding requests withdrawn, the waiters and listeners told. */
void mcp__task_cancel(mcp__task *t, bool legacy_body,
                      void (*reply)(const char *was, bool ended, mcp__buf *b,
                                    void *arg),
                      void *arg);
/* 2025-11-25 tasks/result of request id on s, whose replies go to sink:
 * the whole reply in b when t ended; else the request waits in the record
 * (s and sink held) and is answered when it ends, and the input requests
 * t waits for are sent to sink. Returns 0, MCP_ELIMIT (too many wait) or
 * MCP_ENOMEM. */
int mcp__task_result(mcp__task *t, mcp_session *s, mcp__sink *sink,
                     const char *id, size_t id_len, mcp__buf *b);
/* ---- another node's task, waited for here (task.c) -------------------------
 * A 2025-11-25 tasks/result of a task another node runs blocks until the
 * task ends (lib/methods/tasks_remote.c): it waits to read the task's
 * record again. */

/* Why a wait was woken. */
typedef enum mcp__remote_wake {
  MCP__WAKE_STORED, /* a node stored the record ended or waiting for input */
  MCP__WAKE_TIMER,  /* its time passed (the node lease, the task's TTL) */
  MCP__WAKE_CLOSED, /* the server lets go of its tasks (mcp_server_free) */
  MCP__WAKE_SESSION /* the request's session ended (mcp_session_free) */
} mcp__remote_wake;

/* How many "stored" events of task id (or of ids that share its count)
 * this server heard: read before reading the record, passed to
 * mcp__task_wait_remote. Takes task_lock. */
unsigned long long mcp__task_stored_seen(mcp_server *srv, const char *id);
/* Waits, for a request of session s, for task id's record to be worth
 * reading again: woken(arg, why) is called once, with no lock held: on the
 * store's delivering thread when a node says it stored the record ended or
 * waiting for input; on the timer's thread (mcp_server_expire) at at_us
 * (CLOCK_MONOTONIC, as mcp__now_us), or at once there when such an event
 * came since seen was read; in mcp_server_free when the server lets go of
 * its tasks; in mcp_session_free when s ends (mcp__task_session_gone).
 * The caller keeps s alive until woken. Returns 0; or, without calling
 * woken, MCP_ELIMIT (too many wait on id), MCP_ECLOSED (the server let go
 * of its tasks, or s is closed) or MCP_ENOMEM. */
int mcp__task_wait_remote(mcp_session *s, const char *id,
                          unsigned long long seen, unsigned long long at_us,
                          void (*woken)(void *arg, mcp__remote_wake why),
                          void *arg);
/* Session s ends (mcp_session_free, before it lets go of its reference):
 * its requests' waits are woken at once (MCP__WAKE_SESSION), so that
 * nobody is kept for an answer no one will read. Takes task_lock. */
void mcp__task_session_gone(mcp_session *s);
/* Starts into e the event about task id that this server's node publishes
 * to the others: {"node":N,"task":what,"id":ID, and ,"to":TO when to (the
 * node it is for) is not NULL; the caller adds its own members and the
 * closing brace. */
void mcp__task_event_start(mcp__buf *e, const mcp_server *srv, const char *what,
                           const char *id, const char *to);
/* Tells every node sharing the store (this one too) that task id's record
 * is stored showing shown (ended, or input_required), so that their waits
 * read it again. No lock held. */
void mcp__task_stored(mcp_server *srv, const char *id, const char *shown);

/* The serial of the newest task made (tasks/list cursors go up to it). */
unsigned long long mcp__tasks_newest(mcp_server *srv);
/* Appends, comma-separated, the Task objects of caller's tasks after
 * serial after (of tools visible may use, when not NULL), at most page;
 * returns whether more follow, the last one's serial in *last. */
bool mcp__tasks_page(mcp_server *srv, const mcp_principal *caller,
                     const mcp_principal *visible, unsigned long long after,
                     unsigned page, mcp__buf *b, unsigned long long *last);

#endif
