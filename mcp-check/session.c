/* session.c: the client half of the protocol, as little of it as a check
 * needs, in both eras. */
#define _POSIX_C_SOURCE 200809L
#include "session.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mcpc_versions[] = {"2026-07-28", "2025-11-25", "2025-06-18",
                                     "2025-03-26", "2024-11-05", NULL};
#define MODERN "2026-07-28"
#define NEWEST_LEGACY "2025-11-25"

static int known(const char *v) {
  for (size_t i = 0; mcpc_versions[i]; i++)
    if (strcmp(mcpc_versions[i], v) == 0)
      return 1;
  return 0;
}

/* The client capabilities mcp-check declares: tool resolution, so that a
 * server marks its resolvable tools and answers tools/resolve. */
static void declare(cJSON *caps) {
  cJSON *ext = cJSON_AddObjectToObject(caps, "extensions");
  cJSON_AddObjectToObject(ext, MCPC_RESOLUTION);
}

/* A request of the session's era; params is taken (may be NULL). */
static cJSON *request(mcpc_session *s, const char *method, cJSON *params) {
  cJSON *m = cJSON_CreateObject();
  if (m == NULL || params == NULL)
    params = params ? params : cJSON_CreateObject();
  if (m == NULL || params == NULL) {
    cJSON_Delete(m);
    cJSON_Delete(params);
    return NULL;
  }
  cJSON_AddStringToObject(m, "jsonrpc", "2.0");
  cJSON_AddNumberToObject(m, "id", (double)++s->next_id);
  cJSON_AddStringToObject(m, "method", method);
  if (s->modern) {
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
    cJSON *info;
    if (meta == NULL)
      meta = cJSON_AddObjectToObject(params, "_meta");
    cJSON_AddStringToObject(meta, "io.modelcontextprotocol/protocolVersion",
                            s->version);
    declare(cJSON_AddObjectToObject(
        meta, "io.modelcontextprotocol/clientCapabilities"));
    info = cJSON_AddObjectToObject(meta, "io.modelcontextprotocol/clientInfo");
    cJSON_AddStringToObject(info, "name", "mcp-check");
    cJSON_AddStringToObject(info, "version", MCPC_VERSION);
  }
  cJSON_AddItemToObject(m, "params", params);
  return m;
}

/* Sends a request; x gets the answer. The HTTP headers follow the era. */
static int exchange(mcpc_session *s, cJSON *msg, const char *name,
                    const char *token, mcpc_exchange *x, char *why,
                    size_t size) {
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
  int rc;
  if (msg == NULL) {
    snprintf(why, size, "out of memory");
    return -1;
  }
  x->token = token ? token : s->token;
  x->timeout_ms = s->timeout_ms;
  x->protocol_version = s->version[0] ? s->version : NULL;
  x->method = s->modern ? method->valuestring : NULL;
  x->name = s->modern ? name : NULL;
  rc = mcpc_conn_exchange(s->conn, msg, x, why, size);
  cJSON_Delete(msg);
  return rc;
}

