/* Tests for skills (lib/registry/skills.c, and the engine's skills/list,
 * skills/get and skill file reads): the io.modelcontextprotocol/skills
 * extension over the public API. The digests below were computed apart
 * from the library (sha256sum of the same bytes), so a wrong digest cannot
 * agree with itself. */
#define _DEFAULT_SOURCE /* mkdtemp, symlink */
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define SKILL_MD                                                               \
  "---\n"                                                                      \
  "name: notes-workflow\n"                                                     \
  "description: \"How to use the notes tools: list, then ask before "          \
  "deleting.\"\n"                                                              \
  "license: Apache-2.0\n"                                                      \
  "allowed-tools: list_notes get_note\n"                                       \
  "metadata:\n"                                                                \
  "  author: libmcp\n"                                                         \
  "  version: '1.0'\n"                                                         \
  "---\n"                                                                      \
  "# Notes workflow\n"                                                         \
  "\n"                                                                         \
  "Call list_notes first.\n"
#define SKILL_MD_SHA                                                           \
  "sha256:5bc3f90c108b3266bcf4b09485c1ad363c603b87515117b9a2a6a3a826d9dd75"
#define REF_MD "Ids look like n1.\n"
#define REF_MD_SHA                                                             \
  "sha256:bb13720462763da82d6ee944758810d68a7128e6c19b0069f0bd01566b83e23c"

#define URI "skill://notes-workflow/SKILL.md"
#define REF_URI "skill://notes-workflow/references/ids.md"

static const mcp_skill_file files[] = {
    {.path = "references/ids.md", .data = REF_MD, .size = sizeof REF_MD - 1},
    {.path = "SKILL.md", .data = SKILL_MD, .size = sizeof SKILL_MD - 1},
    {.path = NULL}};
static const mcp_skill skill = {.path = "notes-workflow", .files = files};

/* The entry, as skills/list and skills/get send it: SKILL.md first. */
static const char ENTRY[] =
    "{\"uri\":\"" URI "\",\"frontmatter\":{\"name\":\"notes-workflow\","
    "\"description\":\"How to use the notes tools: list, then ask before "
    "deleting.\",\"license\":\"Apache-2.0\",\"allowed-tools\":\"list_notes "
    "get_note\",\"metadata\":{\"author\":\"libmcp\",\"version\":\"1.0\"}},"
    "\"resources\":[{\"uri\":\"" URI "\",\"digest\":\"" SKILL_MD_SHA
    "\",\"size\":244},{\"uri\":\"" REF_URI "\",\"digest\":\"" REF_MD_SHA
    "\",\"size\":18}]}";

static mcp_server *srv;

static int h_text(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "taken");
}

static void setup(void) {
  static const mcp_server_info info = {.name = "skills", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
}

static void teardown(void) { mcp_server_free(srv); }

/* A request's reply on a fresh legacy session at version (modern when
 * version is NULL). */
static cJSON *ask_as(const mcp_principal *who, const char *version,
                     const char *method, const char *params) {
  tu_peer p;
  tu_peer_open(&p, srv, who);
  cJSON *r;
  if (version) {
    tu_legacy_init(&p, version, "{}");
    r = tu_ask(&p, tu_req(1, method, params));
  } else {
    char *extra =
        params ? tu_text("%.*s", (int)strlen(params) - 2, params + 1) : NULL;
    r = tu_ask(&p, tu_mreq(1, method, TU_META_NONE, extra));
    free(extra);
  }
  tu_peer_close(&p);
  return r;
}

static cJSON *ask(const char *version, const char *method, const char *params) {
  return ask_as(NULL, version, method, params);
}

START_TEST(listed_got_and_read) {
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), 0);
  for (int modern = 0; modern < 2; modern++) {
    const char *v = modern ? NULL : "2025-11-25";
    cJSON *r = ask(v, "skills/list", NULL);
    const cJSON *skills = tu_get(tu_result_of(r), "skills");
    ck_assert_int_eq(cJSON_GetArraySize(skills), 1);
    tu_assert_exact(cJSON_GetArrayItem(skills, 0), ENTRY);
    if (modern)
      tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\","
                        "\"cacheScope\":\"public\",\"nextCursor\":"
                        "\"<absent>\"}}");
    cJSON_Delete(r);
    r = ask(v, "skills/get", "{\"uri\":\"" URI "\"}");
    tu_assert_exact(tu_get(tu_result_of(r), "skill"), ENTRY);
    if (modern)
      ck_assert_ptr_nonnull(tu_get(tu_result_of(r), "ttlMs"));
    cJSON_Delete(r);
    /* The files are resources: SKILL.md's bytes exactly, as markdown. */
    r = ask(v, "resources/read", "{\"uri\":\"" URI "\"}");
    tu_assert_exact(tu_jget(r, "result.contents.0"),
                    "{\"uri\":\"" URI "\",\"mimeType\":\"text/markdown\","
                    "\"text\":\"" /* the JSON form of SKILL_MD */
                    "---\\nname: notes-workflow\\ndescription: \\\"How to use "
                    "the notes tools: list, then ask before deleting.\\\"\\n"
                    "license: Apache-2.0\\nallowed-tools: list_notes "
                    "get_note\\nmetadata:\\n  author: libmcp\\n  version: "
                    "'1.0'\\n---\\n# Notes workflow\\n\\nCall list_notes "
                    "first.\\n\"}");
    cJSON_Delete(r);
    r = ask(v, "resources/list", NULL);
    const cJSON *list = tu_get(tu_result_of(r), "resources");
    ck_assert_int_eq(cJSON_GetArraySize(list), 2);
    tu_assert_exact(cJSON_GetArrayItem(list, 1),
                    "{\"uri\":\"" URI "\",\"name\":\"notes-workflow\","
                    "\"description\":\"How to use the notes tools: list, then "
                    "ask before deleting.\",\"mimeType\":\"text/markdown\"}");
    tu_assert_exact(cJSON_GetArrayItem(list, 0),
                    "{\"uri\":\"" REF_URI "\",\"name\":\"references/ids.md\","
                    "\"mimeType\":\"text/markdown\"}");
    cJSON_Delete(r);
  }
  /* What is not a skill's SKILL.md is not a skill. */
  static const char *const not_skills[] = {REF_URI, "skill://other/SKILL.md",
                                           "skill://notes-workflow"};
  for (size_t i = 0; i < TU_COUNT(not_skills); i++) {
    char *params = tu_text("{\"uri\":\"%s\"}", not_skills[i]);
    cJSON *r = ask("2025-11-25", "skills/get", params);
    tu_assert_error(r, -32602, "unknown skill");
    cJSON_Delete(r);
    free(params);
  }
  cJSON *r = ask("2025-11-25", "skills/get", "{}");
  tu_assert_error(r, -32602, "uri is required");
  cJSON_Delete(r);
}
END_TEST

