/* Tests for lib/policy/policy.c and how tools/call uses it (promise 2,
 * docs/architecture.md): scope matching, every declared scope required, the
 * authorizer and audit hooks, principal copies, scope-token syntax, and the
 * proof that flipping every annotation changes no access decision. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "testutil.h"

/* ---- hooks and handlers that record what they saw ------------------------ */

static int handler_calls;

/* Answers "tool:subject"; a tool named "fails" reports a tool error and one
 * named "slow" sleeps 20 ms first. */
static mcp_call *parked; /* the call a "park" tool left unfinished */

static int record_handler(mcp_call *call, void *user_data) {
  (void)user_data;
  handler_calls++;
  const char *tool = mcp_call_name(call);
  const mcp_principal *p = mcp_call_principal(call);
  char text[256];
  snprintf(text, sizeof text, "%s:%s", tool, p->subject ? p->subject : "-");
  if (strcmp(tool, "slow") == 0) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (strcmp(tool, "fails") == 0)
    return mcp_result_error(call, text);
  if (strcmp(tool, "broken") == 0)
    return MCP_EINTERNAL;
  if (strcmp(tool, "park") == 0) {
    parked = call;
    return MCP_DEFERRED;
  }
  return mcp_result_text(call, text);
}

#define MAX_RECORDS 8
typedef struct audit_copy {
  char tool[64];
  char subject[64];
  bool anonymous;
  mcp_decision decision;
  char missing[8][32];
  size_t nmissing;
  bool is_error;
  bool failed;
  uint64_t duration_us;
} audit_copy;

static audit_copy records[MAX_RECORDS];
static size_t nrecords;

static void audit_hook(const mcp_audit_record *r, void *user_data) {
  ck_assert_ptr_eq(user_data, &nrecords);
  ck_assert_uint_lt(nrecords, MAX_RECORDS);
  audit_copy *c = &records[nrecords++];
  memset(c, 0, sizeof *c);
  ck_assert_ptr_nonnull(r->tool);
  snprintf(c->tool, sizeof c->tool, "%s", r->tool);
  c->anonymous = r->subject == NULL;
  snprintf(c->subject, sizeof c->subject, "%s", r->subject ? r->subject : "");
  c->decision = r->decision;
  ck_assert_ptr_nonnull(r->missing_scopes);
  for (size_t i = 0; r->missing_scopes[i]; i++) {
    ck_assert_uint_lt(i, TU_COUNT(c->missing));
    snprintf(c->missing[i], sizeof c->missing[i], "%s", r->missing_scopes[i]);
    c->nmissing = i + 1;
  }
  c->is_error = r->is_error;
  c->failed = r->failed;
  c->duration_us = r->duration_us;
}

/* Writes the scopes principal holds into dst, space-separated. */
static void join_scopes(char *dst, size_t size,
                        const mcp_principal *principal) {
  size_t n = 0;
  dst[0] = '\0';
  for (const char *const *s = principal->scopes; s && *s; s++) {
    int k = snprintf(dst + n, size - n, "%s%s", n ? " " : "", *s);
    ck_assert_msg(k >= 0 && (size_t)k < size - n, "scopes too long for %zu",
                  size);
    n += (size_t)k;
  }
}

/* What the authorizer saw on its last call, and what it answers. */
static struct {
  int calls;
  char subject[64];
  char scopes[256]; /* space-separated */
  bool all_scopes;
  char tool[64];
  char arguments[256]; /* compact JSON, "(null)" for NULL */
  int answer;          /* returned as is */
  const char *reason;  /* written with snprintf when not NULL */
} authz;

static int authorizer(const mcp_principal *principal, const char *tool,
                      const cJSON *arguments, char *reason, size_t reason_size,
                      void *user_data) {
  ck_assert_ptr_eq(user_data, &authz);
  ck_assert_ptr_nonnull(principal);
  authz.calls++;
  snprintf(authz.subject, sizeof authz.subject, "%s",
           principal->subject ? principal->subject : "(anonymous)");
  join_scopes(authz.scopes, sizeof authz.scopes, principal);
  authz.all_scopes = principal->all_scopes;
  snprintf(authz.tool, sizeof authz.tool, "%s", tool);
  char *json = arguments ? cJSON_PrintUnformatted(arguments) : NULL;
  snprintf(authz.arguments, sizeof authz.arguments, "%s",
           json ? json : "(null)");
  cJSON_free(json);
  ck_assert_uint_eq(reason_size, 256);
  if (authz.reason)
    snprintf(reason, reason_size, "%s", authz.reason);
  return authz.answer;
}

static void reset_records(void) {
  handler_calls = 0;
  nrecords = 0;
  memset(&authz, 0, sizeof authz);
}

/* ---- helpers ------------------------------------------------------------ */

static mcp_server *new_server(void) {
  mcp_server *srv = NULL;
  mcp_server_info info = {.name = "policy-test", .version = "1.0"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_audit(srv, audit_hook, &nrecords);
  reset_records();
  return srv;
}

/* Registers a writing tool needing scopes (NULL-terminated, may be NULL). */
static void add_tool(mcp_server *srv, const char *name,
                     const char *const *scopes, const char *input_schema) {
  mcp_tool t = {.name = name,
                .description = "A tool for policy tests.",
                .input_schema = input_schema,
                .scopes = scopes,
                .annotations = {.read_only = MCP_HINT_FALSE,
                                .destructive = MCP_HINT_TRUE,
                                .idempotent = MCP_HINT_FALSE,
                                .open_world = MCP_HINT_TRUE},
                .handler = record_handler};
  int rc = mcp_server_add_tool(srv, &t, NULL);
  ck_assert_msg(rc == 0, "%s: %s", name, mcp_server_errmsg(srv));
}

static void open_peer(tu_peer *p, mcp_server *srv,
                      const mcp_principal *principal) {
  tu_peer_open(p, srv, principal);
  tu_initialize(p, "2025-11-25");
}

static const cJSON *error_data(const cJSON *reply) {
  return cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(reply, "error"), "data");
}

/* ---- mcp_principal_has_scope --------------------------------------------- */

