/* Tests for lib/engine/limits.c and lib/policy/ratelimit.c: the maximum
 * result size (bad input F14), the per-principal rate limit of tools/call
 * (F16); and for the deadlines of lib/engine/call.c's state machine, with
 * mcp_server_next_expiry_ms / mcp_server_expire (F18), in both protocol eras
 * (2025-11-25 sessions after initialize, 2026-07-28 stateless requests),
 * with their audit records and an every-allocation-failure loop.
 *
 * Timing: deadlines are short and every wait for one is a loop with a
 * generous bound; no test asserts that something happened quickly. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "tools.h"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- handlers ------------------------------------------------------------ */

typedef enum mode {
  M_TEXT = 0,   /* one text block "ok" */
  M_BIG,        /* g_big bytes of text in one block */
  M_PIECES,     /* 1000-byte blocks until a builder refuses */
  M_IMAGE,      /* g_big bytes of image */
  M_STRUCTURED, /* structuredContent with a g_big-byte string */
  M_BLOB,       /* resource_blob of g_big bytes */
  M_WAIT,       /* polls mcp_call_cancelled (10 s at most), then "done" */
  M_DEFER,      /* stashes the call and defers */
  M_ASK,        /* asks for elicitation */
} mode;

static mode g_mode;
static size_t g_big;
static int g_runs;       /* handler invocations */
static int g_rc;         /* the last builder's result */
static bool g_cancelled; /* M_WAIT saw mcp_call_cancelled */
static bool g_return_rc; /* return the builder's result, not 0 */
static mcp_call *g_stash;

static char *filled(size_t n) {
  char *s = malloc(n + 1);
  ck_assert_ptr_nonnull(s);
  memset(s, 'a', n);
  s[n] = '\0';
  return s;
}

static int handler(mcp_call *call, void *user_data) {
  (void)user_data;
  g_runs++;
  g_rc = 0;
  switch (g_mode) {
  case M_TEXT:
    g_rc = mcp_result_text(call, "ok");
    break;
  case M_BIG: {
    char *s = filled(g_big);
    g_rc = mcp_result_text(call, s);
    free(s);
    break;
  }
  case M_PIECES: {
    char *s = filled(1000);
    for (int i = 0; i < 100000 && g_rc == 0; i++)
      g_rc = mcp_result_text(call, s);
    /* Once latched, every builder says the same. */
    ck_assert_int_eq(mcp_result_text(call, "x"), g_rc);
    free(s);
    break;
  }
  case M_IMAGE: {
    char *s = filled(g_big);
    g_rc = mcp_result_image(call, s, g_big, "image/png");
    free(s);
    break;
  }
  case M_STRUCTURED: {
    char *s = filled(g_big);
    char *json = tu_text("{\"s\":\"%s\"}", s);
    g_rc = mcp_result_structured(call, json);
    free(json);
    free(s);
    break;
  }
  case M_BLOB: {
    char *s = filled(g_big);
    g_rc = mcp_result_resource_blob(call, "file:///r", "text/plain", s, g_big);
    free(s);
    break;
  }
  case M_WAIT:
    for (int i = 0; i < 2000 && !mcp_call_cancelled(call); i++)
      sleep_ms(5);
    g_cancelled = mcp_call_cancelled(call);
    g_rc = mcp_result_text(call, "done");
    break;
  case M_DEFER:
    g_stash = call;
    return MCP_DEFERRED;
  case M_ASK:
    if (mcp_call_input(call, "confirm") == NULL) {
      g_rc = mcp_call_request_input(
          call, "confirm", MCP_INPUT_ELICITATION,
          "{\"mode\":\"form\",\"message\":\"Sure?\",\"requestedSchema\":{"
          "\"type\":\"object\",\"properties\":{}}}");
      return MCP_INPUT_REQUIRED;
    }
    g_rc = mcp_result_text(call, "confirmed");
    break;
  }
  return g_return_rc ? g_rc : 0;
}

/* ---- fixture --------------------------------------------------------------
 */

static const char *const ADMIN[] = {"admin", NULL};
static const mcp_tool T_WORK = {.name = "work",
                                .description = "Does the work of g_mode.",
                                .annotations = TC_READ_ONLY,
                                .handler = handler};
static const mcp_tool T_ADMIN = {.name = "admin_only",
                                 .description = "Needs admin.",
                                 .scopes = ADMIN,
                                 .annotations = TC_READ_ONLY,
                                 .handler = handler};
static const mcp_tool T_DENIED = {.name = "denied",
                                  .description = "The authorizer says no.",
                                  .annotations = TC_READ_ONLY,
                                  .handler = handler};
static const mcp_tool T_TYPED = {
    .name = "typed",
    .description = "Takes a number.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"number\"}},\"required\":[\"n\"]}",
    .annotations = TC_READ_ONLY,
    .handler = handler};
static const mcp_prompt P_WORK = {
    .name = "p", .description = "A prompt.", .handler = handler};
static const mcp_resource R_WORK = {.uri = "file:///r",
                                    .name = "r",
                                    .mime_type = "text/plain",
                                    .handler = handler};

static const mcp_principal ALICE = {.subject = "alice", .all_scopes = false};
static const mcp_principal BOB = {.subject = "bob"};

static mcp_server *srv;
static tu_peer P;

/* Audit records: sessions on several threads audit at once in
 * f16_threads_share_one_bucket, so under a lock (tests read them after
 * joining the threads). */
static pthread_mutex_t g_audit_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_audits;
static mcp_audit_record g_audit; /* the last (pointers not kept) */

static void audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&g_audit_lock);
  g_audits++;
  g_audit = *r;
  g_audit.tool = NULL;
  g_audit.subject = NULL;
  g_audit.missing_scopes = NULL;
  pthread_mutex_unlock(&g_audit_lock);
}