/* The extension is declared from 2025-11-25 and in server/discover, only
 * while a skill is registered, beside the resources it needs. */
START_TEST(capability_declared) {
  static const char ext[] = "{\"io.modelcontextprotocol/skills\":{}}";
  cJSON *r = ask(NULL, "server/discover", NULL);
  ck_assert_ptr_null(tu_jget(r, "result.capabilities.extensions"));
  cJSON_Delete(r);
  r = ask("2025-11-25", "skills/list", NULL);
  tu_assert_error(r, -32601, "skills/list");
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), 0);
  r = ask(NULL, "server/discover", NULL);
  tu_assert_exact(tu_jget(r, "result.capabilities.extensions"), ext);
  ck_assert_ptr_nonnull(tu_jget(r, "result.capabilities.resources"));
  cJSON_Delete(r);
  static const struct {
    const char *version;
    bool declared;
  } versions[] = {
      {"2025-03-26", false}, {"2025-06-18", false}, {"2025-11-25", true}};
  for (size_t i = 0; i < TU_COUNT(versions); i++) {
    tu_peer p;
    tu_peer_open(&p, srv, NULL);
    char *init = tu_text("{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                         "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
                         versions[i].version);
    r = tu_ask(&p, tu_req(1, "initialize", init));
    free(init);
    const cJSON *e = tu_jget(r, "result.capabilities.extensions");
    if (versions[i].declared)
      tu_assert_exact(e, ext);
    else
      ck_assert_ptr_null(e);
    cJSON_Delete(r);
    tu_peer_close(&p);
  }
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), 0);
  r = ask(NULL, "server/discover", NULL);
  ck_assert_ptr_null(tu_jget(r, "result.capabilities.extensions"));
  cJSON_Delete(r);
}
END_TEST

/* A skill's scopes guard its files and its entry like any resource's. */
START_TEST(scopes_guard_files_and_entry) {
  static const char *const need[] = {"notes:read", NULL};
  mcp_skill guarded = skill;
  guarded.scopes = need;
  ck_assert_int_eq(mcp_server_add_skill(srv, &guarded), 0);
  static const mcp_principal eve = {.subject = "eve"};
  static const mcp_principal ann = {.subject = "ann", .scopes = need};
  cJSON *r =
      ask_as(&eve, "2025-11-25", "resources/read", "{\"uri\":\"" REF_URI "\"}");
  tu_assert_error(r, -31403, "notes:read");
  cJSON_Delete(r);
  r = ask_as(&eve, NULL, "skills/get", "{\"uri\":\"" URI "\"}");
  tu_assert_error(r, -31403, "notes:read");
  cJSON_Delete(r);
  r = ask_as(&ann, NULL, "skills/get", "{\"uri\":\"" URI "\"}");
  tu_assert_exact(tu_get(tu_result_of(r), "skill"), ENTRY);
  cJSON_Delete(r);
  /* With hide-forbidden on, the skill is unknown to eve, as a hidden
   * resource is. */
  mcp_server_set_hide_forbidden(srv, true);
  r = ask_as(&eve, NULL, "skills/get", "{\"uri\":\"" URI "\"}");
  tu_assert_error(r, -32602, "unknown skill");
  cJSON_Delete(r);
}
END_TEST

/* Does the reply's text hold needle? */
static bool holds(const cJSON *r, const char *needle) {
  char *text = cJSON_PrintUnformatted(r);
  bool in = text && strstr(text, needle);
  cJSON_free(text);
  return in;
}

/* What skills/get refuses a caller, no list shows it: skills/list holds only
 * the skills the caller may read, and resources/list only their files, in
 * both eras, whether hide-forbidden is on or off (the entry's digests and
 * sizes would give a short secret away; SKILL.md's listing carries the
 * frontmatter's description). A page is then the caller's own. */
START_TEST(lists_show_only_readable_skills) {
  static const char *const need[] = {"notes:read", NULL};
  mcp_skill guarded = skill;
  guarded.scopes = need;
  ck_assert_int_eq(mcp_server_add_skill(srv, &guarded), 0);
  static const char open_md[] = "---\nname: open\ndescription: o\n---\n";
  const mcp_skill_file open_files[] = {
      {.path = "SKILL.md", .data = open_md, .size = sizeof open_md - 1},
      {.path = NULL}};
  const mcp_skill open = {.path = "open", .files = open_files};
  ck_assert_int_eq(mcp_server_add_skill(srv, &open), 0);
  static const mcp_principal eve = {.subject = "eve"};
  static const mcp_principal ann = {.subject = "ann", .scopes = need};
  mcp_server_set_page_size(srv, 1); /* a hidden entry ends no page */
  for (int hide = 0; hide < 2; hide++) {
    mcp_server_set_hide_forbidden(srv, hide);
    for (int modern = 0; modern < 2; modern++) {
      const char *v = modern ? NULL : "2025-11-25";
      cJSON *r = ask_as(&eve, v, "skills/list", NULL);
      const cJSON *list = tu_jget(r, "result.skills");
      ck_assert_msg(cJSON_GetArraySize(list) == 1, "hide %d modern %d: %d",
                    hide, modern, cJSON_GetArraySize(list));
      tu_assert_json(cJSON_GetArrayItem(list, 0),
                     "{\"uri\":\"skill://open/SKILL.md\"}");
      ck_assert_ptr_null(tu_jget(r, "result.nextCursor"));
      if (modern)
        tu_assert_json(r, "{\"result\":{\"cacheScope\":\"private\"}}");
      ck_assert(!holds(r, "notes-workflow") && !holds(r, SKILL_MD_SHA));
      cJSON_Delete(r);
      r = ask_as(&eve, v, "resources/list", NULL);
      list = tu_jget(r, "result.resources");
      ck_assert_int_eq(cJSON_GetArraySize(list), 1);
      tu_assert_json(cJSON_GetArrayItem(list, 0),
                     "{\"uri\":\"skill://open/SKILL.md\"}");
      ck_assert_ptr_null(tu_jget(r, "result.nextCursor"));
      ck_assert(!holds(r, "How to use") && !holds(r, "notes-workflow"));
      cJSON_Delete(r);
      /* ann may read both: she sees both, a page at a time. */
      r = ask_as(&ann, v, "skills/list", NULL);
      tu_assert_exact(tu_jget(r, "result.skills.0"), ENTRY);
      char *next =
          tu_text("{\"cursor\":\"%s\"}", tu_jstr(r, "result.nextCursor"));
      cJSON_Delete(r);
      r = ask_as(&ann, v, "skills/list", next);
      tu_assert_json(tu_jget(r, "result.skills.0"),
                     "{\"uri\":\"skill://open/SKILL.md\"}");
      cJSON_Delete(r);
      free(next);
    }
  }
  /* With no scoped skill left, the list is the same for everyone. */
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), 0);
  mcp_server_set_hide_forbidden(srv, false);
  cJSON *r = ask_as(&eve, NULL, "skills/list", NULL);
  tu_assert_json(r, "{\"result\":{\"cacheScope\":\"public\"}}");
  cJSON_Delete(r);
}
END_TEST

