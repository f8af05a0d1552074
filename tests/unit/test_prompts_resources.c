/* Tests for lib/methods/prompts_resources.c (prompts/get, resources/read,
 * completion/complete) and what serves them: the registration rules of
 * prompts, resources and resource templates (lib/registry/catalog.c), the
 * capabilities and methods offered for what is registered (server.c's
 * look-ups), their lists (lib/methods/lists.c) and logging/setLevel
 * (lib/methods/lifecycle.c) as prompts and resources log, in both eras.
 * Subscriptions are unit/test_subscriptions.c's; the fixture both share is
 * common/entries.c.
 *
 * Only the public API is used: sessions are driven with strings and every
 * reply is parsed with cJSON and compared member by member. Every captured
 * message is checked to be JSON (an object, or a batch's array) without a
 * raw newline. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"

/* ---- requests ------------------------------------------------------------ */

/* A completion reference to the prompt "greet". */
#define REF_GREET_TEXT "{\"type\":\"ref/prompt\",\"name\":\"greet\"}"

static const char FORM[] =
    "{\"mode\":\"form\",\"message\":\"Really?\",\"requestedSchema\":{"
    "\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
    "\"required\":[\"ok\"]}}";
static const char ACCEPT[] =
    "{\"action\":\"accept\",\"content\":{\"ok\":true}}";

/* ---- helpers ------------------------------------------------------------- */

/* Asserts mcp_server_errmsg(srv) is exactly expected. */
#define EXPECT_ERRMSG(expected)                                                \
  ck_assert_str_eq(mcp_server_errmsg(srv), (expected))

/* The capabilities a fresh session of s is told in initialize at version
 * (a copy; free with cJSON_Delete). */
/* Every server with a tool offers trust annotations from 2025-11-25
 * (test_trust.c): asserted here, then taken out of caps, so that the
 * capabilities these tests compare are the ones of prompts and
 * resources. */
static void take_trust(cJSON *caps, bool offered) {
  cJSON *ext = cJSON_GetObjectItemCaseSensitive(caps, "extensions");
  cJSON *trust = cJSON_DetachItemFromObjectCaseSensitive(
      ext, "io.modelcontextprotocol/trust-annotations");
  ck_assert_msg((trust != NULL) == offered, "trust-annotations %s",
                offered ? "not offered" : "offered before 2025-11-25");
  cJSON_Delete(trust);
  if (ext && ext->child == NULL)
    cJSON_DeleteItemFromObjectCaseSensitive(caps, "extensions");
}

static cJSON *initialize_caps(mcp_server *s, const char *version) {
  tu_peer q;
  tu_peer_open_with(&q, s, NULL, inspect);
  cJSON *r =
      tu_ask(&q, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                         "\"initialize\",\"params\":{\"protocolVersion\":"
                         "\"%s\",\"capabilities\":{},\"clientInfo\":{"
                         "\"name\":\"c\"}}}",
                         version));
  cJSON *caps = cJSON_Duplicate(tu_get(tu_result_of(r), "capabilities"), 1);
  ck_assert_ptr_nonnull(caps);
  cJSON_Delete(r);
  tu_peer_close(&q);
  take_trust(caps, strcmp(version, "2025-11-25") >= 0);
  return caps;
}

/* The capabilities of server/discover (a copy). */
static cJSON *discover_caps(mcp_server *s) {
  tu_peer q;
  tu_peer_open_with(&q, s, NULL, inspect);
  cJSON *r = tu_ask(&q, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  cJSON *caps = cJSON_Duplicate(tu_get(tu_result_of(r), "capabilities"), 1);
  ck_assert_ptr_nonnull(caps);
  cJSON_Delete(r);
  tu_peer_close(&q);
  take_trust(caps, true);
  return caps;
}

/* Comma-separated values of member key of each element of array. */
/* The nextCursor of reply r, copied (freed by the caller); a cursor is
 * opaque, so a test takes the one the server gave. */
static char *cursor_of(const cJSON *r) {
  const char *c = tu_jstr(r, "result.nextCursor");
  ck_assert_ptr_nonnull(c);
  return tu_text("%s", c);
}

/* {"cursor":"c"}, for tu_req (freed by the caller). */
static char *with_cursor(const char *c) {
  return tu_text("{\"cursor\":\"%s\"}", c);
}

static void names_of(const cJSON *array, const char *key, char *dst, size_t n) {
  dst[0] = '\0';
  ck_assert(cJSON_IsArray(array));
  for (const cJSON *e = array->child; e; e = e->next) {
    const cJSON *v = tu_get(e, key);
    ck_assert(cJSON_IsString(v));
    size_t k = strlen(dst);
    snprintf(dst + k, n - k, "%s%s", k ? "," : "", v->valuestring);
  }
}

/* A prompts/get of name with arguments (JSON text or NULL), legacy. */
static char *get_prompt(int id, const char *name, const char *args) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"prompts/get\","
                 "\"params\":{\"name\":\"%s\"%s%s}}",
                 id, name, args ? ",\"arguments\":" : "", args ? args : "");
}

/* A resources/read of uri (put between quotes as is), legacy. */
static char *read_uri(int id, const char *uri) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\","
                 "\"params\":{\"uri\":\"%s\"}}",
                 id, uri);
}

/* A completion/complete of ref (JSON text) for argument name = value, with
 * context (JSON text of context.arguments) or NULL. */
static char *complete_req(int id, const char *ref, const char *name,
                          const char *value, const char *context) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"completion/"
                 "complete\",\"params\":{\"ref\":%s,\"argument\":{\"name\":"
                 "\"%s\",\"value\":\"%s\"}%s%s%s}}",
                 id, ref, name, value,
                 context ? ",\"context\":{\"arguments\":" : "",
                 context ? context : "", context ? "}" : "");
}

/* ===========================================================================
 * Registration
 * ======================================================================== */

static int h_unused(mcp_call *call, void *user_data) {
  (void)call;
  (void)user_data;
  return MCP_EINTERNAL;
}

START_TEST(prompt_registration_rules) {
  ck_assert_int_eq(mcp_server_add_prompt(NULL, &PROMPT_PLAIN, NULL),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_server_add_prompt(srv, NULL, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("the prompt definition is NULL");

  mcp_prompt p = {.name = "a b", .description = "d", .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"a b\": the name must be 1-128 characters of "
                "[A-Za-z0-9_.-]");
  p.name = "";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"\": the name must be 1-128 characters of "
                "[A-Za-z0-9_.-]");
  p.name = NULL;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"\": the name must be 1-128 characters of "
                "[A-Za-z0-9_.-]");
  p.name = "caf\xc3\xa9";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  p.name = "bad\xff";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"(invalid UTF-8)\": the name must be 1-128 "
                "characters of [A-Za-z0-9_.-]");
  char longname[130];
  memset(longname, 'x', 129);
  longname[129] = '\0';
  p.name = longname;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  longname[128] = '\0';
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), 0);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, longname), 0);

  p.name = "p";
  p.handler = NULL;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": a handler is required");
  p.handler = h_unused;
  p.description = NULL;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": a description is required (clients show it "
                "when offering the prompt)");
  p.description = "";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": a description is required (clients show it "
                "when offering the prompt)");
  p.description = "d";
  p.title = "\xc3";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": title and description must be UTF-8");
  p.title = NULL;

  mcp_prompt_argument args[3] = {{.name = "x y"}, {.name = NULL}};
  p.arguments = args;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": argument \"x y\": the name must be 1-128 "
                "characters of [A-Za-z0-9_.-]");
  args[0] = (mcp_prompt_argument){.name = "x", .description = "\xff"};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": argument \"x\": title and description must be "
                "UTF-8");
  args[0] = (mcp_prompt_argument){.name = "x"};
  args[1] = (mcp_prompt_argument){.name = "x", .required = true};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": argument \"x\" is listed twice");
  args[1].name = NULL;

  const char *const twice[] = {"s", "s", NULL};
  p.scopes = twice;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": scope \"s\" is listed twice");
  const char *const spaced[] = {"a b", NULL};
  p.scopes = spaced;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("prompt \"p\": scope \"a b\" is not an RFC 6750 scope token "
                "(printable ASCII without space, '\"' or '\\')");
  p.scopes = NULL;

  /* Nothing refused was kept: there are no prompts to offer. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, tu_req(1, "prompts/list", NULL));
  tu_assert_error(r, -32601, "prompts/list");
  cJSON_Delete(r);
  ck_assert_uint_eq(P.nout, 1); /* and no list_changed was sent */

  /* A good one, once; a prompt may share a tool's name. */
  p.name = "run";
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), 0);
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EEXIST);
  EXPECT_ERRMSG("prompt \"run\": a prompt of that name is already registered");
  r = tu_ask(&P, tu_req(2, "prompts/list", NULL));
  tu_assert_exact(tu_get(tu_result_of(r), "prompts"),
                  "[{\"name\":\"run\",\"description\":\"d\",\"arguments\":"
                  "[{\"name\":\"x\",\"required\":false}]}]");
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "nope"), MCP_ENOENT);
  EXPECT_ERRMSG("prompt \"nope\": no prompt of that name is registered");
  ck_assert_int_eq(mcp_server_remove_prompt(srv, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_remove_prompt(NULL, "run"), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "run"), 0);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "run"), MCP_ENOENT);
  /* The tool of that name is untouched. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
}
END_TEST

/* Reads the URI asked for as a text, and another URI beside it. */
static int h_read_two(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = mcp_result_resource_text(call, mcp_call_uri(call), "text/plain",
                                    "the one asked for");
  return rc ? rc
            : mcp_result_resource_text(call, "file:///other", "text/plain",
                                       "another");
}

/* Reads the URI asked for with mcp_result_text. */
static int h_read_text(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "a template's text");
}

/* Icons and _meta on prompts, resources and templates: refused with the
 * rest of a definition's problems, and sent as each version defines them
 * (_meta from 2025-06-18, icons from 2025-11-25). */
START_TEST(icons_and_meta_on_the_surface) {
  static const char *const any[] = {"any", NULL};
  static const mcp_icon icon[] = {
      {.src = "data:image/svg+xml;base64,PHN2Zy8+", .sizes = any},
      {.src = NULL}};
  static const mcp_icon http_icon[] = {{.src = "http://example.com/a.png"},
                                       {.src = NULL}};
  mcp_prompt p = {.name = "p",
                  .description = NULL,
                  .handler = h_unused,
                  .icons = http_icon,
                  .meta = "{\"io.modelcontextprotocol/x\":1}"};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), MCP_EINVAL);
  const char *msg = mcp_server_errmsg(srv);
  ck_assert_msg(strstr(msg, "prompt \"p\": a description is required") &&
                    strstr(msg, "icon 0: src must be an https: URL") &&
                    strstr(msg, "meta key \"io.modelcontextprotocol/x\": its "
                                "prefix is reserved for the protocol"),
                "%s", msg);
  mcp_resource r = {
      .uri = "file:///r", .name = "r", .handler = h_unused, .meta = "[1]"};
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///r\": meta must be a JSON object");
  mcp_resource t = {.uri_template = "file:///t/{x}",
                    .name = "t",
                    .handler = h_unused,
                    .icons = http_icon};
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), MCP_EINVAL);
  msg = mcp_server_errmsg(srv);
  const char *want = "resource template \"file:///t/{x}\": icon 0: ";
  ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "%s", msg);

  p.description = "d";
  p.icons = icon;
  p.meta = "{\"com.example/p\":true}";
  r.icons = icon;
  r.meta = "{\"com.example/r\":[]}";
  r.handler = h_read_two;
  t.icons = icon;
  t.meta = "{\"com.example/t\":{}}";
  t.handler = h_read_text;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), 0);
  static const char icon_json[] =
      "[{\"src\":\"data:image/svg+xml;base64,PHN2Zy8+\",\"sizes\":[\"any\"]}]";
  static const struct {
    const char *method, *list, *meta;
  } lists[] = {
      {"prompts/list", "prompts", "{\"com.example/p\":true}"},
      {"resources/list", "resources", "{\"com.example/r\":[]}"},
      {"resources/templates/list", "resourceTemplates",
       "{\"com.example/t\":{}}"},
  };
  static const char *const versions[] = {"2025-03-26", "2025-06-18",
                                         "2025-11-25", "2026-07-28"};
  for (size_t v = 0; v < TU_COUNT(versions); v++) {
    bool modern = strcmp(versions[v], "2026-07-28") == 0;
    tu_peer q;
    tu_peer_open_with(&q, srv, &ALICE, inspect);
    if (!modern)
      tu_legacy_init(&q, versions[v], "{}");
    for (size_t k = 0; k < TU_COUNT(lists); k++) {
      cJSON *reply =
          tu_ask(&q, modern ? tu_mreq(1, lists[k].method, TU_META_NONE, NULL)
                            : tu_req(1, lists[k].method, NULL));
      const cJSON *item = NULL;
      for (const cJSON *e = tu_get(tu_result_of(reply), lists[k].list)->child;
           e; e = e->next) {
        const char *id = tu_jstr(e, "name");
        if (id && (strcmp(id, "p") == 0 || strcmp(id, "r") == 0 ||
                   strcmp(id, "t") == 0))
          item = e;
      }
      ck_assert_msg(item != NULL, "%s %s", versions[v], lists[k].method);
      bool has_meta = v >= 1, has_icons = v >= 2;
      if (has_meta)
        tu_assert_exact(tu_get(item, "_meta"), lists[k].meta);
      else
        ck_assert_ptr_null(tu_get(item, "_meta"));
      if (has_icons)
        tu_assert_exact(tu_get(item, "icons"), icon_json);
      else
        ck_assert_ptr_null(tu_get(item, "icons"));
      cJSON_Delete(reply);
    }
    /* resources/read: the item of the URI read carries the resource's
     * _meta, another item does not. */
    cJSON *read = tu_ask(
        &q, modern ? tu_mreq(2, "resources/read", TU_META_NONE,
                             "\"uri\":\"file:///r\"")
                   : tu_req(2, "resources/read", "{\"uri\":\"file:///r\"}"));
    const cJSON *items = tu_jget(read, "result.contents");
    ck_assert_int_eq(cJSON_GetArraySize(items), 2);
    if (v >= 1)
      tu_assert_exact(tu_get(cJSON_GetArrayItem(items, 0), "_meta"),
                      "{\"com.example/r\":[]}");
    else
      ck_assert_ptr_null(tu_get(cJSON_GetArrayItem(items, 0), "_meta"));
    ck_assert_ptr_null(tu_get(cJSON_GetArrayItem(items, 1), "_meta"));
    cJSON_Delete(read);
    /* mcp_result_text's item for the URI read carries it too. */
    read = tu_ask(
        &q, modern ? tu_mreq(3, "resources/read", TU_META_NONE,
                             "\"uri\":\"file:///t/1\"")
                   : tu_req(3, "resources/read", "{\"uri\":\"file:///t/1\"}"));
    const cJSON *item = tu_jget(read, "result.contents.0");
    ck_assert_str_eq(tu_jstr(item, "text"), "a template's text");
    if (v >= 1)
      tu_assert_exact(tu_get(item, "_meta"), "{\"com.example/t\":{}}");
    else
      ck_assert_ptr_null(tu_get(item, "_meta"));
    cJSON_Delete(read);
    tu_peer_close(&q);
  }
}
END_TEST

