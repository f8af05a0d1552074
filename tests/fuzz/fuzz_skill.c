/* libFuzzer target: a skill's SKILL.md (lib/registry/skills.c), the YAML
 * subset reader of its frontmatter and the Agent Skills rules.
 *
 * Input: one byte choosing the skill's path (its last segment is the name
 * the frontmatter must give, so accepting inputs are reachable), then the
 * SKILL.md bytes. The skill is registered through the public API on a
 * server of its own.
 *
 * Checked beyond "no crash, no sanitizer report, no leak":
 *  - registration returns 0, MCP_EINVAL or MCP_ENOMEM, and a refusal is one
 *    valid UTF-8 line naming the skill;
 *  - an accepted skill's entry (skills/get) is a JSON object whose
 *    frontmatter holds a name equal to the path's last segment and a
 *    non-empty description, every member a string or an object of strings,
 *    and whose one resource is SKILL.md with its size;
 *  - resources/read of it returns the bytes as given (text when UTF-8);
 *  - the same bytes are refused or accepted alike a second time
 *    (registration keeps no state of a refusal). */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(mcp_log_level level, const char *message, void *ud) {
  (void)level;
  (void)message;
  (void)ud;
}

static const char *const paths[] = {"s", "team/s", "a-b", "notes-workflow"};
static const char *const uris[] = {
    "skill://s/SKILL.md", "skill://team/s/SKILL.md", "skill://a-b/SKILL.md",
    "skill://notes-workflow/SKILL.md"};
static const char *const names[] = {"s", "s", "a-b", "notes-workflow"};

/* The last message a session sent. */
typedef struct capture {
  char *last;
} capture;

static int on_send(const char *msg, size_t len, void *ud) {
  capture *c = ud;
  free(c->last);
  c->last = malloc(len + 1);
  if (c->last == NULL)
    abort();
  memcpy(c->last, msg, len);
  c->last[len] = '\0';
  return 0;
}

/* The reply to request on a fresh 2025-11-25 session of srv, parsed (NULL
 * when none came). */
static cJSON *ask(mcp_server *srv, const char *request) {
  capture c = {0};
  mcp_session *s;
  if (mcp_session_new(srv, NULL, on_send, &c, &s) != 0)
    abort();
  const char *init =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"f\",\"version\":\"1\"}}}";
  const char *ready = "{\"jsonrpc\":\"2.0\",\"method\":"
                      "\"notifications/initialized\"}";
  mcp_session_receive(s, init, strlen(init));
  mcp_session_receive(s, ready, strlen(ready));
  mcp_session_receive(s, request, strlen(request));
  mcp_session_free(s);
  cJSON *r = c.last ? cJSON_Parse(c.last) : NULL;
  free(c.last);
  return r;
}

static void check_refusal(const char *msg, const char *path) {
  size_t n = strlen(msg);
  if (n == 0 || memchr(msg, '\n', n) || !mcp__utf8_valid(msg, n))
    abort();
  char want[64];
  int k = snprintf(want, sizeof want, "skill \"%s\": ", path);
  if (strncmp(msg, want, (size_t)k) != 0 && strcmp(msg, "out of memory") != 0)
    abort();
}

static void check_entry(mcp_server *srv, size_t p, const uint8_t *md,
                        size_t len) {
  char req[160];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"skills/get\","
           "\"params\":{\"uri\":\"%s\"}}",
           uris[p]);
  cJSON *r = ask(srv, req);
  const cJSON *skill = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(r, "result"), "skill");
  const cJSON *fm = cJSON_GetObjectItemCaseSensitive(skill, "frontmatter");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(fm, "name");
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(fm, "description");
  if (!cJSON_IsString(name) || strcmp(name->valuestring, names[p]) != 0 ||
      !cJSON_IsString(desc) || desc->valuestring[0] == '\0')
    abort();
  for (const cJSON *m = fm->child; m; m = m->next) {
    if (cJSON_IsObject(m)) {
      for (const cJSON *v = m->child; v; v = v->next)
        if (!cJSON_IsString(v))
          abort();
    } else if (!cJSON_IsString(m)) {
      abort();
    }
  }
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(skill, "resources");
  const cJSON *size =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res, 0), "size");
  if (cJSON_GetArraySize(res) != 1 || !cJSON_IsNumber(size) ||
      (size_t)size->valuedouble != len)
    abort();
  cJSON_Delete(r);
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"%s\"}}",
           uris[p]);
  r = ask(srv, req);
  const cJSON *text = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetArrayItem(
          cJSON_GetObjectItemCaseSensitive(
              cJSON_GetObjectItemCaseSensitive(r, "result"), "contents"),
          0),
      "text");
  /* An accepted SKILL.md is UTF-8 (its frontmatter was read as text), so
   * it is served as text, byte for byte. */
  if (!cJSON_IsString(text) || strlen(text->valuestring) != len ||
      memcmp(text->valuestring, md, len) != 0)
    abort();
  cJSON_Delete(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 70000)
    return 0;
  size_t p = data[0] % 4;
  const uint8_t *md = data + 1;
  size_t len = size - 1;
  static const mcp_server_info info = {.name = "fuzz", .version = "1"};
  mcp_server *srv;
  if (mcp_server_new(&info, &srv) != 0)
    abort();
  mcp_server_set_log(srv, quiet, NULL);
  const mcp_skill_file files[] = {{.path = "SKILL.md", .data = md, .size = len},
                                  {.path = NULL}};
  const mcp_skill skill = {.path = paths[p], .files = files};
  int rc = mcp_server_add_skill(srv, &skill);
  if (rc != 0 && rc != MCP_EINVAL && rc != MCP_ENOMEM)
    abort();
  if (rc == MCP_EINVAL) {
    check_refusal(mcp_server_errmsg(srv), paths[p]);
    if (mcp_server_add_skill(srv, &skill) != MCP_EINVAL)
      abort();
  } else if (rc == 0) {
    check_entry(srv, p, md, len);
    if (mcp_server_remove_skill(srv, paths[p]) != 0 ||
        mcp_server_add_skill(srv, &skill) != 0)
      abort();
  }
  mcp_server_free(srv);
  return 0;
}