/* Adds the skill name to srv (with need's scopes, or none). */
static void add_named(mcp_server *to, const char *name,
                      const char *const *need) {
  char *md = tu_text("---\nname: %s\ndescription: d\n---\n", name);
  const mcp_skill_file f[] = {
      {.path = "SKILL.md", .data = md, .size = strlen(md)}, {.path = NULL}};
  const mcp_skill sk = {.path = name, .files = f, .scopes = need};
  ck_assert_int_eq(mcp_server_add_skill(to, &sk), 0);
  free(md);
}

/* The page after cursor (NULL: the first) that who gets from to, whose
 * one skill's uri goes to uri; its nextCursor, copied, or NULL. */
static char *page_of(mcp_server *to, const mcp_principal *who,
                     const char *version, const char *cursor, char *uri,
                     size_t n) {
  mcp_server *was = srv;
  srv = to;
  char *params = cursor ? tu_text("{\"cursor\":\"%s\"}", cursor) : NULL;
  cJSON *r = ask_as(who, version, "skills/list", params);
  free(params);
  srv = was;
  const char *got = tu_jstr(r, "result.skills.0.uri");
  ck_assert_msg(got != NULL, "%s", tu_jstr(r, "error.message"));
  snprintf(uri, n, "%s", got);
  const char *next = tu_jstr(r, "result.nextCursor");
  char *copy = next ? tu_text("%s", next) : NULL;
  cJSON_Delete(r);
  return copy;
}

/* A caller learns nothing of the skills it may not read from the pages'
 * cursors either: where three such skills follow the first it may read,
 * the cursor after that one is the very one of a server without them;
 * no cursor shows the sequence number it stands for, whose gaps would
 * count them; and a cursor made up from a count (the form of a sequence
 * number) is refused, so it cannot probe how many entries there are. */
START_TEST(cursors_show_no_hidden_entry) {
  static const char *const need[] = {"secret:read", NULL};
  static const mcp_server_info info = {.name = "skills", .version = "1"};
  mcp_server *plain;
  ck_assert_int_eq(mcp_server_new(&info, &plain), 0);
  static const char key[] = "a key the two servers share.....";
  mcp_server *both[] = {srv, plain};
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(mcp_server_set_state_key(both[i], key, 32), 0);
    mcp_server_set_page_size(both[i], 1);
    add_named(both[i], "alpha", NULL);
    for (int k = 0; i == 0 && k < 3; k++) {
      char name[8];
      snprintf(name, sizeof name, "hid%d", k);
      add_named(both[i], name, need);
    }
    add_named(both[i], "beta", NULL);
    add_named(both[i], "gamma", NULL);
  }
  static const mcp_principal eve = {.subject = "eve"};
  for (int modern = 0; modern < 2; modern++) {
    const char *v = modern ? NULL : "2025-11-25";
    char uri[2][64];
    char *c1[2], *c2[2];
    for (int i = 0; i < 2; i++) {
      c1[i] = page_of(both[i], &eve, v, NULL, uri[i], sizeof uri[i]);
      ck_assert_str_eq(uri[i], "skill://alpha/SKILL.md");
      c2[i] = page_of(both[i], &eve, v, c1[i], uri[i], sizeof uri[i]);
      ck_assert_str_eq(uri[i], "skill://beta/SKILL.md");
    }
    /* The cursor after alpha names alpha, not the hidden skills passed
     * after it; the one after beta continues with gamma, the last. */
    ck_assert_ptr_nonnull(c1[0]);
    ck_assert_str_eq(c1[0], c1[1]);
    ck_assert_uint_eq(strlen(c1[0]), 17); /* s and 16 hex digits */
    for (int i = 0; i < 2; i++) {
      ck_assert_ptr_nonnull(c2[i]);
      ck_assert_ptr_null(page_of(both[i], &eve, v, c2[i], uri[i], 64));
      ck_assert_str_eq(uri[i], "skill://gamma/SKILL.md");
      free(c1[i]);
      free(c2[i]);
    }
  }
  for (int n = 1; n <= 6; n++) {
    char *params = tu_text("{\"cursor\":\"s%d\"}", n);
    cJSON *r = ask_as(&eve, "2025-11-25", "skills/list", params);
    tu_assert_error(r, -32602, "cursor");
    cJSON_Delete(r);
    free(params);
  }
  mcp_server_free(plain);
}
END_TEST

/* ---- registration rules -------------------------------------------------- */

/* A skill whose SKILL.md is md, and what must come of registering it. */
typedef struct md_case {
  const char *md;
  const char *want; /* NULL: accepted, with frontmatter as got */
  const char *got;  /* the entry's frontmatter when accepted */
} md_case;

#define FM(lines) "---\n" lines "---\nbody\n"
#define OK_FM "name: s\ndescription: d\n"

