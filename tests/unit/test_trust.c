/* Tests for trust annotations (lib/engine/trust.c, the
 * io.modelcontextprotocol/trust-annotations extension): labels on a tool's
 * result and on single blocks, an open-world call's untrusted default,
 * sent only to a client that negotiated the extension. The wire cases are
 * the Tool Annotations Interest Group's worked examples (emitter
 * classification A1-A5, evidenceRef B1-B2), their facts written here. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define EXT "io.modelcontextprotocol/trust-annotations"
#define DECLARED "{\"extensions\":{\"" EXT "\":{}}}"

/* The cases' evidenceRefs. */
static const mcp_evidence_ref a1 = {
    .type = "data-class.v1",
    .digest =
        "sha256:"
        "c509d629b2ab94b573c44ac10acb4941ab3949ff3cf857983c643bb0a476cefb",
    .canonicalization = "jcs/rfc8785",
    .schema = "https://example/data-class.v1.json"};
static const mcp_evidence_ref a2 = {
    .type = "data-class.v1",
    .digest =
        "sha256:"
        "363f86281f3e7c0996573bd26b65099dd03c893666a6ad51752194c8bad75bcf",
    .canonicalization = "jcs/rfc8785"};
static const mcp_evidence_ref a3 = {
    .type = "data-class.v1",
    .digest =
        "sha256:"
        "a920a4da0a92c06841f9ae11f91aceb29f8d169da18554b386d809142bae9b56",
    .canonicalization = "cbor/rfc8949"};
static const mcp_evidence_ref b1 = {
    .type = "policy-decision",
    .digest =
        "sha256:"
        "48dce5db5820f4a6069c659b99075c4881184827fdb27af82079a96d5929f46d",
    .canonicalization = "cbor/rfc8949",
    .schema = "https://example/policy-decision.v1.json",
    .ref = "audit://decisions/2026-06-16/0001"};

/* The tool "classify": its case argument picks what it labels. */
static int classify(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *c = "";
  mcp_call_arg_string(call, "case", &c);
  int rc = 0;
  if (strcmp(c, "A1") == 0)
    rc = mcp_result_trust(call, MCP_TRUST_SENSITIVE, &a1);
  else if (strcmp(c, "A2") == 0)
    rc = mcp_result_trust(call, 0, &a2);
  else if (strcmp(c, "A3") == 0)
    rc = mcp_result_trust(call, MCP_TRUST_SENSITIVE, &a3);
  else if (strcmp(c, "B1") == 0)
    rc = mcp_result_trust(call, 0, &b1);
  ck_assert_int_eq(rc, 0);
  if (strcmp(c, "A5") == 0) {
    mcp_result_text(call, "a public result");
    ck_assert_int_eq(mcp_result_trust_next(call, MCP_TRUST_SENSITIVE, &a1), 0);
    mcp_result_text(call, "the private advisory");
    return mcp_result_text(call, "another public result");
  }
  return mcp_result_text(call, "classified");
}

/* fetch: open-world, so untrusted unless it vouches ("vouch": true). */
static int fetch(mcp_call *call, void *user_data) {
  (void)user_data;
  bool vouch = false;
  mcp_call_arg_bool(call, "vouch", &vouch);
  if (vouch)
    ck_assert_int_eq(mcp_result_trust(call, MCP_TRUST_TRUSTED, NULL), 0);
  return mcp_result_text(call, "from the web");
}

/* misuse: every refusal of the setters. */
static int misuse(mcp_call *call, void *user_data) {
  (void)user_data;
  mcp_evidence_ref bad = a1;
  ck_assert_int_eq(mcp_result_trust(call, 8, NULL), MCP_EINVAL);
  ck_assert_int_eq(
      mcp_result_trust(call, MCP_TRUST_TRUSTED | MCP_TRUST_UNTRUSTED, NULL),
      MCP_EINVAL);
  ck_assert_int_eq(mcp_result_trust_next(call, MCP_TRUST_TRUSTED, NULL),
                   MCP_EINVAL); /* a block cannot weaken */
  bad.digest = "sha256:C509";
  ck_assert_int_eq(mcp_result_trust(call, 0, &bad), MCP_EINVAL);
  bad.digest = "md5:00";
  ck_assert_int_eq(mcp_result_trust(call, 0, &bad), MCP_EINVAL);
  bad = a1;
  bad.canonicalization = "json";
  ck_assert_int_eq(mcp_result_trust(call, 0, &bad), MCP_EINVAL);
  bad = a1;
  bad.type = "";
  ck_assert_int_eq(mcp_result_trust_next(call, 0, &bad), MCP_EINVAL);
  ck_assert_int_eq(mcp_result_trust(NULL, 0, NULL), MCP_EINVAL);
  mcp_result_text(call, "first");
  /* The result's labels open it: too late now. */
  ck_assert_int_eq(mcp_result_trust(call, MCP_TRUST_SENSITIVE, NULL),
                   MCP_ESTATE);
  return 0;
}

static mcp_server *new_server(void) {
  const mcp_server_info info = {.name = "trust", .version = "1"};
  mcp_server *srv;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  const mcp_tool tools[] = {
      {.name = "classify",
       .description = "Labels its result as a case says.",
       .annotations = {.read_only = MCP_HINT_TRUE,
                       .open_world = MCP_HINT_FALSE},
       .input_schema = "{\"type\":\"object\",\"properties\":{\"case\":{"
                       "\"type\":\"string\"}}}",
       .handler = classify},
      {.name = "fetch",
       .description = "Fetches a page.",
       .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_TRUE},
       .input_schema = "{\"type\":\"object\",\"properties\":{\"vouch\":{"
                       "\"type\":\"boolean\"}}}",
       .handler = fetch},
      {.name = "misuse",
       .description = "Calls the setters wrongly.",
       .annotations = {.read_only = MCP_HINT_TRUE,
                       .open_world = MCP_HINT_FALSE},
       .handler = misuse},
  };
  for (size_t i = 0; i < TU_COUNT(tools); i++)
    ck_assert_int_eq(mcp_server_add_tool(srv, &tools[i], NULL), 0);
  return srv;
}