/* The server's own icons and websiteUrl: checked by mcp_server_new, sent
 * in initialize from 2025-11-25 and in server/discover, and left out of
 * the serverInfo every other modern result carries. */
START_TEST(server_icons_and_website) {
  static const mcp_icon icons[] = {{.src = "https://example.com/s.png",
                                    .mime_type = "image/png",
                                    .theme = "light"},
                                   {.src = NULL}};
  mcp_server_info info = {.name = "pictured",
                          .version = "1.0.0",
                          .icons = icons,
                          .website_url = "https://example.com/"};
  mcp_server *s = NULL;
  static const struct {
    const char *url, *src, *want;
  } bad[] = {
      {"http://example.com/", "https://example.com/s.png",
       "website_url must be an https: URL"},
      {"https://", "https://example.com/s.png",
       "website_url must be an https: URL"},
      {"https://example.com/", "ftp://example.com/s.png",
       "icon 0: src must be an https: URL or a data: URI"},
  };
  const char *prefix = "mcp_server_new: server \"pictured\": ";
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_icon one[] = {{.src = bad[i].src}, {.src = NULL}};
    mcp_server_info b = info;
    b.website_url = bad[i].url;
    b.icons = one;
    ck_assert_int_eq(mcp_server_new(&b, &s), MCP_EINVAL);
    const char *msg = mcp_server_errmsg(NULL);
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0 &&
                      strstr(msg, bad[i].want),
                  "%zu: %s", i, msg);
  }
  ck_assert_int_eq(mcp_server_new(&info, &s), 0);
  static const char full[] =
      "{\"name\":\"pictured\",\"version\":\"1.0.0\",\"websiteUrl\":"
      "\"https://example.com/\",\"icons\":[{\"src\":\"https://example.com/"
      "s.png\",\"mimeType\":\"image/png\",\"theme\":\"light\"}]}";
  static const char short_form[] =
      "{\"name\":\"pictured\",\"version\":\"1.0.0\"}";
  tu_peer q;
  tu_peer_open(&q, s, NULL);
  cJSON *r = tu_ask(&q, tu_req(1, "initialize",
                               "{\"protocolVersion\":\"2025-11-25\","
                               "\"capabilities\":{},\"clientInfo\":{"
                               "\"name\":\"c\",\"version\":\"1\"}}"));
  tu_assert_exact(tu_jget(r, "result.serverInfo"), full);
  cJSON_Delete(r);
  tu_peer_close(&q);
  tu_peer_open(&q, s, NULL);
  r = tu_ask(&q, tu_req(1, "initialize",
                        "{\"protocolVersion\":\"2025-06-18\","
                        "\"capabilities\":{},\"clientInfo\":{"
                        "\"name\":\"c\",\"version\":\"1\"}}"));
  tu_assert_exact(tu_jget(r, "result.serverInfo"), short_form);
  cJSON_Delete(r);
  tu_peer_close(&q);
  tu_peer_open(&q, s, NULL);
  r = tu_ask(&q, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  tu_assert_exact(
      tu_get(tu_jget(r, "result._meta"), "io.modelcontextprotocol/serverInfo"),
      full);
  cJSON_Delete(r);
  r = tu_ask(&q, tu_mreq(2, "tools/list", TU_META_NONE, NULL));
  tu_assert_exact(
      tu_get(tu_jget(r, "result._meta"), "io.modelcontextprotocol/serverInfo"),
      short_form);
  cJSON_Delete(r);
  tu_peer_close(&q);
  mcp_server_free(s);
}
END_TEST

START_TEST(resource_registration_rules) {
  ck_assert_int_eq(mcp_server_add_resource(NULL, &RES_README, NULL),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_server_add_resource(srv, NULL, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("the resource definition is NULL");

  mcp_resource r = {.name = "notes", .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"notes\": give exactly one of uri and uri_template");
  r.uri = "file:///a";
  r.uri_template = "file:///t/{x}";
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"notes\": give exactly one of uri and uri_template");
  r.uri_template = NULL;

  static const char *const bad_uris[] = {"notes.txt", "file:///a b", "", ":x",
                                         "1http://x", "file:///\x01"};
  for (size_t i = 0; i < TU_COUNT(bad_uris); i++) {
    r.uri = bad_uris[i];
    ck_assert_msg(mcp_server_add_resource(srv, &r, NULL) == MCP_EINVAL, "%s",
                  bad_uris[i]);
    char *msg = tu_text("resource \"%s\": the uri must be an absolute URI "
                        "(scheme, ':', printable ASCII without spaces, at most "
                        "2048 bytes)",
                        bad_uris[i]);
    EXPECT_ERRMSG(msg);
    free(msg);
  }
  r.uri = "file:///caf\xc3\xa9";
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  r.uri = "file:///\xff";
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"(invalid UTF-8)\": the uri is not UTF-8");

  r.uri = "file:///a";
  r.handler = NULL;
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": a handler is required");
  r.handler = h_unused;
  r.name = NULL;
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": a name is required");
  r.name = "";
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": a name is required");
  r.name = "a";
  r.complete = c_suggest;
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": complete applies to templates only "
                "(a fixed uri has no variables)");
  r.complete = NULL;
  r.mime_type = "text/\xff";
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": name, title, description and "
                "mime_type must be UTF-8");
  r.mime_type = NULL;
  r.scopes = (const char *const[]){"x\"y", NULL};
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"file:///a\": scope \"x\"y\" is not an RFC 6750 "
                "scope token (printable ASCII without space, '\"' or '\\')");
  r.scopes = NULL;

  /* MCP Apps: a ui:// resource is a view, with the app MIME type, and its
   * ui _meta is the view's sandbox as ext-apps defines it. */
  mcp_resource app = {.uri = "ui://a/view.html",
                      .name = "view",
                      .mime_type = "text/html",
                      .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &app, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource \"ui://a/view.html\": a ui:// resource is an MCP "
                "App view: its mime_type must be "
                "\"text/html;profile=mcp-app\"");
  app.mime_type = NULL;
  ck_assert_int_eq(mcp_server_add_resource(srv, &app, NULL), MCP_EINVAL);
  mcp_resource app_t = {
      .uri_template = "ui://a/{v}", .name = "views", .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &app_t, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource template \"ui://a/{v}\": a ui:// resource is an "
                "MCP App view: its mime_type must be "
                "\"text/html;profile=mcp-app\"");
  app.mime_type = "text/html;profile=mcp-app";
  static const struct {
    const char *meta, *want;
  } bad_ui[] = {
      {"{\"ui\":1}", "meta ui (MCP Apps) must be an object"},
      {"{\"ui\":{\"csp\":[]}}", "meta ui.csp must be an object"},
      {"{\"ui\":{\"csp\":{\"connectDomains\":\"https://a\"}}}",
       "meta ui.csp.connectDomains must be an array of origins (strings)"},
      {"{\"ui\":{\"csp\":{\"baseUriDomains\":[\"\"]}}}",
       "meta ui.csp.baseUriDomains must be an array of origins (strings)"},
      {"{\"ui\":{\"permissions\":[\"camera\"]}}",
       "meta ui.permissions must be an object"},
      {"{\"ui\":{\"permissions\":{\"camera\":true}}}",
       "meta ui.permissions.camera must be an object ({} asks for it)"},
      {"{\"ui\":{\"domain\":\"\"}}", "meta ui.domain must be a non-empty "
                                     "string"},
      {"{\"ui\":{\"prefersBorder\":\"yes\"}}",
       "meta ui.prefersBorder must be true or false"},
  };
  for (size_t i = 0; i < sizeof bad_ui / sizeof bad_ui[0]; i++) {
    app.meta = bad_ui[i].meta;
    ck_assert_int_eq(mcp_server_add_resource(srv, &app, NULL), MCP_EINVAL);
    char want[200];
    snprintf(want, sizeof want, "resource \"ui://a/view.html\": %s",
             bad_ui[i].want);
    EXPECT_ERRMSG(want);
  }
  app.meta = "{\"ui\":{\"csp\":{\"connectDomains\":[\"https://api.a\"],"
             "\"resourceDomains\":[],\"frameDomains\":[\"https://f\"]},"
             "\"permissions\":{\"clipboardWrite\":{}},\"domain\":\"a.example\","
             "\"prefersBorder\":false}}";
  ck_assert_int_eq(mcp_server_add_resource(srv, &app, NULL), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "ui://a/view.html"), 0);
  /* A prompt's _meta may hold a "ui" of any shape: MCP Apps has none. */
  mcp_prompt pr = {.name = "p_ui",
                   .description = "a prompt",
                   .handler = h_unused,
                   .meta = "{\"ui\":1}"};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &pr, NULL), 0);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "p_ui"), 0);

  /* Templates. */
  mcp_resource t = {.uri_template = "file:///t/{x}", .name = "t"};
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource template \"file:///t/{x}\": a handler is required");
  t.handler = h_unused;
  t.name = NULL;
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource template \"file:///t/{x}\": a name is required");
  t.name = "t";
  static const char *const bad_templates[] = {
      "file:///t/{",  "file:///t/}",    "file:///t/{x}{y}", "file:///{x}/{x}",
      "file:///t/{}", "file:///t/{=x}", "file:///t/{x:0}"};
  for (size_t i = 0; i < TU_COUNT(bad_templates); i++) {
    t.uri_template = bad_templates[i];
    ck_assert_msg(mcp_server_add_resource(srv, &t, NULL) == MCP_EINVAL, "%s",
                  bad_templates[i]);
    char *prefix = tu_text("resource template \"%s\": ", bad_templates[i]);
    const char *msg = mcp_server_errmsg(srv);
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0 &&
                      strlen(msg) > strlen(prefix) + 5,
                  "%s: \"%s\"", bad_templates[i], msg);
    free(prefix);
  }
  t.uri_template = "file:///t/{x}";
  const char *const twice[] = {"s", "s", NULL};
  t.scopes = twice;
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), MCP_EINVAL);
  EXPECT_ERRMSG("resource template \"file:///t/{x}\": scope \"s\" is listed "
                "twice");
  t.scopes = NULL;

  /* Nothing refused was kept: no resources are offered, and no resources
   * capability came of it. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *l = tu_ask(&P, tu_req(1, "resources/list", NULL));
  tu_assert_error(l, -32601, "resources/list");
  cJSON_Delete(l);
  l = tu_ask(&P, tu_req(2, "resources/templates/list", NULL));
  tu_assert_error(l, -32601, "resources/templates/list");
  cJSON_Delete(l);
  cJSON *caps = initialize_caps(srv, "2025-11-25");
  tu_assert_json(caps, "{\"resources\":\"<absent>\"}");
  cJSON_Delete(caps);

  /* Good ones, once each. */
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), MCP_EEXIST);
  EXPECT_ERRMSG("resource \"file:///a\": a resource of that name is already "
                "registered");
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), MCP_EEXIST);
  l = tu_ask(&P, tu_req(3, "resources/list", NULL));
  tu_assert_exact(tu_get(tu_result_of(l), "resources"),
                  "[{\"uri\":\"file:///a\",\"name\":\"a\"}]");
  cJSON_Delete(l);
  l = tu_ask(&P, tu_req(4, "resources/templates/list", NULL));
  tu_assert_exact(tu_get(tu_result_of(l), "resourceTemplates"),
                  "[{\"uriTemplate\":\"file:///t/{x}\",\"name\":\"t\"}]");
  cJSON_Delete(l);
  EXPECT_ERRMSG("resource template \"file:///t/{x}\": a resource template of "
                "that name is already registered");
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///none"), MCP_ENOENT);
  EXPECT_ERRMSG("resource \"file:///none\": none is registered under it");
  ck_assert_int_eq(mcp_server_remove_resource(srv, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_remove_resource(NULL, "file:///a"), MCP_EINVAL);
  /* A template is removed by its text, not by a URI it matches. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///t/1"), MCP_ENOENT);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///t/{x}"), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///t/{x}"),
                   MCP_ENOENT);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///a"), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///a"), MCP_ENOENT);
  ck_assert_int_eq(mcp_server_resource_updated(srv, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_resource_updated(NULL, "file:///a"), MCP_EINVAL);
}
END_TEST

START_TEST(scopes_include_prompts_and_resources) {
  char buf[64];
  ck_assert_int_eq(mcp_server_scopes(srv, buf, sizeof buf), 0);
  ck_assert_str_eq(buf, "");
  const char *const scopes[] = {"notes:read", NULL};
  mcp_resource t = {.uri_template = "file:///n/{x}",
                    .name = "n",
                    .scopes = scopes,
                    .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &t, NULL), 0);
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_SECRET, &g_runs), 0);
  ck_assert_int_eq(mcp_server_scopes(srv, buf, sizeof buf), 16);
  ck_assert_str_eq(buf, "admin notes:read");
}
END_TEST

/* ===========================================================================
 * Capabilities
 * ======================================================================== */

static const char *const LEGACY[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                     "2025-11-25"};

START_TEST(capabilities_only_what_is_registered) {
  for (size_t i = 0; i < TU_COUNT(LEGACY); i++) {
    cJSON *caps = initialize_caps(srv, LEGACY[i]);
    tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{}}");
    cJSON_Delete(caps);
  }
  cJSON *caps = discover_caps(srv);
  tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{}}");
  cJSON_Delete(caps);

  /* A prompt without completion: prompts, not completions. */
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_PLAIN, &g_runs), 0);
  caps = initialize_caps(srv, "2025-11-25");
  tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                        "\"prompts\":{\"listChanged\":true}}");
  cJSON_Delete(caps);

  /* A fixed resource (which cannot complete): resources. */
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_PLAIN, &g_runs),
                   MCP_EEXIST);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "plain"), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &RES_README, &g_runs), 0);
  caps = initialize_caps(srv, "2025-11-25");
  tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                        "\"resources\":{\"subscribe\":true,\"listChanged\":"
                        "true}}");
  cJSON_Delete(caps);
  caps = discover_caps(srv);
  tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                        "\"resources\":{\"subscribe\":true,\"listChanged\":"
                        "true}}");
  cJSON_Delete(caps);

  /* A template that completes: resources and completions, from 2025-03-26
   * on. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///readme"), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &TMPL_NOTES, &g_runs), 0);
  static const char all[] =
      "{\"tools\":{\"listChanged\":true},\"logging\":{},\"resources\":{"
      "\"subscribe\":true,\"listChanged\":true},\"completions\":{}}";
  for (size_t i = 0; i < TU_COUNT(LEGACY); i++) {
    caps = initialize_caps(srv, LEGACY[i]);
    if (i == 0)
      tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                            "\"resources\":{\"subscribe\":true,"
                            "\"listChanged\":true}}");
    else
      tu_assert_exact(caps, all);
    cJSON_Delete(caps);
  }
  caps = discover_caps(srv);
  tu_assert_exact(caps, all);
  cJSON_Delete(caps);

  /* A prompt that completes, alone. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///notes/{name}"), 0);
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_GREET, &g_runs), 0);
  caps = initialize_caps(srv, "2025-03-26");
  tu_assert_exact(caps, "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                        "\"prompts\":{\"listChanged\":true},\"completions\":{"
                        "}}");
  cJSON_Delete(caps);
}
END_TEST

/* The methods of a feature the server does not offer are unknown, as for
 * a capability not advertised. */
