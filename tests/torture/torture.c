/* Allocation-failure torture (shared/spec/BAD-INPUTS.md H1, H2).
 *
 * Each scenario drives the library the way a client would: a session of
 * each protocol era through every method (the engine API directly), the
 * stdio transport over a socketpair, the HTTP transport in-process with
 * real loopback requests, and bearer tokens verified on the HTTP auth path.
 * A first run, with nothing failing, counts N_total, the allocations the
 * scenario makes through mcp_set_allocator (and, for the JWT scenario,
 * through OpenSSL's CRYPTO_set_mem_functions), and records every message
 * it sends as the golden answer. The scenario then runs again for each N,
 * with allocation number N failing ("once" mode) or with every allocation
 * from N on failing ("from" mode). Every run must:
 *  - not crash (Check forks each test; ASan and UBSan watch in that build);
 *  - answer each request either exactly as the golden run did or with a
 *    clean error: an API return code, a JSON-RPC internal error (-32603)
 *    for that request's id, an HTTP 5xx, a closed connection, or (tokens
 *    only) 401: never another answer;
 *  - after allocation works again, serve a fresh request correctly on the
 *    same server (the same session, stream or HTTP server);
 *  - leave no block allocated: every block counted by the allocator is
 *    freed once the scenario has freed what it made (the HTTP scenarios
 *    compare with the count before the run, since the server lives on).
 *
 * A step that did not get its golden answer ends its flow: what follows
 * depends on it (a failed initialize makes every later request an error
 * by design). The stdio scenario sends its whole script at once instead:
 * there the first request not answered as in the golden run may only have
 * become -32603 (or nothing, said in the log), and the ones after it may be
 * any error, never another result.
 *
 * When N_total is large, every N up to TORTURE_DENSE (default 2000) is
 * tried and then a stride that keeps each mode to about TORTURE_SPARSE
 * (default 1000) more runs; the test prints what it did.
 *
 * The HTTP transport allocates through the same hook (mcp_malloc and
 * friends, public for it), so the HTTP scenarios fail its allocations as
 * well as the engine's and OpenSSL's; libmicrohttpd's own stay on libc.
 *
 * One ctest test per scenario and mode: CK_RUN_CASE picks the scenario
 * (the tcase), TORTURE_MODE ("once" or "from") the mode. To reproduce one
 * failure, TORTURE_ONLY=N runs the golden run and then N alone (with
 * CK_FORK=no, under a debugger, break in fail_now when A.seq reaches N);
 * TORTURE_VERBOSE=1 prints each HTTP step's outcome. */
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "jwt_sign.h"
#include "ossl_count.h"
#include "testutil.h"
#include "tools.h"

/* ===========================================================================
 * The counting, failing allocator
 * ======================================================================== */

enum { MODE_ONCE = 0, MODE_FROM = 1 };
static const char *const MODE_NAMES[] = {"once", "from"};

static struct {
  atomic_bool counting; /* count (and maybe fail) allocations */
  atomic_long seq;      /* allocations counted since arm() */
  atomic_long fail_at;  /* 0 = never */
  atomic_int mode;      /* MODE_ONCE or MODE_FROM */
  atomic_long failures; /* allocations failed since arm() */
  atomic_long live_mcp; /* blocks live through mcp_set_allocator */
  atomic_long seq_ossl; /* of seq, OpenSSL's */
} A;

/* The test's own cJSON work (parsing replies) goes through the library's
 * hook too; a thread with exempt set is neither counted nor failed. */
static _Thread_local int exempt;

static bool fail_now(bool ossl) {
  if (exempt || !atomic_load(&A.counting))
    return false;
  long k = atomic_fetch_add(&A.seq, 1) + 1;
  if (ossl)
    atomic_fetch_add(&A.seq_ossl, 1);
  long at = atomic_load(&A.fail_at);
  if (at == 0)
    return false;
  bool fail = atomic_load(&A.mode) == MODE_ONCE ? k == at : k >= at;
  if (fail)
    atomic_fetch_add(&A.failures, 1);
  return fail;
}

static void *m_malloc(size_t n, void *ud) {
  (void)ud;
  if (fail_now(false))
    return NULL;
  void *p = malloc(n);
  if (p)
    atomic_fetch_add(&A.live_mcp, 1);
  return p;
}

static void *m_realloc(void *p, size_t n, void *ud) {
  (void)ud;
  if (fail_now(false))
    return NULL;
  void *q = realloc(p, n);
  if (q && p == NULL)
    atomic_fetch_add(&A.live_mcp, 1);
  return q;
}

static void m_free(void *p, void *ud) {
  (void)ud;
  if (p) {
    atomic_fetch_sub(&A.live_mcp, 1);
    free(p);
  }
}

/* OpenSSL's allocations are counted by tests/common/ossl_count.c (its live
 * count leaves out the per-thread error queue, which lives as long as its
 * thread); fail_now decides which of them fail. */
static bool o_fail(void) { return fail_now(true); }

static bool ossl_hooked;

/* Starts counting: with fail_at 0 nothing fails (the golden run). */
static void arm(long fail_at, int mode) {
  atomic_store(&A.seq, 0);
  atomic_store(&A.seq_ossl, 0);
  atomic_store(&A.failures, 0);
  atomic_store(&A.mode, mode);
  atomic_store(&A.fail_at, fail_at);
  atomic_store(&A.counting, true);
}

/* Stops counting and failing; returns how many were counted. */
static long disarm(void) {
  atomic_store(&A.counting, false);
  atomic_store(&A.fail_at, 0);
  return atomic_load(&A.seq);
}

static long failures(void) { return atomic_load(&A.failures); }

/* ===========================================================================
 * Scale: which N to try
 * ======================================================================== */

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return fallback;
  long n = strtol(v, NULL, 10);
  return n > 0 ? n : fallback;
}

/* The stride after the dense part, so the sparse part makes about
 * TORTURE_SPARSE runs. */
static long stride_for(long total, long dense) {
  long sparse = env_long("TORTURE_SPARSE", 1000);
  if (total <= dense)
    return 1;
  long s = (total - dense + sparse - 1) / sparse;
  return s < 1 ? 1 : s;
}

static long next_n(long n, long dense, long stride) {
  return n < dense ? n + 1 : n + stride;
}

/* Whether this test runs mode (TORTURE_MODE unset: both). */
static bool mode_selected(int mode) {
  const char *v = getenv("TORTURE_MODE");
  return v == NULL || *v == '\0' || strcmp(v, MODE_NAMES[mode]) == 0;
}

/* ===========================================================================
 * Messages captured per step
 * ======================================================================== */

typedef struct msgs {
  char **m;
  size_t n, cap;
} msgs;

static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static msgs *cur;  /* where sent messages go now */
static msgs stray; /* messages sent outside any step */

static void msgs_add(msgs *l, const char *msg, size_t len) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 8;
    l->m = realloc(l->m, l->cap * sizeof *l->m);
    if (l->m == NULL)
      abort();
  }
  char *c = malloc(len + 1);
  if (c == NULL)
    abort();
  memcpy(c, msg, len);
  c[len] = '\0';
  l->m[l->n++] = c;
}

static void msgs_clear(msgs *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->m[i]);
  l->n = 0;
}

static void msgs_free(msgs *l) {
  msgs_clear(l);
  free(l->m);
  memset(l, 0, sizeof *l);
}

static void msgs_copy(msgs *dst, const msgs *src) {
  msgs_clear(dst);
  for (size_t i = 0; i < src->n; i++)
    msgs_add(dst, src->m[i], strlen(src->m[i]));
}

static void capture(const char *msg, size_t len) {
  pthread_mutex_lock(&cap_mu);
  msgs_add(cur ? cur : &stray, msg, len);
  pthread_mutex_unlock(&cap_mu);
}

static void capture_to(msgs *l) {
  pthread_mutex_lock(&cap_mu);
  cur = l;
  pthread_mutex_unlock(&cap_mu);
}

static int session_send(const char *msg, size_t len, void *ud) {
  (void)ud;
  capture(msg, len);
  return 0;
}

/* A sink per step that uses one; done must come exactly once. */
#define MAX_STEPS 64
typedef struct tsink {
  atomic_int done;
  bool used;
} tsink;
static tsink sinks[MAX_STEPS + 2];

static int sink_send(const char *msg, size_t len, void *ud) {
  (void)ud;
  capture(msg, len);
  return 0;
}

static void sink_done(void *ud) { atomic_fetch_add(&((tsink *)ud)->done, 1); }

static void sinks_reset(void) {
  for (size_t i = 0; i < TU_COUNT(sinks); i++) {
    atomic_store(&sinks[i].done, 0);
    sinks[i].used = false;
  }
}