static int authorize(const mcp_principal *p, const char *tool,
                     const cJSON *args, char *reason, size_t size,
                     void *user_data) {
  (void)p, (void)args, (void)user_data;
  if (strcmp(tool, "denied") != 0)
    return 0;
  snprintf(reason, size, "never");
  return 1;
}

static void add_all(mcp_server *s) {
  ck_assert_int_eq(mcp_server_add_tool(s, &T_WORK, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &T_ADMIN, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &T_DENIED, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &T_TYPED, NULL), 0);
  ck_assert_int_eq(mcp_server_add_prompt(s, &P_WORK, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &R_WORK, NULL), 0);
  mcp_server_set_log(s, tu_silent_log, NULL);
  mcp_server_set_audit(s, audit, NULL);
  mcp_server_set_authorizer(s, authorize, NULL);
}

static void setup(void) {
  g_mode = M_TEXT;
  g_big = 0;
  g_runs = g_rc = g_audits = 0;
  g_cancelled = g_return_rc = false;
  g_stash = NULL;
  const mcp_server_info info = {.name = "limits", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  add_all(srv);
  tu_peer_open(&P, srv, &ALICE);
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
}

/* The two eras' requests of one method: legacy (on an initialized session)
 * and modern (_meta, on a fresh session). */
static char *tool_call(bool modern, int id, const char *name,
                       const char *args) {
  char idt[16];
  snprintf(idt, sizeof idt, "%d", id);
  return tu_call_text(idt, name, args ? args : "{}",
                      modern ? TU_META_NONE : NULL);
}

static char *prompt_get(bool modern, int id) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"prompts/get\","
                 "\"params\":{\"name\":\"p\"%s}}",
                 id, modern ? ",\"_meta\":" TU_META_NONE : "");
}

static char *resource_read(bool modern, int id) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\","
                 "\"params\":{\"uri\":\"file:///r\"%s}}",
                 id, modern ? ",\"_meta\":" TU_META_NONE : "");
}

/* A peer of the era: P initialized for legacy, or a new session of the
 * same caller for modern. */
static tu_peer *era_peer(bool modern, tu_peer *fresh,
                         const mcp_principal *who) {
  if (!modern) {
    if (mcp_session_protocol_version(P.session) == NULL)
      tu_initialize(&P, "2025-11-25");
    return &P;
  }
  tu_peer_open(fresh, srv, who);
  return fresh;
}

/* The text of a tool result's first block, or "". */
static const char *result_text(const cJSON *m) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "result"), "content");
  const cJSON *t =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(c, 0), "text");
  return cJSON_IsString(t) ? t->valuestring : "";
}

static const char *error_message(const cJSON *m) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "error"), "message");
  return cJSON_IsString(t) ? t->valuestring : "";
}

/* ===========================================================================
 * F14: the maximum result size
 * ======================================================================== */

static void too_large_tool(bool modern, mode how, size_t big) {
  tu_peer fresh, *p = era_peer(modern, &fresh, &ALICE);
  mcp_server_set_max_result(srv, 1024);
  g_mode = how;
  g_big = big;
  g_audits = 0;
  cJSON *m = tu_ask(p, tool_call(modern, 7, "work", NULL));
  tu_assert_json(m, modern ? "{\"id\":7,\"result\":{\"resultType\":"
                             "\"complete\",\"isError\":true,"
                             "\"structuredContent\":\"<absent>\"}}"
                           : "{\"id\":7,\"result\":{\"isError\":true,"
                             "\"structuredContent\":\"<absent>\"}}");
  ck_assert_str_eq(result_text(m), "result too large: limit 1024 bytes");
  ck_assert_int_eq(g_rc, MCP_ELIMIT);
  ck_assert_int_eq(g_audits, 1);
  ck_assert_int_eq(g_audit.decision, MCP_DECISION_ALLOWED);
  ck_assert(g_audit.is_error);
  ck_assert(!g_audit.failed);
  cJSON_Delete(m);
  if (modern)
    tu_peer_close(&fresh);
}

START_TEST(f14_text_too_large_is_error) {
  too_large_tool(false, M_BIG, 2000);
  too_large_tool(true, M_BIG, 2000);
  /* Returning the builder's MCP_ELIMIT says the same, not -32603. */
  g_return_rc = true;
  too_large_tool(false, M_BIG, 2000);
  too_large_tool(true, M_BIG, 2000);
}
END_TEST

START_TEST(f14_every_builder_is_capped) {
  for (int modern = 0; modern < 2; modern++) {
    too_large_tool(modern, M_PIECES, 0);
    too_large_tool(modern, M_IMAGE, 800); /* 1068 bytes of base64 */
    too_large_tool(modern, M_STRUCTURED, 2000);
    too_large_tool(modern, M_STRUCTURED, 700); /* fits, its mirror not */
  }
}
END_TEST

START_TEST(f14_under_the_cap_is_served) {
  tu_initialize(&P, "2025-11-25");
  mcp_server_set_max_result(srv, 1024);
  g_mode = M_BIG;
  g_big = 900;
  cJSON *m = tu_ask(&P, tool_call(false, 1, "work", NULL));
  tu_assert_json(m, "{\"result\":{\"isError\":\"<absent>\"}}");
  ck_assert_uint_eq(strlen(result_text(m)), 900);
  cJSON_Delete(m);
  /* 0 restores the default (16 MiB): a megabyte passes. */
  mcp_server_set_max_result(srv, 0);
  g_big = 1 << 20;
  m = tu_ask(&P, tool_call(false, 2, "work", NULL));
  ck_assert_uint_eq(strlen(result_text(m)), (size_t)1 << 20);
  cJSON_Delete(m);
  mcp_server_set_max_result(NULL, 5); /* harmless */
}
END_TEST