static void expect_gated(tu_peer *p, const char *const *methods, size_t n,
                         bool modern) {
  for (size_t i = 0; i < n; i++) {
    char *msg = modern ? tu_mreq((int)i + 1, methods[i], TU_META_NONE,
                                 "\"name\":\"x\",\"uri\":\"file:///x\"")
                       : tu_req((int)i + 1, methods[i],
                                "{\"name\":\"x\",\"uri\":\"file:///x\"}");
    cJSON *r = tu_ask(p, msg);
    char *needle = tu_text("Method not found: %s", methods[i]);
    tu_assert_error(r, -32601, needle);
    free(needle);
    cJSON_Delete(r);
  }
}

static const char *const PROMPT_METHODS[] = {"prompts/list", "prompts/get"};
static const char *const RESOURCE_METHODS[] = {
    "resources/list", "resources/templates/list", "resources/read",
    "resources/subscribe", "resources/unsubscribe"};
static const char *const COMPLETE_METHODS[] = {"completion/complete"};

START_TEST(methods_only_for_what_is_offered) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  expect_gated(&P, PROMPT_METHODS, 2, false);
  expect_gated(&P, RESOURCE_METHODS, 5, false);
  expect_gated(&P, COMPLETE_METHODS, 1, false);
  expect_gated(&P, PROMPT_METHODS, 2, true);
  expect_gated(&P, RESOURCE_METHODS, 3, true);
  expect_gated(&P, COMPLETE_METHODS, 1, true);
  /* Even before initialize. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  expect_gated(&q, PROMPT_METHODS, 1, false);
  tu_peer_close(&q);
  /* A prompt without completion: prompts, not completions. */
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_PLAIN, &g_runs), 0);
  cJSON *r = tu_ask(&P, tu_req(10, "prompts/list", NULL));
  tu_assert_json(r, "{\"result\":{\"prompts\":[{\"name\":\"plain\"}]}}");
  cJSON_Delete(r);
  expect_gated(&P, COMPLETE_METHODS, 1, false);
  expect_gated(&P, RESOURCE_METHODS, 5, false);
  /* A fixed resource: resources, still no completions. */
  ck_assert_int_eq(mcp_server_add_resource(srv, &RES_README, &g_runs), 0);
  r = tu_ask(&P, read_uri(11, "file:///readme"));
  tu_assert_json(r, "{\"result\":{\"contents\":[{\"text\":\"data\"}]}}");
  cJSON_Delete(r);
  expect_gated(&P, COMPLETE_METHODS, 1, false);
  /* A template that completes: completion/complete, for every ref. */
  ck_assert_int_eq(mcp_server_add_resource(srv, &TMPL_NOTES, &g_runs), 0);
  r = tu_ask(&P,
             complete_req(12, "{\"type\":\"ref/prompt\",\"name\":\"plain\"}",
                          "text", "", NULL));
  tu_assert_exact(tu_get(tu_result_of(r), "completion"),
                  "{\"values\":[],\"hasMore\":false}");
  cJSON_Delete(r);
  /* Gone again when the last of them goes. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///notes/{name}"), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///readme"), 0);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "plain"), 0);
  tu_clear(&P);
  expect_gated(&P, PROMPT_METHODS, 2, false);
  expect_gated(&P, RESOURCE_METHODS, 5, false);
  expect_gated(&P, COMPLETE_METHODS, 1, false);
}
END_TEST

START_TEST(capabilities_full_surface) {
  static const char all[] =
      "{\"tools\":{\"listChanged\":true},\"logging\":{},\"prompts\":{"
      "\"listChanged\":true},\"resources\":{\"subscribe\":true,"
      "\"listChanged\":true},\"completions\":{}}";
  cJSON *caps = initialize_caps(srv, "2025-11-25");
  tu_assert_exact(caps, all);
  cJSON_Delete(caps);
  caps = discover_caps(srv);
  tu_assert_exact(caps, all);
  cJSON_Delete(caps);
}
END_TEST

/* ===========================================================================
 * prompts/list
 * ======================================================================== */

START_TEST(prompts_list_shapes_by_version) {
  static const char greet_new[] =
      "{\"name\":\"greet\",\"title\":\"Greeting\",\"description\":\"Greets "
      "someone.\",\"arguments\":[{\"name\":\"name\",\"title\":\"Name\","
      "\"description\":\"Who to greet\",\"required\":true},{\"name\":"
      "\"style\",\"description\":\"formal or casual\",\"required\":false}]}";
  static const char greet_old[] =
      "{\"name\":\"greet\",\"description\":\"Greets someone.\",\"arguments\":"
      "[{\"name\":\"name\",\"description\":\"Who to greet\",\"required\":"
      "true},{\"name\":\"style\",\"description\":\"formal or casual\","
      "\"required\":false}]}";
  for (size_t i = 0; i < TU_COUNT(LEGACY); i++) {
    tu_peer q;
    tu_peer_open_with(&q, srv, &ALICE, inspect);
    tu_legacy_init(&q, LEGACY[i], "{}");
    cJSON *r = tu_ask(&q, tu_req(1, "prompts/list", NULL));
    const cJSON *prompts = tu_get(tu_result_of(r), "prompts");
    char names[128];
    names_of(prompts, "name", names, sizeof names);
    /* Registration order; a prompt the caller may not get is still listed
     * (hide_forbidden is off). */
    ck_assert_str_eq(names, "greet,plain,secret");
    tu_assert_exact(cJSON_GetArrayItem(prompts, 0),
                    i >= 2 ? greet_new : greet_old);
    tu_assert_exact(cJSON_GetArrayItem(prompts, 1),
                    "{\"name\":\"plain\",\"description\":\"No completion.\","
                    "\"arguments\":[{\"name\":\"text\",\"required\":false}]}");
    tu_assert_json(r, "{\"result\":{\"nextCursor\":\"<absent>\","
                      "\"resultType\":\"<absent>\",\"ttlMs\":\"<absent>\"}}");
    cJSON_Delete(r);
    tu_peer_close(&q);
  }
  mcp_server_set_list_ttl(srv, 1234);
  cJSON *r = tu_ask(&P, tu_mreq(1, "prompts/list", TU_META_NONE, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"ttlMs\":1234,"
                    "\"cacheScope\":\"public\",\"nextCursor\":\"<absent>\"}}");
  tu_assert_exact(cJSON_GetArrayItem(tu_get(tu_result_of(r), "prompts"), 0),
                  greet_new);
  cJSON_Delete(r);
  /* Hidden when forbidden: this caller's own list, private. */
  mcp_server_set_hide_forbidden(srv, true);
  r = tu_ask(&P, tu_mreq(2, "prompts/list", TU_META_NONE, NULL));
  char names[128];
  names_of(tu_get(tu_result_of(r), "prompts"), "name", names, sizeof names);
  ck_assert_str_eq(names, "greet,plain");
  tu_assert_json(r, "{\"result\":{\"cacheScope\":\"private\"}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(prompts_list_paged) {
  for (int i = 0; i < 5; i++) {
    char name[8];
    snprintf(name, sizeof name, "p%d", i);
    mcp_prompt p = {.name = name, .description = "d", .handler = h_entry};
    ck_assert_int_eq(mcp_server_add_prompt(srv, &p, &g_runs), 0);
  }
  mcp_server_set_page_size(srv, 2);
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, tu_req(1, "prompts/list", NULL));
  char names[64];
  names_of(tu_get(tu_result_of(r), "prompts"), "name", names, sizeof names);
  ck_assert_str_eq(names, "p0,p1");
  char *c1 = cursor_of(r), *params = with_cursor(c1);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(2, "prompts/list", params));
  free(params);
  names_of(tu_get(tu_result_of(r), "prompts"), "name", names, sizeof names);
  ck_assert_str_eq(names, "p2,p3");
  char *c2 = cursor_of(r);
  cJSON_Delete(r);
  /* A prompt removed meanwhile does not move the next page. */
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "p2"), 0);
  tu_clear(&P);
  params = with_cursor(c2);
  r = tu_ask(&P, tu_req(3, "prompts/list", params));
  free(params);
  names_of(tu_get(tu_result_of(r), "prompts"), "name", names, sizeof names);
  ck_assert_str_eq(names, "p4");
  tu_assert_json(r, "{\"result\":{\"nextCursor\":\"<absent>\"}}");
  cJSON_Delete(r);
  /* Cursors of another list, altered, in the sequence numbers' plain
   * form, or malformed are refused. */
  char *other = tu_text("\"t%s\"", c1 + 1), *altered = tu_text("\"%s\"", c1);
  altered[5] = altered[5] == '0' ? '1' : '0';
  const char *const bad[] = {other,     altered,  "\"t2\"",
                             "\"r2\"",  "\"p2\"", "\"p9\"",
                             "\"p0\"",  "\"p\"",  "\"\"",
                             "\"p02\"", "2",      "\"P0000000000000001\""};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    params = tu_text("{\"cursor\":%s}", bad[i]);
    r = tu_ask(&P, tu_req(4, "prompts/list", params));
    free(params);
    tu_assert_error(r, -32602, "cursor");
    cJSON_Delete(r);
  }
  free(other);
  free(altered);
  /* Modern pages say the same. */
  params = tu_text("\"cursor\":\"%s\"", c1);
  r = tu_ask(&P, tu_mreq(5, "prompts/list", TU_META_NONE, params));
  free(params);
  free(c1);
  free(c2);
  names_of(tu_get(tu_result_of(r), "prompts"), "name", names, sizeof names);
  ck_assert_str_eq(names, "p3,p4");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"nextCursor\":"
                    "\"<absent>\",\"cacheScope\":\"public\"}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(prompts_list_needs_initialize) {
  cJSON *r = tu_ask(&P, tu_req(1, "prompts/list", NULL));
  tu_assert_error(r, -32600, "initialize");
  cJSON_Delete(r);
  r = tu_ask(&P, get_prompt(2, "greet", "{\"name\":\"a\"}"));
  tu_assert_error(r, -32600, "initialize");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(3, "file:///readme"));
  tu_assert_error(r, -32600, "initialize");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

/* ===========================================================================
 * prompts/get
 * ======================================================================== */

static const unsigned char PNG[] = {0x89, 'P', 'N', 'G'}; /* "iVBORw==" */

static int h_every_kind(mcp_call *call) {
  ck_assert_int_eq(mcp_result_description(call, "A greeting"), 0);
  ck_assert_int_eq(mcp_result_text(call, "Hi"), 0);
  ck_assert_int_eq(mcp_result_image(call, PNG, sizeof PNG, "image/png"), 0);
  ck_assert_int_eq(mcp_result_role(call, MCP_ROLE_ASSISTANT), 0);
  ck_assert_int_eq(mcp_result_audio(call, "abc", 3, "audio/wav"), 0);
  ck_assert_int_eq(
      mcp_result_resource_link(call, "file:///a", "a", "text/plain", "An A"),
      0);
  ck_assert_int_eq(mcp_result_role(call, MCP_ROLE_USER), 0);
  ck_assert_int_eq(
      mcp_result_resource_text(call, "file:///b", "text/plain", "B"), 0);
  ck_assert_int_eq(mcp_result_resource_blob(call, "file:///c", NULL, "ab", 2),
                   0);
  return 0;
}

START_TEST(prompts_get_messages_every_kind) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_every_kind;
  cJSON *r = tu_ask(&P, get_prompt(7, "greet", "{\"name\":\"Ann\"}"));
  tu_assert_exact(
      r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"description\":\"A "
         "greeting\",\"messages\":["
         "{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Hi\"}},"
         "{\"role\":\"user\",\"content\":{\"type\":\"image\",\"data\":"
         "\"iVBORw==\",\"mimeType\":\"image/png\"}},"
         "{\"role\":\"assistant\",\"content\":{\"type\":\"audio\",\"data\":"
         "\"YWJj\",\"mimeType\":\"audio/wav\"}},"
         "{\"role\":\"assistant\",\"content\":{\"type\":\"resource_link\","
         "\"uri\":\"file:///a\",\"name\":\"a\",\"mimeType\":\"text/plain\","
         "\"description\":\"An A\"}},"
         "{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{"
         "\"uri\":\"file:///b\",\"mimeType\":\"text/plain\",\"text\":\"B\"}}},"
         "{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{"
         "\"uri\":\"file:///c\",\"blob\":\"YWI=\"}}}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  ck_assert_int_eq(g_kind, MCP_CALL_PROMPT);
  ck_assert_str_eq(g_tool, "greet");
  ck_assert_str_eq(g_uri, "(null)");
  ck_assert_int_eq(g_name_rc, 0);
  ck_assert_str_eq(g_name, "Ann");
}
END_TEST

START_TEST(prompts_get_older_versions) {
  /* 2024-11-05 has neither audio nor resource_link; 2025-03-26 has audio
   * only. Both get text in their place. */
  g_fn = h_every_kind;
  static const char *const versions[] = {"2024-11-05", "2025-03-26"};
  for (size_t i = 0; i < TU_COUNT(versions); i++) {
    tu_peer q;
    tu_peer_open_with(&q, srv, &ALICE, inspect);
    tu_legacy_init(&q, versions[i], "{}");
    cJSON *r = tu_ask(&q, get_prompt(1, "greet", "{\"name\":\"Ann\"}"));
    const cJSON *msgs = tu_get(tu_result_of(r), "messages");
    ck_assert_int_eq(cJSON_GetArraySize(msgs), 6);
    tu_assert_exact(cJSON_GetArrayItem(msgs, 2),
                    i == 0 ? "{\"role\":\"assistant\",\"content\":{\"type\":"
                             "\"text\",\"text\":\"[audio omitted: audio/wav, "
                             "3 bytes]\"}}"
                           : "{\"role\":\"assistant\",\"content\":{\"type\":"
                             "\"audio\",\"data\":\"YWJj\",\"mimeType\":"
                             "\"audio/wav\"}}");
    tu_assert_exact(cJSON_GetArrayItem(msgs, 3),
                    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                    "\"text\":\"a: file:///a\"}}");
    tu_assert_json(r, "{\"result\":{\"description\":\"A greeting\"}}");
    cJSON_Delete(r);
    tu_peer_close(&q);
  }
}
END_TEST