static void sinks_check(const char *what, long n) {
  for (size_t i = 0; i < TU_COUNT(sinks); i++)
    if (sinks[i].used)
      ck_assert_msg(atomic_load(&sinks[i].done) == 1,
                    "%s N=%ld: the sink of step %zu got done %d times", what, n,
                    i, atomic_load(&sinks[i].done));
}

/* ===========================================================================
 * The fixture: a server with tools, prompts, resources and a template
 * ======================================================================== */

static atomic_long oom_logs; /* log lines that say memory ran out */

static void fx_log(mcp_log_level level, const char *message, void *ud) {
  (void)level;
  (void)ud;
  if (strstr(message, "out of memory"))
    atomic_fetch_add(&oom_logs, 1);
}

/* Deferred calls: parked for a step to finish (engine scenarios), or
 * finished at once by a thread of their own (transports). */
static bool defer_by_thread;
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static mcp_call *parked;
static pthread_t finishers[64];
static size_t nfinishers;

static void *finish_thread(void *arg) {
  mcp_call *c = arg;
  mcp_result_text(c, "later");
  mcp_call_finish(c, 0);
  return NULL;
}

static int tool_defer(mcp_call *call, void *ud) {
  (void)ud;
  pthread_mutex_lock(&park_mu);
  int rc = MCP_DEFERRED;
  if (defer_by_thread) {
    if (nfinishers == TU_COUNT(finishers) ||
        pthread_create(&finishers[nfinishers], NULL, finish_thread, call) != 0)
      rc = MCP_EINTERNAL;
    else
      nfinishers++;
  } else if (parked) {
    rc = MCP_EINTERNAL;
  } else {
    parked = call;
  }
  pthread_mutex_unlock(&park_mu);
  return rc;
}

/* Joins the finisher threads, and finishes a call still parked. */
static void finish_deferred(void) {
  pthread_mutex_lock(&park_mu);
  mcp_call *c = parked;
  parked = NULL;
  size_t n = nfinishers;
  nfinishers = 0;
  pthread_mutex_unlock(&park_mu);
  for (size_t i = 0; i < n; i++)
    pthread_join(finishers[i], NULL);
  if (c)
    finish_thread(c);
}

static int tool_ask(mcp_call *call, void *ud) {
  (void)ud;
  const cJSON *a = mcp_call_input(call, "q");
  if (a == NULL) {
    int rc = mcp_call_set_state(call, "asked");
    if (rc == 0)
      rc = mcp_call_request_input(
          call, "q", MCP_INPUT_ELICITATION,
          "{\"message\":\"Proceed?\",\"requestedSchema\":{\"type\":"
          "\"object\",\"properties\":{}}}");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(a, "action");
  const char *state = mcp_call_state(call);
  char text[128];
  snprintf(text, sizeof text, "answered %s after %s",
           cJSON_IsString(action) ? action->valuestring : "?",
           state ? state : "nothing");
  return mcp_result_text(call, text);
}

static int tool_progress(mcp_call *call, void *ud) {
  (void)ud;
  int rc = mcp_call_progress(call, 1, 2, "half");
  if (rc == 0)
    rc = mcp_call_progress(call, 2, 2, NULL);
  return rc ? rc : mcp_result_text(call, "progressed");
}

static int tool_logs(mcp_call *call, void *ud) {
  (void)ud;
  mcp_call_log(call, MCP_LOG_DEBUG, "a debug line");
  mcp_call_log(call, MCP_LOG_INFO, "an info line");
  mcp_call_log(call, MCP_LOG_WARNING, "a warning");
  return mcp_result_text(call, "logged");
}

static int tool_struct(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_structured(call, "{\"n\":42,\"tags\":[\"a\",\"b\"]}");
}

static int prompt_greet(mcp_call *call, void *ud) {
  (void)ud;
  const char *name = "nobody";
  mcp_call_arg_string(call, "name", &name);
  char text[200];
  snprintf(text, sizeof text, "Hello, %s!", name);
  int rc = mcp_result_description(call, "A greeting");
  if (rc == 0)
    rc = mcp_result_text(call, text);
  if (rc == 0)
    rc = mcp_result_role(call, MCP_ROLE_ASSISTANT);
  return rc ? rc : mcp_result_text(call, "Hi!");
}

static int read_readme(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_text(call, "read me first");
}

static int read_note(mcp_call *call, void *ud) {
  (void)ud;
  const char *name = NULL;
  if (mcp_call_arg_string(call, "name", &name) != 0)
    return MCP_ENOENT;
  char text[200];
  snprintf(text, sizeof text, "the note %s", name);
  return mcp_result_text(call, text);
}

static int complete_names(mcp_completion *c, void *ud) {
  (void)ud;
  static const char *const names[] = {"alice", "albert", "bob"};
  const char *v = mcp_completion_value(c);
  for (size_t i = 0; i < TU_COUNT(names); i++)
    if (strncmp(names[i], v, strlen(v)) == 0) {
      int rc = mcp_completion_add(c, names[i]);
      if (rc)
        return rc;
    }
  mcp_completion_set_total(c, 2);
  return 0;
}

static const mcp_tool TOOLS[] = {
    TC_TOOL_ECHO,
    {.name = "ask",
     .description = "Asks the user, then says what they answered.",
     .annotations = TC_READ_ONLY,
     .handler = tool_ask},
    {.name = "defer",
     .description = "Answers later, from another thread.",
     .annotations = TC_READ_ONLY,
     .handler = tool_defer},
    {.name = "progress",
     .description = "Reports progress twice.",
     .annotations = TC_READ_ONLY,
     .handler = tool_progress},
    {.name = "logs",
     .description = "Logs three lines.",
     .annotations = TC_READ_ONLY,
     .handler = tool_logs},
    {.name = "struct",
     .description = "Structured output.",
     .output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                      "\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{"
                      "\"type\":\"string\"}}},\"required\":[\"n\"]}",
     .annotations = TC_READ_ONLY,
     .handler = tool_struct},
};

static const mcp_prompt_argument GREET_ARGS[] = {
    {.name = "name", .description = "Who", .required = true}, {.name = NULL}};
static const mcp_prompt PROMPT = {.name = "greet",
                                  .title = "Greeting",
                                  .description = "Greets someone.",
                                  .arguments = GREET_ARGS,
                                  .handler = prompt_greet,
                                  .complete = complete_names};
static const mcp_resource README = {.uri = "file:///readme",
                                    .name = "readme",
                                    .mime_type = "text/plain",
                                    .handler = read_readme};
static const mcp_resource NOTES = {.uri_template = "file:///notes/{name}",
                                   .name = "notes",
                                   .mime_type = "text/markdown",
                                   .handler = read_note,
                                   .complete = complete_names};

static const mcp_server_info INFO = {
    .name = "torture", .version = "1.0.0", .title = "Torture"};

/* A server with the whole fixture. Returns the first failing code (only
 * MCP_ENOMEM is expected, and only while allocations fail). */
static int fx_server(mcp_server **out) {
  mcp_server *srv = NULL;
  int rc = mcp_server_new(&INFO, &srv);
  if (rc)
    return rc;
  mcp_server_set_log(srv, fx_log, NULL);
  for (size_t i = 0; rc == 0 && i < TU_COUNT(TOOLS); i++)
    rc = mcp_server_add_tool(srv, &TOOLS[i], NULL);
  if (rc == 0)
    rc = mcp_server_add_prompt(srv, &PROMPT, NULL);
  if (rc == 0)
    rc = mcp_server_add_resource(srv, &README, NULL);
  if (rc == 0)
    rc = mcp_server_add_resource(srv, &NOTES, NULL);
  if (rc) {
    mcp_server_free(srv);
    return rc;
  }
  *out = srv;
  return 0;
}

static void fx_reset(void) {
  atomic_store(&oom_logs, 0);
  pthread_mutex_lock(&park_mu);
  parked = NULL;
  nfinishers = 0;
  pthread_mutex_unlock(&park_mu);
  sinks_reset();
  msgs_clear(&stray);
}

/* ===========================================================================
 * Judging answers
 * ======================================================================== */

/* Replaces what legitimately differs between runs (the signed
 * requestState, with its nonce and expiry) by a constant. */
static void mask(cJSON *m) {
  if (m == NULL)
    return;
  for (cJSON *c = m->child; c; c = c->next) {
    if (c->string && strcmp(c->string, "requestState") == 0 &&
        cJSON_IsString(c))
      cJSON_SetValuestring(c, "<masked>");
    else
      mask(c);
  }
}

static cJSON *parse_masked(const char *text) {
  cJSON *m = cJSON_Parse(text);
  mask(m);
  return m;
}

static bool is_response(const cJSON *m) {
  return cJSON_GetObjectItemCaseSensitive(m, "method") == NULL &&
         cJSON_GetObjectItemCaseSensitive(m, "id") != NULL;
}

/* The JSON-RPC error code of m, or 0 when m is not an error response (an
 * id-less error has none). */
static int error_code(const cJSON *m) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, "error");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
  return cJSON_GetObjectItemCaseSensitive(m, "method") == NULL &&
                 cJSON_IsNumber(c)
             ? c->valueint
             : 0;
}