static const cJSON *member(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static void server_info(mcpc_session *s, const cJSON *info) {
  const cJSON *name = member(info, "name"), *version = member(info, "version");
  if (cJSON_IsString(name))
    snprintf(s->name, sizeof s->name, "%s", name->valuestring);
  if (cJSON_IsString(version))
    snprintf(s->server_version, sizeof s->server_version, "%s",
             version->valuestring);
}

/* Whether a server's capabilities list the tool-resolution extension. */
static int offers_resolution(const cJSON *caps) {
  return cJSON_IsObject(member(member(caps, "extensions"), MCPC_RESOLUTION));
}

/* The 2026-07-28 probe: 1 when the server discovered itself in that era,
 * 0 when it did not (fall back), -1 when it could not be spoken to. */
static int discover(mcpc_session *s, char *why, size_t size) {
  mcpc_exchange x = {0};
  const cJSON *result, *versions, *v;
  int found = 0;
  s->modern = 1;
  snprintf(s->version, sizeof s->version, "%s", MODERN);
  if (exchange(s, request(s, "server/discover", NULL), NULL, NULL, &x, why,
               size) < 0) {
    s->modern = 0;
    s->version[0] = '\0';
    return -1;
  }
  if (x.status == 401) {
    mcpc_exchange_clear(&x);
    return MCPC_UNAUTHORIZED + 1;
  }
  result = member(x.response, "result");
  versions = member(result, "supportedVersions");
  cJSON_ArrayForEach(v, versions) {
    if (cJSON_IsString(v) && strcmp(v->valuestring, MODERN) == 0)
      found = 1;
  }
  if (found) {
    server_info(s, member(member(result, "_meta"),
                          "io.modelcontextprotocol/serverInfo"));
    s->resolution = offers_resolution(member(result, "capabilities"));
  } else {
    s->modern = 0;
    s->version[0] = '\0';
  }
  mcpc_exchange_clear(&x);
  return found;
}

static int initialize(mcpc_session *s, const char *version, char *why,
                      size_t size) {
  mcpc_exchange x = {0};
  cJSON *params = cJSON_CreateObject(), *info, *note;
  const cJSON *result, *got;
  int rc = -1;
  if (params) {
    cJSON_AddStringToObject(params, "protocolVersion", version);
    declare(cJSON_AddObjectToObject(params, "capabilities"));
    info = cJSON_AddObjectToObject(params, "clientInfo");
    cJSON_AddStringToObject(info, "name", "mcp-check");
    cJSON_AddStringToObject(info, "version", MCPC_VERSION);
  }
  if (exchange(s, request(s, "initialize", params), NULL, NULL, &x, why, size) <
      0)
    return -1;
  if (x.status == 401) {
    mcpc_exchange_clear(&x);
    return MCPC_UNAUTHORIZED;
  }
  result = member(x.response, "result");
  got = member(result, "protocolVersion");
  if (!cJSON_IsObject(result) || !cJSON_IsString(got)) {
    const cJSON *msg = member(member(x.response, "error"), "message");
    if (x.status >= 300)
      snprintf(why, size, "initialize answered HTTP %ld", x.status);
    else
      snprintf(why, size, "initialize failed: %s",
               cJSON_IsString(msg) ? msg->valuestring
                                   : "no InitializeResult in the answer");
  } else if (!known(got->valuestring) ||
             strcmp(got->valuestring, MODERN) == 0) {
    snprintf(why, size,
             "the server offers protocol version %.32s, which mcp-check "
             "does not speak in a handshake",
             got->valuestring);
  } else {
    snprintf(s->version, sizeof s->version, "%s", got->valuestring);
    server_info(s, member(result, "serverInfo"));
    s->resolution = offers_resolution(member(result, "capabilities"));
    rc = 0;
  }
  mcpc_exchange_clear(&x);
  if (rc == 0) {
    /* The handshake's last word has no answer. */
    note = cJSON_CreateObject();
    if (note) {
      cJSON_AddStringToObject(note, "jsonrpc", "2.0");
      cJSON_AddStringToObject(note, "method", "notifications/initialized");
    }
    if (exchange(s, note, NULL, NULL, &x, why, size) < 0)
      rc = -1;
    mcpc_exchange_clear(&x);
  }
  return rc;
}

int mcpc_session_open(mcpc_session *s, mcpc_conn *conn, const char *token,
                      const char *want, unsigned timeout_ms, char *why,
                      size_t size) {
  memset(s, 0, sizeof *s);
  s->conn = conn;
  s->token = token;
  s->timeout_ms = timeout_ms;
  if (want == NULL)
    want = MODERN;
  if (!known(want)) {
    snprintf(why, size, "unknown protocol version %.32s", want);
    return -1;
  }
  if (strcmp(want, MODERN) == 0) {
    int found = discover(s, why, size);
    if (found < 0)
      return -1;
    if (found == MCPC_UNAUTHORIZED + 1)
      return MCPC_UNAUTHORIZED;
    if (found)
      return 0;
    want = NEWEST_LEGACY;
  }
  return initialize(s, want, why, size);
}

/* Appends one page's tools to all; returns the next cursor (borrowed from
 * result) or NULL. */
static int take_page(cJSON *all, const cJSON *result, char *why, size_t size) {
  const cJSON *tools = member(result, "tools"), *t;
  if (!cJSON_IsArray(tools)) {
    snprintf(why, size, "tools/list answered without a tools array");
    return -1;
  }
  cJSON_ArrayForEach(t, tools) {
    cJSON *copy;
    if (!cJSON_IsObject(t) || !cJSON_IsString(member(t, "name"))) {
      snprintf(why, size, "tools/list has a tool without a name");
      return -1;
    }
    if (cJSON_GetArraySize(all) >= MCPC_MAX_TOOLS) {
      snprintf(why, size, "more than %d tools", MCPC_MAX_TOOLS);
      return -1;
    }
    if ((copy = cJSON_Duplicate(t, 1)) == NULL ||
        !cJSON_AddItemToArray(all, copy)) {
      cJSON_Delete(copy);
      snprintf(why, size, "out of memory");
      return -1;
    }
  }
  return 0;
}

cJSON *mcpc_session_tools(mcpc_session *s, char *why, size_t size) {
  cJSON *all = cJSON_CreateArray();
  char *cursor = NULL;
  for (int page = 0; all && page < MCPC_MAX_PAGES; page++) {
    mcpc_exchange x = {0};
    cJSON *params = cJSON_CreateObject();
    const cJSON *result, *next;
    if (params && cursor)
      cJSON_AddStringToObject(params, "cursor", cursor);
    free(cursor);
    cursor = NULL;
    if (exchange(s, request(s, "tools/list", params), NULL, NULL, &x, why,
                 size) < 0)
      break;
    result = member(x.response, "result");
    if (!cJSON_IsObject(result)) {
      const cJSON *msg = member(member(x.response, "error"), "message");
      snprintf(why, size, "tools/list failed: %s",
               cJSON_IsString(msg) ? msg->valuestring
               : x.status >= 300   ? "HTTP error"
                                   : "no result");
      mcpc_exchange_clear(&x);
      break;
    }
    if (take_page(all, result, why, size) < 0) {
      mcpc_exchange_clear(&x);
      break;
    }
    next = member(result, "nextCursor");
    if (cJSON_IsString(next) && next->valuestring[0])
      cursor = strdup(next->valuestring);
    mcpc_exchange_clear(&x);
    if (cursor == NULL)
      return all;
  }
  if (cursor) {
    free(cursor);
    snprintf(why, size, "tools/list still had pages after %d", MCPC_MAX_PAGES);
  }
  cJSON_Delete(all);
  return NULL;
}

/* An HTTP 403 is a refusal on scope when its challenge says so. */
static int scope_challenge(const char *www) {
  return www && strstr(www, "insufficient_scope") != NULL;
}

static mcpc_outcome classify(const mcpc_exchange *x, char *detail,
                             size_t size) {
  const cJSON *result = member(x->response, "result");
  const cJSON *error = member(x->response, "error");
  if (x->status == 401) {
    snprintf(detail, size, "HTTP 401");
    return MCPC_NO_TOKEN;
  }
  if (x->status == 403 && scope_challenge(x->www_authenticate)) {
    snprintf(detail, size, "HTTP 403: %s", x->www_authenticate);
    return MCPC_SCOPE;
  }
  if (cJSON_IsObject(error)) {
    const cJSON *code = member(error, "code"), *msg = member(error, "message");
    snprintf(detail, size, "JSON-RPC %d: %s",
             cJSON_IsNumber(code) ? code->valueint : 0,
             cJSON_IsString(msg) ? msg->valuestring : "");
    return cJSON_IsNumber(code) && code->valueint == -31403 ? MCPC_SCOPE
                                                            : MCPC_RPC_ERROR;
  }
  if (cJSON_IsObject(result)) {
    const cJSON *type = member(result, "resultType");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "complete") != 0) {
      snprintf(detail, size, "resultType %s", type->valuestring);
      return MCPC_INPUT;
    }
    if (member(result, "task")) {
      snprintf(detail, size, "a task was created");
      return MCPC_INPUT;
    }
    snprintf(detail, size, "a result");
    return cJSON_IsTrue(member(result, "isError")) ? MCPC_RAN_ERROR : MCPC_RAN;
  }
  snprintf(detail, size, "HTTP %ld without a JSON-RPC answer", x->status);
  return MCPC_RPC_ERROR;
}

