#define _DEFAULT_SOURCE /* malloc_usable_size */
#include "testutil.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tu_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

TCase *tu_tcase(Suite *s, const char *name, void (*setup)(void),
                void (*teardown)(void), double timeout) {
  TCase *t = tcase_create(name);
  if (setup)
    tcase_add_checked_fixture(t, setup, teardown);
  if (timeout > 0)
    tcase_set_timeout(t, timeout);
  suite_add_tcase(s, t);
  return t;
}

static int capture(const char *msg, size_t len, void *user_data) {
  tu_peer *p = user_data;
  if (p->fail_send)
    return MCP_EIO;
  if (p->inspect)
    p->inspect(msg, len);
  pthread_mutex_lock(&p->lock);
  if (p->nout == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 8;
    p->out = realloc(p->out, p->cap * sizeof *p->out);
    ck_assert_ptr_nonnull(p->out);
  }
  char *copy = malloc(len + 1);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, msg, len);
  copy[len] = '\0';
  ck_assert_msg(memchr(copy, '\n', len) == NULL, "raw newline in a message");
  p->out[p->nout++] = copy;
  pthread_cond_broadcast(&p->more);
  pthread_mutex_unlock(&p->lock);
  return 0;
}

size_t tu_wait(tu_peer *p, size_t n, int ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->lock);
  while (p->nout < n && pthread_cond_timedwait(&p->more, &p->lock, &until) == 0)
    ;
  size_t have = p->nout;
  pthread_mutex_unlock(&p->lock);
  return have;
}

void tu_peer_open_with(tu_peer *p, mcp_server *srv,
                       const mcp_principal *principal, tu_inspect_fn *inspect) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->more, NULL);
  p->srv = srv;
  p->inspect = inspect;
  ck_assert_int_eq(mcp_session_new(srv, principal, capture, p, &p->session), 0);
}

void tu_peer_open(tu_peer *p, mcp_server *srv, const mcp_principal *principal) {
  tu_peer_open_with(p, srv, principal, NULL);
}

void tu_clear(tu_peer *p) {
  pthread_mutex_lock(&p->lock);
  for (size_t i = 0; i < p->nout; i++)
    free(p->out[i]);
  p->nout = 0;
  pthread_mutex_unlock(&p->lock);
}

void tu_peer_close(tu_peer *p) {
  mcp_session_free(p->session);
  tu_clear(p);
  free(p->out);
  p->out = NULL;
  p->cap = 0;
  pthread_cond_destroy(&p->more);
  pthread_mutex_destroy(&p->lock);
}

int tu_send(tu_peer *p, const char *json) {
  return mcp_session_receive(p->session, json, strlen(json));
}

void tu_initialize(tu_peer *p, const char *version) {
  char msg[512];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
           "{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":{"
           "\"name\":\"test\",\"version\":\"1\"}}}",
           version);
  ck_assert_int_eq(tu_send(p, msg), 0);
  ck_assert_uint_eq(p->nout, 1);
  ck_assert_int_eq(
      tu_send(p,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
      0);
  tu_clear(p);
}

cJSON *tu_msg(const tu_peer *p, size_t i) {
  return i < p->nout ? cJSON_Parse(p->out[i]) : NULL;
}

cJSON *tu_request(tu_peer *p, const char *msg) {
  tu_clear(p);
  ck_assert_int_eq(tu_send(p, msg), 0);
  ck_assert_msg(p->nout == 1, "%zu replies to %s", p->nout, msg);
  cJSON *m = tu_msg(p, 0);
  ck_assert_ptr_nonnull(m);
  return m;
}

cJSON *tu_ask(tu_peer *p, char *msg) {
  cJSON *r = tu_request(p, msg);
  free(msg);
  return r;
}

int tu_send_free(tu_peer *p, char *msg) {
  int rc = tu_send(p, msg);
  free(msg);
  return rc;
}

void tu_legacy_init(tu_peer *p, const char *version, const char *caps) {
  cJSON *r =
      tu_ask(p, tu_text("{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":"
                        "\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
                        "\"capabilities\":%s,\"clientInfo\":{\"name\":\"c\","
                        "\"version\":\"1\"}}}",
                        version, caps));
  char *expected = tu_text("{\"id\":\"init\",\"result\":{\"protocolVersion\":"
                           "\"%s\",\"resultType\":\"<absent>\"}}",
                           version);
  tu_assert_json(r, expected);
  free(expected);
  cJSON_Delete(r);
  ck_assert_int_eq(tu_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                              "initialized\"}"),
                   0);
  ck_assert_uint_eq(p->nout, 1);
  tu_clear(p);
}