/* Whether id (of an error) is null or absent, or the id of one of the
 * responses in gold. */
static bool id_of_a_response(const cJSON *id, cJSON *const *gold, size_t n) {
  if (id == NULL || cJSON_IsNull(id))
    return true;
  for (size_t i = 0; i < n; i++)
    if (gold[i] && is_response(gold[i]) &&
        cJSON_Compare(cJSON_GetObjectItemCaseSensitive(gold[i], "id"), id, 1))
      return true;
  return false;
}

/* The verdict on one step. */
typedef struct verdict {
  bool complete;      /* every golden message came, exactly */
  bool errored;       /* a clean error came instead of an answer */
  bool lost_response; /* a golden response came neither golden nor as an
                         error */
  char wrong[1200];   /* non-empty: a wrong answer (the test fails) */
} verdict;

/* Compares what a step sent (act) with the golden run (gold). Messages
 * may be missing (notifications are best effort, replies may be lost when
 * even the error could not be built); every message that came must be a
 * golden one or an internal error for a golden response's id. */
static verdict judge_msgs(const msgs *gold, const msgs *act,
                          const char *request) {
  verdict v = {.complete = true};
  exempt++;
  size_t ng = gold->n, na = act->n;
  cJSON **g = calloc(ng + 2, sizeof *g);
  bool *seen = calloc(ng + 2, sizeof *seen);
  if (g == NULL || seen == NULL)
    abort();
  for (size_t i = 0; i < ng; i++)
    g[i] = parse_masked(gold->m[i]);
  /* The request itself stands for the response it is owed: an internal
   * error for its id is clean even when the golden answer came later (a
   * question to the client first, or a deferred call). */
  cJSON *req = request ? cJSON_Parse(request) : NULL;
  cJSON *owed = cJSON_CreateObject();
  if (owed == NULL)
    abort();
  const cJSON *rid = cJSON_GetObjectItemCaseSensitive(req, "id");
  if (rid && cJSON_GetObjectItemCaseSensitive(req, "method"))
    cJSON_AddItemToObject(owed, "id", cJSON_Duplicate(rid, 1));
  cJSON_Delete(req);
  g[ng] = owed;
  seen[ng] = true; /* never matched as an answer itself */
  for (size_t i = 0; i < na && v.wrong[0] == '\0'; i++) {
    cJSON *a = parse_masked(act->m[i]);
    bool ok = false;
    for (size_t j = 0; a && j < ng && !ok; j++)
      if (!seen[j] && g[j] && cJSON_Compare(a, g[j], 1))
        ok = seen[j] = true;
    if (!ok && a && error_code(a) == -32603 &&
        id_of_a_response(cJSON_GetObjectItemCaseSensitive(a, "id"), g,
                         ng + 1)) {
      ok = true;
      v.errored = true;
      /* The response it replaces counts as answered. */
      const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
      for (size_t j = 0; j < ng; j++)
        if (!seen[j] && g[j] && is_response(g[j]) &&
            cJSON_Compare(cJSON_GetObjectItemCaseSensitive(g[j], "id"), id,
                          1)) {
          seen[j] = true;
          v.complete = false;
          break;
        }
    }
    if (!ok) {
      snprintf(v.wrong, sizeof v.wrong, "%.500s\n  golden: %.500s", act->m[i],
               ng ? gold->m[0] : "(nothing)");
    }
    cJSON_Delete(a);
  }
  for (size_t j = 0; j < ng; j++) {
    if (!seen[j]) {
      v.complete = false;
      if (g[j] && is_response(g[j]))
        v.lost_response = true;
    }
    cJSON_Delete(g[j]);
  }
  if (v.errored)
    v.complete = false;
  cJSON_Delete(owed);
  free(g);
  free(seen);
  exempt--;
  return v;
}

/* The placeholders a later step needs: the id of the last request the
 * server sent (@SREQ@) and the last requestState (@STATE@). */
static char g_sreq[64], g_state[4096];

static void note_placeholders(const msgs *l) {
  exempt++;
  for (size_t i = 0; i < l->n; i++) {
    cJSON *m = cJSON_Parse(l->m[i]);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    if (id && cJSON_GetObjectItemCaseSensitive(m, "method")) {
      char *t = cJSON_PrintUnformatted(id);
      snprintf(g_sreq, sizeof g_sreq, "%s", t ? t : "null");
      cJSON_free(t);
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "result"), "requestState");
    if (cJSON_IsString(st))
      snprintf(g_state, sizeof g_state, "%s", st->valuestring);
    cJSON_Delete(m);
  }
  exempt--;
}

/* text with @SREQ@ and @STATE@ replaced (free with free). */
static char *expand(const char *text) {
  lc_buf b = {0};
  for (const char *p = text; *p;) {
    if (strncmp(p, "@SREQ@", 6) == 0) {
      lc_buf_str(&b, g_sreq);
      p += 6;
    } else if (strncmp(p, "@STATE@", 7) == 0) {
      lc_buf_str(&b, g_state);
      p += 7;
    } else {
      lc_buf_add(&b, p, 1);
      p++;
    }
  }
  return b.p;
}

/* ===========================================================================
 * Requests
 * ======================================================================== */

#define RQ(id, method, params)                                                 \
  "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method                    \
  "\",\"params\":" params "}"
#define RQ0(id, method)                                                        \
  "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method "\"}"
#define NOTE(method, params)                                                   \
  "{\"jsonrpc\":\"2.0\",\"method\":\"" method "\",\"params\":" params "}"
#define CALL(id, name, args)                                                   \
  RQ(id, "tools/call", "{\"name\":\"" name "\",\"arguments\":" args "}")
#define INIT_LEGACY(id)                                                        \
  RQ(id, "initialize",                                                         \
     "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":"  \
     "{}},\"clientInfo\":{\"name\":\"torture\",\"version\":\"1\"}}")
#define INITIALIZED                                                            \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
/* A 2026-07-28 request: params are _meta (with caps) and rest. */
#define MRQ(id, method, caps, rest) RQ(id, method, "{" LC_META(caps) rest "}")
#define MCALL(id, name, args, caps)                                            \
  MRQ(id, "tools/call", caps, ",\"name\":\"" name "\",\"arguments\":" args)
#define META_LOG                                                               \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"load\",\"version\":"     \
  "\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{},"                  \
  "\"io.modelcontextprotocol/logLevel\":\"info\"}"
#define ACCEPT "{\"action\":\"accept\",\"content\":{}}"
#define PROMPT_REF "{\"type\":\"ref/prompt\",\"name\":\"greet\"}"
#define TEMPLATE_REF                                                           \
  "{\"type\":\"ref/resource\",\"uri\":\"file:///notes/{name}\"}"

/* ===========================================================================
 * The engine scenarios: one session through every method
 * ======================================================================== */

typedef enum step_kind {
  S_RECV,      /* mcp_session_receive(text) */
  S_RECV_SINK, /* mcp_session_receive_to(text) with a sink of its own */
  S_UPDATED,   /* mcp_server_resource_updated(text) */
  S_FINISH     /* the parked deferred call finished from another thread */
} step_kind;

typedef struct step {
  step_kind kind;
  const char *text;
} step;

static const step LEGACY[] = {
    {S_RECV, INIT_LEGACY("1")},
    {S_RECV, INITIALIZED},
    {S_RECV, RQ0("2", "tools/list")},
    {S_RECV, CALL("3", "echo", "{\"text\":\"hi\"}")},
    {S_RECV, CALL("4", "echo", "{\"text\":5}")},
    {S_RECV, CALL("5", "nope", "{}")},
    {S_RECV, CALL("6", "ask", "{}")},
    {S_RECV, "{\"jsonrpc\":\"2.0\",\"id\":@SREQ@,\"result\":" ACCEPT "}"},
    {S_RECV_SINK, CALL("7", "defer", "{}")},
    {S_FINISH, NULL},
    {S_RECV, RQ("8", "logging/setLevel", "{\"level\":\"info\"}")},
    {S_RECV, CALL("9", "logs", "{}")},
    {S_RECV, RQ("10", "tools/call",
                "{\"name\":\"progress\",\"arguments\":{},\"_meta\":{"
                "\"progressToken\":\"p10\"}}")},
    {S_RECV, CALL("11", "struct", "{}")},
    {S_RECV, RQ0("12", "prompts/list")},
    {S_RECV, RQ("13", "prompts/get",
                "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}}")},
    {S_RECV, RQ0("14", "resources/list")},
    {S_RECV, RQ0("15", "resources/templates/list")},
    {S_RECV, RQ("16", "resources/read", "{\"uri\":\"file:///readme\"}")},
    {S_RECV, RQ("17", "resources/read", "{\"uri\":\"file:///notes/abc\"}")},
    {S_RECV, RQ("18", "completion/complete",
                "{\"ref\":" PROMPT_REF
                ",\"argument\":{\"name\":\"name\",\"value\":\"al\"}}")},
    {S_RECV, RQ("19", "completion/complete",
                "{\"ref\":" TEMPLATE_REF
                ",\"argument\":{\"name\":\"name\",\"value\":\"b\"}}")},
    {S_RECV, RQ("20", "resources/subscribe", "{\"uri\":\"file:///readme\"}")},
    {S_UPDATED, "file:///readme"},
    {S_RECV, RQ("21", "resources/unsubscribe", "{\"uri\":\"file:///readme\"}")},
    {S_RECV, NOTE("notifications/cancelled", "{\"requestId\":999}")},
    {S_RECV, "{\"jsonrpc\":"},
    {S_RECV, RQ0("22", "no/such/method")},
    {S_RECV, RQ0("23", "ping")},
};