/* tools/call or tools/resolve of name with arguments; *result (when
 * result is not NULL) gets a copy of a result the answer holds. */
static mcpc_outcome tool_request(mcpc_session *s, const char *method,
                                 const char *name, const cJSON *arguments,
                                 const char *token, cJSON **result,
                                 char *detail, size_t size) {
  mcpc_exchange x = {0};
  cJSON *params = cJSON_CreateObject();
  cJSON *args =
      arguments ? cJSON_Duplicate(arguments, 1) : cJSON_CreateObject();
  mcpc_outcome o;
  if (params == NULL || args == NULL) {
    cJSON_Delete(params);
    cJSON_Delete(args);
    snprintf(detail, size, "out of memory");
    return MCPC_NO_ANSWER;
  }
  cJSON_AddStringToObject(params, "name", name);
  cJSON_AddItemToObject(params, "arguments", args);
  if (exchange(s, request(s, method, params), name, token, &x, detail, size) <
      0)
    return MCPC_NO_ANSWER;
  o = classify(&x, detail, size);
  if (result && cJSON_IsObject(member(x.response, "result")) &&
      (*result = cJSON_Duplicate(member(x.response, "result"), 1)) == NULL) {
    snprintf(detail, size, "out of memory");
    o = MCPC_NO_ANSWER;
  }
  mcpc_exchange_clear(&x);
  return o;
}

mcpc_outcome mcpc_session_call(mcpc_session *s, const char *name,
                               const cJSON *arguments, const char *token,
                               char *detail, size_t size) {
  return tool_request(s, "tools/call", name, arguments, token, NULL, detail,
                      size);
}

mcpc_outcome mcpc_session_resolve(mcpc_session *s, const char *name,
                                  const cJSON *arguments, const char *token,
                                  cJSON **result, char *detail, size_t size) {
  *result = NULL;
  return tool_request(s, "tools/resolve", name, arguments, token, result,
                      detail, size);
}

const char *mcpc_outcome_name(mcpc_outcome o) {
  static const char *const names[] = {"ran",
                                      "ran (isError)",
                                      "asked for input",
                                      "refused on scope",
                                      "refused: no token",
                                      "refused (JSON-RPC error)",
                                      "no answer"};
  return (unsigned)o <= MCPC_NO_ANSWER ? names[o] : "?";
}