START_TEST(prompts_get_modern) {
  cJSON *r =
      tu_ask(&P, tu_mreq(3, "prompts/get", TU_META_NONE,
                         "\"name\":\"greet\",\"arguments\":{\"name\":\"Bo\","
                         "\"style\":\"casual\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{"
                     "\"resultType\":\"complete\",\"_meta\":{"
                     "\"io.modelcontextprotocol/serverInfo\":{\"name\":\"srv\","
                     "\"version\":\"1.2.3\",\"title\":\"Test Server\"}},"
                     "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                     "\"text\",\"text\":\"Hello\"}}]}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_name, "Bo");
  /* Still no session: modern requests do not initialize. */
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));
}
END_TEST

static int h_style(mcp_call *call) {
  const char *style = NULL;
  int rc = mcp_call_arg_string(call, "style", &style);
  ck_assert_int_eq(rc, MCP_ENOENT);
  int64_t n;
  ck_assert_int_eq(mcp_call_arg_int(call, "name", &n), MCP_ETYPE);
  const cJSON *args = mcp_call_arguments(call);
  ck_assert(cJSON_IsObject(args));
  ck_assert_int_eq(cJSON_GetArraySize(args), 1);
  return mcp_result_text(call, "ok");
}

START_TEST(prompts_get_argument_errors) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  struct {
    const char *name, *args, *needle;
  } cases[] = {
      {"greet", NULL,
       "Invalid params: prompt \"greet\" needs argument "
       "\"name\""},
      {"greet", "{}",
       "Invalid params: prompt \"greet\" needs argument "
       "\"name\""},
      {"greet", "{\"style\":\"x\"}", "needs argument \"name\""},
      {"greet", "{\"name\":\"a\",\"bogus\":\"b\"}",
       "Invalid params: prompt \"greet\" has no argument \"bogus\""},
      {"greet", "{\"name\":1}",
       "Invalid params: argument \"name\" must be a string"},
      {"greet", "{\"name\":null}", "argument \"name\" must be a string"},
      {"greet", "{\"name\":\"a\",\"style\":[\"x\"]}",
       "argument \"style\" must be a string"},
      {"greet", "[\"a\"]",
       "Invalid params: arguments must be an object of strings"},
      {"greet", "\"a\"", "arguments must be an object of strings"},
      {"nope", "{}", "Invalid params: unknown prompt: nope"},
      {"Greet", "{\"name\":\"a\"}", "unknown prompt: Greet"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    cJSON *r = tu_ask(&P, get_prompt((int)i + 1, cases[i].name, cases[i].args));
    tu_assert_error(r, -32602, cases[i].needle);
    tu_assert_json(r, "{\"error\":{\"data\":\"<absent>\"}}");
    ck_assert_int_eq((int)tu_get(r, "id")->valuedouble, (int)i + 1);
    cJSON_Delete(r);
  }
  /* No name, a name that is not a string, no params at all. */
  cJSON *r = tu_ask(&P, tu_req(20, "prompts/get", "{\"arguments\":{}}"));
  tu_assert_error(r, -32602, "prompt name");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(21, "prompts/get", "{\"name\":5}"));
  tu_assert_error(r, -32602, "prompt name");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(22, "prompts/get", NULL));
  tu_assert_error(r, -32602, "prompt name");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
  /* The same rules in the modern era. */
  r = tu_ask(&P, tu_mreq(23, "prompts/get", TU_META_NONE,
                         "\"name\":\"greet\",\"arguments\":{\"name\":\"a\","
                         "\"x\":\"y\"}"));
  tu_assert_error(r, -32602, "has no argument \"x\"");
  cJSON_Delete(r);
  r = tu_ask(&P,
             tu_mreq(24, "prompts/get", TU_META_NONE, "\"name\":\"greet\""));
  tu_assert_error(r, -32602, "needs argument \"name\"");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(25, "prompts/get", TU_META_NONE, "\"name\":\"zzz\""));
  tu_assert_error(r, -32602, "unknown prompt: zzz");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
  /* Optional arguments may be left out; the handler sees what came. */
  g_fn = h_style;
  r = tu_ask(&P, get_prompt(30, "greet", "{\"name\":\"a\"}"));
  tu_assert_json(r, "{\"result\":{\"messages\":[{\"content\":{\"text\":"
                    "\"ok\"}}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  /* A prompt without arguments takes none, and no arguments member. */
  g_fn = NULL;
  mcp_prompt bare = {.name = "bare", .description = "d", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &bare, &g_runs), 0);
  tu_clear(&P);
  r = tu_ask(&P, get_prompt(31, "bare", NULL));
  tu_assert_json(r, "{\"result\":{\"messages\":[{\"content\":{\"text\":"
                    "\"Hello\"}}]}}");
  cJSON_Delete(r);
  r = tu_ask(&P, get_prompt(32, "bare", "{\"a\":\"b\"}"));
  tu_assert_error(r, -32602, "prompt \"bare\" has no argument \"a\"");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
}
END_TEST

static int h_error(mcp_call *call) {
  ck_assert_int_eq(mcp_result_text(call, "ignored"), 0);
  return mcp_result_error(call, "Unknown style: loud");
}
static int h_fail(mcp_call *call) {
  (void)call;
  return MCP_EIO;
}
static int h_structured(mcp_call *call) {
  ck_assert_int_eq(mcp_result_structured(call, "{\"a\":1}"), MCP_EINVAL);
  /* Latched: later builders do nothing. */
  ck_assert_int_eq(mcp_result_text(call, "x"), MCP_EINVAL);
  return 0;
}
static int h_bad_role(mcp_call *call) {
  ck_assert_int_eq(mcp_result_role(call, (mcp_role)7), MCP_EINVAL);
  return 0;
}
static int h_bad_description(mcp_call *call) {
  ck_assert_int_eq(mcp_result_description(call, "\xff"), MCP_EINVAL);
  return 0;
}
static int h_positive(mcp_call *call) {
  ck_assert_int_eq(mcp_result_text(call, "x"), 0);
  return 5;
}
static int h_input_nothing(mcp_call *call) {
  (void)call;
  return MCP_INPUT_REQUIRED;
}

START_TEST(prompts_get_handler_errors) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  /* mcp_result_error answers a JSON-RPC error carrying its text. */
  g_fn = h_error;
  cJSON *r = tu_ask(&P, get_prompt(1, "greet", "{\"name\":\"a\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
                     "-32602,\"message\":\"Unknown style: loud\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(2, "prompts/get", TU_META_NONE,
                         "\"name\":\"greet\",\"arguments\":{\"name\":\"a\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":"
                     "-32602,\"message\":\"Unknown style: loud\"}}");
  cJSON_Delete(r);
  /* Failures are internal errors, their detail only in the log. */
  int (*internal[])(mcp_call *) = {h_fail,     h_structured,
                                   h_bad_role, h_bad_description,
                                   h_positive, h_input_nothing};
  for (size_t i = 0; i < TU_COUNT(internal); i++) {
    g_fn = internal[i];
    g_log[0] = '\0';
    r = tu_ask(&P, get_prompt(10 + (int)i, "greet", "{\"name\":\"a\"}"));
    char *expected = tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{"
                             "\"code\":-32603,\"message\":\"Internal error\"}}",
                             10 + (int)i);
    tu_assert_exact(r, expected);
    free(expected);
    cJSON_Delete(r);
    ck_assert_msg(strstr(g_log, "prompt \"greet\"") != NULL, "log: %s", g_log);
  }
  ck_assert_int_eq(g_runs, 2 + (int)TU_COUNT(internal));
}
END_TEST

