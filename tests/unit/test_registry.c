/* Tests for lib/registry/registry.c (with lib/engine/server.c and
 * lib/schema/schema.c as tools/call reaches them): the registration rules of
 * promise 1 (docs/architecture.md), the Tool object each protocol version
 * receives, removal and list_changed, pagination cursors, allocation failure,
 * and the argument check that runs before a handler. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static int handler_calls;
static int last_nargs;

/* Counts its calls and answers with the tool's name. */
static int ok_handler(mcp_call *call, void *user_data) {
  (void)user_data;
  handler_calls++;
  last_nargs = cJSON_GetArraySize(mcp_call_arguments(call));
  return mcp_result_text(call, mcp_call_name(call));
}

/* A valid writing tool; tests break one rule at a time. */
static mcp_tool writer(const char *name) {
  return (mcp_tool){.name = name,
                    .description = "Writes a thing.",
                    .annotations = {.read_only = MCP_HINT_FALSE,
                                    .destructive = MCP_HINT_FALSE,
                                    .idempotent = MCP_HINT_TRUE,
                                    .open_world = MCP_HINT_FALSE},
                    .handler = ok_handler};
}

/* A valid read-only tool. */
static mcp_tool reader(const char *name) {
  return (mcp_tool){
      .name = name,
      .description = "Reads a thing.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = ok_handler};
}

static mcp_server *new_server(void) {
  mcp_server *srv = NULL;
  mcp_server_info info = {.name = "test", .version = "1.0"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  ck_assert_ptr_nonnull(srv);
  handler_calls = 0;
  last_nargs = -1;
  return srv;
}

/* Registration of t must fail with code, and the server's message must
 * name the tool (as `tool "who"`, unless who is NULL) and contain
 * fragment. A refused tool must not be registered. */
#define expect_refused(srv, t, code, who, fragment)                            \
  expect_refused_at(__LINE__, (srv), (t), (code), (who), (fragment))
static void expect_refused_at(int line, mcp_server *srv, const mcp_tool *t,
                              int code, const char *who, const char *fragment) {
  int rc = mcp_server_add_tool(srv, t, NULL);
  const char *msg = mcp_server_errmsg(srv);
  ck_assert_msg(rc == code, "line %d: got %d (%s), want %d", line, rc, msg,
                code);
  if (who != NULL) {
    char named[300];
    snprintf(named, sizeof named, "tool \"%s\"", who);
    ck_assert_msg(strstr(msg, named) != NULL,
                  "line %d: message does not name %s: %s", line, named, msg);
  }
  ck_assert_msg(strstr(msg, fragment) != NULL,
                "line %d: message lacks \"%s\": %s", line, fragment, msg);
  if (code == MCP_EINVAL && t != NULL && t->name != NULL && t->name[0])
    ck_assert_msg(mcp_server_remove_tool(srv, t->name) == MCP_ENOENT,
                  "line %d: a refused tool was registered", line);
}

#define expect_accepted(srv, t) expect_accepted_at(__LINE__, (srv), (t))
static void expect_accepted_at(int line, mcp_server *srv, const mcp_tool *t) {
  int rc = mcp_server_add_tool(srv, t, NULL);
  ck_assert_msg(rc == 0, "line %d: %s refused: %d (%s)", line, t->name, rc,
                mcp_server_errmsg(srv));
}

/* tools/list with params (JSON text; NULL sends none). */
static cJSON *list_tools(tu_peer *p, const char *params) {
  char msg[1024];
  if (params)
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
             "\"params\":%s}",
             params);
  else
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
  return tu_request(p, msg);
}

/* The tool named name in a tools/list reply, or NULL. */
static const cJSON *find_tool(const cJSON *reply, const char *name) {
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(reply, "result"), "tools");
  ck_assert_msg(cJSON_IsArray(tools), "no result.tools");
  for (const cJSON *t = tools->child; t; t = t->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
      return t;
  }
  return NULL;
}

/* The text of the first content block of a tools/call result. */
static const char *result_text(const cJSON *reply) {
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(reply, "result"), "content");
  const cJSON *text =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(content, 0), "text");
  ck_assert_msg(cJSON_IsString(text), "no text block in the result");
  return text->valuestring;
}

/* ---- registration rules -------------------------------------------------- */

/* The valid writing and read-only tools the rows break one rule at a time
 * (as writer() and reader() make them), in pieces a row spells out: each
 * row gives the whole struct it registers. */
#define F MCP_HINT_FALSE
#define T MCP_HINT_TRUE
#define WRITES .description = "Writes a thing.", .handler = ok_handler
#define READS .description = "Reads a thing.", .handler = ok_handler
#define WRITER_HINTS                                                           \
  .annotations = {                                                             \
      .read_only = F, .destructive = F, .idempotent = T, .open_world = F}
#define READER_HINTS .annotations = {.read_only = T, .open_world = F}
#define WRITER(n)                                                              \
  { .name = n, WRITES, WRITER_HINTS }

/* One registration and what must come of it: rc, and when refused a
 * message that starts with `tool "who": ` and holds every fragment of
 * want. A refused tool must not be registered. */
typedef struct rule_case {
  const char *what;
  mcp_tool tool;
  int rc;
  const char *who;
  const char *want[4];
} rule_case;

#define ACCEPTED(what, ...)                                                    \
  {                                                                            \
    what, __VA_ARGS__, 0, NULL, { NULL }                                       \
  }

/* Icons of every form a definition may carry (mcp_icon). */
static const mcp_icon test_icons[] = {
    {.src = "https://example.com/icon.png",
     .mime_type = "image/png",
     .sizes = (const char *const[]){"48x48", "96x96", NULL},
     .theme = "light"},
    {.src = "data:image/svg+xml;base64,PHN2Zy8+",
     .mime_type = "image/svg+xml",
     .sizes = (const char *const[]){"any", NULL},
     .theme = "dark"},
    {.src = "https://example.com/plain"},
    {.src = NULL}};
#define TEST_ICONS test_icons

/* A tool whose one icon (the initializer after want) breaks a rule, named
 * in want. */
#define BAD_ICON(what, want, ...)                                              \
  {                                                                            \
    "icon: " what,                                                             \
        {.name = "w",                                                          \
         WRITES,                                                               \
         WRITER_HINTS,                                                         \
         .icons = (const mcp_icon[]){__VA_ARGS__, {.src = NULL}}},             \
        MCP_EINVAL, "w", {                                                     \
      "icon 0: ", want                                                         \
    }                                                                          \
  }
#define BAD_SIZE(size)                                                         \
  {                                                                            \
    .src = "https://example.com/i", .sizes = (const char *const[]) {           \
      "16x16", size, NULL                                                      \
    }                                                                          \
  }

/* A tool whose meta breaks a rule, named in want. */
#define BAD_META(what, text, want)                                             \
  {                                                                            \
    "meta: " what, {.name = "w", WRITES, WRITER_HINTS, .meta = text},          \
        MCP_EINVAL, "w", {                                                     \
      want                                                                     \
    }                                                                          \
  }

#define ICON_X                                                                 \
  { .src = "https://example.com/x" }
static const mcp_icon seventeen_icons[] = {
    ICON_X, ICON_X, ICON_X, ICON_X, ICON_X, ICON_X,
    ICON_X, ICON_X, ICON_X, ICON_X, ICON_X, ICON_X,
    ICON_X, ICON_X, ICON_X, ICON_X, ICON_X, {.src = NULL}};
#undef ICON_X

/* A hint value outside the enum, in each member: 1 and 2 were
 * MCP_HINT_FALSE and MCP_HINT_TRUE before the values became letters, so a
 * binary built against the old header must not pass either. */