static const step MODERN[] = {
    {S_RECV_SINK, MRQ("1", "server/discover", "{}", "")},
    {S_RECV_SINK, MRQ("2", "tools/list", "{}", "")},
    {S_RECV_SINK, MCALL("3", "echo", "{\"text\":\"hi\"}", "{}")},
    {S_RECV_SINK, MCALL("4", "ask", "{}", "{\"elicitation\":{}}")},
    {S_RECV_SINK, MRQ("5", "tools/call", "{\"elicitation\":{}}",
                      ",\"name\":\"ask\",\"arguments\":{},\"requestState\":"
                      "\"@STATE@\",\"inputResponses\":{\"q\":" ACCEPT "}")},
    {S_RECV_SINK, MCALL("6", "defer", "{}", "{}")},
    {S_FINISH, NULL},
    {S_RECV_SINK, RQ("7", "tools/call",
                     "{" META_LOG ",\"name\":\"logs\",\"arguments\":{}}")},
    {S_RECV_SINK, MCALL("8", "struct", "{}", "{}")},
    {S_RECV_SINK, MRQ("9", "prompts/get", "{}",
                      ",\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}")},
    {S_RECV_SINK,
     MRQ("10", "resources/read", "{}", ",\"uri\":\"file:///notes/abc\"")},
    {S_RECV_SINK, MRQ("11", "resources/templates/list", "{}", "")},
    {S_RECV_SINK, MRQ("12", "completion/complete", "{}",
                      ",\"ref\":" PROMPT_REF
                      ",\"argument\":{\"name\":\"name\",\"value\":\"al\"}")},
    {S_RECV_SINK, MRQ("13", "subscriptions/listen", "{}",
                      ",\"notifications\":{\"toolsListChanged\":true,"
                      "\"resourceSubscriptions\":[\"file:///readme\"]}")},
    {S_UPDATED, "file:///readme"},
    {S_RECV, NOTE("notifications/cancelled", "{\"requestId\":13}")},
    {S_RECV_SINK, MCALL("14", "echo", "{\"text\":5}", "{}")},
    {S_RECV_SINK, MCALL("15", "nope", "{}", "{}")},
    {S_RECV_SINK, MRQ("16", "no/such/method", "{}", "")},
};

typedef struct escenario {
  const char *name;
  const step *steps;
  size_t nsteps;
  bool modern;
} escenario;

static const escenario E_LEGACY = {"engine_legacy", LEGACY, TU_COUNT(LEGACY),
                                   false};
static const escenario E_MODERN = {"engine_modern", MODERN, TU_COUNT(MODERN),
                                   true};

static msgs golden[MAX_STEPS];
static long golden_rc[MAX_STEPS];

/* Feeds text to s, with the step's sink when with_sink. */
static int feed(mcp_session *s, const char *text, tsink *k) {
  char *t = expand(text);
  int rc;
  if (k) {
    k->used = true;
    mcp_sink sink = {.send = sink_send, .done = sink_done, .user_data = k};
    rc = mcp_session_receive_to(s, t, strlen(t), &sink);
  } else {
    rc = mcp_session_receive(s, t, strlen(t));
  }
  free(t);
  return rc;
}

/* One message in, exactly one reply out, matching expected. */
static void expect_reply(mcp_session *s, const char *what, long n,
                         const char *text, const char *expected) {
  msgs got = {0};
  capture_to(&got);
  int rc = mcp_session_receive(s, text, strlen(text));
  capture_to(NULL);
  exempt++;
  ck_assert_msg(rc == 0 && got.n == 1,
                "%s N=%ld: after the failures, %s got rc %d and %zu replies",
                what, n, text, rc, got.n);
  cJSON *m = cJSON_Parse(got.m[0]);
  const char *why = tu_json_match(m, expected);
  ck_assert_msg(why == NULL,
                "%s N=%ld: after the failures, %s\n  got %s\n  expected %s "
                "(%s)",
                what, n, text, got.m[0], expected, why);
  cJSON_Delete(m);
  exempt--;
  msgs_free(&got);
}

/* The server keeps serving: the session answers ping, and a new session
 * goes through initialize and a call. */
static void engine_keeps_serving(const escenario *sc, mcp_server *srv,
                                 mcp_session *s, bool initialized, long n) {
  if (s)
    expect_reply(s, sc->name, n, RQ0("\"after\"", "ping"),
                 "{\"id\":\"after\",\"result\":{}}");
  /* An initialize that was not answered left the session new: the client
   * may try again. */
  if (s && !sc->modern && !initialized)
    expect_reply(s, sc->name, n, INIT_LEGACY("\"again\""),
                 "{\"id\":\"again\",\"result\":{\"protocolVersion\":"
                 "\"2025-11-25\"}}");
  mcp_session *t = NULL;
  ck_assert_int_eq(mcp_session_new(srv, NULL, session_send, NULL, &t), 0);
  if (sc->modern) {
    expect_reply(t, sc->name, n,
                 MCALL("\"a\"", "echo", "{\"text\":\"x\"}", "{}"),
                 "{\"id\":\"a\",\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"x\"}]}}");
  } else {
    expect_reply(t, sc->name, n, INIT_LEGACY("\"i\""),
                 "{\"id\":\"i\",\"result\":{\"protocolVersion\":"
                 "\"2025-11-25\"}}");
    msgs none = {0};
    capture_to(&none);
    ck_assert_int_eq(mcp_session_receive(t, INITIALIZED, strlen(INITIALIZED)),
                     0);
    capture_to(NULL);
    ck_assert_uint_eq(none.n, 0);
    msgs_free(&none);
    expect_reply(t, sc->name, n, CALL("\"a\"", "echo", "{\"text\":\"x\"}"),
                 "{\"id\":\"a\",\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"x\"}]}}");
  }
  mcp_session_free(t);
}

/* One whole run: golden when n == 0 (records golden[] and returns
 * N_total), else with allocation n failing in mode. */
