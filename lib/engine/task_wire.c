/* The task wire: the bytes a task sends (its Task object, DetailedTask,
 * CreateTaskResult, notifications/tasks/status, the 2025-11-25 tasks/result
 * reply and input requests, the related-task _meta), each written by a pure
 * function of facts (mcp__task_facts, mcp__outcome) into a buffer. Nothing
 * here locks, reads a record, or looks at a message built elsewhere: the
 * result a task keeps is the members call.c built, written between braces
 * of our own. */
#include <cjson/cJSON.h>
#include <string.h>

#include "task.h"

#define RELATED "io.modelcontextprotocol/related-task"

/* "key":"YYYY-MM-DDThh:mm:ss.mmmZ", (RFC 3339, UTC) for ms since the
 * epoch. The date is counted here rather than by gmtime, which the engine
 * leaves to the C library's time zone machinery (it may read files). */
static void put_time(mcp__buf *b, const char *key, long long ms) {
  if (ms < 0)
    ms = 0;
  long long days = ms / 86400000, in_day = ms % 86400000;
  /* Days since 1970-01-01 to a civil date: count 400-year eras from
   * 0000-03-01, where a year's leap day falls last. */
  long long z = days + 719468;
  long long era = z / 146097;
  long long doe = z - era * 146097;
  long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long long mp = (5 * doy + 2) / 153;
  int day = (int)(doy - (153 * mp + 2) / 5 + 1);
  int month = (int)(mp < 10 ? mp + 3 : mp - 9);
  long long year = yoe + era * 400 + (month <= 2);
  mcp__buf_printf(b, "\"%s\":\"%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ\",", key,
                  year, month, day, (int)(in_day / 3600000),
                  (int)(in_day / 60000 % 60), (int)(in_day / 1000 % 60),
                  (int)(in_day % 1000));
}

void mcp__wire_task(mcp__buf *b, const mcp__task_facts *f, bool modern) {
  mcp__buf_printf(b, "\"taskId\":\"%s\",\"status\":\"%s\",", f->id, f->status);
  if (f->status_message) {
    mcp__buf_puts(b, "\"statusMessage\":");
    mcp__json_quote(b, f->status_message, strlen(f->status_message));
    mcp__buf_putc(b, ',');
  }
  put_time(b, "createdAt", f->created_ms);
  put_time(b, "lastUpdatedAt", f->updated_ms);
  mcp__buf_printf(b, "\"%s\":%u,\"%s\":%u,", modern ? "ttlMs" : "ttl",
                  f->ttl_ms, modern ? "pollIntervalMs" : "pollInterval",
                  f->poll_ms);
}

/* An object of members, as kept: {members}. */
static void put_object(mcp__buf *b, const char *members, size_t len) {
  mcp__buf_putc(b, '{');
  mcp__buf_append(b, members, len);
  mcp__buf_putc(b, '}');
}

void mcp__wire_detail(mcp__buf *b, const mcp__task_facts *f,
                      const cJSON *requests, const mcp__outcome *o) {
  mcp__wire_task(b, f, true);
  if (requests) {
    mcp__buf_puts(b, "\"inputRequests\":{");
    for (const cJSON *e = requests->child; e; e = e->next) {
      mcp__json_quote(b, e->string, strlen(e->string));
      mcp__buf_puts(b, ":{\"method\":");
      mcp__json_write(b, mcp__json_member(e, "method"));
      mcp__buf_puts(b, ",\"params\":");
      mcp__json_write(b, mcp__json_member(e, "params"));
      mcp__buf_puts(b, e->next ? "}," : "}");
    }
    mcp__buf_puts(b, "},");
  } else if (o) {
    mcp__buf_puts(b, o->error ? "\"error\":" : "\"result\":");
    put_object(b, o->members, o->len);
    mcp__buf_putc(b, ',');
  }
}

void mcp__wire_created(mcp__buf *b, const mcp__task_facts *f, bool modern) {
  if (modern) {
    mcp__wire_task(b, f, true);
    return;
  }
  mcp__buf_puts(b, "\"task\":{");
  mcp__wire_task(b, f, false);
  mcp__result_end(b);
  mcp__buf_putc(b, ',');
}

void mcp__wire_status_note(mcp__buf *b, const mcp__task_facts *f) {
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/"
                   "status\",\"params\":{");
  mcp__wire_task(b, f, false);
  mcp__result_end(b);
  mcp__buf_putc(b, '}');
}

void mcp__wire_related(mcp__buf *b, const char *task_id) {
  mcp__buf_printf(b, "\"_meta\":{\"" RELATED "\":{\"taskId\":\"%s\"}}",
                  task_id);
}

void mcp__wire_task_result(mcp__buf *b, const char *id, size_t id_len,
                           const char *task_id, const mcp__outcome *o) {
  if (o == NULL) {
    mcp__rpc_error(b, id, id_len, MCP__ID_OMIT, MCP__RPC_INVALID_PARAMS,
                   "Invalid params: the task was cancelled and has no result",
                   NULL);
    return;
  }
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcp__buf_append(b, id, id_len);
  if (o->error) {
    mcp__buf_puts(b, ",\"error\":");
    put_object(b, o->members, o->len);
    mcp__buf_putc(b, '}');
    return;
  }
  /* The result with the related-task _meta last (a 2025-11-25 result the
   * library builds carries no _meta of its own). */
  mcp__buf_puts(b, ",\"result\":{");
  mcp__buf_append(b, o->members, o->len);
  if (o->len)
    mcp__buf_putc(b, ',');
  mcp__wire_related(b, task_id);
  mcp__buf_puts(b, "}}");
}

void mcp__wire_request(mcp__buf *b, const char *task_id, const cJSON *method,
                       const cJSON *params, long long id) {
  if (task_id == NULL) {
    mcp__buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":", id);
    mcp__json_write(b, method);
    mcp__buf_puts(b, ",\"params\":");
    mcp__json_write(b, params);
    mcp__buf_putc(b, '}');
    return;
  }
  cJSON *copy = cJSON_Duplicate(params, 1);
  cJSON *meta = copy ? (cJSON *)mcp__json_member(copy, "_meta") : NULL;
  if (copy && !cJSON_IsObject(meta)) {
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "_meta");
    meta = cJSON_AddObjectToObject(copy, "_meta");
  }
  cJSON *related = cJSON_CreateObject();
  if (meta)
    cJSON_DeleteItemFromObjectCaseSensitive(meta, RELATED);
  if (meta == NULL || related == NULL ||
      !cJSON_AddStringToObject(related, "taskId", task_id) ||
      !cJSON_AddItemToObject(meta, RELATED, related)) {
    cJSON_Delete(related);
    cJSON_Delete(copy);
    b->err = MCP_ENOMEM;
    return;
  }
  mcp__buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":", id);
  mcp__json_write(b, method);
  mcp__buf_puts(b, ",\"params\":");
  mcp__json_write(b, copy);
  mcp__buf_putc(b, '}');
  cJSON_Delete(copy);
}

void mcp__wire_error_members(mcp__buf *b, int code, const char *message) {
  mcp__buf_printf(b, "\"code\":%d,\"message\":", code);
  mcp__json_quote(b, message, strlen(message));
}