#define OUT_OF_RANGE(v)                                                        \
  {"read_only " #v,                                                            \
   {.name = "w",                                                               \
    WRITES,                                                                    \
    .annotations = {.read_only = (mcp_hint)(v),                                \
                    .destructive = F,                                          \
                    .idempotent = T,                                           \
                    .open_world = F}},                                         \
   MCP_EINVAL,                                                                 \
   "w",                                                                        \
   {"read_only is " #v ", which is not an mcp_hint", "MCP_HINT_"}},            \
      {"destructive " #v,                                                      \
       {.name = "w",                                                           \
        WRITES,                                                                \
        .annotations = {.read_only = F,                                        \
                        .destructive = (mcp_hint)(v),                          \
                        .idempotent = T,                                       \
                        .open_world = F}},                                     \
       MCP_EINVAL,                                                             \
       "w",                                                                    \
       {"destructive is " #v ", which is not an mcp_hint", "MCP_HINT_"}},      \
      {"idempotent " #v,                                                       \
       {.name = "w",                                                           \
        WRITES,                                                                \
        .annotations = {.read_only = F,                                        \
                        .destructive = F,                                      \
                        .idempotent = (mcp_hint)(v),                           \
                        .open_world = F}},                                     \
       MCP_EINVAL,                                                             \
       "w",                                                                    \
       {"idempotent is " #v ", which is not an mcp_hint", "MCP_HINT_"}},       \
      {"open_world " #v,                                                       \
       {.name = "w",                                                           \
        WRITES,                                                                \
        .annotations = {.read_only = F,                                        \
                        .destructive = F,                                      \
                        .idempotent = T,                                       \
                        .open_world = (mcp_hint)(v)}},                         \
       MCP_EINVAL,                                                             \
       "w",                                                                    \
       {"open_world is " #v ", which is not an mcp_hint", "MCP_HINT_"}},       \
  {                                                                            \
    "open_world " #v " on a reader",                                           \
        {.name = "r",                                                          \
         READS,                                                                \
         .annotations = {.read_only = T, .open_world = (mcp_hint)(v)}},        \
        MCP_EINVAL, "r", {                                                     \
      "open_world is"                                                          \
    }                                                                          \
  }

/* Schema texts no tool may register, for input and output alike: not
 * JSON (bad text, duplicate keys, invalid UTF-8), or not an object
 * schema. */
#define NOT_JSON(s)                                                            \
  {"input_schema not JSON: " s,                                                \
   {.name = "w", WRITES, WRITER_HINTS, .input_schema = s},                     \
   MCP_EINVAL,                                                                 \
   "w",                                                                        \
   {"input_schema is not valid JSON"}},                                        \
  {                                                                            \
    "output_schema not JSON: " s,                                              \
        {.name = "w", WRITES, WRITER_HINTS, .output_schema = s}, MCP_EINVAL,   \
        "w", {                                                                 \
      "output_schema is not valid JSON"                                        \
    }                                                                          \
  }
#define NOT_OBJECT(s)                                                          \
  {"input_schema not an object schema: " s,                                    \
   {.name = "w", WRITES, WRITER_HINTS, .input_schema = s},                     \
   MCP_EINVAL,                                                                 \
   "w",                                                                        \
   {"input_schema must be a JSON object schema with \"type\":\"object\""}},    \
  {                                                                            \
    "output_schema not an object schema: " s,                                  \
        {.name = "w", WRITES, WRITER_HINTS, .output_schema = s}, MCP_EINVAL,   \
        "w", {                                                                 \
      "output_schema must be a JSON object schema with \"type\":\"object\""    \
    }                                                                          \
  }

/* A scope list no tool may give. */
#define BAD_SCOPE(s)                                                           \
  {                                                                            \
    "scope " #s,                                                               \
        {.name = "w",                                                          \
         WRITES,                                                               \
         WRITER_HINTS,                                                         \
         .scopes = (const char *const[]){"fine", s, NULL}},                    \
        MCP_EINVAL, "w", {                                                     \
      "is not an RFC 6750 scope token"                                         \
    }                                                                          \
  }

/* An input schema's x-mcp-header marks (SEP-2243): only on string,
 * integer or boolean properties reached through "properties", a token,
 * unique case-insensitively. */
#define MARKS(n, s, fragment)                                                  \
  {                                                                            \
    "x-mcp-header: " n, {.name = n, READS, READER_HINTS, .input_schema = s},   \
        MCP_EINVAL, n, {                                                       \
      fragment                                                                 \
    }                                                                          \
  }

#define N8 "nnnnnnnn"
#define N64 N8 N8 N8 N8 N8 N8 N8 N8
#define NAME_128 N64 N64
#define NAME_129 NAME_128 "n"
#define NAME_RULE "the name must be 1-128 characters of [A-Za-z0-9_.-]"
#define BAD_NAME(n)                                                            \
  {                                                                            \
    "name " #n, WRITER(n), MCP_EINVAL, n, { NAME_RULE }                        \
  }

static const rule_case rules[] = {
    /* read_only and open_world are always stated. */
    {"read_only unset",
     {.name = "w",
      WRITES,
      .annotations = {.destructive = F, .idempotent = T, .open_world = F}},
     MCP_EINVAL,
     "w",
     {"read_only must be stated"}},
    {"read_only unset, only open_world stated",
     {.name = "w", WRITES, .annotations = {.open_world = T}},
     MCP_EINVAL,
     "w",
     {"read_only must be stated"}},
    ACCEPTED("a writer", WRITER("w")),
    {"open_world unset on a writer",
     {.name = "w",
      WRITES,
      .annotations = {.read_only = F, .destructive = F, .idempotent = T}},
     MCP_EINVAL,
     "w",
     {"open_world must be stated"}},
    {"open_world unset on a reader",
     {.name = "r", READS, .annotations = {.read_only = T}},
     MCP_EINVAL,
     "r",
     {"open_world must be stated"}},
    ACCEPTED(
        "a reader in an open world",
        {.name = "r", READS, .annotations = {.read_only = T, .open_world = T}}),
    /* destructive and idempotent are stated when the tool writes... */
    {"destructive unset on a writer",
     {.name = "w",
      WRITES,
      .annotations = {.read_only = F, .idempotent = T, .open_world = F}},
     MCP_EINVAL,
     "w",
     {"destructive must be stated when read_only is MCP_HINT_FALSE"}},
    ACCEPTED("a destructive writer", {.name = "w",
                                      WRITES,
                                      .annotations = {.read_only = F,
                                                      .destructive = T,
                                                      .idempotent = T,
                                                      .open_world = F}}),
    {"idempotent unset on a writer",
     {.name = "w",
      WRITES,
      .annotations = {.read_only = F, .destructive = F, .open_world = F}},
     MCP_EINVAL,
     "w",
     {"idempotent must be stated when read_only is MCP_HINT_FALSE"}},
    ACCEPTED("a writer that is not idempotent",
             {.name = "w",
              WRITES,
              .annotations = {.read_only = F,
                              .destructive = F,
                              .idempotent = F,
                              .open_world = F}}),
    /* ... and meaningless when it only reads. */
    {"destructive false on a reader",
     {.name = "r",
      READS,
      .annotations = {.read_only = T, .destructive = F, .open_world = F}},
     MCP_EINVAL,
     "r",
     {"destructive is meaningless on a read-only tool"}},
    {"destructive true on a reader",
     {.name = "r",
      READS,
      .annotations = {.read_only = T, .destructive = T, .open_world = F}},
     MCP_EINVAL,
     "r",
     {"read-only", "contradictory", "cannot be destructive"}},
    {"destructive and idempotent true on a reader",
     {.name = "r",
      READS,
      .annotations =
          {.read_only = T, .destructive = T, .idempotent = T, .open_world = F}},
     MCP_EINVAL,
     "r",
     {"contradictory"}},
    {"idempotent false on a reader",
     {.name = "r",
      READS,
      .annotations = {.read_only = T, .idempotent = F, .open_world = F}},
     MCP_EINVAL,
     "r",
     {"idempotent is meaningless on a read-only tool"}},
    {"idempotent true on a reader",
     {.name = "r",
      READS,
      .annotations = {.read_only = T, .idempotent = T, .open_world = F}},
     MCP_EINVAL,
     "r",
     {"idempotent is meaningless on a read-only tool"}},
    OUT_OF_RANGE(2),
    OUT_OF_RANGE(3),
    OUT_OF_RANGE(42),
    OUT_OF_RANGE(-1),
    OUT_OF_RANGE(102), /* 'f' */
    OUT_OF_RANGE(116), /* 't' */

    /* The mistakes C's bool invites, the way a student writes them: every
     * one is refused, with a message naming the member and the fix. A
     * read-only tool whose destructive or idempotent member says false is
     * not among them: 0 is unset, which is exactly what such a tool must
     * leave. */
    {"C bools: every hint true",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = true,
                      .destructive = true,
                      .idempotent = true,
                      .open_world = true}},
     MCP_EINVAL,
     "student",
     {"read_only is 1 (C true?)", "destructive is 1 (C true?)",
      "idempotent is 1 (C true?)", "open_world is 1 (C true?)"}},
    {"C bools: read_only true",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = true, .open_world = F}},
     MCP_EINVAL,
     "student",
     {"read_only is 1 (C true?): write MCP_HINT_TRUE or MCP_HINT_FALSE"}},
    {"C bools: read_only false",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = false, .open_world = F}},
     MCP_EINVAL,
     "student",
     {"read_only must be stated",
      "it is 0, which means unset (C's false is 0, not MCP_HINT_FALSE)"}},
    {"C bools: open_world true",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = T, .open_world = true}},
     MCP_EINVAL,
     "student",
     {"open_world is 1 (C true?): write MCP_HINT_TRUE or MCP_HINT_FALSE"}},
    {"C bools: open_world false",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = T, .open_world = false}},
     MCP_EINVAL,
     "student",
     {"open_world must be stated", "not MCP_HINT_FALSE"}},
    {"C bools: destructive true on a writer",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = F,
                      .destructive = true,
                      .idempotent = F,
                      .open_world = F}},
     MCP_EINVAL,
     "student",
     {"destructive is 1 (C true?): write MCP_HINT_TRUE or MCP_HINT_FALSE"}},
    {"C bools: destructive false on a writer",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = F,
                      .destructive = false,
                      .idempotent = F,
                      .open_world = F}},
     MCP_EINVAL,
     "student",
     {"destructive must be stated when read_only is MCP_HINT_FALSE",
      "0, which means unset"}},
    {"C bools: idempotent true on a writer",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = F,
                      .destructive = T,
                      .idempotent = true,
                      .open_world = F}},
     MCP_EINVAL,
     "student",
     {"idempotent is 1 (C true?): write MCP_HINT_TRUE or MCP_HINT_FALSE"}},
    {"C bools: idempotent false on a writer",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = F,
                      .destructive = T,
                      .idempotent = false,
                      .open_world = F}},
     MCP_EINVAL,
     "student",
     {"idempotent must be stated when read_only is MCP_HINT_FALSE",
      "not MCP_HINT_FALSE"}},
    {"C bools: destructive true on a reader",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = T, .destructive = true, .open_world = F}},
     MCP_EINVAL,
     "student",
     {"destructive is 1 (C true?): leave it unset (MCP_HINT_UNSET) on a "
      "read-only tool"}},
    {"C bools: idempotent true on a reader",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = T, .idempotent = true, .open_world = F}},
     MCP_EINVAL,
     "student",
     {"idempotent is 1 (C true?): leave it unset (MCP_HINT_UNSET) on a "
      "read-only tool"}},
    {"C bools: read_only true, destructive stated",
     {.name = "student",
      WRITES,
      .annotations = {.read_only = true,
                      .destructive = T,
                      .idempotent = T,
                      .open_world = F}},
     MCP_EINVAL,
     "student",
     {"read_only is 1 (C true?)"}},

    /* Names: 1-128 characters of [A-Za-z0-9_.-]. */
    {"name of 129 characters",
     WRITER(NAME_129),
     MCP_EINVAL,
     NAME_129,
     {NAME_RULE}},
    ACCEPTED("name of 128 characters", WRITER(NAME_128)),
    {"empty name", WRITER(""), MCP_EINVAL, "", {NAME_RULE}},
    {"no name", WRITER(NULL), MCP_EINVAL, "", {NAME_RULE}},
    ACCEPTED("name of one character", WRITER("x")),
    ACCEPTED("name: capitals", WRITER("ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
    ACCEPTED("name: small letters", WRITER("abcdefghijklmnopqrstuvwxyz")),
    ACCEPTED("name: digits", WRITER("0123456789")),
    ACCEPTED("name: underscore", WRITER("_")),
    ACCEPTED("name: dot", WRITER(".")),
    ACCEPTED("name: hyphen", WRITER("-")),
    ACCEPTED("name: a mix", WRITER("Az09_.-")),
    ACCEPTED("name: a dotted name", WRITER("tool.sub-name_2")),
    BAD_NAME("a b"),
    BAD_NAME("a/b"),
    BAD_NAME("a:b"),
    BAD_NAME("a@b"),
    BAD_NAME("tab\t"),
    BAD_NAME("a\"b"),
    BAD_NAME("\xc3\xa9"),
    BAD_NAME("caf\xc3\xa9"),
    BAD_NAME("a\nb"),
    /* A name that is not even UTF-8 is not echoed. */
    {"name not UTF-8",
     WRITER("a\xff"),
     MCP_EINVAL,
     "(invalid UTF-8)",
     {"the name must be"}},

    /* Description, handler, texts. */
    {"no description",
     {.name = "w", .handler = ok_handler, WRITER_HINTS},
     MCP_EINVAL,
     "w",
     {"a description is required"}},
    {"empty description",
     {.name = "w", .description = "", .handler = ok_handler, WRITER_HINTS},
     MCP_EINVAL,
     "w",
     {"a description is required"}},
    ACCEPTED(
        "a description of one space",
        {.name = "w", .description = " ", .handler = ok_handler, WRITER_HINTS}),
    {"no handler",
     {.name = "w", .description = "Writes a thing.", WRITER_HINTS},
     MCP_EINVAL,
     "w",
     {"a handler is required"}},
    {"title not UTF-8",
     {.name = "w", .title = "bad \xff", WRITES, WRITER_HINTS},
     MCP_EINVAL,
     "w",
     {"must be UTF-8"}},
    {"description not UTF-8",
     {.name = "w",
      .description = "bad \xc3",
      .handler = ok_handler,
      WRITER_HINTS},
     MCP_EINVAL,
     "w",
     {"must be UTF-8"}},
    {"annotation title an encoded surrogate",
     {.name = "w",
      WRITES,
      .annotations = {.title = "\xed\xa0\x80",
                      .read_only = F,
                      .destructive = F,
                      .idempotent = T,
                      .open_world = F}},
     MCP_EINVAL,
     "w",
     {"must be UTF-8"}},

    /* Input and output schemas follow the same rules. */
    NOT_JSON(""),
    NOT_JSON("{"),
    NOT_JSON("not json"),
    NOT_JSON("{\"type\":\"object\"} trailing"),
    NOT_JSON("{\"type\":\"object\",\"type\":\"object\"}"),
    NOT_JSON("{\"type\":\"object\",\"description\":\"\xff\"}"),
    NOT_JSON("{\"type\":\"object\",\"description\":\"caf\xc3\"}"),
    NOT_OBJECT("[]"),
    NOT_OBJECT("\"object\""),
    NOT_OBJECT("null"),
    NOT_OBJECT("true"),
    NOT_OBJECT("{}"),
    NOT_OBJECT("{\"type\":\"array\"}"),
    NOT_OBJECT("{\"type\":\"Object\"}"),
    NOT_OBJECT("{\"type\":[\"object\"]}"),
    NOT_OBJECT("{\"properties\":{}}"),
    ACCEPTED(
        "an input schema",
        {.name = "w",
         WRITES,
         WRITER_HINTS,
         .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{}}}"}),
    ACCEPTED("an output schema", {.name = "w",
                                  WRITES,
                                  WRITER_HINTS,
                                  .output_schema = "{\"type\":\"object\"}"}),

    /* Scopes: RFC 6750 scope tokens, each once. */
    BAD_SCOPE(""),
    BAD_SCOPE(" "),
    BAD_SCOPE("a b"),
    BAD_SCOPE("a\"b"),
    BAD_SCOPE("a\\b"),
    BAD_SCOPE("a\tb"),
    BAD_SCOPE("a\x01"),
    BAD_SCOPE("\x7f"),
    BAD_SCOPE("\x1f"),
    BAD_SCOPE("caf\xc3\xa9"),
    BAD_SCOPE("\xff"),
    ACCEPTED("scopes of every character a token may have",
             {.name = "w",
              WRITES,
              WRITER_HINTS,
              .scopes = (const char *const[]){"a", "mcp:tools.read",
                                              "!#$%&'()*+,-./:;<=>?@[]^_`{|}~",
                                              NULL}}),
    {"a scope listed twice",
     {.name = "w",
      WRITES,
      WRITER_HINTS,
      .scopes = (const char *const[]){"a", "b", "a", NULL}},
     MCP_EINVAL,
     "w",
     {"scope \"a\" is listed twice"}},

    /* x-mcp-header marks. */
    ACCEPTED("x-mcp-header on a string, an integer and a boolean",
             {.name = "h0",
              READS,
              READER_HINTS,
              .input_schema =
                  "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":"
                  "\"string\",\"x-mcp-header\":\"Region\"},\"n\":{\"type\":"
                  "\"integer\",\"x-mcp-header\":\"N\"},\"b\":{\"type\":"
                  "\"boolean\",\"x-mcp-header\":\"Flag\"}}}"}),
    ACCEPTED("x-mcp-header on a nested property",
             {.name = "h1",
              READS,
              READER_HINTS,
              .input_schema =
                  "{\"type\":\"object\",\"properties\":{\"o\":{\"type\":"
                  "\"object\",\"properties\":{\"r\":{\"type\":\"string\","
                  "\"x-mcp-header\":\"Inner\"}}}}}"}),
    MARKS("h2",
          "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"number\","
          "\"x-mcp-header\":\"R\"}}}",
          "type string, integer or boolean"),
    MARKS("h3",
          "{\"type\":\"object\",\"properties\":{\"r\":{\"x-mcp-header\":"
          "\"R\"}}}",
          "type string, integer or boolean"),
    MARKS("h4",
          "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"string\","
          "\"x-mcp-header\":\"Bad Name\"}}}",
          "RFC 9110 token"),
    MARKS("h5",
          "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"string\","
          "\"x-mcp-header\":\"\"}}}",
          "RFC 9110 token"),
    MARKS("h6",
          "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"string\","
          "\"x-mcp-header\":7}}}",
          "RFC 9110 token"),
    MARKS("h7",
          "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\","
          "\"x-mcp-header\":\"Same\"},\"b\":{\"type\":\"string\","
          "\"x-mcp-header\":\"sAME\"}}}",
          "same header"),
    MARKS("h8", "{\"type\":\"object\",\"x-mcp-header\":\"Root\"}",
          "reached through"),
    MARKS("h9",
          "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\","
          "\"items\":{\"type\":\"string\",\"x-mcp-header\":\"Item\"}}}}",
          "reached through"),
    MARKS("h10",
          "{\"type\":\"object\",\"$defs\":{\"d\":{\"type\":\"object\","
          "\"properties\":{\"r\":{\"type\":\"string\",\"x-mcp-header\":"
          "\"Def\"}}}}}",
          "reached through"),
    MARKS("h11",
          "{\"type\":\"object\",\"anyOf\":[{\"properties\":{\"r\":{"
          "\"type\":\"string\",\"x-mcp-header\":\"Any\"}}}]}",
          "reached through"),

    /* Icons: https: or data: of an image type, the types, sizes and
     * themes the schema names. */
    ACCEPTED("icons of every form",
             {.name = "w", WRITES, WRITER_HINTS, .icons = TEST_ICONS}),
    BAD_ICON("http: src", "https: URL", {.src = "http://example.com/i.png"}),
    BAD_ICON("file: src", "https: URL", {.src = "file:///etc/passwd"}),
    BAD_ICON("javascript: src", "https: URL", {.src = "javascript:alert(1)"}),
    BAD_ICON("https: without a host", "not a valid", {.src = "https://"}),
    BAD_ICON("https: with a space", "not a valid",
             {.src = "https://a b/i.png"}),
    BAD_ICON("data: not base64", "data:image/TYPE;base64,DATA",
             {.src = "data:image/png,abc"}),
    BAD_ICON("data: of text", "image/ type",
             {.src = "data:text/html;base64,PGI+"}),
    BAD_ICON("data: badly encoded", "canonical base64",
             {.src = "data:image/png;base64,abc"}),
    BAD_ICON("data: empty", "canonical base64",
             {.src = "data:image/png;base64,"}),
    BAD_ICON("mime_type not an image", "mime_type must be",
             {.src = "https://example.com/i", .mime_type = "text/html"}),
    BAD_ICON("mime_type without a subtype", "mime_type must be",
             {.src = "https://example.com/i", .mime_type = "image/"}),
    BAD_ICON(
        "mime_type against the data: URI's", "not the data: URI's own type",
        {.src = "data:image/png;base64,iVBORw==", .mime_type = "image/jpeg"}),
    BAD_ICON("size 48", "\"48\" is neither", BAD_SIZE("48")),
    BAD_ICON("size 0x4", "\"0x4\" is neither", BAD_SIZE("0x4")),
    BAD_ICON("size 48x", "\"48x\" is neither", BAD_SIZE("48x")),
    BAD_ICON("size 048x48", "is neither", BAD_SIZE("048x48")),
    BAD_ICON("size 48X48", "is neither", BAD_SIZE("48X48")),
    BAD_ICON("size Any", "is neither", BAD_SIZE("Any")),
    BAD_ICON("theme blue", "theme must be",
             {.src = "https://example.com/i", .theme = "blue"}),
    {"seventeen icons",
     {.name = "w", WRITES, WRITER_HINTS, .icons = seventeen_icons},
     MCP_EINVAL,
     "w",
     {"more than 16 icons"}},

    /* _meta: a JSON object whose keys the schema's rules name. */
    ACCEPTED("meta with prefixed and plain keys",
             {.name = "w",
              WRITES,
              WRITER_HINTS,
              .meta = "{\"com.example/a\":1,\"ui\":{\"x\":[]},\"a.b-c_d\":"
                      "null,\"x-1.y/z\":true,\"progressToken\":2}"}),
    BAD_META("not JSON", "{", "meta is not valid JSON"),
    BAD_META("an array", "[]", "meta must be a JSON object"),
    BAD_META("a string", "\"x\"", "meta must be a JSON object"),
    BAD_META("a duplicate key", "{\"a\":1,\"a\":2}", "meta is not valid JSON"),
    BAD_META("the protocol's prefix",
             "{\"io.modelcontextprotocol/serverInfo\":{}}",
             "reserved for the protocol"),
    BAD_META("mcp as second label", "{\"dev.mcp/x\":1}",
             "reserved for the protocol"),
    BAD_META("a name ending in a dash", "{\"a-\":1}",
             "begin and end with a letter or digit"),
    BAD_META("a name with a space", "{\"a b\":1}", "may hold only"),
    BAD_META("an empty key", "{\"\":1}", "it is empty"),
    BAD_META("a label starting with a digit", "{\"1com.example/x\":1}",
             "its prefix must be"),
    BAD_META("an empty label", "{\"com..example/x\":1}", "its prefix must be"),
    BAD_META("a prefix ending in a dot", "{\"com./x\":1}", "its prefix must"),

    /* MCP Apps: a tool's ui names its view and who may call it. */
    ACCEPTED("meta ui of an MCP App tool",
             {.name = "w",
              WRITES,
              WRITER_HINTS,
              .meta = "{\"ui\":{\"resourceUri\":\"ui://w/view.html\","
                      "\"visibility\":[\"model\",\"app\"],\"later\":1}}"}),
    BAD_META("ui not an object", "{\"ui\":[]}",
             "meta ui (MCP Apps) must be an object"),
    BAD_META("ui.resourceUri not ui://",
             "{\"ui\":{\"resourceUri\":"
             "\"https://x/v\"}}",
             "ui.resourceUri must be a ui:// URI"),
    BAD_META("ui.resourceUri bare scheme",
             "{\"ui\":{\"resourceUri\":"
             "\"ui://\"}}",
             "ui.resourceUri must be a ui:// URI"),
    BAD_META("ui.resourceUri a number", "{\"ui\":{\"resourceUri\":1}}",
             "ui.resourceUri must be a ui:// URI"),
    BAD_META("ui.visibility unknown", "{\"ui\":{\"visibility\":[\"user\"]}}",
             "ui.visibility must be a non-empty array"),
    BAD_META("ui.visibility twice",
             "{\"ui\":{\"visibility\":[\"app\","
             "\"app\"]}}",
             "ui.visibility must be a non-empty array"),
    BAD_META("ui.visibility empty", "{\"ui\":{\"visibility\":[]}}",
             "ui.visibility must be a non-empty array"),
    BAD_META("ui.visibility a string", "{\"ui\":{\"visibility\":\"app\"}}",
             "ui.visibility must be a non-empty array"),
    BAD_META("a slash in the name", "{\"a/b/c\":1}", "its prefix must be"),

    /* MCP Apps' deprecated flat key, which hosts still honour, is checked
     * exactly as ui.resourceUri, and must agree with it. */
    ACCEPTED("meta ui/resourceUri alone",
             {.name = "w",
              WRITES,
              WRITER_HINTS,
              .meta = "{\"ui/resourceUri\":\"ui://w/view.html\"}"}),
    ACCEPTED("meta ui/resourceUri agreeing with ui.resourceUri",
             {.name = "w",
              WRITES,
              WRITER_HINTS,
              .meta = "{\"ui\":{\"resourceUri\":\"ui://w/view.html\"},"
                      "\"ui/resourceUri\":\"ui://w/view.html\"}"}),
    BAD_META("ui/resourceUri https", "{\"ui/resourceUri\":\"https://x/v\"}",
             "meta \"ui/resourceUri\" (MCP Apps' deprecated form of "
             "ui.resourceUri) must be a ui:// URI"),
    BAD_META("ui/resourceUri javascript",
             "{\"ui/resourceUri\":\"javascript:alert(1)\"}",
             "\"ui/resourceUri\" (MCP Apps' deprecated form of "
             "ui.resourceUri) must be a ui:// URI"),
    BAD_META("ui/resourceUri bare scheme", "{\"ui/resourceUri\":\"ui://\"}",
             "must be a ui:// URI"),
    BAD_META("ui/resourceUri a number", "{\"ui/resourceUri\":1}",
             "must be a ui:// URI"),
    BAD_META("ui/resourceUri with a valid ui.resourceUri",
             "{\"ui\":{\"resourceUri\":\"ui://w/v\"},"
             "\"ui/resourceUri\":\"https://x/v\"}",
             "\"ui/resourceUri\" (MCP Apps' deprecated form"),
    BAD_META("ui/resourceUri and ui.resourceUri disagree",
             "{\"ui\":{\"resourceUri\":\"ui://w/a.html\"},"
             "\"ui/resourceUri\":\"ui://w/b.html\"}",
             "meta ui.resourceUri (\"ui://w/a.html\") and \"ui/resourceUri\" "
             "(\"ui://w/b.html\") name different views"),
};

/* Every row of rules, each on a server of its own. */
START_TEST(registration_rules) {
  for (size_t i = 0; i < TU_COUNT(rules); i++) {
    const rule_case *c = &rules[i];
    mcp_server *srv = new_server();
    int rc = mcp_server_add_tool(srv, &c->tool, NULL);
    const char *msg = mcp_server_errmsg(srv);
    ck_assert_msg(rc == c->rc, "row %zu (%s): got %d (%s), want %d", i, c->what,
                  rc, msg, c->rc);
    if (c->rc != 0) {
      char named[300];
      snprintf(named, sizeof named, "tool \"%s\": ", c->who);
      ck_assert_msg(strncmp(msg, named, strlen(named)) == 0,
                    "row %zu (%s): the message does not start with %s: %s", i,
                    c->what, named, msg);
      for (size_t k = 0; k < TU_COUNT(c->want) && c->want[k]; k++)
        ck_assert_msg(strstr(msg, c->want[k]) != NULL,
                      "row %zu (%s): the message lacks \"%s\": %s", i, c->what,
                      c->want[k], msg);
      if (c->tool.name != NULL && c->tool.name[0])
        ck_assert_msg(mcp_server_remove_tool(srv, c->tool.name) == MCP_ENOENT,
                      "row %zu (%s): a refused tool was registered", i,
                      c->what);
    }
    mcp_server_free(srv);
  }
}
END_TEST

#undef F
#undef T

/* Every problem of a definition in one message, each once. */
START_TEST(rule_every_problem_at_once) {
  static const char *const scopes[] = {"ok", "bad scope", "ok", NULL};
  mcp_server *srv = new_server();
  mcp_tool t = {.name = "many",
                .description = "",
                .input_schema = "{\"type\":\"array\"}",
                .output_schema = "{\"type\":",
                .scopes = scopes,
                .annotations = {.read_only = true, .open_world = false}};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), MCP_EINVAL);
  const char *msg = mcp_server_errmsg(srv);
  static const char *const want[] = {
      "tool \"many\": a handler is required; ",
      "a description is required",
      "read_only is 1 (C true?)",
      "open_world must be stated",
      "scope \"bad scope\" is not an RFC 6750 scope token",
      "scope \"ok\" is listed twice",
      "input_schema must be a JSON object schema",
      "output_schema is not valid JSON"};
  for (size_t k = 0; k < TU_COUNT(want); k++) {
    const char *at = strstr(msg, want[k]);
    ck_assert_msg(at != NULL, "lacks \"%s\": %s", want[k], msg);
    ck_assert_msg(strstr(at + 1, want[k]) == NULL, "twice: %s", msg);
  }
  ck_assert_ptr_null(strstr(msg, "tool \"many\": a description"));
  /* A valid definition after it is accepted: nothing was left behind. */
  mcp_tool ok = writer("many");
  expect_accepted(srv, &ok);
  mcp_server_free(srv);
}
END_TEST