START_TEST(f14_prompt_and_resource_get_json_rpc_error) {
  for (int modern = 0; modern < 2; modern++) {
    tu_peer fresh, *p = era_peer(modern, &fresh, &ALICE);
    mcp_server_set_max_result(srv, 1024);
    g_mode = M_BIG;
    g_big = 4000;
    cJSON *m = tu_ask(p, prompt_get(modern, 3));
    tu_assert_json(m, "{\"id\":3,\"error\":{\"code\":-32603},"
                      "\"result\":\"<absent>\"}");
    ck_assert_str_eq(error_message(m),
                     "Internal error: result too large: limit 1024 bytes");
    cJSON_Delete(m);
    m = tu_ask(p, resource_read(modern, 4));
    tu_assert_json(m, "{\"id\":4,\"error\":{\"code\":-32603}}");
    ck_assert_ptr_nonnull(strstr(error_message(m), "result too large"));
    cJSON_Delete(m);
    g_mode = M_BLOB;
    m = tu_ask(p, resource_read(modern, 5));
    tu_assert_json(m, "{\"id\":5,\"error\":{\"code\":-32603}}");
    cJSON_Delete(m);
    if (modern)
      tu_peer_close(&fresh);
  }
}
END_TEST

/* The bytes the cap counts in a result: the items of its list (content,
 * contents or messages) as the builders wrote them, compact and
 * comma-separated. */
static size_t list_bytes(const cJSON *m, const char *list) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "result"), list);
  ck_assert_msg(cJSON_IsArray(a), "no %s", list);
  char *text = cJSON_PrintUnformatted(a);
  size_t n = strlen(text) - 2; /* without the brackets */
  cJSON_free(text);
  return n;
}

/* A result of exactly the cap is served and one byte less refuses it, for
 * every kind and era: what the reply adds around the result never counts
 * (the head of a tool's or a resource's reply is written into the same
 * buffer as its blocks). */
START_TEST(f14_the_cap_is_exact) {
  static const char *const lists[] = {"content", "messages", "contents"};
  g_mode = M_BIG;
  g_big = 100;
  for (int modern = 0; modern < 2; modern++) {
    for (int kind = 0; kind < 3; kind++) {
      tu_peer fresh, *p = era_peer(modern, &fresh, &ALICE);
      char *(*ask[])(bool, int) = {NULL, prompt_get, resource_read};
      mcp_server_set_max_result(srv, 0);
      cJSON *m = tu_ask(p, kind ? ask[kind](modern, 1)
                                : tool_call(modern, 1, "work", NULL));
      size_t size = list_bytes(m, lists[kind]);
      cJSON_Delete(m);
      mcp_server_set_max_result(srv, size);
      m = tu_ask(p, kind ? ask[kind](modern, 2)
                         : tool_call(modern, 2, "work", NULL));
      ck_assert_uint_eq(list_bytes(m, lists[kind]), size);
      tu_assert_json(m, "{\"result\":{\"isError\":\"<absent>\"}}");
      cJSON_Delete(m);
      mcp_server_set_max_result(srv, size - 1);
      m = tu_ask(p, kind ? ask[kind](modern, 3)
                         : tool_call(modern, 3, "work", NULL));
      char want[64];
      snprintf(want, sizeof want, "result too large: limit %zu bytes",
               size - 1);
      if (kind == 0)
        ck_assert_str_eq(result_text(m), want);
      else
        tu_assert_json(m, "{\"error\":{\"code\":-32603}}");
      cJSON_Delete(m);
      if (modern)
        tu_peer_close(&fresh);
    }
  }
}
END_TEST

/* Watches the size of every allocation libmcp makes. */
static size_t g_largest;
static void *big_malloc(size_t n, void *u) {
  (void)u;
  g_largest = n > g_largest ? n : g_largest;
  return malloc(n);
}
static void *big_realloc(void *p, size_t n, void *u) {
  (void)u;
  g_largest = n > g_largest ? n : g_largest;
  return realloc(p, n);
}
static void big_free(void *p, void *u) {
  (void)u;
  free(p);
}

/* The row itself: a handler returning 50 MB under the default cap. */
START_TEST(f14_fifty_megabytes_never_built) {
  const mcp_allocator a = {
      .malloc_fn = big_malloc, .realloc_fn = big_realloc, .free_fn = big_free};
  ck_assert_int_eq(mcp_set_allocator(&a), 0);
  g_largest = 0;
  const mcp_server_info info = {.name = "limits", .version = "1"};
  mcp_server *s;
  ck_assert_int_eq(mcp_server_new(&info, &s), 0);
  add_all(s);
  tu_peer p;
  tu_peer_open(&p, s, &ALICE);
  tu_initialize(&p, "2025-11-25");
  g_mode = M_BIG;
  g_big = (size_t)50 << 20;
  g_runs = 0;
  cJSON *m = tu_ask(&p, tool_call(false, 1, "work", NULL));
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  ck_assert_str_eq(result_text(m), "result too large: limit 16777216 bytes");
  ck_assert_int_eq(g_rc, MCP_ELIMIT);
  cJSON_Delete(m);
  /* In many blocks, too: the result grows up to the cap, never past it. */
  g_mode = M_PIECES;
  m = tu_ask(&p, tool_call(false, 2, "work", NULL));
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(s);
  ck_assert_int_eq(mcp_set_allocator(NULL), 0);
  ck_assert_msg(g_largest <= ((size_t)34 << 20), "libmcp allocated %zu bytes",
                g_largest);
}
END_TEST