static cJSON *call_modern(tu_peer *p, const char *tool, const char *args,
                          bool declared) {
  return tu_ask(p, tu_mcall(1, tool, args,
                            declared ? TU_META(DECLARED) : TU_META_NONE, NULL,
                            NULL));
}

static const cJSON *result_label(const cJSON *m) {
  return tu_get(tu_jget(m, "result._meta"), EXT);
}

START_TEST(worked_cases_on_the_wire) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  static const struct {
    const char *c, *label;
  } rows[] = {
      {"A1", "{\"sensitive\":true,\"evidenceRef\":{\"type\":\"data-class.v1\","
             "\"digest\":\"sha256:c509d629b2ab94b573c44ac10acb4941ab3949ff3cf8"
             "57983c643bb0a476cefb\",\"canonicalization\":\"jcs/rfc8785\","
             "\"schema\":\"https://example/data-class.v1.json\"}}"},
      /* World-readable: no sensitive claim, never "sensitive": false. */
      {"A2", "{\"evidenceRef\":{\"type\":\"data-class.v1\",\"digest\":"
             "\"sha256:363f86281f3e7c0996573bd26b65099dd03c893666a6ad51752194"
             "c8bad75bcf\",\"canonicalization\":\"jcs/rfc8785\"}}"},
      {"A3", "{\"sensitive\":true,\"evidenceRef\":{\"type\":\"data-class.v1\","
             "\"digest\":\"sha256:a920a4da0a92c06841f9ae11f91aceb29f8d169da185"
             "54b386d809142bae9b56\",\"canonicalization\":\"cbor/rfc8949\"}}"},
      {"B1", "{\"evidenceRef\":{\"type\":\"policy-decision\",\"digest\":"
             "\"sha256:48dce5db5820f4a6069c659b99075c4881184827fdb27af82079a9"
             "6d5929f46d\",\"canonicalization\":\"cbor/rfc8949\",\"schema\":"
             "\"https://example/policy-decision.v1.json\",\"ref\":\"audit://"
             "decisions/2026-06-16/0001\"}}"},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    char *args = tu_text("{\"case\":\"%s\"}", rows[i].c);
    cJSON *m = call_modern(&p, "classify", args, true);
    tu_assert_exact(result_label(m), rows[i].label);
    /* The core's serverInfo stays beside it. */
    ck_assert_ptr_nonnull(tu_get(tu_jget(m, "result._meta"),
                                 "io.modelcontextprotocol/serverInfo"));
    cJSON_Delete(m);
    /* Not negotiated on this request: nothing. */
    m = call_modern(&p, "classify", args, false);
    ck_assert_ptr_null(result_label(m));
    cJSON_Delete(m);
    free(args);
  }
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* A5: the result makes no claim; the one private block does. */
START_TEST(a_block_label_strengthens_only_its_block) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  cJSON *m = call_modern(&p, "classify", "{\"case\":\"A5\"}", true);
  ck_assert_ptr_null(result_label(m));
  ck_assert_ptr_null(tu_jget(m, "result.content.0._meta"));
  tu_assert_json(tu_get(tu_jget(m, "result.content.1._meta"), EXT),
                 "{\"sensitive\":true,\"evidenceRef\":{\"type\":"
                 "\"data-class.v1\"}}");
  ck_assert_str_eq(tu_jstr(m, "result.content.1.text"), "the private advisory");
  ck_assert_ptr_null(tu_jget(m, "result.content.2._meta"));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(open_world_results_are_untrusted_by_default) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  cJSON *m = call_modern(&p, "fetch", "{}", true);
  tu_assert_exact(result_label(m), "{\"untrusted\":true}");
  cJSON_Delete(m);
  m = call_modern(&p, "fetch", "{\"vouch\":true}", true);
  ck_assert_ptr_null(result_label(m)); /* vouched: no claim */
  cJSON_Delete(m);
  tu_peer_close(&p);
  /* Legacy: negotiated at initialize, advertised by the server. */
  tu_peer_open(&p, srv, NULL);
  tu_clear(&p);
  tu_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"2025-11-25\","
              "\"capabilities\":" DECLARED
              ",\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
  cJSON *init = tu_msg(&p, 0);
  ck_assert_ptr_nonnull(
      tu_get(tu_jget(init, "result.capabilities.extensions"), EXT));
  cJSON_Delete(init);
  tu_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  m = tu_call_tool(&p, "2", "fetch", "{}");
  tu_assert_exact(result_label(m), "{\"untrusted\":true}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  /* A legacy session that did not declare it hears nothing. */
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  m = tu_call_tool(&p, "3", "fetch", "{}");
  ck_assert_ptr_null(tu_jget(m, "result._meta"));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(setters_refuse_what_is_wrong) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  cJSON *m = call_modern(&p, "misuse", "{}", true);
  ck_assert_str_eq(tu_jstr(m, "result.content.0.text"), "first");
  ck_assert_ptr_null(result_label(m));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("trust");
  TCase *tc = tcase_create("trust");
  tcase_add_test(tc, worked_cases_on_the_wire);
  tcase_add_test(tc, a_block_label_strengthens_only_its_block);
  tcase_add_test(tc, open_world_results_are_untrusted_by_default);
  tcase_add_test(tc, setters_refuse_what_is_wrong);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