static const char *const *g_headers; /* name, value, ..., NULL */

static const char *lookup(const char *name, void *ud) {
  (void)ud;
  for (size_t i = 0; g_headers && g_headers[i]; i += 2)
    if (strcasecmp(g_headers[i], name) == 0)
      return g_headers[i + 1];
  return NULL;
}

/* The comparison a transport asks for. */
START_TEST(param_headers_checked) {
  mcp_server *srv = new_server();
  mcp_tool t = reader("route");
  t.input_schema =
      "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":"
      "\"string\",\"x-mcp-header\":\"Region\"},\"n\":{\"type\":"
      "\"integer\",\"x-mcp-header\":\"N\"},\"ok\":{\"type\":\"boolean\","
      "\"x-mcp-header\":\"Ok\"},\"plain\":{\"type\":\"string\"}}}";
  expect_accepted(srv, &t);
  static const struct {
    const char *args;
    const char *headers[8];
    int rc;
  } cases[] = {
      {"{}", {NULL}, 0},
      {"{\"plain\":\"x\"}", {NULL}, 0},
      {"{\"region\":\"eu\"}", {"region", "eu", NULL}, 0},
      {"{\"region\":\"eu\"}", {NULL}, MCP_EINVAL},
      {"{\"region\":\"eu\"}", {"Region", "us", NULL}, MCP_EINVAL},
      {"{}", {"Region", "eu", NULL}, MCP_EINVAL},
      {"{\"region\":null}", {NULL}, 0},
      {"{\"n\":7}", {"N", "7", NULL}, 0},
      {"{\"n\":7}", {"N", "007", NULL}, 0},
      {"{\"n\":-7}", {"N", "-7", NULL}, 0},
      {"{\"n\":7}", {"N", "7.0", NULL}, MCP_EINVAL},
      {"{\"n\":7}", {"N", "8", NULL}, MCP_EINVAL},
      {"{\"n\":7}", {"N", "", NULL}, MCP_EINVAL},
      {"{\"ok\":true}", {"Ok", "true", NULL}, 0},
      {"{\"ok\":false}", {"Ok", "true", NULL}, MCP_EINVAL},
      {"{\"ok\":\"true\"}", {"Ok", "true", NULL}, MCP_EINVAL},
      {"{\"region\":\"eu\",\"n\":1,\"ok\":false}",
       {"region", "eu", "n", "1", "ok", "false", NULL},
       0},
  };
  char why[200];
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    cJSON *args = cJSON_Parse(cases[i].args);
    g_headers = cases[i].headers;
    why[0] = '\0';
    int rc = mcp_server_check_param_headers(srv, "route", args, lookup, NULL,
                                            why, sizeof why);
    ck_assert_msg(rc == cases[i].rc, "case %zu: %d (%s)", i, rc, why);
    if (rc)
      ck_assert_msg(strncmp(why, "Header mismatch: Mcp-Param-", 27) == 0,
                    "case %zu: %s", i, why);
    cJSON_Delete(args);
  }
  g_headers = NULL;
  ck_assert_int_eq(mcp_server_check_param_headers(srv, "nope", NULL, lookup,
                                                  NULL, why, sizeof why),
                   MCP_ENOENT);
  ck_assert_int_eq(mcp_server_check_param_headers(srv, "route", NULL, NULL,
                                                  NULL, why, sizeof why),
                   MCP_EINVAL);
  mcp_server_free(srv);
}
END_TEST