/* ===========================================================================
 * F16: the per-principal rate limit
 * ======================================================================== */

static bool rate_limited(const cJSON *m) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "result"), "isError");
  return cJSON_IsTrue(e) && strncmp(result_text(m), "rate limited", 12) == 0;
}

/* One call of tool on p; true when it was rate limited. Threads call it
 * at once, each on a session of its own, so the id is only counted
 * atomically (a duplicate across sessions is harmless). */
static bool limited(tu_peer *p, bool modern, const char *tool) {
  static atomic_int id = 100;
  cJSON *m = tu_ask(p, tool_call(modern, atomic_fetch_add(&id, 1), tool, NULL));
  bool r = rate_limited(m);
  cJSON_Delete(m);
  return r;
}

START_TEST(f16_burst_then_rate_limited_in_both_eras) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 3, 3600), 0);
  tu_initialize(&P, "2025-11-25");
  for (int i = 0; i < 2; i++)
    ck_assert(!limited(&P, false, "work"));
  /* The same caller (subject) on a stateless modern request shares the
   * bucket. */
  tu_peer m;
  tu_peer_open(&m, srv, &ALICE);
  ck_assert(!limited(&m, true, "work"));
  ck_assert_int_eq(g_runs, 3);
  cJSON *r = tu_ask(&m, tool_call(true, 9, "work", NULL));
  tu_assert_json(r, "{\"id\":9,\"result\":{\"resultType\":\"complete\","
                    "\"isError\":true}}");
  ck_assert(rate_limited(r));
  ck_assert_msg(strstr(result_text(r), "at most 3 calls every 3600 s; try "
                                       "again in ") != NULL,
                "%s", result_text(r));
  cJSON_Delete(r);
  r = tu_ask(&P, tool_call(false, 10, "work", NULL));
  tu_assert_json(r, "{\"id\":10,\"result\":{\"isError\":true,"
                    "\"resultType\":\"<absent>\"}}");
  ck_assert(rate_limited(r));
  cJSON_Delete(r);
  /* The handler never ran for them, and the audit says why. */
  ck_assert_int_eq(g_runs, 3);
  ck_assert_int_eq(g_audit.decision, MCP_DECISION_RATE_LIMITED);
  ck_assert(g_audit.is_error);
  ck_assert(!g_audit.failed);
  /* Another caller has a bucket of its own. */
  tu_peer b;
  tu_peer_open(&b, srv, &BOB);
  ck_assert(!limited(&b, true, "work"));
  tu_peer_close(&b);
  tu_peer_close(&m);
}
END_TEST

START_TEST(f16_anonymous_callers_per_session) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  tu_peer a, b;
  tu_peer_open(&a, srv, NULL);
  tu_peer_open(&b, srv, NULL);
  tu_initialize(&a, "2025-11-25");
  ck_assert(!limited(&a, false, "work"));
  ck_assert(limited(&a, false, "work"));
  ck_assert(!limited(&b, true, "work"));
  ck_assert(limited(&b, true, "work"));
  tu_peer_close(&a);
  tu_peer_close(&b);
}
END_TEST

START_TEST(f16_access_is_decided_first) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 2, 3600), 0);
  tu_initialize(&P, "2025-11-25");
  /* Refused calls spend nothing... */
  for (int i = 0; i < 5; i++) {
    cJSON *m = tu_ask(
        &P, tool_call(false, 20 + i, i % 2 ? "denied" : "admin_only", NULL));
    tu_assert_json(m, "{\"error\":{\"code\":-31403}}");
    cJSON_Delete(m);
  }
  ck_assert(!limited(&P, false, "work"));
  /* ...schema-invalid ones do (every call the caller may make counts)... */
  cJSON *m = tu_ask(&P, tool_call(false, 30, "typed", "{\"n\":\"x\"}"));
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  ck_assert(!rate_limited(m));
  cJSON_Delete(m);
  ck_assert(limited(&P, false, "work"));
  ck_assert(limited(&P, false, "typed"));
  /* ...and once over the limit, a caller without the scope still hears
   * only that it lacks it: the limiter tells it nothing. */
  m = tu_ask(&P, tool_call(false, 31, "admin_only", NULL));
  tu_assert_json(m, "{\"error\":{\"code\":-31403}}");
  cJSON_Delete(m);
  m = tu_ask(&P, tool_call(false, 32, "denied", NULL));
  tu_assert_json(m, "{\"error\":{\"code\":-31403}}");
  cJSON_Delete(m);
  ck_assert_int_eq(g_runs, 1);
}
END_TEST

START_TEST(f16_only_tools_count) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  tu_initialize(&P, "2025-11-25");
  ck_assert(!limited(&P, false, "work"));
  ck_assert(limited(&P, false, "work"));
  cJSON *m = tu_ask(&P, prompt_get(false, 40));
  tu_assert_json(m, "{\"result\":{\"messages\":[{\"role\":\"user\"}]}}");
  cJSON_Delete(m);
  m = tu_ask(&P, resource_read(false, 41));
  tu_assert_json(m, "{\"result\":{\"contents\":[{\"text\":\"ok\"}]}}");
  cJSON_Delete(m);
}
END_TEST

START_TEST(f16_tokens_come_back) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 1), 0);
  tu_initialize(&P, "2025-11-25");
  ck_assert(!limited(&P, false, "work"));
  ck_assert(limited(&P, false, "work"));
  /* One token a second: well after a second, the caller may call again. */
  bool again = false;
  for (int i = 0; i < 100 && !again; i++) {
    sleep_ms(100);
    again = i >= 12 && !limited(&P, false, "work");
  }
  ck_assert(again);
}
END_TEST