static const md_case md_cases[] = {
    /* Accepted, and read as a YAML parser reads them. */
    {FM(OK_FM), NULL, "{\"name\":\"s\",\"description\":\"d\"}"},
    {"---\r\nname: s\r\ndescription: d\r\n---\r\n", NULL,
     "{\"name\":\"s\",\"description\":\"d\"}"},
    {FM("# a comment\nname: s # the name\n\ndescription: 'it''s \"x\"'\n"),
     NULL, "{\"name\":\"s\",\"description\":\"it's \\\"x\\\"\"}"},
    {FM(OK_FM "license: \"a\\\\b \\\"q\\\" \\u00e9\\t\"\n"), NULL,
     "{\"name\":\"s\",\"description\":\"d\",\"license\":\"a\\\\b \\\"q\\\" "
     "\xc3\xa9\\t\"}"},
    {FM(OK_FM "compatibility: needs git\nmetadata:\n    a: b\n    c: \"\"\n"),
     NULL,
     "{\"name\":\"s\",\"description\":\"d\",\"compatibility\":\"needs git\","
     "\"metadata\":{\"a\":\"b\",\"c\":\"\"}}"},
    {FM(OK_FM "x-own.field: a:b c\n"), NULL,
     "{\"name\":\"s\",\"description\":\"d\",\"x-own.field\":\"a:b c\"}"},
    /* Strings to every YAML reader, though they hold digits. */
    {FM(OK_FM "a: a1\nb: 1.0.0\nc: e2e\nd: v2\ne: x \t# c\nf: 1-2\n"), NULL,
     "{\"name\":\"s\",\"description\":\"d\",\"a\":\"a1\",\"b\":"
     "\"1.0.0\",\"c\":\"e2e\",\"d\":\"v2\",\"e\":\"x\",\"f\":\"1-2\"}"},
    /* Refused: what this subset does not read. */
    {"name: s\n", "must begin with YAML frontmatter", NULL},
    {FM(OK_FM) "\xd6 not UTF-8\n", "SKILL.md is not UTF-8 text", NULL},
    {"", "line 1: SKILL.md must begin with YAML frontmatter", NULL},
    {"---\nname: s\ndescription: d\n", "no closing line", NULL},
    {FM(OK_FM "tags:\n  - a\n"), "no lists", NULL},
    {FM(OK_FM "license: |\n  x\n"), "no lists, block scalars", NULL},
    {FM(OK_FM "license: [a]\n"), "flow collections", NULL},
    {FM(OK_FM "license: &a x\n"), "anchors", NULL},
    {FM(OK_FM "license: true\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: 1.0\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: no\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: ~\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: 2026-12-02\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: 12:30\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: 0x1F\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: 1_000\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: -.5e-3\n"), "quote it to make it a string", NULL},
    {FM(OK_FM "license: a: b\n"), "holds \": \"; quote it", NULL},
    {FM(OK_FM "license: a:\tb\n"), "holds \": \"; quote it", NULL},
    {FM(OK_FM "license: a:\n"), "holds \": \"; quote it", NULL},
    {FM(OK_FM "license: \"open\n"), "does not end on its line", NULL},
    {FM(OK_FM "license: 'open\n"), "does not end on its line", NULL},
    {FM(OK_FM "license: \"a\\qb\"\n"), "an escape libmcp does not read", NULL},
    {FM(OK_FM "license: \"a\\u00zz\"\n"), "four hex digits", NULL},
    {FM(OK_FM "license: \"\\ud800\"\n"), "surrogate", NULL},
    {FM(OK_FM "license: \"x\" y\n"), "something follows a quoted value", NULL},
    {FM(OK_FM "license:\n"), "a key has no value", NULL},
    {FM(OK_FM "metadata:\n  a:\n    b: c\n"), "one level deep", NULL},
    {FM(OK_FM "metadata:\n  a: b\n   c: d\n"), "indented alike", NULL},
    {FM(OK_FM "metadata:\n\ta: b\n"), "indented alike, with spaces", NULL},
    {FM(OK_FM "name: t\n"), "line 4: a key is given twice", NULL},
    {FM(OK_FM "\"quoted\": key\n"), "each line must be `key: value`", NULL},
    {FM(OK_FM "license:x\n"), "each line must be", NULL},
    {FM(OK_FM "license: \"\xff\"\n"), "not UTF-8", NULL},
    /* Refused: the Agent Skills rules. */
    {FM("description: d\n"), "needs a name", NULL},
    {FM("name: s\n"), "needs a description of 1-1024", NULL},
    {FM("name: s\ndescription: ''\n"), "needs a description of 1-1024", NULL},
    {FM("name: Bad\ndescription: d\n"), "1-64 characters of [a-z0-9-]", NULL},
    {FM("name: a--b\ndescription: d\n"), "1-64 characters", NULL},
    {FM("name: a-\ndescription: d\n"), "1-64 characters", NULL},
    {FM("name: other\ndescription: d\n"), "is not the path's last segment",
     NULL},
    {FM(OK_FM "metadata: x\n"), "metadata must be a map of strings", NULL},
    {FM("name: s\ndescription: d\nlicense:\n  a: b\n"),
     "license must be a string", NULL},
};

START_TEST(frontmatter_rules) {
  for (size_t i = 0; i < TU_COUNT(md_cases); i++) {
    const md_case *c = &md_cases[i];
    mcp_skill_file f[] = {
        {.path = "SKILL.md", .data = c->md, .size = strlen(c->md)},
        {.path = NULL}};
    mcp_skill s = {.path = "team/s", .files = f};
    int rc = mcp_server_add_skill(srv, &s);
    const char *msg = mcp_server_errmsg(srv);
    if (c->want == NULL) {
      ck_assert_msg(rc == 0, "case %zu refused: %s", i, msg);
      cJSON *r = ask("2025-11-25", "skills/get",
                     "{\"uri\":\"skill://team/s/SKILL.md\"}");
      tu_assert_exact(tu_jget(r, "result.skill.frontmatter"), c->got);
      cJSON_Delete(r);
      ck_assert_int_eq(mcp_server_remove_skill(srv, "team/s"), 0);
      continue;
    }
    ck_assert_msg(rc == MCP_EINVAL, "case %zu: rc %d", i, rc);
    ck_assert_msg(strncmp(msg, "skill \"team/s\": ", 16) == 0 &&
                      strstr(msg, c->want),
                  "case %zu: \"%s\" lacks \"%s\"", i, msg, c->want);
  }
  /* Nothing refused was kept. */
  cJSON *r = ask("2025-11-25", "resources/list", NULL);
  tu_assert_error(r, -32601, "resources/list");
  cJSON_Delete(r);
}
END_TEST

/* Registers a skill whose frontmatter adds line (a whole line, without its
 * "\n") to OK_FM; returns the result, the message in *msg. */
static int add_line(const char *line, const char **msg) {
  char *md = tu_text("---\n" OK_FM "%s\n---\nbody\n", line);
  mcp_skill_file f[] = {{.path = "SKILL.md", .data = md, .size = strlen(md)},
                        {.path = NULL}};
  mcp_skill s = {.path = "team/s", .files = f};
  int rc = mcp_server_add_skill(srv, &s);
  *msg = mcp_server_errmsg(srv);
  free(md);
  return rc;
}

/* One YAML reading: every plain value below is read by some common YAML
 * 1.1 or 1.2 parser (PyYAML, ruamel, SnakeYAML, js-yaml, go-yaml, Psych,
 * serde_yaml) as something other than the same string, so it is refused
 * with a message that says to quote it, and quoted it is that very
 * string; the same holds for keys; the plain values after them are
 * strings to all, and are kept. */