static void *refuse_on_thread(void *arg) {
  mcp_server *srv = arg;
  mcp_tool t = writer("other thread");
  if (mcp_server_add_tool(srv, &t, NULL) != MCP_EINVAL)
    return (void *)1;
  return strstr(mcp_server_errmsg(srv), "other thread") ? NULL : (void *)1;
}

/* Each thread reads its own last error, even on a shared server. */
START_TEST(errmsg_is_per_thread) {
  mcp_server *srv = new_server();
  mcp_tool t = writer("bad name");
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), MCP_EINVAL);
  pthread_t th;
  void *res;
  ck_assert_int_eq(pthread_create(&th, NULL, refuse_on_thread, srv), 0);
  ck_assert_int_eq(pthread_join(th, &res), 0);
  ck_assert_ptr_null(res);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "bad name"));
  mcp_server *other = new_server();
  ck_assert_str_eq(mcp_server_errmsg(other), "no error");
  mcp_server_free(other);
  mcp_server_free(srv);
}
END_TEST

START_TEST(rule_unique_name) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  mcp_tool first = writer("same");
  first.description = "The first.";
  expect_accepted(srv, &first);
  tu_clear(&p);
  mcp_tool second = reader("same");
  second.description = "The second.";
  expect_refused(srv, &second, MCP_EEXIST, "same",
                 "a tool of that name is already registered");
  ck_assert_uint_eq(p.nout, 0); /* a refusal changes no list */
  cJSON *m = list_tools(&p, NULL);
  tu_assert_json(m, "{\"result\":{\"tools\":[{\"name\":\"same\","
                    "\"description\":\"The first.\"}]}}");
  cJSON_Delete(m);
  /* Names are case-sensitive. */
  mcp_tool other = writer("SAME");
  expect_accepted(srv, &other);
  /* Once removed, the name is free again. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "same"), 0);
  expect_accepted(srv, &second);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(rule_null_tool) {
  mcp_server *srv = new_server();
  expect_refused(srv, NULL, MCP_EINVAL, NULL, "the tool definition is NULL");
  mcp_tool t = writer("w");
  ck_assert_int_eq(mcp_server_add_tool(NULL, &t, NULL), MCP_EINVAL);
  mcp_server_free(srv);
}
END_TEST

/* ---- the Tool object on the wire ----------------------------------------- */

START_TEST(wire_hints_explicit) {
  mcp_server *srv = new_server();
  mcp_tool t = reader("ro");
  expect_accepted(srv, &t);
  t = writer("rw_false");
  t.annotations = (mcp_tool_annotations){.read_only = MCP_HINT_FALSE,
                                         .destructive = MCP_HINT_FALSE,
                                         .idempotent = MCP_HINT_FALSE,
                                         .open_world = MCP_HINT_FALSE};
  expect_accepted(srv, &t);
  t = writer("rw_true");
  t.annotations = (mcp_tool_annotations){.read_only = MCP_HINT_FALSE,
                                         .destructive = MCP_HINT_TRUE,
                                         .idempotent = MCP_HINT_TRUE,
                                         .open_world = MCP_HINT_TRUE};
  expect_accepted(srv, &t);
  t = reader("ro_open");
  t.annotations.open_world = MCP_HINT_TRUE;
  expect_accepted(srv, &t);

  static const char *const versions[] = {"2025-03-26", "2025-06-18",
                                         "2025-11-25"};
  for (size_t v = 0; v < TU_COUNT(versions); v++) {
    tu_peer p;
    tu_peer_open(&p, srv, NULL);
    tu_initialize(&p, versions[v]);
    cJSON *m = list_tools(&p, NULL);
    const cJSON *a;
    a = cJSON_GetObjectItemCaseSensitive(find_tool(m, "ro"), "annotations");
    tu_assert_exact(a, "{\"readOnlyHint\":true,\"destructiveHint\":false,"
                       "\"idempotentHint\":true,\"openWorldHint\":false}");
    a = cJSON_GetObjectItemCaseSensitive(find_tool(m, "rw_false"),
                                         "annotations");
    tu_assert_exact(a, "{\"readOnlyHint\":false,\"destructiveHint\":false,"
                       "\"idempotentHint\":false,\"openWorldHint\":false}");
    a = cJSON_GetObjectItemCaseSensitive(find_tool(m, "rw_true"),
                                         "annotations");
    tu_assert_exact(a, "{\"readOnlyHint\":false,\"destructiveHint\":true,"
                       "\"idempotentHint\":true,\"openWorldHint\":true}");
    a = cJSON_GetObjectItemCaseSensitive(find_tool(m, "ro_open"),
                                         "annotations");
    tu_assert_exact(a, "{\"readOnlyHint\":true,\"destructiveHint\":false,"
                       "\"idempotentHint\":true,\"openWorldHint\":true}");
    cJSON_Delete(m);
    tu_peer_close(&p);
  }
  mcp_server_free(srv);
}
END_TEST