START_TEST(f16_off_and_bad_settings) {
  ck_assert_int_eq(mcp_server_set_rate_limit(NULL, 1, 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 0), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  tu_initialize(&P, "2025-11-25");
  ck_assert(!limited(&P, false, "work"));
  ck_assert(limited(&P, false, "work"));
  /* Off forgets everybody; on again, the caller starts full. */
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 0, 0), 0);
  for (int i = 0; i < 5; i++)
    ck_assert(!limited(&P, false, "work"));
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  ck_assert(!limited(&P, false, "work"));
  ck_assert(limited(&P, false, "work"));
}
END_TEST

START_TEST(f16_table_forgets_least_recent) {
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  int n = getenv("MCP_VALGRIND_RUN") ? 4200 : 5000;
  char name[32];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "user%d", i);
    const mcp_principal who = {.subject = name};
    tu_peer p;
    tu_peer_open(&p, srv, &who);
    ck_assert(!limited(&p, true, "work"));
    if (i == n - 1)
      ck_assert(limited(&p, true, "work")); /* remembered */
    tu_peer_close(&p);
  }
  /* user0 was seen least recently of more than 4096 callers: forgotten,
   * so it starts with a full bucket again. */
  const mcp_principal first = {.subject = "user0"};
  tu_peer p;
  tu_peer_open(&p, srv, &first);
  ck_assert(!limited(&p, true, "work"));
  ck_assert(limited(&p, true, "work"));
  tu_peer_close(&p);
}
END_TEST

/* Several threads, each with its own session, one caller. */
static int g_thread_limited;
static pthread_mutex_t g_thread_lock = PTHREAD_MUTEX_INITIALIZER;

static void *caller(void *arg) {
  (void)arg;
  tu_peer p;
  tu_peer_open(&p, srv, &ALICE);
  int n = 0;
  for (int i = 0; i < 50; i++)
    n += limited(&p, true, "work");
  tu_peer_close(&p);
  pthread_mutex_lock(&g_thread_lock);
  g_thread_limited += n;
  pthread_mutex_unlock(&g_thread_lock);
  return NULL;
}

static int count_runs(mcp_call *call, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&g_thread_lock);
  g_runs++;
  pthread_mutex_unlock(&g_thread_lock);
  return mcp_result_text(call, "ok");
}

START_TEST(f16_threads_share_one_bucket) {
  const mcp_tool t = {.name = "count",
                      .description = "Counts.",
                      .annotations = TC_READ_ONLY,
                      .handler = count_runs};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "work"), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv,
                                       &(mcp_tool){.name = "work",
                                                   .description = "Counts.",
                                                   .annotations = TC_READ_ONLY,
                                                   .handler = count_runs},
                                       NULL),
                   0);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 100, 3600), 0);
  g_thread_limited = 0;
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, caller, NULL), 0);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  ck_assert_int_eq(g_runs, 100);
  ck_assert_int_eq(g_thread_limited, 100);
}
END_TEST

/* ===========================================================================
 * F18: the call deadline
 * ======================================================================== */

/* Waits (10 s at most) until mcp_server_next_expiry_ms says a deadline passed.
 */
/* Deadlines in these tests are 300 ms: long enough that a handler under
 * valgrind on a loaded machine has deferred or asked for input before its
 * deadline, as each test needs, and short enough to wait for. Only
 * ordering is asserted, never how long anything took. */
static void wait_due(void) {
  for (int i = 0; i < 2000 && mcp_server_next_expiry_ms(srv) != 0; i++)
    sleep_ms(5);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), 0);
}