static long engine_run(const escenario *sc, long n, int mode) {
  fx_reset();
  defer_by_thread = false;
  g_sreq[0] = g_state[0] = '\0';
  ck_assert_int_eq(atomic_load(&A.live_mcp), 0);
  mcp_server *srv = NULL;
  ck_assert_int_eq(fx_server(&srv), 0);
  msgs act = {0};

  arm(n, mode);
  mcp_session *s = NULL;
  int rc = mcp_session_new(srv, NULL, session_send, NULL, &s);
  if (rc != 0) {
    ck_assert_msg(rc == MCP_ENOMEM && failures() > 0,
                  "%s N=%ld: mcp_session_new: %s", sc->name, n,
                  mcp_strerror(rc));
    s = NULL;
  }
  bool initialized = false;
  for (size_t i = 0; s && i < sc->nsteps; i++) {
    const step *st = &sc->steps[i];
    long oom_before = atomic_load(&oom_logs);
    msgs_clear(&act);
    capture_to(&act);
    switch (st->kind) {
    case S_RECV:
    case S_RECV_SINK:
      rc = feed(s, st->text, st->kind == S_RECV_SINK ? &sinks[i] : NULL);
      break;
    case S_UPDATED:
      rc = mcp_server_resource_updated(srv, st->text);
      break;
    case S_FINISH: {
      pthread_mutex_lock(&park_mu);
      mcp_call *c = parked;
      parked = NULL;
      pthread_mutex_unlock(&park_mu);
      pthread_t th;
      rc = c ? 0 : MCP_ENOENT;
      if (c) {
        ck_assert_int_eq(pthread_create(&th, NULL, finish_thread, c), 0);
        pthread_join(th, NULL);
      }
      break;
    }
    }
    capture_to(NULL);
    if (n == 0) {
      ck_assert_msg(rc >= 0, "%s: golden step %zu failed: %s", sc->name, i,
                    mcp_strerror(rc));
      msgs_copy(&golden[i], &act);
      golden_rc[i] = rc;
      initialized |= i == 0;
      note_placeholders(&act);
      continue;
    }
    /* What the API said: success, or out of memory. */
    ck_assert_msg(rc == golden_rc[i] || rc == MCP_ENOMEM ||
                      (st->kind == S_UPDATED && rc >= 0) ||
                      (st->kind == S_FINISH && rc == MCP_ENOENT),
                  "%s N=%ld (%s) step %zu: returned %d (%s), golden %ld",
                  sc->name, n, MODE_NAMES[mode], i, rc, mcp_strerror(rc),
                  golden_rc[i]);
    char *req_text = st->kind <= S_RECV_SINK ? expand(st->text) : NULL;
    verdict v = judge_msgs(&golden[i], &act, req_text);
    free(req_text);
    ck_assert_msg(v.wrong[0] == '\0', "%s N=%ld (%s) step %zu: wrong answer %s",
                  sc->name, n, MODE_NAMES[mode], i, v.wrong);
    bool complete = v.complete && rc == golden_rc[i];
    if (!complete) {
      ck_assert_msg(failures() > 0,
                    "%s N=%ld (%s) step %zu: not answered as in the golden "
                    "run, yet no allocation failed",
                    sc->name, n, MODE_NAMES[mode], i);
      /* A reply that vanished was at least reported. */
      ck_assert_msg(!v.lost_response || rc == MCP_ENOMEM ||
                        atomic_load(&oom_logs) > oom_before ||
                        st->kind == S_FINISH,
                    "%s N=%ld (%s) step %zu: the reply was lost and nothing "
                    "said why (rc %d)",
                    sc->name, n, MODE_NAMES[mode], i, rc);
      break; /* what follows depends on this step */
    }
    initialized |= i == 0;
    note_placeholders(&act);
  }
  long counted = disarm();
  msgs_free(&act);

  engine_keeps_serving(sc, srv, s, initialized, n);
  finish_deferred();
  mcp_session_free(s);
  mcp_server_free(srv);
  sinks_check(sc->name, n);
  ck_assert_msg(atomic_load(&A.live_mcp) == 0,
                "%s N=%ld (%s): %ld blocks leaked", sc->name, n,
                MODE_NAMES[mode], atomic_load(&A.live_mcp));
  return counted;
}

/* Runs a scenario for every N (see the top of the file). run(n, mode)
 * returns N_total when n is 0. */
static void torture(const char *name, long (*run)(long n, int mode), int mode) {
  if (!mode_selected(mode))
    return;
  long t0 = lc_now_ms();
  long total = run(0, mode);
  long ossl = atomic_load(&A.seq_ossl);
  ck_assert_int_gt(total, 0);
  long only = env_long("TORTURE_ONLY", 0);
  if (only) {
    run(only, mode); /* reproducing one failure */
    return;
  }
  long dense = env_long("TORTURE_DENSE", 2000);
  long stride = stride_for(total, dense);
  long runs = 0;
  for (long n = 1; n <= total; n = next_n(n, dense, stride)) {
    long t = lc_now_ms();
    run(n, mode);
    runs++;
    if (lc_now_ms() - t > 2000)
      printf("torture %s (%s): N=%ld took %.1f s\n", name, MODE_NAMES[mode], n,
             (double)(lc_now_ms() - t) / 1000.0);
  }
  printf("torture %s (%s): N_total %ld (OpenSSL's %ld), %ld runs (every N "
         "up to %ld, then every %ld-th), %.1f s\n",
         name, MODE_NAMES[mode], total, ossl, runs,
         total < dense ? total : dense, stride,
         (double)(lc_now_ms() - t0) / 1000.0);
  fflush(stdout);
}

static long run_engine_legacy(long n, int mode) {
  return engine_run(&E_LEGACY, n, mode);
}
static long run_engine_modern(long n, int mode) {
  return engine_run(&E_MODERN, n, mode);
}

START_TEST(engine_legacy) { torture("engine_legacy", run_engine_legacy, _i); }
END_TEST

START_TEST(engine_modern) { torture("engine_modern", run_engine_modern, _i); }
END_TEST

/* ---- registration ------------------------------------------------------ */

/* Creating the server and registering everything: MCP_ENOMEM or success,
 * and nothing left behind. */
static long run_registry(long n, int mode) {
  fx_reset();
  arm(n, mode);
  mcp_server *srv = NULL;
  int rc = fx_server(&srv);
  long counted = disarm();
  if (n == 0)
    ck_assert_int_eq(rc, 0);
  ck_assert_msg(rc == 0 || (rc == MCP_ENOMEM && failures() > 0),
                "registry N=%ld: %s", n, mcp_strerror(rc));
  if (rc == 0) {
    mcp_session *s = NULL;
    ck_assert_int_eq(mcp_session_new(srv, NULL, session_send, NULL, &s), 0);
    expect_reply(s, "registry", n, MCALL("1", "echo", "{\"text\":\"x\"}", "{}"),
                 "{\"id\":1,\"result\":{\"content\":[{\"text\":\"x\"}]}}");
    mcp_session_free(s);
    mcp_server_free(srv);
  }
  ck_assert_msg(atomic_load(&A.live_mcp) == 0, "registry N=%ld: %ld leaked", n,
                atomic_load(&A.live_mcp));
  msgs_clear(&stray);
  return counted;
}

START_TEST(registry) { torture("registry", run_registry, _i); }
END_TEST

/* ===========================================================================
 * The stdio transport over a socketpair
 * ======================================================================== */

#define STDIO_DEFERRED_ID 6

/* The legacy script as lines; the elicitation it causes is the server's
 * first request, id 1 (checked in the golden run). */
static const char *const STDIO_SCRIPT[] = {
    INIT_LEGACY("1"),
    INITIALIZED,
    RQ0("2", "tools/list"),
    CALL("3", "echo", "{\"text\":\"hi\"}"),
    CALL("4", "echo", "{\"text\":5}"),
    CALL("5", "ask", "{}"),
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" ACCEPT "}",
    CALL("6", "defer", "{}"), /* STDIO_DEFERRED_ID */
    RQ("7", "logging/setLevel", "{\"level\":\"info\"}"),
    CALL("8", "logs", "{}"),
    RQ("9", "prompts/get",
       "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}}"),
    RQ("10", "resources/read", "{\"uri\":\"file:///notes/abc\"}"),
    RQ("11", "completion/complete",
       "{\"ref\":" TEMPLATE_REF
       ",\"argument\":{\"name\":\"name\",\"value\":\"b\"}}"),
    "{\"jsonrpc\":",
    RQ0("\"after1\"", "ping"),
    RQ0("\"after2\"", "ping"),
};

typedef struct stdio_run {
  mcp_server *srv;
  int fd;
  int rc;
  atomic_bool finished;
} stdio_run;

static const mcp_principal LOCAL = {.subject = "local", .all_scopes = true};

static void *serve_thread(void *arg) {
  stdio_run *r = arg;
  mcp_stdio_options o = {.in_fd = r->fd, .out_fd = r->fd, .principal = &LOCAL};
  r->rc = mcp_serve_stdio(r->srv, &o);
  atomic_store(&r->finished, true);
  return NULL;
}

/* Reads whole lines from fd into l until the line holding one of the
 * needles came (needles NULL: until the server finished and the socket is
 * drained) or the deadline passed. Returns whether it was found. */
static bool read_lines(int fd, lc_buf *pending, msgs *l, const char *needle1,
                       const char *needle2, stdio_run *r, long ms) {
  long deadline = lc_now_ms() + (lc_slow_run() ? ms * 5 : ms);
  for (;;) {
    char *nl;
    while (pending->p && (nl = memchr(pending->p, '\n', pending->n))) {
      size_t len = (size_t)(nl - pending->p);
      msgs_add(l, pending->p, len);
      memmove(pending->p, nl + 1, pending->n - len - 1);
      pending->n -= len + 1;
      const char *line = l->m[l->n - 1];
      if ((needle1 && strstr(line, needle1)) ||
          (needle2 && strstr(line, needle2)))
        return true;
    }
    if (lc_now_ms() > deadline)
      return false;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int k = poll(&p, 1, 2);
    if (k > 0) {
      char buf[8192];
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        lc_buf_add(pending, buf, (size_t)n);
        continue;
      }
      if (n == 0)
        return false;
    } else if (k == 0 && r && atomic_load(&r->finished)) {
      return false; /* drained, and nothing more will come */
    }
  }
}