char *tu_vtext(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  ck_assert_int_ge(n, 0);
  char *s = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(s);
  vsnprintf(s, (size_t)n + 1, fmt, again);
  va_end(again);
  return s;
}

char *tu_text(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = tu_vtext(fmt, ap);
  va_end(ap);
  return s;
}

char *tu_req(int id, const char *method, const char *params) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"%s%s}", id,
                 method, params ? ",\"params\":" : "", params ? params : "");
}

char *tu_mreq(int id, const char *method, const char *meta, const char *extra) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{"
                 "\"_meta\":%s%s%s}}",
                 id, method, meta, extra ? "," : "", extra ? extra : "");
}

char *tu_mcall(int id, const char *name, const char *args, const char *meta,
               const char *state, const char *responses) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"%s\"%s%s%s%s%s%s%s%s}}",
                 id, name, args ? ",\"arguments\":" : "", args ? args : "",
                 meta ? ",\"_meta\":" : "", meta ? meta : "",
                 state ? ",\"requestState\":" : "", state ? state : "",
                 responses ? ",\"inputResponses\":" : "",
                 responses ? responses : "");
}

const cJSON *tu_get(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

const cJSON *tu_jget(const cJSON *o, const char *path) {
  char part[64];
  while (o && *path) {
    size_t n = strcspn(path, ".");
    ck_assert_uint_lt(n, sizeof part);
    memcpy(part, path, n);
    part[n] = '\0';
    path += n + (path[n] == '.');
    if (cJSON_IsArray(o) && part[0] >= '0' && part[0] <= '9')
      o = cJSON_GetArrayItem(o, atoi(part));
    else
      o = cJSON_GetObjectItemCaseSensitive(o, part);
  }
  return o;
}

const char *tu_jstr(const cJSON *o, const char *path) {
  const cJSON *v = tu_jget(o, path);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *tu_result_of(const cJSON *reply) {
  return tu_get(reply, "result");
}

void tu_assert_error_at(const char *file, int line, const cJSON *reply,
                        int code, const char *needle) {
  char expected[200];
  snprintf(expected, sizeof expected,
           "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":%d,\"message\":"
           "\"<any>\"},\"result\":\"<absent>\",\"method\":\"<absent>\"}",
           code);
  tu_assert_json_at(file, line, reply, expected);
  if (needle) {
    const cJSON *m = tu_get(tu_get(reply, "error"), "message");
    ck_assert_msg(cJSON_IsString(m) && strstr(m->valuestring, needle),
                  "%s:%d: error message \"%s\" lacks \"%s\"", file, line,
                  cJSON_IsString(m) ? m->valuestring : "", needle);
  }
}

mcp_call *tu_stash;
mcp_call *tu_deferred[TU_MAX_DEFERRED];
int tu_ndeferred;

int tu_defer(mcp_call *call) {
  if (tu_ndeferred < TU_MAX_DEFERRED)
    tu_deferred[tu_ndeferred] = call;
  tu_ndeferred++;
  tu_stash = call;
  return MCP_DEFERRED;
}

void tu_deferred_reset(void) {
  tu_stash = NULL;
  memset(tu_deferred, 0, sizeof tu_deferred);
  tu_ndeferred = 0;
}

char *tu_call_text(const char *id, const char *name, const char *args,
                   const char *meta) {
  static const char format[] =
      "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"%s\"%s%s%s%s}}";
  const char *args_key = args ? ",\"arguments\":" : "";
  const char *meta_key = meta ? ",\"_meta\":" : "";
  args = args ? args : "";
  meta = meta ? meta : "";
  int n = snprintf(NULL, 0, format, id, name, args_key, args, meta_key, meta);
  ck_assert_int_ge(n, 0);
  char *msg = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(msg);
  snprintf(msg, (size_t)n + 1, format, id, name, args_key, args, meta_key,
           meta);
  return msg;
}

cJSON *tu_call_tool(tu_peer *p, const char *id, const char *name,
                    const char *args) {
  char *msg = tu_call_text(id, name, args, NULL);
  cJSON *m = tu_request(p, msg);
  free(msg);
  return m;
}

void tu_silent_log(mcp_log_level level, const char *message, void *user_data) {
  (void)level;
  (void)message;
  (void)user_data;
}

static char why[512];

static const char *match(const cJSON *a, const cJSON *e, const char *path) {
  if (cJSON_IsString(e) && strcmp(e->valuestring, "<any>") == 0)
    return a ? NULL : (snprintf(why, sizeof why, "%s: missing", path), why);
  if (a == NULL) {
    snprintf(why, sizeof why, "%s: missing", path);
    return why;
  }
  if ((a->type & 0xff) != (e->type & 0xff)) {
    snprintf(why, sizeof why, "%s: different JSON types", path);
    return why;
  }
  char sub[400];
  if (cJSON_IsObject(e)) {
    for (const cJSON *m = e->child; m; m = m->next) {
      snprintf(sub, sizeof sub, "%s.%s", path, m->string);
      const cJSON *am = cJSON_GetObjectItemCaseSensitive(a, m->string);
      if (cJSON_IsString(m) && strcmp(m->valuestring, "<absent>") == 0) {
        if (am) {
          snprintf(why, sizeof why, "%s: present but must be absent", sub);
          return why;
        }
        continue;
      }
      const char *r = match(am, m, sub);
      if (r)
        return r;
    }
    return NULL;
  }
  if (cJSON_IsArray(e)) {
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(e)) {
      snprintf(why, sizeof why, "%s: %d elements, expected %d", path,
               cJSON_GetArraySize(a), cJSON_GetArraySize(e));
      return why;
    }
    const cJSON *ai = a->child;
    int i = 0;
    for (const cJSON *ei = e->child; ei; ei = ei->next, ai = ai->next, i++) {
      snprintf(sub, sizeof sub, "%s[%d]", path, i);
      const char *r = match(ai, ei, sub);
      if (r)
        return r;
    }
    return NULL;
  }
  if (!cJSON_Compare(a, e, 1)) {
    snprintf(why, sizeof why, "%s: different value", path);
    return why;
  }
  return NULL;
}

const char *tu_json_match(const cJSON *actual, const char *expected) {
  cJSON *e = cJSON_Parse(expected);
  if (e == NULL) {
    snprintf(why, sizeof why, "expected text is not JSON: %s", expected);
    return why;
  }
  const char *r = match(actual, e, "$");
  cJSON_Delete(e);
  return r;
}

void tu_assert_json_at(const char *file, int line, const cJSON *actual,
                       const char *expected) {
  const char *r = tu_json_match(actual, expected);
  if (r) {
    char *text = actual ? cJSON_PrintUnformatted(actual) : NULL;
    ck_assert_msg(0, "%s:%d: %s\n  actual:   %s\n  expected: %s", file, line, r,
                  text ? text : "(none)", expected);
    free(text);
  }
}

void tu_assert_exact_at(const char *file, int line, const cJSON *actual,
                        const char *expected) {
  cJSON *e = cJSON_Parse(expected);
  ck_assert_msg(e != NULL, "%s:%d: expected text is not JSON: %s", file, line,
                expected);
  if (!cJSON_Compare(actual, e, 1)) {
    char *text = actual ? cJSON_PrintUnformatted(actual) : NULL;
    ck_assert_msg(0, "%s:%d: not exactly equal\n  actual:   %s\n  expected: %s",
                  file, line, text ? text : "(none)", expected);
    free(text);
  }
  cJSON_Delete(e);
}

void tu_assert_msg_at(const char *file, int line, const tu_peer *p, size_t i,
                      const char *expected) {
  ck_assert_msg(i < p->nout, "%s:%d: message %zu not sent (%zu sent)", file,
                line, i, p->nout);
  cJSON *m = tu_msg(p, i);
  ck_assert_msg(m != NULL, "%s:%d: message %zu is not JSON: %s", file, line, i,
                p->out[i]);
  tu_assert_json_at(file, line, m, expected);
  cJSON_Delete(m);
}

tu_alloc_state tu_alloc;
/* Calls may allocate on other threads (deferred calls, executors). */
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts one allocation; false when this one is to fail. */
static bool alloc_take(void) {
  pthread_mutex_lock(&alloc_lock);
  bool fail = tu_alloc.fail_at && ++tu_alloc.count == tu_alloc.fail_at;
  tu_alloc.failures += fail;
  pthread_mutex_unlock(&alloc_lock);
  return !fail;
}

/* Counts delta blocks and bytes bytes more (or fewer) live. */
static void alloc_live(long delta, long bytes) {
  pthread_mutex_lock(&alloc_lock);
  tu_alloc.live += delta;
  tu_alloc.bytes += bytes;
  pthread_mutex_unlock(&alloc_lock);
}

void tu_alloc_counts(long *blocks, long *bytes) {
  pthread_mutex_lock(&alloc_lock);
  *blocks = tu_alloc.live;
  *bytes = tu_alloc.bytes;
  pthread_mutex_unlock(&alloc_lock);
}

static void *tu_malloc(size_t n, void *ud) {
  (void)ud;
  if (!alloc_take())
    return NULL;
  void *p = malloc(n);
  if (p)
    alloc_live(1, (long)malloc_usable_size(p));
  return p;
}

static void *tu_realloc(void *p, size_t n, void *ud) {
  (void)ud;
  if (!alloc_take())
    return NULL;
  long before = p ? (long)malloc_usable_size(p) : 0;
  void *q = realloc(p, n);
  if (q)
    alloc_live(p == NULL, (long)malloc_usable_size(q) - before);
  return q;
}

static void tu_freefn(void *p, void *ud) {
  (void)ud;
  if (p) {
    alloc_live(-1, -(long)malloc_usable_size(p));
    free(p);
  }
}

int tu_alloc_count(void) {
  tu_alloc = (tu_alloc_state){0};
  mcp_allocator a = {
      .malloc_fn = tu_malloc, .realloc_fn = tu_realloc, .free_fn = tu_freefn};
  return mcp_set_allocator(&a);
}

void tu_alloc_install(long fail_at) {
  ck_assert_int_eq(tu_alloc_count(), 0);
  tu_alloc.fail_at = fail_at;
}

void tu_alloc_remove(void) { ck_assert_int_eq(mcp_set_allocator(NULL), 0); }

void tu_alloc_arm(long fail_at) {
  tu_alloc.count = 0;
  tu_alloc.fail_at = fail_at;
}

long tu_alloc_disarm(void) {
  tu_alloc.fail_at = 0;
  return tu_alloc.failures;
}

long tu_alloc_every(long max, bool (*run)(long n, void *user),
                    void (*after)(long n, bool ok, bool clean, void *user),
                    void *user) {
  for (long n = 1; n < max; n++) {
    tu_alloc_install(n);
    bool ok = run(n, user);
    long live = tu_alloc.live, failures = tu_alloc.failures;
    tu_alloc_remove();
    ck_assert_msg(live == 0, "fail_at %ld: %ld blocks leaked", n, live);
    if (after)
      after(n, ok, failures == 0, user);
    if (failures == 0)
      return n;
  }
  ck_abort_msg("no run below %ld without a failed allocation", max);
  return 0;
}

int tu_sink_send(const char *msg, size_t len, void *user_data) {
  tu_sink *k = user_data;
  if (k->n < TU_COUNT(k->msgs)) {
    char *copy = malloc(len + 1); /* not through the failing allocator */
    if (copy == NULL)
      return MCP_EIO;
    memcpy(copy, msg, len);
    copy[len] = '\0';
    k->msgs[k->n] = copy;
  }
  k->n++;
  return 0;
}

const char *tu_sink_last(const tu_sink *k) {
  return k->n && k->n <= TU_COUNT(k->msgs) ? k->msgs[k->n - 1] : "";
}

void tu_sink_free(tu_sink *k, long n,
                  void (*check)(const char *msg, size_t len,
                                const char *about)) {
  char about[40];
  snprintf(about, sizeof about, "fail_at %ld", n);
  for (size_t i = 0; i < k->n && i < TU_COUNT(k->msgs); i++) {
    if (check)
      check(k->msgs[i], strlen(k->msgs[i]), about);
    free(k->msgs[i]);
    k->msgs[i] = NULL;
  }
  k->n = 0;
}

size_t tu_thread_ids(long *ids, size_t n) {
  DIR *d = opendir("/proc/self/task");
  ck_assert_ptr_nonnull(d);
  size_t k = 0;
  for (struct dirent *e; k < n && (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.')
      ids[k++] = atol(e->d_name);
  closedir(d);
  return k;
}

/* Whether thread tid blocks the three stop signals; true for a thread
 * that ended meanwhile, which takes no signal. */
static bool blocks_stop_signals(long tid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return true;
  unsigned long long mask = 0;
  bool seen = false;
  while (!seen && fgets(line, sizeof line, f))
    seen = sscanf(line, "SigBlk: %llx", &mask) == 1;
  fclose(f);
  ck_assert(seen);
  unsigned long long stop =
      1ull << (SIGHUP - 1) | 1ull << (SIGINT - 1) | 1ull << (SIGTERM - 1);
  return (mask & stop) == stop;
}

long tu_new_thread_taking_stop_signals(const long *before, size_t nbefore,
                                       size_t *now) {
  long ids[256];
  *now = tu_thread_ids(ids, TU_COUNT(ids));
  for (size_t i = 0; i < *now; i++) {
    bool old = false;
    for (size_t j = 0; j < nbefore && !old; j++)
      old = before[j] == ids[i];
    if (!old && !blocks_stop_signals(ids[i]))
      return ids[i];
  }
  return 0;
}