START_TEST(frontmatter_one_yaml_reading) {
  static const char *const not_strings[] = {
      /* booleans and null, YAML 1.1 and 1.2, in any case (Psych) */
      "true", "False", "TRUE", "TrUe", "yes", "No", "ON", "oFF", "y", "Y", "n",
      "N", "null", "NULL", "NuLL", "~", "<<", "=",
      /* infinities, NaN, signs, leading dots */
      "-.Inf", "+.INF", ".inf", ".NaN", ".nan", "-.inf", "+1", "-1", "-0",
      "+.5", ".5", "-foo", "+x", "-Infinity",
      /* integers in every base, with '_' or ',' anywhere */
      "1_", "0x_1", "0o7", "0O7", "0b1", "0B1_0", "1_000", "1,000", "1__2",
      "0777", "09", "0x1F", "0xfF_ff", "0_x1", "1,2",
      /* a base's prefix and separators without a digit: an integer to
       * YAML 1.1's pattern, which PyYAML and Psych then fail to read */
      "0x_", "0b_", "0o_", "0x,", "0B__", "0X_,_",
      "1234567890123456789012345678901234567890123456789012345678901234567890",
      "1_2_3_4_5_6_7_8_9_0_1_2_3_4_5_6_7_8_9_0_1_2_3_4_5_6_7_8_9_0_1_2_3_4_5_6",
      /* floats, Go's hex floats, sexagesimals */
      "1e3", "1E+3", "1.", "1.5", "1.5e-3", "0x1p3", "0x1.8P-2", "1_000.5",
      "1,000.5", "1:30", "190:20:30.15", "1:30.5", "12:30:00",
      /* dates and times */
      "2026-12-02", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
      "2026-1-2",
      /* symbols (Psych), complex keys */
      ":sym", "?x"};
  char want[128];
  for (size_t i = 0; i < TU_COUNT(not_strings); i++) {
    const char *msg;
    char *line = tu_text("license: %s", not_strings[i]);
    ck_assert_int_eq(add_line(line, &msg), MCP_EINVAL);
    ck_assert_msg(strstr(msg, "line 4: a plain value some YAML parser reads "
                              "as") &&
                      strstr(msg, "quote it to make it a string"),
                  "%s: %s", not_strings[i], msg);
    free(line);
    line = tu_text("license: '%s'", not_strings[i]);
    ck_assert_msg(add_line(line, &msg) == 0, "'%s': %s", not_strings[i], msg);
    cJSON *r = ask("2025-11-25", "skills/get",
                   "{\"uri\":\"skill://team/s/SKILL.md\"}");
    ck_assert_str_eq(tu_jstr(r, "result.skill.frontmatter.license"),
                     not_strings[i]);
    cJSON_Delete(r);
    ck_assert_int_eq(mcp_server_remove_skill(srv, "team/s"), 0);
    free(line);
    /* A key is a plain scalar too. */
    snprintf(want, sizeof want, "%s: x", not_strings[i]);
    if (strspn(not_strings[i],
               "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
               "TUVWXYZ0123456789_.-") == strlen(not_strings[i])) {
      ck_assert_int_eq(add_line(want, &msg), MCP_EINVAL);
      ck_assert_msg(strstr(msg, "line 4: a key some YAML parser reads as"),
                    "key %s: %s", not_strings[i], msg);
    }
  }
  /* Indicators: anchors, aliases, tags, flow and block collections. */
  static const char *const indicators[] = {
      "&a x", "*a", "!tag x", "!!str x", "|",   ">",   "[a]", "{a: b}",
      "@x",   "`x", "%x",     ",x",      "- x", "? x", ": x"};
  for (size_t i = 0; i < TU_COUNT(indicators); i++) {
    const char *msg;
    char *line = tu_text("license: %s", indicators[i]);
    ck_assert_int_eq(add_line(line, &msg), MCP_EINVAL);
    ck_assert_msg(strstr(msg, "line 4: only string values") &&
                      strstr(msg, "quote a value meant as text"),
                  "%s: %s", indicators[i], msg);
    free(line);
  }
  /* Strings to every parser, kept as written. */
  static const char *const strings[] = {
      "1.0.0", "e2e",     "v2",    "a1",       "1-2",  "3D printing",
      "2fa",   "10:30am", "x-1",   "0x",       "it's", "a&b *c !d",
      "50%",   "a,b",     "1 000", "\xc2\xa0x"};
  for (size_t i = 0; i < TU_COUNT(strings); i++) {
    const char *msg;
    char *line = tu_text("license: %s", strings[i]);
    ck_assert_msg(add_line(line, &msg) == 0, "%s: %s", strings[i], msg);
    cJSON *r = ask("2025-11-25", "skills/get",
                   "{\"uri\":\"skill://team/s/SKILL.md\"}");
    ck_assert_str_eq(tu_jstr(r, "result.skill.frontmatter.license"),
                     strings[i]);
    cJSON_Delete(r);
    ck_assert_int_eq(mcp_server_remove_skill(srv, "team/s"), 0);
    free(line);
  }
}
END_TEST

/* Characters YAML 1.1 reads as line breaks and 1.2 does not (U+0085,
 * U+2028, U+2029), a lone CR, controls and U+FEFF are refused raw
 * anywhere in the frontmatter, a comment and a quoted value included;
 * written as \u escapes in double quotes they are kept. */