static void write_lines(int fd, const char *const *lines, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ck_assert(lc_send_all(fd, lines[i], strlen(lines[i])));
    ck_assert(lc_send_all(fd, "\n", 1));
  }
}

static msgs stdio_golden;

/* Judges the whole stream: every message golden, or an internal error for
 * a golden response; the first golden response that did not come as in
 * the golden run may only have become -32603 (or nothing, reported in the
 * log); later ones depend on it and may be any error. */
static void judge_stdio(const msgs *act, long n, int mode) {
  exempt++;
  size_t ng = stdio_golden.n;
  cJSON **g = calloc(ng + 1, sizeof *g);
  bool *seen = calloc(ng + 1, sizeof *seen);
  if (g == NULL || seen == NULL)
    abort();
  for (size_t i = 0; i < ng; i++)
    g[i] = parse_masked(stdio_golden.m[i]);
  cJSON **errs = calloc(act->n + 1, sizeof *errs);
  if (errs == NULL)
    abort();
  size_t nerr = 0;
  for (size_t i = 0; i < act->n; i++) {
    cJSON *a = parse_masked(act->m[i]);
    ck_assert_msg(a != NULL, "stdio N=%ld: not JSON: %s", n, act->m[i]);
    bool ok = false;
    for (size_t j = 0; j < ng && !ok; j++)
      if (!seen[j] && g[j] && cJSON_Compare(a, g[j], 1))
        ok = seen[j] = true;
    /* A question to the client whose answer was lost stays open until end
     * of input, which withdraws it: notifications/cancelled naming one of
     * the server's golden requests. */
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(a, "method");
    if (!ok && failures() > 0 && cJSON_IsString(method) &&
        strcmp(method->valuestring, "notifications/cancelled") == 0) {
      const cJSON *rid = cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(a, "params"), "requestId");
      for (size_t j = 0; j < ng && !ok; j++)
        ok =
            g[j] && cJSON_GetObjectItemCaseSensitive(g[j], "method") &&
            cJSON_Compare(cJSON_GetObjectItemCaseSensitive(g[j], "id"), rid, 1);
    }
    if (ok) {
      cJSON_Delete(a);
      continue;
    }
    ck_assert_msg(
        error_code(a) != 0 &&
            id_of_a_response(cJSON_GetObjectItemCaseSensitive(a, "id"), g, ng),
        "stdio N=%ld (%s): wrong answer %s", n, MODE_NAMES[mode], act->m[i]);
    errs[nerr++] = a;
  }
  /* The first golden response missing. The deferred call's reply is not
   * owed in "from" mode: end of input may come first, and cancels it by
   * design (BAD-INPUTS I4). */
  for (size_t j = 0; j < ng; j++) {
    if (seen[j] || g[j] == NULL || !is_response(g[j]))
      continue;
    const cJSON *gid = cJSON_GetObjectItemCaseSensitive(g[j], "id");
    if (mode == MODE_FROM && cJSON_IsNumber(gid) &&
        gid->valueint == STDIO_DEFERRED_ID)
      continue;
    ck_assert_msg(failures() > 0,
                  "stdio N=%ld (%s): %s not answered, yet no allocation failed",
                  n, MODE_NAMES[mode], stdio_golden.m[j]);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(g[j], "id");
    for (size_t e = 0; e < nerr; e++)
      if (cJSON_Compare(cJSON_GetObjectItemCaseSensitive(errs[e], "id"), id, 1))
        ck_assert_msg(error_code(errs[e]) == -32603,
                      "stdio N=%ld (%s): the first failed request, %s, got "
                      "error %d instead of -32603",
                      n, MODE_NAMES[mode], stdio_golden.m[j],
                      error_code(errs[e]));
    break;
  }
  for (size_t e = 0; e < nerr; e++)
    cJSON_Delete(errs[e]);
  for (size_t j = 0; j < ng; j++)
    cJSON_Delete(g[j]);
  free(errs);
  free(g);
  free(seen);
  exempt--;
}

/* A fresh stdio stream on srv: initialize and a call answered. */
static void stdio_fresh_stream(mcp_server *srv, long n) {
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  stdio_run r = {.srv = srv, .fd = sv[1]};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, serve_thread, &r), 0);
  static const char *const lines[] = {INIT_LEGACY("1"), INITIALIZED,
                                      CALL("2", "echo", "{\"text\":\"x\"}")};
  write_lines(sv[0], lines, TU_COUNT(lines));
  msgs got = {0};
  lc_buf pending = {0};
  bool found = read_lines(sv[0], &pending, &got, "\"id\":2", NULL, &r, 10000);
  ck_assert_msg(found, "stdio N=%ld: a fresh stream was not served", n);
  exempt++;
  cJSON *m = cJSON_Parse(got.m[got.n - 1]);
  tu_assert_json(m, "{\"id\":2,\"result\":{\"content\":[{\"text\":\"x\"}]}}");
  cJSON_Delete(m);
  exempt--;
  shutdown(sv[0], SHUT_WR);
  pthread_join(th, NULL);
  ck_assert_int_eq(r.rc, 0);
  close(sv[0]);
  close(sv[1]);
  msgs_free(&got);
  lc_buf_free(&pending);
}

static long run_stdio(long n, int mode) {
  fx_reset();
  defer_by_thread = true;
  ck_assert_int_eq(atomic_load(&A.live_mcp), 0);
  mcp_server *srv = NULL;
  ck_assert_int_eq(fx_server(&srv), 0);
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  stdio_run r = {.srv = srv, .fd = sv[1]};
  msgs got = {0};
  lc_buf pending = {0};

  arm(n, mode);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, serve_thread, &r), 0);
  write_lines(sv[0], STDIO_SCRIPT, TU_COUNT(STDIO_SCRIPT));
  long counted;
  if (n == 0 || mode == MODE_ONCE) {
    /* One failure at most: one of the two pings is answered, and then
     * everything before them was handled. */
    bool found = read_lines(sv[0], &pending, &got, "\"after1\"", "\"after2\"",
                            &r, 15000);
    /* Or the transport gave up at once: no session, or no read buffer. */
    ck_assert_msg(found || (atomic_load(&r.finished) && r.rc == MCP_ENOMEM &&
                            failures() > 0),
                  "stdio N=%ld: neither closing ping was answered", n);
    counted = disarm();
    if (found) {
      /* The same stream serves on; when initialize was not answered, the
       * client may send it again. */
      bool initialized = false;
      for (size_t i = 0; i < got.n; i++)
        initialized |= strncmp(got.m[i],
                               "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                               "\"protocolVersion\"",
                               51) == 0;
      static const char *const ping[] = {RQ0("\"again\"", "ping")};
      static const char *const init[] = {INIT_LEGACY("\"again\"")};
      write_lines(sv[0], initialized ? ping : init, 1);
      found = read_lines(sv[0], &pending, &got, "\"again\"", NULL, &r, 15000);
      ck_assert_msg(found, "stdio N=%ld: the stream stopped serving", n);
      exempt++;
      cJSON *m = cJSON_Parse(got.m[got.n - 1]);
      tu_assert_json(m, initialized ? "{\"id\":\"again\",\"result\":{}}"
                                    : "{\"id\":\"again\",\"result\":{"
                                      "\"protocolVersion\":\"2025-11-25\"}}");
      cJSON_Delete(m);
      exempt--;
      free(got.m[--got.n]);
    }
    /* The deferred call was handed to its thread before the pings were
     * read: once that has finished, end of input cancels nothing. */
    finish_deferred();
    shutdown(sv[0], SHUT_WR);
    pthread_join(th, NULL);
    read_lines(sv[0], &pending, &got, NULL, NULL, &r, 2000);
  } else {
    shutdown(sv[0], SHUT_WR);
    read_lines(sv[0], &pending, &got, NULL, NULL, &r, 30000);
    pthread_join(th, NULL);
    counted = disarm();
    read_lines(sv[0], &pending, &got, NULL, NULL, &r, 1000);
  }
  ck_assert_msg(r.rc == 0 || r.rc == MCP_ENOMEM,
                "stdio N=%ld: mcp_serve_stdio returned %s", n,
                mcp_strerror(r.rc));
  finish_deferred();
  close(sv[0]);
  close(sv[1]);

  if (n == 0) {
    ck_assert_int_eq(r.rc, 0);
    msgs_copy(&stdio_golden, &got);
    bool asked = false;
    for (size_t i = 0; i < got.n; i++)
      asked |= strstr(got.m[i], "\"id\":1,\"method\":\"elicitation/create\"") !=
               NULL;
    ck_assert_msg(asked, "the elicitation was not the server's request 1");
  } else {
    judge_stdio(&got, n, mode);
  }
  stdio_fresh_stream(srv, n);
  mcp_server_free(srv);
  msgs_free(&got);
  lc_buf_free(&pending);
  ck_assert_msg(atomic_load(&A.live_mcp) == 0, "stdio N=%ld (%s): %ld leaked",
                n, MODE_NAMES[mode], atomic_load(&A.live_mcp));
  return counted;
}