START_TEST(wire_annotation_title) {
  mcp_server *srv = new_server();
  mcp_tool t = reader("tool_title_only");
  t.title = "Tool Title";
  expect_accepted(srv, &t);
  t = reader("both_titles");
  t.title = "Tool Title";
  t.annotations.title = "Annotation Title";
  expect_accepted(srv, &t);
  t = reader("annotation_title_only");
  t.annotations.title = "Annotation Title";
  expect_accepted(srv, &t);
  t = reader("no_title");
  expect_accepted(srv, &t);

  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-06-18");
  cJSON *m = list_tools(&p, NULL);
  tu_assert_json(find_tool(m, "tool_title_only"),
                 "{\"title\":\"Tool Title\",\"annotations\":{\"title\":"
                 "\"Tool Title\"}}");
  tu_assert_json(find_tool(m, "both_titles"),
                 "{\"title\":\"Tool Title\",\"annotations\":{\"title\":"
                 "\"Annotation Title\"}}");
  tu_assert_json(find_tool(m, "annotation_title_only"),
                 "{\"title\":\"<absent>\",\"annotations\":{\"title\":"
                 "\"Annotation Title\"}}");
  tu_assert_json(find_tool(m, "no_title"),
                 "{\"title\":\"<absent>\",\"annotations\":{\"title\":"
                 "\"<absent>\"}}");
  cJSON_Delete(m);
  tu_peer_close(&p);

  /* 2025-03-26 has no Tool.title: the fallback is where the title shows. */
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-03-26");
  m = list_tools(&p, NULL);
  tu_assert_json(find_tool(m, "tool_title_only"),
                 "{\"title\":\"<absent>\",\"annotations\":{\"title\":"
                 "\"Tool Title\"}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(wire_per_version) {
  mcp_server *srv = new_server();
  mcp_tool t = writer("full");
  t.title = "Full";
  t.description = "Has everything.";
  t.input_schema = "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":"
                   "\"string\"}},\"required\":[\"q\"]}";
  t.output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}}}";
  expect_accepted(srv, &t);

  static const struct {
    const char *version;
    const char *tool; /* the whole Tool object */
  } cases[] = {
      {"2024-11-05",
       "{\"name\":\"full\",\"description\":\"Has everything.\","
       "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":"
       "\"string\"}},\"required\":[\"q\"]}}"},
      {"2025-03-26",
       "{\"name\":\"full\",\"description\":\"Has everything.\","
       "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":"
       "\"string\"}},\"required\":[\"q\"]},\"annotations\":{\"title\":"
       "\"Full\",\"readOnlyHint\":false,\"destructiveHint\":false,"
       "\"idempotentHint\":true,\"openWorldHint\":false}}"},
      {"2025-06-18",
       "{\"name\":\"full\",\"title\":\"Full\",\"description\":\"Has "
       "everything.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
       "\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]},\"outputSchema\":{"
       "\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}},"
       "\"annotations\":{\"title\":\"Full\",\"readOnlyHint\":false,"
       "\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":"
       "false}}"},
      {"2025-11-25",
       "{\"name\":\"full\",\"title\":\"Full\",\"description\":\"Has "
       "everything.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
       "\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]},\"outputSchema\":{"
       "\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}},"
       "\"annotations\":{\"title\":\"Full\",\"readOnlyHint\":false,"
       "\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":"
       "false}}"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    tu_peer p;
    tu_peer_open(&p, srv, NULL);
    tu_initialize(&p, cases[i].version);
    ck_assert_str_eq(mcp_session_protocol_version(p.session), cases[i].version);
    cJSON *m = list_tools(&p, NULL);
    tu_assert_exact(find_tool(m, "full"), cases[i].tool);
    cJSON_Delete(m);
    tu_peer_close(&p);
  }
  mcp_server_free(srv);
}
END_TEST

/* icons from 2025-11-25 and _meta from 2025-06-18, as registered
 * (re-serialized), and neither to the versions before. */
START_TEST(wire_icons_and_meta) {
  static const char *const sizes[] = {"48x48", NULL};
  static const mcp_icon icons[] = {{.src = "https://example.com/i.png",
                                    .mime_type = "image/png",
                                    .sizes = sizes,
                                    .theme = "dark"},
                                   {.src = NULL}};
  mcp_server *srv = new_server();
  mcp_tool t = reader("pictured");
  t.icons = icons;
  t.meta = "{ \"com.example/x\" : [1, 2.50, \"\\u00e9\"] }";
  expect_accepted(srv, &t);
  const char *icon_json = "[{\"src\":\"https://example.com/i.png\","
                          "\"mimeType\":\"image/png\",\"sizes\":[\"48x48\"],"
                          "\"theme\":\"dark\"}]";
  const char *meta_json = "{\"com.example/x\":[1,2.50,\"\xc3\xa9\"]}";
  static const struct {
    const char *version;
    bool icons, meta;
  } cases[] = {{"2024-11-05", false, false},
               {"2025-03-26", false, false},
               {"2025-06-18", false, true},
               {"2025-11-25", true, true},
               {"2026-07-28", true, true}};
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    tu_peer p;
    tu_peer_open(&p, srv, NULL);
    cJSON *m;
    if (strcmp(cases[i].version, "2026-07-28") == 0) {
      m = tu_ask(&p, tu_mreq(1, "tools/list", TU_META_NONE, NULL));
    } else {
      tu_initialize(&p, cases[i].version);
      m = list_tools(&p, NULL);
    }
    const cJSON *tool = find_tool(m, "pictured");
    ck_assert_ptr_nonnull(tool);
    if (cases[i].icons)
      tu_assert_exact(tu_get(tool, "icons"), icon_json);
    else
      ck_assert_msg(tu_get(tool, "icons") == NULL, "%s: icons",
                    cases[i].version);
    if (cases[i].meta)
      tu_assert_exact(tu_get(tool, "_meta"), meta_json);
    else
      ck_assert_msg(tu_get(tool, "_meta") == NULL, "%s: _meta",
                    cases[i].version);
    cJSON_Delete(m);
    tu_peer_close(&p);
  }
  mcp_server_free(srv);
}
END_TEST