START_TEST(prompts_get_scope_denied) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, get_prompt(1, "secret", "{\"topic\":\"x\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
                     "-31403,\"message\":\"Forbidden: insufficient scope; "
                     "this prompt needs admin\",\"data\":{\"requiredScopes\":"
                     "[\"admin\"],\"scopes\":[\"admin\"]}}}");
  cJSON_Delete(r);
  r = tu_ask(&P,
             tu_mreq(2, "prompts/get", TU_META_NONE,
                     "\"name\":\"secret\",\"arguments\":{\"topic\":\"x\"}"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "this prompt needs admin");
  tu_assert_json(r, "{\"error\":{\"data\":{\"requiredScopes\":[\"admin\"]}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
  /* Scopes are checked before arguments, as for tools: a caller without
   * them learns nothing of the prompt's arguments (which prompts/list
   * hides from it under mcp_server_set_hide_forbidden). */
  static const char *const probes[] = {NULL, "{}", "{\"bogus\":\"x\"}",
                                       "{\"topic\":1}", "[]"};
  for (size_t i = 0; i < TU_COUNT(probes); i++) {
    r = tu_ask(&P, get_prompt(3, "secret", probes[i]));
    tu_assert_error(r, MCP_RPC_FORBIDDEN, "this prompt needs admin");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(g_runs, 0);
  /* A caller holding the scope gets it, and the argument checks. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ROOT, inspect);
  tu_legacy_init(&q, "2025-11-25", "{}");
  r = tu_ask(&q, get_prompt(4, "secret", "{\"topic\":\"x\"}"));
  tu_assert_json(r, "{\"result\":{\"messages\":[{\"role\":\"user\"}]}}");
  cJSON_Delete(r);
  r = tu_ask(&q, get_prompt(5, "secret", "{}"));
  tu_assert_error(r, -32602, "prompt \"secret\" needs argument \"topic\"");
  cJSON_Delete(r);
  tu_peer_close(&q);
  ck_assert_int_eq(g_runs, 1);
}
END_TEST

/* Asks "confirm" (an elicitation form) and keeps state "asked"; with the
 * answer, says "confirmed" or "declined". */
static int h_ask(mcp_call *call) {
  const cJSON *a = mcp_call_input(call, "confirm");
  if (a == NULL) {
    g_req_rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    if (g_req_rc)
      return g_req_rc;
    int rc = mcp_call_set_state(call, "asked");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  const cJSON *action = tu_get(a, "action");
  bool yes =
      cJSON_IsString(action) && strcmp(action->valuestring, "accept") == 0;
  return mcp_result_text(call, yes ? "confirmed" : "declined");
}

#define GREET_ANN "\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}"

START_TEST(prompts_get_modern_input_required_round_trip) {
  g_fn = h_ask;
  cJSON *r = tu_ask(&P, tu_mreq(1, "prompts/get", TU_META_ELICIT, GREET_ANN));
  tu_assert_json(r, "{\"id\":1,\"result\":{\"resultType\":\"input_required\","
                    "\"requestState\":\"<any>\",\"messages\":\"<absent>\","
                    "\"ttlMs\":\"<absent>\"}}");
  char *expected = tu_text("{\"confirm\":{\"method\":\"elicitation/create\","
                           "\"params\":%s}}",
                           FORM);
  tu_assert_exact(tu_get(tu_result_of(r), "inputRequests"), expected);
  free(expected);
  char *state = strdup(tu_get(tu_result_of(r), "requestState")->valuestring);
  ck_assert_ptr_nonnull(state);
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  ck_assert_str_eq(g_state, "(null)");

  /* The retry runs the handler with the answer and the kept state. */
  char *extra = tu_text(GREET_ANN ",\"requestState\":\"%s\",\"inputResponses\":"
                                  "{\"confirm\":%s}",
                        state, ACCEPT);
  r = tu_ask(&P, tu_mreq(2, "prompts/get", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_exact(tu_get(tu_result_of(r), "messages"),
                  "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                  "\"text\":\"confirmed\"}}]");
  tu_assert_json(r, "{\"id\":2,\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_state, "asked");

  /* Bound to the arguments: another name is refused before the handler. */
  extra = tu_text("\"name\":\"greet\",\"arguments\":{\"name\":\"Bob\"},"
                  "\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":%s}",
                  state, ACCEPT);
  r = tu_ask(&P, tu_mreq(3, "prompts/get", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_error(r, -32602, "requestState");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);

  /* A state minted by a tool of the same name is not the prompt's. */
  mcp_tool tool = TOOL_RUN;
  tool.name = "greet";
  ck_assert_int_eq(mcp_server_add_tool(srv, &tool, NULL), 0);
  r = tu_ask(&P,
             tu_mreq(4, "tools/call", TU_META_ELICIT,
                     "\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"}"));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  ck_assert_int_eq(g_tool_runs, 1);
  char *tool_state =
      strdup(tu_get(tu_result_of(r), "requestState")->valuestring);
  ck_assert_ptr_nonnull(tool_state);
  cJSON_Delete(r);
  extra = tu_text(GREET_ANN ",\"requestState\":\"%s\",\"inputResponses\":{"
                            "\"confirm\":%s}",
                  tool_state, ACCEPT);
  r = tu_ask(&P, tu_mreq(5, "prompts/get", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_error(r, -32602, "requestState belongs to another call");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
  /* ... nor is the prompt's state the tool's. */
  extra = tu_text("\"name\":\"greet\",\"arguments\":{\"name\":\"Ann\"},"
                  "\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":%s}",
                  state, ACCEPT);
  r = tu_ask(&P, tu_mreq(6, "tools/call", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_error(r, -32602, "requestState");
  cJSON_Delete(r);
  ck_assert_int_eq(g_tool_runs, 1);
  /* A client without elicitation gets -32021, not a request. */
  r = tu_ask(&P, tu_mreq(7, "prompts/get", TU_META_NONE, GREET_ANN));
  tu_assert_error(r, -32021, "elicitation");
  tu_assert_json(r, "{\"error\":{\"data\":{\"requiredCapabilities\":{"
                    "\"elicitation\":{}}}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_req_rc, MCP_ECAPABILITY);
  free(state);
  free(tool_state);
}
END_TEST

START_TEST(prompts_get_legacy_elicitation_and_resume) {
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  g_fn = h_ask;
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, get_prompt(7, "greet", "{\"name\":\"Ann\"}")), 0);
  /* A real request to the client, and no reply yet. */
  ck_assert_uint_eq(P.nout, 1);
  cJSON *m = tu_msg(&P, 0);
  char *expected = tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                           "\"elicitation/create\",\"params\":%s}",
                           FORM);
  tu_assert_exact(m, expected);
  free(expected);
  cJSON_Delete(m);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  /* The answer runs the handler again; the prompt's reply follows. */
  cJSON *r = tu_ask(
      &P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", ACCEPT));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"messages\":"
                     "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                     "\"text\":\"confirmed\"}}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_state, "asked");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* A session that did not declare elicitation gets an error, not a
   * request. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2025-11-25", "{}");
  r = tu_ask(&q, get_prompt(8, "greet", "{\"name\":\"Ann\"}"));
  tu_assert_error(r, -32602,
                  "This prompt needs the client to support elicitation");
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(q.session), 0);
  tu_peer_close(&q);
}
END_TEST

START_TEST(prompts_get_legacy_session_freed_while_asking) {
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2025-11-25", "{\"elicitation\":{}}");
  g_fn = h_ask;
  ck_assert_int_eq(
      tu_send_free(&q, get_prompt(7, "greet", "{\"name\":\"Ann\"}")), 0);
  ck_assert_uint_eq(mcp_session_pending(q.session), 1);
  tu_peer_close(&q); /* the parked prompt ends with it, leaking nothing */
  ck_assert_int_eq(g_runs, 1);
}
END_TEST

START_TEST(prompts_get_deferred) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = tu_defer;
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, get_prompt(9, "greet", "{\"name\":\"Ann\"}")), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_ptr_nonnull(tu_stash);
  ck_assert_int_eq(mcp_result_role(tu_stash, MCP_ROLE_ASSISTANT), 0);
  ck_assert_int_eq(mcp_result_text(tu_stash, "later"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  ck_assert_uint_eq(P.nout, 1);
  cJSON *r = tu_msg(&P, 0);
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"messages\":"
                     "[{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                     "\"text\":\"later\"}}]}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(prompts_get_deferred_then_cancelled) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = tu_defer;
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, get_prompt(9, "greet", "{\"name\":\"Ann\"}")), 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":9}}"),
                   0);
  ck_assert_ptr_nonnull(tu_stash);
  ck_assert(mcp_call_cancelled(tu_stash));
  ck_assert_int_eq(mcp_result_text(tu_stash, "too late"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  /* A cancelled request is not answered. */
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(batch_2025_03_26_serves_the_surface) {
  tu_legacy_init(&P, "2025-03-26", "{}");
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send(&P,
              "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\","
              "\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":"
              "\"a\"}}},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
              "\"resources/read\",\"params\":{\"uri\":\"file:///nowhere\"}},"
              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"completion/"
              "complete\",\"params\":{\"ref\":" REF_GREET_TEXT ",\"argument\":"
              "{\"name\":\"name\",\"value\":\"b\"}}},{\"jsonrpc\":\"2.0\","
              "\"id\":4,\"method\":\"resources/subscribe\",\"params\":{"
              "\"uri\":\"file:///readme\"}},{\"jsonrpc\":\"2.0\",\"id\":5,"
              "\"method\":\"logging/setLevel\",\"params\":{\"level\":"
              "\"info\"}},{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
              "\"resources/templates/list\"}]"),
      0);
  ck_assert_uint_eq(P.nout, 1);
  cJSON *r = tu_msg(&P, 0);
  ck_assert(cJSON_IsArray(r));
  ck_assert_int_eq(cJSON_GetArraySize(r), 6);
  tu_assert_exact(cJSON_GetArrayItem(r, 0),
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"messages\":"
                  "[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                  "\"text\":\"Hello\"}}]}}");
  tu_assert_exact(cJSON_GetArrayItem(r, 1),
                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":"
                  "-32002,\"message\":\"Resource not found\",\"data\":{"
                  "\"uri\":\"file:///nowhere\"}}}");
  tu_assert_exact(cJSON_GetArrayItem(r, 2),
                  "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{"
                  "\"completion\":{\"values\":[\"bob\"],\"hasMore\":false}"
                  "}}");
  tu_assert_exact(cJSON_GetArrayItem(r, 3),
                  "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}");
  tu_assert_exact(cJSON_GetArrayItem(r, 4),
                  "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  tu_assert_json(cJSON_GetArrayItem(r, 5),
                 "{\"id\":6,\"result\":{\"resourceTemplates\":[{"
                 "\"uriTemplate\":\"file:///notes/{name}\",\"title\":"
                 "\"<absent>\"},\"<any>\",\"<any>\"]}}");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_uint_eq(P.nout, 1);
}
END_TEST

/* ===========================================================================
 * resources/list and resources/templates/list
 * ======================================================================== */

START_TEST(resources_lists_by_version) {
  static const char readme_new[] =
      "{\"uri\":\"file:///readme\",\"name\":\"readme\",\"title\":\"Read "
      "me\",\"description\":\"The read-me.\",\"mimeType\":\"text/plain\"}";
  static const char readme_old[] =
      "{\"uri\":\"file:///readme\",\"name\":\"readme\",\"description\":"
      "\"The read-me.\",\"mimeType\":\"text/plain\"}";
  static const char notes_new[] =
      "{\"uriTemplate\":\"file:///notes/{name}\",\"name\":\"notes\","
      "\"title\":\"Notes\",\"description\":\"One note.\",\"mimeType\":"
      "\"text/markdown\"}";
  static const char notes_old[] =
      "{\"uriTemplate\":\"file:///notes/{name}\",\"name\":\"notes\","
      "\"description\":\"One note.\",\"mimeType\":\"text/markdown\"}";
  for (size_t i = 0; i < TU_COUNT(LEGACY); i++) {
    tu_peer q;
    tu_peer_open_with(&q, srv, &ALICE, inspect);
    tu_legacy_init(&q, LEGACY[i], "{}");
    cJSON *r = tu_ask(&q, tu_req(1, "resources/list", NULL));
    const cJSON *list = tu_get(tu_result_of(r), "resources");
    char names[200];
    names_of(list, "uri", names, sizeof names);
    ck_assert_str_eq(names, "file:///readme,file:///logo.png,file:///private");
    tu_assert_exact(cJSON_GetArrayItem(list, 0),
                    i >= 2 ? readme_new : readme_old);
    tu_assert_exact(cJSON_GetArrayItem(list, 1),
                    "{\"uri\":\"file:///logo.png\",\"name\":\"logo\","
                    "\"mimeType\":\"image/png\"}");
    tu_assert_json(r, "{\"result\":{\"nextCursor\":\"<absent>\","
                      "\"resourceTemplates\":\"<absent>\"}}");
    cJSON_Delete(r);
    r = tu_ask(&q, tu_req(2, "resources/templates/list", NULL));
    list = tu_get(tu_result_of(r), "resourceTemplates");
    names_of(list, "uriTemplate", names, sizeof names);
    ck_assert_str_eq(names, "file:///notes/{name},file:///docs/{+path},"
                            "file:///vault/{key}");
    tu_assert_exact(cJSON_GetArrayItem(list, 0),
                    i >= 2 ? notes_new : notes_old);
    tu_assert_exact(cJSON_GetArrayItem(list, 1),
                    "{\"uriTemplate\":\"file:///docs/{+path}\",\"name\":"
                    "\"docs\"}");
    tu_assert_json(r, "{\"result\":{\"resources\":\"<absent>\"}}");
    cJSON_Delete(r);
    tu_peer_close(&q);
  }
  /* Modern: cacheable, public unless filtered by the caller's scopes. */
  mcp_server_set_list_ttl(srv, 500);
  cJSON *r = tu_ask(&P, tu_mreq(1, "resources/list", TU_META_NONE, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"ttlMs\":500,"
                    "\"cacheScope\":\"public\"}}");
  tu_assert_exact(cJSON_GetArrayItem(tu_get(tu_result_of(r), "resources"), 0),
                  readme_new);
  ck_assert_int_eq(cJSON_GetArraySize(tu_get(tu_result_of(r), "resources")), 3);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(2, "resources/templates/list", TU_META_NONE, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"ttlMs\":500,"
                    "\"cacheScope\":\"public\"}}");
  tu_assert_exact(
      cJSON_GetArrayItem(tu_get(tu_result_of(r), "resourceTemplates"), 0),
      notes_new);
  cJSON_Delete(r);
  mcp_server_set_hide_forbidden(srv, true);
  r = tu_ask(&P, tu_mreq(3, "resources/list", TU_META_NONE, NULL));
  char names[200];
  names_of(tu_get(tu_result_of(r), "resources"), "uri", names, sizeof names);
  ck_assert_str_eq(names, "file:///readme,file:///logo.png");
  tu_assert_json(r, "{\"result\":{\"cacheScope\":\"private\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(4, "resources/templates/list", TU_META_NONE, NULL));
  names_of(tu_get(tu_result_of(r), "resourceTemplates"), "uriTemplate", names,
           sizeof names);
  ck_assert_str_eq(names, "file:///notes/{name},file:///docs/{+path}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(resources_lists_paged) {
  mcp_server_set_page_size(srv, 2);
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, tu_req(1, "resources/list", NULL));
  ck_assert_int_eq(cJSON_GetArraySize(tu_get(tu_result_of(r), "resources")), 2);
  char *rc = cursor_of(r), *params = with_cursor(rc);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(2, "resources/list", params));
  free(params);
  char names[200];
  names_of(tu_get(tu_result_of(r), "resources"), "uri", names, sizeof names);
  ck_assert_str_eq(names, "file:///private");
  tu_assert_json(r, "{\"result\":{\"nextCursor\":\"<absent>\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(3, "resources/templates/list", NULL));
  char *uc = cursor_of(r);
  params = with_cursor(uc);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(4, "resources/templates/list", params));
  free(params);
  names_of(tu_get(tu_result_of(r), "resourceTemplates"), "uriTemplate", names,
           sizeof names);
  ck_assert_str_eq(names, "file:///vault/{key}");
  cJSON_Delete(r);
  /* Each list takes only its own cursors. */
  params = with_cursor(uc);
  r = tu_ask(&P, tu_req(5, "resources/list", params));
  free(params);
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  params = with_cursor(rc);
  r = tu_ask(&P, tu_req(6, "resources/templates/list", params));
  free(params);
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  params = with_cursor(rc);
  r = tu_ask(&P, tu_req(7, "tools/list", params));
  free(params);
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  free(rc);
  free(uc);
}
END_TEST

/* ===========================================================================
 * resources/read
 * ======================================================================== */

static int h_logo(mcp_call *call) {
  return mcp_result_image(call, PNG, sizeof PNG, "image/png");
}

static int h_listing(mcp_call *call) {
  ck_assert_int_eq(mcp_result_text(call, "index"), 0);
  ck_assert_int_eq(
      mcp_result_resource_text(call, "file:///readme#a", NULL, "A"), 0);
  ck_assert_int_eq(mcp_result_resource_blob(call, "file:///readme#b",
                                            "application/octet-stream", "abc",
                                            3),
                   0);
  ck_assert_int_eq(mcp_result_audio(call, "ab", 2, "audio/wav"), 0);
  return 0;
}

START_TEST(resources_read_static) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, read_uri(1, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":"
                     "[{\"uri\":\"file:///readme\",\"mimeType\":\"text/plain\","
                     "\"text\":\"data\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_kind, MCP_CALL_RESOURCE);
  ck_assert_str_eq(g_tool, "file:///readme");
  ck_assert_str_eq(g_uri, "file:///readme");
  ck_assert_int_eq(g_name_rc, MCP_ENOENT); /* a fixed uri has no variables */

  g_fn = h_logo;
  r = tu_ask(&P, read_uri(2, "file:///logo.png"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"contents\":"
                     "[{\"uri\":\"file:///logo.png\",\"mimeType\":"
                     "\"image/png\",\"blob\":\"iVBORw==\"}]}}");
  cJSON_Delete(r);

  /* Several items, for other URIs too; no mime type when none is known. */
  g_fn = h_listing;
  r = tu_ask(&P, read_uri(3, "file:///private"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "this resource needs admin");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(4, "file:///readme"));
  tu_assert_exact(
      r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":["
         "{\"uri\":\"file:///readme\",\"mimeType\":\"text/plain\",\"text\":"
         "\"index\"},"
         "{\"uri\":\"file:///readme#a\",\"text\":\"A\"},"
         "{\"uri\":\"file:///readme#b\",\"mimeType\":\"application/"
         "octet-stream\",\"blob\":\"YWJj\"},"
         "{\"uri\":\"file:///readme\",\"mimeType\":\"audio/wav\",\"blob\":"
         "\"YWI=\"}]}}");
  cJSON_Delete(r);
  /* Audio is a blob item in every version, even before audio content. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ROOT, inspect);
  tu_legacy_init(&q, "2024-11-05", "{}");
  r = tu_ask(&q, read_uri(5, "file:///private"));
  tu_assert_exact(cJSON_GetArrayItem(tu_get(tu_result_of(r), "contents"), 0),
                  "{\"uri\":\"file:///private\",\"text\":\"index\"}");
  tu_assert_exact(cJSON_GetArrayItem(tu_get(tu_result_of(r), "contents"), 3),
                  "{\"uri\":\"file:///private\",\"mimeType\":\"audio/wav\","
                  "\"blob\":\"YWI=\"}");
  cJSON_Delete(r);
  tu_peer_close(&q);
}
END_TEST

static int h_note(mcp_call *call) {
  const char *name = NULL;
  int rc = mcp_call_arg_string(call, "name", &name);
  if (rc == MCP_ENOENT)
    rc = mcp_call_arg_string(call, "path", &name);
  if (rc)
    return rc;
  if (strcmp(name, "missing") == 0)
    return MCP_ENOENT;
  char *t = tu_text("note %s", name);
  rc = mcp_result_text(call, t);
  free(t);
  return rc;
}

START_TEST(resources_read_template_variables) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_note;
  cJSON *r = tu_ask(&P, read_uri(1, "file:///notes/todo"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"contents\":"
                     "[{\"uri\":\"file:///notes/todo\",\"mimeType\":"
                     "\"text/markdown\",\"text\":\"note todo\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_kind, MCP_CALL_RESOURCE);
  ck_assert_str_eq(g_tool, "file:///notes/{name}");
  ck_assert_str_eq(g_uri, "file:///notes/todo");
  ck_assert_str_eq(g_name, "todo");
  /* Values are percent-decoded; the item names the URI as asked. */
  r = tu_ask(&P, read_uri(2, "file:///notes/my%20list"));
  tu_assert_exact(tu_get(tu_result_of(r), "contents"),
                  "[{\"uri\":\"file:///notes/my%20list\",\"mimeType\":"
                  "\"text/markdown\",\"text\":\"note my list\"}]");
  cJSON_Delete(r);
  ck_assert_str_eq(g_uri, "file:///notes/my%20list");
  ck_assert_str_eq(g_name, "my list");
  /* A {+path} keeps its slashes. */
  r = tu_ask(&P, read_uri(3, "file:///docs/a/b.txt"));
  tu_assert_exact(tu_get(tu_result_of(r), "contents"),
                  "[{\"uri\":\"file:///docs/a/b.txt\",\"text\":\"note "
                  "a/b.txt\"}]");
  cJSON_Delete(r);
  ck_assert_str_eq(g_tool, "file:///docs/{+path}");
  /* A fixed uri wins over a template that matches it too; among templates
   * the first registered wins. */
  mcp_resource fixed = {
      .uri = "file:///notes/fixed", .name = "fixed", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &fixed, &g_runs), 0);
  mcp_resource later = {.uri_template = "file:///notes/{+rest}",
                        .name = "later",
                        .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &later, &g_runs), 0);
  tu_clear(&P);
  g_fn = NULL;
  r = tu_ask(&P, read_uri(4, "file:///notes/fixed"));
  ck_assert_str_eq(g_tool, "file:///notes/fixed");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(5, "file:///notes/x"));
  ck_assert_str_eq(g_tool, "file:///notes/{name}");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(6, "file:///notes/x/y"));
  ck_assert_str_eq(g_tool, "file:///notes/{+rest}");
  cJSON_Delete(r);
  /* The modern era reads the same. */
  g_fn = h_note;
  r = tu_ask(&P, tu_mreq(7, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///notes/todo\""));
  tu_assert_exact(tu_get(tu_result_of(r), "contents"),
                  "[{\"uri\":\"file:///notes/todo\",\"mimeType\":"
                  "\"text/markdown\",\"text\":\"note todo\"}]");
  cJSON_Delete(r);
}
END_TEST

START_TEST(resources_read_not_found) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_note;
  /* The handler says there is no such note. */
  cJSON *r = tu_ask(&P, read_uri(1, "file:///notes/missing"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
                     "-32002,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///notes/missing\"}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  /* Nothing serves the URI. */
  r = tu_ask(&P, read_uri(2, "file:///nowhere"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":"
                     "-32002,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///nowhere\"}}}");
  cJSON_Delete(r);
  /* Case and encoding matter: URIs are compared as strings. */
  r = tu_ask(&P, read_uri(3, "FILE:///readme"));
  tu_assert_error(r, -32002, NULL);
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(4, "file:///readme/"));
  tu_assert_error(r, -32002, NULL);
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  /* Modern: -32602 with the same data. */
  r = tu_ask(&P, tu_mreq(5, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///notes/missing\""));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":"
                     "-32602,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///notes/missing\"}}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(6, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///nowhere\""));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":"
                     "-32602,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///nowhere\"}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
  /* 2024-11-05 knows -32002 too. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2024-11-05", "{}");
  r = tu_ask(&q, read_uri(7, "file:///nowhere"));
  tu_assert_error(r, -32002, "Resource not found");
  cJSON_Delete(r);
  tu_peer_close(&q);
  /* A uri that is missing, not a string, empty or holds controls. */
  static const char *const bad[] = {"{}", "{\"uri\":5}", "{\"uri\":\"\"}",
                                    "{\"uri\":\"file:///a\\u0001b\"}",
                                    "{\"uri\":\"file:///a\\nb\"}"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    r = tu_ask(&P, tu_req(8, "resources/read", bad[i]));
    tu_assert_error(r, -32602, "uri");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(g_runs, 2);
}
END_TEST

START_TEST(resources_read_traversal_refused) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_note;
  static const char *const attempts[] = {
      "file:///notes/..",          "file:///notes/.",
      "file:///notes/%2e%2e",      "file:///notes/%2E%2E",
      "file:///notes/.%2e",        "file:///notes/%2e",
      "file:///notes/a%2Fb",       "file:///notes/a%2fb",
      "file:///notes/..%2Fsecret", "file:///notes/%2e%2e%2fsecret",
      "file:///notes/a/b",         "file:///notes/../secret",
      "file:///notes/a%5Cb",       "file:///notes/..%5Csecret",
      "file:///notes/a\\\\b",      "file:///notes/",
      "file:///notes/a%2",         "file:///notes/%zz",
      "file:///notes/%00",         "file:///docs/a/../b",
      "file:///docs/../secret",    "file:///docs/%2e%2e/secret",
      "file:///docs/a/%2E%2E/b",   "file:///docs/a/..",
      "file:///docs/./a",          "file:///docs/a\\\\..\\\\b",
  };
  for (size_t i = 0; i < TU_COUNT(attempts); i++) {
    cJSON *r = tu_ask(&P, read_uri((int)i + 1, attempts[i]));
    const cJSON *e = tu_get(r, "error");
    ck_assert_msg(cJSON_IsObject(e), "%s was served", attempts[i]);
    tu_assert_error(r, -32002, "Resource not found");
    cJSON_Delete(r);
    ck_assert_msg(g_runs == 0, "the handler ran for %s", attempts[i]);
  }
  /* Modern: the same, as -32602. */
  cJSON *r = tu_ask(&P, tu_mreq(100, "resources/read", TU_META_NONE,
                                "\"uri\":\"file:///notes/%2e%2e\""));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":100,\"error\":{\"code\":"
                     "-32602,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///notes/%2e%2e\"}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
  /* Dots inside a name are fine. */
  r = tu_ask(&P, read_uri(101, "file:///notes/a..b"));
  tu_assert_json(r, "{\"result\":{\"contents\":[{\"text\":\"note a..b\"}]}}");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(102, "file:///notes/...."));
  tu_assert_json(r, "{\"result\":{\"contents\":[{\"text\":\"note ....\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
}
END_TEST

START_TEST(resources_read_modern_cache) {
  mcp_server_set_list_ttl(srv, 4321);
  cJSON *r = tu_ask(&P, tu_mreq(1, "resources/read", TU_META_NONE,
                                "\"uri\":\"file:///readme\""));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                     "\"resultType\":\"complete\",\"_meta\":{"
                     "\"io.modelcontextprotocol/serverInfo\":{\"name\":\"srv\","
                     "\"version\":\"1.2.3\",\"title\":\"Test Server\"}},"
                     "\"contents\":[{\"uri\":\"file:///readme\",\"mimeType\":"
                     "\"text/plain\",\"text\":\"data\"}],\"ttlMs\":4321,"
                     "\"cacheScope\":\"public\"}}");
  cJSON_Delete(r);
  /* A resource behind a scope is the caller's own. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ROOT, inspect);
  r = tu_ask(&q, tu_mreq(2, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///private\""));
  tu_assert_json(r, "{\"result\":{\"ttlMs\":4321,\"cacheScope\":"
                    "\"private\"}}");
  cJSON_Delete(r);
  r = tu_ask(&q, tu_mreq(3, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///vault/k\""));
  tu_assert_json(r, "{\"result\":{\"cacheScope\":\"private\"}}");
  cJSON_Delete(r);
  tu_peer_close(&q);
  /* Legacy results carry neither. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  r = tu_ask(&P, read_uri(4, "file:///readme"));
  tu_assert_json(r, "{\"result\":{\"ttlMs\":\"<absent>\",\"cacheScope\":"
                    "\"<absent>\",\"resultType\":\"<absent>\"}}");
  cJSON_Delete(r);
  /* Nor does an input_required answer. */
  g_fn = h_ask;
  r = tu_ask(&P, tu_mreq(5, "resources/read", TU_META_ELICIT,
                         "\"uri\":\"file:///readme\""));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                    "\"ttlMs\":\"<absent>\",\"cacheScope\":\"<absent>\"}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(resources_read_asks_for_input) {
  /* Modern: an InputRequiredResult, then the retry with the answer. */
  g_fn = h_ask;
  cJSON *r = tu_ask(&P, tu_mreq(1, "resources/read", TU_META_ELICIT,
                                "\"uri\":\"file:///notes/n1\""));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                    "\"inputRequests\":{\"confirm\":{\"method\":"
                    "\"elicitation/create\"}},\"contents\":\"<absent>\"}}");
  char *state = strdup(tu_get(tu_result_of(r), "requestState")->valuestring);
  ck_assert_ptr_nonnull(state);
  cJSON_Delete(r);
  char *extra = tu_text("\"uri\":\"file:///notes/n1\",\"requestState\":\"%s\","
                        "\"inputResponses\":{\"confirm\":%s}",
                        state, ACCEPT);
  r = tu_ask(&P, tu_mreq(2, "resources/read", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"contents\":"
                    "[{\"uri\":\"file:///notes/n1\",\"mimeType\":"
                    "\"text/markdown\",\"text\":\"confirmed\"}],"
                    "\"cacheScope\":\"public\"}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_state, "asked");
  /* Bound to the URI: another note of the same template is refused. */
  extra = tu_text("\"uri\":\"file:///notes/n2\",\"requestState\":\"%s\","
                  "\"inputResponses\":{\"confirm\":%s}",
                  state, ACCEPT);
  r = tu_ask(&P, tu_mreq(3, "resources/read", TU_META_ELICIT, extra));
  free(extra);
  tu_assert_error(r, -32602, "requestState");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 2);
  free(state);
  /* Legacy: a real elicitation/create, then the contents. */
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  ck_assert_int_eq(tu_send_free(&P, read_uri(4, "file:///notes/n1")), 0);
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0, "{\"id\":1,\"method\":\"elicitation/create\"}");
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"action\":"
                        "\"decline\"}}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":"
                     "[{\"uri\":\"file:///notes/n1\",\"mimeType\":"
                     "\"text/markdown\",\"text\":\"declined\"}]}}");
  cJSON_Delete(r);
  /* Deferred, then finished with "no such resource". */
  g_fn = tu_defer;
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, read_uri(5, "file:///notes/late")), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_ptr_nonnull(tu_stash);
  ck_assert_str_eq(mcp_call_uri(tu_stash), "file:///notes/late");
  ck_assert_int_eq(mcp_call_kind_of(tu_stash), MCP_CALL_RESOURCE);
  ck_assert_int_eq(mcp_call_finish(tu_stash, MCP_ENOENT), 0);
  ck_assert_uint_eq(P.nout, 1);
  r = tu_msg(&P, 0);
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":"
                     "-32002,\"message\":\"Resource not found\",\"data\":{"
                     "\"uri\":\"file:///notes/late\"}}}");
  cJSON_Delete(r);
}
END_TEST

static int h_link(mcp_call *call) {
  ck_assert_int_eq(mcp_result_resource_link(call, "file:///x", "x", NULL, NULL),
                   MCP_EINVAL);
  /* Latched: the rest does nothing. */
  ck_assert_int_eq(mcp_result_text(call, "x"), MCP_EINVAL);
  return 0;
}
static int h_res_structured(mcp_call *call) {
  return mcp_result_structured(call, "{\"a\":1}");
}
static int h_res_role(mcp_call *call) {
  return mcp_result_role(call, MCP_ROLE_USER);
}
static int h_res_description(mcp_call *call) {
  return mcp_result_description(call, "d");
}
static int h_res_error(mcp_call *call) {
  return mcp_result_error(call, "The disk is unreadable");
}

START_TEST(resources_read_builder_rules) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  int (*internal[])(mcp_call *) = {h_link, h_res_structured, h_res_role,
                                   h_res_description, h_fail};
  for (size_t i = 0; i < TU_COUNT(internal); i++) {
    g_fn = internal[i];
    g_log[0] = '\0';
    cJSON *r = tu_ask(&P, read_uri((int)i + 1, "file:///readme"));
    char *expected = tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{"
                             "\"code\":-32603,\"message\":\"Internal error\"}}",
                             (int)i + 1);
    tu_assert_exact(r, expected);
    free(expected);
    cJSON_Delete(r);
    ck_assert_msg(strstr(g_log, "resource \"file:///readme\" failed") != NULL,
                  "log: %s", g_log);
  }
  g_fn = h_res_error;
  cJSON *r = tu_ask(&P, read_uri(10, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":10,\"error\":{\"code\":"
                     "-32602,\"message\":\"The disk is unreadable\"}}");
  cJSON_Delete(r);
  /* MCP_INPUT_REQUIRED without asking anything is the handler's bug. */
  g_fn = h_input_nothing;
  r = tu_ask(&P, read_uri(11, "file:///readme"));
  tu_assert_error(r, -32603, NULL);
  cJSON_Delete(r);
}
END_TEST

static int h_nothing(mcp_call *call) {
  (void)call;
  return 0;
}

START_TEST(resources_read_scope_denied) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, read_uri(1, "file:///private"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
                     "-31403,\"message\":\"Forbidden: insufficient scope; "
                     "this resource needs admin\",\"data\":{"
                     "\"requiredScopes\":[\"admin\"],\"scopes\":[\"admin\"]}}"
                     "}");
  cJSON_Delete(r);
  r = tu_ask(&P, read_uri(2, "file:///vault/k"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "this resource needs admin");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(3, "resources/read", TU_META_NONE,
                         "\"uri\":\"file:///vault/k\""));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "this resource needs admin");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 0);
  /* A handler that adds nothing answers an empty contents list. */
  g_fn = h_nothing;
  r = tu_ask(&P, read_uri(4, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":"
                     "[]}}");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * logging/setLevel
 * ======================================================================== */

static int h_logs(mcp_call *call) {
  mcp_call_log(call, MCP_LOG_DEBUG, "d");
  mcp_call_log(call, MCP_LOG_INFO, "i");
  mcp_call_log(call, MCP_LOG_NOTICE, "n");
  mcp_call_log(call, MCP_LOG_WARNING, "w");
  mcp_call_log(call, MCP_LOG_ERROR, "e");
  return mcp_result_text(call, "logged");
}

/* Asserts P's messages are the log notifications levels (comma-separated,
 * from logger) and then the reply to id. */
static void expect_logs(const char *logger, const char *levels, int id) {
  size_t i = 0;
  char copy_levels[64];
  snprintf(copy_levels, sizeof copy_levels, "%s", levels);
  for (char *l = strtok(copy_levels, ","); l; l = strtok(NULL, ","), i++) {
    ck_assert_msg(i < P.nout, "log %s not sent", l);
    cJSON *m = tu_msg(&P, i);
    char *expected =
        tu_text("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                "message\",\"params\":{\"level\":\"%s\",\"logger\":"
                "\"%s\",\"data\":\"%c\"}}",
                l, logger, l[0]);
    tu_assert_exact(m, expected);
    free(expected);
    cJSON_Delete(m);
  }
  ck_assert_msg(P.nout == i + 1, "%zu messages, expected %zu", P.nout, i + 1);
  cJSON *m = tu_msg(&P, i);
  ck_assert_int_eq((int)tu_get(m, "id")->valuedouble, id);
  ck_assert_ptr_nonnull(tu_get(m, "result"));
  cJSON_Delete(m);
}

START_TEST(logging_set_level) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_logs;
  /* Before setLevel the client is sent nothing. */
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("1", "run", "{}", NULL)), 0);
  expect_logs("run", "", 1);
  ck_assert_ptr_nonnull(strstr(g_log, "tool \"run\": w"));
  static const char *const bad[] = {"{\"level\":\"verbose\"}", "{\"level\":3}",
                                    "{}", "{\"level\":\"WARNING\"}",
                                    "{\"level\":null}"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    cJSON *r = tu_ask(&P, tu_req(2, "logging/setLevel", bad[i]));
    tu_assert_error(r, -32602,
                    "level must be one of debug, info, notice, "
                    "warning, error, critical, alert, emergency");
    cJSON_Delete(r);
  }
  cJSON *r = tu_ask(&P, tu_req(2, "logging/setLevel", NULL));
  tu_assert_error(r, -32602, "level");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("3", "run", "{}", NULL)), 0);
  expect_logs("run", "", 3);

  r = tu_ask(&P, tu_req(4, "logging/setLevel", "{\"level\":\"warning\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("5", "run", "{}", NULL)), 0);
  expect_logs("run", "warning,error", 5);
  /* Prompts and resources log the same way, named as themselves. */
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, get_prompt(6, "greet", "{\"name\":\"a\"}")),
                   0);
  expect_logs("greet", "warning,error", 6);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, read_uri(7, "file:///notes/x")), 0);
  expect_logs("file:///notes/{name}", "warning,error", 7);

  r = tu_ask(&P, tu_req(8, "logging/setLevel", "{\"level\":\"debug\"}"));
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("9", "run", "{}", NULL)), 0);
  expect_logs("run", "debug,info,notice,warning,error", 9);
  r = tu_ask(&P, tu_req(10, "logging/setLevel", "{\"level\":\"critical\"}"));
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("11", "run", "{}", NULL)), 0);
  expect_logs("run", "", 11);
  /* A refused level leaves the last good one. */
  r = tu_ask(&P, tu_req(12, "logging/setLevel", "{\"level\":\"error\"}"));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(13, "logging/setLevel", "{\"level\":\"loud\"}"));
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_call_text("14", "run", "{}", NULL)), 0);
  expect_logs("run", "error", 14);
  /* A modern request on the same connection ignores the legacy level. */
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, tu_call_text("15", "run", "{}", TU_META_NONE)), 0);
  expect_logs("run", "", 15);
  /* Other sessions keep their own level (none). */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2025-11-25", "{}");
  cJSON *reply = tu_ask(&q, tu_call_text("16", "run", "{}", NULL));
  cJSON_Delete(reply);
  tu_peer_close(&q);
}
END_TEST