START_TEST(stdio) { torture("stdio", run_stdio, _i); }
END_TEST

/* ===========================================================================
 * The HTTP transport, in-process, over loopback
 * ======================================================================== */

#define ISSUER "https://as.torture.test"
#define RESOURCE "https://mcp.torture.test/mcp"

typedef struct hstep {
  int flow;          /* steps of a flow depend on the previous ones */
  const char *verb;  /* NULL = POST */
  const char *body;  /* @STATE@ expands */
  bool session;      /* send the flow's Mcp-Session-Id */
  bool modern;       /* 2026-07-28 headers */
  const char *mname; /* Mcp-Name for modern tools/call */
  int token;         /* 0 none, 1 valid, 2 forged */
  bool jwt;          /* also a step of the JWT scenario */
} hstep;

enum { FLOW_LEGACY = 0, FLOW_MODERN = 1, FLOW_FORGED = 2, NFLOWS = 3 };

#define LEG(body)                                                              \
  { FLOW_LEGACY, NULL, body, true, false, NULL, 1, false }
#define LEGJ(body)                                                             \
  { FLOW_LEGACY, NULL, body, true, false, NULL, 1, true }
#define MOD(body, name)                                                        \
  { FLOW_MODERN, NULL, body, false, true, name, 1, false }
#define MODJ(body, name)                                                       \
  { FLOW_MODERN, NULL, body, false, true, name, 1, true }

/* The JWT scenario runs the steps marked jwt: the token is verified on
 * every request, and the HTTP scenario covers the rest. */
static const hstep HTTP_STEPS[] = {
    {FLOW_LEGACY, NULL, INIT_LEGACY("1"), false, false, NULL, 1, true},
    LEGJ(INITIALIZED),
    LEG(RQ0("2", "tools/list")),
    LEGJ(CALL("3", "echo", "{\"text\":\"hi\"}")),
    LEG(RQ("4", "tools/call",
           "{\"name\":\"progress\",\"arguments\":{},\"_meta\":{"
           "\"progressToken\":\"p4\"}}")),
    LEG(CALL("5", "defer", "{}")),
    LEG(RQ("6", "prompts/get",
           "{\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}}")),
    LEG(RQ("7", "resources/read", "{\"uri\":\"file:///notes/abc\"}")),
    LEG(RQ("8", "completion/complete",
           "{\"ref\":" PROMPT_REF
           ",\"argument\":{\"name\":\"name\",\"value\":\"al\"}}")),
    LEG("{\"jsonrpc\":"),
    {FLOW_LEGACY, "DELETE", NULL, true, false, NULL, 1, true},
    MODJ(MCALL("1", "echo", "{\"text\":\"hi\"}", "{}"), "echo"),
    MOD(MCALL("2", "ask", "{}", "{\"elicitation\":{}}"), "ask"),
    MOD(MRQ("3", "tools/call", "{\"elicitation\":{}}",
            ",\"name\":\"ask\",\"arguments\":{},\"requestState\":"
            "\"@STATE@\",\"inputResponses\":{\"q\":" ACCEPT "}"),
        "ask"),
    MOD(MCALL("4", "struct", "{}", "{}"), "struct"),
    {FLOW_FORGED, NULL, MCALL("1", "echo", "{\"text\":\"hi\"}", "{}"), false,
     true, "echo", 2, true},
};

typedef struct hgold {
  long status;
  msgs m;
} hgold;

static struct {
  mcp_server *srv;
  mcp_http *http;
  uint16_t port;
  CURL *curl;
  bool jwt;
  char *token, *forged;
  long base_mcp, base_ossl;
  hgold gold[TU_COUNT(HTTP_STEPS)];
} H;

/* Signing: one P-256 key made in main, before any fork. */
static EVP_PKEY *ec_key;
static char *ec_jwks;

static void key_make(void) {
  ec_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (ec_key == NULL)
    abort();
  char *jwk = tc_jwk(ec_key, "k1", "\"use\":\"sig\",\"alg\":\"ES256\"", 0);
  lc_buf j = {0};
  lc_buf_fmt(&j, "{\"keys\":[%s]}", jwk);
  free(jwk);
  ec_jwks = j.p;
}

/* An ES256 token for alice, valid for an hour. */
static char *token_make(void) {
  long long now = (long long)time(NULL);
  lc_buf p = {0};
  lc_buf_fmt(&p,
             "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"alice\",\"scope\":"
             "\"read\",\"iat\":%lld,\"exp\":%lld}",
             ISSUER, RESOURCE, now, now + 3600);
  char *t = tc_jwt("{\"alg\":\"ES256\",\"typ\":\"at+jwt\",\"kid\":\"k1\"}", p.p,
                   "ES256", ec_key);
  lc_buf_free(&p);
  return t;
}

/* One request of step st; sid is the flow's session (or NULL). */
static void http_step(const hstep *st, const char *sid, lc_resp *r) {
  char *body = st->body ? expand(st->body) : NULL;
  char auth[2048], mm[128], mn[128];
  lc_req q = {.method = st->verb, .body = body};
  int k = 0;
  if (st->session) {
    q.session = sid;
    q.version = LC_LEGACY;
  }
  if (st->modern) {
    q.version = LC_MODERN;
    exempt++;
    cJSON *b = cJSON_Parse(body);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(b, "method");
    snprintf(mm, sizeof mm, "Mcp-Method: %s",
             cJSON_IsString(m) ? m->valuestring : "");
    cJSON_Delete(b);
    exempt--;
    q.headers[k++] = mm;
    if (st->mname) {
      snprintf(mn, sizeof mn, "Mcp-Name: %s", st->mname);
      q.headers[k++] = mn;
    }
  }
  if (H.jwt && st->token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s",
             st->token == 1 ? H.token : H.forged);
    q.headers[k++] = auth;
  }
  lc_http(H.curl, H.port, &q, r);
  free(body);
}

/* The messages of r as msgs (each printed compact); false when the body
 * is not JSON-RPC. */
static bool resp_msgs(const lc_resp *r, msgs *out) {
  exempt++;
  cJSON *arr = lc_messages(r);
  bool ok = arr != NULL;
  for (const cJSON *m = arr ? arr->child : NULL; m; m = m->next) {
    char *t = cJSON_PrintUnformatted(m);
    if (t == NULL)
      abort();
    msgs_add(out, t, strlen(t));
    cJSON_free(t);
  }
  cJSON_Delete(arr);
  exempt--;
  return ok;
}

/* Waits (bounded) until the blocks counted are back to the baseline: the
 * server frees a request's engine state after the client has its answer. */
static void wait_baseline(const char *what, long n, int mode) {
  long deadline = lc_now_ms() + (lc_slow_run() ? 20000 : 5000);
  while ((atomic_load(&A.live_mcp) != H.base_mcp ||
          tc_ossl_live() != H.base_ossl) &&
         lc_now_ms() < deadline)
    lc_sleep_ms(2);
  ck_assert_msg(atomic_load(&A.live_mcp) == H.base_mcp &&
                    tc_ossl_live() == H.base_ossl,
                "%s N=%ld (%s): %ld libmcp and %ld OpenSSL blocks leaked", what,
                n, MODE_NAMES[mode], atomic_load(&A.live_mcp) - H.base_mcp,
                tc_ossl_live() - H.base_ossl);
}