START_TEST(wire_default_input_schema) {
  mcp_server *srv = new_server();
  mcp_tool t = reader("no_args");
  expect_accepted(srv, &t);
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2024-11-05");
  cJSON *m = list_tools(&p, NULL);
  tu_assert_exact(
      cJSON_GetObjectItemCaseSensitive(find_tool(m, "no_args"), "inputSchema"),
      "{\"type\":\"object\",\"additionalProperties\":false}");
  cJSON_Delete(m);
  /* And it is enforced: a tool without arguments refuses any. */
  m = tu_call_tool(&p, "7", "no_args", "{\"x\":1}");
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 0);
  m = tu_call_tool(&p, "7", "no_args", "{}");
  tu_assert_json(m, "{\"result\":{\"isError\":\"<absent>\",\"content\":[{"
                    "\"type\":\"text\",\"text\":\"no_args\"}]}}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 1);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- removal and list_changed -------------------------------------------- */

START_TEST(remove_tool) {
  mcp_server *srv = new_server();
  mcp_tool a = writer("a"), b = reader("b");
  expect_accepted(srv, &a);
  expect_accepted(srv, &b);
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-06-18");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "a"), 0);
  cJSON *m = list_tools(&p, NULL);
  tu_assert_json(m, "{\"result\":{\"tools\":[{\"name\":\"b\"}],"
                    "\"nextCursor\":\"<absent>\"}}");
  cJSON_Delete(m);

  ck_assert_int_eq(mcp_server_remove_tool(srv, "a"), MCP_ENOENT);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "tool \"a\""));
  ck_assert_ptr_nonnull(
      strstr(mcp_server_errmsg(srv), "no tool of that name is registered"));
  ck_assert_int_eq(mcp_server_remove_tool(srv, "nope"), MCP_ENOENT);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "B"), MCP_ENOENT);
  ck_assert_int_eq(mcp_server_remove_tool(srv, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_remove_tool(NULL, "b"), MCP_EINVAL);

  /* A removed tool is an unknown tool. */
  m = tu_call_tool(&p, "7", "a", "{}");
  tu_assert_json(m, "{\"id\":7,\"error\":{\"code\":-32602,\"message\":"
                    "\"Unknown tool: a\"},\"result\":\"<absent>\"}");
  cJSON_Delete(m);
  m = tu_call_tool(&p, "7", "b", NULL);
  tu_assert_json(m, "{\"id\":7,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"b\"}]}}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 1);

  ck_assert_int_eq(mcp_server_remove_tool(srv, "b"), 0);
  m = list_tools(&p, NULL);
  tu_assert_json(m, "{\"result\":{\"tools\":[]}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

static const char list_changed[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\","
    "\"id\":\"<absent>\",\"params\":\"<absent>\"}";

START_TEST(list_changed_to_ready_sessions_only) {
  mcp_server *srv = new_server();
  tu_peer ready, half, fresh, stray;
  tu_peer_open(&ready, srv, NULL);
  tu_initialize(&ready, "2025-06-18");
  tu_peer_open(&half, srv, NULL);
  ck_assert_int_eq(
      tu_send(&half, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                     "\"params\":{\"protocolVersion\":\"2025-06-18\","
                     "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
                     "\"version\":\"1\"}}}"),
      0);
  tu_clear(&half);
  tu_peer_open(&fresh, srv, NULL);
  /* notifications/initialized before initialize does not count. */
  tu_peer_open(&stray, srv, NULL);
  ck_assert_int_eq(
      tu_send(&stray,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
      0);
  ck_assert_uint_eq(stray.nout, 0);

  mcp_tool t = writer("t");
  expect_accepted(srv, &t);
  ck_assert_uint_eq(ready.nout, 1);
  tu_assert_msg(&ready, 0, list_changed);
  ck_assert_uint_eq(half.nout, 0);
  ck_assert_uint_eq(fresh.nout, 0);
  ck_assert_uint_eq(stray.nout, 0);
  tu_clear(&ready);

  /* Refusals and failed removals change nothing and say nothing. */
  expect_refused(srv, &t, MCP_EEXIST, "t", "already registered");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "nope"), MCP_ENOENT);
  mcp_tool bad = writer("bad");
  bad.handler = NULL;
  expect_refused(srv, &bad, MCP_EINVAL, "bad", "handler");
  ck_assert_uint_eq(ready.nout, 0);

  ck_assert_int_eq(mcp_server_remove_tool(srv, "t"), 0);
  ck_assert_uint_eq(ready.nout, 1);
  tu_assert_msg(&ready, 0, list_changed);
  ck_assert_uint_eq(half.nout, 0);
  ck_assert_uint_eq(fresh.nout, 0);
  ck_assert_uint_eq(stray.nout, 0);
  tu_clear(&ready);

  /* Once the half-open session finishes its handshake it is told too; a
   * freed session is forgotten. */
  ck_assert_int_eq(
      tu_send(&half,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
      0);
  tu_peer_close(&fresh);
  expect_accepted(srv, &t);
  ck_assert_uint_eq(ready.nout, 1);
  ck_assert_uint_eq(half.nout, 1);
  tu_assert_msg(&half, 0, list_changed);
  ck_assert_uint_eq(stray.nout, 0);

  tu_peer_close(&ready);
  tu_peer_close(&half);
  tu_peer_close(&stray);
  mcp_server_free(srv);
}
END_TEST

/* ---- pagination ---------------------------------------------------------- */

/* Names on one tools/list page, comma-separated, into names; returns the
 * nextCursor (static copy) or NULL. */
static const char *page(tu_peer *p, const char *cursor, char *names,
                        size_t size) {
  static char next[64];
  char params[256];
  cJSON *m;
  if (cursor) {
    snprintf(params, sizeof params, "{\"cursor\":\"%s\"}", cursor);
    m = list_tools(p, params);
  } else {
    m = list_tools(p, NULL);
  }
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result");
  ck_assert_msg(result != NULL, "tools/list failed: %s", p->out[0]);
  names[0] = '\0';
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(result, "tools");
  for (const cJSON *t = tools ? tools->child : NULL; t; t = t->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
    ck_assert(cJSON_IsString(n));
    if (names[0])
      strncat(names, ",", size - strlen(names) - 1);
    strncat(names, n->valuestring, size - strlen(names) - 1);
  }
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(result, "nextCursor");
  const char *ret = NULL;
  if (c) {
    ck_assert(cJSON_IsString(c));
    ck_assert_uint_lt(strlen(c->valuestring), sizeof next);
    strcpy(next, c->valuestring);
    ret = next;
  }
  cJSON_Delete(m);
  return ret;
}

/* Registers e, c, a, d, b: registration order is not name order. */
static mcp_server *five_tools(void) {
  mcp_server *srv = new_server();
  static const char *const names[] = {"e", "c", "a", "d", "b"};
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    mcp_tool t = i % 2 ? reader(names[i]) : writer(names[i]);
    expect_accepted(srv, &t);
  }
  mcp_server_set_page_size(srv, 2);
  return srv;
}

START_TEST(pages_in_registration_order) {
  mcp_server *srv = five_tools();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  char names[256], c1[64], c2[64];
  const char *c = page(&p, NULL, names, sizeof names);
  ck_assert_str_eq(names, "e,c");
  ck_assert_ptr_nonnull(c);
  strcpy(c1, c);
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "a,d");
  ck_assert_ptr_nonnull(c);
  strcpy(c2, c);
  c = page(&p, c2, names, sizeof names);
  ck_assert_str_eq(names, "b");
  ck_assert_ptr_null(c);

  /* The same cursor gives the same page again; a second session agrees
   * byte for byte. */
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "a,d");
  ck_assert_str_eq(c, c2);
  tu_peer q;
  tu_peer_open(&q, srv, NULL);
  tu_initialize(&q, "2025-11-25");
  for (int round = 0; round < 2; round++) {
    const char *cur = round ? c1 : NULL;
    cJSON *mp, *mq;
    char params[128];
    snprintf(params, sizeof params, "{\"cursor\":\"%s\"}", c1);
    mp = list_tools(&p, cur ? params : NULL);
    mq = list_tools(&q, cur ? params : NULL);
    ck_assert_str_eq(p.out[0], q.out[0]);
    cJSON_Delete(mp);
    cJSON_Delete(mq);
  }
  /* A tool added later comes last. */
  mcp_tool t = reader("0");
  expect_accepted(srv, &t);
  c = page(&p, c2, names, sizeof names);
  ck_assert_str_eq(names, "b,0");
  ck_assert_ptr_null(c);
  tu_peer_close(&q);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(pages_bad_cursor) {
  static const char *const bad[] = {
      "{\"cursor\":\"\"}",
      "{\"cursor\":\"x\"}",
      "{\"cursor\":\"t\"}",
      "{\"cursor\":\"t12a\"}",
      "{\"cursor\":\"t123456789012345678901234567890\"}",
      "{\"cursor\":\"T1\"}",
      "{\"cursor\":\" t1\"}",
      "{\"cursor\":\"t1 \"}",
      "{\"cursor\":\"t-1\"}",
      "{\"cursor\":\"t+1\"}",
      "{\"cursor\":2}",
      "{\"cursor\":null}",
      "{\"cursor\":true}",
      "{\"cursor\":{}}",
      "{\"cursor\":[\"t2\"]}",
      /* Well formed, but never issued by this registry. */
      "{\"cursor\":\"t999999\"}",
      "{\"cursor\":\"t0\"}",
      "{\"cursor\":\"t007\"}",
  };
  mcp_server *srv = five_tools();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-06-18");
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    cJSON *m = list_tools(&p, bad[i]);
    const char *why = tu_json_match(
        m, "{\"id\":3,\"error\":{\"code\":-32602},\"result\":\"<absent>\"}");
    ck_assert_msg(why == NULL, "%s: %s: %s", bad[i], why, p.out[0]);
    cJSON_Delete(m);
  }
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* The one cursor codec, on its own: what it writes it reads back, for any
 * number the list has given; it refuses anything but exactly its tag and
 * 16 lowercase hex digits, a number the list never gave (0, past the
 * newest), another list's cursor and another key's, leaving *v alone. */
START_TEST(cursor_codec) {
  unsigned char key[MCP__CURSOR_KEY], other[MCP__CURSOR_KEY];
  for (size_t i = 0; i < sizeof key; i++) {
    key[i] = (unsigned char)(i * 7 + 1);
    other[i] = (unsigned char)(i * 7 + 2);
  }
  const unsigned long long nums[] = {
      1, 2, 3, 255, 256, 65536, 1ull << 32, (1ull << 63) + 5, ~0ull};
  char c[MCP__CURSOR_LEN + 1];
  for (size_t i = 0; i < TU_COUNT(nums); i++) {
    mcp__cursor_encode(key, 't', nums[i], c);
    ck_assert_uint_eq(strlen(c), MCP__CURSOR_LEN);
    ck_assert_int_eq(c[0], 't');
    ck_assert_uint_eq(strspn(c + 1, "0123456789abcdef"), 16);
    unsigned long long v = 0;
    ck_assert_int_eq(mcp__cursor_decode(key, 't', c, nums[i], &v), 0);
    ck_assert(v == nums[i]);
    ck_assert_int_eq(mcp__cursor_decode(key, 't', c, ~0ull, &v), 0);
    ck_assert(v == nums[i]);
    /* Past the newest number, another list, another key. */
    v = 42;
    if (nums[i] > 1)
      ck_assert_int_eq(mcp__cursor_decode(key, 't', c, nums[i] - 1, &v),
                       MCP_EINVAL);
    ck_assert_int_eq(mcp__cursor_decode(key, 'k', c, ~0ull, &v), MCP_EINVAL);
    unsigned long long w = 0;
    if (mcp__cursor_decode(other, 't', c, ~0ull, &w) == 0)
      ck_assert(w != nums[i]);
    c[0] = 'k';
    if (mcp__cursor_decode(key, 'k', c, ~0ull, &w) == 0)
      ck_assert(w != nums[i]);
    ck_assert(v == 42);
  }
  /* The same number, another list or key: another cursor. */
  char a[MCP__CURSOR_LEN + 1], b[MCP__CURSOR_LEN + 1];
  mcp__cursor_encode(key, 't', 7, a);
  mcp__cursor_encode(key, 'p', 7, b);
  ck_assert_str_ne(a + 1, b + 1);
  mcp__cursor_encode(other, 't', 7, b);
  ck_assert_str_ne(a, b);

  /* 0 is never a cursor's number: it is where a listing starts. */
  mcp__cursor_encode(key, 't', 0, c);
  unsigned long long v = 42;
  ck_assert_int_eq(mcp__cursor_decode(key, 't', c, ~0ull, &v), MCP_EINVAL);
  ck_assert(v == 42);

  /* Shapes: every change of a good cursor's form is refused. */
  mcp__cursor_encode(key, 't', 5, c);
  char upper[MCP__CURSOR_LEN + 1];
  memcpy(upper, c, sizeof upper);
  for (int i = 1; i < MCP__CURSOR_LEN; i++)
    if (upper[i] >= 'a')
      upper[i] = (char)(upper[i] - 'a' + 'A');
  char shorter[MCP__CURSOR_LEN], longer[MCP__CURSOR_LEN + 2], spaced[32],
      signed_[32];
  memcpy(shorter, c, MCP__CURSOR_LEN - 1);
  shorter[MCP__CURSOR_LEN - 1] = '\0';
  snprintf(longer, sizeof longer, "%s0", c);
  snprintf(spaced, sizeof spaced, " %s", c);
  snprintf(signed_, sizeof signed_, "t+%s", c + 2);
  const char *bad[] = {NULL,
                       "",
                       "t",
                       "T",
                       shorter,
                       longer,
                       spaced,
                       signed_,
                       "t-000000000000005",
                       "t0x00000000000005",
                       "tzzzzzzzzzzzzzzzz"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    v = 42;
    ck_assert_msg(mcp__cursor_decode(key, 't', bad[i], ~0ull, &v) == MCP_EINVAL,
                  "accepted %s", bad[i] ? bad[i] : "(null)");
    ck_assert(v == 42);
  }
  bool has_letter = strpbrk(c + 1, "abcdef") != NULL;
  v = 42;
  ck_assert_int_eq(mcp__cursor_decode(key, 't', upper, ~0ull, &v),
                   has_letter ? MCP_EINVAL : 0);
  /* An embedded NUL ends the cursor early. */
  char nul[MCP__CURSOR_LEN + 1];
  memcpy(nul, c, sizeof nul);
  nul[8] = '\0';
  v = 42;
  ck_assert_int_eq(mcp__cursor_decode(key, 't', nul, ~0ull, &v), MCP_EINVAL);
  ck_assert(v == 42);
}
END_TEST

START_TEST(pages_cursor_survives_removal) {
  mcp_server *srv = five_tools();
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  char names[256], c1[64];
  const char *c = page(&p, NULL, names, sizeof names);
  ck_assert_str_eq(names, "e,c");
  strcpy(c1, c);
  /* Remove both tools of the first page, including the one the cursor
   * points after: the next page still continues after it. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "c"), 0);
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "a,d");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "e"), 0);
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "a,d");
  ck_assert_ptr_nonnull(c);
  /* Removing a tool of the next page shifts the rest up. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "a"), 0);
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "d,b");
  ck_assert_ptr_null(c);
  /* Removing everything after the cursor leaves an empty last page. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "d"), 0);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "b"), 0);
  c = page(&p, c1, names, sizeof names);
  ck_assert_str_eq(names, "");
  ck_assert_ptr_null(c);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(pages_default_size) {
  mcp_server *srv = new_server();
  for (int i = 0; i < 101; i++) {
    char name[16];
    snprintf(name, sizeof name, "t%03d", i);
    mcp_tool t = reader(name);
    expect_accepted(srv, &t);
  }
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  mcp_server_set_page_size(srv, 7);
  mcp_server_set_page_size(srv, 0); /* back to the default, 100 */
  char names[4096];
  const char *c = page(&p, NULL, names, sizeof names);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq(strlen(names), 100 * 5 - 1);
  ck_assert(strncmp(names, "t000,t001,", 10) == 0);
  char cur[64];
  strcpy(cur, c);
  c = page(&p, cur, names, sizeof names);
  ck_assert_str_eq(names, "t100");
  ck_assert_ptr_null(c);
  /* Page size 1 walks them one by one. */
  mcp_server_set_page_size(srv, 1);
  int pages = 0;
  c = NULL;
  do {
    if (c)
      strcpy(cur, c);
    c = page(&p, pages ? cur : NULL, names, sizeof names);
    char want[16];
    snprintf(want, sizeof want, "t%03d", pages);
    ck_assert_str_eq(names, want);
    pages++;
  } while (c);
  ck_assert_int_eq(pages, 101);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- allocation failure -------------------------------------------------- */

static mcp_tool full_tool(void) {
  static const char *const scopes[] = {"tools.read", "tools:write", NULL};
  mcp_tool t = writer("full.tool");
  t.title = "Full";
  t.annotations.title = "Full tool";
  t.input_schema = "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":"
                   "\"string\"},\"n\":{\"type\":[\"integer\",\"null\"]}},"
                   "\"required\":[\"q\"],\"additionalProperties\":false}";
  t.output_schema = "{\"type\":\"object\",\"properties\":{\"hits\":{\"type\":"
                    "\"array\",\"items\":{\"type\":\"string\"}}}}";
  t.scopes = scopes;
  t.icons = TEST_ICONS;
  t.meta = "{\"com.example/kind\":\"full\",\"ui\":{\"visibility\":[\"app\"]}}";
  return t;
}

/* Whether srv has a tool named name, through the public API only: a
 * second registration of a registered name is refused. */
static bool has_tool(mcp_server *srv, const char *name) {
  mcp_tool t = reader(name);
  int rc = mcp_server_add_tool(srv, &t, NULL);
  if (rc == 0)
    ck_assert_int_eq(mcp_server_remove_tool(srv, name), 0);
  else
    ck_assert_int_eq(rc, MCP_EEXIST);
  return rc == MCP_EEXIST;
}

/* Whether many_tools_found_by_name removes tool i. */
static bool removed_tool(int i) {
  return i < 50 || i >= 2950 || (i >= 1000 && i < 2000 && i % 2 == 0) ||
         (i >= 2000 && i % 7 == 0);
}

/* Thousands of tools are found by name (the registry's index), also after
 * removals at the start, at the end (last first) and in the middle shifted
 * the rest; tools/call reaches the last one left, and a removed name is
 * free again. */
START_TEST(many_tools_found_by_name) {
  mcp_server *srv = new_server();
  char name[32];
  for (int i = 0; i < 3000; i++) {
    snprintf(name, sizeof name, "t%d", i);
    mcp_tool t = reader(name);
    expect_accepted(srv, &t);
  }
  for (int i = 2999; i >= 0; i--) {
    snprintf(name, sizeof name, "t%d", i);
    if (removed_tool(i))
      ck_assert_int_eq(mcp_server_remove_tool(srv, name), 0);
  }
  for (int i = 0; i < 3000; i++) {
    snprintf(name, sizeof name, "t%d", i);
    ck_assert_msg(has_tool(srv, name) == !removed_tool(i), "%s", name);
  }
  ck_assert(!has_tool(srv, "t3000"));
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-06-18");
  cJSON *m = tu_call_tool(&p, "1", "t2949", NULL);
  tu_assert_json(m,
                 "{\"id\":1,\"result\":{\"content\":[{\"type\":\"text\"}]}}");
  cJSON_Delete(m);
  m = tu_call_tool(&p, "2", "t1000", NULL);
  tu_assert_json(m, "{\"id\":2,\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* The 17th tool grows the index: each allocation of that registration
 * failing in turn leaves the 16 before it found and the 17th unknown. */
START_TEST(index_growth_allocation_failure) {
  char names[17][8];
  long n;
  int rc = -1;
  for (n = 1; n < 1000; n++) {
    tu_alloc_install(0);
    mcp_server *srv = new_server();
    for (int i = 0; i < 17; i++)
      snprintf(names[i], sizeof names[i], "g%d", i);
    for (int i = 0; i < 16; i++) {
      mcp_tool t = reader(names[i]);
      expect_accepted(srv, &t);
    }
    mcp_tool t = reader(names[16]);
    tu_alloc_arm(n);
    rc = mcp_server_add_tool(srv, &t, NULL);
    long failures = tu_alloc_disarm();
    ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "allocation %ld: rc %d", n, rc);
    ck_assert_int_eq(failures, rc == MCP_ENOMEM);
    for (int i = 0; i < 16; i++)
      ck_assert_msg(has_tool(srv, names[i]), "allocation %ld: %s lost", n,
                    names[i]);
    ck_assert(has_tool(srv, names[16]) == (rc == 0));
    mcp_server_free(srv);
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
}
END_TEST

START_TEST(add_tool_allocation_failure) {
  mcp_tool t = full_tool();
  long n;
  int rc = -1;
  for (n = 1; n < 10000; n++) {
    tu_alloc_install(0);
    mcp_server *srv = new_server();
    tu_alloc_arm(n);
    rc = mcp_server_add_tool(srv, &t, NULL);
    long failures = tu_alloc_disarm();
    if (rc == MCP_ENOMEM) {
      ck_assert_int_eq(failures, 1);
      ck_assert_msg(strstr(mcp_server_errmsg(srv), "out of memory") != NULL,
                    "allocation %ld: message \"%s\"", n,
                    mcp_server_errmsg(srv));
      ck_assert_int_eq(mcp_server_remove_tool(srv, t.name), MCP_ENOENT);
    } else {
      ck_assert_msg(rc == 0, "allocation %ld: rc %d (%s)", n, rc,
                    mcp_server_errmsg(srv));
      ck_assert_msg(failures == 0, "allocation %ld failed unnoticed", n);
    }
    mcp_server_free(srv);
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(n > 10, "only %ld allocations", n);
}
END_TEST

/* With a session to tell, the list_changed broadcast allocates too; its
 * failure cannot undo the registration, so the call succeeds and logs. */
START_TEST(add_tool_allocation_failure_with_session) {
  mcp_tool t = full_tool();
  long n;
  int rc = -1;
  bool broadcast_failed = false;
  for (n = 1; n < 10000; n++) {
    tu_alloc_install(0);
    mcp_server *srv = new_server();
    mcp_server_set_log(srv, tu_silent_log, NULL);
    tu_peer p;
    tu_peer_open(&p, srv, NULL);
    tu_initialize(&p, "2025-11-25");
    tu_alloc_arm(n);
    rc = mcp_server_add_tool(srv, &t, NULL);
    long failures = tu_alloc_disarm();
    if (rc == MCP_ENOMEM) {
      ck_assert_int_eq(failures, 1);
      ck_assert_uint_eq(p.nout, 0);
      ck_assert_int_eq(mcp_server_remove_tool(srv, t.name), MCP_ENOENT);
    } else {
      ck_assert_msg(rc == 0, "allocation %ld: rc %d (%s)", n, rc,
                    mcp_server_errmsg(srv));
      /* Registered either way; told unless the broadcast failed. */
      ck_assert_uint_eq(p.nout, failures ? 0 : 1);
      if (failures)
        broadcast_failed = true;
      tu_clear(&p);
      ck_assert_int_eq(mcp_server_remove_tool(srv, t.name), 0);
    }
    tu_peer_close(&p);
    mcp_server_free(srv);
    tu_assert_no_leak(n);
    tu_alloc_remove();
    if (rc == 0 && failures == 0)
      break;
  }
  ck_assert_int_eq(rc, 0);
  ck_assert(broadcast_failed);
}
END_TEST

/* ---- argument check before the handler ----------------------------------- */

static mcp_server *args_server(tu_peer *p) {
  mcp_server *srv = new_server();
  mcp_tool t = writer("typed");
  t.input_schema = "{\"type\":\"object\",\"properties\":{"
                   "\"s\":{\"type\":\"string\"},"
                   "\"n\":{\"type\":\"number\"},"
                   "\"i\":{\"type\":\"integer\"},"
                   "\"b\":{\"type\":\"boolean\"},"
                   "\"o\":{\"type\":\"object\"},"
                   "\"a\":{\"type\":\"array\"},"
                   "\"z\":{\"type\":\"null\"},"
                   "\"u\":{\"type\":[\"string\",\"null\"]},"
                   "\"any\":{}},"
                   "\"required\":[\"s\"],\"additionalProperties\":false}";
  expect_accepted(srv, &t);
  t = writer("open");
  t.input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                   "\"number\"}}}";
  expect_accepted(srv, &t);
  t = writer("needs");
  t.input_schema = "{\"type\":\"object\",\"required\":[\"first\",\"second\"]}";
  expect_accepted(srv, &t);
  tu_peer_open(p, srv, NULL);
  tu_initialize(p, "2025-11-25");
  return srv;
}

/* Calls tool with args and expects an isError result whose text contains
 * each fragment; the handler must not run. */
#define expect_invalid(p, tool, args, frag1, frag2)                            \
  expect_invalid_at(__LINE__, (p), (tool), (args), (frag1), (frag2))
static void expect_invalid_at(int line, tu_peer *p, const char *tool,
                              const char *args, const char *frag1,
                              const char *frag2) {
  int before = handler_calls;
  cJSON *m = tu_call_tool(p, "7", tool, args);
  const char *why = tu_json_match(
      m, "{\"id\":7,\"error\":\"<absent>\",\"result\":{\"isError\":true,"
         "\"content\":[{\"type\":\"text\",\"text\":\"<any>\"}]}}");
  ck_assert_msg(why == NULL, "line %d: %s: %s", line, why, p->out[0]);
  const char *text = result_text(m);
  ck_assert_msg(strstr(text, frag1) != NULL, "line %d: \"%s\" lacks \"%s\"",
                line, text, frag1);
  ck_assert_msg(frag2 == NULL || strstr(text, frag2) != NULL,
                "line %d: \"%s\" lacks \"%s\"", line, text, frag2);
  ck_assert_msg(handler_calls == before, "line %d: the handler ran", line);
  cJSON_Delete(m);
}

#define expect_valid(p, tool, args)                                            \
  expect_valid_at(__LINE__, (p), (tool), (args))
static void expect_valid_at(int line, tu_peer *p, const char *tool,
                            const char *args) {
  int before = handler_calls;
  cJSON *m = tu_call_tool(p, "7", tool, args);
  const char *why = tu_json_match(
      m, "{\"id\":7,\"result\":{\"isError\":\"<absent>\",\"content\":[{"
         "\"type\":\"text\",\"text\":\"<any>\"}]}}");
  ck_assert_msg(why == NULL, "line %d: %s: %s", line, why, p->out[0]);
  ck_assert_msg(handler_calls == before + 1, "line %d: the handler did not run",
                line);
  cJSON_Delete(m);
}

START_TEST(args_missing_required) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  expect_invalid(&p, "typed", "{}", "missing required property", "\"s\"");
  expect_invalid(&p, "typed", "{\"n\":1}", "missing required property",
                 "\"s\"");
  expect_invalid(&p, "needs", "{\"first\":1}", "missing required property",
                 "\"second\"");
  expect_invalid(&p, "needs", "{\"second\":1}", "missing required property",
                 "\"first\"");
  /* null is present, as JSON Schema says. */
  expect_valid(&p, "needs", "{\"first\":null,\"second\":0}");
  expect_valid(&p, "typed", "{\"s\":\"\"}");
  ck_assert_int_eq(handler_calls, 2);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_wrong_type) {
  static const struct {
    const char *args, *property, *want;
  } bad[] = {
      {"{\"s\":1}", "at /s:", "must be a string, not integer"},
      {"{\"s\":true}", "at /s:", "must be a string, not boolean"},
      {"{\"s\":null}", "at /s:", "must be a string, not null"},
      {"{\"s\":\"x\",\"n\":\"1\"}", "at /n:", "must be a number, not string"},
      {"{\"s\":\"x\",\"n\":[1]}", "at /n:", "must be a number, not array"},
      {"{\"s\":\"x\",\"b\":0}", "at /b:", "must be a boolean, not integer"},
      {"{\"s\":\"x\",\"o\":[]}", "at /o:", "must be an object, not array"},
      {"{\"s\":\"x\",\"a\":{}}", "at /a:", "must be an array, not object"},
      {"{\"s\":\"x\",\"z\":false}", "at /z:", "must be null, not boolean"},
  };
  tu_peer p;
  mcp_server *srv = args_server(&p);
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    expect_invalid(&p, "typed", bad[i].args, bad[i].property, bad[i].want);
  expect_valid(&p, "typed",
               "{\"s\":\"x\",\"n\":1.5,\"b\":false,\"o\":{},\"a\":[],"
               "\"z\":null,\"any\":[1,{}]}");
  ck_assert_int_eq(handler_calls, 1);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_integer_vs_number) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"i\":1.5}",
                 "at /i:", "must be an integer, not number");
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"i\":\"2\"}",
                 "at /i:", "must be an integer, not string");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"i\":2}");
  /* JSON Schema: an integer is a number without a fractional part. */
  expect_valid(&p, "typed", "{\"s\":\"x\",\"i\":2.0}");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"i\":1e2}");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"i\":-9007199254740993}");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"n\":2}");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"n\":-0.25e3}");
  expect_valid(&p, "open", "{\"n\":2}");
  ck_assert_int_eq(handler_calls, 7);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_type_array) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  expect_valid(&p, "typed", "{\"s\":\"x\",\"u\":\"text\"}");
  expect_valid(&p, "typed", "{\"s\":\"x\",\"u\":null}");
  /* The message names the accepted types, without a stray article. */
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"u\":1}",
                 "at /u:", "must be one of string, null, not integer.");
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"u\":{}}",
                 "at /u:", "must be one of string, null, not object.");
  ck_assert_int_eq(handler_calls, 2);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* structuredContent is checked against outputSchema by default, in the
 * build check-gcc makes as `make` does (RelWithDebInfo, NDEBUG): a
 * mismatch, or no structured content at all, is the author's bug, logged
 * with the tool, the path and the keyword, and the client gets -32603 with
 * no detail. out_json NULL: the handler returns text only; "error": it
 * reports a tool error. */