START_TEST(f18_api_without_deadlines) {
  ck_assert_int_eq(mcp_server_next_expiry_ms(NULL), -1);
  ck_assert_int_eq(mcp_server_expire(NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_server_expire(srv), 0);
  mcp_server_set_call_timeout(NULL, 5); /* harmless */
  /* A call that ends in time leaves nothing to watch. */
  mcp_server_set_call_timeout(srv, 60000);
  tu_initialize(&P, "2025-11-25");
  cJSON *m = tu_ask(&P, tool_call(false, 1, "work", NULL));
  ck_assert_str_eq(result_text(m), "ok");
  cJSON_Delete(m);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  /* A deferred one is watched: its deadline is ahead. */
  g_mode = M_DEFER;
  tu_clear(&P);
  char *msg = tool_call(false, 2, "work", NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  long t = mcp_server_next_expiry_ms(srv);
  ck_assert(t > 0 && t <= 60000);
  ck_assert_int_eq(mcp_server_expire(srv), 0);
  ck_assert_int_eq(mcp_call_finish(g_stash, 0), 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
}
END_TEST

START_TEST(f18_running_handler_sees_cancelled_and_times_out) {
  mcp_server_set_call_timeout(srv, 300);
  g_mode = M_WAIT;
  for (int modern = 0; modern < 2; modern++) {
    tu_peer fresh, *p = era_peer(modern, &fresh, &ALICE);
    g_cancelled = false;
    g_audits = 0;
    cJSON *m = tu_ask(p, tool_call(modern, 5, "work", NULL));
    ck_assert(g_cancelled);
    tu_assert_json(m, modern ? "{\"id\":5,\"result\":{\"resultType\":"
                               "\"complete\",\"isError\":true}}"
                             : "{\"id\":5,\"result\":{\"isError\":true}}");
    ck_assert_str_eq(result_text(m),
                     "timeout: the tool did not finish within 300 ms");
    cJSON_Delete(m);
    ck_assert_int_eq(g_audits, 1);
    ck_assert_int_eq(g_audit.decision, MCP_DECISION_TIMEOUT);
    ck_assert(g_audit.is_error);
    ck_assert(!g_audit.failed);
    /* Prompts and resources get a JSON-RPC error. */
    m = tu_ask(p, prompt_get(modern, 6));
    tu_assert_json(m, "{\"id\":6,\"error\":{\"code\":-32603}}");
    ck_assert_str_eq(error_message(m), "Internal error: timeout: the prompt "
                                       "did not finish within 300 ms");
    cJSON_Delete(m);
    m = tu_ask(p, resource_read(modern, 7));
    tu_assert_json(m, "{\"id\":7,\"error\":{\"code\":-32603}}");
    ck_assert_ptr_nonnull(strstr(error_message(m), "timeout"));
    cJSON_Delete(m);
    if (modern)
      tu_peer_close(&fresh);
  }
}
END_TEST

START_TEST(f18_deferred_call_answered_at_deadline) {
  mcp_server_set_call_timeout(srv, 300);
  tu_initialize(&P, "2025-11-25");
  g_mode = M_DEFER;
  char *msg = tu_text("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"work\",\"_meta\":{"
                      "\"progressToken\":\"t\"}}}");
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_ptr_nonnull(g_stash);
  long t = mcp_server_next_expiry_ms(srv);
  ck_assert(t >= 0 && t <= 300);
  wait_due();
  ck_assert(mcp_call_cancelled(g_stash));
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0, "{\"id\":8,\"result\":{\"isError\":true}}");
  cJSON *m = tu_msg(&P, 0);
  ck_assert_str_eq(result_text(m),
                   "timeout: the tool did not finish within 300 ms");
  cJSON_Delete(m);
  /* Nothing more is due, and the call is still the handler's. */
  ck_assert_int_eq(mcp_server_expire(srv), 0);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  ck_assert_int_eq(g_audits, 0);
  /* What the handler does now reaches nobody; the finish only frees. */
  ck_assert_int_eq(mcp_call_progress(g_stash, 1, 2, "late"), 0);
  mcp_call_log(g_stash, MCP_LOG_ERROR, "late");
  ck_assert_int_eq(mcp_result_text(g_stash, "late"), 0);
  ck_assert_int_eq(mcp_call_finish(g_stash, 0), 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_int_eq(g_audits, 1);
  ck_assert_int_eq(g_audit.decision, MCP_DECISION_TIMEOUT);
  ck_assert(g_audit.is_error);
}
END_TEST

/* A sink that records what reaches it and when it is let go. */
typedef struct sink_rec {
  char *msgs[8];
  int n;
  int done;
} sink_rec;

static int sink_send(const char *msg, size_t len, void *user_data) {
  sink_rec *k = user_data;
  ck_assert_int_lt(k->n, 8);
  k->msgs[k->n] = malloc(len + 1);
  memcpy(k->msgs[k->n], msg, len);
  k->msgs[k->n++][len] = '\0';
  return 0;
}

static void sink_done(void *user_data) { ((sink_rec *)user_data)->done++; }

static void sink_clear(sink_rec *k) {
  for (int i = 0; i < k->n; i++)
    free(k->msgs[i]);
  memset(k, 0, sizeof *k);
}

START_TEST(f18_modern_deferred_stream_released_at_deadline) {
  mcp_server_set_call_timeout(srv, 300);
  g_mode = M_DEFER;
  sink_rec rec = {0};
  const mcp_sink sink = {
      .send = sink_send, .done = sink_done, .user_data = &rec};
  for (int kind = 0; kind < 3; kind++) {
    char *msg = kind == 0   ? tool_call(true, 11, "work", NULL)
                : kind == 1 ? prompt_get(true, 11)
                            : resource_read(true, 11);
    ck_assert_int_eq(mcp_session_receive_to(P.session, msg, strlen(msg), &sink),
                     0);
    free(msg);
    ck_assert_int_eq(rec.n, 0);
    ck_assert_int_eq(rec.done, 0);
    wait_due();
    ck_assert_int_eq(mcp_server_expire(srv), 1);
    /* Answered, and the stream let go, before the handler finished. */
    ck_assert_int_eq(rec.n, 1);
    ck_assert_int_eq(rec.done, 1);
    cJSON *m = cJSON_Parse(rec.msgs[0]);
    if (kind == 0)
      tu_assert_json(m, "{\"id\":11,\"result\":{\"resultType\":\"complete\","
                        "\"isError\":true}}");
    else
      tu_assert_json(m, "{\"id\":11,\"error\":{\"code\":-32603}}");
    cJSON_Delete(m);
    ck_assert_int_eq(mcp_call_finish(g_stash, 0), 0);
    ck_assert_int_eq(rec.n, 1);
    ck_assert_int_eq(rec.done, 1);
    sink_clear(&rec);
  }
  ck_assert_uint_eq(P.nout, 0);
}
END_TEST

START_TEST(f18_cancelled_call_is_not_answered) {
  mcp_server_set_call_timeout(srv, 300);
  tu_initialize(&P, "2025-11-25");
  g_mode = M_DEFER;
  char *msg = tool_call(false, 12, "work", NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  ck_assert_int_eq(tu_send(&P,
                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                           "cancelled\",\"params\":{\"requestId\":12}}"),
                   0);
  sleep_ms(350); /* past the deadline */
  ck_assert_int_eq(mcp_server_expire(srv), 0);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_call_finish(g_stash, 0), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(g_audit.decision, MCP_DECISION_CANCELLED);
}
END_TEST

START_TEST(f18_call_waiting_for_input_times_out) {
  mcp_server_set_call_timeout(srv, 300);
  ck_assert_int_eq(
      tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                  "\"params\":{\"protocolVersion\":\"2025-11-25\","
                  "\"capabilities\":{\"elicitation\":{}},\"clientInfo\":{"
                  "\"name\":\"t\",\"version\":\"1\"}}}"),
      0);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/initialized\"}"),
                   0);
  tu_clear(&P);
  g_mode = M_ASK;
  char *msg = tool_call(false, 13, "work", NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0, "{\"method\":\"elicitation/create\"}");
  tu_clear(&P);
  wait_due();
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  /* The client is told its question is moot, then gets the timeout. */
  ck_assert_uint_eq(P.nout, 2);
  tu_assert_msg(&P, 0, "{\"method\":\"notifications/cancelled\"}");
  tu_assert_msg(&P, 1, "{\"id\":13,\"result\":{\"isError\":true}}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_int_eq(g_audit.decision, MCP_DECISION_TIMEOUT);
}
END_TEST

/* A deferred call still pending when the session ends is cancelled, not
 * timed out, and the server lets go of everything. */
START_TEST(f18_session_freed_with_timed_out_call) {
  mcp_server_set_call_timeout(srv, 300);
  tu_initialize(&P, "2025-11-25");
  g_mode = M_DEFER;
  char *msg = tool_call(false, 14, "work", NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  wait_due();
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  mcp_call *c = g_stash;
  tu_peer_close(&P);
  ck_assert_int_eq(mcp_call_finish(c, 0), 0);
  tu_peer_open(&P, srv, &ALICE); /* for teardown */
}
END_TEST

/* Sends msg on session and frees it; true when it was received. */
static bool feed(mcp_session *session, char *msg) {
  int rc = mcp_session_receive(session, msg, strlen(msg));
  free(msg);
  return rc == 0;
}

/* The least deadline is watched, whichever session's: a later call with a
 * nearer deadline sets the wait, the farther one stays watched after the
 * nearer is answered, and a cancelled call is watched no more. */
START_TEST(f18_least_deadline_first_across_sessions) {
  tu_initialize(&P, "2025-11-25");
  g_mode = M_DEFER;
  mcp_server_set_call_timeout(srv, 60000);
  char *msg = tool_call(false, 20, "work", NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  mcp_call *far = g_stash;
  long t = mcp_server_next_expiry_ms(srv);
  ck_assert(t > 300 && t <= 60000);
  tu_peer q;
  tu_peer_open(&q, srv, &BOB);
  tu_initialize(&q, "2025-11-25");
  tu_clear(&q);
  mcp_server_set_call_timeout(srv, 300);
  msg = tool_call(false, 21, "work", NULL);
  ck_assert_int_eq(tu_send(&q, msg), 0);
  free(msg);
  mcp_call *near = g_stash;
  ck_assert_ptr_ne(near, far);
  t = mcp_server_next_expiry_ms(srv);
  ck_assert(t >= 0 && t <= 300);
  wait_due();
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_uint_eq(q.nout, 1);
  tu_assert_msg(&q, 0, "{\"id\":21,\"result\":{\"isError\":true}}");
  tu_clear(&P);
  ck_assert_uint_eq(P.nout, 0);
  /* The far deadline is the one left to wait for. */
  t = mcp_server_next_expiry_ms(srv);
  ck_assert(t > 300 && t <= 60000);
  ck_assert_int_eq(mcp_call_finish(near, 0), 0);
  ck_assert_uint_eq(q.nout, 1);
  ck_assert_int_eq(tu_send(&P,
                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                           "cancelled\",\"params\":{\"requestId\":20}}"),
                   0);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_call_finish(far, 0), 0);
  ck_assert_uint_eq(P.nout, 0);
  tu_peer_close(&q);
}
END_TEST

/* Calls finished by their threads while another thread expires them: each
 * is answered exactly once, by whichever side came first, and nothing is
 * left watched. Bounded: 4 threads of 60 calls, each finished after at
 * most 2 ms. */
enum { RACE_THREADS = 4, RACE_CALLS = 60 };
static _Thread_local mcp_call *t_stash;
static atomic_bool g_race_done;

static int defer_to_self(mcp_call *call, void *user_data) {
  (void)user_data;
  t_stash = call;
  return MCP_DEFERRED;
}

static int race_send(const char *msg, size_t len, void *user_data) {
  (void)msg, (void)len;
  (*(int *)user_data)++; /* under the session's lock */
  return 0;
}

static void *race_worker(void *arg) {
  int *sent = arg;
  mcp_session *session = NULL;
  if (mcp_session_new(srv, &ALICE, race_send, sent, &session) != 0)
    return NULL;
  feed(session, tu_text("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
                        "\"initialize\",\"params\":{\"protocolVersion\":"
                        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                        "\"name\":\"t\",\"version\":\"1\"}}}"));
  for (int i = 1; i <= RACE_CALLS; i++) {
    t_stash = NULL;
    if (!feed(session, tool_call(false, i, "later", NULL)) || !t_stash)
      break;
    sleep_ms(i % 3); /* 0, 1 or 2 ms: before, about at, or after 1 ms */
    mcp_call_finish(t_stash, 0);
  }
  mcp_session_free(session);
  return NULL;
}

static void *race_expirer(void *arg) {
  (void)arg;
  while (!atomic_load(&g_race_done)) {
    mcp_server_expire(srv);
    sleep_ms(0);
  }
  return NULL;
}

START_TEST(f18_expiry_races_finish) {
  const mcp_tool t = {.name = "later",
                      .description = "Defers.",
                      .annotations = TC_READ_ONLY,
                      .handler = defer_to_self};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  mcp_server_set_call_timeout(srv, 1);
  atomic_store(&g_race_done, false);
  int sent[RACE_THREADS] = {0};
  pthread_t workers[RACE_THREADS], expirer;
  ck_assert_int_eq(pthread_create(&expirer, NULL, race_expirer, NULL), 0);
  for (int i = 0; i < RACE_THREADS; i++)
    ck_assert_int_eq(pthread_create(&workers[i], NULL, race_worker, &sent[i]),
                     0);
  for (int i = 0; i < RACE_THREADS; i++)
    pthread_join(workers[i], NULL);
  atomic_store(&g_race_done, true);
  pthread_join(expirer, NULL);
  for (int i = 0; i < RACE_THREADS; i++)
    ck_assert_int_eq(sent[i], 1 + RACE_CALLS); /* initialize, every call */
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_server_expire(srv), 0);
}
END_TEST

/* ===========================================================================
 * Allocation failure
 * ======================================================================== */

/* Counts what a session sends, keeping nothing (the failing allocator
 * must see only the library's blocks). */
static int count_send(const char *msg, size_t len, void *user_data) {
  (void)msg, (void)len;
  (*(int *)user_data)++;
  return 0;
}

/* Every feature once, on a server built under the failing allocator.
 * Returns true when every step worked. */
static bool alloc_scenario(long n, void *user) {
  (void)n, (void)user;
  const mcp_server_info info = {.name = "limits", .version = "1"};
  mcp_server *s;
  if (mcp_server_new(&info, &s) != 0)
    return false;
  bool ok = mcp_server_add_tool(s, &T_WORK, NULL) == 0 &&
            mcp_server_add_prompt(s, &P_WORK, NULL) == 0;
  mcp_server_set_log(s, tu_silent_log, NULL);
  mcp_server_set_max_result(s, 512);
  ok &= mcp_server_set_rate_limit(s, 4, 3600) == 0;
  mcp_server_set_call_timeout(s, 2);
  int sent = 0;
  mcp_session *session = NULL;
  if (mcp_session_new(s, &ALICE, count_send, &sent, &session) != 0) {
    mcp_server_free(s);
    return false;
  }
  ok &= feed(session,
             tu_text("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
                     "\"initialize\",\"params\":{\"protocolVersion\":"
                     "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                     "\"name\":\"t\",\"version\":\"1\"}}}"));
  /* Too large, a deadline passed while running, deferred and expired, two
   * in time, rate limited (both eras by turns); a prompt deferred and
   * expired. */
  static const mode modes[] = {M_BIG, M_WAIT, M_DEFER, M_TEXT, M_TEXT, M_TEXT};
  for (size_t i = 0; i <= TU_COUNT(modes); i++) {
    g_mode = i < TU_COUNT(modes) ? modes[i] : M_DEFER;
    g_big = 1000;
    g_stash = NULL;
    ok &= feed(session, i < TU_COUNT(modes)
                            ? tool_call(i % 2 == 1, (int)i + 1, "work", NULL)
                            : prompt_get(true, 9));
    if (g_stash) {
      for (int k = 0; k < 5000 && mcp_server_next_expiry_ms(s) != 0; k++)
        sleep_ms(1);
      ok &= mcp_server_expire(s) == 1;
      ok &= mcp_call_finish(g_stash, 0) == 0;
    }
  }
  ok &= sent == 8; /* initialize, six calls, the prompt */
  ok &= mcp_server_next_expiry_ms(s) == -1;
  mcp_session_free(session);
  mcp_server_free(s);
  return ok;
}

static void alloc_after(long n, bool ok, bool clean, void *user) {
  (void)n, (void)user;
  if (clean)
    ck_assert_msg(ok, "the scenario failed without a failed allocation");
}

START_TEST(allocation_failure_leaks_nothing) {
  tu_alloc_every(5000, alloc_scenario, alloc_after, NULL);
}
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

static TCase *tcase(Suite *s, const char *name, bool fixture) {
  return tu_tcase(s, name, fixture ? setup : NULL, teardown, 300);
}

static Suite *limits_suite(void) {
  Suite *s = suite_create("limits");
  TCase *t = tcase(s, "max_result", true);
  tcase_add_test(t, f14_text_too_large_is_error);
  tcase_add_test(t, f14_every_builder_is_capped);
  tcase_add_test(t, f14_under_the_cap_is_served);
  tcase_add_test(t, f14_prompt_and_resource_get_json_rpc_error);
  tcase_add_test(t, f14_the_cap_is_exact);
  t = tcase(s, "max_result_alloc", false);
  tcase_add_test(t, f14_fifty_megabytes_never_built);
  t = tcase(s, "rate_limit", true);
  tcase_add_test(t, f16_burst_then_rate_limited_in_both_eras);
  tcase_add_test(t, f16_anonymous_callers_per_session);
  tcase_add_test(t, f16_access_is_decided_first);
  tcase_add_test(t, f16_only_tools_count);
  tcase_add_test(t, f16_tokens_come_back);
  tcase_add_test(t, f16_off_and_bad_settings);
  tcase_add_test(t, f16_table_forgets_least_recent);
  tcase_add_test(t, f16_threads_share_one_bucket);
  t = tcase(s, "deadline", true);
  tcase_add_test(t, f18_api_without_deadlines);
  tcase_add_test(t, f18_running_handler_sees_cancelled_and_times_out);
  tcase_add_test(t, f18_deferred_call_answered_at_deadline);
  tcase_add_test(t, f18_modern_deferred_stream_released_at_deadline);
  tcase_add_test(t, f18_cancelled_call_is_not_answered);
  tcase_add_test(t, f18_call_waiting_for_input_times_out);
  tcase_add_test(t, f18_session_freed_with_timed_out_call);
  tcase_add_test(t, f18_least_deadline_first_across_sessions);
  tcase_add_test(t, f18_expiry_races_finish);
  t = tcase(s, "alloc", false);
  tcase_add_test(t, allocation_failure_leaks_nothing);
  return s;
}

int main(void) { return tu_run(limits_suite()); }
