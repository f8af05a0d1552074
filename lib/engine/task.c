/* Tasks: a tools/call that outlives its request. The client gets a task id
 * at once, polls tasks/get, answers the task's input requests, reads the
 * result and may cancel it; both forms of the protocol are served from one
 * table: 2025-11-25's experimental tasks (tasks/get, tasks/result,
 * tasks/list, tasks/cancel, notifications/tasks/status, input requests sent
 * to the client with the related-task _meta) and 2026-07-28's
 * io.modelcontextprotocol/tasks extension (tasks/get with the result or the
 * input requests inlined, tasks/update, tasks/cancel).
 *
 * A task's call lives in the record's own home (engine.h's mcp__home): a
 * copy of the caller's principal and client capabilities, its own lock,
 * and no transport, so the call outlives the request, and the session,
 * that started it. The task is the call's owner
 * (mcp__call_owner): the call machinery (call.c) tells it when the call
 * becomes a task, when a round asks for input (its requests numbered and
 * written by input.c's rounds), the outcome as facts, and the call's end.
 * The call's notifications go through the task's sink, to the request that
 * started it while the call is not yet a task, afterwards, in 2025-11-25
 * only, to the session that made it. The handler needs no change.
 *
 * The record's states (docs/architecture.md has the table): created with
 * the call, unpublished (invisible, counted against the limits), then
 * published (working, input_required while it has input requests out,
 * and one of the terminal completed, failed, cancelled) until its TTL
 * passes or the limits need its room, then retired (out of the table, its
 * home closed), and freed with its last reference. This file is the only
 * writer of a record's state; the server's task_lock guards it. The lock order
 * is engine.h's. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

#define EXTENSION "io.modelcontextprotocol/tasks"
#define ID_BYTES 16   /* 128 bits from the CSPRNG */
#define MAX_WAITERS 8 /* tasks/result requests waiting on one task */
/* The members of the error a task fails with when its outcome is lost
 * (no memory to keep it, or its call ended without one), written where no
 * allocation may be made. */
#define INTERNAL_ERROR "\"code\":-32603,\"message\":\"Internal error\""
#define MAX_STATUS 1024  /* bytes of a statusMessage */
#define MIN_TTL_MS 1000u /* the least TTL a 2025-11-25 client gets */
#define DEFAULT_TTL_MS 3600000u
#define DEFAULT_MAX_TTL_MS 86400000u
#define DEFAULT_POLL_MS 500u
#define DEFAULT_PER_CALLER 64u
#define DEFAULT_TOTAL 1024u
#define MIB ((size_t)1 << 20)
#define DEFAULT_BYTES_PER_CALLER (32 * MIB)
#define DEFAULT_BYTES_TOTAL (256 * MIB)
#define DEFAULT_BYTES_ANONYMOUS (4 * MIB)
#define ANONYMOUS_SHARE 8u /* an anonymous session: 1/8 of a caller's tasks */
/* mcp_task_limits took pointer-sized reserved room for its size_t members,
 * so its size and offsets stay. */
_Static_assert(sizeof(size_t) == sizeof(void *),
               "mcp_task_limits keeps its size");
/* Bytes each record keeps for the error it may end with (a budget's, or
 * an internal one), so that ending failed never passes a budget. */
#define FAIL_ROOM 320u
#define NONE ULLONG_MAX

typedef enum status {
  WORKING = 0,
  INPUT_REQUIRED, /* shown, never kept: see status_of */
  COMPLETED,
  FAILED,
  CANCELLED
} status;

static const char *const status_names[] = {"working", "input_required",
                                           "completed", "failed", "cancelled"};

/* A 2025-11-25 tasks/result waiting for its task to end. */
typedef struct waiter {
  mcp_session *s;  /* a reference */
  mcp__sink *sink; /* a reference; NULL: the session's callback */
  char *id;        /* the request's raw id, in the same block */
  size_t id_len;
  struct waiter *next;
} waiter;

struct mcp__task {
  _Atomic unsigned refs; /* listed (until retired), the creator's (until the
                            request is answered), the call's (until freed),
                            and each user's of the moment */
  mcp_server *srv;
  char id[32];
  unsigned long long serial; /* creation order: tasks/list, cursors */
  mcp__task_mode mode;       /* MAYBE: 2026-07-28; NOW: 2025-11-25 */
  _Atomic bool published;    /* written under task_lock */
  bool retired;
  bool ended;      /* its call is gone */
  bool lost_input; /* an answer could not be kept (no memory) */
  int status;      /* status */
  char *status_message;
  long long created_ms, updated_ms; /* wall clock, for the timestamps */
  unsigned ttl_ms, poll_ms;
  mcp__deadline expiry; /* its TTL, in srv->deadlines once published */
  mcp__deadline wake;   /* due at once: its next round, whose answers came
                           from another node, runs on the timer's thread
                           (mcp__task_event), while it is listed */
  /* Its call's home (the caller's principal and client capabilities, a
   * lock of its own), closed when it is retired; it holds a reference to
   * the record while it has any (mcp_server_expire pins it). */
  mcp__home home;
  mcp__sink *sink; /* the call's sink; one reference */
  mcp__tool *tool; /* a reference: admission of the tasks methods */
  cJSON *args;     /* a copy: what the authorizer sees on the tasks methods */
  char *outcome;   /* COMPLETED and FAILED: the members of the result or
                      the error object, as the call built them (its
                      mcp__outcome) */
  size_t outcome_len;
  bool outcome_error;     /* outcome is a JSON-RPC error object's */
  cJSON *pending;         /* wire key -> {method, params, key[, id]} */
  cJSON *answers;         /* the handler's key -> answer, for the next round */
  cJSON *used;            /* every wire key issued (unique over the task) */
  mcp_session *origin;    /* a reference: the session that made it */
  mcp__sink *origin_sink; /* MAYBE, until answered: the request's sink */
  waiter *waiters;
  mcp__list link; /* in srv->tasks, oldest first */
  /* The budgets (under task_lock): whose it is, and what it holds. */
  unsigned long long anonymous; /* an anonymous caller's session serial; 0
                                   for a named one */
  size_t base;                  /* the record, its sink, a status message */
  size_t kept_args;             /* args */
  size_t call_args;             /* the call's arguments, while it lives */
  size_t pending_bytes;         /* pending and used */
  size_t answers_bytes;         /* answers */
  size_t call_inputs;           /* the answers the call's round holds */
  /* Once retired to make room (under task_lock, then the retiring
   * thread's alone): the next on its list, and its waiters. */
  mcp__task *evict_next;
  waiter *evict_waiters;
  mcp__task *evicted; /* records its result retired, to finish when its
                         call ends */
  /* Its record in the server's store (mirror): rev counts the changes
   * asked to be kept, kept_rev the newest the store answered for; one put
   * is in flight at a time (mirroring), the newest state put after it.
   * later: replies that wait until the store has it (under task_lock). */
  unsigned long long rev, kept_rev;
  bool mirroring;
  struct later *later;
  /* Its count in the cluster's budgets (counts_locked): count_tried, a
   * counted put was made (the first is its admission); counted, one took,
   * counting counted_bytes; uncounted, the store refused one (a budget
   * was full), and its record is put counted from then on only when it
   * holds no more than it counts already (a put that cannot be
   * refused). */
  bool count_tried, counted, uncounted;
  size_t counted_bytes;
  /* It ended before the cluster refused its admission, and is forgotten
   * (OVER_FORGOT): a reply still waiting is its call's answer instead. */
  bool forgotten;
  int outcome_code; /* with outcome_error: the error's code */
};

/* A reply sent once the store keeps a task's record (a 2026-07-28
 * CreateTaskResult, so that any node the client asks next knows the
 * task), and the id of the request it answers. */
typedef struct later {
  struct later *next;
  unsigned long long rev;
  mcp_session *s;  /* a reference */
  mcp__sink *sink; /* a reference; NULL: the session's callback */
  size_t len, id_len;
  int code;   /* the reply is an error of this code; 0: a result */
  char msg[]; /* len bytes of the reply, then id_len of the id */
} later;

/* Another node's tasks/result requests waiting here (srv->remote_waits,
 * under task_lock): those listed, whether the server let go of them, and
 * how many "stored" events were heard, by a hash of the task id, so that a
 * wait made after reading a record knows whether one came meanwhile. */
#define WAIT_BUCKETS 64

typedef struct rwait {
  mcp__list link; /* in remote_waits->list while listed */
  bool listed;
  _Atomic unsigned refs; /* the list's (while listed) and the timer's pin */
  mcp__deadline timer;   /* when to read the record again anyway */
  mcp_server *srv;
  const mcp_session *session; /* the request's: its end wakes the wait */
  char id[32];
  void (*woken)(void *arg, mcp__remote_wake why);
  void *arg;
  struct rwait *next; /* once taken off the list: the taker's chain */
} rwait;

struct mcp__remote_waits {
  mcp__list list;
  size_t n;
  bool closed; /* mcp_server_free: no wait is made any more */
  unsigned long long seen[WAIT_BUCKETS];
};

static bool terminal(int st) { return st >= COMPLETED; }

static mcp__task *task_at(mcp__list *link) {
  return mcp__container_of(link, mcp__task, link);
}

/* The status t shows. Waiting for input is one fact, its outstanding
 * requests: a working task with some is input_required; the record keeps
 * no second status for it. Under task_lock. */
static int status_of(const mcp__task *t) {
  return t->status == WORKING && t->pending->child ? INPUT_REQUIRED : t->status;
}