START_TEST(frontmatter_line_breaks_and_controls) {
  static const struct {
    const char *line, *want;
  } cases[] = {
      {"license: a\xc2\x85"
       "b",
       "U+0085 (a line break to YAML 1.1"},
      {"license: a\xe2\x80\xa8"
       "b",
       "U+2028 or U+2029"},
      {"license: a\xe2\x80\xa9"
       "b",
       "U+2028 or U+2029"},
      {"license: 'a\xe2\x80\xa8"
       "b'",
       "U+2028 or U+2029"},
      {"license: \"a\xc2\x85"
       "b\"",
       "U+0085"},
      {"# note\xe2\x80\xa8"
       "license: x",
       "U+2028 or U+2029"},
      {"metadata:\n  a: b\xe2\x80\xa9"
       "c",
       "U+2028 or U+2029"},
      {"license: a\rb", "a carriage return without a line feed"},
      {"license: a\x7f"
       "b",
       "a control character"},
      {"license: a\x01"
       "b",
       "a control character"},
      {"license: a\xc2\x9f"
       "b",
       "a control character"},
      {"license: a\xef\xbb\xbf"
       "b",
       "U+FEFF"},
      {"license: a\xef\xbf\xbe"
       "b",
       "U+FEFF, U+FFFE or U+FFFF"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    const char *msg;
    ck_assert_int_eq(add_line(cases[i].line, &msg), MCP_EINVAL);
    ck_assert_msg(strstr(msg, cases[i].want) &&
                      strstr(msg, "write it as an escape"),
                  "case %zu: %s", i, msg);
  }
  const char *msg;
  ck_assert_msg(add_line("license: \"a\\u2028b\\u0085c\"", &msg) == 0, "%s",
                msg);
  cJSON *r =
      ask("2025-11-25", "skills/get", "{\"uri\":\"skill://team/s/SKILL.md\"}");
  ck_assert_str_eq(tu_jstr(r, "result.skill.frontmatter.license"),
                   "a\xe2\x80\xa8"
                   "b\xc2\x85"
                   "c");
  cJSON_Delete(r);
}
END_TEST

START_TEST(path_and_file_rules) {
  static const struct {
    const char *path, *file, *want;
  } cases[] = {
      {"", "SKILL.md", "the path must be"},
      {"a//notes-workflow", "SKILL.md", "the path must be"},
      {"../notes-workflow", "SKILL.md", "the path must be"},
      {"a b/notes-workflow", "SKILL.md", "the path must be"},
      {"notes-workflow", "../SKILL.md", "its path must be"},
      {"notes-workflow", "a/./b", "its path must be"},
      {"notes-workflow", "a b.md", "its path must be"},
      {"notes-workflow", "skill.md", "it has no SKILL.md"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    mcp_skill_file f[] = {
        {.path = "SKILL.md", .data = SKILL_MD, .size = sizeof SKILL_MD - 1},
        {.path = cases[i].file, .data = "x", .size = 1},
        {.path = NULL}};
    mcp_skill s = {.path = cases[i].path,
                   .files = strcmp(cases[i].file, "SKILL.md") == 0 ? f : f + 1};
    if (strcmp(cases[i].file, "skill.md") == 0)
      s.files = f + 1;
    ck_assert_int_eq(mcp_server_add_skill(srv, &s), MCP_EINVAL);
    ck_assert_msg(strstr(mcp_server_errmsg(srv), cases[i].want), "%zu: %s", i,
                  mcp_server_errmsg(srv));
  }
  /* Listed twice; data missing; too many; too big; bad scopes: all named
   * at once. */
  static const char *const bad_scopes[] = {"a b", NULL};
  mcp_skill_file twice[] = {
      {.path = "SKILL.md", .data = SKILL_MD, .size = sizeof SKILL_MD - 1},
      {.path = "a.md", .data = "x", .size = 1},
      {.path = "a.md", .data = "y", .size = 1},
      {.path = "b.md", .data = NULL, .size = 3},
      {.path = NULL}};
  mcp_skill s = {
      .path = "notes-workflow", .files = twice, .scopes = bad_scopes};
  ck_assert_int_eq(mcp_server_add_skill(srv, &s), MCP_EINVAL);
  const char *msg = mcp_server_errmsg(srv);
  ck_assert_msg(strstr(msg, "file \"a.md\" is listed twice") &&
                    strstr(msg, "file \"b.md\": data is NULL") &&
                    strstr(msg, "scope \"a b\" is not an RFC 6750"),
                "%s", msg);
  mcp_skill_file *many = calloc(514, sizeof *many);
  char(*names)[16] = calloc(514, sizeof *names);
  many[0] = twice[0];
  for (int i = 1; i < 513; i++) {
    snprintf(names[i], sizeof names[i], "f%d.txt", i);
    many[i] = (mcp_skill_file){.path = names[i], .data = "x", .size = 1};
  }
  s = (mcp_skill){.path = "notes-workflow", .files = many};
  ck_assert_int_eq(mcp_server_add_skill(srv, &s), MCP_EINVAL);
  ck_assert_msg(strstr(mcp_server_errmsg(srv), "more than 512 files"), "%s",
                mcp_server_errmsg(srv));
  many[2] = (mcp_skill_file){0};
  size_t big = (size_t)16 << 20;
  char *data = malloc(big);
  memset(data, 'x', big);
  many[1] = (mcp_skill_file){.path = "big.txt", .data = data, .size = big};
  ck_assert_int_eq(mcp_server_add_skill(srv, &s), MCP_EINVAL);
  ck_assert_msg(strstr(mcp_server_errmsg(srv), "more than 16 MiB"), "%s",
                mcp_server_errmsg(srv));
  free(data);
  free(many);
  free(names);
  ck_assert_int_eq(mcp_server_add_skill(srv, NULL), MCP_EINVAL);
  ck_assert_str_eq(mcp_server_errmsg(srv), "the skill definition is NULL");
  ck_assert_int_eq(mcp_server_add_skill(NULL, &skill), MCP_EINVAL);
}
END_TEST

/* All or nothing: a skill whose file's uri a resource has is refused and
 * leaves nothing behind; a second skill at the same path is refused. */
START_TEST(registered_all_or_nothing) {
  static const mcp_resource taken = {
      .uri = REF_URI, .name = "taken", .handler = h_text};
  ck_assert_int_eq(mcp_server_add_resource(srv, &taken, NULL), 0);
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), MCP_EEXIST);
  ck_assert_str_eq(mcp_server_errmsg(srv),
                   "skill \"notes-workflow\": a resource is already "
                   "registered under \"" REF_URI "\"");
  cJSON *r = ask("2025-11-25", "resources/list", NULL);
  ck_assert_int_eq(cJSON_GetArraySize(tu_jget(r, "result.resources")), 1);
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), MCP_ENOENT);
  ck_assert_int_eq(mcp_server_remove_resource(srv, REF_URI), 0);
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), 0);
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), MCP_EEXIST);
  ck_assert_str_eq(mcp_server_errmsg(srv),
                   "skill \"notes-workflow\": a skill at that path is already "
                   "registered");
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), 0);
  r = ask("2025-11-25", "resources/list", NULL);
  tu_assert_error(r, -32601, "resources/list");
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), MCP_ENOENT);
  ck_assert_str_eq(mcp_server_errmsg(srv),
                   "skill \"notes-workflow\": no skill at that path");
  ck_assert_int_eq(mcp_server_remove_skill(srv, NULL), MCP_EINVAL);
}
END_TEST

