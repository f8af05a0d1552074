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
  if (task_id) {
    if (o->len)
      mcp__buf_putc(b, ',');
    mcp__wire_related(b, task_id);
  }
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

/* ---- the record of a task in a store -----------------------------------
 * What every node of a cluster reads of a task another node runs: its
 * facts, whose it is, what it runs, what it waits for and how it ended,
 * as one JSON object (the value of the store record "task:<id>"). */

static void put_string_or_null(mcp__buf *b, const char *s) {
  if (s)
    mcp__json_quote(b, s, strlen(s));
  else
    mcp__buf_puts(b, "null");
}

void mcp__wire_record(mcp__buf *b, const mcp__task_record *r) {
  const mcp__task_facts *f = &r->f;
  mcp__buf_printf(b, "{\"v\":1,\"id\":\"%s\",\"node\":", f->id);
  put_string_or_null(b, r->node);
  mcp__buf_puts(b, ",\"subject\":");
  put_string_or_null(b, r->subject);
  mcp__buf_puts(b, ",\"tool\":");
  put_string_or_null(b, r->tool);
  mcp__buf_printf(b, ",\"modern\":%s,\"status\":\"%s\",",
                  r->modern ? "true" : "false", f->status);
  if (f->status_message) {
    mcp__buf_puts(b, "\"message\":");
    mcp__json_quote(b, f->status_message, strlen(f->status_message));
    mcp__buf_putc(b, ',');
  }
  mcp__buf_printf(b,
                  "\"created\":%lld,\"updated\":%lld,\"ttl\":%u,\"poll\":%u,"
                  "\"args\":",
                  f->created_ms, f->updated_ms, f->ttl_ms, f->poll_ms);
  if (r->args)
    mcp__json_write(b, r->args);
  else
    mcp__buf_puts(b, "null");
  if (r->requests) {
    mcp__buf_puts(b, ",\"requests\":");
    mcp__json_write(b, r->requests);
  }
  if (r->outcome) {
    mcp__buf_printf(
        b, ",\"error\":%s,\"outcome\":", r->outcome->error ? "true" : "false");
    mcp__json_quote(b, r->outcome->members, r->outcome->len);
  }
  mcp__buf_putc(b, '}');
}

static const char *const STATUSES[] = {"working", "input_required", "completed",
                                       "failed", "cancelled"};

static bool known_status(const char *s) {
  for (size_t i = 0; s && i < sizeof STATUSES / sizeof *STATUSES; i++)
    if (strcmp(s, STATUSES[i]) == 0)
      return true;
  return false;
}

/* A member that must be a number within [0, max]. */
static bool number_in(const cJSON *o, const char *key, double max,
                      double *out) {
  const cJSON *n = mcp__json_member(o, key);
  if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > max)
    return false;
  *out = n->valuedouble;
  return true;
}

/* A member that is a string or null (absent: null). */
static bool text_or_null(const cJSON *o, const char *key, const char **out) {
  const cJSON *s = mcp__json_member(o, key);
  *out = cJSON_GetStringValue(s);
  return s == NULL || cJSON_IsNull(s) || cJSON_IsString(s);
}

mcp__task_view *mcp__task_view_parse(const char *text, size_t len, bool final,
                                     bool holder_alive) {
  mcp__task_view *v = mcp__calloc(1, sizeof *v);
  if (v == NULL)
    return NULL;
  v->doc = cJSON_ParseWithLength(text, len);
  const cJSON *d = v->doc;
  const cJSON *id = mcp__json_member(d, "id");
  const cJSON *modern = mcp__json_member(d, "modern");
  const cJSON *requests = mcp__json_member(d, "requests");
  const cJSON *outcome = mcp__json_member(d, "outcome");
  const cJSON *args = mcp__json_member(d, "args");
  double created, updated, ttl, poll;
  mcp__task_record *r = &v->rec;
  bool ok = cJSON_IsObject(d) && cJSON_IsString(id) &&
            strlen(id->valuestring) < 32 && cJSON_IsBool(modern) &&
            text_or_null(d, "node", &r->node) &&
            text_or_null(d, "subject", &r->subject) &&
            text_or_null(d, "tool", &r->tool) && r->tool != NULL &&
            text_or_null(d, "message", &r->f.status_message) &&
            known_status(cJSON_GetStringValue(mcp__json_member(d, "status"))) &&
            number_in(d, "created", 9007199254740991.0, &created) &&
            number_in(d, "updated", 9007199254740991.0, &updated) &&
            number_in(d, "ttl", 4294967295.0, &ttl) &&
            number_in(d, "poll", 4294967295.0, &poll) &&
            (args == NULL || cJSON_IsNull(args) || cJSON_IsObject(args)) &&
            (requests == NULL || cJSON_IsObject(requests)) &&
            (outcome == NULL || cJSON_IsString(outcome));
  if (!ok) {
    mcp__task_view_free(v);
    return NULL;
  }
  r->f.id = id->valuestring;
  r->f.status = cJSON_GetStringValue(mcp__json_member(d, "status"));
  r->f.created_ms = (long long)created;
  r->f.updated_ms = (long long)updated;
  r->f.ttl_ms = (unsigned)ttl;
  r->f.poll_ms = (unsigned)poll;
  r->modern = cJSON_IsTrue(modern);
  r->args = cJSON_IsObject(args) ? args : NULL;
  r->requests = requests;
  if (outcome) {
    v->outcome =
        (mcp__outcome){.error = cJSON_IsTrue(mcp__json_member(d, "error")),
                       .members = outcome->valuestring,
                       .len = strlen(outcome->valuestring)};
    r->outcome = &v->outcome;
  }
  v->final = final;
  v->holder_alive = holder_alive;
  return v;
}

void mcp__task_view_free(mcp__task_view *v) {
  if (v == NULL)
    return;
  cJSON_Delete(v->doc);
  mcp__free(v);
}

void mcp__task_index(char *buf, size_t size, const char *subject) {
  /* A hash keeps the name short; two subjects that meet share an index,
   * and each record still names its own. */
  unsigned long long h = 1469598103934665603ull;
  for (const char *p = subject; p && *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  mcp__fmt(buf, size, "tasks:%016llx", subject ? h : 0ull);
}