static bool same_subject(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Whose t is: its caller's subject, fixed for t's life (NULL: an
 * anonymous caller's). No lock needed. */
static const char *owner_subject(const mcp__task *t) {
  return t->home.principal.subject;
}

/* Whose t is now: a retired record is no one's (its home is closed).
 * Under task_lock, which retiring takes; a reader without it takes
 * owner_subject of a state it copied under the lock. */
static const char *subject_of(const mcp__task *t) {
  return t->retired ? NULL : owner_subject(t);
}

/* Pins a session (a reference) while its lock is not held. */
static void session_ref(mcp_session *s) {
  pthread_mutex_lock(&s->home.lock);
  atomic_fetch_add(&s->home.refs, 1);
  pthread_mutex_unlock(&s->home.lock);
}

static void session_unref(mcp_session *s) {
  if (s == NULL)
    return;
  pthread_mutex_lock(&s->home.lock);
  mcp__session_unref_locked(s);
}

/* ---- limits, setup and teardown ------------------------------------------ */

static mcp_task_limits limits_or_defaults(const mcp_task_limits *l) {
  mcp_task_limits d = *l;
  d.ttl_ms = d.ttl_ms ? d.ttl_ms : DEFAULT_TTL_MS;
  d.max_ttl_ms = d.max_ttl_ms ? d.max_ttl_ms : DEFAULT_MAX_TTL_MS;
  if (d.max_ttl_ms < d.ttl_ms)
    d.max_ttl_ms = d.ttl_ms;
  d.poll_interval_ms =
      d.poll_interval_ms ? d.poll_interval_ms : DEFAULT_POLL_MS;
  d.max_per_caller = d.max_per_caller ? d.max_per_caller : DEFAULT_PER_CALLER;
  d.max_total = d.max_total ? d.max_total : DEFAULT_TOTAL;
  d.max_bytes_per_caller = d.max_bytes_per_caller ? d.max_bytes_per_caller
                                                  : DEFAULT_BYTES_PER_CALLER;
  d.max_bytes_total =
      d.max_bytes_total ? d.max_bytes_total : DEFAULT_BYTES_TOTAL;
  d.max_bytes_anonymous =
      d.max_bytes_anonymous ? d.max_bytes_anonymous : DEFAULT_BYTES_ANONYMOUS;
  if (d.max_bytes_anonymous > d.max_bytes_per_caller)
    d.max_bytes_anonymous = d.max_bytes_per_caller;
  return d;
}

int mcp__tasks_init(mcp_server *srv) {
  srv->remote_waits = mcp__calloc(1, sizeof *srv->remote_waits);
  if (srv->remote_waits == NULL)
    return MCP_ENOMEM;
  if (pthread_mutex_init(&srv->task_lock, NULL) != 0) {
    mcp__free(srv->remote_waits);
    return MCP_ENOMEM;
  }
  mcp__list_init(&srv->remote_waits->list);
  mcp__list_init(&srv->tasks);
  atomic_init(&srv->task_listeners, 0);
  srv->task_limits = limits_or_defaults(&(mcp_task_limits){0});
  return 0;
}

void mcp__tasks_fini(mcp_server *srv) {
  pthread_mutex_destroy(&srv->task_lock);
  mcp__free(srv->remote_waits);
}

int mcp_server_set_task_limits(mcp_server *srv, const mcp_task_limits *limits) {
  if (srv == NULL || limits == NULL ||
      (limits->max_ttl_ms && limits->ttl_ms > limits->max_ttl_ms))
    return MCP_EINVAL;
  mcp_task_limits l = limits_or_defaults(limits);
  pthread_mutex_lock(&srv->task_lock);
  srv->task_limits = l;
  pthread_mutex_unlock(&srv->task_lock);
  return 0;
}

/* ---- the record ---------------------------------------------------------- */

static void touch_locked(mcp__task *t, int st) {
  t->status = st;
  t->updated_ms = mcp__wall_ms();
  if (t->updated_ms < t->created_ms)
    t->updated_ms = t->created_ms; /* a wall clock set back */
}

static void free_waiters(waiter *w) {
  while (w) {
    waiter *next = w->next;
    mcp__sink_release(w->sink);
    session_unref(w->s);
    mcp__free(w);
    w = next;
  }
}

static void later_send(struct later *l);

static void task_free(mcp__task *t) {
  later_send(t->later);
  mcp__free(t->status_message);
  cJSON_Delete(t->args);
  mcp__free(t->outcome);
  cJSON_Delete(t->pending);
  cJSON_Delete(t->answers);
  cJSON_Delete(t->used);
  mcp__tool_unref(t->tool);
  mcp__sink_release(t->sink);
  mcp__sink_release(t->origin_sink);
  session_unref(t->origin);
  free_waiters(t->waiters);
  if (t->home.srv)
    mcp__home_fini(&t->home);
  mcp_server *srv = t->srv;
  mcp__free(t);
  /* Last: the record held the server, whose lock the code above may have
   * needed (a call that ends after mcp_server_free frees the server here). */
  mcp__server_unref(srv);
}

void mcp__task_unref(mcp__task *t) {
  if (t && atomic_fetch_sub(&t->refs, 1) == 1)
    task_free(t);
}

/* Takes t out of the table and the expiry heap (under task_lock). Its
 * waiters are handed back for retire_finish, after the lock, which closes
 * its home. */
static void retire_locked(mcp__task *t, waiter **w) {
  mcp_server *srv = t->srv;
  *w = t->waiters;
  t->waiters = NULL;
  t->retired = true;
  mcp__list_remove(&t->link);
  srv->ntasks--;
  mcp__deadline_unwatch(srv, &t->expiry);
}

static void answer_waiter(waiter *w, const char *msg, size_t len);

/* After retire_locked, without the lock: waiters hear that the task is
 * gone, its home is closed (its call, if any, cancelled), the listing
 * reference goes. */
static void retire_finish(mcp__task *t, waiter *w) {
  for (waiter *x = w; x; x = x->next) {
    mcp__buf b = {0};
    mcp__rpc_error(&b, x->id, x->id_len, MCP__ID_OMIT, MCP__RPC_INVALID_PARAMS,
                   "Failed to retrieve task: Task has expired", NULL);
    if (b.err == 0)
      answer_waiter(x, b.data, b.len);
    mcp__buf_free(&b);
  }
  free_waiters(w);
  mcp__deadline_unwatch(t->srv, &t->wake);
  mcp__home_close(&t->home);
  mcp__task_unref(t);
}

static void retire(mcp__task *t) {
  waiter *w;
  pthread_mutex_lock(&t->srv->task_lock);
  if (t->retired) {
    pthread_mutex_unlock(&t->srv->task_lock);
    return;
  }
  retire_locked(t, &w);
  pthread_mutex_unlock(&t->srv->task_lock);
  retire_finish(t, w);
}

/* The timer's side of a task's TTL (mcp_server_expire): pinned under the
 * heap's lock, where the node in the heap means the record is listed (the
 * listing reference keeps it), then forgotten. */
static void ttl_pin(mcp__deadline *d) {
  mcp__task *t = mcp__container_of(d, mcp__task, expiry);
  atomic_fetch_add(&t->refs, 1);
}

static void ttl_due(mcp__deadline *d) {
  mcp__task *t = mcp__container_of(d, mcp__task, expiry);
  retire(t); /* unwatches it, unless another thread retired it first */
  mcp__task_unref(t);
}

static void resume(mcp__task *t);

/* The wake's side: the next round, on the thread that drives the timer
 * (pinned as the TTL is). */
static void wake_pin(mcp__deadline *d) {
  mcp__task *t = mcp__container_of(d, mcp__task, wake);
  atomic_fetch_add(&t->refs, 1);
}

static void wake_due(mcp__deadline *d) {
  mcp__task *t = mcp__container_of(d, mcp__task, wake);
  mcp__deadline_unwatch(t->srv, d);
  resume(t);
  mcp__task_unref(t);
}

/* ---- budgets ----------------------------------------------------------------
 * A task counts against three budgets of tasks and bytes: its caller's
 * (for an anonymous caller, its session's), the anonymous callers' joint
 * one (an anonymous caller's task only), and the server's. Room is made by
 * retiring the oldest finished task of the budget that would be passed. */

typedef enum scope {
  SCOPE_NONE = 0,
  SCOPE_CALLER,    /* one principal, or one anonymous session */
  SCOPE_ANONYMOUS, /* every anonymous caller together */
  SCOPE_TOTAL      /* the server */
} scope;

/* Whose budget: a subject, or an anonymous caller's session serial. */
typedef struct owner {
  const char *subject;
  unsigned long long anonymous;
} owner;

static owner owner_of(const mcp__task *t) {
  return (owner){subject_of(t), t->anonymous};
}

static bool in_scope(const mcp__task *t, scope sc, const owner *o) {
  switch (sc) {
  case SCOPE_CALLER:
    return same_subject(subject_of(t), o->subject) &&
           t->anonymous == o->anonymous;
  case SCOPE_ANONYMOUS:
    return subject_of(t) == NULL;
  default:
    return true;
  }
}

/* Bytes of the outcome object kept: its members and braces. */
static size_t kept_outcome(const mcp__task *t) {
  return t->outcome ? t->outcome_len + 2 : 0;
}

/* Bytes a record holds: the error it may end with has room kept in it. */
static size_t held(const mcp__task *t) {
  return t->base + t->kept_args + t->call_args + t->pending_bytes +
         t->answers_bytes + t->call_inputs +
         (kept_outcome(t) > FAIL_ROOM ? kept_outcome(t) : FAIL_ROOM);
}

/* Bytes a cJSON tree takes: its nodes and their texts. */
static size_t json_bytes(const cJSON *j) {
  size_t n = 0;
  for (; j; j = j->next) {
    n += sizeof *j;
    if (j->string)
      n += strlen(j->string) + 1;
    if (j->valuestring)
      n += strlen(j->valuestring) + 1;
    n += json_bytes(j->child);
  }
  return n;
}

static size_t tree_bytes(const cJSON *j) {
  if (j == NULL)
    return 0;
  return sizeof *j + (j->string ? strlen(j->string) + 1 : 0) +
         (j->valuestring ? strlen(j->valuestring) + 1 : 0) +
         json_bytes(j->child);
}

/* The budget of scope sc for o: tasks and bytes (SIZE_MAX: none). */
static void budget_of(const mcp_task_limits *l, scope sc, const owner *o,
                      size_t *tasks, size_t *bytes) {
  bool anonymous = o->subject == NULL;
  *tasks = *bytes = SIZE_MAX;
  if (sc == SCOPE_CALLER && anonymous) {
    *tasks = l->max_per_caller / ANONYMOUS_SHARE
                 ? l->max_per_caller / ANONYMOUS_SHARE
                 : 1;
    *bytes = l->max_bytes_anonymous;
  } else if (sc == SCOPE_CALLER || (sc == SCOPE_ANONYMOUS && anonymous)) {
    *tasks = l->max_per_caller;
    *bytes = l->max_bytes_per_caller;
  } else if (sc == SCOPE_TOTAL) {
    *tasks = l->max_total;
    *bytes = l->max_bytes_total;
  }
}

/* The first budget that tasks more tasks and bytes more bytes for o would
 * pass (*bytes_over: by its bytes), or SCOPE_NONE. Under task_lock. */
static scope over_locked(mcp_server *srv, const owner *o, size_t tasks,
                         size_t bytes, bool *bytes_over) {
  size_t count[4] = {0}, used[4] = {0};
  mcp__list_each(link, &srv->tasks) {
    mcp__task *t = task_at(link);
    for (int sc = SCOPE_CALLER; sc <= SCOPE_TOTAL; sc++)
      if (in_scope(t, (scope)sc, o)) {
        count[sc]++;
        used[sc] += held(t);
      }
  }
  for (int sc = SCOPE_CALLER; sc <= SCOPE_TOTAL; sc++) {
    size_t max_tasks, max_bytes;
    budget_of(&srv->task_limits, (scope)sc, o, &max_tasks, &max_bytes);
    if (tasks && count[sc] >= max_tasks) {
      *bytes_over = false;
      return (scope)sc;
    }
    if (used[sc] > max_bytes || bytes > max_bytes - used[sc]) {
      *bytes_over = true;
      return (scope)sc;
    }
  }
  return SCOPE_NONE;
}

/* The oldest finished task of scope sc for o. Under task_lock. */
static mcp__task *oldest_finished(mcp_server *srv, scope sc, const owner *o) {
  mcp__list_each(link, &srv->tasks) {
    mcp__task *t = task_at(link);
    if (atomic_load(&t->published) && terminal(t->status) && in_scope(t, sc, o))
      return t;
  }
  return NULL;
}

/* Makes room for tasks more tasks and bytes more bytes of o, retiring the
 * oldest finished tasks of each budget they would pass (pushed on
 * *evicted, for finish_evicted after the lock). Returns SCOPE_NONE when
 * they fit, else the budget they still pass. Under task_lock. */
static scope make_room_locked(mcp_server *srv, const owner *o, size_t tasks,
                              size_t bytes, bool *bytes_over,
                              mcp__task **evicted) {
  for (;;) {
    scope sc = over_locked(srv, o, tasks, bytes, bytes_over);
    mcp__task *old = sc ? oldest_finished(srv, sc, o) : NULL;
    if (old == NULL)
      return sc;
    retire_locked(old, &old->evict_waiters);
    old->evict_next = *evicted;
    *evicted = old;
  }
}

/* Finishes what make_room_locked retired. No lock held. */
static void finish_evicted(mcp__task *t) {
  while (t) {
    mcp__task *next = t->evict_next;
    retire_finish(t, t->evict_waiters);
    t = next;
  }
}

/* "the per-caller task memory budget (N bytes)" and the like: the byte
 * budget sc of o. */
static void budget_text(char *buf, size_t n, const mcp_task_limits *l, scope sc,
                        const owner *o) {
  static const char *const whose[2][4] = {
      {"", "per-caller", "anonymous callers' joint", "server's"},
      {"", "per-anonymous-session", "anonymous callers' joint", "server's"}};
  size_t max_tasks, max_bytes;
  budget_of(l, sc, o, &max_tasks, &max_bytes);
  mcp__fmt(buf, n, "the %s task memory budget (%zu bytes)",
           whose[o->subject == NULL][sc], max_bytes);
}

/* Lists t, making room by retiring finished tasks (pushed on *evicted),
 * or refuses: returns the budget a new task would pass (why, in msg) when
 * every task of it still runs. Under task_lock. */
static scope admit_locked(mcp__task *t, const owner *o, mcp__task **evicted,
                          char *msg, size_t n) {
  mcp_server *srv = t->srv;
  bool bytes = false;
  scope sc = make_room_locked(srv, o, 1, held(t), &bytes, evicted);
  if (sc && bytes) {
    char budget[120];
    budget_text(budget, sizeof budget, &srv->task_limits, sc, o);
    mcp__fmt(msg, n,
             "Server busy: a new task would pass %s, and no finished task "
             "there can make room; try again when one has finished",
             budget);
  } else if (sc) {
    static const char *const where[2][4] = {
        {"", "per caller", "for anonymous callers together", "on the server"},
        {"", "per anonymous session", "for anonymous callers together",
         "on the server"}};
    size_t max_tasks, max_bytes;
    budget_of(&srv->task_limits, sc, o, &max_tasks, &max_bytes);
    mcp__fmt(msg, n,
             "Server busy: too many tasks are running (at most %zu %s); try "
             "again when one has finished",
             max_tasks, where[o->subject == NULL][sc]);
  }
  if (sc)
    return sc;
  t->serial = ++srv->next_task_serial;
  mcp__list_push(&srv->tasks, &t->link);
  srv->ntasks++;
  return SCOPE_NONE;
}

/* Ends t failed with a -32000 error that says why (its statusMessage says
 * it too): a budget it would pass. Its room is kept in every record.
 * Under task_lock. */
static void fail_locked(mcp__task *t, const char *why) {
  mcp__buf e = {0};
  mcp__wire_error_members(&e, MCP__RPC_SERVER_BUSY, why);
  char *message = mcp__strdup(why);
  mcp__free(t->outcome);
  t->outcome = e.err ? NULL : mcp__malloc(e.len ? e.len : 1);
  if (t->outcome)
    memcpy(t->outcome, e.data, e.len);
  t->outcome_len = t->outcome ? e.len : 0;
  t->outcome_error = true;
  t->outcome_code = MCP__RPC_SERVER_BUSY;
  mcp__buf_free(&e);
  if (message) {
    mcp__free(t->status_message);
    t->status_message = message;
  }
  touch_locked(t, FAILED);
}

/* Makes room for t to hold more bytes, for what (e.g. "result", of size
 * bytes: for the message). Returns true when they fit; otherwise why says
 * which budget they would pass. Under task_lock. */
static bool grow_locked(mcp__task *t, size_t more, const char *what,
                        size_t size, mcp__task **evicted, char *why, size_t n) {
  owner o = owner_of(t);
  bool bytes = false;
  scope sc = more ? make_room_locked(t->srv, &o, 0, more, &bytes, evicted) : 0;
  if (sc == SCOPE_NONE)
    return true;
  char budget[120];
  budget_text(budget, sizeof budget, &t->srv->task_limits, sc, &o);
  mcp__fmt(why, n, "Server busy: the task's %s (%zu bytes) would pass %s", what,
           size, budget);
  return false;
}

/* The sink of a task's call (its messages: see sink_send). */
static int sink_send(const char *msg, size_t len, const mcp_send_info *info,
                     void *user_data);

/* The home's side of a record (mcp__home_ops): it has no peer of its own
 * (its call's messages go through the sink), and its last reference lets
 * go of the record. */
static void home_release(mcp__home *h) {
  mcp__task_unref(mcp__container_of(h, mcp__task, home));
}

static const mcp__home_ops home_ops = {NULL, home_release};

/* Builds t's home and sink; 0 or MCP_ENOMEM. */
static int task_parts(mcp__task *t, mcp_session *s) {
  if (mcp__home_init(&t->home, &home_ops, s->home.srv, &s->home.principal))
    return MCP_ENOMEM;
  atomic_fetch_add(&t->refs, 1); /* the home's */
  if (s->home.client_caps &&
      (t->home.client_caps = cJSON_Duplicate(s->home.client_caps, 1)) == NULL)
    return MCP_ENOMEM;
  if ((t->sink = mcp__calloc(1, sizeof *t->sink)) == NULL)
    return MCP_ENOMEM;
  t->sink->sink.send_info = sink_send;
  t->sink->sink.user_data = t;
  atomic_init(&t->sink->refs, 1);
  unsigned char raw[ID_BYTES];
  if (mcp__random(raw, sizeof raw) != 0)
    return MCP_EIO;
  mcp__buf id = {0};
  mcp__base64url(&id, raw, sizeof raw);
  if (id.err || id.len >= sizeof t->id) {
    mcp__buf_free(&id);
    return MCP_ENOMEM;
  }
  memcpy(t->id, id.data, id.len);
  mcp__buf_free(&id);
  return 0;
}

int mcp__task_new(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                  mcp__tool *tool, const cJSON *args, mcp__task_mode mode,
                  unsigned ttl_ms, mcp__task **out) {
  mcp_server *srv = s->home.srv;
  mcp__task *t = mcp__calloc(1, sizeof *t);
  if (t == NULL)
    return MCP_ENOMEM;
  mcp__list_init(&t->link);
  atomic_init(&t->refs, 2); /* listed, and the creator's */
  atomic_init(&t->published, false);
  t->expiry = (mcp__deadline){
      .kind = MCP__DEADLINE_TTL, .pin = ttl_pin, .due = ttl_due};
  t->wake = (mcp__deadline){
      .kind = MCP__DEADLINE_TTL, .pin = wake_pin, .due = wake_due};
  t->srv = srv;
  atomic_fetch_add(&srv->refs, 1);
  t->mode = mode;
  t->created_ms = t->updated_ms = mcp__wall_ms();
  t->tool = tool;
  mcp__tool_ref(tool);
  /* The call holds its arguments while it runs. The record keeps a copy
   * only for an authorizer, which every tasks method shows them to. */
  t->call_args = json_bytes(args);
  bool keep = srv->policy.authorize != NULL;
  t->args = keep ? cJSON_Duplicate(args, 1) : NULL;
  t->kept_args = keep ? t->call_args : 0;
  t->pending = cJSON_CreateObject();
  t->used = cJSON_CreateObject();
  int rc = (t->args || !keep) && t->pending && t->used ? task_parts(t, s)
                                                       : MCP_ENOMEM;
  if (rc) {
    task_free(t);
    return rc;
  }
  session_ref(s);
  t->origin = s;
  if (mode == MCP__TASK_MAYBE) {
    t->origin_sink = ctx->sink;
    mcp__sink_ref(ctx->sink);
  }
  t->base = sizeof *t + sizeof *t->sink + MAX_STATUS + 1 +
            tree_bytes(t->home.client_caps);
  /* An anonymous caller is known only by its session (as to the rate
   * limiter): a number of its own, never reused as an address could be. */
  if (s->home.principal.subject == NULL) {
    pthread_mutex_lock(&s->home.lock);
    if (s->serial == 0)
      s->serial = atomic_fetch_add(&srv->next_serial, 1) + 1;
    t->anonymous = s->serial;
    pthread_mutex_unlock(&s->home.lock);
  }
  owner o = {s->home.principal.subject, t->anonymous};
  mcp__task *evicted = NULL;
  char msg[320];
  pthread_mutex_lock(&srv->task_lock);
  const mcp_task_limits *l = &srv->task_limits;
  t->poll_ms = l->poll_interval_ms;
  t->ttl_ms = ttl_ms == 0              ? l->ttl_ms
              : ttl_ms < MIN_TTL_MS    ? MIN_TTL_MS
              : ttl_ms > l->max_ttl_ms ? l->max_ttl_ms
                                       : ttl_ms;
  bool listed = admit_locked(t, &o, &evicted, msg, sizeof msg) == SCOPE_NONE;
  pthread_mutex_unlock(&srv->task_lock);
  finish_evicted(evicted);
  if (!listed) {
    task_free(t);
    mcp__utf8_trim(msg);
    mcp__audit_reply(s, ctx, tool->name, MCP_DECISION_RATE_LIMITED, NULL, false,
                     false, r->started_us);
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY, msg, NULL);
    return 1;
  }
  *out = t;
  return 0;
}

mcp__home *mcp__task_home(mcp__task *t) { return &t->home; }

mcp__sink *mcp__task_sink(mcp__task *t) {
  /* The call holds the record as long as it holds the sink. */
  atomic_fetch_add(&t->refs, 1);
  return t->sink;
}

bool mcp__task_published(mcp__task *t) { return atomic_load(&t->published); }

/* The owner interface (mcp__call_owner): publish_locked. */
static void owner_publish_locked(void *owner_data) {
  mcp__task *t = owner_data;
  mcp_server *srv = t->srv;
  pthread_mutex_lock(&srv->task_lock);
  if (!atomic_load(&t->published) && !t->retired) {
    atomic_store(&t->published, true);
    mcp__deadline_watch(srv, &t->expiry,
                        mcp__now_us() + (unsigned long long)t->ttl_ms * 1000u);
  }
  pthread_mutex_unlock(&srv->task_lock);
}

/* ---- the wire ------------------------------------------------------------ */

/* The facts the wire shows of t. Under task_lock. */
static mcp__task_facts facts_of(const mcp__task *t) {
  return (mcp__task_facts){.id = t->id,
                           .status = status_names[status_of(t)],
                           .status_message = t->status_message,
                           .created_ms = t->created_ms,
                           .updated_ms = t->updated_ms,
                           .ttl_ms = t->ttl_ms,
                           .poll_ms = t->poll_ms};
}

/* t's outcome as the wire writers take it, or NULL when it has none.
 * Under task_lock. */
static const mcp__outcome *outcome_of(const mcp__task *t, mcp__outcome *o) {
  if (t->outcome == NULL)
    return NULL;
  *o = (mcp__outcome){
      .error = t->outcome_error, .members = t->outcome, .len = t->outcome_len};
  return o;
}

/* The Task object's members (task_wire.c). Under task_lock. */
static void put_task(mcp__buf *b, const mcp__task *t, bool modern) {
  mcp__task_facts f = facts_of(t);
  mcp__wire_task(b, &f, modern);
}

/* A 2026-07-28 DetailedTask (task_wire.c). Under task_lock. */
static void put_detail(mcp__buf *b, const mcp__task *t) {
  mcp__task_facts f = facts_of(t);
  mcp__outcome o;
  mcp__wire_detail(b, &f, status_of(t) == INPUT_REQUIRED ? t->pending : NULL,
                   outcome_of(t, &o));
}

static unsigned long long mirror(mcp__task *t);

static void publish_changed(mcp__task *t, const mcp__buf *detail);

/* Puts t's record, and tells the subscriptions/listen streams that asked
 * for t (2026-07-28's notifications/tasks), here and on other nodes, how
 * it is now. t is pinned meanwhile: the store's answer may retire it (its
 * record evicted) and end its parked call, letting go of the references
 * the caller counted on. No lock held. */
static void tell_listeners(mcp__task *t) {
  mcp_server *srv = t->srv;
  atomic_fetch_add(&t->refs, 1);
  mirror(t);
  bool remote = mcp__records(srv) != NULL;
  if (atomic_load(&srv->task_listeners) == 0 && !remote) {
    mcp__task_unref(t);
    return;
  }
  mcp__buf b = {0};
  pthread_mutex_lock(&srv->task_lock);
  if (atomic_load(&t->published) && !t->retired)
    put_detail(&b, t);
  pthread_mutex_unlock(&srv->task_lock);
  /* A detail is copied only while t is not retired: it is its owner's. */
  if (b.len && b.err == 0)
    mcp__broadcast_task(srv, t->id, b.data, b.len, owner_subject(t), t->tool);
  if (remote && b.len && b.err == 0)
    publish_changed(t, &b);
  mcp__buf_free(&b);
  mcp__task_unref(t);
}

/* Tells the other nodes that t changed, with its DetailedTask members, so
 * that their listeners that asked for it hear of it too:
 * {"node":N,"task":"changed","id":I,"subject":S,"tool":T,"detail":D}.
 * A detail too big for an event is not published (its listeners elsewhere
 * read it with tasks/get). No lock held. */
static void publish_changed(mcp__task *t, const mcp__buf *detail) {
  mcp_server *srv = t->srv;
  mcp__buf e = {0};
  mcp__task_event_start(&e, srv, "changed", t->id, NULL);
  mcp__buf_puts(&e, ",\"subject\":");
  const char *subject = t->home.principal.subject;
  if (subject)
    mcp__json_quote(&e, subject, strlen(subject));
  else
    mcp__buf_puts(&e, "null");
  mcp__buf_puts(&e, ",\"tool\":");
  mcp__json_quote(&e, t->tool->name, strlen(t->tool->name));
  mcp__buf_puts(&e, ",\"detail\":");
  mcp__json_quote(&e, detail->data, detail->len);
  mcp__buf_putc(&e, '}');
  if (e.err == 0 && e.len <= MCP_STORE_EVENT_MAX)
    mcp__publish(srv, "notifications/tasks", e.data, e.len);
  mcp__buf_free(&e);
}

/* ---- the record in the store ----------------------------------------------
 * With a store that keeps records (mcp__records), every change of a
 * published task is put as its record "task:<id>" (task_wire.c's text),
 * final once it ended, held by this server's node, for what is left of
 * its TTL; the other nodes answer from it (lib/methods/tasks_remote.c).
 * Puts go one at a time per task, each with the newest state, so that an
 * older state never overwrites a newer one. A put the store refuses
 * because another node settled the record (cancelled it, or failed it
 * when this node's lease lapsed) settles the task here the same way. */

static void record_text_locked(mcp__buf *b, const mcp__task *t) {
  mcp__outcome o;
  mcp__task_record r = {
      .f = facts_of(t),
      .node = t->srv->node,
      .subject = subject_of(t),
      .tool = t->tool->name,
      .modern = t->mode == MCP__TASK_MAYBE,
      .args = t->args,
      .requests = status_of(t) == INPUT_REQUIRED ? t->pending : NULL,
      .outcome = t->status == CANCELLED ? NULL : outcome_of(t, &o)};
  mcp__wire_record(b, &r);
}

/* ---- the cluster's budgets ------------------------------------------------
 * Each record put counts in the store's budgets (mcp_store_count) what
 * held(t) counts here: in its caller's (a named caller's, by a hash of the
 * subject; anonymous callers share one) and in the cluster's total, with
 * this server's limits (every node of a cluster is given the same). So a
 * new task is admitted only while the whole cluster has room, the store
 * first forgetting the oldest finished tasks there (their nodes are told,
 * and forget them too); when every task of the budget still runs, the new
 * one fails at once, as a task over a budget of its node does. A task
 * already admitted whose record grows past a budget (its result) keeps
 * its record, counted as it was: its node's own budget bounds it. */

#define BUDGET_TOTAL "task-budget:total"

typedef struct counting {
  mcp_store_budget budgets[2];
  mcp_store_count count;
  char caller[96];
} counting;

/* The counting of t's record as it is now into *k (which its count points
 * into: not to be copied). Under task_lock. */
static void counting_of_locked(const mcp__task *t, counting *k) {
  const mcp_task_limits *l = &t->srv->task_limits;
  const char *subject = subject_of(t);
  if (subject) {
    unsigned char d[32];
    mcp__sha256 h;
    mcp__sha256_init(&h);
    mcp__sha256_update(&h, subject, strlen(subject));
    mcp__sha256_final(&h, d);
    static const char hex[] = "0123456789abcdef";
    char digits[33];
    for (int i = 0; i < 16; i++) {
      digits[2 * i] = hex[d[i] >> 4];
      digits[2 * i + 1] = hex[d[i] & 15];
    }
    digits[32] = '\0';
    mcp__fmt(k->caller, sizeof k->caller, "task-budget:caller:%s", digits);
  } else {
    mcp__fmt(k->caller, sizeof k->caller, "task-budget:anonymous");
  }
  k->budgets[0] = (mcp_store_budget){.name = k->caller,
                                     .max_bytes = l->max_bytes_per_caller,
                                     .max_records = l->max_per_caller};
  k->budgets[1] = (mcp_store_budget){.name = BUDGET_TOTAL,
                                     .max_bytes = l->max_bytes_total,
                                     .max_records = l->max_total};
  k->count =
      (mcp_store_count){.bytes = held(t), .budgets = k->budgets, .nbudgets = 2};
}

/* "Server busy: ..." for a new task the store refused (why, the store's,
 * names the budget). Under task_lock. */
static void cluster_busy_text(const mcp__task *t, const char *why, char *msg,
                              size_t n) {
  const mcp_task_limits *l = &t->srv->task_limits;
  bool total = strstr(why, BUDGET_TOTAL) != NULL;
  unsigned tasks = total ? l->max_total : l->max_per_caller;
  mcp__fmt(msg, n,
           "Server busy: a new task would pass the cluster's %s task budget "
           "(%u task%s, %zu bytes), and no finished task there can make "
           "room; try again when one has finished",
           total                   ? "total"
           : subject_of(t) == NULL ? "anonymous callers' joint"
                                   : "per-caller",
           tasks, tasks == 1 ? "" : "s",
           total ? l->max_bytes_total : l->max_bytes_per_caller);
}

typedef struct mirror_put {
  mcp__task *t; /* a reference */
  unsigned long long rev;
  int shown;    /* the status the record put shows */
  bool counted; /* the put counted the record in its budgets: */
  bool first;   /* the first that did (the task's admission) */
  size_t bytes; /* what it counted */
} mirror_put;

/* Whether t's record is put counted now: *k its counting, *first whether
 * this is its admission. Under task_lock. */
static bool counts_locked(mcp__task *t, counting *k, bool *first) {
  if (t->uncounted && !(t->counted && held(t) <= t->counted_bytes))
    return false;
  counting_of_locked(t, k);
  *first = !t->count_tried;
  t->count_tried = true;
  return true;
}

static void mirror_issue(mcp__task *t, mcp_store *st, mcp__buf *text,
                         unsigned long long rev, int shown,
                         unsigned long long ttl_ms, const counting *k,
                         bool first);

/* Cancels the call of a task's home h, of which the caller took a
 * reference under task_lock (given up here). No lock held. */
static void cancel_home(mcp__home *h) {
  pthread_mutex_lock(&h->lock);
  mcp__home_cancel_all_locked(h);
  mcp__home_unref_locked(h);
}

/* Ends t as settled, FAILED (with why) or CANCELLED, unless it ended
 * already, and cancels its call. Returns whether it did. */
static bool settle_here(mcp__task *t, int settled, const char *why) {
  mcp_server *srv = t->srv;
  mcp__home *h = NULL;
  pthread_mutex_lock(&srv->task_lock);
  if (settled >= 0 && !terminal(t->status) && !t->retired) {
    if (settled == FAILED)
      fail_locked(t, why);
    else
      touch_locked(t, CANCELLED);
    h = &t->home;
    atomic_fetch_add(&h->refs, 1);
  }
  pthread_mutex_unlock(&srv->task_lock);
  if (h)
    cancel_home(h);
  return h != NULL;
}

/* Settles t as another node settled its record (status, message). */
static void settled_elsewhere(mcp__task *t, const char *text, size_t len) {
  cJSON *j = cJSON_ParseWithLength(text, len);
  const char *st = cJSON_GetStringValue(mcp__json_member(j, "status"));
  const char *msg = cJSON_GetStringValue(mcp__json_member(j, "message"));
  int settled = st && strcmp(st, "cancelled") == 0 ? CANCELLED
                : st && strcmp(st, "failed") == 0  ? FAILED
                                                   : -1;
  if (settle_here(t, settled, msg ? msg : "failed on another node"))
    mcp__log(t->srv, MCP_LOG_INFO, "task %s was %s by another node", t->id, st);
  cJSON_Delete(j);
}

/* Tells the nodes holding the records a counted put evicted (recs after
 * the first) to forget those tasks too:
 * {"node":N,"task":"evict","id":I,"to":HOLDER}. No lock held. */
static void tell_evicted(mcp_server *srv, const mcp_store_record *recs,
                         unsigned n) {
  for (unsigned i = 1; i < n; i++) {
    const char *key = recs[i].key;
    if (recs[i].holder == NULL || strncmp(key, "task:", 5) != 0)
      continue;
    mcp__buf e = {0};
    mcp__task_event_start(&e, srv, "evict", key + 5, recs[i].holder);
    mcp__buf_putc(&e, '}');
    if (e.err == 0)
      mcp__publish(srv, "a finished task evicted", e.data, e.len);
    mcp__buf_free(&e);
  }
}

static later *forgotten_answer_locked(const mcp__task *t, later *l);

/* The replies waiting for rev or older, taken off t (each the call's own
 * answer instead when t was forgotten). Under task_lock. */
static later *later_due_locked(mcp__task *t) {
  later *due = NULL;
  for (later **p = &t->later; *p;) {
    later *l = *p;
    if (l->rev <= t->kept_rev) {
      *p = l->next;
      l = forgotten_answer_locked(t, l);
      l->next = due;
      due = l;
    } else {
      p = &l->next;
    }
  }
  return due;
}

/* When t was forgotten (it ended before the cluster refused to count it,
 * so no node keeps it) and its call has an answer (it was not cancelled):
 * writes into b that answer to the request whose id is id, its result or
 * error as a 2026-07-28 call that does not become a task gives it (the
 * client never heard of the task, and its result is not lost), and
 * returns true, with *code the error's code (0: a result). Under
 * task_lock. */
static bool forgotten_text_locked(const mcp__task *t, const char *id,
                                  size_t id_len, mcp__buf *b, int *code) {
  mcp__outcome o;
  if (!t->forgotten || t->mode != MCP__TASK_MAYBE || id_len == 0 ||
      outcome_of(t, &o) == NULL)
    return false;
  mcp__wire_task_result(b, id, id_len, NULL, &o);
  *code = o.error ? t->outcome_code : 0;
  return true;
}

/* l, or in its place the call's answer when t was forgotten
 * (forgotten_text_locked); l stays as it is without memory for that.
 * Under task_lock. */
static later *forgotten_answer_locked(const mcp__task *t, later *l) {
  mcp__buf b = {0};
  int code;
  if (!forgotten_text_locked(t, l->msg + l->len, l->id_len, &b, &code))
    return l;
  later *a = b.err ? NULL : mcp__malloc(sizeof *a + b.len);
  if (a) {
    *a = (later){
        .rev = l->rev, .s = l->s, .sink = l->sink, .len = b.len, .code = code};
    memcpy(a->msg, b.data, b.len);
    mcp__free(l); /* its references are a's */
    l = a;
  }
  mcp__buf_free(&b);
  return l;
}

static void later_send(later *l) {
  while (l) {
    later *next = l->next;
    mcp_send_info info = {.kind = l->code ? MCP_SENT_ERROR : MCP_SENT_RESULT,
                          .error_code = l->code};
    mcp__session_send(l->s, l->sink, l->msg, l->len, &info);
    mcp__sink_release(l->sink);
    session_unref(l->s);
    mcp__free(l);
    l = next;
  }
}

/* The time left of t's TTL, at least 1 ms. Under task_lock. */
static unsigned long long ttl_left_locked(const mcp__task *t) {
  long long left = t->created_ms + (long long)t->ttl_ms - mcp__wall_ms();
  return left > 0 ? (unsigned long long)left : 1;
}

/* What a counted put the store refused does (over_budget_locked). */
typedef enum over_budget {
  OVER_KEPT,   /* a task admitted before: kept, its count as it was */
  OVER_FAILS,  /* a new one, running: it fails at once */
  OVER_FORGOT, /* a new one that ended before the answer: forgotten, as a
                  finished task the budget needs the room of */
} over_budget;

/* A counted put of t's record (put) refused for a budget of the cluster
 * (why names it): from now on t's record is put uncounted, so the state
 * refused is put again (unless t is forgotten). A refused admission fails
 * a new task (its busy message into msg), or forgets one that already
 * ended (retired, its waiters into *w): no record of it is kept beyond
 * the budget. Under task_lock. */
static over_budget over_budget_locked(mcp__task *t, const mirror_put *put,
                                      const char *why, char *msg, size_t n,
                                      waiter **w) {
  t->uncounted = true;
  t->rev++; /* the same state, again, uncounted */
  if (!put->first || t->counted || t->retired)
    return OVER_KEPT;
  if (terminal(t->status)) {
    t->forgotten = true;
    retire_locked(t, w);
    return OVER_FORGOT;
  }
  cluster_busy_text(t, why, msg, n);
  return OVER_FAILS;
}

/* What became of a task whose record the store evicted. */
typedef enum evicted_here {
  EVICTED_KNOWN,   /* forgotten here already */
  EVICTED_ENDED,   /* it had ended: forgotten, as a finished task this
                      node evicts */
  EVICTED_RUNNING, /* it still ran here: forgotten, its call cancelled */
} evicted_here;

/* t's record was evicted: it is forgotten here too (retired, its waiters
 * into *w for evicted_finish: its tasks/result waiters hear that it
 * expired). The store evicts final records only: a task that still runs
 * here was settled by another node (cancelled, or failed when this one
 * seemed lost) that this node has not heard of, and the cluster has
 * forgotten that too; its call is cancelled as its home closes. Under
 * task_lock. */
static evicted_here evicted_locked(mcp__task *t, waiter **w) {
  if (t->retired)
    return EVICTED_KNOWN;
  evicted_here e = terminal(t->status) ? EVICTED_ENDED : EVICTED_RUNNING;
  retire_locked(t, w);
  return e;
}

/* After evicted_locked, without the lock. */
static void evicted_finish(mcp__task *t, evicted_here e, waiter *w) {
  if (e == EVICTED_KNOWN)
    return;
  mcp__log(t->srv, MCP_LOG_INFO, "task %s forgotten: %s", t->id,
           e == EVICTED_ENDED
               ? "the cluster's task budget needed its room"
               : "another node had settled it, and the cluster's task budget "
                 "then needed its room; its call is cancelled");
  retire_finish(t, w);
}

/* The store's answer to put, of t's record (the put's reference to t is
 * taken over). */
static void mirror_answered(mcp__task *t, const mirror_put *put, int rc,
                            const mcp_store_record *recs, unsigned n,
                            const char *why) {
  mcp_server *srv = t->srv;
  /* Refused by one of its budgets (a store's other limits, such as a full
   * table, are failures to keep it as any other). */
  bool over = rc == MCP_ELIMIT && put->counted && strstr(why, "task-budget:");
  if (rc != 0 && !over)
    mcp__log(srv, MCP_LOG_WARNING,
             "task %s: its record was not kept in the store (%s): other "
             "nodes do not see its latest state",
             t->id, why);
  bool written = rc == 0 && n >= 1 && recs[0].written;
  bool refused = rc == 0 && n >= 1 && !recs[0].written && recs[0].value;
  /* Its record was evicted (the store evicts final ones only): */
  bool evicted = rc == 0 && n >= 1 && !recs[0].written && !recs[0].value;
  /* A record kept ended, or waiting for input: the tasks/result requests
   * that wait for it on other nodes read it again. */
  bool stored = written && put->shown >= INPUT_REQUIRED;
  mcp_store *st = mcp__records(srv);
  mcp__buf text = {0};
  int shown = WORKING;
  unsigned long long rev = 0, ttl = 0;
  counting k;
  char busy[320];
  waiter *forgot = NULL;
  pthread_mutex_lock(&srv->task_lock);
  over_budget o =
      over ? over_budget_locked(t, put, why, busy, sizeof busy, &forgot)
           : OVER_KEPT;
  bool fails = over && o == OVER_FAILS;
  evicted_here gone = evicted ? evicted_locked(t, &forgot) : EVICTED_KNOWN;
  if (written && put->counted) {
    t->counted = true;
    t->counted_bytes = put->bytes;
  }
  if (put->rev > t->kept_rev && !over)
    t->kept_rev = put->rev; /* refused: its replies wait for the next */
  bool again = !refused && st && t->rev > put->rev && !t->retired;
  if (!again)
    t->kept_rev = t->rev; /* nothing newer will be put: nobody waits */
  later *due = later_due_locked(t);
  mcp__home *h = NULL; /* a failing task's, whose call is cancelled */
  if (fails) {
    fail_locked(t, busy);
    h = &t->home;
    atomic_fetch_add(&h->refs, 1);
  }
  bool counted = false, first = false;
  if (again) {
    record_text_locked(&text, t);
    rev = t->rev;
    shown = status_of(t);
    ttl = ttl_left_locked(t);
    counted = counts_locked(t, &k, &first);
  } else {
    t->mirroring = false;
  }
  pthread_mutex_unlock(&srv->task_lock);
  if (over) {
    static const char *const what[] = {
        "kept past the cluster's task budget, counted as before",
        "refused by the cluster's task budget",
        "forgotten: it ended before the cluster's task budget refused it"};
    mcp__log(srv, MCP_LOG_INFO, "task %s %s (%s)", t->id, what[o], why);
  }
  if (o == OVER_FORGOT)
    retire_finish(t, forgot);
  evicted_finish(t, gone, forgot);
  if (h)
    cancel_home(h);
  later_send(due);
  if (written)
    tell_evicted(srv, recs, n);
  if (stored)
    mcp__task_stored(srv, t->id, status_names[put->shown]);
  if (refused)
    settled_elsewhere(t, recs[0].value, recs[0].len);
  if (again) /* takes the reference */
    mirror_issue(t, st, &text, rev, shown, ttl, counted ? &k : NULL, first);
  else
    mcp__task_unref(t);
}

static void mirror_done(void *arg, int rc, const mcp_store_record *recs,
                        unsigned n, bool more, const char *why) {
  (void)more;
  mirror_put m = *(mirror_put *)arg;
  mcp__free(arg);
  mirror_answered(m.t, &m, rc, recs, n, why);
}

/* Puts text as t's record; the put holds a reference to t (taken by the
 * caller). Frees text. */
static void mirror_issue(mcp__task *t, mcp_store *st, mcp__buf *text,
                         unsigned long long rev, int shown,
                         unsigned long long ttl_ms, const counting *k,
                         bool first) {
  char key[48];
  mcp__fmt(key, sizeof key, "task:%s", t->id);
  /* text was copied under task_lock while t was not retired: its owner's
   * record, in its owner's index. */
  char index[48];
  mcp__task_index(index, sizeof index, owner_subject(t));
  mirror_put *m = mcp__malloc(sizeof *m);
  int rc = MCP_ENOMEM;
  if (m && text->err == 0) {
    *m = (mirror_put){t,         rev,   shown,
                      k != NULL, first, k ? (size_t)k->count.bytes : 0};
    mcp_store_record rec = {.key = key,
                            .value = text->data,
                            .len = text->len,
                            .holder = t->srv->node,
                            .index = index,
                            .order = (unsigned long long)t->created_ms,
                            .ttl_ms = ttl_ms,
                            .final = terminal(shown),
                            .count = k ? &k->count : NULL};
    rc = mcp_store_put(st, &rec, mirror_done, m);
  }
  mcp__buf_free(text);
  if (rc != 0) {
    mcp__free(m);
    mirror_put failed = {t, rev, shown, false, false, 0};
    mirror_answered(t, &failed, rc, NULL, 0, mcp_strerror(rc));
  }
}

/* Keeps t's state in the store as its record (when the server has one
 * that keeps records). No lock held. Returns the revision asked for (0:
 * none). */
static unsigned long long mirror(mcp__task *t) {
  mcp_store *st = mcp__records(t->srv);
  if (st == NULL)
    return 0;
  mcp__buf text = {0};
  pthread_mutex_lock(&t->srv->task_lock);
  if (!atomic_load(&t->published) || t->retired) {
    pthread_mutex_unlock(&t->srv->task_lock);
    return 0;
  }
  unsigned long long rev = ++t->rev;
  bool issue = !t->mirroring;
  int shown = status_of(t);
  unsigned long long ttl = ttl_left_locked(t);
  counting k;
  bool counted = false, first = false;
  if (issue) {
    t->mirroring = true;
    atomic_fetch_add(&t->refs, 1);
    record_text_locked(&text, t);
    counted = counts_locked(t, &k, &first);
  }
  pthread_mutex_unlock(&t->srv->task_lock);
  if (issue)
    mirror_issue(t, st, &text, rev, shown, ttl, counted ? &k : NULL, first);
  return rev;
}

/* Sends b (a whole reply to the request whose id is id, taken) to s's
 * sink once the store keeps t's record of revision rev or newer, or now
 * when it does already or rev is 0. */
static void send_when_kept(mcp__task *t, unsigned long long rev, mcp_session *s,
                           mcp__sink *sink, mcp__buf *b,
                           const mcp_send_info *info, const char *id,
                           size_t id_len) {
  size_t n = id ? id_len : 0;
  later *l = rev && b->err == 0 ? mcp__malloc(sizeof *l + b->len + n) : NULL;
  if (l) {
    *l = (later){.rev = rev, .s = s, .sink = sink, .len = b->len, .id_len = n};
    memcpy(l->msg, b->data, b->len);
    if (n)
      memcpy(l->msg + b->len, id, n);
    session_ref(s);
    mcp__sink_ref(sink);
    pthread_mutex_lock(&t->srv->task_lock);
    bool kept = t->kept_rev >= rev || t->retired;
    if (!kept) {
      l->next = t->later;
      t->later = l;
    } else {
      l = forgotten_answer_locked(t, l);
    }
    pthread_mutex_unlock(&t->srv->task_lock);
    if (kept)
      later_send(l);
  } else if (b->err == 0) {
    mcp__session_send(s, sink, b->data, b->len, info);
  }
  mcp__buf_free(b);
}

/* notifications/tasks/status (2025-11-25) of t as it is now. Under
 * task_lock. */
static void status_note(mcp__buf *b, const mcp__task *t) {
  mcp__task_facts f = facts_of(t);
  mcp__wire_status_note(b, &f);
}

/* Sends text to t's origin session (its callback: the standalone stream),
 * which the record keeps alive. No task_lock held. */
static void to_origin(const mcp__task *t, mcp__buf *b,
                      const mcp_send_info *info) {
  /* Only 2025-11-25 tasks send there, and they keep their origin. */
  if (b->err == 0 && b->len && t->origin)
    mcp__session_send(t->origin, NULL, b->data, b->len, info);
  mcp__buf_free(b);
}

/* The reply to a 2025-11-25 tasks/result of t, for request id: the
 * request's own reply (the result with the related-task _meta, or the
 * error), or an error for a task that has none. Under task_lock. */
static void result_reply(mcp__buf *b, const mcp__task *t, const char *id,
                         size_t id_len) {
  mcp__outcome o;
  mcp__wire_task_result(b, id, id_len, t->id,
                        t->status == CANCELLED ? NULL : outcome_of(t, &o));
}

static void answer_waiter(waiter *w, const char *msg, size_t len) {
  mcp_send_info info = {.kind = MCP_SENT_RESULT};
  mcp__session_send(w->s, w->sink, msg, len, &info);
}

/* ---- the call's sink ----------------------------------------------------- */

/* Keeps o (the call's outcome) as t's: completed with the result, or
 * failed with the error; in 2025-11-25 a tool result whose isError is true
 * is failed too. Under task_lock. */
static void settle_locked(mcp__task *t, const mcp__outcome *o) {
  if (terminal(t->status) || t->retired)
    return; /* cancelled first: it stays cancelled; forgotten: nobody
               reads it */
  const char *members = o->members;
  size_t len = o->len, n = len + 2; /* the object's bytes */
  bool error = o->error;
  int code = o->code;
  /* The room for an error is kept in every record: only more needs it. */
  char why[320];
  if (!grow_locked(t, n > FAIL_ROOM ? n - FAIL_ROOM : 0, "result", n,
                   &t->evicted, why, sizeof why)) {
    mcp__utf8_trim(why);
    fail_locked(t, why);
    return;
  }
  if ((t->outcome = mcp__malloc(len ? len : 1)) == NULL) {
    /* No memory to keep it: the task fails rather than end without one. */
    members = INTERNAL_ERROR;
    len = sizeof INTERNAL_ERROR - 1;
    error = true;
    code = MCP__RPC_INTERNAL_ERROR;
    t->outcome = mcp__malloc(len);
  }
  if (t->outcome)
    memcpy(t->outcome, members, len);
  t->outcome_len = t->outcome ? len : 0;
  t->outcome_error = error;
  t->outcome_code = error ? code : 0;
  bool failed = error || (t->mode == MCP__TASK_NOW && o->is_error);
  touch_locked(t, failed ? FAILED : COMPLETED);
}

static void owner_settled_locked(void *owner_data, const mcp__outcome *o) {
  mcp__task *t = owner_data;
  pthread_mutex_lock(&t->srv->task_lock);
  if (atomic_load(&t->published))
    settle_locked(t, o);
  pthread_mutex_unlock(&t->srv->task_lock);
}

static const char *owner_related(void *owner_data) {
  const mcp__task *t = owner_data;
  return t->mode == MCP__TASK_NOW && atomic_load(&t->published) ? t->id : NULL;
}

/* The call's sink: nothing reaches it. The call's outcome comes to the
 * record as facts (owner_settled_locked) and its notifications through
 * owner_notify; the sink stays the call's hold on the record (taken with
 * mcp__task_sink). */
static int sink_send(const char *msg, size_t len, const mcp_send_info *info,
                     void *user_data) {
  (void)msg;
  (void)len;
  (void)info;
  (void)user_data;
  return 0;
}

/* The owner interface's notify: a notification of t's call (progress, log,
 * with the related-task _meta already where it belongs). Before the call
 * is a task, the request that started it answers: its messages go there.
 * Once a task, they reach a 2025-11-25 client on its session, and none a
 * 2026-07-28 one, whose tasks have no such stream. No lock held: the
 * session and sink they go to are pinned under task_lock and sent to after
 * it, in the lock order. */
static void owner_notify(void *owner_data, const char *msg, size_t len) {
  mcp__task *t = owner_data;
  mcp_server *srv = t->srv;
  mcp_session *to = NULL;
  mcp__sink *k = NULL;
  pthread_mutex_lock(&srv->task_lock);
  bool published = atomic_load(&t->published);
  if (!t->retired && t->origin && (!published || t->mode == MCP__TASK_NOW)) {
    to = t->origin;
    atomic_fetch_add(&to->home.refs, 1); /* alive: the record holds it */
    k = published ? NULL : t->origin_sink;
    mcp__sink_ref(k);
  }
  pthread_mutex_unlock(&srv->task_lock);
  if (to == NULL)
    return;
  mcp__session_send(to, k, msg, len, &mcp__sent_notification);
  mcp__sink_release(k);
  session_unref(to);
}

/* ---- starting ------------------------------------------------------------ */

/* Answers r with t's CreateTaskResult: flat with resultType "task" in
 * 2026-07-28, a task member in 2025-11-25. */
static void reply_created(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__task *t) {
  /* Its record first: so that whichever node the client asks next finds
   * the task (in 2026-07-28, where the next request may go anywhere, the
   * reply waits for the store; a 2025-11-25 session stays on its node). */
  unsigned long long rev = mirror(t);
  mcp__buf body = {0}, answer = {0};
  int code = 0;
  pthread_mutex_lock(&s->home.srv->task_lock);
  bool forgot =
      forgotten_text_locked(t, r->m->id, r->m->id_len, &answer, &code);
  mcp__task_facts f = facts_of(t);
  if (!forgot)
    mcp__wire_created(&body, &f, r->modern);
  pthread_mutex_unlock(&s->home.srv->task_lock);
  if (forgot) { /* the store answered at once, forgetting it */
    ctx->facts = (mcp_send_info){
        .kind = code ? MCP_SENT_ERROR : MCP_SENT_RESULT, .error_code = code};
    mcp__reply_buf(s, ctx, &answer);
    return;
  }
  if (rev == 0 || !r->modern || ctx->batch) {
    mcp__reply_result_as(s, ctx, r, "task", &body);
    return;
  }
  mcp__buf b = {0};
  mcp__result_text(s->home.srv, r, &body, "task", false, &b);
  mcp_send_info info = {.kind = MCP_SENT_RESULT};
  send_when_kept(t, rev, s, ctx->sink, &b, &info, r->m->id, r->m->id_len);
  ctx->facts = (mcp_send_info){0};
}

void mcp__task_start(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     mcp_call *c, mcp__task *t) {
  if (t->mode == MCP__TASK_NOW) {
    /* The client asked for a task: it is one before the handler runs, and
     * the client hears so first. */
    mcp__call_become_task(c);
    reply_created(s, ctx, r, t);
    mcp__call_run(c, NULL, NULL);
    mcp__task_unref(t);
    return;
  }
  /* The handler decides: an answer now is the request's own reply; a call
   * that became a task is answered with the task. */
  mcp__buf out = {0};
  mcp__call_run(c, &out, &ctx->facts);
  if (mcp__task_published(t)) {
    mcp__buf_free(&out);
    ctx->facts = (mcp_send_info){0};
    reply_created(s, ctx, r, t);
  } else if (out.len || out.err) {
    mcp__reply_buf(s, ctx, &out);
  } else {
    mcp__buf_free(&out);
  }
  /* The request is answered: nothing goes back to it any more, and a
   * 2026-07-28 task sends nothing to the session that made it. */
  pthread_mutex_lock(&s->home.srv->task_lock);
  mcp__sink *k = t->origin_sink;
  mcp_session *o = t->origin;
  t->origin_sink = NULL;
  t->origin = NULL;
  bool published = atomic_load(&t->published);
  pthread_mutex_unlock(&s->home.srv->task_lock);
  mcp__sink_release(k);
  session_unref(o);
  /* A call that did not become a task is over (its answer was given), and
   * so is its record. */
  if (!published)
    retire(t);
  mcp__task_unref(t);
}

/* ---- input ----------------------------------------------------------------
 */

/* A wire key for the handler's key, unique over t's life: the key itself
 * the first time, then key.2, key.3 and so on. Under task_lock. */
static const char *wire_key(mcp__task *t, const char *key, char *buf,
                            size_t n) {
  mcp__fmt(buf, n, "%s", key);
  for (unsigned i = 2; mcp__json_member(t->used, buf); i++)
    mcp__fmt(buf, n, "%s.%u", key, i);
  return cJSON_AddTrueToObject(t->used, buf) ? buf : NULL;
}

/* A 2025-11-25 input request of entry e under id (task_wire.c). */
static void request_text(mcp__buf *b, const mcp__task *t, const cJSON *e,
                         long long id) {
  mcp__wire_request(b, t->id, mcp__json_member(e, "method"),
                    mcp__json_member(e, "params"), id);
}

/* The input requests t waits for, as sent to its origin (each with the id
 * it was sent under), one text after another, NUL-separated; their count
 * in *n. Under task_lock. */
static void pending_texts(mcp__buf *b, const mcp__task *t, size_t *n) {
  *n = 0;
  for (const cJSON *e = t->pending->child; e; e = e->next) {
    const cJSON *id = mcp__json_member(e, "id");
    if (!cJSON_IsNumber(id))
      continue;
    request_text(b, t, e, (long long)id->valuedouble);
    mcp__buf_putc(b, '\0');
    (*n)++;
  }
}

/* Sends n NUL-separated requests of text to s, on sink k (NULL: the
 * session's callback). No lock held. */
static void send_requests(mcp_session *s, mcp__sink *k, const mcp__buf *text,
                          size_t n) {
  for (size_t i = 0, at = 0; i < n && text->err == 0; i++) {
    size_t len = strlen(text->data + at);
    mcp__session_send(s, k, text->data + at, len, &mcp__sent_request);
    at += len + 1;
  }
}

/* The waiter that input requests go to (a tasks/result on the session
 * that made the task, whose answers then come back there), or NULL.
 * Under task_lock. */
static waiter *origin_waiter(const mcp__task *t) {
  for (waiter *w = t->waiters; w; w = w->next)
    if (w->s == t->origin)
      return w;
  return NULL;
}

/* The round's requests (c->requests) under wire keys unique over t's
 * life, each with its handler's key, or NULL (no memory). Under
 * task_lock. */
static cJSON *keyed_locked(mcp__task *t, const cJSON *requests) {
  cJSON *fresh = cJSON_CreateObject();
  for (const cJSON *e = requests->child; e && fresh; e = e->next) {
    char buf[96];
    const char *wire = wire_key(t, e->string, buf, sizeof buf);
    cJSON *entry = cJSON_Duplicate(e, 1);
    if (wire == NULL || entry == NULL ||
        !cJSON_AddStringToObject(entry, "key", e->string) ||
        !cJSON_AddItemToObject(fresh, wire, entry)) {
      cJSON_Delete(entry);
      cJSON_Delete(fresh);
      fresh = NULL;
    }
  }
  return fresh;
}

/* Makes room in the budgets for fresh, the round's requests, to join what
 * pending and used hold (*now: the bytes they will hold); fails t when
 * there is none. Returns 0 or MCP_ELIMIT. Under task_lock. */
static int room_for_round_locked(mcp__task *t, const cJSON *fresh,
                                 mcp__task **evicted, size_t *now) {
  size_t asked = json_bytes(fresh->child);
  *now = asked + json_bytes(t->pending->child) + json_bytes(t->used->child);
  char why[320];
  if (*now > t->pending_bytes &&
      !grow_locked(t, *now - t->pending_bytes, "input requests", asked, evicted,
                   why, sizeof why)) {
    mcp__utf8_trim(why);
    fail_locked(t, why);
    return MCP_ELIMIT;
  }
  return 0;
}

/* Makes fresh t's outstanding requests (they take now bytes) and parks c
 * for their answers; in 2025-11-25 *note is the status note and *dest the
 * sink of a tasks/result waiting on the origin (a reference), where the
 * requests go. Nothing can fail here. Under c's home's lock and
 * task_lock. */
static void adopt_round_locked(mcp__task *t, mcp_call *c, cJSON *fresh,
                               size_t now, mcp__buf *note, mcp__sink **dest) {
  t->pending_bytes = now;
  /* Moved with their keys, which needs no allocation (an object's
   * members are a list like an array's). */
  while (fresh->child) {
    cJSON *e = cJSON_DetachItemViaPointer(fresh, fresh->child);
    cJSON_AddItemToArray(t->pending, e);
  }
  cJSON_Delete(fresh);
  cJSON_Delete(c->requests);
  c->requests = NULL;
  touch_locked(t, WORKING); /* input_required: it has requests out */
  if (t->mode == MCP__TASK_NOW && t->origin) {
    status_note(note, t);
    waiter *w = origin_waiter(t);
    if (w && w->sink) {
      *dest = w->sink;
      mcp__sink_ref(*dest);
    }
  }
  mcp__call_park_locked(c);
}

/* The owner interface's asks: a round of t's call asked for input. Its
 * requests become the task's (input_required), numbered and written by
 * input.c's rounds and sent to the client in 2025-11-25; c is parked
 * until every one is answered. */
static int owner_asks(void *owner_data, mcp_call *c) {
  mcp__task *t = owner_data;
  mcp__home *h = c->home;
  mcp_server *srv = t->srv;
  mcp__buf reqs = {0}, note = {0};
  size_t nreqs = 0;
  mcp__sink *dest = NULL;
  mcp__task *evicted = NULL;
  pthread_mutex_lock(&srv->task_lock);
  bool over = terminal(t->status) || t->retired;
  cJSON *fresh = over ? NULL : keyed_locked(t, c->requests);
  pthread_mutex_unlock(&srv->task_lock);
  int rc = over || mcp_call_cancelled(c) ? MCP_ECANCELED
           : fresh                       ? 0
                                         : MCP_ENOMEM;
  if (rc == 0 && t->mode == MCP__TASK_NOW && t->origin) {
    /* Sent as real requests on the session that made the task, numbered
     * by it, so its client's answers come back there; with no other lock
     * held (the lock order). */
    pthread_mutex_lock(&t->origin->home.lock);
    rc =
        mcp__input_number_locked(&t->origin->home, fresh, t->id, &reqs, &nreqs);
    pthread_mutex_unlock(&t->origin->home.lock);
  }
  pthread_mutex_lock(&h->lock);
  pthread_mutex_lock(&srv->task_lock);
  /* Checked again where it counts: a call cancelled now is not parked. */
  if (rc == 0 && (mcp_call_cancelled(c) || terminal(t->status) || t->retired))
    rc = MCP_ECANCELED;
  size_t now = 0;
  if (rc == 0)
    rc = room_for_round_locked(t, fresh, &evicted, &now);
  if (rc == 0)
    adopt_round_locked(t, c, fresh, now, &note, &dest);
  else
    cJSON_Delete(fresh);
  pthread_mutex_unlock(&srv->task_lock);
  pthread_mutex_unlock(&h->lock);
  finish_evicted(evicted);
  if (rc) {
    mcp__buf_free(&reqs);
    return rc;
  }
  /* Outside the locks: the call is parked and its record keeps the origin.
   * The client hears the task wants input, then the requests: a tasks/result
   * waiting on the same session carries them; otherwise they go where the
   * session's own messages go. Only a 2025-11-25 task has requests to
   * send, and its origin is fixed; a 2026-07-28 one's is cleared under
   * task_lock once its call became the task, so it is not read here. */
  to_origin(t, &note, &mcp__sent_notification);
  if (nreqs)
    send_requests(t->origin, dest, &reqs, nreqs);
  mcp__buf_free(&reqs);
  mcp__sink_release(dest);
  tell_listeners(t);
  return 0;
}

/* Runs t's next round once every input it asked for is in: the call,
 * parked, is taken out of waiting and run here with the answers. No lock
 * held. */
static void resume(mcp__task *t) {
  mcp_server *srv = t->srv;
  mcp__buf note = {0};
  mcp__home *h = NULL;
  pthread_mutex_lock(&srv->task_lock);
  if (!t->retired) {
    /* Pinned under the lock: retiring closes the home only after taking
     * the record out, under the same lock. */
    h = &t->home;
    atomic_fetch_add(&h->refs, 1);
  }
  if (t->mode == MCP__TASK_NOW && status_of(t) == WORKING)
    status_note(&note, t);
  pthread_mutex_unlock(&srv->task_lock);
  to_origin(t, &note, &mcp__sent_notification);
  tell_listeners(t);
  if (h == NULL)
    return;
  pthread_mutex_lock(&h->lock);
  /* The home's one call, if it is still there. */
  mcp_call *c = mcp__list_empty(&h->calls)
                    ? NULL
                    : mcp__container_of(h->calls.next, mcp_call, link);
  if (c && !mcp__call_unpark_locked(c))
    c = NULL; /* not waiting (cancelled meanwhile): nothing to run */
  mcp__home_unref_locked(h);
  if (c == NULL)
    return;
  pthread_mutex_lock(&srv->task_lock);
  cJSON_Delete(c->inputs);
  c->inputs = t->answers;
  t->answers = NULL;
  t->call_inputs = t->answers_bytes; /* the call's now, for its round */
  t->answers_bytes = 0;
  bool lost = t->lost_input;
  t->lost_input = false;
  pthread_mutex_unlock(&srv->task_lock);
  if (lost)
    c->lost_input = true; /* the call fails rather than ask the user again */
  mcp__call_run(c, NULL, NULL);
}

/* Keeps answer for the entry e of t's pending requests (by the handler's
 * key) and takes e out. Returns whether every request is answered now.
 * Under task_lock. */
static bool answered_locked(mcp__task *t, cJSON *e, const cJSON *answer) {
  const char *key = cJSON_GetStringValue(mcp__json_member(e, "key"));
  if (answer && key) {
    cJSON *copy = cJSON_Duplicate(answer, 1);
    if (t->answers == NULL)
      t->answers = cJSON_CreateObject();
    if (copy == NULL || t->answers == NULL ||
        !cJSON_AddItemToObject(t->answers, key, copy)) {
      cJSON_Delete(copy);
      t->lost_input = true;
    } else {
      t->answers_bytes += tree_bytes(copy);
    }
  }
  size_t gone = tree_bytes(e);
  t->pending_bytes -= gone < t->pending_bytes ? gone : t->pending_bytes;
  cJSON_Delete(cJSON_DetachItemViaPointer(t->pending, e));
  if (t->pending->child != NULL)
    return false;
  touch_locked(t, WORKING);
  return true;
}

bool mcp__task_response(mcp__home *h, const mcp__msg *m, const cJSON *node) {
  long long id;
  if (m->id_node == NULL || !mcp__json_integer(m->id_node, &id, NULL))
    return false;
  mcp_server *srv = h->srv;
  mcp__task *found = NULL, *evicted = NULL;
  bool ready = false;
  char busy[320] = "";
  pthread_mutex_lock(&srv->task_lock);
  mcp__list_each(link, &srv->tasks) {
    mcp__task *t = task_at(link);
    if (found)
      break;
    if (t->origin == NULL || &t->origin->home != h ||
        status_of(t) != INPUT_REQUIRED)
      continue;
    for (cJSON *e = t->pending->child; e; e = e->next) {
      if (!mcp__input_sent_as(e, id))
        continue;
      const cJSON *result = mcp__input_answer(e, node);
      /* Nor is one the budgets have no room for (kept until the next
       * round takes it); there is no request to refuse. */
      size_t add = tree_bytes(result);
      if (result &&
          !grow_locked(t, add, "answer", add, &evicted, busy, sizeof busy))
        result = NULL;
      found = t;
      ready = answered_locked(t, e, result);
      if (ready)
        atomic_fetch_add(&t->refs, 1);
      break;
    }
  }
  pthread_mutex_unlock(&srv->task_lock);
  finish_evicted(evicted);
  if (busy[0]) {
    mcp__utf8_trim(busy);
    mcp__log(srv, MCP_LOG_WARNING, "%s; taken as no answer", busy);
  }
  if (ready) {
    resume(found);
    mcp__task_unref(found);
  }
  return found != NULL;
}

/* ---- the end of the call ------------------------------------------------- */

static void owner_released(void *owner_data) {
  mcp__task *t = owner_data;
  mcp_server *srv = t->srv;
  mcp__buf note = {0};
  waiter *w = NULL;
  waiter *gone = NULL;
  pthread_mutex_lock(&srv->task_lock);
  t->ended = true;
  /* The call, and its arguments and answers with it, are gone. */
  t->call_args = t->call_inputs = 0;
  /* A record whose call ended before it became a task (refused before
   * its handler ran, say) holds its room no longer. */
  bool unlisted = !atomic_load(&t->published) && !t->retired;
  if (unlisted)
    retire_locked(t, &gone); /* the call's reference keeps it */
  if (atomic_load(&t->published) && !t->retired) {
    if (!terminal(t->status)) {
      /* Its call is gone without a result (it could not be kept): the
       * task fails rather than stay working forever. */
      settle_locked(t, &(mcp__outcome){.error = true,
                                       .code = MCP__RPC_INTERNAL_ERROR,
                                       .members = INTERNAL_ERROR,
                                       .len = sizeof INTERNAL_ERROR - 1});
    }
    if (t->mode == MCP__TASK_NOW && t->status != CANCELLED) {
      status_note(&note, t);
      w = t->waiters;
      t->waiters = NULL;
    }
  }
  /* The replies to those waiting, built under the lock from the outcome. */
  mcp__buf replies = {0};
  for (waiter *x = w; x; x = x->next) {
    result_reply(&replies, t, x->id, x->id_len);
    mcp__buf_putc(&replies, '\0');
  }
  mcp__task *evicted = t->evicted;
  t->evicted = NULL;
  pthread_mutex_unlock(&srv->task_lock);
  finish_evicted(evicted);
  if (unlisted)
    retire_finish(t, gone);
  size_t at = 0;
  for (waiter *x = w; x && replies.err == 0; x = x->next) {
    size_t n = strlen(replies.data + at);
    answer_waiter(x, replies.data + at, n);
    at += n + 1;
  }
  mcp__buf_free(&replies);
  free_waiters(w);
  to_origin(t, &note, &mcp__sent_notification);
  tell_listeners(t);
  mcp__task_unref(t); /* the call's */
}

/* ---- what the tasks methods ask of a record ------------------------------
 * lib/methods/tasks.c parses and answers the tasks methods; what they read
 * or change of a record happens here, under task_lock. */

mcp__task *mcp__task_find(mcp_server *srv, const char *id,
                          const mcp_principal *caller) {
  mcp__task *found = NULL;
  pthread_mutex_lock(&srv->task_lock);
  mcp__list_each(link, &srv->tasks) {
    mcp__task *t = task_at(link);
    if (atomic_load(&t->published) && strcmp(t->id, id) == 0 &&
        same_subject(subject_of(t), caller->subject)) {
      found = t;
      atomic_fetch_add(&t->refs, 1);
      break;
    }
  }
  pthread_mutex_unlock(&srv->task_lock);
  return found;
}

mcp__tool *mcp__task_tool(const mcp__task *t) { return t->tool; }

struct cJSON *mcp__task_args(const mcp__task *t) {
  return t->args;
}

void mcp__task_describe(mcp__task *t, bool detailed, mcp__buf *b) {
  pthread_mutex_lock(&t->srv->task_lock);
  if (detailed)
    put_detail(b, t);
  else
    put_task(b, t, false);
  pthread_mutex_unlock(&t->srv->task_lock);
}

int mcp__task_update(mcp__task *t, const cJSON *answers, char *why,
                     size_t whylen, bool *ready) {
  char busy[320] = "";
  mcp__task *evicted = NULL;
  *ready = false;
  why[0] = '\0';
  pthread_mutex_lock(&t->srv->task_lock);
  /* Checked whole first, so a bad answer changes nothing. Keys that are
   * not outstanding (never issued, answered already) are ignored. */
  for (const cJSON *a = answers->child; a && !why[0]; a = a->next) {
    const cJSON *e = status_of(t) == INPUT_REQUIRED
                         ? mcp__json_member(t->pending, a->string)
                         : NULL;
    const char *method = cJSON_GetStringValue(mcp__json_member(e, "method"));
    const char *problem = method ? mcp__input_problem(method, a) : NULL;
    if (problem) {
      /* At most 160 bytes, as ever. */
      mcp__fmt(why, whylen < 160 ? whylen : 160, "inputResponses[\"%.64s\"] %s",
               a->string, problem);
      mcp__utf8_trim(why);
    }
  }
  /* Kept until the next round takes them: they must fit the budgets. */
  size_t add = 0;
  for (const cJSON *a = why[0] ? NULL : answers->child; a; a = a->next)
    if (status_of(t) == INPUT_REQUIRED &&
        mcp__json_member(t->pending, a->string))
      add += tree_bytes(a);
  if (!why[0] &&
      !grow_locked(t, add, "answers", add, &evicted, busy, sizeof busy))
    mcp__utf8_trim(busy);
  for (const cJSON *a = why[0] || busy[0] ? NULL : answers->child; a && !*ready;
       a = a->next) {
    cJSON *e = status_of(t) == INPUT_REQUIRED
                   ? (cJSON *)mcp__json_member(t->pending, a->string)
                   : NULL;
    if (e)
      *ready = answered_locked(t, e, a);
  }
  pthread_mutex_unlock(&t->srv->task_lock);
  finish_evicted(evicted);
  if (why[0])
    return MCP_EINVAL;
  if (busy[0]) {
    mcp__fmt(why, whylen, "%s", busy);
    return MCP_ELIMIT;
  }
  return 0;
}

void mcp__task_resume(mcp__task *t) { resume(t); }

void mcp__task_cancel(mcp__task *t, bool legacy_body,
                      void (*reply)(const char *was, bool ended, mcp__buf *b,
                                    void *arg),
                      void *arg) {
  mcp_server *srv = t->srv;
  mcp__buf b = {0}, note = {0}, cancels = {0};
  mcp__home *h = NULL;
  waiter *w = NULL;
  pthread_mutex_lock(&srv->task_lock);
  int was = t->status;
  if (!terminal(was)) {
    touch_locked(t, CANCELLED);
    /* The client's outstanding requests are withdrawn (2025-11-25). */
    mcp__input_withdraw(&cancels, t->pending, "the task was cancelled");
    while (t->pending->child)
      cJSON_Delete(cJSON_DetachItemViaPointer(t->pending, t->pending->child));
    if (!t->retired) {
      h = &t->home; /* pinned: retiring closes it after this lock */
      atomic_fetch_add(&h->refs, 1);
    }
    if (t->mode == MCP__TASK_NOW) {
      status_note(&note, t);
      w = t->waiters;
      t->waiters = NULL;
    }
    if (legacy_body)
      put_task(&b, t, false);
  }
  pthread_mutex_unlock(&srv->task_lock);
  /* The request is answered first; then the call, the client's input
   * requests, the waiters and the listeners hear of the end. */
  reply(status_names[was], terminal(was), &b, arg);
  if (h) {
    /* Cooperative: the handler sees mcp_call_cancelled; a call waiting for
     * input ends here. Its result, if it still comes, is not kept. */
    pthread_mutex_lock(&h->lock);
    mcp__home_cancel_all_locked(h);
    mcp__home_unref_locked(h);
  }
  for (size_t at = 0; at < cancels.len && cancels.err == 0;) {
    size_t n = strlen(cancels.data + at);
    if (t->origin)
      mcp__session_send(t->origin, NULL, cancels.data + at, n,
                        &mcp__sent_notification);
    at += n + 1;
  }
  mcp__buf_free(&cancels);
  for (waiter *x = w; x; x = x->next) {
    mcp__buf e = {0};
    mcp__rpc_error(&e, x->id, x->id_len, MCP__ID_OMIT, MCP__RPC_INVALID_PARAMS,
                   "Invalid params: the task was cancelled and has no result",
                   NULL);
    if (e.err == 0)
      answer_waiter(x, e.data, e.len);
    mcp__buf_free(&e);
  }
  free_waiters(w);
  to_origin(t, &note, &mcp__sent_notification);
  if (!terminal(was))
    tell_listeners(t);
}

/* Registers request id of s (its sink held) to be answered when t ends.
 * Under task_lock. Returns the waiter, or NULL (no memory). */
static waiter *wait_locked(mcp__task *t, mcp_session *s, mcp__sink *sink,
                           const char *id, size_t id_len) {
  waiter *w = mcp__calloc(1, sizeof *w + id_len + 1);
  if (w == NULL)
    return NULL;
  w->id = (char *)(w + 1);
  memcpy(w->id, id, id_len);
  w->id_len = id_len;
  w->s = s;
  atomic_fetch_add(&s->home.refs, 1); /* the session is alive: its call runs */
  w->sink = sink;
  mcp__sink_ref(w->sink);
  w->next = t->waiters;
  t->waiters = w;
  return w;
}

int mcp__task_result(mcp__task *t, mcp_session *s, mcp__sink *sink,
                     const char *id, size_t id_len, mcp__buf *b) {
  mcp__buf asks = {0};
  size_t nasks = 0;
  int rc = 0;
  pthread_mutex_lock(&t->srv->task_lock);
  if (terminal(t->status)) {
    result_reply(b, t, id, id_len);
  } else {
    /* It blocks until the task ends: the request waits in the record (the
     * session and its sink held) and is answered then. */
    size_t n = 0;
    for (waiter *x = t->waiters; x; x = x->next)
      n++;
    if (n >= MAX_WAITERS)
      rc = MCP_ELIMIT;
    else if (wait_locked(t, s, sink, id, id_len) == NULL)
      rc = MCP_ENOMEM;
    /* A task that waits for input: the client calls tasks/result when it
     * sees input_required, so its stream carries the requests (sent once
     * to the session's own channel, a GET stream that may not be open).
     * They go to the session that made the task, which numbered them and
     * takes their answers; with a stream of its own only (otherwise the
     * requests went down this same channel already). */
    else if (status_of(t) == INPUT_REQUIRED && s == t->origin && sink)
      pending_texts(&asks, t, &nasks);
  }
  pthread_mutex_unlock(&t->srv->task_lock);
  /* The request's own sink is held by whoever runs the method. */
  send_requests(s, sink, &asks, nasks);
  mcp__buf_free(&asks);
  return rc;
}

unsigned long long mcp__tasks_newest(mcp_server *srv) {
  pthread_mutex_lock(&srv->task_lock);
  unsigned long long newest = srv->next_task_serial;
  pthread_mutex_unlock(&srv->task_lock);
  return newest;
}

bool mcp__tasks_page(mcp_server *srv, const mcp_principal *caller,
                     const mcp_principal *visible, unsigned long long after,
                     unsigned page, mcp__buf *b, unsigned long long *last) {
  unsigned n = 0;
  bool more = false;
  *last = 0;
  pthread_mutex_lock(&srv->task_lock);
  mcp__list_each(link, &srv->tasks) {
    mcp__task *x = task_at(link);
    /* The caller's own tasks (with hide-forbidden on, of tools it may
     * still use). */
    if (!atomic_load(&x->published) || x->serial <= after ||
        !same_subject(subject_of(x), caller->subject) ||
        (visible && !mcp__tool_callable_by(x->tool, visible)))
      continue;
    if (n == page) {
      more = true;
      break;
    }
    mcp__buf_puts(b, n++ ? ",{" : "{");
    put_task(b, x, false);
    mcp__result_end(b);
    *last = x->serial;
  }
  pthread_mutex_unlock(&srv->task_lock);
  return more;
}

/* ---- expiry and teardown ------------------------------------------------- */

static void remote_waits_close(mcp_server *srv);

void mcp__tasks_drop_all(mcp_server *srv) {
  remote_waits_close(srv);
  for (;;) {
    waiter *w = NULL;
    pthread_mutex_lock(&srv->task_lock);
    mcp__task *t =
        mcp__list_empty(&srv->tasks) ? NULL : task_at(srv->tasks.next);
    if (t)
      retire_locked(t, &w);
    pthread_mutex_unlock(&srv->task_lock);
    if (t == NULL)
      return;
    retire_finish(t, w);
  }
}

/* ---- the handler's side -------------------------------------------------- */

static bool owner_published(void *owner_data) {
  return mcp__task_published(owner_data);
}

/* What the call machinery tells a task of its call. */
static const mcp__call_owner task_owner = {
    .publish_locked = owner_publish_locked,
    .published = owner_published,
    .asks = owner_asks,
    .settled_locked = owner_settled_locked,
    .related = owner_related,
    .notify = owner_notify,
    .released = owner_released};

void mcp__task_own(mcp_call *c, mcp__task *t) {
  c->owner = &task_owner;
  c->owner_data = t;
}

/* The task that owns call, or NULL. */
static mcp__task *task_of(const mcp_call *call) {
  return call && call->owner == &task_owner ? call->owner_data : NULL;
}

const char *mcp_call_task_id(const mcp_call *call) {
  mcp__task *t = task_of(call);
  return t && mcp__task_published(t) ? t->id : NULL;
}

int mcp_call_set_status(mcp_call *call, const char *message) {
  if (call == NULL || message == NULL || strlen(message) > MAX_STATUS ||
      !mcp__utf8_valid(message, strlen(message)))
    return MCP_EINVAL;
  mcp__task *t = task_of(call);
  if (t == NULL || !mcp__task_published(t))
    return MCP_ESTATE;
  char *copy = mcp__strdup(message);
  if (copy == NULL)
    return MCP_ENOMEM;
  pthread_mutex_lock(&t->srv->task_lock);
  /* An ended task says what it said when it ended (a cancelled one's
   * thread may still be on its way out). */
  bool ended = terminal(t->status);
  if (!ended) {
    mcp__free(t->status_message);
    t->status_message = copy;
    touch_locked(t, t->status);
  }
  pthread_mutex_unlock(&t->srv->task_lock);
  if (ended)
    mcp__free(copy);
  else
    mirror(t);
  return ended ? MCP_ESTATE : 0;
}

/* ---- what other nodes ask of this node's tasks ------------------------- */

/* This server's published task id, whoever's it is (the node that asks
 * checked the caller against the record), or NULL. A new reference. */
static mcp__task *find_own(mcp_server *srv, const char *id) {
  mcp__task *found = NULL;
  pthread_mutex_lock(&srv->task_lock);
  mcp__list_each(link, &srv->tasks) {
    mcp__task *t = task_at(link);
    if (atomic_load(&t->published) && !t->retired && strcmp(t->id, id) == 0) {
      found = t;
      atomic_fetch_add(&t->refs, 1);
      break;
    }
  }
  pthread_mutex_unlock(&srv->task_lock);
  return found;
}

/* The store evicted t's record to make room in a budget of the cluster:
 * t is forgotten here too, unless it was already. No lock held. */
static void forget_evicted(mcp__task *t) {
  waiter *w = NULL;
  pthread_mutex_lock(&t->srv->task_lock);
  evicted_here gone = evicted_locked(t, &w);
  pthread_mutex_unlock(&t->srv->task_lock);
  evicted_finish(t, gone, w);
}

static void ignore_reply(const char *was, bool ended, mcp__buf *b, void *arg) {
  (void)was;
  (void)ended;
  (void)arg;
  mcp__buf_free(b);
}

/* Another node's task changed: this node's listeners that asked for it
 * hear of it, if they are its caller's. */
static void remote_changed(mcp_server *srv, const cJSON *event) {
  const char *node = cJSON_GetStringValue(mcp__json_member(event, "node"));
  const char *id = cJSON_GetStringValue(mcp__json_member(event, "id"));
  const cJSON *subject = mcp__json_member(event, "subject");
  const char *tool = cJSON_GetStringValue(mcp__json_member(event, "tool"));
  const char *detail = cJSON_GetStringValue(mcp__json_member(event, "detail"));
  if (node == NULL || strcmp(node, srv->node) == 0)
    return; /* this node's own: its listeners heard it already */
  if (id == NULL || tool == NULL || detail == NULL ||
      !(cJSON_IsNull(subject) || cJSON_IsString(subject))) {
    mcp__log(srv, MCP_LOG_WARNING,
             "a task event of the store that is not one: ignored");
    return;
  }
  mcp__broadcast_remote_task(srv, id, detail, strlen(detail),
                             cJSON_GetStringValue(subject), tool);
}

static void remote_stored(mcp_server *srv, const char *id);

void mcp__task_event(mcp_server *srv, const cJSON *event) {
  const char *what = cJSON_GetStringValue(mcp__json_member(event, "task"));
  if (strcmp(what, "changed") == 0) {
    remote_changed(srv, event);
    return;
  }
  if (strcmp(what, "stored") == 0) {
    const char *id = cJSON_GetStringValue(mcp__json_member(event, "id"));
    if (id)
      remote_stored(srv, id);
    return;
  }
  const char *id = cJSON_GetStringValue(mcp__json_member(event, "id"));
  const char *to = cJSON_GetStringValue(mcp__json_member(event, "to"));
  if (id == NULL || to == NULL || strcmp(to, srv->node) != 0)
    return; /* another node's task */
  mcp__task *t = find_own(srv, id);
  if (t == NULL)
    return; /* forgotten meanwhile: its record says how it ended */
  if (strcmp(what, "cancel") == 0) {
    mcp__task_cancel(t, false, ignore_reply, NULL);
  } else if (strcmp(what, "evict") == 0) {
    forget_evicted(t);
  } else if (strcmp(what, "update") == 0) {
    char why[320];
    bool ready = false;
    int rc = mcp__task_update(t, mcp__json_member(event, "answers"), why,
                              sizeof why, &ready);
    if (rc)
      mcp__log(srv, MCP_LOG_WARNING,
               "task %s: inputResponses from another node not taken: %s", id,
               why);
    else if (ready && atomic_load(&srv->has_executor))
      mcp__task_resume(t); /* handed to the executor: quick */
    else if (ready) {
      /* Not on the store's thread, which every event waits for: on the
       * timer's, at once (the transport drives it). */
      pthread_mutex_lock(&srv->task_lock);
      if (!t->retired)
        mcp__deadline_watch(srv, &t->wake, mcp__now_us());
      pthread_mutex_unlock(&srv->task_lock);
    }
  }
  mcp__task_unref(t);
}

/* ---- another node's task, waited for here ----------------------------------
 * A 2025-11-25 tasks/result of a task another node runs waits here until
 * its record is worth reading again (lib/methods/tasks_remote.c reads it
 * and answers): a node published that it stored the record ended or
 * waiting for input ("stored", from mirror_answered, or from the node
 * that settled it), or its timer passed (the caller's choice: the node
 * lease, to see a lost node, or the task's TTL), or the server lets go of
 * its tasks. Each wait is woken once, by whoever takes it off the list
 * under task_lock; its timer is unwatched there too, so a timer found in
 * the heap always belongs to a listed wait (the list's reference keeps it
 * for the pin). */

static unsigned bucket_of(const char *id) {
  unsigned h = 2166136261u;
  for (const char *p = id; *p; p++)
    h = (h ^ (unsigned char)*p) * 16777619u;
  return h % WAIT_BUCKETS;
}

static void rwait_unref(rwait *w) {
  if (atomic_fetch_sub(&w->refs, 1) == 1)
    mcp__free(w);
}

/* Takes w off the list (and the timer's heap). Under task_lock. */
static void rwait_take_locked(rwait *w) {
  mcp__list_remove(&w->link);
  w->listed = false;
  w->srv->remote_waits->n--;
  mcp__deadline_unwatch(w->srv, &w->timer);
}

/* Wakes every wait of chain (taken off the list) with why, and drops the
 * list's reference. No lock held. */
static void rwait_wake(rwait *chain, mcp__remote_wake why) {
  while (chain) {
    rwait *next = chain->next;
    chain->woken(chain->arg, why);
    rwait_unref(chain);
    chain = next;
  }
}

static void rwait_pin(mcp__deadline *d) {
  rwait *w = mcp__container_of(d, rwait, timer);
  atomic_fetch_add(&w->refs, 1);
}

static void rwait_due(mcp__deadline *d) {
  rwait *w = mcp__container_of(d, rwait, timer);
  mcp_server *srv = w->srv;
  pthread_mutex_lock(&srv->task_lock);
  bool taken = w->listed;
  if (taken)
    rwait_take_locked(w);
  else
    mcp__deadline_unwatch(srv, d);
  pthread_mutex_unlock(&srv->task_lock);
  if (taken) {
    w->next = NULL;
    rwait_wake(w, MCP__WAKE_TIMER);
  }
  rwait_unref(w); /* the pin's */
}

unsigned long long mcp__task_stored_seen(mcp_server *srv, const char *id) {
  pthread_mutex_lock(&srv->task_lock);
  unsigned long long seen = srv->remote_waits->seen[bucket_of(id)];
  pthread_mutex_unlock(&srv->task_lock);
  return seen;
}

int mcp__task_wait_remote(mcp_session *s, const char *id,
                          unsigned long long seen, unsigned long long at_us,
                          void (*woken)(void *arg, mcp__remote_wake why),
                          void *arg) {
  mcp_server *srv = s->home.srv;
  size_t len = strlen(id);
  rwait *w = len < sizeof w->id ? mcp__calloc(1, sizeof *w) : NULL;
  if (w == NULL)
    return MCP_ENOMEM;
  w->srv = srv;
  w->session = s;
  memcpy(w->id, id, len + 1);
  w->woken = woken;
  w->arg = arg;
  w->timer = (mcp__deadline){
      .kind = MCP__DEADLINE_TTL, .pin = rwait_pin, .due = rwait_due};
  atomic_init(&w->refs, 1);
  struct mcp__remote_waits *rw = srv->remote_waits;
  int rc = 0;
  size_t same = 0;
  pthread_mutex_lock(&srv->task_lock);
  mcp__list_each(link, &rw->list) {
    if (strcmp(mcp__container_of(link, rwait, link)->id, id) == 0)
      same++;
  }
  if (rw->closed || atomic_load(&s->home.closed))
    rc = MCP_ECLOSED;
  else if (same >= MAX_WAITERS)
    rc = MCP_ELIMIT;
  else {
    /* A record stored since the caller read it: read again at once (on
     * the timer's thread, not inside the caller's answer). */
    if (rw->seen[bucket_of(id)] != seen)
      at_us = mcp__now_us();
    mcp__list_push(&rw->list, &w->link);
    w->listed = true;
    rw->n++;
    mcp__deadline_watch(srv, &w->timer, at_us);
  }
  pthread_mutex_unlock(&srv->task_lock);
  if (rc)
    mcp__free(w);
  return rc;
}

/* A node stored id's record ended or waiting for input: its waits here
 * read it again. On the store's delivering thread. */
static void remote_stored(mcp_server *srv, const char *id) {
  struct mcp__remote_waits *rw = srv->remote_waits;
  rwait *chain = NULL;
  pthread_mutex_lock(&srv->task_lock);
  rw->seen[bucket_of(id)]++;
  mcp__list_each(link, &rw->list) {
    rwait *w = mcp__container_of(link, rwait, link);
    if (strcmp(w->id, id) == 0) {
      rwait_take_locked(w);
      w->next = chain;
      chain = w;
    }
  }
  pthread_mutex_unlock(&srv->task_lock);
  rwait_wake(chain, MCP__WAKE_STORED);
}

void mcp__task_session_gone(mcp_session *s) {
  mcp_server *srv = s->home.srv;
  struct mcp__remote_waits *rw = srv->remote_waits;
  rwait *chain = NULL;
  pthread_mutex_lock(&srv->task_lock);
  for (mcp__list *link = rw->n ? rw->list.next : &rw->list;
       link != &rw->list;) {
    rwait *w = mcp__container_of(link, rwait, link);
    link = link->next;
    if (w->session == s) {
      rwait_take_locked(w);
      w->next = chain;
      chain = w;
    }
  }
  pthread_mutex_unlock(&srv->task_lock);
  rwait_wake(chain, MCP__WAKE_SESSION);
}

/* mcp_server_free: every wait is woken closed, and none is made after. */
static void remote_waits_close(mcp_server *srv) {
  struct mcp__remote_waits *rw = srv->remote_waits;
  rwait *chain = NULL;
  pthread_mutex_lock(&srv->task_lock);
  rw->closed = true;
  while (!mcp__list_empty(&rw->list)) {
    rwait *w = mcp__container_of(rw->list.next, rwait, link);
    rwait_take_locked(w);
    w->next = chain;
    chain = w;
  }
  pthread_mutex_unlock(&srv->task_lock);
  rwait_wake(chain, MCP__WAKE_CLOSED);
}

void mcp__task_event_start(mcp__buf *e, const mcp_server *srv, const char *what,
                           const char *id, const char *to) {
  mcp__buf_printf(e, "{\"node\":\"%s\",\"task\":\"%s\",\"id\":", srv->node,
                  what);
  mcp__json_quote(e, id, strlen(id));
  if (to) {
    mcp__buf_puts(e, ",\"to\":");
    mcp__json_quote(e, to, strlen(to));
  }
}

void mcp__task_stored(mcp_server *srv, const char *id, const char *shown) {
  if (mcp__records(srv) == NULL)
    return; /* the store was taken away (the server goes): nobody waits */
  mcp__buf e = {0};
  mcp__task_event_start(&e, srv, "stored", id, NULL);
  mcp__buf_puts(&e, ",\"status\":");
  mcp__json_quote(&e, shown, strlen(shown));
  mcp__buf_putc(&e, '}');
  if (e.err == 0)
    mcp__publish(srv, "a task's record stored", e.data, e.len);
  mcp__buf_free(&e);
}