static const char *out_json;
static int structured(mcp_call *call, void *user_data) {
  (void)user_data;
  if (out_json == NULL)
    return mcp_result_text(call, "just text");
  if (strcmp(out_json, "error") == 0)
    return mcp_result_error(call, "the count failed");
  return mcp_result_structured(call, out_json);
}

static char out_log[2048];
static void keep_log(mcp_log_level level, const char *message, void *ud) {
  (void)ud;
  size_t n = strlen(out_log);
  if (level >= MCP_LOG_ERROR)
    snprintf(out_log + n, sizeof out_log - n, "%s\n", message);
}

START_TEST(output_checked_by_default) {
  mcp_server *srv = new_server();
  mcp_server_set_log(srv, keep_log, NULL);
  mcp_tool t = reader("out");
  t.output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}},\"required\":[\"n\"]}";
  t.handler = structured;
  expect_accepted(srv, &t);
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  static const char internal[] =
      "{\"error\":{\"code\":-32603,\"message\":\"Internal "
      "error\",\"data\":\"<absent>\"},\"result\":\"<absent>\"}";
  out_json = "{\"n\":\"two\"}";
  out_log[0] = '\0';
  cJSON *m = tu_call_tool(&p, "7", "out", NULL);
  tu_assert_json(m, internal);
  cJSON_Delete(m);
  ck_assert_ptr_nonnull(strstr(out_log, "tool \"out\""));
  ck_assert_msg(strstr(out_log, "at /n: type:") != NULL, "%s", out_log);
  /* No structured content at all breaks the promise too. */
  out_json = NULL;
  out_log[0] = '\0';
  m = tu_call_tool(&p, "8", "out", NULL);
  tu_assert_json(m, internal);
  cJSON_Delete(m);
  ck_assert_ptr_nonnull(strstr(out_log, "tool \"out\": declares an "
                                        "outputSchema but returned no "
                                        "structuredContent"));
  /* A tool error needs none. */
  out_json = "error";
  m = tu_call_tool(&p, "9", "out", NULL);
  tu_assert_json(m, "{\"result\":{\"isError\":true,\"structuredContent\":"
                    "\"<absent>\"}}");
  cJSON_Delete(m);
  /* A 2025-03-26 client never sees structuredContent, but the tool still
   * owes it. */
  tu_peer q;
  tu_peer_open(&q, srv, NULL);
  tu_initialize(&q, "2025-03-26");
  out_json = NULL;
  m = tu_call_tool(&q, "10", "out", NULL);
  tu_assert_json(m, internal);
  cJSON_Delete(m);
  out_json = "{\"n\":3}";
  m = tu_call_tool(&q, "11", "out", NULL);
  tu_assert_json(m, "{\"result\":{\"structuredContent\":\"<absent>\","
                    "\"content\":[{\"text\":\"{\\\"n\\\":3}\"}]}}");
  cJSON_Delete(m);
  tu_peer_close(&q);
  /* Off, nothing is checked. */
  mcp_server_set_check_output(srv, false);
  out_json = NULL;
  m = tu_call_tool(&p, "12", "out", NULL);
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"just text\"}]}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(output_checked_against_output_schema) {
  mcp_server *srv = new_server();
  mcp_server_set_log(srv, tu_silent_log, NULL);
  mcp_tool t = reader("out");
  t.output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}},\"required\":[\"n\"]}";
  t.handler = structured;
  expect_accepted(srv, &t);
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  mcp_server_set_check_output(srv, true);
  out_json = "{\"n\":\"two\"}";
  cJSON *m = tu_call_tool(&p, "7", "out", NULL);
  tu_assert_json(m, "{\"error\":{\"code\":-32603,\"message\":\"Internal "
                    "error\",\"data\":\"<absent>\"},\"result\":\"<absent>\"}");
  cJSON_Delete(m);
  out_json = "{\"n\":2}";
  m = tu_call_tool(&p, "7", "out", NULL);
  tu_assert_json(m, "{\"result\":{\"structuredContent\":{\"n\":2}}}");
  cJSON_Delete(m);
  /* Off, the library trusts the author. */
  mcp_server_set_check_output(srv, false);
  out_json = "{\"n\":\"two\"}";
  m = tu_call_tool(&p, "7", "out", NULL);
  tu_assert_json(m, "{\"result\":{\"structuredContent\":{\"n\":\"two\"}}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* "format" is an annotation unless the tool opts in to checking it. */
START_TEST(format_checked_only_on_request) {
  mcp_server *srv = new_server();
  mcp_tool t = reader("loose");
  t.input_schema = "{\"type\":\"object\",\"properties\":{\"d\":{\"type\":"
                   "\"string\",\"format\":\"date\"}}}";
  expect_accepted(srv, &t);
  t.name = "strict";
  t.flags = MCP_TOOL_ASSERT_FORMATS;
  expect_accepted(srv, &t);
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  cJSON *m = tu_call_tool(&p, "7", "loose", "{\"d\":\"not a date\"}");
  tu_assert_json(m, "{\"result\":{\"isError\":\"<absent>\"}}");
  cJSON_Delete(m);
  m = tu_call_tool(&p, "7", "strict", "{\"d\":\"not a date\"}");
  tu_assert_json(m, "{\"result\":{\"isError\":true}}");
  cJSON_Delete(m);
  m = tu_call_tool(&p, "7", "strict", "{\"d\":\"2026-11-30\"}");
  tu_assert_json(m, "{\"result\":{\"isError\":\"<absent>\"}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_additional_properties) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"extra\":1}",
                 "unexpected property", "\"extra\"");
  /* Property names are case-sensitive. */
  expect_invalid(&p, "typed", "{\"s\":\"x\",\"S\":\"y\"}",
                 "unexpected property", "\"S\"");
  /* Without additionalProperties:false, extras pass. */
  expect_valid(&p, "open", "{\"extra\":1}");
  expect_valid(&p, "needs", "{\"first\":1,\"second\":2,\"third\":3}");
  ck_assert_int_eq(last_nargs, 3);
  ck_assert_int_eq(handler_calls, 2);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_missing_is_empty_object) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  expect_valid(&p, "open", NULL);
  ck_assert_int_eq(last_nargs, 0);
  /* ...and an empty object still lacks what is required. */
  expect_invalid(&p, "typed", NULL, "missing required property", "\"s\"");
  expect_invalid(&p, "needs", NULL, "missing required property", "\"first\"");
  ck_assert_int_eq(handler_calls, 1);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(args_not_an_object) {
  static const char *const bad[] = {
      "[]", "[{\"s\":\"x\"}]", "\"s\"", "1", "true", "null"};
  tu_peer p;
  mcp_server *srv = args_server(&p);
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    cJSON *m = tu_call_tool(&p, "7", "open", bad[i]);
    const char *why = tu_json_match(
        m, "{\"id\":7,\"error\":{\"code\":-32602},\"result\":\"<absent>\"}");
    ck_assert_msg(why == NULL, "%s: %s: %s", bad[i], why, p.out[0]);
    cJSON_Delete(m);
  }
  ck_assert_int_eq(handler_calls, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(call_unknown_tool) {
  tu_peer p;
  mcp_server *srv = args_server(&p);
  cJSON *m = tu_call_tool(&p, "7", "nope", "{}");
  tu_assert_json(m, "{\"id\":7,\"error\":{\"code\":-32602,\"message\":"
                    "\"Unknown tool: nope\"},\"result\":\"<absent>\"}");
  cJSON_Delete(m);
  /* Tool names are case-sensitive. */
  m = tu_call_tool(&p, "7", "OPEN", "{}");
  tu_assert_json(m, "{\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  /* A name that is not a string is malformed params. */
  m = tu_request(&p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                     "\"params\":{\"name\":5}}");
  tu_assert_json(m, "{\"id\":8,\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  m = tu_request(&p,
                 "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\"}");
  tu_assert_json(m, "{\"id\":9,\"error\":{\"code\":-32602}}");
  cJSON_Delete(m);
  ck_assert_int_eq(handler_calls, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static Suite *registry_suite(void) {
  Suite *s = suite_create("registry");
  TCase *t = tcase_create("rules");
  tcase_add_test(t, registration_rules);
  tcase_add_test(t, rule_every_problem_at_once);
  tcase_add_test(t, param_headers_checked);
  tcase_add_test(t, errmsg_is_per_thread);
  tcase_add_test(t, rule_unique_name);
  tcase_add_test(t, rule_null_tool);
  suite_add_tcase(s, t);

  t = tcase_create("wire");
  tcase_add_test(t, wire_hints_explicit);
  tcase_add_test(t, wire_annotation_title);
  tcase_add_test(t, wire_per_version);
  tcase_add_test(t, wire_default_input_schema);
  tcase_add_test(t, wire_icons_and_meta);
  suite_add_tcase(s, t);

  t = tcase_create("remove");
  tcase_add_test(t, remove_tool);
  tcase_add_test(t, many_tools_found_by_name);
  tcase_add_test(t, index_growth_allocation_failure);
  tcase_add_test(t, list_changed_to_ready_sessions_only);
  suite_add_tcase(s, t);

  t = tcase_create("pages");
  tcase_add_test(t, pages_in_registration_order);
  tcase_add_test(t, pages_bad_cursor);
  tcase_add_test(t, pages_cursor_survives_removal);
  tcase_add_test(t, pages_default_size);
  tcase_add_test(t, cursor_codec);
  suite_add_tcase(s, t);

  t = tcase_create("arguments");
  tcase_add_test(t, args_missing_required);
  tcase_add_test(t, args_wrong_type);
  tcase_add_test(t, args_integer_vs_number);
  tcase_add_test(t, args_type_array);
  tcase_add_test(t, args_additional_properties);
  tcase_add_test(t, output_checked_against_output_schema);
  tcase_add_test(t, output_checked_by_default);
  tcase_add_test(t, format_checked_only_on_request);
  tcase_add_test(t, args_missing_is_empty_object);
  tcase_add_test(t, args_not_an_object);
  tcase_add_test(t, call_unknown_tool);
  suite_add_tcase(s, t);

  /* Every allocation failed in turn runs long under valgrind. */
  t = tcase_create("allocation");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, add_tool_allocation_failure);
  tcase_add_test(t, add_tool_allocation_failure_with_session);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(registry_suite()); }