/* A file that is not UTF-8 is read as a blob; an empty one as "". */
START_TEST(binary_and_empty_files) {
  static const unsigned char png[] = {0x89, 'P', 'N', 'G'};
  mcp_skill_file f[] = {
      {.path = "SKILL.md", .data = SKILL_MD, .size = sizeof SKILL_MD - 1},
      {.path = "assets/logo.png",
       .data = png,
       .size = 4,
       .mime_type = "image/png"},
      {.path = "empty.txt", .data = NULL, .size = 0},
      {.path = NULL}};
  mcp_skill s = {.path = "notes-workflow", .files = f};
  ck_assert_int_eq(mcp_server_add_skill(srv, &s), 0);
  cJSON *r = ask("2025-11-25", "resources/read",
                 "{\"uri\":\"skill://notes-workflow/assets/logo.png\"}");
  tu_assert_exact(tu_jget(r, "result.contents.0"),
                  "{\"uri\":\"skill://notes-workflow/assets/logo.png\","
                  "\"mimeType\":\"image/png\",\"blob\":\"iVBORw==\"}");
  cJSON_Delete(r);
  r = ask("2025-11-25", "skills/get", "{\"uri\":\"" URI "\"}");
  tu_assert_exact(
      tu_jget(r, "result.skill.resources.2"),
      "{\"uri\":\"skill://notes-workflow/empty.txt\",\"digest\":\"sha256:"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\","
      "\"size\":0}");
  cJSON_Delete(r);
}
END_TEST

/* Writes n bytes of text to dir/name. */
static void put_file(const char *dir, const char *name, const char *text) {
  char *path = tu_text("%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fputs(text, f) >= 0, 1);
  ck_assert_int_eq(fclose(f), 0);
  free(path);
}

/* Removes what the directory tests made (two levels at most). */
static void remove_tree(const char *dir) {
  static const char *const names[] = {
      "references/ids.md", "references", ".hidden",    "SKILL.md", "link",
      "sub/SKILL.md",      "sub",        "secret.txt", "pipe",     "big.txt"};
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    char *path = tu_text("%s/%s", dir, names[i]);
    remove(path);
    free(path);
  }
  rmdir(dir);
}

/* A skill read from a directory is the same skill: the same entry, the
 * same bytes; links and unreadable trees are refused, naming the file. */
START_TEST(read_from_a_directory) {
  char tmpl[] = "/tmp/libmcp-skill-XXXXXX";
  char *root = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(root);
  char *dir = tu_text("%s/notes-workflow", root);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  char *refs = tu_text("%s/references", dir);
  ck_assert_int_eq(mkdir(refs, 0700), 0);
  put_file(dir, "SKILL.md", SKILL_MD);
  put_file(dir, "references/ids.md", REF_MD);
  put_file(dir, ".hidden", "not served");
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, dir, NULL, NULL), 0);
  cJSON *r = ask("2025-11-25", "skills/get", "{\"uri\":\"" URI "\"}");
  tu_assert_exact(tu_get(tu_result_of(r), "skill"), ENTRY);
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_remove_skill(srv, "notes-workflow"), 0);
  /* Under a path of the server's choosing. */
  ck_assert_int_eq(
      mcp_server_add_skill_dir(srv, dir, "team/notes-workflow", NULL), 0);
  r = ask("2025-11-25", "resources/read",
          "{\"uri\":\"skill://team/notes-workflow/references/ids.md\"}");
  tu_assert_exact(tu_jget(r, "result.contents.0.text"), "\""
                                                        "Ids look like "
                                                        "n1.\\n\"");
  cJSON_Delete(r);
  /* A symbolic link is never followed: the skill is refused. */
  char *link = tu_text("%s/link", dir);
  ck_assert_int_eq(symlink("/etc/passwd", link), 0);
  ck_assert_int_eq(
      mcp_server_add_skill_dir(srv, dir, "other/notes-workflow", NULL),
      MCP_EINVAL);
  ck_assert_msg(strstr(mcp_server_errmsg(srv), "\"link\": not a regular file"),
                "%s", mcp_server_errmsg(srv));
  remove(link);
  free(link);
  /* A directory without SKILL.md; one that does not exist. */
  char *sub = tu_text("%s/sub", root);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, sub, NULL, NULL), MCP_EINVAL);
  ck_assert_msg(strstr(mcp_server_errmsg(srv), "it has no SKILL.md"), "%s",
                mcp_server_errmsg(srv));
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, "/nonexistent/x", NULL, NULL),
                   MCP_EIO);
  ck_assert_msg(strstr(mcp_server_errmsg(srv), "skill directory "
                                               "\"/nonexistent/x\""),
                "%s", mcp_server_errmsg(srv));
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, NULL, NULL, NULL), MCP_EINVAL);
  rmdir(sub);
  free(sub);
  remove_tree(dir);
  rmdir(root);
  free(refs);
  free(dir);
}
END_TEST

/* The allocator of a child that swaps a file of the skill between its
 * check and its open: when the walk allocates SWAP_SIZE bytes (for the one
 * file that big, whose bytes it reads next), swap_from is renamed over
 * swap_to. */
#define SWAP_SIZE 3001
static const char *swap_from, *swap_to;

static void *swap_malloc(size_t n, void *user_data) {
  (void)user_data;
  if (n == SWAP_SIZE && swap_from) {
    if (rename(swap_from, swap_to) != 0)
      _exit(3);
    swap_from = NULL;
  }
  return malloc(n);
}

static void *swap_realloc(void *p, size_t n, void *user_data) {
  (void)user_data;
  return realloc(p, n);
}

static void swap_free(void *p, void *user_data) {
  (void)user_data;
  free(p);
}

/* Registers dir in a child process (its allocator set before its first
 * libmcp call, and a call that blocks ends it, failing the test rather
 * than the suite), swapping from over to when from is not NULL; the
 * registration must fail with rc and a message holding want. */