/* A new legacy session answers a call, and a modern request is served. */
static void http_keeps_serving(const char *what, long n) {
  static const hstep init = {
      FLOW_LEGACY, NULL, INIT_LEGACY("1"), false, false, NULL, 1, true};
  static const hstep ready = LEG(INITIALIZED);
  static const hstep call = LEG(CALL("2", "echo", "{\"text\":\"x\"}"));
  static const hstep del = {FLOW_LEGACY, "DELETE", NULL, true,
                            false,       NULL,     1,    true};
  static const hstep modern =
      MOD(MCALL("3", "echo", "{\"text\":\"y\"}", "{}"), "echo");
  lc_resp r;
  char sid[256];
  http_step(&init, NULL, &r);
  ck_assert_msg(r.status == 200 &&
                    lc_resp_header(&r, "Mcp-Session-Id", sid, sizeof sid),
                "%s N=%ld: after the failures, initialize got HTTP %ld %s",
                what, n, r.status, r.body.p ? r.body.p : "");
  lc_resp_free(&r);
  http_step(&ready, sid, &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  const hstep *calls[] = {&call, &modern};
  const char *texts[] = {"x", "y"};
  for (int i = 0; i < 2; i++) {
    http_step(calls[i], sid, &r);
    msgs m = {0};
    ck_assert_msg(r.status == 200 && resp_msgs(&r, &m) && m.n == 1,
                  "%s N=%ld: after the failures, a call got HTTP %ld %s", what,
                  n, r.status, r.body.p ? r.body.p : "");
    exempt++;
    cJSON *j = cJSON_Parse(m.m[0]);
    char expected[128];
    snprintf(expected, sizeof expected,
             "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}}",
             texts[i]);
    tu_assert_json(j, expected);
    cJSON_Delete(j);
    exempt--;
    msgs_free(&m);
    lc_resp_free(&r);
  }
  http_step(&del, sid, &r);
  ck_assert_msg(r.status == 200 || r.status == 204, "DELETE: HTTP %ld",
                r.status);
  lc_resp_free(&r);
}

static const char *const SERVERS[] = {ISSUER, NULL};

static void http_setup(bool jwt) {
  exempt = 1; /* the test thread is a client here: only the server counts */
  memset(&H, 0, sizeof H);
  H.jwt = jwt;
  fx_reset();
  defer_by_thread = true;
  ck_assert_int_eq(fx_server(&H.srv), 0);
  mcp_auth_options auth = {.resource = RESOURCE,
                           .authorization_servers = SERVERS,
                           .issuer = ISSUER,
                           .jwks = ec_jwks};
  mcp_http_options o = {.auth = jwt ? &auth : NULL};
  ck_assert_int_eq(mcp_http_start(H.srv, &o, &H.http), 0);
  H.port = mcp_http_port(H.http);
  H.curl = curl_easy_init();
  ck_assert_ptr_nonnull(H.curl);
  if (jwt) {
    H.token = token_make();
    H.forged = strdup(H.token);
    ck_assert_ptr_nonnull(H.forged);
    char *sig = strrchr(H.forged, '.') + 1;
    sig[5] = sig[5] == 'A' ? 'B' : 'A';
  }
}

static void http_teardown(void) {
  finish_deferred();
  curl_easy_cleanup(H.curl);
  mcp_http_stop(H.http);
  mcp_server_free(H.srv);
  for (size_t i = 0; i < TU_COUNT(H.gold); i++)
    msgs_free(&H.gold[i].m);
  free(H.token);
  free(H.forged);
  exempt = 0;
}

/* One run of the HTTP steps: golden when n == 0. */
static long http_run(long n, int mode) {
  const char *what = H.jwt ? "http_jwt" : "http";
  bool dead[NFLOWS] = {false};
  char sid[256] = "";
  g_state[0] = '\0';
  atomic_store(&oom_logs, 0);
  if (n)
    wait_baseline(what, 0, mode);

  arm(n, mode);
  for (size_t i = 0; i < TU_COUNT(HTTP_STEPS); i++) {
    const hstep *st = &HTTP_STEPS[i];
    if (dead[st->flow] || (!H.jwt && st->token == 2) || (H.jwt && !st->jwt))
      continue;
    lc_resp r;
    http_step(st, sid, &r);
    finish_deferred();
    msgs m = {0};
    bool parsed = resp_msgs(&r, &m);
    if (i == 0 && r.status == 200)
      lc_resp_header(&r, "Mcp-Session-Id", sid, sizeof sid);
    if (n == 0) {
      ck_assert_msg(parsed, "%s step %zu: HTTP %ld, body %s", what, i, r.status,
                    r.body.p ? r.body.p : "");
      H.gold[i].status = r.status;
      msgs_copy(&H.gold[i].m, &m);
      note_placeholders(&m);
      msgs_free(&m);
      lc_resp_free(&r);
      continue;
    }
    const hgold *g = &H.gold[i];
    bool complete = false;
    if (getenv("TORTURE_VERBOSE"))
      printf("%s N=%ld step %zu: HTTP %ld (golden %ld), failures so far %ld: "
             "%.300s\n",
             what, n, i, r.status, g->status, failures(),
             r.body.p ? r.body.p : "");
    if (st->token == 2) {
      /* A forged token is never accepted, whatever fails. */
      ck_assert_msg(r.status == 401 || r.status >= 500 || r.status == 0,
                    "%s N=%ld (%s): a forged token got HTTP %ld", what, n,
                    MODE_NAMES[mode], r.status);
      complete = r.status == 401;
    } else if (r.status == g->status && parsed) {
      verdict v = judge_msgs(&g->m, &m, st->body);
      ck_assert_msg(v.wrong[0] == '\0',
                    "%s N=%ld (%s) step %zu: HTTP %ld, wrong answer %s", what,
                    n, MODE_NAMES[mode], i, r.status, v.wrong);
      complete = v.complete;
    } else if (r.status >= 500 ||
               (r.status == 0 && r.curl_rc != CURLE_OPERATION_TIMEDOUT)) {
      /* A clean failure: a 5xx with a JSON-RPC error (or none), or the
       * connection closed. */
      exempt++;
      for (size_t k = 0; parsed && k < m.n; k++) {
        cJSON *j = cJSON_Parse(m.m[k]);
        int code = error_code(j);
        ck_assert_msg(code == -32603 || code == -32000,
                      "%s N=%ld (%s) step %zu: HTTP %ld with %s", what, n,
                      MODE_NAMES[mode], i, r.status, m.m[k]);
        cJSON_Delete(j);
      }
      exempt--;
    } else if (H.jwt && r.status == 401 && st->token == 1) {
      /* The token could not be verified: refused, never accepted. */
    } else {
      ck_assert_msg(0, "%s N=%ld (%s) step %zu: HTTP %ld (golden %ld): %s",
                    what, n, MODE_NAMES[mode], i, r.status, g->status,
                    r.body.p ? r.body.p : "");
    }
    if (complete) {
      note_placeholders(&m);
    } else {
      ck_assert_msg(failures() > 0,
                    "%s N=%ld (%s) step %zu: HTTP %ld not as in the golden "
                    "run, yet no allocation failed: %s",
                    what, n, MODE_NAMES[mode], i, r.status,
                    r.body.p ? r.body.p : "");
      dead[st->flow] = true;
    }
    msgs_free(&m);
    lc_resp_free(&r);
  }
  long counted = disarm();

  /* The session the flow opened ends, whatever happened to it. */
  if (sid[0] && dead[FLOW_LEGACY]) {
    static const hstep del = {FLOW_LEGACY, "DELETE", NULL, true,
                              false,       NULL,     1,    true};
    lc_resp r;
    http_step(&del, sid, &r);
    ck_assert_msg(r.status == 200 || r.status == 204 || r.status == 404,
                  "%s N=%ld: DELETE after the failures: HTTP %ld", what, n,
                  r.status);
    lc_resp_free(&r);
  }
  http_keeps_serving(what, n);
  finish_deferred();
  if (n == 0) {
    /* The baseline: what the server holds between requests. */
    lc_sleep_ms(50);
    H.base_mcp = atomic_load(&A.live_mcp);
    H.base_ossl = tc_ossl_live();
  } else {
    wait_baseline(what, n, mode);
  }
  return counted;
}

static void http_torture(bool jwt, int mode) {
  if (!mode_selected(mode))
    return;
  if (jwt)
    ck_assert_msg(ossl_hooked, "CRYPTO_set_mem_functions failed");
  http_setup(jwt);
  /* A warm-up run first, so OpenSSL's and the server's one-time state
   * (algorithm caches, the thread's random generator) is in place before
   * the golden run counts. */
  http_run(0, mode);
  torture(jwt ? "http_jwt" : "http", http_run, mode);
  http_teardown();
}

START_TEST(http) { http_torture(false, _i); }
END_TEST

START_TEST(http_jwt) { http_torture(true, _i); }
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

int main(void) {
  /* Before OpenSSL allocates anything, or it refuses. */
  ossl_hooked = tc_ossl_count_install(o_fail);
  mcp_allocator a = {
      .malloc_fn = m_malloc, .realloc_fn = m_realloc, .free_fn = m_free};
  if (mcp_set_allocator(&a) != 0)
    return EXIT_FAILURE;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  key_make();

  Suite *s = suite_create("torture");
  struct {
    const char *name;
    const TTest *test;
  } cases[] = {{"registry", registry},
               {"engine_legacy", engine_legacy},
               {"engine_modern", engine_modern},
               {"stdio", stdio},
               {"http", http},
               {"http_jwt", http_jwt}};
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    TCase *t = tcase_create(cases[i].name);
    tcase_set_timeout(t, 900);
    tcase_add_loop_test(t, cases[i].test, MODE_ONCE, MODE_FROM + 1);
    suite_add_tcase(s, t);
  }
  int rc = tu_run(s);
  EVP_PKEY_free(ec_key);
  free(ec_jwks);
  curl_global_cleanup();
  return rc;
}
