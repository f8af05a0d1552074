/* JSON-RPC 2.0 envelopes as MCP constrains them: ids are strings or
 * integers (never null), "jsonrpc" is exactly "2.0", keys are matched
 * case-sensitively (the strict JSON layer has already refused duplicates). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <string.h>

#include "rpc.h"

/* An id is usable when it is a string or an integer number. */
static int id_usable(const cJSON *id) {
  if (cJSON_IsString(id))
    return 1;
  return cJSON_IsNumber(id) && mcp__json_integer(id, NULL, NULL);
}

/* The envelope's member names, and the parser's interned copies of them
 * (the pointers parsed keys share). */
#define NAMES 6
static const char *const names[NAMES] = {"id",     "jsonrpc", "method",
                                         "params", "result",  "error"};
static const char *interned[NAMES];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void intern_names(void) {
  for (size_t i = 0; i < NAMES; i++)
    interned[i] = mcp__json_intern(names[i], strlen(names[i]));
}

void mcp__msg_classify(const mcp__json_doc *doc, const cJSON *node,
                       mcp__msg *out) {
  *out = (mcp__msg){.pool = doc ? doc->pool : NULL};
  if (!cJSON_IsObject(node)) {
    out->why = "a JSON-RPC message must be a JSON object";
    return;
  }
  /* One pass over the members finds what six lookups would: the strict
   * parser leaves no duplicate keys, and this runs for every message. The
   * six names start with six different letters, so a member costs at most
   * one string comparison, and none when the parser gave it the interned
   * key. */
  pthread_once(&names_once, intern_names);
  const cJSON *id = NULL, *version = NULL, *method = NULL, *params = NULL,
              *result = NULL, *error = NULL;
  const cJSON **slots[NAMES] = {&id,     &version, &method,
                                &params, &result,  &error};
  for (const cJSON *e = node->child; e; e = e->next)
    for (size_t i = 0; i < NAMES; i++)
      if (e->string[0] == names[i][0]) {
        if (e->string == interned[i] || strcmp(e->string, names[i]) == 0)
          *slots[i] = e;
        break;
      }
  out->id_node = id;
  if (id != NULL && id_usable(id))
    out->id = mcp__json_raw_text(doc, id, &out->id_len);

  if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
    out->why = "\"jsonrpc\" must be \"2.0\"";
    return;
  }
  /* An error response answering a request whose id could not be read has
   * no usable id: JSON-RPC 2.0 writes null, MCP 2025-11-25 omits it. It is
   * still a response, which is never answered. */
  bool idless_error = method == NULL && result == NULL &&
                      cJSON_IsObject(error) && (id == NULL || cJSON_IsNull(id));
  if (id != NULL && out->id == NULL && !idless_error) {
    out->why = cJSON_IsNull(id) ? "the id must not be null"
                                : "the id must be a string or an integer";
    return;
  }
  if (method == NULL) {
    if (idless_error || (id != NULL && (result != NULL) != (error != NULL) &&
                         (result == NULL || cJSON_IsObject(result)) &&
                         (error == NULL || cJSON_IsObject(error)))) {
      out->kind = MCP__MSG_RESPONSE;
      return;
    }
    out->why = "\"method\" is missing";
    return;
  }
  if (!cJSON_IsString(method)) {
    out->why = "\"method\" must be a string";
    return;
  }
  if (strlen(method->valuestring) > MCP__MAX_METHOD) {
    out->why = "\"method\" is too long";
    return;
  }
  if (params != NULL && !cJSON_IsObject(params)) {
    out->why = "\"params\" must be an object";
    return;
  }
  out->method = method->valuestring;
  out->params = params;
  out->kind = id ? MCP__MSG_REQUEST : MCP__MSG_NOTIFICATION;
}

const char *mcp__msg_canon_id(const mcp__msg *m, mcp__buf *scratch) {
  if (m->id == NULL)
    return NULL;
  /* Raw text without a backslash already is the canonical form: a number's
   * canonical text is its exact text, and a string without escapes holds
   * no byte that mcp__json_quote would escape (the parser refused raw
   * controls, and a '"' inside would need one). */
  if (memchr(m->id, '\\', m->id_len) == NULL)
    return m->id;
  mcp__id_canonical(scratch, m->id_node);
  return mcp__buf_str(scratch);
}

static int put_id(mcp__buf *b, const char *id, size_t id_len,
                  mcp__null_id null_id) {
  if (id != NULL) {
    mcp__buf_puts(b, "\"id\":");
    mcp__buf_append(b, id, id_len);
    return mcp__buf_putc(b, ',');
  }
  return null_id == MCP__ID_NULL ? mcp__buf_puts(b, "\"id\":null,") : b->err;
}

int mcp__rpc_result(mcp__buf *b, const char *id, size_t id_len,
                    const char *result, size_t result_len) {
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",");
  put_id(b, id, id_len, MCP__ID_NULL);
  mcp__buf_puts(b, "\"result\":");
  mcp__buf_append(b, result, result_len);
  return mcp__buf_putc(b, '}');
}

int mcp__rpc_error(mcp__buf *b, const char *id, size_t id_len,
                   mcp__null_id null_id, int code, const char *message,
                   const char *data) {
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",");
  put_id(b, id, id_len, null_id);
  mcp__buf_printf(b, "\"error\":{\"code\":%d,\"message\":", code);
  mcp__json_quote(b, message, strlen(message));
  if (data != NULL) {
    mcp__buf_puts(b, ",\"data\":");
    mcp__buf_puts(b, data);
  }
  return mcp__buf_puts(b, "}}");
}

int mcp__rpc_notification(mcp__buf *b, const char *method, const char *params) {
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",\"method\":");
  mcp__json_quote(b, method, strlen(method));
  if (params != NULL) {
    mcp__buf_puts(b, ",\"params\":");
    mcp__buf_puts(b, params);
  }
  return mcp__buf_putc(b, '}');
}

const mcp__json_limits mcp__message_limits = {.pooled = 1};

int mcp__id_canonical(mcp__buf *b, const cJSON *id) {
  if (cJSON_IsString(id))
    return mcp__json_quote(b, id->valuestring, strlen(id->valuestring));
  return mcp__json_write(b, id);
}