START_TEST(has_scope_exact) {
  const char *scopes[] = {"read", "Write", "mcp:tools", NULL};
  mcp_principal p = {.subject = "alice", .scopes = scopes};
  ck_assert(mcp_principal_has_scope(&p, "read"));
  ck_assert(mcp_principal_has_scope(&p, "Write"));
  ck_assert(mcp_principal_has_scope(&p, "mcp:tools"));
  /* Exact and case-sensitive: no prefixes, no case folding. */
  static const char *const not_held[] = {
      "Read",  "READ", "write", "rea",  "reading",     "read ",
      " read", "",     "mcp",   "mcp:", "mcp:tools:x", "Write\n"};
  for (size_t i = 0; i < TU_COUNT(not_held); i++)
    ck_assert_msg(!mcp_principal_has_scope(&p, not_held[i]), "holds \"%s\"",
                  not_held[i]);
  ck_assert(!mcp_principal_has_scope(&p, NULL));
  ck_assert(!mcp_principal_has_scope(NULL, "read"));
  ck_assert(!mcp_principal_has_scope(NULL, NULL));

  mcp_principal none = {.subject = "bob"};
  ck_assert(!mcp_principal_has_scope(&none, "read"));
  const char *empty[] = {NULL};
  mcp_principal empty_list = {.scopes = empty};
  ck_assert(!mcp_principal_has_scope(&empty_list, "read"));

  mcp_principal all = {.all_scopes = true};
  ck_assert(mcp_principal_has_scope(&all, "read"));
  ck_assert(mcp_principal_has_scope(&all, "anything:at.all"));
  all.scopes = scopes;
  ck_assert(mcp_principal_has_scope(&all, "not-listed"));
}
END_TEST

/* ---- scope checks through tools/call ------------------------------------- */

START_TEST(all_scopes_required) {
  static const char *const abc[] = {"a", "b", "c", NULL};
  mcp_server *srv = new_server();
  add_tool(srv, "abc", abc, NULL);
  mcp_server_set_authorizer(srv, authorizer, &authz);

  static const struct {
    const char *held[4];
    bool all;
    const char *data; /* expected error.data, NULL = allowed */
  } cases[] = {
      {{NULL},
       false,
       "{\"requiredScopes\":[\"a\",\"b\",\"c\"],\"scopes\":[\"a\",\"b\",\"c\"]"
       "}"},
      {{"b", NULL},
       false,
       "{\"requiredScopes\":[\"a\",\"c\"],\"scopes\":[\"a\",\"b\",\"c\"]}"},
      {{"c", "a", NULL},
       false,
       "{\"requiredScopes\":[\"b\"],\"scopes\":[\"a\",\"b\",\"c\"]}"},
      {{"A", "B", "C", NULL},
       false,
       "{\"requiredScopes\":[\"a\",\"b\",\"c\"],\"scopes\":[\"a\",\"b\",\"c\"]"
       "}"},
      {{"a", "b", NULL},
       false,
       "{\"requiredScopes\":[\"c\"],\"scopes\":[\"a\",\"b\",\"c\"]}"},
      {{"c", "b", "a", NULL}, false, NULL},
      {{"a", "b", "c", NULL}, false, NULL},
      {{NULL}, true, NULL},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    reset_records();
    mcp_principal who = {.subject = "carol",
                         .scopes = cases[i].held,
                         .all_scopes = cases[i].all};
    tu_peer p;
    open_peer(&p, srv, &who);
    cJSON *m = tu_call_tool(&p, "1", "abc", "{}");
    ck_assert_uint_eq(nrecords, 1);
    ck_assert_str_eq(records[0].tool, "abc");
    ck_assert_str_eq(records[0].subject, "carol");
    if (cases[i].data) {
      tu_assert_json(m, "{\"id\":1,\"result\":\"<absent>\",\"error\":{"
                        "\"code\":-31403,\"message\":\"<any>\"}}");
      tu_assert_exact(error_data(m), cases[i].data);
      ck_assert_int_eq(handler_calls, 0);
      ck_assert_int_eq(authz.calls, 0); /* never asked when scopes lack */
      ck_assert_int_eq(records[0].decision, MCP_DECISION_DENIED_SCOPE);
      ck_assert(!records[0].is_error);
      /* The audit names the same scopes, in the same order. */
      const cJSON *req =
          cJSON_GetObjectItemCaseSensitive(error_data(m), "requiredScopes");
      ck_assert_uint_eq(records[0].nmissing, (size_t)cJSON_GetArraySize(req));
      size_t k = 0;
      for (const cJSON *s = req->child; s; s = s->next, k++)
        ck_assert_str_eq(records[0].missing[k], s->valuestring);
    } else {
      tu_assert_json(m, "{\"id\":1,\"error\":\"<absent>\",\"result\":{"
                        "\"content\":[{\"type\":\"text\",\"text\":"
                        "\"abc:carol\"}]}}");
      ck_assert_int_eq(handler_calls, 1);
      ck_assert_int_eq(authz.calls, 1);
      ck_assert_int_eq(records[0].decision, MCP_DECISION_ALLOWED);
      ck_assert_uint_eq(records[0].nmissing, 0);
    }
    cJSON_Delete(m);
    tu_peer_close(&p);
  }
  mcp_server_free(srv);
}
END_TEST