static void refused_in_child(const char *dir, const char *from, const char *to,
                             int rc, const char *want) {
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    alarm(30); /* a blocked open: the child dies, the test fails */
    swap_from = from;
    swap_to = to;
    const mcp_allocator a = {.malloc_fn = swap_malloc,
                             .realloc_fn = swap_realloc,
                             .free_fn = swap_free};
    static const mcp_server_info info = {.name = "skills", .version = "1"};
    mcp_server *s;
    if (mcp_set_allocator(&a) != 0 || mcp_server_new(&info, &s) != 0)
      _exit(2);
    int got = mcp_server_add_skill_dir(s, dir, NULL, NULL);
    bool ok = got == rc && strstr(mcp_server_errmsg(s), want) && !swap_from;
    if (!ok)
      fprintf(stderr, "rc %d, swapped %d: %s\n", got, swap_from == NULL,
              mcp_server_errmsg(s));
    mcp_server_free(s);
    _exit(ok ? 0 : 1);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "\"%s\": the child %s %d", want,
                WIFSIGNALED(status) ? "was killed (blocked?) by signal"
                                    : "exited with",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* A skill directory publishes only what it holds: a hard link to a private
 * file elsewhere is refused; a FIFO is refused without blocking, whether
 * it is there from the start or swapped in between the check and the
 * open; a symbolic link swapped in then is not followed. */
START_TEST(dir_publishes_only_what_it_holds) {
  char tmpl[] = "/tmp/libmcp-skill-XXXXXX";
  char *root = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(root);
  char *dir = tu_text("%s/notes-workflow", root);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  put_file(dir, "SKILL.md", SKILL_MD);
  /* A hard link to a 0600 file outside the skill. */
  put_file(root, "secret", "4242");
  char *secret = tu_text("%s/secret", root);
  ck_assert_int_eq(chmod(secret, 0600), 0);
  char *linked = tu_text("%s/secret.txt", dir);
  ck_assert_int_eq(link(secret, linked), 0);
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, dir, NULL, NULL), MCP_EINVAL);
  ck_assert_msg(strstr(mcp_server_errmsg(srv),
                       "\"secret.txt\": it has more than one hard link"),
                "%s", mcp_server_errmsg(srv));
  ck_assert_int_eq(unlink(linked), 0);
  /* A FIFO from the start: refused, and nothing waits for a writer. */
  char *pipe = tu_text("%s/pipe", dir);
  ck_assert_int_eq(mkfifo(pipe, 0600), 0);
  refused_in_child(dir, NULL, NULL, MCP_EINVAL, "\"pipe\": not a regular file");
  ck_assert_int_eq(unlink(pipe), 0);
  /* A FIFO swapped for big.txt once it was checked: the open does not
   * block, and what it opened is refused. */
  char big[SWAP_SIZE + 1];
  memset(big, 'b', SWAP_SIZE);
  big[SWAP_SIZE] = '\0';
  char *target = tu_text("%s/big.txt", dir);
  char *fifo = tu_text("%s/fifo", root);
  put_file(dir, "big.txt", big);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  refused_in_child(dir, fifo, target, MCP_EINVAL,
                   "\"big.txt\": it was replaced while it was read");
  /* A symbolic link swapped in the same way is not followed. */
  ck_assert_int_eq(unlink(target), 0);
  put_file(dir, "big.txt", big);
  char *sym = tu_text("%s/sym", root);
  ck_assert_int_eq(symlink(secret, sym), 0);
  refused_in_child(dir, sym, target, MCP_EINVAL,
                   "\"big.txt\": it became a symbolic link");
  /* The same tree, left alone, is served. */
  ck_assert_int_eq(unlink(target), 0);
  put_file(dir, "big.txt", big);
  ck_assert_int_eq(mcp_server_add_skill_dir(srv, dir, NULL, NULL), 0);
  remove_tree(dir);
  remove(secret);
  rmdir(root);
  free(sym);
  free(fifo);
  free(target);
  free(pipe);
  free(linked);
  free(secret);
  free(dir);
}
END_TEST

START_TEST(allocation_failure) {
  long n;
  int rc = -1;
  for (n = 1; n < 100000; n++) {
    tu_alloc_install(0);
    mcp_server *s;
    static const mcp_server_info info = {.name = "skills", .version = "1"};
    ck_assert_int_eq(mcp_server_new(&info, &s), 0);
    mcp_server_set_log(s, tu_silent_log, NULL);
    tu_alloc_arm(n);
    rc = mcp_server_add_skill(s, &skill);
    long failures = tu_alloc_disarm();
    if (rc == MCP_ENOMEM) {
      ck_assert_int_eq(failures, 1);
      ck_assert_int_eq(mcp_server_remove_skill(s, "notes-workflow"),
                       MCP_ENOENT);
    } else {
      ck_assert_msg(rc == 0, "allocation %ld: rc %d (%s)", n, rc,
                    mcp_server_errmsg(s));
      ck_assert_msg(failures == 0, "allocation %ld failed unnoticed", n);
    }
    mcp_server_free(s);
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(n > 10, "only %ld allocations", n);
}
END_TEST

/* One run of mcp_server_add_skill_dir on the directory user, allocation n
 * failing: out of memory, or the skill registered. */
static bool dir_run(long n, void *user) {
  static const mcp_server_info info = {.name = "skills", .version = "1"};
  mcp_server *s;
  if (mcp_server_new(&info, &s) != 0)
    return false;
  mcp_server_set_log(s, tu_silent_log, NULL);
  int rc = mcp_server_add_skill_dir(s, user, NULL, NULL);
  ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "allocation %ld: rc %d (%s)", n,
                rc, mcp_server_errmsg(s));
  mcp_server_free(s);
  return rc == 0;
}

/* The descriptors this process has open (Linux). */
static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  while (readdir(d) != NULL)
    n++;
  closedir(d);
  return n;
}

/* Reading a directory leaves nothing behind, neither a block nor a
 * descriptor, whichever allocation fails. */
START_TEST(dir_allocation_failure) {
  char tmpl[] = "/tmp/libmcp-skill-XXXXXX";
  char *root = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(root);
  char *dir = tu_text("%s/notes-workflow", root);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  char *refs = tu_text("%s/references", dir);
  ck_assert_int_eq(mkdir(refs, 0700), 0);
  put_file(dir, "SKILL.md", SKILL_MD);
  put_file(dir, "references/ids.md", REF_MD);
  int fds = open_fds();
  long n = tu_alloc_every(100000, dir_run, NULL, dir);
  ck_assert_int_gt(n, 10);
  ck_assert_int_eq(open_fds(), fds);
  remove_tree(dir);
  ck_assert_int_eq(rmdir(root), 0);
  free(refs);
  free(dir);
}
END_TEST

static Suite *skills_suite(void) {
  Suite *s = suite_create("skills");
  TCase *t = tcase_create("skills");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, listed_got_and_read);
  tcase_add_test(t, capability_declared);
  tcase_add_test(t, scopes_guard_files_and_entry);
  tcase_add_test(t, lists_show_only_readable_skills);
  tcase_add_test(t, cursors_show_no_hidden_entry);
  tcase_add_test(t, frontmatter_rules);
  tcase_add_test(t, frontmatter_one_yaml_reading);
  tcase_add_test(t, frontmatter_line_breaks_and_controls);
  tcase_add_test(t, path_and_file_rules);
  tcase_add_test(t, registered_all_or_nothing);
  tcase_add_test(t, binary_and_empty_files);
  tcase_add_test(t, read_from_a_directory);
  tcase_add_test(t, dir_publishes_only_what_it_holds);
  suite_add_tcase(s, t);
  t = tcase_create("allocation");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, allocation_failure);
  tcase_add_test(t, dir_allocation_failure);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(skills_suite()); }