START_TEST(logging_set_level_is_legacy_only) {
  cJSON *r = tu_ask(
      &P, tu_mreq(1, "logging/setLevel", TU_META_NONE, "\"level\":\"debug\""));
  tu_assert_error(r, -32601, "logging/setLevel");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_req(2, "logging/setLevel", "{\"level\":\"debug\"}"));
  tu_assert_error(r, -32600, "initialize");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * completion/complete
 * ======================================================================== */

#define REF_GREET REF_GREET_TEXT
#define REF_NOTES "{\"type\":\"ref/resource\",\"uri\":\"file:///notes/{name}\"}"

START_TEST(complete_prompt_argument) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(
      &P, complete_req(1, REF_GREET, "name", "al", "{\"style\":\"formal\"}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                     "\"completion\":{\"values\":[\"alice\",\"albert\"],"
                     "\"hasMore\":false}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_runs, 1);
  ck_assert_str_eq(g_c_arg, "name");
  ck_assert_str_eq(g_c_value, "al");
  ck_assert_str_eq(g_c_context, "formal");
  ck_assert_str_eq(g_c_subject, "alice");
  ck_assert_int_eq(g_runs, 0); /* the prompt itself did not run */
  /* Without context; an empty value; a total. */
  g_c_total = 3;
  r = tu_ask(&P, complete_req(2, REF_GREET, "style", "", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"
                     "\"completion\":{\"values\":[\"alice\",\"albert\","
                     "\"bob\"],\"total\":3,\"hasMore\":false}}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_c_arg, "style");
  ck_assert_str_eq(g_c_value, "");
  ck_assert_str_eq(g_c_context, "(null)");
  /* A context value that is not a string is not seen. */
  r = tu_ask(&P, complete_req(3, REF_GREET, "name", "z", "{\"style\":5}"));
  tu_assert_json(r, "{\"result\":{\"completion\":{\"values\":[]}}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_c_context, "(null)");
  /* The modern era: a complete result. */
  r = tu_ask(&P,
             tu_mreq(4, "completion/complete", TU_META_NONE,
                     "\"ref\":" REF_GREET ",\"argument\":{\"name\":\"name\","
                     "\"value\":\"b\"}"));
  tu_assert_json(r, "{\"id\":4,\"result\":{\"resultType\":\"complete\","
                    "\"completion\":{\"values\":[\"bob\"],\"hasMore\":false},"
                    "\"ttlMs\":\"<absent>\"}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(complete_template_variable) {
  tu_legacy_init(&P, "2025-06-18", "{}");
  cJSON *r = tu_ask(&P, complete_req(1, REF_NOTES, "name", "b", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                     "\"completion\":{\"values\":[\"bob\"],\"hasMore\":false}"
                     "}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_c_arg, "name");
  ck_assert_str_eq(g_c_value, "b");
  /* A template without a callback: no suggestions. */
  r = tu_ask(&P,
             complete_req(2,
                          "{\"type\":\"ref/resource\",\"uri\":\"file:///docs/"
                          "{+path}\"}",
                          "path", "a", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"
                     "\"completion\":{\"values\":[],\"hasMore\":false}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_runs, 1);
  /* A prompt without a callback: no suggestions either. */
  r = tu_ask(&P, complete_req(3, "{\"type\":\"ref/prompt\",\"name\":\"plain\"}",
                              "text", "a", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{"
                     "\"completion\":{\"values\":[],\"hasMore\":false}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_runs, 1);
}
END_TEST

START_TEST(complete_more_than_100_values) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_c_count = 101;
  g_c_total = 1000;
  cJSON *r = tu_ask(&P, complete_req(1, REF_NOTES, "name", "", NULL));
  const cJSON *c = tu_get(tu_result_of(r), "completion");
  const cJSON *values = tu_get(c, "values");
  ck_assert_int_eq(cJSON_GetArraySize(values), 100);
  ck_assert_str_eq(cJSON_GetArrayItem(values, 0)->valuestring, "v0");
  ck_assert_str_eq(cJSON_GetArrayItem(values, 99)->valuestring, "v99");
  tu_assert_json(c, "{\"total\":1000,\"hasMore\":true}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_last_add, MCP_ELIMIT);
  /* Exactly 100 is all there is. */
  g_c_count = 100;
  g_c_total = 0;
  r = tu_ask(&P, complete_req(2, REF_NOTES, "name", "", NULL));
  c = tu_get(tu_result_of(r), "completion");
  ck_assert_int_eq(cJSON_GetArraySize(tu_get(c, "values")), 100);
  tu_assert_json(c, "{\"total\":\"<absent>\",\"hasMore\":false}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_last_add, 0);
}
END_TEST

static int c_bad_value(mcp_completion *c, void *user_data) {
  (void)user_data;
  ck_assert_int_eq(mcp_completion_add(c, "\xff"), MCP_EINVAL);
  ck_assert_int_eq(mcp_completion_add(c, NULL), MCP_EINVAL);
  return mcp_completion_add(c, "ok");
}

START_TEST(complete_errors) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  struct {
    const char *ref, *arg, *needle;
  } cases[] = {
      {"{\"type\":\"ref/prompt\",\"name\":\"nope\"}", "name",
       "Invalid params: unknown prompt: nope"},
      {"{\"type\":\"ref/resource\",\"uri\":\"file:///nope/{x}\"}", "x",
       "Invalid params: unknown resource: file:///nope/{x}"},
      /* A template is named by its text, not by a URI it matches. */
      {"{\"type\":\"ref/resource\",\"uri\":\"file:///notes/a\"}", "name",
       "unknown resource: file:///notes/a"},
      {REF_GREET, "bogus",
       "Invalid params: greet has no argument named \"bogus\""},
      {REF_NOTES, "nam",
       "Invalid params: file:///notes/{name} has no variable named \"nam\""},
      {"{\"type\":\"ref/resource\",\"uri\":\"file:///readme\"}", "name",
       "file:///readme has no variable named \"name\""},
      /* Prompts and resources do not share names. */
      {"{\"type\":\"ref/resource\",\"uri\":\"greet\"}", "name",
       "unknown resource: greet"},
      {"{\"type\":\"ref/prompt\",\"name\":\"file:///notes/{name}\"}", "name",
       "unknown prompt"},
      {"{\"type\":\"ref/tool\",\"name\":\"run\"}", "x", "ref must be"},
      {"{\"type\":\"ref/prompt\",\"uri\":\"greet\"}", "name", "ref must be"},
      {"{\"type\":\"ref/resource\",\"name\":\"file:///notes/{name}\"}", "name",
       "ref must be"},
      {"{\"name\":\"greet\"}", "name", "ref must be"},
      {"\"greet\"", "name", "ref must be"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    cJSON *r = tu_ask(
        &P, complete_req((int)i + 1, cases[i].ref, cases[i].arg, "", NULL));
    tu_assert_error(r, -32602, cases[i].needle);
    cJSON_Delete(r);
  }
  static const char *const bad_params[] = {
      "{\"ref\":" REF_GREET "}",
      "{\"ref\":" REF_GREET ",\"argument\":{\"name\":\"name\"}}",
      "{\"ref\":" REF_GREET ",\"argument\":{\"value\":\"a\"}}",
      "{\"ref\":" REF_GREET ",\"argument\":{\"name\":1,\"value\":\"a\"}}",
      "{\"ref\":" REF_GREET ",\"argument\":\"name\"}",
      "{\"ref\":" REF_GREET ",\"argument\":{\"name\":\"name\",\"value\":\"\"},"
      "\"context\":[]}",
      "{\"ref\":" REF_GREET ",\"argument\":{\"name\":\"name\",\"value\":\"\"},"
      "\"context\":{\"arguments\":\"x\"}}",
      "{\"argument\":{\"name\":\"name\",\"value\":\"\"}}",
  };
  for (size_t i = 0; i < TU_COUNT(bad_params); i++) {
    cJSON *r =
        tu_ask(&P, tu_req(50 + (int)i, "completion/complete", bad_params[i]));
    tu_assert_error(r, -32602, "Invalid params");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(g_c_runs, 0);
  /* The callback fails: an internal error, the detail in the log. */
  g_c_rc = MCP_EIO;
  cJSON *r = tu_ask(&P, complete_req(70, REF_GREET, "name", "a", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":70,\"error\":{\"code\":"
                     "-32603,\"message\":\"Internal error\"}}");
  cJSON_Delete(r);
  ck_assert_ptr_nonnull(strstr(g_log, "completion of \"greet\" failed"));
  g_c_rc = 0;
  /* Refused values are refused one by one. */
  mcp_prompt p = PROMPT_PLAIN;
  p.name = "picky";
  p.complete = c_bad_value;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, &g_runs), 0);
  tu_clear(&P);
  r = tu_ask(&P,
             complete_req(71, "{\"type\":\"ref/prompt\",\"name\":\"picky\"}",
                          "text", "", NULL));
  tu_assert_exact(tu_get(tu_result_of(r), "completion"),
                  "{\"values\":[\"ok\"],\"hasMore\":false}");
  cJSON_Delete(r);
  /* Modern errors are the same. */
  r = tu_ask(&P, tu_mreq(72, "completion/complete", TU_META_NONE,
                         "\"ref\":" REF_GREET ",\"argument\":{\"name\":\"x\","
                         "\"value\":\"\"}"));
  tu_assert_error(r, -32602, "greet has no argument named \"x\"");
  cJSON_Delete(r);
}
END_TEST

START_TEST(complete_needs_the_scopes) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  cJSON *r = tu_ask(&P, complete_req(1,
                                     "{\"type\":\"ref/prompt\",\"name\":"
                                     "\"secret\"}",
                                     "topic", "", NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":"
                     "-31403,\"message\":\"Forbidden: insufficient scope; "
                     "this prompt needs admin\",\"data\":{\"requiredScopes\":"
                     "[\"admin\"],\"scopes\":[\"admin\"]}}}");
  cJSON_Delete(r);
  r = tu_ask(&P,
             complete_req(2,
                          "{\"type\":\"ref/resource\",\"uri\":\"file:///vault/"
                          "{key}\"}",
                          "key", "", NULL));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "insufficient scope");
  tu_assert_json(r, "{\"error\":{\"data\":{\"requiredScopes\":[\"admin\"]}}}");
  cJSON_Delete(r);
  r = tu_ask(&P,
             tu_mreq(3, "completion/complete", TU_META_NONE,
                     "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"secret\"},"
                     "\"argument\":{\"name\":\"topic\",\"value\":\"\"}"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
  cJSON_Delete(r);
  /* Scopes come first: the argument and variable names of what the caller
   * may not use are not revealed. */
  r = tu_ask(&P,
             complete_req(5, "{\"type\":\"ref/prompt\",\"name\":\"secret\"}",
                          "bogus", "", NULL));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
  cJSON_Delete(r);
  r = tu_ask(&P,
             complete_req(6,
                          "{\"type\":\"ref/resource\",\"uri\":\"file:///vault/"
                          "{key}\"}",
                          "bogus", "", NULL));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
  cJSON_Delete(r);
  ck_assert_int_eq(g_c_runs, 0);
  tu_peer q;
  tu_peer_open_with(&q, srv, &ROOT, inspect);
  tu_legacy_init(&q, "2025-11-25", "{}");
  r = tu_ask(&q,
             complete_req(7, "{\"type\":\"ref/prompt\",\"name\":\"secret\"}",
                          "bogus", "", NULL));
  tu_assert_error(r, -32602, "secret has no argument named \"bogus\"");
  cJSON_Delete(r);
  r = tu_ask(&q,
             complete_req(4,
                          "{\"type\":\"ref/resource\",\"uri\":\"file:///vault/"
                          "{key}\"}",
                          "key", "a", NULL));
  tu_assert_json(r, "{\"result\":{\"completion\":{\"values\":[\"alice\","
                    "\"albert\"]}}}");
  cJSON_Delete(r);
  tu_peer_close(&q);
  ck_assert_int_eq(g_c_runs, 1);
  ck_assert_str_eq(g_c_subject, "root");
}
END_TEST

/* ===========================================================================
 * Error messages cut long names without breaking UTF-8
 * ======================================================================== */

/* Is s well-formed UTF-8 (no overlongs, surrogates or values past
 * U+10FFFF)? */
static bool utf8_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p, n = c < 0x80                ? 0
                         : c >= 0xc2 && c < 0xe0 ? 1
                         : c >= 0xe0 && c < 0xf0 ? 2
                         : c >= 0xf0 && c < 0xf5 ? 3
                                                 : 4;
    if (n == 4)
      return false;
    unsigned cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 7;
    for (unsigned i = 1; i <= n; i++) {
      if ((p[i] & 0xc0) != 0x80)
        return false;
      cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
        (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    p += n + 1;
  }
  return true;
}

/* The error message of reply, asserted to be UTF-8 and to start with
 * prefix. */
static void expect_utf8_message(const cJSON *reply, const char *prefix) {
  const cJSON *m = tu_get(tu_get(reply, "error"), "message");
  ck_assert(cJSON_IsString(m));
  ck_assert_msg(utf8_ok(m->valuestring), "not UTF-8: %s", m->valuestring);
  ck_assert_msg(strncmp(m->valuestring, prefix, strlen(prefix)) == 0,
                "\"%s\" does not start with \"%s\"", m->valuestring, prefix);
}

START_TEST(error_messages_stay_utf8) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  char e70[141], e100[201];
  for (int i = 0; i < 70; i++)
    memcpy(e70 + 2 * i, "\xc3\xa9", 2);
  e70[140] = '\0';
  for (int i = 0; i < 100; i++)
    memcpy(e100 + 2 * i, "\xc3\xa9", 2);
  e100[200] = '\0';
  /* Odd offsets: every cut falls inside a character. */
  for (int odd = 0; odd < 2; odd++) {
    const char *pad = odd ? "x" : "";
    char *args = tu_text("{\"name\":\"a\",\"%s%s\":\"v\"}", pad, e70);
    cJSON *r = tu_ask(&P, get_prompt(1, "greet", args));
    free(args);
    tu_assert_error(r, -32602, NULL);
    expect_utf8_message(r, "Invalid params: prompt \"greet\" has no argument");
    cJSON_Delete(r);
    char *name = tu_text("%s%s", pad, e100);
    r = tu_ask(&P, get_prompt(2, name, "{}"));
    expect_utf8_message(r, "Invalid params: unknown prompt: ");
    cJSON_Delete(r);
    r = tu_ask(&P, complete_req(3, REF_GREET_TEXT, name, "", NULL));
    expect_utf8_message(r, "Invalid params: greet has no argument named");
    cJSON_Delete(r);
    char *ref =
        tu_text("{\"type\":\"ref/resource\",\"uri\":\"file:///%s\"}", name);
    r = tu_ask(&P, complete_req(4, ref, "x", "", NULL));
    expect_utf8_message(r, "Invalid params: unknown resource: file:///");
    cJSON_Delete(r);
    free(ref);
    free(name);
  }
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

/* ===========================================================================
 * Allocation failure: every path frees what it took
 * ======================================================================== */

/* A send callback that keeps nothing, so it never allocates through the
 * failing allocator (nor parses). */
static char g_last[4096]; /* the last message counted, cut to size */

static int count_send(const char *msg, size_t len, void *user_data) {
  size_t n = len < sizeof g_last - 1 ? len : sizeof g_last - 1;
  memcpy(g_last, msg, n);
  g_last[n] = '\0';
  (*(int *)user_data)++;
  return 0;
}

static int g_done_count;
static bool g_listen_tried;
static void count_done(void *user_data) {
  (void)user_data;
  g_done_count++;
}

static int h_alloc(mcp_call *call) {
  mcp_call_log(call, MCP_LOG_ERROR, "e");
  if (mcp_call_kind_of(call) == MCP_CALL_PROMPT)
    mcp_result_description(call, "d");
  return mcp_result_text(call, "x");
}

static int h_alloc_entry(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *v;
  if (mcp_call_arg_string(call, "name", &v) == 0 && strcmp(v, "gone") == 0)
    return MCP_ENOENT;
  if (mcp_call_arg_string(call, "name", &v) == 0 && strcmp(v, "ask") == 0 &&
      mcp_call_input(call, "confirm") == NULL) {
    int rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    if (rc == 0)
      rc = mcp_call_set_state(call, "s");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  return h_alloc(call);
}

static int c_alloc(mcp_completion *c, void *user_data) {
  (void)user_data;
  int rc = mcp_completion_add(c, "one");
  if (rc == 0)
    rc = mcp_completion_add(c, "two");
  mcp_completion_set_total(c, 2);
  return rc;
}

/* Runs one whole scenario; returns true when every step worked. */
static bool alloc_scenario(long n, void *user) {
  (void)n;
  int *sent = user;
  *sent = 0;
  g_done_count = 0;
  g_listen_tried = false;
  static const mcp_prompt_argument args[] = {{.name = "name"}, {.name = NULL}};
  static const mcp_prompt prompt = {.name = "greet",
                                    .description = "d",
                                    .arguments = args,
                                    .handler = h_alloc_entry,
                                    .complete = c_alloc};
  static const mcp_resource fixed = {
      .uri = "file:///readme", .name = "r", .handler = h_alloc_entry};
  static const mcp_resource tmpl = {.uri_template = "file:///notes/{name}",
                                    .name = "n",
                                    .mime_type = "text/plain",
                                    .handler = h_alloc_entry,
                                    .complete = c_alloc};
  static const char *const msgs[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"c\"}}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
      "\"params\":{\"level\":\"info\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{"
      "\"name\":\"greet\",\"arguments\":{\"name\":\"a\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{"
      "\"name\":\"greet\",\"arguments\":{\"nope\":\"a\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\","
      "\"params\":{\"uri\":\"file:///notes/b\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\","
      "\"params\":{\"uri\":\"file:///notes/gone\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\","
      "\"params\":{\"uri\":\"file:///nowhere\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/templates/list\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"resources/subscribe\","
      "\"params\":{\"uri\":\"file:///readme\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"completion/complete\","
      "\"params\":{\"ref\":{\"type\":\"ref/resource\",\"uri\":"
      "\"file:///notes/{name}\"},\"argument\":{\"name\":\"name\",\"value\":"
      "\"o\"},\"context\":{\"arguments\":{\"x\":\"y\"}}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"completion/complete\","
      "\"params\":{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},"
      "\"argument\":{\"name\":\"zz\",\"value\":\"o\"}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"resources/read\","
      "\"params\":{\"_meta\":{" TU_PV ":\"2026-07-28\"," TU_CC ":{}},\"uri\":"
      "\"file:///readme\"}}",
  };
  static const char listen[] =
      "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"subscriptions/listen\","
      "\"params\":{\"_meta\":{" TU_PV ":\"2026-07-28\"," TU_CC ":{}},"
      "\"notifications\":{\"toolsListChanged\":true,\"promptsListChanged\":"
      "true,\"resourceSubscriptions\":[\"file:///readme\"]}}}";
  static const char cancel[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":14}}";
  mcp_server *s = NULL;
  int rc = mcp_server_new(&INFO, &s);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    return false;
  }
  mcp_server_set_log(s, tu_silent_log, NULL);
  bool ok = true;
  mcp_session *session = NULL;
  if ((rc = mcp_server_add_prompt(s, &prompt, NULL)) != 0 ||
      (rc = mcp_server_add_resource(s, &fixed, NULL)) != 0 ||
      (rc = mcp_server_add_resource(s, &tmpl, NULL)) != 0 ||
      (rc = mcp_session_new(s, NULL, count_send, sent, &session)) != 0) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    mcp_server_free(s);
    return false;
  }
  for (size_t i = 0; i < TU_COUNT(msgs); i++) {
    int before = *sent;
    rc = mcp_session_receive(session, msgs[i], strlen(msgs[i]));
    ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "rc %d for %s", rc, msgs[i]);
    if (rc || (i != 1 && *sent == before))
      ok = false;
  }
  /* A modern prompt that asks, and its retry with the answer. */
  static const char ask[] =
      "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"prompts/get\","
      "\"params\":{\"_meta\":{" TU_PV ":\"2026-07-28\"," TU_CC
      ":{\"elicitation\":{}}},\"name\":\"greet\",\"arguments\":{\"name\":"
      "\"ask\"}}}";
  rc = mcp_session_receive(session, ask, strlen(ask));
  ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "rc %d for ask", rc);
  const char *st = strstr(g_last, "\"requestState\":\"");
  if (rc == 0 && st) {
    st += strlen("\"requestState\":\"");
    const char *end = strchr(st, '"');
    ck_assert_ptr_nonnull(end);
    char retry[4096];
    snprintf(retry, sizeof retry,
             "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"prompts/get\","
             "\"params\":{\"_meta\":{" TU_PV ":\"2026-07-28\"," TU_CC
             ":{\"elicitation\":{}}},\"name\":\"greet\",\"arguments\":{"
             "\"name\":\"ask\"},\"requestState\":\"%.*s\","
             "\"inputResponses\":{\"confirm\":{\"action\":\"accept\"}}}}",
             (int)(end - st), st);
    rc = mcp_session_receive(session, retry, strlen(retry));
    ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "rc %d for the retry", rc);
    ok &= rc == 0 && strstr(g_last, "\"messages\"") != NULL;
  } else {
    ok = false;
  }
  /* A listener whose stream counts its messages in sent, and its end in
   * g_done_count. */
  mcp_sink k = {.send = count_send, .done = count_done, .user_data = sent};
  int before = *sent;
  g_listen_tried = true;
  rc = mcp_session_receive_to(session, listen, strlen(listen), &k);
  ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "rc %d for listen", rc);
  ok &= rc == 0 && *sent > before;
  /* The legacy subscription and the listener. */
  ok &= mcp_server_resource_updated(s, "file:///readme") == 2;
  ok &= mcp_server_remove_prompt(s, "greet") == 0;
  ok &= mcp_session_receive(session, cancel, strlen(cancel)) == 0;
  mcp_session_free(session);
  mcp_server_free(s);
  return ok;
}

/* Whatever failed, the listener's stream was released once; the run in
 * which nothing failed went all the way. */
static void alloc_after(long n, bool ok, bool clean, void *user) {
  int sent = *(int *)user;
  ck_assert_msg(g_done_count == (g_listen_tried ? 1 : 0),
                "fail_at %ld: done called %d times", n, g_done_count);
  if (clean) {
    ck_assert_msg(ok, "the scenario failed without a failed allocation");
    /* 13 replies, the log messages of 2 calls, the modern round trip,
     * the acknowledgement, and two notifications on the stream and two
     * on the session. */
    ck_assert_int_eq(sent, 13 + 2 + 2 + 1 + 2 + 2);
  }
}

START_TEST(allocation_failure_leaks_nothing) {
  int sent;
  tu_alloc_every(20000, alloc_scenario, alloc_after, &sent);
}
END_TEST

/* MCP Apps: mcp_server_lint points at a tool whose view (_meta.ui
 * resourceUri) no resource or template serves, whichever was registered
 * first; a served view, or a tool without one, says nothing. */
START_TEST(lint_points_at_a_tool_without_its_view) {
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 0);
  mcp_tool t = TC_TOOL_RUN(h_tool);
  t.name = "show";
  t.meta = "{\"ui\":{\"resourceUri\":\"ui://app/status.html\"}}";
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  g_log[0] = '\0';
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 1);
  ck_assert_str_eq(g_log, "tool \"show\" names the view "
                          "\"ui://app/status.html\" (meta ui.resourceUri), "
                          "but no resource serves it: hosts cannot show the "
                          "tool's UI\n");
  const mcp_resource views = {.uri_template = "ui://app/{page}",
                              .name = "views",
                              .mime_type = "text/html;profile=mcp-app",
                              .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &views, NULL), 0);
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "ui://app/{page}"), 0);
  const mcp_resource view = {.uri = "ui://app/status.html",
                             .name = "status",
                             .mime_type = "text/html;profile=mcp-app",
                             .handler = h_unused};
  ck_assert_int_eq(mcp_server_add_resource(srv, &view, NULL), 0);
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 0);
  /* MCP Apps' deprecated flat key names a view just as well. */
  t.name = "show_flat";
  t.meta = "{\"ui/resourceUri\":\"ui://app/flat.html\"}";
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  g_log[0] = '\0';
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 1);
  ck_assert_str_eq(g_log, "tool \"show_flat\" names the view "
                          "\"ui://app/flat.html\" (meta \"ui/resourceUri\"), "
                          "but no resource serves it: hosts cannot show the "
                          "tool's UI\n");
}
END_TEST

static Suite *prompts_resources_suite(void) {
  Suite *s = suite_create("prompts_resources");
  TCase *t = tcase(s, "registration", setup_bare);
  tcase_add_test(t, prompt_registration_rules);
  tcase_add_test(t, resource_registration_rules);
  tcase_add_test(t, icons_and_meta_on_the_surface);
  tcase_add_test(t, server_icons_and_website);
  tcase_add_test(t, scopes_include_prompts_and_resources);
  tcase_add_test(t, capabilities_only_what_is_registered);
  tcase_add_test(t, methods_only_for_what_is_offered);
  tcase_add_test(t, prompts_list_paged);

  t = tcase(s, "prompts", setup);
  tcase_add_test(t, capabilities_full_surface);
  tcase_add_test(t, prompts_list_shapes_by_version);
  tcase_add_test(t, prompts_list_needs_initialize);
  tcase_add_test(t, prompts_get_messages_every_kind);
  tcase_add_test(t, prompts_get_older_versions);
  tcase_add_test(t, prompts_get_modern);
  tcase_add_test(t, prompts_get_argument_errors);
  tcase_add_test(t, prompts_get_handler_errors);
  tcase_add_test(t, prompts_get_scope_denied);
  tcase_add_test(t, prompts_get_modern_input_required_round_trip);
  tcase_add_test(t, prompts_get_legacy_elicitation_and_resume);
  tcase_add_test(t, prompts_get_legacy_session_freed_while_asking);
  tcase_add_test(t, prompts_get_deferred);
  tcase_add_test(t, prompts_get_deferred_then_cancelled);
  tcase_add_test(t, batch_2025_03_26_serves_the_surface);

  t = tcase(s, "resources", setup);
  tcase_add_test(t, resources_lists_by_version);
  tcase_add_test(t, resources_lists_paged);
  tcase_add_test(t, resources_read_static);
  tcase_add_test(t, resources_read_template_variables);
  tcase_add_test(t, resources_read_not_found);
  tcase_add_test(t, resources_read_traversal_refused);
  tcase_add_test(t, resources_read_modern_cache);
  tcase_add_test(t, resources_read_asks_for_input);
  tcase_add_test(t, resources_read_builder_rules);
  tcase_add_test(t, resources_read_scope_denied);

  t = tcase(s, "logging", setup);
  tcase_add_test(t, logging_set_level);
  tcase_add_test(t, logging_set_level_is_legacy_only);

  t = tcase(s, "completion", setup);
  tcase_add_test(t, complete_prompt_argument);
  tcase_add_test(t, complete_template_variable);
  tcase_add_test(t, complete_more_than_100_values);
  tcase_add_test(t, complete_errors);
  tcase_add_test(t, complete_needs_the_scopes);
  tcase_add_test(t, error_messages_stay_utf8);
  tcase_add_test(t, lint_points_at_a_tool_without_its_view);

  t = tcase_create("allocation");
  tcase_set_timeout(t, 900);
  tcase_add_test(t, allocation_failure_leaks_nothing);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(prompts_resources_suite()); }