START_TEST(denial_message_and_data) {
  static const char *const scopes[] = {"files:read", "files:write", NULL};
  mcp_server *srv = new_server();
  add_tool(srv, "edit", scopes, NULL);
  tu_peer p;
  open_peer(&p, srv, NULL); /* anonymous, no scopes */
  cJSON *m = tu_call_tool(&p, "1", "edit", NULL);
  tu_assert_exact(cJSON_GetObjectItemCaseSensitive(m, "error"),
                  "{\"code\":-31403,\"message\":\"Forbidden: insufficient "
                  "scope; this tool needs files:read files:write\",\"data\":{"
                  "\"requiredScopes\":[\"files:read\",\"files:write\"],"
                  "\"scopes\":[\"files:read\",\"files:write\"]}}");
  ck_assert_int_eq(MCP_RPC_FORBIDDEN, -31403);
  ck_assert_uint_eq(nrecords, 1);
  ck_assert(records[0].anonymous);
  ck_assert_int_eq(records[0].decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_uint_eq(records[0].nmissing, 2);
  ck_assert_str_eq(records[0].missing[0], "files:read");
  ck_assert_str_eq(records[0].missing[1], "files:write");
  cJSON_Delete(m);
  /* A tool without scopes is open to anyone, the anonymous included. */
  add_tool(srv, "open", NULL, NULL);
  m = tu_call_tool(&p, "1", "open", NULL);
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"open:-\"}]}}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 1);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- the authorizer hook ------------------------------------------------- */

START_TEST(authorizer_sees_call) {
  static const char *const scopes[] = {"s1", NULL};
  mcp_server *srv = new_server();
  add_tool(srv, "guarded", scopes, "{\"type\":\"object\"}");
  mcp_server_set_authorizer(srv, authorizer, &authz);
  const char *held[] = {"s1", "s2", NULL};
  mcp_principal who = {.subject = "dave", .scopes = held};
  tu_peer p;
  open_peer(&p, srv, &who);

  cJSON *m =
      tu_call_tool(&p, "1", "guarded", "{\"path\":\"/etc\",\"n\":[1,2]}");
  ck_assert_int_eq(authz.calls, 1);
  ck_assert_str_eq(authz.subject, "dave");
  ck_assert_str_eq(authz.scopes, "s1 s2");
  ck_assert(!authz.all_scopes);
  ck_assert_str_eq(authz.tool, "guarded");
  ck_assert_str_eq(authz.arguments, "{\"path\":\"/etc\",\"n\":[1,2]}");
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"guarded:dave\"}]}}");
  ck_assert_int_eq(handler_calls, 1);
  ck_assert_uint_eq(nrecords, 1);
  ck_assert_int_eq(records[0].decision, MCP_DECISION_ALLOWED);
  cJSON_Delete(m);

  /* Missing arguments reach it as an empty object. */
  m = tu_call_tool(&p, "1", "guarded", NULL);
  ck_assert_int_eq(authz.calls, 2);
  ck_assert_str_eq(authz.arguments, "{}");
  cJSON_Delete(m);
  tu_peer_close(&p);

  /* The anonymous principal, and one holding every scope. */
  add_tool(srv, "free", NULL, NULL);
  open_peer(&p, srv, NULL);
  m = tu_call_tool(&p, "1", "free", NULL);
  ck_assert_str_eq(authz.subject, "(anonymous)");
  ck_assert_str_eq(authz.scopes, "");
  ck_assert_str_eq(authz.tool, "free");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_principal root = {.subject = "root", .all_scopes = true};
  open_peer(&p, srv, &root);
  m = tu_call_tool(&p, "1", "guarded", NULL);
  ck_assert(authz.all_scopes);
  ck_assert_str_eq(authz.subject, "root");
  cJSON_Delete(m);
  ck_assert_int_eq(authz.calls, 4);
  ck_assert_int_eq(handler_calls, 4);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(authorizer_denies) {
  mcp_server *srv = new_server();
  add_tool(srv, "t", NULL, NULL);
  mcp_server_set_authorizer(srv, authorizer, &authz);
  mcp_principal who = {.subject = "eve"};
  tu_peer p;
  open_peer(&p, srv, &who);

  authz.answer = 1;
  authz.reason = "eve may not call t on Sundays";
  cJSON *m = tu_call_tool(&p, "1", "t", "{}");
  tu_assert_exact(
      cJSON_GetObjectItemCaseSensitive(m, "error"),
      "{\"code\":-31403,\"message\":\"Forbidden: the server's "
      "policy denied this call\",\"data\":{\"requiredScopes\":[],"
      "\"scopes\":[],\"reason\":\"eve may not call t on Sundays\"}}");
  tu_assert_json(m, "{\"id\":1,\"result\":\"<absent>\"}");
  ck_assert_int_eq(handler_calls, 0);
  ck_assert_uint_eq(nrecords, 1);
  ck_assert_int_eq(records[0].decision, MCP_DECISION_DENIED_AUTHORIZER);
  ck_assert_uint_eq(records[0].nmissing, 0);
  ck_assert(!records[0].is_error);
  ck_assert_str_eq(records[0].subject, "eve");
  cJSON_Delete(m);

  /* Any nonzero answer denies; without a reason, data has none. */
  authz.answer = -1;
  authz.reason = NULL;
  m = tu_call_tool(&p, "1", "t", "{}");
  tu_assert_exact(error_data(m), "{\"requiredScopes\":[],\"scopes\":[]}");
  cJSON_Delete(m);
  /* A reason with characters JSON must escape stays one valid string. */
  authz.answer = 42;
  authz.reason = "say \"no\"\\\n\ttwice";
  m = tu_call_tool(&p, "1", "t", "{}");
  tu_assert_exact(error_data(m), "{\"requiredScopes\":[],\"scopes\":[],"
                                 "\"reason\":\"say "
                                 "\\\"no\\\"\\\\\\n\\ttwice\"}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 0);
  ck_assert_uint_eq(nrecords, 3);

  /* Allow again: the handler runs. */
  authz.answer = 0;
  authz.reason = "ignored when allowing";
  m = tu_call_tool(&p, "1", "t", "{}");
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"t:eve\"}]},"
                    "\"error\":\"<absent>\"}");
  ck_assert_int_eq(handler_calls, 1);
  ck_assert_int_eq(records[3].decision, MCP_DECISION_ALLOWED);
  cJSON_Delete(m);

  /* Removing the hook allows everything the scopes allow. */
  mcp_server_set_authorizer(srv, NULL, NULL);
  authz.answer = 1;
  m = tu_call_tool(&p, "1", "t", "{}");
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"t:eve\"}]}}");
  ck_assert_int_eq(authz.calls, 4);
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* The reason goes into JSON, which must be UTF-8, even when the authorizer
 * cut a character in half by truncating with snprintf. */
START_TEST(authorizer_reason_utf8) {
  mcp_server *srv = new_server();
  add_tool(srv, "t", NULL, NULL);
  mcp_server_set_authorizer(srv, authorizer, &authz);
  tu_peer p;
  open_peer(&p, srv, NULL);
  char longer[400] = "";
  for (int i = 0; i < 150; i++)
    strcat(longer, "\xc3\xa9"); /* 300 bytes of U+00E9 */
  static const struct {
    const char *reason;
    const char *want; /* NULL: as sent */
  } cases[] = {
      {"", NULL}, /* filled below */
      {"bad \xff byte", "bad "},
      {"cut \xe2\x82", "cut "},
      {"\xc3\xa9t\xc3\xa9", NULL},
      {"\xff", ""}, /* nothing valid: no reason at all */
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    authz.answer = 1;
    authz.reason = i == 0 ? longer : cases[i].reason;
    ck_assert_int_eq(tu_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                                 "\"tools/call\",\"params\":{\"name\":\"t\"}}"),
                     0);
    ck_assert_uint_eq(p.nout, 1);
    mcp__json_doc doc = {0};
    char why[200];
    int rc = mcp__json_parse(p.out[0], strlen(p.out[0]), NULL, &doc, why,
                             sizeof why);
    ck_assert_msg(rc == 0, "case %zu: reply is not strict JSON: %s", i, why);
    const cJSON *reason =
        cJSON_GetObjectItemCaseSensitive(error_data(doc.root), "reason");
    if (i == 0) {
      /* 127 whole characters fit in 255 bytes. */
      ck_assert(cJSON_IsString(reason));
      ck_assert_uint_eq(strlen(reason->valuestring), 254);
      ck_assert(strncmp(reason->valuestring, longer, 254) == 0);
    } else if (cases[i].want && cases[i].want[0] == '\0') {
      ck_assert_ptr_null(reason);
    } else {
      ck_assert(cJSON_IsString(reason));
      ck_assert_str_eq(reason->valuestring,
                       cases[i].want ? cases[i].want : cases[i].reason);
    }
    mcp__json_doc_free(&doc);
    tu_clear(&p);
  }
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* The authorizer runs before the arguments are checked, so it can deny
 * calls it cannot even parse; when it allows, the check still applies. */
START_TEST(authorizer_before_argument_check) {
  mcp_server *srv = new_server();
  add_tool(srv, "typed", NULL,
           "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
           "\"integer\"}},\"required\":[\"n\"]}");
  mcp_server_set_authorizer(srv, authorizer, &authz);
  tu_peer p;
  open_peer(&p, srv, NULL);
  authz.answer = 1;
  cJSON *m = tu_call_tool(&p, "1", "typed", "{\"n\":\"x\"}");
  tu_assert_json(m, "{\"error\":{\"code\":-31403}}");
  ck_assert_int_eq(records[0].decision, MCP_DECISION_DENIED_AUTHORIZER);
  cJSON_Delete(m);
  authz.answer = 0;
  m = tu_call_tool(&p, "1", "typed", "{\"n\":\"x\"}");
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  ck_assert_int_eq(records[1].decision, MCP_DECISION_INVALID_ARGUMENTS);
  cJSON_Delete(m);
  ck_assert_int_eq(authz.calls, 2);
  ck_assert_int_eq(handler_calls, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- the audit hook ------------------------------------------------------ */

/* A request reusing the id of an unfinished call is refused before the
 * policy runs: the authorizer is not asked and no audit record is made. */
START_TEST(duplicate_id_skips_policy) {
  mcp_server *srv = new_server();
  add_tool(srv, "park", NULL, NULL);
  mcp_server_set_authorizer(srv, authorizer, &authz);
  tu_peer p;
  open_peer(&p, srv, NULL);
  tu_clear(&p);
  ck_assert_int_eq(tu_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"park\"}}"),
                   0);
  ck_assert_int_eq(authz.calls, 1);
  ck_assert_uint_eq(p.nout, 0);
  cJSON *m = tu_call_tool(&p, "1", "park", NULL);
  tu_assert_json(m, "{\"id\":1,\"error\":{\"code\":-32600}}");
  cJSON_Delete(m);
  ck_assert_int_eq(authz.calls, 1);
  ck_assert_uint_eq(nrecords, 0);
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  ck_assert_uint_eq(nrecords, 1);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(audit_one_record_per_call) {
  static const char *const need[] = {"x", NULL};
  mcp_server *srv = new_server();
  add_tool(srv, "ok", NULL, NULL);
  add_tool(srv, "fails", NULL, NULL);
  add_tool(srv, "slow", NULL, NULL);
  add_tool(srv, "broken", NULL, NULL);
  add_tool(srv, "needs_x", need, NULL);
  add_tool(srv, "typed", NULL, "{\"type\":\"object\",\"required\":[\"q\"]}");
  mcp_server_set_log(srv, tu_silent_log, NULL);
  mcp_principal who = {.subject = "frank"};
  tu_peer p;
  open_peer(&p, srv, &who);

  cJSON *m = tu_call_tool(&p, "1", "ok", NULL);
  ck_assert_uint_eq(nrecords, 1);
  ck_assert_str_eq(records[0].tool, "ok");
  ck_assert_str_eq(records[0].subject, "frank");
  ck_assert(!records[0].anonymous);
  ck_assert_int_eq(records[0].decision, MCP_DECISION_ALLOWED);
  ck_assert(!records[0].is_error);
  ck_assert_uint_eq(records[0].nmissing, 0);
  ck_assert_uint_lt(records[0].duration_us, 60u * 1000 * 1000);
  cJSON_Delete(m);

  /* mcp_result_error: allowed, and the record says isError. */
  m = tu_call_tool(&p, "1", "fails", NULL);
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  ck_assert_uint_eq(nrecords, 2);
  ck_assert_str_eq(records[1].tool, "fails");
  ck_assert_int_eq(records[1].decision, MCP_DECISION_ALLOWED);
  ck_assert(records[1].is_error);
  cJSON_Delete(m);

  /* The duration covers the handler. */
  m = tu_call_tool(&p, "1", "slow", NULL);
  ck_assert_uint_eq(nrecords, 3);
  ck_assert_uint_ge(records[2].duration_us, 20000);
  ck_assert_uint_lt(records[2].duration_us, 60u * 1000 * 1000);
  cJSON_Delete(m);

  /* Invalid arguments: a record, with isError, and no handler. */
  int before = handler_calls;
  m = tu_call_tool(&p, "1", "typed", "{}");
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  ck_assert_uint_eq(nrecords, 4);
  ck_assert_str_eq(records[3].tool, "typed");
  ck_assert_int_eq(records[3].decision, MCP_DECISION_INVALID_ARGUMENTS);
  ck_assert(records[3].is_error);
  ck_assert_uint_eq(records[3].nmissing, 0);
  ck_assert_uint_lt(records[3].duration_us, 60u * 1000 * 1000);
  ck_assert_int_eq(handler_calls, before);
  cJSON_Delete(m);

  /* A handler failing internally: allowed, answered -32603. */
  m = tu_call_tool(&p, "1", "broken", NULL);
  tu_assert_json(m, "{\"error\":{\"code\":-32603}}");
  ck_assert_uint_eq(nrecords, 5);
  ck_assert_int_eq(records[4].decision, MCP_DECISION_ALLOWED);
  ck_assert(!records[4].is_error);
  ck_assert(records[4].failed);
  ck_assert(!records[0].failed && !records[1].failed && !records[3].failed);
  cJSON_Delete(m);

  /* Denied for scope. */
  m = tu_call_tool(&p, "1", "needs_x", NULL);
  ck_assert_uint_eq(nrecords, 6);
  ck_assert_int_eq(records[5].decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_uint_eq(records[5].nmissing, 1);
  ck_assert_str_eq(records[5].missing[0], "x");
  cJSON_Delete(m);

  /* None for unknown tools, malformed calls or other methods. */
  m = tu_call_tool(&p, "1", "unknown", NULL);
  tu_assert_json(m, "{\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  m = tu_call_tool(&p, "1", "ok", "[]");
  tu_assert_json(m, "{\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  m = tu_request(&p,
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  cJSON_Delete(m);
  ck_assert_uint_eq(nrecords, 6);

  /* Without a hook nothing is recorded and calls still work. */
  mcp_server_set_audit(srv, NULL, NULL);
  m = tu_call_tool(&p, "1", "ok", NULL);
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"ok:frank\"}]}}");
  cJSON_Delete(m);
  ck_assert_uint_eq(nrecords, 6);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- hints decide nothing ------------------------------------------------ */

/* Every valid combination of hints (promise 1, docs/architecture.md). */
static const mcp_tool_annotations combos[] = {
    {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_TRUE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_FALSE,
     .idempotent = MCP_HINT_FALSE,
     .open_world = MCP_HINT_FALSE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_FALSE,
     .idempotent = MCP_HINT_FALSE,
     .open_world = MCP_HINT_TRUE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_FALSE,
     .idempotent = MCP_HINT_TRUE,
     .open_world = MCP_HINT_FALSE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_FALSE,
     .idempotent = MCP_HINT_TRUE,
     .open_world = MCP_HINT_TRUE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_TRUE,
     .idempotent = MCP_HINT_FALSE,
     .open_world = MCP_HINT_FALSE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_TRUE,
     .idempotent = MCP_HINT_FALSE,
     .open_world = MCP_HINT_TRUE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_TRUE,
     .idempotent = MCP_HINT_TRUE,
     .open_world = MCP_HINT_FALSE},
    {.read_only = MCP_HINT_FALSE,
     .destructive = MCP_HINT_TRUE,
     .idempotent = MCP_HINT_TRUE,
     .open_world = MCP_HINT_TRUE},
};
#define NCOMBOS TU_COUNT(combos)

static const char *const sc_read[] = {"read", NULL};
static const char *const sc_write[] = {"write", NULL};
static const char *const sc_rw[] = {"read", "write", NULL};
static const char *const sc_admin[] = {"admin", NULL};
static const char *const sc_all[] = {"admin", "write", "read", NULL};

static const struct {
  const char *name;
  const char *const *scopes;
} flip_tools[] = {
    {"t_none", NULL}, {"t_read", sc_read},   {"t_write", sc_write},
    {"t_rw", sc_rw},  {"t_admin", sc_admin}, {"t_all", sc_all},
};
#define NTOOLS TU_COUNT(flip_tools)

static const char *const h_read[] = {"read", NULL};
static const char *const h_write[] = {"write", NULL};
static const char *const h_admin[] = {"admin", NULL};
static const char *const h_rw[] = {"read", "write", NULL};
static const char *const h_every[] = {"read", "write", "admin", NULL};
static const char *const h_case[] = {"READ", "Write", NULL};

static const mcp_principal flip_principals[] = {
    {.subject = NULL},
    {.subject = "reader", .scopes = h_read},
    {.subject = "writer", .scopes = h_write},
    {.subject = "admin", .scopes = h_admin},
    {.subject = "carol", .scopes = h_rw},
    {.subject = "everything", .scopes = h_every},
    {.subject = "root", .all_scopes = true},
    {.subject = "shouty", .scopes = h_case},
};
#define NPRINCIPALS TU_COUNT(flip_principals)

static const char *const flip_args[] = {"{}", "{\"deny\":true}"};
#define NARGS TU_COUNT(flip_args)

/* Decides by subject, tool name and arguments: the only facts it has. */
static int flip_authorizer(const mcp_principal *principal, const char *tool,
                           const cJSON *arguments, char *reason,
                           size_t reason_size, void *user_data) {
  (void)user_data;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(arguments, "deny"))) {
    snprintf(reason, reason_size, "asked to deny %s", tool);
    return 1;
  }
  if (principal->subject && strcmp(principal->subject, "carol") == 0 &&
      strcmp(tool, "t_rw") == 0) {
    snprintf(reason, reason_size, "carol may not use %s", tool);
    return 1;
  }
  return 0;
}

/* Builds the server for round k: tool j gets hint combination (j + k) mod
 * NCOMBOS and titles that change every round. */
static mcp_server *flip_server(size_t k) {
  mcp_server *srv = NULL;
  mcp_server_info info = {.name = "flip", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_audit(srv, audit_hook, &nrecords);
  mcp_server_set_authorizer(srv, flip_authorizer, NULL);
  for (size_t j = 0; j < NTOOLS; j++) {
    char title[64], atitle[64];
    snprintf(title, sizeof title, "Title %zu of round %zu", j, k);
    snprintf(atitle, sizeof atitle, "Annotated %zu/%zu", j, k);
    mcp_tool t = {.name = flip_tools[j].name,
                  .title = k % 3 == 2 ? NULL : title,
                  .description = "Flipped.",
                  .scopes = flip_tools[j].scopes,
                  .annotations = combos[(j + k) % NCOMBOS],
                  .handler = record_handler};
    t.annotations.title = k % 2 ? atitle : NULL;
    int rc = mcp_server_add_tool(srv, &t, NULL);
    ck_assert_msg(rc == 0, "round %zu: %s", k, mcp_server_errmsg(srv));
  }
  return srv;
}

/* One round: every (principal, tool, arguments) call's reply and audit
 * record, as text, in out[principal][tool][args]; the tools/list reply of
 * the anonymous session in *list. */
static void flip_round(size_t k, char *out[NPRINCIPALS][NTOOLS][NARGS],
                       char **list) {
  mcp_server *srv = flip_server(k);
  for (size_t i = 0; i < NPRINCIPALS; i++) {
    tu_peer p;
    open_peer(&p, srv, i == 0 ? NULL : &flip_principals[i]);
    if (i == 0) {
      cJSON *m = tu_request(
          &p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
      cJSON_Delete(m);
      *list = strdup(p.out[0]);
    }
    for (size_t j = 0; j < NTOOLS; j++) {
      for (size_t a = 0; a < NARGS; a++) {
        nrecords = 0;
        cJSON *m = tu_call_tool(&p, "1", flip_tools[j].name, flip_args[a]);
        cJSON_Delete(m);
        ck_assert_uint_eq(nrecords, 1);
        char decision[512];
        int n = snprintf(decision, sizeof decision, "%s | decision %d |",
                         p.out[0], (int)records[0].decision);
        for (size_t s = 0; s < records[0].nmissing; s++)
          n += snprintf(decision + n, sizeof decision - (size_t)n, " %s",
                        records[0].missing[s]);
        ck_assert_uint_lt((size_t)n, sizeof decision);
        out[i][j][a] = strdup(decision);
      }
    }
    tu_peer_close(&p);
  }
  mcp_server_free(srv);
}

START_TEST(annotation_flip_changes_no_decision) {
  static char *base[NPRINCIPALS][NTOOLS][NARGS],
      *now[NPRINCIPALS][NTOOLS][NARGS];
  char *base_list = NULL, *list = NULL;
  reset_records();
  flip_round(0, base, &base_list);

  /* The baseline must exercise every kind of decision, or the comparison
   * proves little. */
  int seen[5] = {0};
  for (size_t i = 0; i < NPRINCIPALS; i++)
    for (size_t j = 0; j < NTOOLS; j++)
      for (size_t a = 0; a < NARGS; a++)
        for (int d = 0; d < 3; d++) {
          char tag[32];
          snprintf(tag, sizeof tag, "| decision %d |", d);
          if (strstr(base[i][j][a], tag))
            seen[d]++;
        }
  ck_assert_int_gt(seen[MCP_DECISION_ALLOWED], 10);
  ck_assert_int_gt(seen[MCP_DECISION_DENIED_SCOPE], 10);
  ck_assert_int_gt(seen[MCP_DECISION_DENIED_AUTHORIZER], 10);

  for (size_t k = 1; k < NCOMBOS; k++) {
    flip_round(k, now, &list);
    /* The hints really changed... */
    ck_assert_msg(strcmp(list, base_list) != 0, "round %zu: same tools/list",
                  k);
    free(list);
    /* ...and no decision did. */
    for (size_t i = 0; i < NPRINCIPALS; i++)
      for (size_t j = 0; j < NTOOLS; j++)
        for (size_t a = 0; a < NARGS; a++) {
          ck_assert_msg(strcmp(now[i][j][a], base[i][j][a]) == 0,
                        "round %zu, principal %zu, tool %s, args %s:\n"
                        "  before: %s\n  after:  %s",
                        k, i, flip_tools[j].name, flip_args[a], base[i][j][a],
                        now[i][j][a]);
          free(now[i][j][a]);
        }
  }
  for (size_t i = 0; i < NPRINCIPALS; i++)
    for (size_t j = 0; j < NTOOLS; j++)
      for (size_t a = 0; a < NARGS; a++)
        free(base[i][j][a]);
  free(base_list);
}
END_TEST

/* The decision function itself. Its parameters are the policy, the
 * principal, the tool's name, its required scopes and the arguments: there
 * is no parameter through which a tool's annotations could arrive, so
 * promise 2 holds by construction (the test above shows it end to end). */
START_TEST(policy_decide_direct) {
  static const char *const required[] = {"a", "b", "c", NULL};
  const char *held[] = {"b", NULL};
  mcp_principal who = {.subject = "gina", .scopes = held};
  mcp__policy none = {0};
  cJSON *args = cJSON_CreateObject();
  mcp__decision d;

  ck_assert_int_eq(mcp__policy_decide(&none, &who, "t", required, 3, args, &d),
                   0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_SCOPE);
  /* The missing list points into the required list, in its order. */
  ck_assert_ptr_eq(d.missing[0], required[0]);
  ck_assert_ptr_eq(d.missing[1], required[2]);
  ck_assert_ptr_null(d.missing[2]);
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__decision_data(&b, &d), 0);
  ck_assert_str_eq(mcp__buf_str(&b), "{\"requiredScopes\":[\"a\",\"c\"],"
                                     "\"scopes\":[\"a\",\"b\",\"c\"]}");
  mcp__buf_free(&b);
  mcp__decision_free(&d);
  ck_assert_ptr_null(d.missing);

  /* nrequired bounds the list. */
  ck_assert_int_eq(mcp__policy_decide(&none, &who, "t", required, 2, args, &d),
                   0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_str_eq(d.missing[0], "a");
  ck_assert_ptr_null(d.missing[1]);
  mcp__decision_free(&d);
  ck_assert_int_eq(
      mcp__policy_decide(&none, &who, "t", required + 1, 1, args, &d), 0);
  ck_assert_int_eq(d.decision, MCP_DECISION_ALLOWED);
  ck_assert_ptr_null(d.missing[0]);
  mcp__decision_free(&d);
  ck_assert_int_eq(mcp__policy_decide(&none, &who, "t", NULL, 0, args, &d), 0);
  ck_assert_int_eq(d.decision, MCP_DECISION_ALLOWED);
  mcp__decision_free(&d);

  /* A NULL principal holds nothing. */
  ck_assert_int_eq(mcp__policy_decide(&none, NULL, "t", required, 3, args, &d),
                   0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_ptr_eq(d.missing[2], required[2]);
  mcp__decision_free(&d);

  /* The authorizer, only once the scopes pass. */
  reset_records();
  mcp__policy hook = {.authorize = authorizer, .authorize_data = &authz};
  authz.answer = 1;
  authz.reason = "no";
  ck_assert_int_eq(mcp__policy_decide(&hook, &who, "t", required, 3, args, &d),
                   0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_int_eq(authz.calls, 0);
  mcp__decision_free(&d);
  ck_assert_int_eq(
      mcp__policy_decide(&hook, &who, "tool.x", required + 1, 1, args, &d), 0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_AUTHORIZER);
  ck_assert_int_eq(authz.calls, 1);
  ck_assert_str_eq(authz.tool, "tool.x");
  ck_assert_str_eq(d.reason, "no");
  ck_assert_ptr_null(d.missing[0]);
  ck_assert_int_eq(mcp__decision_data(&b, &d), 0);
  ck_assert_str_eq(mcp__buf_str(&b),
                   "{\"requiredScopes\":[],\"scopes\":[\"b\"],\"reason\":"
                   "\"no\"}");
  mcp__buf_free(&b);
  mcp__decision_free(&d);
  mcp__decision_free(&d); /* twice is harmless */

  /* Out of memory while naming the missing scopes: refused, nothing
   * leaks, the hook is not called. */
  tu_alloc_install(1);
  int calls = authz.calls;
  const mcp_principal nobody = {0};
  ck_assert_int_eq(
      mcp__policy_decide(&hook, &nobody, "t", required + 1, 1, args, &d),
      MCP_ENOMEM);
  ck_assert_int_eq(authz.calls, calls);
  mcp__decision_free(&d);
  ck_assert_int_eq(tu_alloc.live, 0);
  /* An allowed call needs no allocation at all. */
  ck_assert_int_eq(
      mcp__policy_decide(&hook, &who, "t", required + 1, 1, args, &d), 0);
  ck_assert_int_eq(d.decision, MCP_DECISION_DENIED_AUTHORIZER);
  mcp__decision_free(&d);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
  cJSON_Delete(args);
}
END_TEST

/* ---- principal copies ---------------------------------------------------- */

START_TEST(principal_copy_is_deep) {
  char subject[] = "alice", s1[] = "read", s2[] = "write";
  const char *scopes[] = {s1, s2, NULL};
  mcp_principal src = {.subject = subject, .scopes = scopes};
  mcp_principal dst;
  ck_assert_int_eq(mcp__principal_copy(&dst, &src), 0);
  ck_assert_ptr_ne(dst.subject, src.subject);
  ck_assert_ptr_ne(dst.scopes, src.scopes);
  ck_assert_ptr_ne(dst.scopes[0], s1);
  strcpy(subject, "mal");
  s1[0] = 'X';
  scopes[1] = NULL;
  ck_assert_str_eq(dst.subject, "alice");
  ck_assert_str_eq(dst.scopes[0], "read");
  ck_assert_str_eq(dst.scopes[1], "write");
  ck_assert_ptr_null(dst.scopes[2]);
  ck_assert(!dst.all_scopes);
  mcp__principal_free(&dst);
  ck_assert_ptr_null(dst.subject);
  ck_assert_ptr_null(dst.scopes);

  /* NULL is the anonymous principal; flags and empty lists survive. */
  ck_assert_int_eq(mcp__principal_copy(&dst, NULL), 0);
  ck_assert_ptr_null(dst.subject);
  ck_assert(!mcp_principal_has_scope(&dst, "read"));
  ck_assert(!dst.all_scopes);
  mcp__principal_free(&dst);
  mcp_principal all = {.all_scopes = true};
  ck_assert_int_eq(mcp__principal_copy(&dst, &all), 0);
  ck_assert(dst.all_scopes);
  ck_assert_ptr_null(dst.subject);
  ck_assert(mcp_principal_has_scope(&dst, "anything"));
  mcp__principal_free(&dst);
}
END_TEST

static char seen_subject[64];
static char seen_scopes[128];
static bool seen_all;

static int principal_handler(mcp_call *call, void *user_data) {
  (void)user_data;
  const mcp_principal *p = mcp_call_principal(call);
  ck_assert_ptr_nonnull(p);
  snprintf(seen_subject, sizeof seen_subject, "%s",
           p->subject ? p->subject : "(anonymous)");
  join_scopes(seen_scopes, sizeof seen_scopes, p);
  seen_all = p->all_scopes;
  return mcp_result_text(call, "ok");
}

START_TEST(session_principal_is_copied) {
  static const char *const need_read[] = {"read", NULL};
  static const char *const need_admin[] = {"admin", NULL};
  mcp_server *srv = new_server();
  mcp_tool t = {
      .name = "whoami",
      .description = "Says who calls.",
      .scopes = need_read,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = principal_handler};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  t.name = "admin";
  t.scopes = need_admin;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);

  char subject[] = "alice", s1[] = "read", s2[] = "write";
  const char *scopes[] = {s1, s2, NULL};
  mcp_principal src = {.subject = subject, .scopes = scopes};
  tu_peer p;
  open_peer(&p, srv, &src);
  /* Rewrite everything the caller owns. */
  strcpy(subject, "bob");
  strcpy(s1, "xxxx");
  strcpy(s2, "admin");
  scopes[0] = "admin";
  src.all_scopes = true;

  cJSON *m = tu_call_tool(&p, "1", "whoami", NULL);
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
  cJSON_Delete(m);
  ck_assert_str_eq(seen_subject, "alice");
  ck_assert_str_eq(seen_scopes, "read write");
  ck_assert(!seen_all);
  m = tu_call_tool(&p, "1", "admin", NULL);
  tu_assert_json(m, "{\"error\":{\"code\":-31403,\"data\":{"
                    "\"requiredScopes\":[\"admin\"]}}}");
  cJSON_Delete(m);
  tu_peer_close(&p);

  /* NULL: anonymous, no scopes. */
  add_tool(srv, "open", NULL, NULL);
  t.name = "whoami2";
  t.scopes = NULL;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  open_peer(&p, srv, NULL);
  m = tu_call_tool(&p, "1", "whoami2", NULL);
  cJSON_Delete(m);
  ck_assert_str_eq(seen_subject, "(anonymous)");
  ck_assert_str_eq(seen_scopes, "");
  ck_assert(!seen_all);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(principal_copy_allocation_failure) {
  const char *scopes[] = {"one", "two", "three", NULL};
  mcp_principal src = {.subject = "subject", .scopes = scopes};
  long n;
  int rc = -1;
  for (n = 1; n < 100; n++) {
    tu_alloc_install(n);
    mcp_principal dst = {.subject = "untouched"};
    rc = mcp__principal_copy(&dst, &src);
    if (rc == 0) {
      ck_assert_int_eq(tu_alloc.failures, 0);
      ck_assert_str_eq(dst.subject, "subject");
      ck_assert_str_eq(dst.scopes[2], "three");
      mcp__principal_free(&dst);
    } else {
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_int_eq(tu_alloc.failures, 1);
      /* Left untouched on failure. */
      ck_assert_str_eq(dst.subject, "untouched");
      ck_assert_ptr_null(dst.scopes);
    }
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(n, 6); /* the list, three scopes, the subject, then OK */
}
END_TEST

static int never_send(const char *message, size_t len, void *user_data) {
  (void)message;
  (void)len;
  (void)user_data;
  return 0;
}

START_TEST(session_new_allocation_failure) {
  const char *scopes[] = {"one", "two", NULL};
  mcp_principal src = {.subject = "subject", .scopes = scopes};
  long n;
  int rc = -1;
  for (n = 1; n < 100; n++) {
    tu_alloc_install(0);
    mcp_server *srv = new_server();
    tu_alloc_arm(n);
    mcp_session *s = (mcp_session *)&n; /* must stay untouched on failure */
    rc = mcp_session_new(srv, &src, never_send, NULL, &s);
    tu_alloc_disarm();
    if (rc == 0) {
      ck_assert_ptr_ne(s, (mcp_session *)&n);
      mcp_session_free(s);
    } else {
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_ptr_eq(s, (mcp_session *)&n);
    }
    mcp_server_free(srv);
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_int_gt(n, 4);
}
END_TEST

/* ---- scope-token syntax -------------------------------------------------- */

/* The union of the tools' scopes, for a transport's scopes_supported. */
START_TEST(server_scopes_union) {
  static const char *const ab[] = {"b", "a", NULL};
  static const char *const bc[] = {"c", "b", NULL};
  mcp_server *srv = new_server();
  char buf[64];
  ck_assert_int_eq(mcp_server_scopes(srv, buf, sizeof buf), 0);
  ck_assert_str_eq(buf, "");
  add_tool(srv, "one", ab, NULL);
  add_tool(srv, "two", bc, NULL);
  add_tool(srv, "three", NULL, NULL);
  ck_assert_int_eq(mcp_server_scopes(srv, buf, sizeof buf), 5);
  ck_assert_str_eq(buf, "a b c");
  /* Too small: truncated at a whole scope, and the length says so. */
  ck_assert_int_eq(mcp_server_scopes(srv, buf, 4), 5);
  ck_assert_str_eq(buf, "a b");
  ck_assert_int_eq(mcp_server_scopes(srv, NULL, 0), 5);
  ck_assert_int_eq(mcp_server_scopes(NULL, buf, sizeof buf), MCP_EINVAL);
  mcp_server_free(srv);
}
END_TEST

static int lint_lines;
static void count_log(mcp_log_level level, const char *message,
                      void *user_data) {
  (void)message;
  (void)user_data;
  if (level == MCP_LOG_WARNING)
    lint_lines++;
}

/* Unguarded destructive or open-world tools are pointed out; scopes no
 * authorization server issues too. A warning, never a decision. */
START_TEST(lint_points_at_unguarded_tools) {
  static const char *const w[] = {"w", NULL};
  mcp_server *srv = new_server();
  mcp_server_set_log(srv, count_log, NULL);
  add_tool(srv, "guarded", w, NULL); /* destructive, open world, scoped */
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 0);
  add_tool(srv, "naked", NULL, NULL); /* destructive, open world, no scope */
  lint_lines = 0;
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 1);
  ck_assert_int_eq(lint_lines, 1);
  static const char *const supported[] = {"other", NULL};
  ck_assert_uint_eq(mcp_server_lint(srv, supported), 2);
  mcp_tool ro = {
      .name = "reader",
      .description = "Reads.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = record_handler};
  ck_assert_int_eq(mcp_server_add_tool(srv, &ro, NULL), 0);
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 1); /* reader is fine */
  mcp_server_free(srv);
}
END_TEST

START_TEST(scope_token_table) {
  static const struct {
    const char *s;
    bool valid;
  } table[] = {
      {"a", true},
      {"read", true},
      {"mcp:tools.read", true},
      {"https://example.com/scope", true},
      {"!", true}, /* %x21 */
      {"#", true}, /* %x23, the first after '"' */
      {"[", true}, /* %x5B, the last before '\\' */
      {"]", true}, /* %x5D, the first after '\\' */
      {"~", true}, /* %x7E */
      {"!#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`"
       "abcdefghijklmnopqrstuvwxyz{|}~",
       true},
      {NULL, false},
      {"", false},
      {" ", false}, /* %x20 */
      {"a b", false},
      {"a ", false},
      {"\"", false}, /* %x22 */
      {"a\"b", false},
      {"\\", false}, /* %x5C */
      {"a\\b", false},
      {"\t", false},
      {"a\nb", false},
      {"\x01", false},
      {"\x1f", false},
      {"\x7f", false}, /* DEL */
      {"\x80", false},
      {"caf\xc3\xa9", false}, /* valid UTF-8, not ASCII */
      {"\xff", false},
  };
  for (size_t i = 0; i < TU_COUNT(table); i++)
    ck_assert_msg(mcp__scope_token_valid(table[i].s) == table[i].valid,
                  "entry %zu (\"%s\") should be %s", i,
                  table[i].s ? table[i].s : "NULL",
                  table[i].valid ? "valid" : "invalid");
  /* Every single byte, against the grammar. */
  for (int c = 1; c < 256; c++) {
    char s[2] = {(char)c, 0};
    bool want =
        c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
    ck_assert_msg(mcp__scope_token_valid(s) == want, "byte 0x%02x", c);
  }
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static Suite *policy_suite(void) {
  Suite *s = suite_create("policy");
  TCase *t = tcase_create("scopes");
  tcase_add_test(t, has_scope_exact);
  tcase_add_test(t, all_scopes_required);
  tcase_add_test(t, denial_message_and_data);
  tcase_add_test(t, scope_token_table);
  tcase_add_test(t, server_scopes_union);
  tcase_add_test(t, lint_points_at_unguarded_tools);
  suite_add_tcase(s, t);

  t = tcase_create("hooks");
  tcase_add_test(t, authorizer_sees_call);
  tcase_add_test(t, authorizer_denies);
  tcase_add_test(t, authorizer_reason_utf8);
  tcase_add_test(t, authorizer_before_argument_check);
  tcase_add_test(t, audit_one_record_per_call);
  tcase_add_test(t, duplicate_id_skips_policy);
  suite_add_tcase(s, t);

  t = tcase_create("hints");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, annotation_flip_changes_no_decision);
  tcase_add_test(t, policy_decide_direct);
  suite_add_tcase(s, t);

  t = tcase_create("principal");
  tcase_add_test(t, principal_copy_is_deep);
  tcase_add_test(t, session_principal_is_copied);
  tcase_add_test(t, principal_copy_allocation_failure);
  tcase_add_test(t, session_new_allocation_failure);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(policy_suite()); }
