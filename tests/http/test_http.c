/* The Streamable HTTP transport (include/mcp/http.h) on real loopback
 * sockets.
 *
 * Each test starts an in-process mcp_server with a fixture tool set, serves
 * it with mcp_http_start on 127.0.0.1 (port 0) and drives it with libcurl,
 * or with a raw socket for what libcurl will not send (duplicate or
 * NUL-bearing headers, no Host, a trickle, a huge header block). Tests are
 * named after the rows of shared/spec/BAD-INPUTS.md they cover (a1_...,
 * c1_..., d1_..., f1_...); the others cover the transport's contract
 * (MCP-SERVER-DIGEST.md §6.2, §6.3, §9 items 32-41).
 *
 * Every tcase is its own ctest test (CK_RUN_CASE, see CMakeLists.txt), so
 * each stays well under a minute. With MCP_VALGRIND_RUN set (the valgrind
 * build) the loops are smaller and waits longer; there and in the
 * AddressSanitizer build RSS figures are printed but not asserted. Nothing
 * here binds or connects to anything but 127.0.0.0/8 and ::1, and every
 * teardown checks that the process listens on loopback addresses only.
 */
#ifdef MCP_TEST_GUARD
#include <mcp/guard.h>
#endif
#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "testutil.h"
#include "tools.h"

/* The protocol version most tests' sessions negotiate. */
#define V "2025-11-25"

/* ---------------------------------------------------------------------------
 * Time and scale
 * ------------------------------------------------------------------------ */

/* A loop count: normal, or the smaller one under valgrind. */
static int scaled(int normal, int valgrind) {
  return lc_slow_run() ? valgrind : normal;
}

/* Whether RSS figures mean anything: not under valgrind, nor with
 * AddressSanitizer's quarantine and shadow memory. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

static bool rss_bounded(void) { return !lc_slow_run() && !TEST_ASAN; }

/* A time budget in ms, longer under valgrind. */
static long T(long ms) { return lc_slow_run() ? ms * 5 : ms; }

static struct timespec deadline_in(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

static const char *find_n(const char *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (hay == NULL)
    return NULL;
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(hay + i, needle, m) == 0)
      return hay + i;
  return NULL;
}

static int count_n(const char *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  int c = 0;
  if (hay == NULL || m == 0)
    return 0;
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(hay + i, needle, m) == 0) {
      c++;
      i += m - 1;
    }
  return c;
}

/* ---------------------------------------------------------------------------
 * The process: RSS, threads, descriptors, listening sockets
 * ------------------------------------------------------------------------ */

/* A "Name:   N ..." field of /proc/self/status, or -1. */
static long proc_status(const char *name) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL)
    return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(name);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, name, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

static long threads_now(void) { return proc_status("Threads"); }

/* The thread count once it has come down to want, or what it still is
 * after 5 s. pthread_join returns when a thread has cleared its id, a
 * moment before the kernel removes its task, so a count read right after
 * a join may still include it (valgrind widens that moment). */
static long threads_settled(long want) {
  long n = threads_now();
  for (int i = 0; i < 500 && n != want; i++) {
    lc_sleep_ms(10);
    n = threads_now();
  }
  return n;
}

static int fds_now(void) {
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

/* The inodes of this process's sockets. */
static size_t socket_inodes(unsigned long *out, size_t max) {
  DIR *d = opendir("/proc/self/fd");
  ck_assert_ptr_nonnull(d);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < max;) {
    char path[300], target[128];
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t k = readlink(path, target, sizeof target - 1);
    if (k <= 0)
      continue;
    target[k] = '\0';
    if (strncmp(target, "socket:[", 8) == 0)
      out[n++] = strtoul(target + 8, NULL, 10);
  }
  closedir(d);
  return n;
}

/* A 32-bit word of /proc/net/tcp* as the kernel printed it (native order),
 * back to its four bytes. */
static void hex_word(const char *hex, unsigned char out[4]) {
  char w[9];
  memcpy(w, hex, 8);
  w[8] = '\0';
  uint32_t v = (uint32_t)strtoul(w, NULL, 16);
  memcpy(out, &v, 4);
}

typedef struct listener {
  unsigned char addr[16];
  bool v6;
  unsigned port;
} listener;

/* The listening TCP sockets of this process. */
static size_t listeners(listener *out, size_t max) {
  unsigned long inodes[1024];
  size_t ni = socket_inodes(inodes, 1024), n = 0;
  static const char *const files[] = {"/proc/self/net/tcp",
                                      "/proc/self/net/tcp6"};
  for (int fi = 0; fi < 2; fi++) {
    FILE *f = fopen(files[fi], "r");
    if (f == NULL)
      continue;
    char line[512];
    if (fgets(line, sizeof line, f) == NULL) { /* the heading */
      fclose(f);
      continue;
    }
    while (fgets(line, sizeof line, f) && n < max) {
      char local[64], remote[64], st[8];
      unsigned long inode = 0;
      /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
      if (sscanf(line, "%*s %63s %63s %7s %*s %*s %*s %*s %*s %lu", local,
                 remote, st, &inode) != 4)
        continue;
      if (strcmp(st, "0A") != 0) /* TCP_LISTEN */
        continue;
      bool ours = false;
      for (size_t i = 0; i < ni; i++)
        ours = ours || inodes[i] == inode;
      if (!ours)
        continue;
      char *colon = strchr(local, ':');
      if (colon == NULL)
        continue;
      listener *l = &out[n++];
      memset(l, 0, sizeof *l);
      l->v6 = fi == 1;
      for (int w = 0; w < (l->v6 ? 4 : 1); w++)
        hex_word(local + 8 * w, l->addr + 4 * w);
      l->port = (unsigned)strtoul(colon + 1, NULL, 16);
    }
    fclose(f);
  }
  return n;
}

static bool is_loopback(const listener *l) {
  if (!l->v6)
    return l->addr[0] == 127;
  static const unsigned char one[16] = {[15] = 1};
  static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};
  return memcmp(l->addr, one, 16) == 0 ||
         (memcmp(l->addr, mapped, 12) == 0 && l->addr[12] == 127);
}

/* Nothing in this process listens on anything but a loopback address. */
static void assert_loopback_only(void) {
  listener ls[64];
  size_t n = listeners(ls, 64);
  for (size_t i = 0; i < n; i++) {
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(ls[i].v6 ? AF_INET6 : AF_INET, ls[i].addr, text, sizeof text);
    ck_assert_msg(is_loopback(&ls[i]),
                  "a socket of this process listens on %s port %u, which is "
                  "not a loopback address",
                  text, ls[i].port);
  }
}

/* ---------------------------------------------------------------------------
 * The fixture: a server with a tool set, served over HTTP
 * ------------------------------------------------------------------------ */

#define MAXPARK 32

typedef struct fixture {
  mcp_server *srv;
  mcp_http *http;
  uint16_t port;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  mcp_call *parked[MAXPARK]; /* deferred calls not yet finished */
  int nparked;
  int calls;       /* handler runs of echo, progress, park, ask */
  int floods_done; /* flood handlers that returned */
  int warnings;    /* log lines at WARNING or above */
  lc_buf log;
} fixture;

static fixture F;
static CURL *G; /* the test thread's handle: keeps its connection alive */

static void fx_log(mcp_log_level level, const char *message, void *ud) {
  (void)ud;
  pthread_mutex_lock(&F.mu);
  if (level >= MCP_LOG_WARNING)
    F.warnings++;
  if (F.log.n < 65536) {
    lc_buf_str(&F.log, message);
    lc_buf_str(&F.log, "\n");
  }
  pthread_mutex_unlock(&F.mu);
}

static void fx_count(void) {
  pthread_mutex_lock(&F.mu);
  F.calls++;
  pthread_cond_broadcast(&F.cv);
  pthread_mutex_unlock(&F.mu);
}

static int fx_calls(void) {
  pthread_mutex_lock(&F.mu);
  int n = F.calls;
  pthread_mutex_unlock(&F.mu);
  return n;
}

static int tool_echo(mcp_call *call, void *ud) {
  (void)ud;
  fx_count();
  const char *text = "";
  mcp_call_arg_string(call, "text", &text);
  return mcp_result_text(call, text);
}

static int tool_fail(mcp_call *call, void *ud) {
  (void)ud;
  fx_count();
  return mcp_result_error(call, "this tool always fails");
}

/* Three progress notifications (when asked for), then the result. */
static int tool_progress(mcp_call *call, void *ud) {
  (void)ud;
  fx_count();
  for (int i = 1; i <= 3; i++)
    mcp_call_progress(call, i, 3, "step");
  return mcp_result_text(call, "progressed");
}

/* One progress notification, then the call waits in F.parked until a test
 * finishes it. */
static int tool_park(mcp_call *call, void *ud) {
  (void)ud;
  mcp_call_progress(call, 1, 0, "parked");
  pthread_mutex_lock(&F.mu);
  if (F.nparked == MAXPARK) {
    pthread_mutex_unlock(&F.mu);
    return MCP_ELIMIT;
  }
  F.parked[F.nparked++] = call;
  F.calls++;
  pthread_cond_broadcast(&F.cv);
  pthread_mutex_unlock(&F.mu);
  return MCP_DEFERRED;
}

/* Asks the user (legacy: a real elicitation/create request), then says what
 * the answer was. */
static int tool_ask(mcp_call *call, void *ud) {
  (void)ud;
  const cJSON *a = mcp_call_input(call, "q");
  if (a == NULL) {
    int rc = mcp_call_request_input(
        call, "q", MCP_INPUT_ELICITATION,
        "{\"message\":\"Proceed?\",\"requestedSchema\":{\"type\":\"object\","
        "\"properties\":{}}}");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  fx_count();
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(a, "action");
  char text[128];
  snprintf(text, sizeof text, "answered: %s",
           cJSON_IsString(action) ? action->valuestring : "?");
  return mcp_result_text(call, text);
}

/* n progress notifications whose message is size bytes long. */
static int tool_flood(mcp_call *call, void *ud) {
  (void)ud;
  int64_t n = 0, size = 0;
  mcp_call_arg_int(call, "n", &n);
  mcp_call_arg_int(call, "size", &size);
  char *msg = malloc((size_t)size + 1);
  if (msg == NULL)
    return MCP_ENOMEM;
  memset(msg, 'x', (size_t)size);
  msg[size] = '\0';
  for (int64_t i = 0; i < n; i++)
    if (mcp_call_progress(call, (double)(i + 1), 0, msg) != 0 ||
        mcp_call_cancelled(call))
      break;
  free(msg);
  pthread_mutex_lock(&F.mu);
  F.floods_done++;
  pthread_cond_broadcast(&F.cv);
  pthread_mutex_unlock(&F.mu);
  return mcp_result_text(call, "flooded");
}

static void fx_add_tools(void) {
  static const mcp_tool tools[] = {
      {.name = "echo",
       .description = "Returns its text.",
       .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{"
                       "\"type\":\"string\"}}}",
       .annotations = TC_READ_ONLY,
       .handler = tool_echo},
      {.name = "fail",
       .description = "Always a tool error.",
       .annotations = TC_READ_ONLY,
       .handler = tool_fail},
      {.name = "progress",
       .description = "Reports progress three times.",
       .annotations = TC_READ_ONLY,
       .handler = tool_progress},
      {.name = "park",
       .description = "Deferred until the test finishes it.",
       .annotations = TC_READ_ONLY,
       .handler = tool_park},
      {.name = "ask",
       .description = "Asks the user through elicitation.",
       .annotations = TC_READ_ONLY,
       .handler = tool_ask},
      {.name = "flood",
       .description = "Sends n progress notifications of size bytes.",
       .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                       "\"integer\"},\"size\":{\"type\":\"integer\"}}}",
       .annotations = TC_READ_ONLY,
       .handler = tool_flood},
  };
  for (size_t i = 0; i < TU_COUNT(tools); i++)
    ck_assert_int_eq(mcp_server_add_tool(F.srv, &tools[i], NULL), 0);
}

/* Creates the server and starts HTTP with o (NULL = every default). */
/* The guard for the next fx_start (tests/http/CMakeLists.txt links it when
 * it is built), and where the last audited call ran. */
static bool fx_guard;
static const mcp_executor *fx_executor; /* for the next fx_start */
static char fx_ran_under[64];
static void fx_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&F.mu);
  snprintf(fx_ran_under, sizeof fx_ran_under, "%s",
           r->ran_under ? r->ran_under : "(null)");
  pthread_mutex_unlock(&F.mu);
}

static void fx_start(const mcp_http_options *o) {
  mcp_server_info info = {
      .name = "httptest", .version = "1.0.0", .title = "HTTP test"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  fx_add_tools();
#ifdef MCP_TEST_GUARD
  if (fx_guard) {
    /* Best effort: under valgrind the kernel shows no Landlock. */
    mcp_guard_options g = {.flags = MCP_GUARD_BEST_EFFORT};
    ck_assert_int_eq(mcp_guard_enable(F.srv, &g), 0);
    mcp_server_set_audit(F.srv, fx_audit, NULL);
  }
#else
  ck_assert_msg(!fx_guard, "the guard is not built");
#endif
  if (fx_executor)
    ck_assert_int_eq(mcp_server_set_executor(F.srv, fx_executor), 0);
  int rc = mcp_http_start(F.srv, o, &F.http);
  ck_assert_msg(rc == 0, "mcp_http_start: %s (%s)", mcp_strerror(rc),
                mcp_server_errmsg(F.srv));
  F.port = mcp_http_port(F.http);
  ck_assert_uint_ne(F.port, 0);
  assert_loopback_only();
}

/* Takes the oldest parked call, waiting up to ms for one. */
static mcp_call *unpark(long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&F.mu);
  while (F.nparked == 0)
    if (pthread_cond_timedwait(&F.cv, &F.mu, &dl) == ETIMEDOUT)
      break;
  mcp_call *c = NULL;
  if (F.nparked > 0) {
    c = F.parked[0];
    memmove(F.parked, F.parked + 1, (size_t)(F.nparked - 1) * sizeof c);
    F.nparked--;
  }
  pthread_mutex_unlock(&F.mu);
  return c;
}

/* Waits until n calls are parked; returns how many are. */
static int wait_parked(int n, long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&F.mu);
  while (F.nparked < n)
    if (pthread_cond_timedwait(&F.cv, &F.mu, &dl) == ETIMEDOUT)
      break;
  int k = F.nparked;
  pthread_mutex_unlock(&F.mu);
  return k;
}

static void finish_text(mcp_call *c, const char *text) {
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(mcp_result_text(c, text), 0);
  ck_assert_int_eq(mcp_call_finish(c, 0), 0);
}

/* ---------------------------------------------------------------------------
 * HTTP with libcurl
 * ------------------------------------------------------------------------ */

static const char *resp_header(const lc_resp *r, const char *name, char *out,
                               size_t size) {
  return lc_resp_header(r, name, out, size) ? out : NULL;
}

/* The response's Content-Type up to any parameter ("" when absent). */
static const char *resp_type(const lc_resp *r, char *out, size_t size) {
  if (resp_header(r, "Content-Type", out, size) == NULL)
    out[0] = '\0';
  out[strcspn(out, "; ")] = '\0';
  return out;
}

/* The certificate to trust over https, while a test serves TLS. */
static const char *fx_ca;

/* One request on the test thread's handle (https with fx_ca). */
static void http(const lc_req *q, lc_resp *r) {
  lc_req with = *q;
  if (with.ca_file == NULL)
    with.ca_file = fx_ca;
  lc_http(G, F.port, &with, r);
}

/* A fresh handle for the test thread: its connections are closed. */
static void fresh_curl(void) {
  curl_easy_cleanup(G);
  G = curl_easy_init();
  ck_assert_ptr_nonnull(G);
}

/* ---------------------------------------------------------------------------
 * Server-sent events
 * ------------------------------------------------------------------------ */

typedef struct sse_ev {
  char *id, *event, *data;
  bool has_id, has_data;
} sse_ev;

typedef struct sse {
  sse_ev *ev;
  int n;
  int comments; /* ":" lines */
  bool partial; /* text after the last blank line */
} sse;

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  ck_assert_ptr_nonnull(d);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* Parses an event stream (WHATWG rules: fields until a blank line). */
static sse sse_parse(const char *text, size_t len) {
  sse s = {0};
  int cap = 0;
  sse_ev cur = {0};
  bool any = false;
  lc_buf data = {0};
  const char *p = text, *end = text ? text + len : NULL;
  while (p && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (eol == NULL) {
      s.partial = true;
      break;
    }
    size_t n = (size_t)(eol - p);
    if (n && p[n - 1] == '\r')
      n--;
    if (n == 0) {
      if (any) {
        if (s.n == cap) {
          cap = cap ? cap * 2 : 16;
          s.ev = realloc(s.ev, (size_t)cap * sizeof *s.ev);
          ck_assert_ptr_nonnull(s.ev);
        }
        cur.data = dup_n(data.p ? data.p : "", data.n);
        s.ev[s.n++] = cur;
      }
      memset(&cur, 0, sizeof cur);
      lc_buf_free(&data);
      any = false;
    } else if (p[0] == ':') {
      s.comments++;
    } else {
      const char *colon = memchr(p, ':', n);
      size_t fl = colon ? (size_t)(colon - p) : n;
      const char *v = colon ? colon + 1 : p + n;
      if (v < p + n && *v == ' ')
        v++;
      size_t vl = (size_t)(p + n - v);
      if (fl == 4 && memcmp(p, "data", 4) == 0) {
        if (cur.has_data)
          lc_buf_str(&data, "\n");
        lc_buf_add(&data, v, vl);
        cur.has_data = true;
      } else if (fl == 2 && memcmp(p, "id", 2) == 0) {
        free(cur.id);
        cur.id = dup_n(v, vl);
        cur.has_id = true;
      } else if (fl == 5 && memcmp(p, "event", 5) == 0) {
        free(cur.event);
        cur.event = dup_n(v, vl);
      }
      any = true;
    }
    p = eol + 1;
  }
  if (any)
    s.partial = true;
  free(cur.id);
  free(cur.event);
  lc_buf_free(&data);
  return s;
}

static void sse_free(sse *s) {
  for (int i = 0; i < s->n; i++) {
    free(s->ev[i].id);
    free(s->ev[i].event);
    free(s->ev[i].data);
  }
  free(s->ev);
  memset(s, 0, sizeof *s);
}

/* The JSON-RPC messages of a stream (events with data), parsed, in order;
 * returns how many (at most max). Free each with cJSON_Delete. */
static int sse_messages(const sse *s, cJSON **out, int max) {
  int k = 0;
  for (int i = 0; i < s->n && k < max; i++) {
    if (s->ev[i].data[0] == '\0')
      continue;
    out[k] = cJSON_Parse(s->ev[i].data);
    ck_assert_msg(out[k] != NULL, "SSE data is not JSON: %s", s->ev[i].data);
    k++;
  }
  return k;
}

static void free_messages(cJSON **m, int n) {
  for (int i = 0; i < n; i++)
    cJSON_Delete(m[i]);
}

/* The JSON-RPC message a response carries: its JSON body, or the last
 * message of its event stream. NULL when there is none. */
static cJSON *reply_of(const lc_resp *r) {
  char type[128];
  resp_type(r, type, sizeof type);
  if (strcasecmp(type, "text/event-stream") == 0) {
    sse s = sse_parse(r->body.p, r->body.n);
    cJSON *last = NULL;
    for (int i = 0; i < s.n; i++)
      if (s.ev[i].data[0]) {
        cJSON_Delete(last);
        last = cJSON_Parse(s.ev[i].data);
      }
    sse_free(&s);
    return last;
  }
  return r->body.n ? cJSON_ParseWithLength(r->body.p, r->body.n) : NULL;
}

static char *show(const cJSON *m) {
  return m ? cJSON_PrintUnformatted(m) : strdup("(none)");
}

enum { ID_NULL, ID_NULL_OR_ABSENT, ID_ANY };

/* Asserts r is status with a JSON-RPC error body of code (0 = any code)
 * whose id is as idmode says. */
#define assert_rpc_error(r, status, code, idmode)                              \
  assert_rpc_error_at(__LINE__, (r), (status), (code), (idmode))
static void assert_rpc_error_at(int line, const lc_resp *r, long status,
                                int code, int idmode) {
  ck_assert_msg(r->status == status,
                "line %d: HTTP status %ld, expected %ld (body: %.300s)", line,
                r->status, status, r->body.p ? r->body.p : "");
  cJSON *m = reply_of(r);
  ck_assert_msg(m != NULL, "line %d: no JSON-RPC body with the %ld (%.300s)",
                line, status, r->body.p ? r->body.p : "");
  char *text = show(m);
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(m, "error");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(err, "code");
  ck_assert_msg(cJSON_IsObject(err) && cJSON_IsNumber(c),
                "line %d: not a JSON-RPC error: %s", line, text);
  ck_assert_msg(
      strcmp(tu_jstr(m, "jsonrpc") ? tu_jstr(m, "jsonrpc") : "", "2.0") == 0,
      "line %d: jsonrpc is not \"2.0\": %s", line, text);
  if (code)
    ck_assert_msg(c->valueint == code,
                  "line %d: error code %d, expected %d: %s", line, c->valueint,
                  code, text);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
  if (idmode == ID_NULL)
    ck_assert_msg(cJSON_IsNull(id), "line %d: id is not null: %s", line, text);
  else if (idmode == ID_NULL_OR_ABSENT)
    ck_assert_msg(id == NULL || cJSON_IsNull(id),
                  "line %d: id is neither null nor absent: %s", line, text);
  free(text);
  cJSON_Delete(m);
}

/* Asserts r is a 200 carrying a JSON-RPC result; returns the message. */
#define expect_result(r) expect_result_at(__LINE__, (r))
static cJSON *expect_result_at(int line, const lc_resp *r) {
  ck_assert_msg(r->status == 200,
                "line %d: HTTP status %ld, expected 200 (curl: %s; body: "
                "%.300s)",
                line, r->status, curl_easy_strerror(r->curl_rc),
                r->body.p ? r->body.p : "");
  cJSON *m = reply_of(r);
  ck_assert_msg(m != NULL, "line %d: no JSON-RPC reply in %.300s", line,
                r->body.p ? r->body.p : "");
  ck_assert_msg(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(m, "result")),
                "line %d: not a result: %.300s", line, r->body.p);
  return m;
}

/* The text of the first content block of a tools/call result. */
static const char *result_text(const cJSON *m) {
  return tu_jstr(m, "result.content.0.text");
}

/* ---------------------------------------------------------------------------
 * Requests of both eras
 * ------------------------------------------------------------------------ */

#define INIT_FMT                                                               \
  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"       \
  "\"protocolVersion\":\"%s\",\"capabilities\":%s,\"clientInfo\":{\"name\":"   \
  "\"test_http\",\"version\":\"1\"}}}"
#define INITIALIZED                                                            \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define TOOLS_LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"
#define CALL(id, name, args)                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\",\"params\":{"  \
  "\"name\":\"" name "\",\"arguments\":" args "}}"
#define CALL_P(id, name, args)                                                 \
  "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\",\"params\":{"  \
  "\"name\":\"" name "\",\"arguments\":" args ",\"_meta\":{"                   \
  "\"progressToken\":\"tok-" id "\"}}}"

/* POSTs initialize (no session header) and answers in r. */
static void post_init(const char *version, const char *caps, lc_resp *r) {
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, version, caps ? caps : "{}");
  lc_req q = {.body = body};
  http(&q, r);
}

/* Opens a legacy session: initialize, then notifications/initialized.
 * Returns the Mcp-Session-Id (free it). */
static char *open_session(const char *version, const char *caps) {
  lc_resp r;
  post_init(version, caps, &r);
  ck_assert_msg(r.status == 200, "initialize: HTTP %ld (%s) %.300s", r.status,
                curl_easy_strerror(r.curl_rc), r.body.p ? r.body.p : "");
  char sid[1100];
  ck_assert_msg(resp_header(&r, "Mcp-Session-Id", sid, sizeof sid) != NULL,
                "initialize answered without an Mcp-Session-Id header");
  cJSON *m = reply_of(&r);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(tu_jstr(m, "result.protocolVersion"), version);
  cJSON_Delete(m);
  lc_resp_free(&r);
  lc_req q = {.body = INITIALIZED, .session = sid, .version = version};
  http(&q, &r);
  ck_assert_msg(r.status == 202, "notifications/initialized: HTTP %ld",
                r.status);
  ck_assert_uint_eq(r.body.n, 0);
  lc_resp_free(&r);
  char *copy = strdup(sid);
  ck_assert_ptr_nonnull(copy);
  return copy;
}

/* POSTs body on session (NULL = no header) with the session's version. */
static void post(const char *session, const char *body, lc_resp *r) {
  lc_req q = {.body = body, .session = session, .version = V};
  http(&q, r);
}

static void expect_ping_ok(const char *session) {
  lc_resp r;
  post(session, PING, &r);
  cJSON *m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
}

/* Calls echo with text in session and checks the text comes back. */
static void expect_echo(const char *session, const char *id, const char *text) {
  char *body =
      tu_text("{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"%s\"}}}",
              id, text);
  lc_resp r;
  post(session, body, &r);
  free(body);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), text);
  cJSON_Delete(m);
  lc_resp_free(&r);
}

#define META                                                                   \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"test_http\","            \
  "\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define META_V(v)                                                              \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" v "\","          \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"test_http\","            \
  "\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define MODERN_CALL(id, name, args)                                            \
  "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"tools/call\",\"params\":{"  \
  "\"name\":\"" name "\",\"arguments\":" args "," META "}}"
#define MODERN_LIST                                                            \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META  \
  "}}"

/* A 2026-07-28 request with the given header values (NULL = header not
 * sent). */
static void modern(const char *version, const char *method, const char *name,
                   const char *body, lc_resp *r) {
  char hm[256], hn[256];
  lc_req q = {.body = body, .version = version};
  int k = 0;
  if (method) {
    snprintf(hm, sizeof hm, "Mcp-Method: %s", method);
    q.headers[k++] = hm;
  }
  if (name) {
    snprintf(hn, sizeof hn, "Mcp-Name: %s", name);
    q.headers[k++] = hn;
  }
  http(&q, r);
}

/* ---------------------------------------------------------------------------
 * Streams: a request whose response is read while the test goes on
 * ------------------------------------------------------------------------ */

typedef struct stream {
  CURL *c;
  struct curl_slist *sl;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  lc_resp r;
  bool done, aborting;
  curl_socket_t fd;
  CURLcode rc;
  struct stream *next;
} stream;

static stream *open_streams; /* closed by the teardown */

static size_t st_body(char *p, size_t size, size_t n, void *ud) {
  stream *s = ud;
  pthread_mutex_lock(&s->mu);
  bool stop = s->aborting;
  if (!stop)
    lc_buf_add(&s->r.body, p, size * n);
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return stop ? 0 : size * n;
}

static size_t st_head(char *p, size_t size, size_t n, void *ud) {
  stream *s = ud;
  pthread_mutex_lock(&s->mu);
  lc_head_line(&s->r, p, size * n);
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return size * n;
}

static curl_socket_t st_open(void *ud, curlsocktype purpose,
                             struct curl_sockaddr *a) {
  stream *s = ud;
  (void)purpose;
  curl_socket_t fd = socket(a->family, a->socktype, a->protocol);
  pthread_mutex_lock(&s->mu);
  s->fd = fd;
  pthread_mutex_unlock(&s->mu);
  return fd;
}

static int st_close(void *ud, curl_socket_t fd) {
  stream *s = ud;
  pthread_mutex_lock(&s->mu);
  if (s->fd == fd)
    s->fd = CURL_SOCKET_BAD;
  int rc = close(fd);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static void *st_run(void *arg) {
  stream *s = arg;
  CURLcode rc = curl_easy_perform(s->c);
  long st = 0;
  curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &st);
  pthread_mutex_lock(&s->mu);
  s->rc = rc;
  if (st)
    s->r.status = st;
  s->done = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static stream *stream_open(const lc_req *q) {
  stream *s = calloc(1, sizeof *s);
  ck_assert_ptr_nonnull(s);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->fd = CURL_SOCKET_BAD;
  s->c = curl_easy_init();
  ck_assert_ptr_nonnull(s->c);
  s->sl = lc_prepare(s->c, F.port, q, &s->r);
  curl_easy_setopt(s->c, CURLOPT_WRITEFUNCTION, st_body);
  curl_easy_setopt(s->c, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(s->c, CURLOPT_HEADERFUNCTION, st_head);
  curl_easy_setopt(s->c, CURLOPT_HEADERDATA, s);
  curl_easy_setopt(s->c, CURLOPT_OPENSOCKETFUNCTION, st_open);
  curl_easy_setopt(s->c, CURLOPT_OPENSOCKETDATA, s);
  curl_easy_setopt(s->c, CURLOPT_CLOSESOCKETFUNCTION, st_close);
  curl_easy_setopt(s->c, CURLOPT_CLOSESOCKETDATA, s);
  curl_easy_setopt(s->c, CURLOPT_TIMEOUT_MS, T(60000));
  s->next = open_streams;
  open_streams = s;
  ck_assert_int_eq(pthread_create(&s->th, NULL, st_run, s), 0);
  return s;
}

/* Waits until the body holds needle at least n times (or the transfer
 * ended, or ms passed); returns whether it does. */
static bool stream_wait(stream *s, const char *needle, int n, long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&s->mu);
  while (count_n(s->r.body.p, s->r.body.n, needle) < n && !s->done)
    if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
      break;
  bool ok = count_n(s->r.body.p, s->r.body.n, needle) >= n;
  pthread_mutex_unlock(&s->mu);
  return ok;
}

/* Waits for the response headers; returns the status (0 = none yet). */
static long stream_wait_headers(stream *s, long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&s->mu);
  while (!s->r.headers_done && !s->done)
    if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
      break;
  long st = s->r.headers_done || s->done ? s->r.status : 0;
  pthread_mutex_unlock(&s->mu);
  return st;
}

static bool stream_wait_done(stream *s, long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&s->mu);
  while (!s->done)
    if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
      break;
  bool d = s->done;
  pthread_mutex_unlock(&s->mu);
  return d;
}

static bool stream_done(stream *s) {
  pthread_mutex_lock(&s->mu);
  bool d = s->done;
  pthread_mutex_unlock(&s->mu);
  return d;
}

/* The events received so far. */
static sse stream_sse(stream *s) {
  pthread_mutex_lock(&s->mu);
  sse e = sse_parse(s->r.body.p, s->r.body.n);
  pthread_mutex_unlock(&s->mu);
  return e;
}

static const char *stream_header(stream *s, const char *name, char *out,
                                 size_t size) {
  pthread_mutex_lock(&s->mu);
  const char *v = resp_header(&s->r, name, out, size);
  pthread_mutex_unlock(&s->mu);
  return v;
}

/* Disconnects (if still running: the server sees the connection close at
 * once) and frees the stream. */
static void stream_close(stream *s) {
  pthread_mutex_lock(&s->mu);
  s->aborting = true;
  if (!s->done && s->fd != CURL_SOCKET_BAD)
    shutdown(s->fd, SHUT_RDWR);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->th, NULL);
  for (stream **pp = &open_streams; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  curl_easy_cleanup(s->c);
  curl_slist_free_all(s->sl);
  lc_resp_free(&s->r);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* A GET stream on session; asserts it opened as an event stream. */
static stream *open_get(const char *session, const char *last_event_id) {
  char h[300];
  lc_req q = {.method = "GET", .session = session, .version = V};
  if (last_event_id) {
    snprintf(h, sizeof h, "Last-Event-ID: %s", last_event_id);
    q.headers[0] = h;
  }
  return stream_open(&q);
}

/* ---------------------------------------------------------------------------
 * Raw sockets
 * ------------------------------------------------------------------------ */

/* Connects to the server from src (NULL = any local address); -1 when src
 * cannot be bound. */
static int raw_connect_from(const char *src) {
  int fd = lc_connect(F.port, src);
  ck_assert_msg(fd >= 0 || src, "connect: %s", strerror(errno));
  return fd;
}

static int raw_connect(void) { return raw_connect_from(NULL); }

typedef struct raw_resp {
  lc_buf data;
  long status;
  bool closed;   /* EOF or reset seen */
  bool complete; /* a whole response with a length is in */
} raw_resp;

/* How far a whole response in d reaches (0 = not whole yet, or no length). */
static size_t raw_whole(const lc_buf *d) {
  const char *end = find_n(d->p, d->n, "\r\n\r\n");
  if (end == NULL)
    return 0;
  size_t head = (size_t)(end - d->p) + 4;
  char v[64];
  if (lc_header_in(d->p, head, "Content-Length", v, sizeof v)) {
    size_t cl = strtoul(v, NULL, 10);
    return d->n >= head + cl ? head + cl : 0;
  }
  if (lc_header_in(d->p, head, "Transfer-Encoding", v, sizeof v) &&
      strcasecmp(v, "chunked") == 0) {
    const char *z = find_n(d->p + head - 2, d->n - head + 2, "\r\n0\r\n\r\n");
    return z ? (size_t)(z - d->p) + 7 : 0;
  }
  return 0;
}

/* Reads for up to ms: until EOF, or (unless until_close) until a whole
 * response is in. */
static void raw_read(int fd, long ms, bool until_close, raw_resp *r) {
  long end = lc_now_ms() + ms;
  for (;;) {
    if (!until_close && raw_whole(&r->data))
      break;
    long left = end - lc_now_ms();
    if (left <= 0)
      break;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int k = poll(&p, 1, (int)left);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    char tmp[65536];
    ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      r->closed = true;
      break;
    }
    lc_buf_add(&r->data, tmp, (size_t)n);
  }
  r->complete = raw_whole(&r->data) != 0;
  r->status = r->data.n ? lc_status_of(r->data.p, r->data.n) : 0;
}

static void raw_free(raw_resp *r) { lc_buf_free(&r->data); }

/* The body of a whole response with Content-Length. */
static const char *raw_body(const raw_resp *r, size_t *len) {
  const char *end = find_n(r->data.p, r->data.n, "\r\n\r\n");
  if (end == NULL)
    return NULL;
  *len = r->data.n - (size_t)(end + 4 - r->data.p);
  return end + 4;
}

/* The standard headers of a POST to /mcp, without Host. */
#define RAW_POST_HEADERS                                                       \
  "Accept: application/json, text/event-stream\r\n"                            \
  "Content-Type: application/json\r\n"

/* Sends "METHOD /mcp HTTP/1.1", Host 127.0.0.1:PORT unless host is false,
 * the extra header lines (each ending in CRLF), Content-Length and body
 * (when body is not NULL), and reads the answer. */
static void raw_exchange(const char *method, bool host, const char *extra,
                         size_t extra_len, const char *body, raw_resp *r) {
  lc_buf b = {0};
  lc_buf_fmt(&b, "%s /mcp HTTP/1.1\r\n", method);
  if (host)
    lc_buf_fmt(&b, "Host: 127.0.0.1:%u\r\n", (unsigned)F.port);
  if (extra)
    lc_buf_add(&b, extra, extra_len ? extra_len : strlen(extra));
  if (body)
    lc_buf_fmt(&b, "Content-Length: %zu\r\n", strlen(body));
  lc_buf_str(&b, "Connection: close\r\n\r\n");
  if (body)
    lc_buf_str(&b, body);
  int fd = raw_connect();
  memset(r, 0, sizeof *r);
  lc_send_all(fd, b.p, b.n);
  raw_read(fd, T(5000), false, r);
  close(fd);
  lc_buf_free(&b);
}

/* ---------------------------------------------------------------------------
 * Setup and teardown
 * ------------------------------------------------------------------------ */

static void setup(void) {
  memset(&F, 0, sizeof F);
  pthread_mutex_init(&F.mu, NULL);
  pthread_cond_init(&F.cv, NULL);
  G = curl_easy_init();
  ck_assert_ptr_nonnull(G);
}

static void teardown(void) {
  while (open_streams)
    stream_close(open_streams);
  curl_easy_cleanup(G);
  G = NULL;
  if (F.http) {
    assert_loopback_only();
    mcp_http_stop(F.http);
    F.http = NULL;
  }
  /* Calls still parked were cancelled by the stop; finishing them is
   * harmless and releases them. */
  for (mcp_call *c; (c = unpark(0)) != NULL;)
    mcp_call_finish(c, 0);
  mcp_server_free(F.srv);
  F.srv = NULL;
  lc_buf_free(&F.log);
  pthread_mutex_destroy(&F.mu);
  pthread_cond_destroy(&F.cv);
}

/* ===========================================================================
 * Legacy sessions (2025-03-26 ... 2025-11-25): digest §6.3, §9 items 39, 41
 * ======================================================================== */

static bool visible_ascii(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7E)
      return false;
  return true;
}

START_TEST(legacy_initialize_mints_session_id) {
  fx_start(NULL);
  lc_resp r;
  post_init(V, "{}", &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(tu_jstr(m, "result.protocolVersion"), V);
  ck_assert_str_eq(tu_jstr(m, "result.serverInfo.name"), "httptest");
  ck_assert_int_eq(tu_jget(m, "id")->valueint, 0);
  cJSON_Delete(m);
  char sid[1100];
  ck_assert_ptr_nonnull(resp_header(&r, "Mcp-Session-Id", sid, sizeof sid));
  ck_assert_msg(visible_ascii(sid) && strlen(sid) > 0 && strlen(sid) <= 256,
                "session id \"%s\" is not 1-256 visible ASCII characters", sid);
  /* 128 bits need at least 22 characters of any visible-ASCII alphabet
   * (log2(94) < 6.6 bits each). */
  ck_assert_msg(strlen(sid) >= 20, "session id \"%s\" is too short", sid);
  lc_resp_free(&r);
  /* The session works, and a request needs it. */
  lc_req q = {.body = INITIALIZED, .session = sid, .version = V};
  http(&q, &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  post(sid, TOOLS_LIST, &r);
  m = expect_result(&r);
  ck_assert_str_eq(tu_jstr(m, "result.tools.0.name"), "echo");
  cJSON_Delete(m);
  lc_resp_free(&r);
}
END_TEST

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* C4: ids from the CSPRNG: >= 128 bits, distinct, not sequential. 10^4 ids
 * (10^6 in BAD-INPUTS, scaled down for time; 1000 under valgrind). */
START_TEST(c4_session_ids_random_and_distinct) {
  int n = scaled(10000, 1000);
  mcp_http_options o = {.max_sessions = (unsigned)n + 16};
  fx_start(&o);
  char **ids = calloc((size_t)n, sizeof *ids);
  ck_assert_ptr_nonnull(ids);
  long t0 = lc_now_ms();
  size_t minlen = SIZE_MAX;
  for (int i = 0; i < n; i++) {
    lc_resp r;
    post_init(V, "{}", &r);
    ck_assert_msg(r.status == 200, "initialize %d: HTTP %ld", i, r.status);
    char sid[1100];
    ck_assert_ptr_nonnull(resp_header(&r, "Mcp-Session-Id", sid, sizeof sid));
    ck_assert_msg(visible_ascii(sid), "id %d not visible ASCII", i);
    ids[i] = strdup(sid);
    if (strlen(sid) < minlen)
      minlen = strlen(sid);
    lc_resp_free(&r);
  }
  long elapsed = lc_now_ms() - t0;
  /* Distinct. */
  char **sorted = malloc((size_t)n * sizeof *sorted);
  ck_assert_ptr_nonnull(sorted);
  memcpy(sorted, ids, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_str);
  for (int i = 1; i < n; i++)
    ck_assert_msg(strcmp(sorted[i - 1], sorted[i]) != 0,
                  "session id minted twice: %s", sorted[i]);
  free(sorted);
  /* Per position: how many distinct characters appear. A constant position
   * carries no entropy; log2(distinct) bounds what a random one carries. */
  double bits = 0;
  int varying = 0;
  for (size_t p = 0; p < minlen; p++) {
    bool seen[256] = {0};
    int distinct = 0;
    for (int i = 0; i < n; i++) {
      unsigned char ch = (unsigned char)ids[i][p];
      if (!seen[ch]) {
        seen[ch] = true;
        distinct++;
      }
    }
    if (distinct > 1) {
      varying++;
      bits += log2(distinct);
    }
  }
  /* Not sequential: consecutive ids differ in most varying positions. */
  double diff = 0;
  for (int i = 1; i < n; i++) {
    int d = 0;
    for (size_t p = 0; p < minlen; p++)
      d += ids[i][p] != ids[i - 1][p];
    diff += d;
  }
  diff /= n - 1;
  printf("c4: %d ids in %ld ms, length %zu, %d varying positions, about "
         "%.0f bits, consecutive ids differ in %.1f positions\n",
         n, elapsed, strlen(ids[0]), varying, bits, diff);
  ck_assert_msg(bits >= 128, "session ids carry about %.0f bits (< 128)", bits);
  ck_assert_msg(diff >= varying / 2.0,
                "consecutive ids differ in %.1f of %d varying positions: "
                "sequential?",
                diff, varying);
  for (int i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
}
END_TEST

/* C2 / B1: a request other than initialize without the session header. */
START_TEST(c2_b1_missing_session_400) {
  fx_start(NULL);
  lc_resp r;
  post(NULL, CALL("1", "echo", "{\"text\":\"x\"}"), &r);
  assert_rpc_error(&r, 400, 0, ID_ANY);
  lc_resp_free(&r);
  char *sid = open_session(V, "{}");
  post(NULL, TOOLS_LIST, &r);
  assert_rpc_error(&r, 400, 0, ID_ANY);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* C1 and F9: unknown ids are 404 with a JSON-RPC body, and a flood of them
 * costs nothing. */
START_TEST(c1_f9_unknown_session_404) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post("0123456789abcdef0123456789abcdef", PING, &r);
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  /* Warm up, then a flood of random ids. */
  for (int i = 0; i < 50; i++) {
    post("warmup-id", PING, &r);
    lc_resp_free(&r);
  }
  long before = lc_rss_kib();
  int n = scaled(2000, 100);
  unsigned seed = 12345;
  for (int i = 0; i < n; i++) {
    char id[40];
    seed = seed * 1103515245u + 12345u;
    snprintf(id, sizeof id, "%08x%08x%08x%08x", seed, seed ^ 0x5555u, seed * 7u,
             (unsigned)i);
    post(id, PING, &r);
    ck_assert_msg(r.status == 404, "random id %d: HTTP %ld", i, r.status);
    lc_resp_free(&r);
  }
  long after = lc_rss_kib();
  printf("f9: %d random session ids, RSS %ld -> %ld KiB\n", n, before, after);
  if (rss_bounded())
    ck_assert_msg(after - before < 1024, "RSS grew by %ld KiB", after - before);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* C3: session ids that are not 1-256 visible ASCII characters, or given
 * twice: 400 (or 404), and the real session is not hit. */
START_TEST(c3_malformed_session_id_refused) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_buf longid = {0};
  for (int i = 0; i < 300; i++)
    lc_buf_str(&longid, "a");
  struct {
    const char *what;
    lc_buf h;
  } cases[6];
  memset(cases, 0, sizeof cases);
  cases[0].what = "control character";
  lc_buf_fmt(&cases[0].h, "Mcp-Session-Id: %.10s\x01%s\r\n", sid, sid + 10);
  cases[1].what = "NUL after the real id";
  lc_buf_fmt(&cases[1].h, "Mcp-Session-Id: %s", sid);
  lc_buf_add(&cases[1].h, "\0x\r\n", 4);
  cases[2].what = "space inside";
  lc_buf_fmt(&cases[2].h, "Mcp-Session-Id: %.10s %s\r\n", sid, sid + 10);
  cases[3].what = "300 bytes";
  lc_buf_fmt(&cases[3].h, "Mcp-Session-Id: %s\r\n", longid.p);
  cases[4].what = "the header twice";
  lc_buf_fmt(&cases[4].h, "Mcp-Session-Id: %s\r\nMcp-Session-Id: %s\r\n", sid,
             sid);
  cases[5].what = "a byte above 0x7E";
  lc_buf_fmt(&cases[5].h, "Mcp-Session-Id: %.10s\xC3\xA9%s\r\n", sid, sid + 10);
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    lc_buf h = {0};
    lc_buf_str(&h, RAW_POST_HEADERS);
    lc_buf_str(&h, "MCP-Protocol-Version: " V "\r\n");
    lc_buf_add(&h, cases[i].h.p, cases[i].h.n);
    raw_resp rr;
    raw_exchange("POST", true, h.p, h.n,
                 CALL("5", "echo", "{\"text\":\"must not run\"}"), &rr);
    ck_assert_msg(rr.status == 400 || rr.status == 404,
                  "session id with %s: HTTP %ld, expected 400 or 404",
                  cases[i].what, rr.status);
    raw_free(&rr);
    lc_buf_free(&h);
    lc_buf_free(&cases[i].h);
  }
  ck_assert_int_eq(fx_calls(), 0);
  lc_buf_free(&longid);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* C6: DELETE ends the session; afterwards (and for unknown ids) 404. */
START_TEST(c6_delete_ends_session) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  lc_req del = {.method = "DELETE", .session = sid, .version = V};
  http(&del, &r);
  ck_assert_msg(r.status == 204 || r.status == 200, "DELETE: HTTP %ld",
                r.status);
  lc_resp_free(&r);
  post(sid, PING, &r);
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  http(&del, &r);
  ck_assert_int_eq(r.status, 404);
  lc_resp_free(&r);
  lc_req unknown = {.method = "DELETE",
                    .session = "no-such-session-0000000000",
                    .version = V};
  http(&unknown, &r);
  ck_assert_int_eq(r.status, 404);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* A session is bound to the principal that created it (digest §8): another
 * principal presenting its id gets 404. Until a token verifier exists
 * ([auth]) the principal is per listener (mcp_http_options.principal), so
 * the fixture varies it with two listeners on one server: alice's session id
 * is unknown to bob's listener, and still alice's. Per-request principals
 * (tokens) cannot be tested yet. */
START_TEST(session_bound_to_principal) {
  static const char *const scopes[] = {"notes:read", NULL};
  mcp_principal alice = {.subject = "alice", .scopes = scopes};
  mcp_principal bob = {.subject = "bob", .scopes = scopes};
  mcp_http_options oa = {.principal = &alice};
  fx_start(&oa);
  uint16_t port_a = F.port;
  mcp_http_options ob = {.principal = &bob};
  mcp_http *hb = NULL;
  ck_assert_int_eq(mcp_http_start(F.srv, &ob, &hb), 0);
  char *sid = open_session(V, "{}");
  F.port = mcp_http_port(hb);
  lc_resp r;
  post(sid, PING, &r);
  long st = r.status;
  lc_resp_free(&r);
  fresh_curl();
  F.port = port_a;
  mcp_http_stop(hb);
  ck_assert_msg(st == 404, "alice's session id on bob's listener: HTTP %ld",
                st);
  expect_ping_ok(sid);
  free(sid);
  printf("NOTE session_bound_to_principal: principals varied per listener; "
         "per-request principals need a token verifier ([auth])\n");
}
END_TEST

/* B2: initialize on an established session. */
START_TEST(b2_second_initialize_400) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  lc_resp r;
  post(sid, body, &r);
  assert_rpc_error(&r, 400, -32600, ID_ANY);
  lc_resp_free(&r);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* B5: an unsupported MCP-Protocol-Version on a later request. */
START_TEST(b5_unsupported_protocol_version_400) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const bad[] = {"1999-01-01", "2025-11-25x", "latest"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    lc_resp r;
    lc_req q = {.body = PING, .session = sid, .version = bad[i]};
    http(&q, &r);
    ck_assert_msg(r.status == 400, "MCP-Protocol-Version %s: HTTP %ld", bad[i],
                  r.status);
    lc_resp_free(&r);
  }
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* Absent MCP-Protocol-Version means 2025-03-26, and every supported version
 * is accepted on any session (the conformance suite's raw POSTs send
 * 2025-03-26 on a 2025-11-25 session). */
START_TEST(protocol_version_absent_or_any_supported) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const ok[] = {NULL, "2025-03-26", "2025-06-18",
                                   "2025-11-25"};
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    lc_resp r;
    lc_req q = {.body = TOOLS_LIST, .session = sid, .version = ok[i]};
    http(&q, &r);
    ck_assert_msg(r.status == 200, "MCP-Protocol-Version %s: HTTP %ld %.200s",
                  ok[i] ? ok[i] : "(absent)", r.status,
                  r.body.p ? r.body.p : "");
    cJSON *m = reply_of(&r);
    ck_assert_ptr_nonnull(tu_jget(m, "result.tools"));
    cJSON_Delete(m);
    lc_resp_free(&r);
  }
  free(sid);
}
END_TEST

/* C13 (and A18, A19): notifications and responses get 202 and no body. */
START_TEST(c13_notification_and_response_202_empty) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const bodies[] = {
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":12345}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":987,\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":988,\"error\":{\"code\":-1,\"message\":"
      "\"no\"}}",
  };
  for (size_t i = 0; i < TU_COUNT(bodies); i++) {
    lc_resp r;
    post(sid, bodies[i], &r);
    ck_assert_msg(r.status == 202, "%s: HTTP %ld", bodies[i], r.status);
    ck_assert_msg(r.body.n == 0, "%s: 202 with a body: %s", bodies[i],
                  r.body.p);
    lc_resp_free(&r);
  }
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* A session unused for session_idle_s ends (404); one in use does not. */
START_TEST(idle_session_expires) {
  mcp_http_options o = {.session_idle_s = 2};
  fx_start(&o);
  char *idle = open_session(V, "{}");
  char *busy = open_session(V, "{}");
  long end = lc_now_ms() + 5000;
  while (lc_now_ms() < end) {
    expect_ping_ok(busy);
    lc_sleep_ms(300);
  }
  lc_resp r;
  post(idle, PING, &r);
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  expect_ping_ok(busy);
  free(idle);
  free(busy);
}
END_TEST

/* F8: above the session cap initialize gets 503 with Retry-After and a
 * JSON-RPC error; a DELETE or idle expiry makes room again. */
START_TEST(f8_session_cap_503_retry_after) {
  mcp_http_options o = {.max_sessions = 3, .session_idle_s = 4};
  fx_start(&o);
  char *s[3];
  for (int i = 0; i < 3; i++)
    s[i] = open_session(V, "{}");
  lc_resp r;
  post_init(V, "{}", &r);
  assert_rpc_error(&r, 503, 0, ID_ANY);
  char ra[64];
  ck_assert_msg(resp_header(&r, "Retry-After", ra, sizeof ra) != NULL,
                "503 without Retry-After");
  ck_assert_msg(strtol(ra, NULL, 10) > 0, "Retry-After: %s", ra);
  char tmp[64];
  ck_assert_ptr_null(resp_header(&r, "Mcp-Session-Id", tmp, sizeof tmp));
  lc_resp_free(&r);
  /* A DELETE frees a slot at once. */
  lc_req del = {.method = "DELETE", .session = s[0], .version = V};
  http(&del, &r);
  lc_resp_free(&r);
  char *again = open_session(V, "{}");
  /* Full again; idle expiry frees the slots. */
  post_init(V, "{}", &r);
  ck_assert_int_eq(r.status, 503);
  lc_resp_free(&r);
  long end = lc_now_ms() + T(12000);
  long status = 0;
  while (lc_now_ms() < end) {
    lc_sleep_ms(500);
    post_init(V, "{}", &r);
    status = r.status;
    lc_resp_free(&r);
    if (status == 200)
      break;
  }
  ck_assert_msg(status == 200, "no session slot after idle expiry (%ld)",
                status);
  for (int i = 0; i < 3; i++)
    free(s[i]);
  free(again);
}
END_TEST

/* ===========================================================================
 * JSON-RPC framing over HTTP (BAD-INPUTS A and B rows)
 * ======================================================================== */

/* Posts body (len bytes) and asserts 400 with code; the session, when
 * given, still works afterwards. */
static void expect_400(const char *session, const char *body, size_t len,
                       int code, const char *what) {
  lc_resp r;
  lc_req q = {.body = body,
              .body_len = len,
              .session = session,
              .version = session ? V : NULL};
  http(&q, &r);
  ck_assert_msg(r.status == 400, "%s: HTTP %ld (%.200s)", what, r.status,
                r.body.p ? r.body.p : "");
  assert_rpc_error(&r, 400, code, session ? ID_NULL_OR_ABSENT : ID_NULL);
  lc_resp_free(&r);
  if (session)
    expect_ping_ok(session);
}

START_TEST(a1_malformed_json_400) {
  fx_start(NULL);
  expect_400(NULL, "{\"jsonrpc\":", 0, -32700, "truncated, no session");
  char *sid = open_session(V, "{}");
  expect_400(sid, "{\"jsonrpc\":", 0, -32700, "truncated");
  expect_400(sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xC3\x28ng\"}",
             0, -32700, "invalid UTF-8");
  expect_400(sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x01ng\"}", 0,
             -32700, "raw control character (A11)");
  free(sid);
}
END_TEST

/* A6: nesting 10,000 deep in a request handled on a server thread: 400
 * with -32700, no stack overflow. */
START_TEST(a6_deep_nesting_400) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_buf b = {0};
  lc_buf_str(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":");
  for (int i = 0; i < 10000; i++)
    lc_buf_str(&b, "[");
  for (int i = 0; i < 10000; i++)
    lc_buf_str(&b, "]");
  lc_buf_str(&b, "}}}");
  expect_400(sid, b.p, b.n, -32700, "depth 10000");
  lc_buf_free(&b);
  ck_assert_int_eq(fx_calls(), 0);
  free(sid);
}
END_TEST

START_TEST(a2_not_an_object_400) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const bodies[] = {"42", "\"x\"", "null", "true"};
  for (size_t i = 0; i < TU_COUNT(bodies); i++)
    expect_400(sid, bodies[i], 0, -32600, bodies[i]);
  free(sid);
}
END_TEST

/* A3: a batch on a 2025-11-25 session: 4xx, one error, nothing run. */
START_TEST(a3_batch_refused_nothing_run) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid,
       "[" CALL("1", "echo", "{\"text\":\"a\"}") "," CALL(
           "2", "echo", "{\"text\":\"b\"}") "]",
       &r);
  ck_assert_msg(r.status >= 400 && r.status < 500, "batch: HTTP %ld", r.status);
  assert_rpc_error(&r, r.status, -32600, ID_NULL_OR_ABSENT);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

START_TEST(a4_empty_body_400) {
  fx_start(NULL);
  expect_400(NULL, "", 0, -32700, "empty, no session");
  char *sid = open_session(V, "{}");
  expect_400(sid, "", 0, -32700, "empty");
  free(sid);
}
END_TEST

START_TEST(a5_trailing_garbage_400) {
  fx_start(NULL);
  expect_400(NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", 0,
             -32700, "trailing garbage, no session");
  char *sid = open_session(V, "{}");
  expect_400(sid, PING " x", 0, -32700, "trailing garbage");
  expect_400(sid, PING PING, 0, -32700, "two messages");
  free(sid);
}
END_TEST

/* A7: duplicate keys are refused, never "first wins" or "last wins".
 * BAD-INPUTS says -32600; libmcp's strict parser refuses them as malformed
 * JSON (-32700, pinned by tests/unit/test_engine.c), so either code
 * passes here; the status must be 400 and nothing may run. */
START_TEST(a7_duplicate_keys_400) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const bodies[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":"
      "\"tools/list\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"echo\",\"name\":\"fail\",\"arguments\":{}}}",
  };
  for (size_t i = 0; i < TU_COUNT(bodies); i++) {
    lc_resp r;
    post(sid, bodies[i], &r);
    ck_assert_msg(r.status == 400, "%s: HTTP %ld", bodies[i], r.status);
    cJSON *m = reply_of(&r);
    int code =
        tu_jget(m, "error.code") ? tu_jget(m, "error.code")->valueint : 0;
    ck_assert_msg(code == -32600 || code == -32700, "%s: code %d", bodies[i],
                  code);
    cJSON_Delete(m);
    lc_resp_free(&r);
  }
  ck_assert_int_eq(fx_calls(), 0);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* ===========================================================================
 * Responses and streams (legacy): digest §6.3, §9 items 33, 34, 40
 * ======================================================================== */

/* Stops the server and starts a new one with o. */
static void fx_restart(const mcp_http_options *o) {
  while (open_streams)
    stream_close(open_streams);
  fresh_curl();
  mcp_http_stop(F.http);
  F.http = NULL;
  for (mcp_call *c; (c = unpark(0)) != NULL;)
    mcp_call_finish(c, 0);
  mcp_server_free(F.srv);
  F.srv = NULL;
  fx_start(o);
}

static void assert_header(const lc_resp *r, const char *name,
                          const char *want) {
  char v[256];
  ck_assert_msg(resp_header(r, name, v, sizeof v) != NULL, "no %s header",
                name);
  ck_assert_msg(strcasecmp(v, want) == 0, "%s: %s, expected %s", name, v, want);
}

START_TEST(json_response_for_simple_request) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid, CALL("3", "echo", "{\"text\":\"hello\"}"), &r);
  cJSON *m = expect_result(&r);
  char type[128];
  ck_assert_str_eq(resp_type(&r, type, sizeof type), "application/json");
  ck_assert_str_eq(result_text(m), "hello");
  ck_assert_int_eq(tu_jget(m, "id")->valueint, 3);
  cJSON_Delete(m);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* With prefer_sse every request is answered as an event stream: "event:
 * message" events whose data is one JSON-RPC message on one line, blank
 * line terminated, X-Accel-Buffering: no, and the stream ends after the
 * response. */
START_TEST(sse_framing_and_headers) {
  mcp_http_options o = {.prefer_sse = true};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid, CALL("4", "echo", "{\"text\":\"framed\"}"), &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_int_eq(r.curl_rc, CURLE_OK); /* the stream ended by itself */
  char type[128];
  ck_assert_str_eq(resp_type(&r, type, sizeof type), "text/event-stream");
  assert_header(&r, "X-Accel-Buffering", "no");
  ck_assert_msg(find_n(r.body.p, r.body.n, "event: message\n") &&
                    find_n(r.body.p, r.body.n, "data: {"),
                "not \"event: message\" / \"data: {...}\" framing: %s",
                r.body.p);
  ck_assert_msg(r.body.n >= 2 &&
                    memcmp(r.body.p + r.body.n - 2, "\n\n", 2) == 0,
                "the stream does not end with a blank line: %s", r.body.p);
  sse e = sse_parse(r.body.p, r.body.n);
  ck_assert(!e.partial);
  int msgs = 0;
  for (int i = 0; i < e.n; i++) {
    if (e.ev[i].data[0] == '\0')
      continue;
    msgs++;
    ck_assert_msg(e.ev[i].event && strcmp(e.ev[i].event, "message") == 0,
                  "event type %s", e.ev[i].event ? e.ev[i].event : "(none)");
    ck_assert_ptr_null(strchr(e.ev[i].data, '\n'));
  }
  ck_assert_int_eq(msgs, 1);
  sse_free(&e);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "framed");
  cJSON_Delete(m);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* 2025-11-25 streams start with a priming event: an id and empty data. */
START_TEST(sse_priming_event_2025_11_25) {
  mcp_http_options o = {.prefer_sse = true};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  static const char *const bodies[] = {PING, CALL_P("6", "progress", "{}")};
  for (size_t i = 0; i < TU_COUNT(bodies); i++) {
    lc_resp r;
    post(sid, bodies[i], &r);
    ck_assert_int_eq(r.status, 200);
    sse e = sse_parse(r.body.p, r.body.n);
    ck_assert_int_ge(e.n, 2);
    ck_assert_msg(e.ev[0].has_id && e.ev[0].id[0] && e.ev[0].has_data &&
                      e.ev[0].data[0] == '\0',
                  "the first event is not a priming event (id, empty data): "
                  "%.300s",
                  r.body.p);
    ck_assert(visible_ascii(e.ev[0].id));
    sse_free(&e);
    lc_resp_free(&r);
  }
  free(sid);
}
END_TEST

/* A tool reporting progress: SSE with the notifications, then the result
 * (digest §9 items 29, 34). */
START_TEST(progress_on_sse_then_result) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid, CALL_P("6", "progress", "{}"), &r);
  ck_assert_int_eq(r.status, 200);
  char type[128];
  ck_assert_str_eq(resp_type(&r, type, sizeof type), "text/event-stream");
  assert_header(&r, "X-Accel-Buffering", "no");
  sse e = sse_parse(r.body.p, r.body.n);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  ck_assert_msg(n == 4, "%d messages: %s", n, r.body.p);
  for (int i = 0; i < 3; i++) {
    ck_assert_str_eq(tu_jstr(m[i], "method"), "notifications/progress");
    ck_assert_str_eq(tu_jstr(m[i], "params.progressToken"), "tok-6");
    ck_assert_int_eq(tu_jget(m[i], "params.progress")->valueint, i + 1);
    ck_assert_ptr_null(tu_jget(m[i], "id"));
  }
  ck_assert_int_eq(tu_jget(m[3], "id")->valueint, 6);
  ck_assert_str_eq(result_text(m[3]), "progressed");
  free_messages(m, n);
  sse_free(&e);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* GET opens the session's standalone stream, where list_changed goes. */
START_TEST(get_stream_receives_list_changed) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  stream *s = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(s, T(5000)), 200);
  char v[128];
  ck_assert_ptr_nonnull(stream_header(s, "Content-Type", v, sizeof v));
  ck_assert_msg(strncasecmp(v, "text/event-stream", 17) == 0, "%s", v);
  ck_assert_ptr_nonnull(stream_header(s, "X-Accel-Buffering", v, sizeof v));
  ck_assert_str_eq(v, "no");
  mcp_tool t = {.name = "extra",
                .description = "Added while serving.",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  ck_assert_msg(stream_wait(s, "notifications/tools/list_changed", 1, T(5000)),
                "no list_changed on the GET stream");
  ck_assert_int_eq(mcp_server_remove_tool(F.srv, "extra"), 0);
  ck_assert(stream_wait(s, "notifications/tools/list_changed", 2, T(5000)));
  ck_assert(!stream_done(s));
  /* No responses on the standalone stream. */
  sse e = stream_sse(s);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  for (int i = 0; i < n; i++)
    ck_assert(tu_jget(m[i], "result") == NULL &&
              tu_jget(m[i], "error") == NULL);
  free_messages(m, n);
  sse_free(&e);
  stream_close(s);
  free(sid);
}
END_TEST

/* C10: one standalone stream per session. */
START_TEST(c10_second_get_409) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  stream *s = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(s, T(5000)), 200);
  lc_resp r;
  lc_req q = {
      .method = "GET", .session = sid, .version = V, .timeout_ms = T(5000)};
  http(&q, &r);
  ck_assert_msg(r.status == 409, "second GET: HTTP %ld", r.status);
  lc_resp_free(&r);
  /* The first one still gets what it should. */
  mcp_tool t = {.name = "extra",
                .description = "Added while serving.",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  ck_assert(stream_wait(s, "notifications/tools/list_changed", 1, T(5000)));
  stream_close(s);
  free(sid);
}
END_TEST

/* C7: GET without Accept: text/event-stream is 406; with disable_get, 405. */
START_TEST(c7_get_accept_406_and_disabled_405) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const accepts[] = {"Accept: application/json",
                                        "Accept: text/html", "Accept:"};
  for (size_t i = 0; i < TU_COUNT(accepts); i++) {
    lc_resp r;
    lc_req q = {.method = "GET",
                .session = sid,
                .version = V,
                .headers = {accepts[i]},
                .timeout_ms = T(5000)};
    http(&q, &r);
    ck_assert_msg(r.status == 406, "GET with \"%s\": HTTP %ld", accepts[i],
                  r.status);
    lc_resp_free(&r);
  }
  free(sid);
  mcp_http_options o = {.disable_get = true};
  fx_restart(&o);
  sid = open_session(V, "{}");
  lc_resp r;
  lc_req q = {
      .method = "GET", .session = sid, .version = V, .timeout_ms = T(5000)};
  http(&q, &r);
  ck_assert_msg(r.status == 405, "GET with disable_get: HTTP %ld", r.status);
  lc_resp_free(&r);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* C8: a POST whose Accept allows neither JSON nor SSE is 406 before
 * anything runs; one allowing only JSON, if served, gets JSON. */
START_TEST(c8_post_accept_406) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_resp r;
  lc_req q = {.body = CALL("1", "echo", "{\"text\":\"x\"}"),
              .session = sid,
              .version = V,
              .headers = {"Accept: text/html"}};
  http(&q, &r);
  ck_assert_msg(r.status == 406, "Accept: text/html: HTTP %ld", r.status);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  q.headers[0] = "Accept: application/json";
  http(&q, &r);
  ck_assert_msg(r.status == 406 || r.status == 200,
                "Accept: application/json: HTTP %ld", r.status);
  if (r.status == 200) {
    char type[128];
    ck_assert_str_eq(resp_type(&r, type, sizeof type), "application/json");
  }
  lc_resp_free(&r);
  q.headers[0] = "Accept: application/json;q=0.9, text/event-stream;q=0.5";
  http(&q, &r);
  cJSON *m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* C9: only application/json bodies reach the dispatcher. */
START_TEST(c9_content_type_415_before_dispatch) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  const char *body = CALL("1", "echo", "{\"text\":\"x\"}");
  lc_resp r;
  lc_req q = {.body = body,
              .session = sid,
              .version = V,
              .headers = {"Content-Type: text/plain"}};
  http(&q, &r);
  ck_assert_msg(r.status == 415, "text/plain: HTTP %ld", r.status);
  lc_resp_free(&r);
  q.headers[0] = "Content-Type: application/x-www-form-urlencoded";
  http(&q, &r);
  ck_assert_msg(r.status == 415, "form: HTTP %ld", r.status);
  lc_resp_free(&r);
  q.headers[0] = "Content-Type:"; /* none */
  http(&q, &r);
  ck_assert_msg(r.status == 415 || r.status == 400, "none: HTTP %ld", r.status);
  lc_resp_free(&r);
  q.headers[0] = "Content-Type: application/jsonx";
  http(&q, &r);
  ck_assert_msg(r.status == 415, "application/jsonx: HTTP %ld", r.status);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  static const char *const ok[] = {"Content-Type: application/json; "
                                   "charset=utf-8",
                                   "Content-Type: Application/JSON"};
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    q.headers[0] = ok[i];
    http(&q, &r);
    cJSON *m = expect_result(&r);
    cJSON_Delete(m);
    lc_resp_free(&r);
  }
  free(sid);
}
END_TEST

/* C14: other methods on the endpoint are 405 with Allow; other paths 404. */
START_TEST(c14_other_methods_405_with_allow) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const methods[] = {"PUT", "PATCH", "BREW"};
  for (size_t i = 0; i < TU_COUNT(methods); i++) {
    lc_resp r;
    lc_req q = {.method = methods[i],
                .body = PING,
                .session = sid,
                .version = V,
                .headers = {"Content-Type: application/json"}};
    http(&q, &r);
    ck_assert_msg(r.status == 405, "%s: HTTP %ld", methods[i], r.status);
    char allow[128];
    ck_assert_msg(resp_header(&r, "Allow", allow, sizeof allow) != NULL,
                  "%s: 405 without Allow", methods[i]);
    ck_assert_msg(strstr(allow, "POST") != NULL, "Allow: %s", allow);
    lc_resp_free(&r);
  }
  lc_resp r;
  lc_req q = {.path = "/other", .body = PING, .session = sid, .version = V};
  http(&q, &r);
  ck_assert_msg(r.status == 404, "POST /other: HTTP %ld", r.status);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* The ids of the data events of e, in order (pointers into e). */
static int event_ids(const sse *e, const char **ids, int max) {
  int k = 0;
  for (int i = 0; i < e->n && k < max; i++)
    if (e->ev[i].data[0] && e->ev[i].has_id)
      ids[k++] = e->ev[i].id;
  return k;
}

/* Opens GET with Last-Event-ID, retrying while the server still holds the
 * previous standalone stream (409). */
static stream *resume(const char *sid, const char *last) {
  long end = lc_now_ms() + T(3000);
  for (;;) {
    stream *s = open_get(sid, last);
    long st = stream_wait_headers(s, T(5000));
    if (st != 409 || lc_now_ms() > end)
      return s;
    stream_close(s);
    lc_sleep_ms(100);
  }
}

/* Last-Event-ID replays the missed events of that stream only. */
START_TEST(last_event_id_replays_only_that_stream) {
  /* A short keep-alive lets the server see the first GET stream's
   * disconnect quickly; the semantics tested do not depend on it. */
  mcp_http_options o = {.keepalive_s = 1};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  stream *g = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(g, T(5000)), 200);
  mcp_tool t1 = {.name = "extra1",
                 .description = "Added while serving.",
                 .annotations = TC_READ_ONLY,
                 .handler = tool_echo};
  mcp_tool t2 = t1;
  t2.name = "extra2";
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t1, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t2, NULL), 0);
  ck_assert(stream_wait(g, "notifications/tools/list_changed", 2, T(5000)));
  sse ge = stream_sse(g);
  const char *gid[8];
  ck_assert_msg(event_ids(&ge, gid, 8) == 2,
                "the GET stream's events lack ids (needed to resume)");
  char first[256];
  snprintf(first, sizeof first, "%s", gid[0]);
  stream_close(g);
  /* A request stream of the same session meanwhile. */
  lc_resp r;
  post(sid, CALL_P("6", "progress", "{}"), &r);
  ck_assert_int_eq(r.status, 200);
  sse pe = sse_parse(r.body.p, r.body.n);
  const char *pid[8];
  int np = event_ids(&pe, pid, 8);
  ck_assert_msg(np == 4, "%d of the request stream's 4 events have ids", np);
  /* Ids are unique across the session's streams. */
  for (int i = 0; i < np; i++)
    ck_assert_msg(strcmp(pid[i], gid[0]) && strcmp(pid[i], gid[1]),
                  "event id %s used on two streams", pid[i]);
  /* Resume the standalone stream after its first event: the second list
   * change, nothing of the request stream, not the first again. */
  stream *g2 = resume(sid, first);
  ck_assert_int_eq(stream_wait_headers(g2, T(5000)), 200);
  ck_assert_msg(stream_wait(g2, "notifications/tools/list_changed", 1, T(3000)),
                "the missed list_changed was not replayed");
  lc_sleep_ms(T(500));
  sse e2 = stream_sse(g2);
  cJSON *m[16];
  int n = sse_messages(&e2, m, 16);
  ck_assert_msg(n == 1, "%d messages replayed, expected 1", n);
  ck_assert_str_eq(tu_jstr(m[0], "method"), "notifications/tools/list_changed");
  const char *rid[4];
  ck_assert_int_eq(event_ids(&e2, rid, 4), 1);
  ck_assert_str_eq(rid[0], gid[1]);
  free_messages(m, n);
  sse_free(&e2);
  stream_close(g2);
  /* Resuming from an event of the request stream never yields the
   * standalone stream's events. */
  char pfirst[256];
  snprintf(pfirst, sizeof pfirst, "%s", pid[0]);
  stream *g3 = resume(sid, pfirst);
  long st = stream_wait_headers(g3, T(5000));
  if (st == 200) {
    lc_sleep_ms(T(700));
    sse e3 = stream_sse(g3);
    n = sse_messages(&e3, m, 16);
    for (int i = 0; i < n; i++)
      ck_assert_msg(tu_jstr(m[i], "method") == NULL ||
                        strcmp(tu_jstr(m[i], "method"),
                               "notifications/tools/list_changed") != 0,
                    "a request stream's resumption replayed list_changed");
    free_messages(m, n);
    sse_free(&e3);
  }
  stream_close(g3);
  sse_free(&ge);
  sse_free(&pe);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* C11: a Last-Event-ID from another session, or forged, replays nothing
 * (404, or a stream without messages). */
static void expect_no_replay(const char *sid, const char *last) {
  stream *s = resume(sid, last);
  long st = stream_wait_headers(s, T(5000));
  ck_assert_msg(st == 200 || st == 400 || st == 404,
                "Last-Event-ID %s: HTTP %ld", last, st);
  if (st == 200) {
    lc_sleep_ms(T(800));
    sse e = stream_sse(s);
    cJSON *m[4];
    int n = sse_messages(&e, m, 4);
    ck_assert_msg(n == 0, "Last-Event-ID %s replayed %d messages", last, n);
    sse_free(&e);
  }
  stream_close(s);
}

START_TEST(c11_foreign_or_forged_last_event_id) {
  mcp_http_options o = {.keepalive_s = 1}; /* see last_event_id_... */
  fx_start(&o);
  char *a = open_session(V, "{}");
  stream *g = open_get(a, NULL);
  ck_assert_int_eq(stream_wait_headers(g, T(5000)), 200);
  mcp_tool t = {.name = "extra",
                .description = "Added while serving.",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  ck_assert(stream_wait(g, "notifications/tools/list_changed", 1, T(5000)));
  sse e = stream_sse(g);
  const char *ids[4];
  ck_assert_int_eq(event_ids(&e, ids, 4), 1);
  char eid[256];
  snprintf(eid, sizeof eid, "%s", ids[0]);
  sse_free(&e);
  stream_close(g);
  /* Session b never saw that event. */
  char *b = open_session(V, "{}");
  expect_no_replay(b, eid);
  /* Forged ids on the session that did. */
  static const char *const forged[] = {"forged-0", "0", "-1",
                                       "../../etc/passwd"};
  for (size_t i = 0; i < TU_COUNT(forged); i++)
    expect_no_replay(a, forged[i]);
  free(a);
  free(b);
}
END_TEST

/* F11: quiet streams outlive the connection timeout through keep-alive
 * comments, standalone and request streams alike. */
START_TEST(f11_quiet_stream_keepalive) {
  mcp_http_options o = {.connection_timeout_s = 2, .keepalive_s = 1};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  stream *g = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(g, T(5000)), 200);
  lc_req q = {.body = CALL_P("21", "park", "{}"), .session = sid, .version = V};
  stream *p = stream_open(&q);
  ck_assert(stream_wait(p, "notifications/progress", 1, T(5000)));
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  lc_sleep_ms(5000);
  ck_assert_msg(!stream_done(g), "the quiet GET stream was closed");
  ck_assert_msg(!stream_done(p), "the quiet request stream was closed");
  sse e = stream_sse(g);
  ck_assert_msg(e.comments >= 2, "%d keep-alive comments in 5 s", e.comments);
  sse_free(&e);
  e = stream_sse(p);
  ck_assert_msg(e.comments >= 2, "%d keep-alive comments in 5 s", e.comments);
  sse_free(&e);
  mcp_tool t = {.name = "extra",
                .description = "Added while serving.",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  ck_assert(stream_wait(g, "notifications/tools/list_changed", 1, T(3000)));
  finish_text(c, "after the quiet");
  ck_assert(stream_wait(p, "after the quiet", 1, T(3000)));
  stream_close(p);
  stream_close(g);
  free(sid);
}
END_TEST

/* ===========================================================================
 * Calls that outlive their request: elicitation, deferral, disconnects
 * ======================================================================== */

/* A server-to-client request goes on the call's stream; the client answers
 * on a second POST (202) while the first stays open, and the first stream
 * then carries the result (conformance pitfall 8). */
START_TEST(elicitation_answered_on_second_post) {
  fx_start(NULL);
  char *sid = open_session(V, "{\"elicitation\":{}}");
  lc_req q = {.body = CALL("7", "ask", "{}"), .session = sid, .version = V};
  stream *s = stream_open(&q);
  ck_assert_msg(stream_wait(s, "elicitation/create", 1, T(5000)),
                "no elicitation/create on the call's stream");
  char v[128];
  ck_assert_ptr_nonnull(stream_header(s, "Content-Type", v, sizeof v));
  ck_assert_msg(strncasecmp(v, "text/event-stream", 17) == 0, "%s", v);
  sse e = stream_sse(s);
  cJSON *m[8];
  int n = sse_messages(&e, m, 8);
  ck_assert_int_ge(n, 1);
  ck_assert_str_eq(tu_jstr(m[n - 1], "method"), "elicitation/create");
  char *id = show(tu_jget(m[n - 1], "id"));
  free_messages(m, n);
  sse_free(&e);
  char body[256];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\","
           "\"content\":{}}}",
           id);
  free(id);
  ck_assert(!stream_done(s));
  lc_resp r;
  post(sid, body, &r);
  ck_assert_msg(r.status == 202, "the answer's POST: HTTP %ld", r.status);
  ck_assert_uint_eq(r.body.n, 0);
  lc_resp_free(&r);
  ck_assert_msg(stream_wait(s, "answered: accept", 1, T(5000)),
                "no result on the first stream");
  ck_assert_msg(stream_wait_done(s, T(5000)),
                "the stream stays open after the response");
  e = stream_sse(s);
  n = sse_messages(&e, m, 8);
  ck_assert_int_eq(tu_jget(m[n - 1], "id")->valueint, 7);
  ck_assert_str_eq(result_text(m[n - 1]), "answered: accept");
  free_messages(m, n);
  sse_free(&e);
  stream_close(s);
  free(sid);
}
END_TEST

/* A tool that runs as a task (2025-11-25: when the client asks) and asks
 * the user first, as tool_ask does. */
static int tool_task_ask(mcp_call *call, void *ud) {
  return tool_ask(call, ud);
}

/* The task's status, polled with tasks/get until it is want (at most ms). */
static bool task_reaches(const char *sid, const char *id, const char *want,
                         long ms) {
  struct timespec dl = deadline_in(ms), now;
  char *body = tu_text("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\","
                       "\"params\":{\"taskId\":\"%s\"}}",
                       id);
  bool reached = false;
  do {
    lc_resp r;
    post(sid, body, &r);
    cJSON *m = expect_result(&r);
    const char *st = tu_jstr(m, "result.status");
    reached = st && strcmp(st, want) == 0;
    cJSON_Delete(m);
    lc_resp_free(&r);
    if (!reached)
      nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    clock_gettime(CLOCK_REALTIME, &now);
  } while (!reached && (now.tv_sec < dl.tv_sec ||
                        (now.tv_sec == dl.tv_sec && now.tv_nsec < dl.tv_nsec)));
  free(body);
  return reached;
}

START_TEST(task_input_reaches_tasks_result_without_get_stream) {
  fx_start(NULL);
  static const mcp_tool task_ask = {.name = "task_ask",
                                    .description = "Asks the user, as a task.",
                                    .flags = MCP_TOOL_TASK_OPTIONAL,
                                    .annotations = TC_READ_ONLY,
                                    .handler = tool_task_ask};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &task_ask, NULL), 0);
  /* No GET stream is ever opened on this session. */
  char *sid = open_session(V, "{\"elicitation\":{}}");
  lc_resp r;
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
       "\"name\":\"task_ask\",\"arguments\":{},\"task\":{}}}",
       &r);
  cJSON *m = expect_result(&r);
  char *id = strdup(tu_jstr(m, "result.task.taskId"));
  cJSON_Delete(m);
  lc_resp_free(&r);
  ck_assert_msg(task_reaches(sid, id, "input_required", T(5000)),
                "the task never asked");
  /* As the client is told to on input_required: tasks/result, whose stream
   * carries the question (with the task), then the result. */
  char *body = tu_text("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tasks/"
                       "result\",\"params\":{\"taskId\":\"%s\"}}",
                       id);
  lc_req q = {.body = body, .session = sid, .version = V};
  stream *s = stream_open(&q);
  ck_assert_msg(stream_wait(s, "elicitation/create", 1, T(5000)),
                "no elicitation/create on the tasks/result stream");
  sse e = stream_sse(s);
  cJSON *msgs[8];
  int n = sse_messages(&e, msgs, 8);
  ck_assert_int_ge(n, 1);
  cJSON *ask = msgs[n - 1];
  ck_assert_str_eq(tu_jstr(ask, "method"), "elicitation/create");
  const cJSON *meta = tu_jget(ask, "params._meta");
  const cJSON *related = cJSON_GetObjectItemCaseSensitive(
      meta, "io.modelcontextprotocol/related-task");
  ck_assert_str_eq(tu_jstr(related, "taskId"), id);
  char *rid = show(tu_jget(ask, "id"));
  free_messages(msgs, n);
  sse_free(&e);
  char *answer =
      tu_text("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":"
              "\"accept\",\"content\":{}}}",
              rid);
  post(sid, answer, &r);
  ck_assert_msg(r.status == 202, "the answer's POST: HTTP %ld", r.status);
  lc_resp_free(&r);
  ck_assert_msg(stream_wait(s, "answered: accept", 1, T(5000)),
                "no result on the tasks/result stream");
  ck_assert_msg(stream_wait_done(s, T(5000)),
                "the stream stays open after the response");
  e = stream_sse(s);
  n = sse_messages(&e, msgs, 8);
  ck_assert_int_eq(tu_jget(msgs[n - 1], "id")->valueint, 8);
  ck_assert_str_eq(result_text(msgs[n - 1]), "answered: accept");
  free_messages(msgs, n);
  sse_free(&e);
  stream_close(s);
  free(answer);
  free(rid);
  free(body);
  free(id);
  free(sid);
}
END_TEST

static void *finish_late(void *arg) {
  mcp_result_text(arg, "late");
  mcp_call_finish(arg, 0);
  return NULL;
}

/* A deferred call holds no server thread: with one polling thread, other
 * requests are answered while it waits, and it finishes from a thread of
 * the application. */
START_TEST(deferred_call_finished_from_another_thread) {
  fx_start(NULL); /* one polling thread */
  char *sid = open_session(V, "{}");
  lc_req q = {.body = CALL("8", "park", "{}"), .session = sid, .version = V};
  stream *s = stream_open(&q);
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  expect_ping_ok(sid);
  lc_resp r;
  post(sid, CALL("9", "echo", "{\"text\":\"meanwhile\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "meanwhile");
  cJSON_Delete(m);
  lc_resp_free(&r);
  char *other = open_session(V, "{}");
  expect_ping_ok(other);
  ck_assert(!stream_done(s));
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, finish_late, c), 0);
  pthread_join(th, NULL);
  ck_assert_msg(stream_wait_done(s, T(5000)), "no answer after the finish");
  ck_assert_int_eq(s->r.status, 200);
  m = reply_of(&s->r);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(tu_jget(m, "id")->valueint, 8);
  ck_assert_str_eq(result_text(m), "late");
  cJSON_Delete(m);
  stream_close(s);
  free(sid);
  free(other);
}
END_TEST

/* The guard's workers answer calls over HTTP as a deferred call's thread
 * does: in a legacy session, and statelessly, with other requests
 * answered meanwhile. */
START_TEST(guarded_calls_in_both_eras) {
#ifndef MCP_TEST_GUARD
  ck_abort_msg("built without the guard (MCP_GUARD)");
#endif
  fx_guard = true;
  fx_start(NULL);
  fx_guard = false;
  char *sid = open_session(V, "{}");
  expect_echo(sid, "3", "guarded");
  /* Read under the lock, checked after it (a failed check must not leave
   * it held); "(best effort)" follows under valgrind, which hides
   * Landlock. */
  char where[64];
  pthread_mutex_lock(&F.mu);
  snprintf(where, sizeof where, "%s", fx_ran_under);
  pthread_mutex_unlock(&F.mu);
  ck_assert_msg(strncmp(where, "guard: read-only, closed-world", 30) == 0,
                "ran under %s", where);
  expect_ping_ok(sid);
  lc_resp r;
  modern("2026-07-28", "tools/call", "echo",
         MODERN_CALL("4", "echo", "{\"text\":\"stateless\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(tu_jstr(m, "result.resultType"), "complete");
  ck_assert_str_eq(result_text(m), "stateless");
  cJSON_Delete(m);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* ===========================================================================
 * HTTPS (mcp_http_options.tls, mcp_http_reload_tls)
 * ======================================================================== */

static char tls_dir[64];

/* Makes a self-signed certificate for localhost and 127.0.0.1, with its
 * key, as tls_dir/NAME.crt and NAME.key, with the openssl command. */
static void make_cert(const char *name) {
  char cmd[600];
  snprintf(cmd, sizeof cmd,
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
           "-nodes -days 2 -subj /CN=localhost -addext "
           "subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout %s/%s.key "
           "-out %s/%s.crt 2>/dev/null",
           tls_dir, name, tls_dir, name);
  ck_assert_msg(system(cmd) == 0, "openssl could not make a certificate");
}

/* A fresh temporary folder for the certificates, in tls_dir. */
static void tls_dir_make(void) {
  snprintf(tls_dir, sizeof tls_dir, "/tmp/mcp-tls-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tls_dir));
}

static char *tls_path(const char *name, const char *ext) {
  static char paths[4][128];
  static int next;
  char *p = paths[next++ % 4];
  snprintf(p, sizeof paths[0], "%s/%s.%s", tls_dir, name, ext);
  return p;
}

/* A whole small file, NUL-terminated (free with free). */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  char *buf = calloc(1, 65536);
  ck_assert_ptr_nonnull(buf);
  size_t n = fread(buf, 1, 65535, f);
  fclose(f);
  ck_assert_uint_gt(n, 0);
  return buf;
}

static void tls_start(const char *name) {
  tls_dir_make();
  make_cert("a");
  make_cert("b");
  mcp_http_tls tls = {.cert_file = tls_path(name, "crt"),
                      .key_file = tls_path(name, "key")};
  mcp_http_options o = {.tls = &tls};
  fx_start(&o);
}

static void tls_stop(void) {
  fx_ca = NULL;
  char cmd[120];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tls_dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* A call in a new legacy session over https, trusting ca: echo answers
 * text. */
static void tls_echo(const char *ca, const char *text) {
  fx_ca = ca;
  char *sid = open_session(V, "{}");
  expect_echo(sid, "5", text);
  free(sid);
}

START_TEST(https_serves_both_eras_and_refuses_plain_http) {
  tls_start("a");
  tls_echo(tls_path("a", "crt"), "over tls");
  /* 2026-07-28, statelessly, with a browser's https Origin: the default
   * allowlist takes the https form of localhost. */
  lc_resp r;
  lc_req q = {.body = MODERN_CALL("6", "echo", "{\"text\":\"modern\"}"),
              .version = "2026-07-28",
              .headers = {"Mcp-Method: tools/call", "Mcp-Name: echo",
                          "Origin: https://localhost"}};
  http(&q, &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "modern");
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* Plain HTTP to the TLS port gets no MCP answer. */
  lc_req plain = {.body = MODERN_CALL("7", "echo", "{\"text\":\"x\"}"),
                  .version = "2026-07-28"};
  lc_http(G, F.port, &plain, &r);
  ck_assert_int_ne(r.status, 200);
  lc_resp_free(&r);
  /* Nor does a client that does not trust the certificate. */
  fresh_curl();
  lc_req wrong = {.body = MODERN_CALL("8", "echo", "{\"text\":\"x\"}"),
                  .version = "2026-07-28",
                  .ca_file = tls_path("b", "crt")};
  lc_http(G, F.port, &wrong, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_ne(r.curl_rc, CURLE_OK);
  lc_resp_free(&r);
  tls_stop();
}
END_TEST

START_TEST(https_certificate_reloaded_without_dropping_connections) {
  tls_start("a");
  /* A keep-alive connection made with certificate a. */
  fx_ca = tls_path("a", "crt");
  char *sid = open_session(V, "{}");
  /* Certificate b replaces a: new handshakes get b. */
  mcp_http_tls b = {.cert_file = tls_path("b", "crt"),
                    .key_file = tls_path("b", "key")};
  ck_assert_int_eq(mcp_http_reload_tls(F.http, &b), 0);
  /* The open connection goes on (curl reuses it: same handle, same CA). */
  expect_ping_ok(sid);
  free(sid);
  /* A new connection trusts b, and no longer a. */
  fresh_curl();
  tls_echo(tls_path("b", "crt"), "renewed");
  fresh_curl();
  lc_resp r;
  lc_req old = {.body = MODERN_CALL("9", "echo", "{\"text\":\"x\"}"),
                .version = "2026-07-28",
                .ca_file = tls_path("a", "crt")};
  lc_http(G, F.port, &old, &r);
  ck_assert_int_eq(r.status, 0);
  lc_resp_free(&r);
  /* An unusable pair is refused and the current one stays. */
  mcp_http_tls mixed = {.cert_file = tls_path("a", "crt"),
                        .key_file = tls_path("b", "key")};
  ck_assert_int_eq(mcp_http_reload_tls(F.http, &mixed), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(F.log.p, "not usable together"));
  mcp_http_tls missing = {.cert_file = "/nonexistent/mcp.crt",
                          .key_file = tls_path("b", "key")};
  ck_assert_int_eq(mcp_http_reload_tls(F.http, &missing), MCP_EIO);
  fresh_curl();
  tls_echo(tls_path("b", "crt"), "still b");
  /* NULL re-reads the files given at start: a again. */
  ck_assert_int_eq(mcp_http_reload_tls(F.http, NULL), 0);
  fresh_curl();
  tls_echo(tls_path("a", "crt"), "a again");
  tls_stop();
}
END_TEST

START_TEST(https_options_checked_at_start) {
  tls_dir_make();
  make_cert("a");
  make_cert("b");
  mcp_server_info info = {.name = "tls", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  fx_add_tools();
  mcp_http_tls mixed = {.cert_file = tls_path("a", "crt"),
                        .key_file = tls_path("b", "key")};
  mcp_http_options o = {.tls = &mixed};
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(F.srv), "not usable"));
  mcp_http_tls both = {.cert_file = tls_path("a", "crt"),
                       .cert_pem = "x",
                       .key_file = tls_path("a", "key")};
  o.tls = &both;
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
  mcp_http_tls none = {.key_file = tls_path("a", "key")};
  o.tls = &none;
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
  /* PEM text instead of files; a text pair cannot be re-read. */
  char *cert = read_text(tls_path("a", "crt"));
  char *key = read_text(tls_path("a", "key"));
  mcp_http_tls text = {.cert_pem = cert, .key_pem = key};
  o.tls = &text;
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), 0);
  F.port = mcp_http_port(F.http);
  free(cert);
  free(key);
  ck_assert_int_eq(mcp_http_reload_tls(F.http, NULL), MCP_EINVAL);
  tls_echo(tls_path("a", "crt"), "from text");
  /* A server without tls has nothing to reload. */
  mcp_http *plain = NULL;
  mcp_http_options p = {0};
  ck_assert_int_eq(mcp_http_start(F.srv, &p, &plain), 0);
  ck_assert_int_eq(mcp_http_reload_tls(plain, NULL), MCP_ESTATE);
  mcp_http_stop(plain);
  ck_assert_int_eq(mcp_http_reload_tls(NULL, NULL), MCP_EINVAL);
  tls_stop();
}
END_TEST

/* Handshakes with the server at exactly TLS version v (OpenSSL's
 * TLS1_x_VERSION), certificate unchecked: true when it completed at v.
 * The client's security level is 0 and every cipher is offered, since
 * Debian's OpenSSL refuses TLS 1.0 and 1.1 itself at its default level: a
 * failure is then the server's refusal, not the client's. */
static bool tls_handshake_at(int v) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  ck_assert_ptr_nonnull(ctx);
  SSL_CTX_set_security_level(ctx, 0);
  ck_assert_int_eq(SSL_CTX_set_cipher_list(ctx, "ALL:@SECLEVEL=0"), 1);
  ck_assert_int_eq(SSL_CTX_set_min_proto_version(ctx, v), 1);
  ck_assert_int_eq(SSL_CTX_set_max_proto_version(ctx, v), 1);
  int fd = raw_connect();
  /* A server that never answers fails the handshake instead of hanging. */
  struct timeval tv = {.tv_sec = T(10000) / 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  SSL *ssl = SSL_new(ctx);
  ck_assert_ptr_nonnull(ssl);
  ck_assert_int_eq(SSL_set_fd(ssl, fd), 1);
  bool ok = SSL_connect(ssl) == 1 && SSL_version(ssl) == v;
  if (ok)
    SSL_shutdown(ssl);
  SSL_free(ssl);
  close(fd);
  SSL_CTX_free(ctx);
  return ok;
}

/* Starts HTTPS with certificate a and the given priority string (NULL =
 * the default). */
static void tls_start_with(const char *priorities) {
  tls_dir_make();
  make_cert("a");
  mcp_http_tls tls = {.cert_file = tls_path("a", "crt"),
                      .key_file = tls_path("a", "key"),
                      .priorities = priorities};
  mcp_http_options o = {.tls = &tls};
  fx_start(&o);
}

/* RFC 8996: by default only TLS 1.2 and 1.3 handshakes complete, and the
 * server still answers MCP over both. */
START_TEST(https_refuses_tls_1_0_and_1_1_by_default) {
  tls_start_with(NULL);
  ck_assert_msg(!tls_handshake_at(TLS1_VERSION),
                "a TLS 1.0 handshake completed");
  ck_assert_msg(!tls_handshake_at(TLS1_1_VERSION),
                "a TLS 1.1 handshake completed");
  ck_assert_msg(tls_handshake_at(TLS1_2_VERSION), "a TLS 1.2 handshake failed");
  ck_assert_msg(tls_handshake_at(TLS1_3_VERSION), "a TLS 1.3 handshake failed");
  tls_echo(tls_path("a", "crt"), "tls 1.2 or newer");
  tls_stop();
}
END_TEST

/* mcp_http_tls.priorities replaces the default: a string allowing only
 * TLS 1.3 refuses 1.2, and GnuTLS's plain NORMAL (which still has 1.0 on
 * this GnuTLS) lets the test client complete a TLS 1.0 handshake, which
 * shows the client can: the default's refusal is the server's. */
START_TEST(https_priorities_option_taken) {
  tls_start_with("NORMAL:-VERS-ALL:+VERS-TLS1.3");
  ck_assert(!tls_handshake_at(TLS1_2_VERSION));
  ck_assert(tls_handshake_at(TLS1_3_VERSION));
  tls_echo(tls_path("a", "crt"), "tls 1.3 only");
  mcp_http_stop(F.http);
  F.http = NULL;
  mcp_server_free(F.srv);
  F.srv = NULL;
  tls_stop();
  fresh_curl();
  tls_start_with("NORMAL:+VERS-TLS1.0");
  ck_assert_msg(tls_handshake_at(TLS1_VERSION),
                "the test client cannot make a TLS 1.0 handshake even with "
                "a server that allows it");
  tls_stop();
}
END_TEST

/* A priority string GnuTLS refuses fails the start, saying where. */
START_TEST(https_bad_priorities_refused_at_start) {
  tls_dir_make();
  make_cert("a");
  mcp_server_info info = {.name = "tls", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  static const char *const bad[] = {"NORMAL:+VERS-TLS9.9", "NOSUCHSET", ""};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_http_tls tls = {.cert_file = tls_path("a", "crt"),
                        .key_file = tls_path("a", "key"),
                        .priorities = bad[i]};
    mcp_http_options o = {.tls = &tls};
    ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
    ck_assert_ptr_null(F.http);
    const char *msg = mcp_server_errmsg(F.srv);
    ck_assert_msg(strstr(msg, "priority string") != NULL &&
                      strstr(msg, bad[i]) != NULL,
                  "no clear error for \"%s\": %s", bad[i], msg);
  }
  tls_stop();
}
END_TEST

/* ===========================================================================
 * Inherited sockets (mcp_http_options.listen_fd, mcp_http_systemd_socket)
 * ======================================================================== */

/* A listening socket on a free loopback port (its port in *port). */
static int listening_socket(uint16_t *port, bool listen_too) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  if (listen_too)
    ck_assert_int_eq(listen(fd, 16), 0);
  socklen_t len = sizeof a;
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *port = ntohs(a.sin_port);
  return fd;
}

/* A node id prefixes every session id, which is found with it and only
 * with it. */
START_TEST(node_id_prefixes_session_ids) {
  mcp_http_options o = {.node_id = "node-7"};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  ck_assert_msg(strncmp(sid, "node-7.", 7) == 0, "session id %s", sid);
  ck_assert_uint_eq(strlen(sid), 7 + 32);
  expect_ping_ok(sid);
  /* The same random part under another node's name is no session here. */
  char other[64];
  snprintf(other, sizeof other, "node-8.%s", sid + 7);
  lc_resp r;
  post(other, PING, &r);
  ck_assert_int_eq(r.status, 404);
  lc_resp_free(&r);
  /* Nor is the random part alone. */
  post(sid + 7, PING, &r);
  ck_assert_int_eq(r.status, 404);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

START_TEST(node_id_checked) {
  mcp_server_info info = {.name = "node", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  static const char *const bad[] = {"", "has.dot", "has space",
                                    "a-name-of-more-than-32-characters-x"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_http_options o = {.node_id = bad[i]};
    ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
    ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(F.srv), "node_id"));
  }
}
END_TEST

START_TEST(serves_an_inherited_socket) {
  uint16_t port;
  int fd = listening_socket(&port, true);
  mcp_http_options o = {.listen_fd = fd};
  fx_start(&o);
  ck_assert_uint_eq(F.port, port);
  char *sid = open_session(V, "{}");
  expect_echo(sid, "2", "inherited");
  free(sid);
  /* The server closes the socket when it stops. */
  assert_loopback_only();
  mcp_http_stop(F.http);
  F.http = NULL;
  ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
}
END_TEST

START_TEST(inherited_socket_checked) {
  mcp_server_info info = {.name = "fd", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  uint16_t port;
  /* Bound but not listening: refused, saying so. */
  int fd = listening_socket(&port, false);
  mcp_http_options o = {.listen_fd = fd};
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(F.srv), "not a listening"));
  close(fd);
  /* A socket with an address of its own: bind_addr and port stay unset. */
  fd = listening_socket(&port, true);
  o = (mcp_http_options){.listen_fd = fd, .port = port};
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &F.http), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(F.srv), "leave bind_addr"));
  close(fd);
}
END_TEST

START_TEST(systemd_socket_only_when_passed_to_this_process) {
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  ck_assert_int_eq(mcp_http_systemd_socket(), MCP_ENOENT);
  /* Meant for another process (a parent): not ours, left as it is. */
  setenv("LISTEN_PID", "1", 1);
  setenv("LISTEN_FDS", "1", 1);
  ck_assert_int_eq(mcp_http_systemd_socket(), MCP_ENOENT);
  ck_assert_ptr_nonnull(getenv("LISTEN_FDS"));
  /* Ours, but two sockets: refused, and the variables are gone. */
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  setenv("LISTEN_PID", pid, 1);
  setenv("LISTEN_FDS", "2", 1);
  setenv("LISTEN_FDNAMES", "a:b", 1);
  ck_assert_int_eq(mcp_http_systemd_socket(), MCP_EINVAL);
  ck_assert_ptr_null(getenv("LISTEN_PID"));
  ck_assert_ptr_null(getenv("LISTEN_FDS"));
  ck_assert_ptr_null(getenv("LISTEN_FDNAMES"));
  /* Ours and one, but descriptor 3 is no listening socket. */
  int saved = dup(3);
  int null_fd = open("/dev/null", O_RDONLY);
  ck_assert_int_eq(dup2(null_fd, 3), 3);
  setenv("LISTEN_PID", pid, 1);
  setenv("LISTEN_FDS", "1", 1);
  ck_assert_int_eq(mcp_http_systemd_socket(), MCP_EINVAL);
  /* And with a listening socket there: 3. */
  uint16_t port;
  int fd = listening_socket(&port, true);
  ck_assert_int_eq(dup2(fd, 3), 3);
  setenv("LISTEN_PID", pid, 1);
  setenv("LISTEN_FDS", "1", 1);
  ck_assert_int_eq(mcp_http_systemd_socket(), 3);
  ck_assert_int_eq(fcntl(3, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  close(fd);
  close(null_fd);
  if (saved >= 0) {
    dup2(saved, 3);
    close(saved);
  } else {
    close(3);
  }
}
END_TEST

/* F18: a deferred call past the server's deadline is answered with the
 * timeout by the transport's timer, in both eras, and its stream ends then;
 * the handler's late finish only frees the call. */
START_TEST(f18_deferred_call_times_out) {
  fx_start(NULL);
  mcp_server_set_call_timeout(F.srv, 100);
  char *sid = open_session(V, "{}");
  lc_req legacy = {
      .body = CALL("8", "park", "{}"), .session = sid, .version = V};
  lc_req stateless = {.body = MODERN_CALL("9", "park", "{}"),
                      .version = "2026-07-28",
                      .headers = {"Mcp-Method: tools/call", "Mcp-Name: park"}};
  const lc_req *qs[] = {&legacy, &stateless};
  for (int i = 0; i < 2; i++) {
    stream *s = stream_open(qs[i]);
    mcp_call *c = unpark(T(5000));
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(stream_wait_done(s, T(15000)), "no answer at the deadline");
    ck_assert_int_eq(s->r.status, 200);
    cJSON *m = reply_of(&s->r);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(tu_jget(m, "id")->valueint, 8 + i);
    ck_assert(cJSON_IsTrue(tu_jget(m, "result.isError")));
    ck_assert_str_eq(result_text(m),
                     "timeout: the tool did not finish within 100 ms");
    cJSON_Delete(m);
    stream_close(s);
    ck_assert(mcp_call_cancelled(c));
    finish_text(c, "late");
  }
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* F16: the rate limit answers alike over HTTP, in both eras: an isError
 * result (HTTP 200), the handler not run. */
START_TEST(f16_rate_limited_over_http) {
  static const mcp_principal alice = {.subject = "alice", .all_scopes = true};
  mcp_http_options o = {.principal = &alice};
  fx_start(&o);
  ck_assert_int_eq(mcp_server_set_rate_limit(F.srv, 2, 3600), 0);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid, CALL("1", "echo", "{\"text\":\"a\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "a");
  cJSON_Delete(m);
  lc_resp_free(&r);
  modern("2026-07-28", "tools/call", "echo",
         MODERN_CALL("2", "echo", "{\"text\":\"b\"}"), &r);
  m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "b");
  cJSON_Delete(m);
  lc_resp_free(&r);
  int before = fx_calls();
  post(sid, CALL("3", "echo", "{\"text\":\"c\"}"), &r);
  ck_assert_int_eq(r.status, 200);
  m = expect_result(&r);
  ck_assert(cJSON_IsTrue(tu_jget(m, "result.isError")));
  ck_assert_msg(strncmp(result_text(m), "rate limited", 12) == 0, "%s",
                result_text(m));
  cJSON_Delete(m);
  lc_resp_free(&r);
  modern("2026-07-28", "tools/call", "echo",
         MODERN_CALL("4", "echo", "{\"text\":\"d\"}"), &r);
  ck_assert_int_eq(r.status, 200);
  m = expect_result(&r);
  ck_assert(cJSON_IsTrue(tu_jget(m, "result.isError")));
  ck_assert_msg(strstr(result_text(m), "try again in") != NULL, "%s",
                result_text(m));
  cJSON_Delete(m);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), before);
  free(sid);
}
END_TEST

/* C12: clients vanishing mid-stream (x3) are not cancellations, cost
 * nothing, and the next client is served. */
START_TEST(c12_client_disconnects_mid_sse) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  static const char *const bodies[] = {CALL_P("31", "park", "{}"),
                                       CALL_P("32", "park", "{}"),
                                       CALL_P("33", "park", "{}")};
  mcp_call *c[3];
  for (int i = 0; i < 3; i++) {
    lc_req q = {.body = bodies[i], .session = sid, .version = V};
    stream *s = stream_open(&q);
    ck_assert_msg(stream_wait(s, "notifications/progress", 1, T(5000)),
                  "call %d: no progress event", i);
    c[i] = unpark(T(5000));
    ck_assert_ptr_nonnull(c[i]);
    stream_close(s);
  }
  lc_sleep_ms(T(500));
  for (int i = 0; i < 3; i++)
    ck_assert_msg(!mcp_call_cancelled(c[i]),
                  "a 2025-11-25 disconnect was taken as cancellation");
  for (int i = 0; i < 3; i++)
    finish_text(c[i], "nobody listens");
  lc_resp r;
  post(sid, CALL("34", "echo", "{\"text\":\"still here\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "still here");
  cJSON_Delete(m);
  lc_resp_free(&r);
  char *fresh = open_session(V, "{}");
  lc_req q = {
      .body = CALL_P("35", "park", "{}"), .session = fresh, .version = V};
  stream *s = stream_open(&q);
  mcp_call *d = unpark(T(5000));
  ck_assert_ptr_nonnull(d);
  finish_text(d, "good client");
  ck_assert(stream_wait(s, "good client", 1, T(5000)));
  stream_close(s);
  free(sid);
  free(fresh);
}
END_TEST

/* F10: calls in flight per session are capped; the excess is refused
 * without running, the others are unaffected. */
START_TEST(f10_inflight_cap) {
  mcp_http_options o = {.max_inflight = 2};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  lc_req q1 = {.body = CALL("11", "park", "{}"), .session = sid, .version = V};
  lc_req q2 = {.body = CALL("12", "park", "{}"), .session = sid, .version = V};
  stream *s1 = stream_open(&q1);
  ck_assert_int_eq(wait_parked(1, T(5000)), 1);
  stream *s2 = stream_open(&q2);
  ck_assert_int_eq(wait_parked(2, T(5000)), 2);
  int calls = fx_calls();
  lc_resp r;
  lc_req q3 = {.body = CALL("13", "park", "{}"),
               .session = sid,
               .version = V,
               .timeout_ms = T(5000)};
  http(&q3, &r);
  ck_assert_msg(r.status == 429,
                "call over the cap: HTTP %ld (curl: %s) %.200s", r.status,
                curl_easy_strerror(r.curl_rc), r.body.p ? r.body.p : "");
  char retry[16];
  ck_assert_ptr_nonnull(resp_header(&r, "Retry-After", retry, sizeof retry));
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), calls);
  ck_assert_int_eq(wait_parked(3, 200), 2);
  finish_text(unpark(0), "one");
  finish_text(unpark(0), "two");
  ck_assert(stream_wait(s1, "one", 1, T(5000)));
  ck_assert(stream_wait(s2, "two", 1, T(5000)));
  post(sid, CALL("14", "echo", "{\"text\":\"room again\"}"), &r);
  cJSON *m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
  stream_close(s1);
  stream_close(s2);
  free(sid);
}
END_TEST

/* A session's calls may all be waiting for the client: the cap's worth of
 * elicitations (64, max_inflight's default) parked at once. The client's
 * answers, its notifications and ping still get through, each answer
 * completes its call on the call's own stream, and only a new call past
 * the cap is refused, with 429 and Retry-After. */
START_TEST(parked_elicitations_all_answered) {
  enum { N = 64 };
  mcp_http_options o = {.per_ip_connections = 4 * N};
  fx_start(&o);
  char *sid = open_session(V, "{\"elicitation\":{}}");
  stream *s[N];
  char body[256];
  for (int i = 0; i < N; i++) {
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"ask\",\"arguments\":{}}}",
             100 + i);
    lc_req q = {.body = body, .session = sid, .version = V};
    s[i] = stream_open(&q);
  }
  char *ids[N];
  for (int i = 0; i < N; i++) {
    ck_assert_msg(stream_wait(s[i], "elicitation/create", 1, T(10000)),
                  "call %d: no elicitation/create", i);
    sse e = stream_sse(s[i]);
    cJSON *m[4];
    int n = sse_messages(&e, m, 4);
    ck_assert_int_ge(n, 1);
    ids[i] = show(tu_jget(m[n - 1], "id"));
    free_messages(m, n);
    sse_free(&e);
  }
  ck_assert_int_eq(fx_calls(), 0);
  /* A new call past the cap: 429, and its handler never runs. */
  lc_resp r;
  post(sid, CALL("999", "ask", "{}"), &r);
  ck_assert_msg(r.status == 429, "call 65: HTTP %ld %s", r.status,
                r.body.p ? r.body.p : "");
  char v[32];
  ck_assert_ptr_nonnull(resp_header(&r, "Retry-After", v, sizeof v));
  ck_assert_str_eq(v, "1");
  lc_resp_free(&r);
  /* ping and a notification are not calls. */
  expect_ping_ok(sid);
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
       "\"params\":{\"requestId\":12345}}",
       &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  /* Every answer is accepted, and completes its own call. */
  for (int i = 0; i < N; i++) {
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":"
             "\"accept\",\"content\":{}}}",
             ids[i]);
    post(sid, body, &r);
    ck_assert_msg(r.status == 202, "answer %d: HTTP %ld %s", i, r.status,
                  r.body.p ? r.body.p : "");
    lc_resp_free(&r);
    free(ids[i]);
  }
  for (int i = 0; i < N; i++) {
    ck_assert_msg(stream_wait(s[i], "answered: accept", 1, T(10000)),
                  "call %d did not complete", i);
    ck_assert(stream_wait_done(s[i], T(5000)));
    sse e = stream_sse(s[i]);
    cJSON *m[4];
    int n = sse_messages(&e, m, 4);
    ck_assert_int_eq(tu_jget(m[n - 1], "id")->valueint, 100 + i);
    free_messages(m, n);
    sse_free(&e);
    stream_close(s[i]);
  }
  ck_assert_int_eq(fx_calls(), N);
  /* The finished streams hold no slot: the next call is served. */
  post(sid, CALL("1000", "echo", "{\"text\":\"again\"}"), &r);
  cJSON *m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* F12: a client that never reads its stream: the stream's buffer is
 * capped and the stream closed; memory stays bounded; others are served. */
START_TEST(f12_sse_client_never_reads) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  int n = scaled(4000, 100), size = 16384; /* 64 MiB */
  char body[512];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"flood\",\"arguments\":{\"n\":%d,\"size\":"
           "%d},\"_meta\":{\"progressToken\":\"f\"}}}",
           n, size);
  lc_buf h = {0};
  lc_buf_fmt(&h,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" RAW_POST_HEADERS
             "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: " V
             "\r\nContent-Length: %zu\r\n\r\n%s",
             (unsigned)F.port, sid, strlen(body), body);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(F.port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  long before = lc_rss_kib();
  ck_assert(lc_send_all(fd, h.p, h.n));
  lc_buf_free(&h);
  struct timespec dl = deadline_in(T(30000));
  pthread_mutex_lock(&F.mu);
  while (F.floods_done == 0)
    if (pthread_cond_timedwait(&F.cv, &F.mu, &dl) == ETIMEDOUT)
      break;
  int done = F.floods_done;
  pthread_mutex_unlock(&F.mu);
  ck_assert_msg(done == 1, "the flooding handler never returned");
  long peak = lc_rss_kib();
  /* The server answers others meanwhile. */
  char *other = open_session(V, "{}");
  expect_ping_ok(other);
  expect_ping_ok(sid);
  raw_resp rr = {0};
  raw_read(fd, T(5000), true, &rr);
  printf("f12: %d x %d bytes sent to a reader that does not read: RSS %ld -> "
         "%ld KiB; the reader then got %zu bytes, %s: %.100s\n",
         n, size, before, peak, rr.data.n, rr.closed ? "then EOF" : "no EOF",
         rr.data.p ? rr.data.p : "");
  if (rss_bounded())
    ck_assert_msg(peak - before < 40 * 1024,
                  "RSS grew by %ld KiB while a handler sent %d KiB to a "
                  "stream nobody reads: not bounded",
                  peak - before, n * (size / 1024));
  if (!lc_slow_run()) {
    ck_assert_msg(rr.closed, "the overflowing stream was not closed");
    ck_assert_msg(rr.data.n < (size_t)n * (size_t)size / 2,
                  "%zu of %zu bytes were kept for the reader", rr.data.n,
                  (size_t)n * (size_t)size);
  }
  raw_free(&rr);
  close(fd);
  free(sid);
  free(other);
}
END_TEST

/* ===========================================================================
 * Modern era (2026-07-28), stateless: digest §6.2, §9 items 35-38
 * ======================================================================== */

START_TEST(modern_stateless_requests) {
  fx_start(NULL);
  lc_resp r;
  modern("2026-07-28", "tools/call", "echo",
         MODERN_CALL("1", "echo", "{\"text\":\"hi\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(tu_jstr(m, "result.resultType"), "complete");
  ck_assert_str_eq(result_text(m), "hi");
  char v[256];
  ck_assert_msg(resp_header(&r, "Mcp-Session-Id", v, sizeof v) == NULL,
                "a modern response carries Mcp-Session-Id %s", v);
  cJSON_Delete(m);
  lc_resp_free(&r);
  modern("2026-07-28", "tools/list", NULL, MODERN_LIST, &r);
  m = expect_result(&r);
  ck_assert_ptr_nonnull(tu_jget(m, "result.tools.0.name"));
  cJSON_Delete(m);
  lc_resp_free(&r);
  modern("2026-07-28", "server/discover", NULL,
         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\","
         "\"params\":{" META "}}",
         &r);
  m = expect_result(&r);
  ck_assert_ptr_nonnull(tu_jget(m, "result.supportedVersions"));
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* Header names are case-insensitive; a session header is ignored, never
   * echoed. */
  lc_req q = {.body = MODERN_LIST,
              .headers = {"mcp-protocol-version: 2026-07-28",
                          "mcp-method: tools/list",
                          "Mcp-Session-Id: not-a-session"}};
  http(&q, &r);
  m = expect_result(&r);
  ck_assert_ptr_null(resp_header(&r, "Mcp-Session-Id", v, sizeof v));
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* A tool error and an unknown tool are still 200. */
  modern("2026-07-28", "tools/call", "fail", MODERN_CALL("4", "fail", "{}"),
         &r);
  m = expect_result(&r);
  ck_assert(cJSON_IsTrue(tu_jget(m, "result.isError")));
  cJSON_Delete(m);
  lc_resp_free(&r);
  modern("2026-07-28", "tools/call", "nope", MODERN_CALL("5", "nope", "{}"),
         &r);
  assert_rpc_error(&r, 200, -32602, ID_ANY);
  lc_resp_free(&r);
}
END_TEST

/* Headers that disagree with the body, or are missing: 400 + -32020, and
 * nothing runs. */
START_TEST(modern_header_mismatch_400_32020) {
  fx_start(NULL);
  const char *call = MODERN_CALL("1", "echo", "{\"text\":\"x\"}");
  static const char *const old_meta =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"echo\",\"arguments\":{}," META_V("2025-11-25") "}}";
  struct {
    const char *what, *version, *method, *name, *body;
  } cases[] = {
      {"Mcp-Method differs", "2026-07-28", "tools/list", NULL, call},
      {"Mcp-Method missing", "2026-07-28", NULL, "echo", call},
      {"Mcp-Method in another case", "2026-07-28", "Tools/Call", "echo", call},
      {"Mcp-Name missing", "2026-07-28", "tools/call", NULL, call},
      {"Mcp-Name differs", "2026-07-28", "tools/call", "fail", call},
      {"Mcp-Name in another case", "2026-07-28", "tools/call", "ECHO", call},
      {"Mcp-Name base64 of another name", "2026-07-28", "tools/call",
       "=?base64?ZmFpbA==?=", call},
      {"Mcp-Name invalid base64", "2026-07-28", "tools/call",
       "=?base64?@@@?=", call},
      {"MCP-Protocol-Version differs from _meta", "2026-07-28", "tools/call",
       "echo", old_meta},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    lc_resp r;
    modern(cases[i].version, cases[i].method, cases[i].name, cases[i].body, &r);
    ck_assert_msg(r.status == 400, "%s: HTTP %ld %.200s", cases[i].what,
                  r.status, r.body.p ? r.body.p : "");
    cJSON *m = reply_of(&r);
    const cJSON *code = tu_jget(m, "error.code");
    ck_assert_msg(code && code->valueint == -32020, "%s: %.200s", cases[i].what,
                  r.body.p ? r.body.p : "");
    cJSON_Delete(m);
    lc_resp_free(&r);
  }
  /* Without MCP-Protocol-Version the request is not a valid modern one. */
  lc_resp r;
  modern(NULL, "tools/call", "echo", call, &r);
  ck_assert_msg(r.status == 400, "no MCP-Protocol-Version: HTTP %ld", r.status);
  lc_resp_free(&r);
  ck_assert_int_eq(fx_calls(), 0);
  /* The header rules are for requests: a notification without Mcp-Method
   * (the official v2 client closing a subscription) is taken, 202. */
  static const char cancelled[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":\"sub-1\"," META_V("2026-07-28") "}}";
  modern("2026-07-28", NULL, NULL, cancelled, &r);
  ck_assert_msg(r.status == 202, "a notification without Mcp-Method: HTTP %ld",
                r.status);
  ck_assert_uint_eq(r.body.n, 0);
  lc_resp_free(&r);
  modern(NULL, NULL, NULL, cancelled, &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
}
END_TEST

/* A refusal for a missing or different Mcp-Name says what the header
 * carries for that method (a new user polling a task over raw HTTP must
 * learn it is the task id), for every method that needs it. */
START_TEST(modern_mcp_name_refusal_says_the_value) {
  fx_start(NULL);
  static const struct {
    const char *method, *params, *member, *what;
  } cases[] = {
      {"tools/call", "\"name\":\"echo\",\"arguments\":{}", "name",
       "the tool's name"},
      {"prompts/get", "\"name\":\"greet\"", "name", "the prompt's name"},
      {"resources/read", "\"uri\":\"file:///a\"", "uri", "the resource's URI"},
      {"tasks/get", "\"taskId\":\"t1\"", "taskId", "the task id"},
      {"tasks/update", "\"taskId\":\"t1\",\"inputResponses\":{}", "taskId",
       "the task id"},
      {"tasks/cancel", "\"taskId\":\"t1\"", "taskId", "the task id"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *body = tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
                         "\"params\":{%s," META "}}",
                         cases[i].method, cases[i].params);
    for (int wrong = 0; wrong < 2; wrong++) {
      lc_resp r;
      modern("2026-07-28", cases[i].method, wrong ? "other" : NULL, body, &r);
      ck_assert_msg(r.status == 400, "%s: HTTP %ld", cases[i].method, r.status);
      cJSON *m = reply_of(&r);
      ck_assert_int_eq(tu_jget(m, "error.code")->valueint, -32020);
      const char *msg = tu_jstr(m, "error.message");
      char member[32];
      snprintf(member, sizeof member, "params.%s", cases[i].member);
      ck_assert_msg(strstr(msg, cases[i].method) &&
                        strstr(msg, cases[i].what) && strstr(msg, member),
                    "%s, Mcp-Name %s: the refusal does not say the value is "
                    "%s (%s): %s",
                    cases[i].method, wrong ? "different" : "missing",
                    cases[i].what, member, msg);
      cJSON_Delete(m);
      lc_resp_free(&r);
    }
    free(body);
  }
  ck_assert_int_eq(fx_calls(), 0);
}
END_TEST

START_TEST(modern_base64_mcp_name) {
  fx_start(NULL);
  lc_resp r;
  modern("2026-07-28", "tools/call",
         "=?base64?ZWNobw==?=", MODERN_CALL("1", "echo", "{\"text\":\"b64\"}"),
         &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "b64");
  cJSON_Delete(m);
  lc_resp_free(&r);
}
END_TEST

START_TEST(modern_unknown_method_404_32601) {
  fx_start(NULL);
  lc_resp r;
  modern("2026-07-28", "foo/bar", NULL,
         "{\"jsonrpc\":\"2.0\",\"id\":\"u1\",\"method\":\"foo/bar\","
         "\"params\":{" META "}}",
         &r);
  assert_rpc_error(&r, 404, -32601, ID_ANY);
  cJSON *m = reply_of(&r);
  ck_assert_str_eq(tu_jstr(m, "id"), "u1");
  cJSON_Delete(m);
  lc_resp_free(&r);
}
END_TEST

START_TEST(modern_unsupported_version_400_32022) {
  fx_start(NULL);
  lc_resp r;
  modern("2099-01-01", "tools/list", NULL,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
         "" META_V("2099-01-01") "}}",
         &r);
  assert_rpc_error(&r, 400, -32022, ID_ANY);
  cJSON *m = reply_of(&r);
  const cJSON *sup = tu_jget(m, "error.data.supported");
  ck_assert_msg(cJSON_IsArray(sup), "no error.data.supported");
  bool has = false;
  for (const cJSON *e = sup->child; e; e = e->next)
    has = has || (cJSON_IsString(e) && !strcmp(e->valuestring, "2026-07-28"));
  ck_assert(has);
  cJSON_Delete(m);
  lc_resp_free(&r);
}
END_TEST

START_TEST(modern_missing_capability_400_32021) {
  fx_start(NULL);
  lc_resp r;
  modern("2026-07-28", "tools/call", "ask", MODERN_CALL("1", "ask", "{}"), &r);
  assert_rpc_error(&r, 400, -32021, ID_ANY);
  lc_resp_free(&r);
}
END_TEST

START_TEST(modern_get_and_delete_405) {
  fx_start(NULL);
  static const char *const methods[] = {"GET", "DELETE"};
  for (size_t i = 0; i < TU_COUNT(methods); i++) {
    lc_resp r;
    lc_req q = {
        .method = methods[i], .version = "2026-07-28", .timeout_ms = T(5000)};
    http(&q, &r);
    ck_assert_msg(r.status == 405, "modern %s: HTTP %ld", methods[i], r.status);
    lc_resp_free(&r);
  }
}
END_TEST

#define MODERN_META_P                                                          \
  "\"_meta\":{\"progressToken\":\"mp\","                                       \
  "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"test_http\","            \
  "\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* Request-scoped notifications on the request's stream, then the result;
 * never a JSON-RPC request. */
START_TEST(modern_progress_on_sse) {
  fx_start(NULL);
  lc_resp r;
  modern("2026-07-28", "tools/call", "progress",
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
         "\"name\":\"progress\",\"arguments\":{}," MODERN_META_P "}}",
         &r);
  ck_assert_int_eq(r.status, 200);
  char type[128];
  ck_assert_str_eq(resp_type(&r, type, sizeof type), "text/event-stream");
  assert_header(&r, "X-Accel-Buffering", "no");
  sse e = sse_parse(r.body.p, r.body.n);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  ck_assert_int_eq(n, 4);
  for (int i = 0; i < 3; i++)
    ck_assert_str_eq(tu_jstr(m[i], "method"), "notifications/progress");
  ck_assert_str_eq(tu_jstr(m[3], "result.resultType"), "complete");
  for (int i = 0; i < n; i++)
    ck_assert(!(tu_jget(m[i], "method") && tu_jget(m[i], "id")));
  free_messages(m, n);
  sse_free(&e);
  lc_resp_free(&r);
}
END_TEST

/* A closed response stream cancels a modern call (digest §9 item 38). */
START_TEST(modern_closed_stream_cancels_call) {
  /* A short keep-alive bounds how long a server may take to notice. */
  mcp_http_options o = {.keepalive_s = 1};
  fx_start(&o);
  lc_req q = {.body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                      "\"params\":{\"name\":\"park\",\"arguments\":{},"
                      "" MODERN_META_P "}}",
              .version = "2026-07-28",
              .headers = {"Mcp-Method: tools/call", "Mcp-Name: park"}};
  stream *s = stream_open(&q);
  ck_assert(stream_wait(s, "notifications/progress", 1, T(5000)));
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  ck_assert(!mcp_call_cancelled(c));
  stream_close(s);
  long t0 = lc_now_ms(), end = t0 + T(8000);
  while (!mcp_call_cancelled(c) && lc_now_ms() < end)
    lc_sleep_ms(50);
  bool cancelled = mcp_call_cancelled(c);
  printf("modern: the call saw the disconnect after %ld ms\n",
         lc_now_ms() - t0);
  mcp_call_finish(c, 0);
  ck_assert_msg(cancelled, "the call was not cancelled by the disconnect");
}
END_TEST

/* A numeric id beyond every integer type is refused like any unusable id,
 * without undefined behaviour on the way (found by fuzz_http: the range
 * was checked after converting the double). */
START_TEST(huge_numeric_ids) {
  fx_start(NULL);
  static const char *const bodies[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":12345689012345567890,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":-1e300,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}"};
  for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
    lc_req q = {.body = bodies[i]};
    lc_resp r;
    http(&q, &r);
    ck_assert_msg(r.status == 400, "body %zu: HTTP %ld", i, r.status);
    lc_resp_free(&r);
  }
}
END_TEST

/* SEP-2243: arguments marked x-mcp-header are mirrored in Mcp-Param-*
 * headers, which must agree with the body before anything runs. */
START_TEST(modern_param_headers) {
  fx_start(NULL);
  mcp_tool t = {.name = "route",
                .description = "Echoes its region.",
                .input_schema =
                    "{\"type\":\"object\",\"properties\":{\"region\":{"
                    "\"type\":\"string\",\"x-mcp-header\":\"Region\"}}}",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  static const struct {
    const char *args, *header; /* header NULL: none sent */
    long status;
  } cases[] = {
      {"{\"region\":\"Hello\"}", "Mcp-Param-Region: =?base64?SGVsbG8=?=", 200},
      {"{\"region\":\"Hello\"}", "mcp-param-region:  Hello ", 200},
      {"{\"region\":\"SGVsbG8=\"}", "Mcp-Param-Region: SGVsbG8=", 200},
      {"{\"region\":\"=?base64?SGVsbG8=\"}",
       "Mcp-Param-Region: =?base64?SGVsbG8=", 200},
      {"{}", NULL, 200},
      {"{\"region\":\"Hello\"}", "Mcp-Param-Region: =?base64?SGVsbG8?=", 400},
      {"{\"region\":\"Hello\"}",
       "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=", 400},
      {"{\"region\":\"Hello\"}", NULL, 400},
      {"{\"region\":\"Hello\"}", "Mcp-Param-Region: Bye", 400},
      {"{}", "Mcp-Param-Region: Hello", 400},
  };
  int before = fx_calls();
  int accepted = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"route\",\"arguments\":%s," META "}}",
             i, cases[i].args);
    lc_req q = {.body = body,
                .version = "2026-07-28",
                .headers = {"Mcp-Method: tools/call", "Mcp-Name: route",
                            cases[i].header}};
    lc_resp r;
    http(&q, &r);
    if (cases[i].status == 200) {
      cJSON *m = expect_result(&r);
      cJSON_Delete(m);
      accepted++;
    } else {
      assert_rpc_error(&r, 400, -32020, ID_ANY);
    }
    lc_resp_free(&r);
  }
  /* A refused call never reached the handler. */
  ck_assert_int_eq(fx_calls() - before, accepted);
  /* The same header twice is refused too. */
  lc_req q = {.body = "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/"
                      "call\",\"params\":{\"name\":\"route\",\"arguments\":{"
                      "\"region\":\"a\"}," META "}}",
              .version = "2026-07-28",
              .headers = {"Mcp-Method: tools/call", "Mcp-Name: route",
                          "Mcp-Param-Region: a", "MCP-PARAM-REGION: a"}};
  lc_resp r;
  http(&q, &r);
  assert_rpc_error(&r, 400, -32020, ID_ANY);
  lc_resp_free(&r);
}
END_TEST

static int read_watched(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_text(call, "contents");
}

/* Opens a subscriptions/listen stream of request id asking for
 * notifications (the members of its notifications object) and waits for
 * its acknowledgement. */
static stream *listen_acknowledged(const char *id, const char *notifications) {
  char body[1024];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":"
           "\"subscriptions/listen\",\"params\":{" META
           ",\"notifications\":{%s}}}",
           id, notifications);
  lc_req q = {.body = body,
              .version = "2026-07-28",
              .headers = {"Mcp-Method: subscriptions/listen"}};
  stream *s = stream_open(&q);
  ck_assert_int_eq(stream_wait_headers(s, T(5000)), 200);
  ck_assert_msg(
      stream_wait(s, "notifications/subscriptions/acknowledged", 1, T(5000)),
      "no acknowledgement");
  return s;
}

/* subscriptions/listen: the acknowledgement first, then only the
 * notifications asked for, tagged with the subscription id, on a stream
 * that stays open; closing it ends the subscription. */
START_TEST(modern_listen_stream) {
  mcp_http_options o = {.keepalive_s = 1};
  fx_start(&o);
  mcp_resource res = {.uri = "test://watched",
                      .name = "watched",
                      .mime_type = "text/plain",
                      .handler = read_watched};
  ck_assert_int_eq(mcp_server_add_resource(F.srv, &res, NULL), 0);
  stream *s = listen_acknowledged(
      "sub-1", "\"toolsListChanged\":true,\"resourceSubscriptions\":["
               "\"test://watched\"]");
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://watched"), 1);
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://other"), 0);
  mcp_tool t = {.name = "extra",
                .description = "Added while listening.",
                .annotations = TC_READ_ONLY,
                .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  ck_assert(stream_wait(s, "notifications/tools/list_changed", 1, T(5000)));
  ck_assert(!stream_done(s));
  sse e = stream_sse(s);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(tu_jstr(m[0], "method"),
                   "notifications/subscriptions/acknowledged");
  ck_assert_str_eq(tu_jstr(m[1], "method"), "notifications/resources/updated");
  ck_assert_str_eq(tu_jstr(m[1], "params.uri"), "test://watched");
  for (int i = 0; i < n; i++) {
    const cJSON *meta = tu_jget(m[i], "params._meta");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(
        meta, "io.modelcontextprotocol/subscriptionId");
    ck_assert_msg(cJSON_IsString(id) && strcmp(id->valuestring, "sub-1") == 0,
                  "message %d is not tagged", i);
    ck_assert(tu_jget(m[i], "id") == NULL);
  }
  free_messages(m, n);
  sse_free(&e);
  ck_assert_int_eq(mcp_server_remove_tool(F.srv, "extra"), 0);
  stream_close(s);
  /* The server notices the close at the latest with its next keep-alive;
   * then nobody is subscribed any more. */
  long end = lc_now_ms() + T(8000);
  while (mcp_server_resource_updated(F.srv, "test://watched") != 0 &&
         lc_now_ms() < end)
    lc_sleep_ms(50);
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://watched"), 0);
}
END_TEST

/* The served server and another one ("other"), which the caller sets up
 * and then gives a store shared with it (*st, in-process), as two
 * processes on one Redis. */
static mcp_server *other_server(mcp_store **st) {
  fx_start(NULL);
  *st = mcp_store_new_local();
  ck_assert_ptr_nonnull(*st);
  mcp_server_info info = {.name = "other", .version = "1"};
  mcp_server *other = NULL;
  ck_assert_int_eq(mcp_server_new(&info, &other), 0);
  return other;
}

/* Another server sharing the served one's store (as another process on
 * one Redis would): its changes reach the listen stream here, once each,
 * in order; the served server's own, once too. */
START_TEST(modern_listen_hears_another_server) {
  mcp_store *st;
  mcp_server *other = other_server(&st);
  mcp_resource res = {.uri_template = "test://w/{n}",
                      .name = "w",
                      .mime_type = "text/plain",
                      .handler = read_watched};
  ck_assert_int_eq(mcp_server_add_resource(F.srv, &res, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(other, &res, NULL), 0);
  ck_assert_int_eq(mcp_server_set_store(F.srv, st), 0);
  ck_assert_int_eq(mcp_server_set_store(other, st), 0);
  stream *s = listen_acknowledged(
      "sub-2", "\"resourceSubscriptions\":[\"test://w/1\",\"test://w/2\"]");
  /* Told nobody there; heard here. */
  ck_assert_int_eq(mcp_server_resource_updated(other, "test://w/1"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(other, "test://w/2"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(other, "test://w/3"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://w/1"), 1);
  ck_assert(stream_wait(s, "notifications/resources/updated", 3, T(5000)));
  sse e = stream_sse(s);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  ck_assert_int_eq(n, 4);
  static const char *const uris[] = {"test://w/1", "test://w/2", "test://w/1"};
  for (int i = 1; i < n; i++) {
    ck_assert_str_eq(tu_jstr(m[i], "method"),
                     "notifications/resources/updated");
    ck_assert_str_eq(tu_jstr(m[i], "params.uri"), uris[i - 1]);
    const cJSON *meta = tu_jget(m[i], "params._meta");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                         meta, "io.modelcontextprotocol/subscriptionId")),
                     "sub-2");
  }
  free_messages(m, n);
  sse_free(&e);
  stream_close(s);
  mcp_server_free(other);
  /* The store goes once no server has it. */
  ck_assert_int_eq(mcp_server_set_store(F.srv, NULL), 0);
  mcp_store_free(st);
}
END_TEST

/* A legacy session another server adopts (as another process sharing one
 * Redis would, once nginx sends it the session's requests): its calls and
 * GET stream go on there under the same id; a session deleted first, or
 * never made, is unknown there. */
START_TEST(legacy_session_adopted_by_another_server) {
  mcp_store *st;
  mcp_server *other = other_server(&st);
  mcp_server_set_log(other, fx_log, NULL);
  const mcp_tool echo = {.name = "echo",
                         .description = "Returns its text.",
                         .annotations = TC_READ_ONLY,
                         .handler = tool_echo};
  ck_assert_int_eq(mcp_server_add_tool(other, &echo, NULL), 0);
  ck_assert_int_eq(mcp_server_set_store(F.srv, st), 0);
  ck_assert_int_eq(mcp_server_set_store(other, st), 0);
  mcp_http *h2 = NULL;
  ck_assert_int_eq(mcp_http_start(other, NULL, &h2), 0);
  char *sid = open_session(V, "{}");
  char *gone = open_session(V, "{}");
  lc_req del = {.method = "DELETE", .session = gone, .version = V};
  lc_resp r;
  http(&del, &r);
  ck_assert_int_eq(r.status, 204);
  lc_resp_free(&r);
  /* From here on, requests reach the other server. */
  uint16_t first = F.port;
  F.port = mcp_http_port(h2);
  expect_echo(sid, "7", "there");
  expect_echo(sid, "8", "again");
  /* A resumption of a stream the first server had: gone with it, so the
   * session's stream opens here instead of a 404 (which would end the
   * session for the client). */
  stream *g = open_get(sid, "1-3");
  ck_assert_int_eq(stream_wait_headers(g, T(5000)), 200);
  stream_close(g);
  post(gone, PING, &r);
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  post("never-made", PING, &r); /* not an id any node mints: no look */
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  post("n9.0123456789abcdefghijklmnopqrstuv", PING, &r); /* looked up */
  assert_rpc_error(&r, 404, 0, ID_ANY);
  lc_resp_free(&r);
  F.port = first;
  ck_assert_ptr_nonnull(strstr(F.log.p, "adopted"));
  /* Back on the first server, whose copy went stale when the other
   * adopted it: the copy is let go and the session adopted back. */
  fresh_curl();
  expect_echo(sid, "9", "back");
  /* (Let go by the housekeeping tick, or by this request: either says
   * so.) */
  ck_assert_ptr_nonnull(strstr(F.log.p, "stale copy here is let go"));
  /* A server whose sessions are all in use adopts none: 503, try again. */
  mcp_http_stop(h2);
  mcp_http_options full = {.max_sessions = 1};
  ck_assert_int_eq(mcp_http_start(other, &full, &h2), 0);
  F.port = mcp_http_port(h2);
  char *mine = open_session(V, "{}");
  post(sid, PING, &r);
  assert_rpc_error(&r, 503, 0, ID_ANY);
  ck_assert_ptr_nonnull(strstr(r.body.p, "cannot be taken over now"));
  lc_resp_free(&r);
  F.port = first;
  free(mine);
  mcp_http_stop(h2);
  mcp_server_free(other);
  ck_assert_int_eq(mcp_server_set_store(F.srv, NULL), 0);
  mcp_store_free(st);
  free(sid);
  free(gone);
}
END_TEST

/* Legacy subscriptions: resources/subscribe on a POST, updates on the
 * session's GET stream, none after resources/unsubscribe. */
START_TEST(legacy_resource_updates_on_get_stream) {
  fx_start(NULL);
  mcp_resource res = {.uri = "test://watched",
                      .name = "watched",
                      .mime_type = "text/plain",
                      .handler = read_watched};
  ck_assert_int_eq(mcp_server_add_resource(F.srv, &res, NULL), 0);
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\","
       "\"params\":{\"uri\":\"test://watched\"}}",
       &r);
  cJSON *m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
  stream *s = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(s, T(5000)), 200);
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://watched"), 1);
  ck_assert(stream_wait(s, "notifications/resources/updated", 1, T(5000)));
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/"
       "unsubscribe\",\"params\":{\"uri\":\"test://watched\"}}",
       &r);
  m = expect_result(&r);
  cJSON_Delete(m);
  lc_resp_free(&r);
  ck_assert_int_eq(mcp_server_resource_updated(F.srv, "test://watched"), 0);
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\","
       "\"params\":{\"uri\":\"test://watched\"}}",
       &r);
  m = expect_result(&r);
  ck_assert_str_eq(tu_jstr(m, "result.contents.0.text"), "contents");
  cJSON_Delete(m);
  lc_resp_free(&r);
  stream_close(s);
  free(sid);
}
END_TEST

/* ===========================================================================
 * Host, Origin, binding (BAD-INPUTS D rows; digest §8, §9 item 32)
 * ======================================================================== */

static long init_with(const char *const *headers, size_t n) {
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  lc_req q = {.body = body};
  for (size_t i = 0; i < n && i < LC_MAXH; i++)
    q.headers[i] = headers[i];
  lc_resp r;
  http(&q, &r);
  long st = r.status;
  if (st == 403) {
    cJSON *m = reply_of(&r);
    ck_assert_msg(m && tu_jget(m, "error"),
                  "403 without a JSON-RPC error body");
    ck_assert_msg(tu_jget(m, "id") == NULL || cJSON_IsNull(tu_jget(m, "id")),
                  "403 body with an id");
    cJSON_Delete(m);
  }
  lc_resp_free(&r);
  return st;
}

/* D1: a foreign Host is refused before the body is read. */
START_TEST(d1_foreign_host_403_before_body) {
  fx_start(NULL);
  /* Headers promising a body that never comes: the 403 must not wait. */
  int fd = raw_connect();
  const char *head = "POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\n"
                     "Origin: http://evil.example.com\r\n" RAW_POST_HEADERS
                     "Content-Length: 1000000\r\n\r\n";
  ck_assert(lc_send_all(fd, head, strlen(head)));
  raw_resp rr = {0};
  raw_read(fd, T(3000), false, &rr);
  ck_assert_msg(rr.status == 403, "foreign Host: HTTP %ld (%.200s)", rr.status,
                rr.data.p ? rr.data.p : "");
  size_t blen = 0;
  const char *b = raw_body(&rr, &blen);
  cJSON *m = b ? cJSON_ParseWithLength(b, blen) : NULL;
  ck_assert_msg(m && tu_jget(m, "error"), "403 without a JSON-RPC error body");
  ck_assert_msg(tu_jget(m, "id") == NULL || cJSON_IsNull(tu_jget(m, "id")),
                "403 body with an id");
  cJSON_Delete(m);
  raw_free(&rr);
  close(fd);
  char host[128];
  static const char *const bad[] = {
      "Host: evil.example.com", "Host: evil.example.com:80",
      "Host: 127.0.0.1.evil.example", "Host: localhost.evil.example",
      "Host: evil.example:127.0.0.1", "Host: 127.0.0.2",
      /* A port is a number from 1 to 65535. */
      "Host: localhost:0", "Host: localhost:65536", "Host: localhost:99999",
      "Host: [::1]:70000", "Host: 127.0.0.1:00000"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    ck_assert_msg(init_with(&bad[i], 1) == 403, "%s allowed", bad[i]);
  ck_assert_int_eq(fx_calls(), 0);
  /* Loopback names with any port, in any case. */
  static const char *const good[] = {"localhost", "LocalHost:1", "127.0.0.1",
                                     "[::1]:8080", "localhost:65535"};
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    snprintf(host, sizeof host, "Host: %s", good[i]);
    const char *h = host;
    ck_assert_msg(init_with(&h, 1) == 200, "%s refused", host);
  }
  snprintf(host, sizeof host, "Host: localhost:%u", (unsigned)F.port);
  const char *h = host;
  ck_assert_int_eq(init_with(&h, 1), 200);
}
END_TEST

START_TEST(d2_d4_foreign_or_null_origin_403) {
  fx_start(NULL);
  static const char *const bad[] = {"Origin: https://evil.example",
                                    "Origin: http://localhost.evil.example",
                                    "Origin: http://127.0.0.1.evil.example:80",
                                    "Origin: null", "Origin: file://"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    ck_assert_msg(init_with(&bad[i], 1) == 403, "%s allowed", bad[i]);
  static const char *const good[] = {
      "Origin: http://localhost:9999", "Origin: http://127.0.0.1",
      "Origin: https://[::1]:1", "Origin: http://LOCALHOST:3000"};
  for (size_t i = 0; i < TU_COUNT(good); i++)
    ck_assert_msg(init_with(&good[i], 1) == 200, "%s refused", good[i]);
  /* A session's later requests are checked too. */
  char *sid = open_session(V, "{}");
  lc_resp r;
  lc_req q = {.body = PING,
              .session = sid,
              .version = V,
              .headers = {"Origin: https://evil.example"}};
  http(&q, &r);
  ck_assert_int_eq(r.status, 403);
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* D3: no Origin (curl, native clients) is allowed. */
START_TEST(d3_no_origin_allowed) {
  fx_start(NULL);
  ck_assert_int_eq(init_with(NULL, 0), 200);
}
END_TEST

/* A browser's request from another site without Origin (a navigation, an
 * image) is refused on every verb: the Origin check cannot judge it. The
 * user's own (none) and the server's page's (same-origin) go on, and a
 * request with an allowed Origin is the allowlist's to judge. */
START_TEST(d7_cross_site_without_origin_403) {
  fx_start(NULL);
  static const char *const refused[] = {
      "Sec-Fetch-Site: cross-site", "Sec-Fetch-Site: same-site",
      "Sec-Fetch-Site: Cross-Site", "Sec-Fetch-Site: whatever"};
  for (size_t i = 0; i < TU_COUNT(refused); i++)
    ck_assert_msg(init_with(&refused[i], 1) == 403, "%s", refused[i]);
  static const char *const twice[] = {"Sec-Fetch-Site: none",
                                      "Sec-Fetch-Site: cross-site"};
  ck_assert_int_eq(init_with(twice, 2), 403);
  static const char *const allowed[] = {"Sec-Fetch-Site: same-origin",
                                        "Sec-Fetch-Site: none"};
  for (size_t i = 0; i < TU_COUNT(allowed); i++)
    ck_assert_msg(init_with(&allowed[i], 1) == 200, "%s", allowed[i]);
  static const char *const with_origin[] = {"Sec-Fetch-Site: cross-site",
                                            "Origin: http://localhost:5173"};
  ck_assert_int_eq(init_with(with_origin, 2), 200);
  /* A legacy session's GET and DELETE alike. */
  char *sid = open_session(V, "{}");
  lc_req get = {.method = "GET",
                .session = sid,
                .version = V,
                .headers = {"Sec-Fetch-Site: cross-site"},
                .timeout_ms = T(2000)};
  lc_resp r;
  http(&get, &r);
  ck_assert_int_eq(r.status, 403);
  lc_resp_free(&r);
  lc_req del = {.method = "DELETE",
                .session = sid,
                .version = V,
                .headers = {"Sec-Fetch-Site: cross-site"}};
  http(&del, &r);
  ck_assert_int_eq(r.status, 403);
  lc_resp_free(&r);
  expect_ping_ok(sid); /* the session is untouched */
  free(sid);
}
END_TEST

/* D6: empty allow-lists deny everything, with a warning at start. Custom
 * lists replace the defaults. */
START_TEST(d6_empty_allowlists_fail_closed) {
  static const char *const none[] = {NULL};
  mcp_http_options o = {.allowed_hosts = none};
  fx_start(&o);
  ck_assert_msg(F.warnings > 0, "no warning about an empty host list");
  ck_assert_int_eq(init_with(NULL, 0), 403);
  const char *h = "Host: localhost";
  ck_assert_int_eq(init_with(&h, 1), 403);
  mcp_http_options o2 = {.allowed_origins = none};
  fx_restart(&o2);
  const char *origin = "Origin: http://localhost";
  ck_assert_int_eq(init_with(&origin, 1), 403);
  static const char *const hosts[] = {"mcp.example", NULL};
  static const char *const origins[] = {"https://app.example", NULL};
  mcp_http_options o3 = {.allowed_hosts = hosts, .allowed_origins = origins};
  fx_restart(&o3);
  const char *ok[] = {"Host: mcp.example:8443", "Origin: https://app.example"};
  ck_assert_int_eq(init_with(ok, 2), 200);
  const char *mcp_host = "Host: MCP.EXAMPLE";
  ck_assert_int_eq(init_with(&mcp_host, 1), 200);
  ck_assert_int_eq(init_with(NULL, 0), 403); /* 127.0.0.1 is not listed */
  const char *bad1[] = {"Host: mcp.example", "Origin: http://app.example"};
  ck_assert_int_eq(init_with(bad1, 2), 403);
  const char *bad2[] = {"Host: mcp.example",
                        "Origin: https://app.example.evil"};
  ck_assert_int_eq(init_with(bad2, 2), 403);
}
END_TEST

/* D7: HTTP/1.1 without Host is 400; HTTP/1.0 without Host is refused. */
START_TEST(d7_missing_host_400) {
  fx_start(NULL);
  raw_resp rr;
  raw_exchange("POST", false, RAW_POST_HEADERS, 0, PING, &rr);
  ck_assert_msg(rr.status == 400, "HTTP/1.1 without Host: %ld", rr.status);
  raw_free(&rr);
  int fd = raw_connect();
  lc_buf b = {0};
  lc_buf_fmt(&b,
             "POST /mcp HTTP/1.0\r\n" RAW_POST_HEADERS
             "Content-Length: %zu\r\n\r\n" PING,
             strlen(PING));
  lc_send_all(fd, b.p, b.n);
  memset(&rr, 0, sizeof rr);
  raw_read(fd, T(3000), false, &rr);
  ck_assert_msg(rr.status == 400 || rr.status == 403,
                "HTTP/1.0 without Host: %ld", rr.status);
  raw_free(&rr);
  lc_buf_free(&b);
  close(fd);
  ck_assert_int_eq(fx_calls(), 0);
}
END_TEST

/* D8: a NUL inside Host or Origin (libmicrohttpd 0.9.75 truncates there)
 * never passes as the allowed prefix. */
START_TEST(d8_nul_in_host_or_origin) {
  fx_start(NULL);
  static const char hdrs[][96] = {
      "Host: localhost\0.evil.example\r\n",
      "Host: 127.0.0.1:1\0.evil\r\n",
  };
  static const size_t hlen[] = {sizeof "Host: localhost\0.evil.example\r\n" - 1,
                                sizeof "Host: 127.0.0.1:1\0.evil\r\n" - 1};
  for (size_t i = 0; i < TU_COUNT(hdrs); i++) {
    lc_buf h = {0};
    lc_buf_add(&h, hdrs[i], hlen[i]);
    lc_buf_str(&h, RAW_POST_HEADERS);
    raw_resp rr;
    char body[512];
    snprintf(body, sizeof body, INIT_FMT, V, "{}");
    raw_exchange("POST", false, h.p, h.n, body, &rr);
    ck_assert_msg(rr.status == 400 || rr.status == 403,
                  "Host with NUL %zu: HTTP %ld", i, rr.status);
    raw_free(&rr);
    lc_buf_free(&h);
  }
  static const char origin[] = "Origin: http://localhost\0.evil.example\r\n";
  lc_buf h = {0};
  lc_buf_add(&h, origin, sizeof origin - 1);
  lc_buf_str(&h, RAW_POST_HEADERS);
  raw_resp rr;
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  raw_exchange("POST", true, h.p, h.n, body, &rr);
  ck_assert_msg(rr.status == 400 || rr.status == 403,
                "Origin with NUL: HTTP %ld", rr.status);
  raw_free(&rr);
  lc_buf_free(&h);
}
END_TEST

static bool ipv6_loopback_available(void) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0)
    return false;
  struct sockaddr_in6 a = {.sin6_family = AF_INET6};
  a.sin6_addr = in6addr_loopback;
  bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
  close(fd);
  return ok;
}

/* D9: the default bind address is 127.0.0.1; ::1 works when asked. */
START_TEST(d9_default_bind_loopback) {
  fx_start(NULL);
  listener ls[16];
  size_t n = listeners(ls, 16);
  bool found = false;
  for (size_t i = 0; i < n; i++)
    if (ls[i].port == F.port) {
      found = true;
      ck_assert_msg(!ls[i].v6 && ls[i].addr[0] == 127 && ls[i].addr[1] == 0 &&
                        ls[i].addr[2] == 0 && ls[i].addr[3] == 1,
                    "the default listener is not 127.0.0.1");
    }
  ck_assert_msg(found, "no listening socket on port %u", (unsigned)F.port);
  if (!ipv6_loopback_available()) {
    printf("SKIP d9 (::1 part): no IPv6 loopback on this machine\n");
    return;
  }
  mcp_http_options o = {.bind_addr = "::1"};
  fx_restart(&o);
  lc_resp r;
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  lc_req q = {.body = body, .host = "[::1]"};
  http(&q, &r);
  ck_assert_msg(r.status == 200, "over ::1: HTTP %ld (%s)", r.status,
                curl_easy_strerror(r.curl_rc));
  lc_resp_free(&r);
}
END_TEST

/* D10: a CORS preflight from an unlisted origin gets no
 * Access-Control-Allow-Origin. */
START_TEST(d10_cors_preflight_unlisted_origin) {
  fx_start(NULL);
  lc_resp r;
  lc_req q = {.method = "OPTIONS",
              .headers = {"Origin: https://evil.example",
                          "Access-Control-Request-Method: POST",
                          "Access-Control-Request-Headers: content-type, "
                          "mcp-session-id"},
              .timeout_ms = T(5000)};
  http(&q, &r);
  char v[256];
  ck_assert_msg(r.status >= 400, "preflight from evil.example: HTTP %ld",
                r.status);
  ck_assert_msg(resp_header(&r, "Access-Control-Allow-Origin", v, sizeof v) ==
                    NULL,
                "Access-Control-Allow-Origin: %s", v);
  lc_resp_free(&r);
}
END_TEST

/* ===========================================================================
 * Limits (BAD-INPUTS F rows)
 * ======================================================================== */

/* The text of an initialize request; keep_alive leaves the connection open. */
static void raw_init_text(lc_buf *b, bool keep_alive) {
  char body[512];
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  lc_buf_fmt(b,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" RAW_POST_HEADERS
             "Content-Length: %zu\r\n%s\r\n%s",
             (unsigned)F.port, strlen(body),
             keep_alive ? "" : "Connection: close\r\n", body);
}

/* Sends an initialize on fd and reads the answer's status (0 = none). */
static long raw_init_on(int fd, long ms) {
  lc_buf b = {0};
  raw_init_text(&b, true);
  long st = 0;
  if (lc_send_all(fd, b.p, b.n)) {
    raw_resp rr = {0};
    raw_read(fd, ms, false, &rr);
    st = rr.status;
    raw_free(&rr);
  }
  lc_buf_free(&b);
  return st;
}

/* F1: a declared body over the cap: 413 with a JSON-RPC error before any
 * of it is read, then the connection is closed. The cap is exact. */
START_TEST(f1_content_length_over_cap_413) {
  fx_start(NULL);
  int fd = raw_connect();
  lc_buf h = {0};
  lc_buf_fmt(&h,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" RAW_POST_HEADERS
             "Content-Length: 104857600\r\n\r\n{\"jsonrpc\":",
             (unsigned)F.port);
  ck_assert(lc_send_all(fd, h.p, h.n));
  lc_buf_free(&h);
  raw_resp rr = {0};
  raw_read(fd, T(3000), false, &rr);
  ck_assert_msg(rr.status == 413, "100 MB Content-Length: HTTP %ld", rr.status);
  size_t blen = 0;
  const char *b = raw_body(&rr, &blen);
  cJSON *m = b ? cJSON_ParseWithLength(b, blen) : NULL;
  ck_assert_msg(m && tu_jget(m, "error"), "413 without a JSON-RPC error body");
  cJSON_Delete(m);
  raw_resp after = {0};
  raw_read(fd, T(3000), true, &after);
  ck_assert_msg(after.closed, "the connection stays open after the 413");
  raw_free(&after);
  raw_free(&rr);
  close(fd);
  /* max_body bytes pass, one more does not. */
  mcp_http_options o = {.max_body = 1024};
  fx_restart(&o);
  char init[512];
  snprintf(init, sizeof init, INIT_FMT, V, "{}");
  for (size_t len = 1024; len <= 1025; len++) {
    char *body = malloc(len + 1);
    memset(body, ' ', len);
    memcpy(body, init, strlen(init));
    body[len] = '\0';
    lc_resp r;
    lc_req q = {.body = body};
    http(&q, &r);
    ck_assert_msg(len == 1024 ? r.status == 200 : r.status == 413,
                  "a %zu-byte body with max_body 1024: HTTP %ld", len,
                  r.status);
    lc_resp_free(&r);
    free(body);
  }
}
END_TEST

/* F2: a chunked body growing past the cap: the connection is closed (413
 * when it can still be sent), and nothing is dispatched. */
START_TEST(f2_chunked_over_cap_closed) {
  mcp_http_options o = {.max_body = 65536};
  fx_start(&o);
  int fd = raw_connect();
  lc_buf h = {0};
  lc_buf_fmt(&h,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n" RAW_POST_HEADERS
             "Transfer-Encoding: chunked\r\n\r\n",
             (unsigned)F.port);
  ck_assert(lc_send_all(fd, h.p, h.n));
  lc_buf_free(&h);
  char chunk[8192 + 16];
  int k = snprintf(chunk, sizeof chunk, "2000\r\n");
  memset(chunk + k, ' ', 8192);
  memcpy(chunk + k + 8192, "\r\n", 2);
  size_t clen = (size_t)k + 8194;
  size_t sent = 0;
  bool stopped = false;
  for (int i = 0; i < 128 && !stopped; i++) { /* up to 1 MiB */
    if (!lc_send_all(fd, chunk, clen)) {
      stopped = true;
      break;
    }
    sent += 8192;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    stopped = poll(&p, 1, 0) > 0;
  }
  if (!stopped)
    lc_send_all(fd, "0\r\n\r\n", 5);
  raw_resp rr = {0};
  raw_read(fd, T(3000), true, &rr);
  printf("f2: %zu body bytes sent before the server %s; HTTP %ld\n", sent,
         stopped ? "stopped reading" : "got them all", rr.status);
  ck_assert_msg(rr.status == 0 || rr.status == 413,
                "chunked body over the cap: HTTP %ld", rr.status);
  ck_assert_msg(rr.closed, "the connection was not closed");
  raw_free(&rr);
  close(fd);
  ck_assert_int_eq(init_with(NULL, 0), 200);
}
END_TEST

/* F3: 100 KB of headers: 431, or closed without an answer. */
START_TEST(f3_huge_header_block_431) {
  fx_start(NULL);
  for (int shape = 0; shape < 2; shape++) {
    lc_buf h = {0};
    lc_buf_str(&h, RAW_POST_HEADERS);
    if (shape == 0) {
      lc_buf_str(&h, "X-Big: ");
      for (int i = 0; i < 1024; i++)
        lc_buf_str(
            &h, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
      lc_buf_str(&h, "\r\n");
    } else {
      for (int i = 0; i < 1024; i++)
        lc_buf_fmt(&h, "X-Many-%04d: %090d\r\n", i, i);
    }
    raw_resp rr;
    raw_exchange("POST", true, h.p, h.n, PING, &rr);
    ck_assert_msg(rr.status == 431 || (rr.status == 0 && rr.closed),
                  "100 KB of headers (shape %d): HTTP %ld", shape, rr.status);
    raw_free(&rr);
    lc_buf_free(&h);
  }
  ck_assert_int_eq(init_with(NULL, 0), 200);
}
END_TEST

/* F4 and F6: connections from one address beyond the per-IP limit are
 * refused while trickling ones hold their slots; another address is still
 * served; a freed slot serves again. */
START_TEST(f4_f6_per_ip_limit_and_slowloris) {
  mcp_http_options o = {.per_ip_connections = 4, .connection_timeout_s = 30};
  fx_start(&o);
  int slow[4];
  for (int i = 0; i < 4; i++) {
    slow[i] = raw_connect();
    const char *part = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ck_assert(lc_send_all(slow[i], part, strlen(part)));
  }
  lc_sleep_ms(T(300));
  int extra = raw_connect();
  long st = raw_init_on(extra, T(2000));
  ck_assert_msg(st != 200, "a 5th connection from 127.0.0.1 was served");
  close(extra);
  for (int round = 0; round < 5; round++) { /* 1 byte per slot per 100 ms */
    for (int i = 0; i < 4; i++)
      lc_send_all(slow[i], "X", 1);
    lc_sleep_ms(100);
  }
  int other = raw_connect_from("127.0.0.2");
  if (other < 0) {
    printf("SKIP f4 (other address part): cannot bind 127.0.0.2\n");
  } else {
    ck_assert_int_eq(raw_init_on(other, T(5000)), 200);
    close(other);
  }
  close(slow[0]);
  long end = lc_now_ms() + T(3000);
  st = 0;
  while (st != 200 && lc_now_ms() < end) {
    lc_sleep_ms(100);
    int fd = raw_connect();
    st = raw_init_on(fd, T(2000));
    close(fd);
  }
  ck_assert_msg(st == 200, "a freed slot does not serve again (%ld)", st);
  for (int i = 1; i < 4; i++)
    close(slow[i]);
}
END_TEST

/* F7: at the global connection limit new connections are refused and the
 * open ones keep working. */
START_TEST(f7_global_connection_limit) {
  mcp_http_options o = {.max_connections = 4,
                        .per_ip_connections = 64,
                        .connection_timeout_s = 30};
  fx_start(&o);
  int keep = raw_connect();
  ck_assert_int_eq(raw_init_on(keep, T(5000)), 200);
  int idle[3];
  for (int i = 0; i < 3; i++)
    idle[i] = raw_connect();
  lc_sleep_ms(T(300));
  int extra = raw_connect();
  long st = raw_init_on(extra, T(1500));
  ck_assert_msg(st != 200, "a connection over the global limit was served");
  ck_assert_int_eq(raw_init_on(keep, T(5000)), 200);
  close(extra);
  for (int i = 0; i < 3; i++)
    close(idle[i]);
  close(keep);
}
END_TEST

/* F5: an idle connection is closed after connection_timeout_s, and so is
 * one that stopped half-way through its headers. */
START_TEST(f5_idle_connection_closed) {
  mcp_http_options o = {.connection_timeout_s = 2};
  fx_start(&o);
  for (int shape = 0; shape < 2; shape++) {
    int fd = raw_connect();
    if (shape == 1)
      lc_send_all(fd, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", 38);
    long t0 = lc_now_ms();
    raw_resp rr = {0};
    raw_read(fd, 10000, true, &rr);
    long took = lc_now_ms() - t0;
    printf("f5: %s connection closed after %ld ms\n",
           shape ? "half-sent" : "idle", took);
    ck_assert_msg(rr.closed, "still open after 10 s");
    ck_assert_msg(took >= 1000 && took <= 6000,
                  "closed after %ld ms with a 2 s timeout", took);
    raw_free(&rr);
    close(fd);
  }
}
END_TEST

/* F15: a flood of pings and unknown cancellations costs O(1) each. */
START_TEST(f15_ping_and_cancel_flood_bounded) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  for (int i = 0; i < 100; i++)
    expect_ping_ok(sid);
  long before = lc_rss_kib();
  int n = scaled(3000, 100);
  for (int i = 0; i < n; i++) {
    char body[160];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
             "\"params\":{\"requestId\":%d}}",
             100000 + i);
    lc_resp r;
    post(sid, i % 2 ? PING : body, &r);
    ck_assert_int_eq(r.status, i % 2 ? 200 : 202);
    lc_resp_free(&r);
  }
  long after = lc_rss_kib();
  printf("f15: %d pings and cancellations, RSS %ld -> %ld KiB\n", n, before,
         after);
  if (rss_bounded())
    ck_assert_msg(after - before < 1024, "RSS grew by %ld KiB", after - before);
  free(sid);
}
END_TEST

/* ===========================================================================
 * Embedding: external loop, start failures, stop, memory
 * ======================================================================== */

typedef struct loop_client {
  pthread_mutex_t mu;
  bool done;
  long status[3];
  char text[64];
} loop_client;

static void *loop_client_run(void *arg) {
  loop_client *lc = arg;
  CURL *c = curl_easy_init();
  char body[512], sid[300] = "";
  snprintf(body, sizeof body, INIT_FMT, V, "{}");
  lc_resp r;
  lc_req q1 = {.body = body};
  lc_http(c, F.port, &q1, &r);
  long s0 = r.status;
  resp_header(&r, "Mcp-Session-Id", sid, sizeof sid);
  lc_resp_free(&r);
  pthread_mutex_lock(&lc->mu);
  lc->status[0] = s0;
  pthread_mutex_unlock(&lc->mu);
  lc_req q2 = {.body = INITIALIZED, .session = sid, .version = V};
  lc_http(c, F.port, &q2, &r);
  long s1 = r.status;
  lc_resp_free(&r);
  lc_req q3 = {.body = CALL("2", "echo", "{\"text\":\"via the loop\"}"),
               .session = sid,
               .version = V};
  lc_http(c, F.port, &q3, &r);
  long s2 = r.status;
  cJSON *m = reply_of(&r);
  pthread_mutex_lock(&lc->mu);
  lc->status[1] = s1;
  lc->status[2] = s2;
  snprintf(lc->text, sizeof lc->text, "%s",
           result_text(m) ? result_text(m) : "");
  lc->done = true;
  pthread_mutex_unlock(&lc->mu);
  cJSON_Delete(m);
  lc_resp_free(&r);
  curl_easy_cleanup(c);
  return NULL;
}

/* The embedder's own poll() loop drives the server: no thread of the
 * library runs, and nothing is served while the loop does not run. */
START_TEST(external_loop_driven_by_poll) {
  long threads0 = threads_now();
  mcp_http_options o = {.external_loop = true};
  fx_start(&o);
  ck_assert_msg(threads_now() == threads0,
                "external_loop started %ld thread(s)",
                threads_now() - threads0);
  int fd = mcp_http_backend_fd(F.http);
  ck_assert_int_ge(fd, 0);
  loop_client lc = {.done = false};
  pthread_mutex_init(&lc.mu, NULL);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, loop_client_run, &lc), 0);
  lc_sleep_ms(300);
  pthread_mutex_lock(&lc.mu);
  long early = lc.status[0];
  pthread_mutex_unlock(&lc.mu);
  long end = lc_now_ms() + T(15000);
  int runs = 0, rc = 0;
  bool done = false;
  while (!done && lc_now_ms() < end && rc == 0) {
    long t = mcp_http_backend_timeout(F.http);
    if (t < 0 || t > 100)
      t = 100;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, (int)t);
    rc = mcp_http_run(F.http);
    runs++;
    pthread_mutex_lock(&lc.mu);
    done = lc.done;
    pthread_mutex_unlock(&lc.mu);
  }
  if (!done) { /* let the client give up before failing */
    while (!done) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      poll(&p, 1, 50);
      mcp_http_run(F.http);
      pthread_mutex_lock(&lc.mu);
      done = lc.done;
      pthread_mutex_unlock(&lc.mu);
    }
  }
  pthread_join(th, NULL);
  pthread_mutex_destroy(&lc.mu);
  printf("external loop: %d runs\n", runs);
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(early == 0, "a request was answered with the loop stopped");
  ck_assert_int_eq(lc.status[0], 200);
  ck_assert_int_eq(lc.status[1], 202);
  ck_assert_int_eq(lc.status[2], 200);
  ck_assert_str_eq(lc.text, "via the loop");
}
END_TEST

/* A daemon that blocks SIGTERM in the thread waiting for it (sigwait, as
 * mcp_http_serve_until_signal does) must get it there: a thread of the
 * transport with the signal open would take it instead, and its default
 * action would end the process while serving. Every thread mcp_http_start
 * starts blocks the process's signals whatever its caller's mask, and the
 * caller's mask is as it was. */
START_TEST(the_transports_threads_take_no_signal) {
  sigset_t none, now;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, NULL);
  long before[256];
  size_t nbefore = tu_thread_ids(before, TU_COUNT(before));
  mcp_http_options o = {.thread_stack_size = 1 << 20};
  fx_start(&o);
  ck_assert_int_eq(init_with(NULL, 0), 200);
  size_t nafter = 0;
  long open = tu_new_thread_taking_stop_signals(before, nbefore, &nafter);
  ck_assert_uint_gt(nafter, nbefore);
  ck_assert_msg(open == 0, "thread %ld of the transport takes SIGTERM", open);
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  ck_assert(!sigismember(&now, SIGTERM));
  ck_assert(!sigismember(&now, SIGHUP));
}
END_TEST

/* A port in use is MCP_EIO and leaves nothing behind (no thread, no
 * descriptor, *out untouched); bad options are MCP_EINVAL. */
START_TEST(start_on_port_in_use_fails_cleanly) {
  fx_start(NULL);
  ck_assert_int_eq(mcp_http_backend_fd(F.http), -1);
  /* A warm-up request, so that lazily created state is not counted. */
  ck_assert_int_eq(init_with(NULL, 0), 200);
  long th0 = threads_now();
  int fd0 = fds_now();
  for (int ext = 0; ext < 2; ext++) {
    mcp_http_options o = {.port = F.port, .external_loop = ext == 1};
    mcp_http *sentinel = (mcp_http *)&o, *h = sentinel;
    int rc = mcp_http_start(F.srv, &o, &h);
    if (rc == 0 && h != sentinel)
      mcp_http_stop(h);
    ck_assert_msg(rc == MCP_EIO, "start on a port in use: %s",
                  mcp_strerror(rc));
    ck_assert_ptr_eq(h, sentinel);
    /* The caller reads why, not only the log. */
    const char *why = mcp_server_errmsg(F.srv);
    ck_assert_msg(strstr(why, "mcp_http_start: cannot start serving on "
                              "127.0.0.1 port") != NULL,
                  "%s", why);
  }
  mcp_http_options bad = {.bind_addr = "not-an-address"};
  mcp_http *h = NULL;
  ck_assert_int_eq(mcp_http_start(F.srv, &bad, &h), MCP_EINVAL);
  ck_assert_ptr_null(h);
  ck_assert_str_eq(mcp_server_errmsg(F.srv),
                   "mcp_http_start: bind_addr is not an IPv4 or IPv6 literal");
  mcp_http_options badpath = {.path = "mcp"};
  ck_assert_int_eq(mcp_http_start(F.srv, &badpath, &h), MCP_EINVAL);
  ck_assert_str_eq(mcp_server_errmsg(F.srv),
                   "mcp_http_start: path must start with '/'");
  ck_assert_int_eq(mcp_http_start(NULL, NULL, &h), MCP_EINVAL);
  ck_assert_ptr_null(h);
  ck_assert_int_eq(threads_settled(th0), th0);
  ck_assert_int_eq(fds_now(), fd0);
  mcp_http_stop(NULL);
  ck_assert_int_eq(init_with(NULL, 0), 200);
}
END_TEST

/* A loopback port nobody listens on right now, or 0 when it cannot be
 * bound (so it is not free). */
static uint16_t loopback_port(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(fd, (struct sockaddr *)&a, &len) == 0;
  close(fd);
  return ok ? ntohs(a.sin_port) : 0;
}

/* H6, thread creation failing: a stack larger than the address space can
 * hold, for the one polling thread and for a pool. mcp_http_start fails
 * with MCP_EIO and says why in the server's log; no thread, descriptor or
 * listening socket is left, and the server already running still serves.
 * The same start with an ordinary stack then succeeds on that port. */
START_TEST(h6_thread_creation_fails_cleanly) {
  fx_start(NULL);
  ck_assert_int_eq(init_with(NULL, 0), 200);
  long th0 = threads_now();
  int fd0 = fds_now();
  for (unsigned threads = 1; threads <= 2; threads++) {
    uint16_t port = loopback_port(0);
    ck_assert_uint_ne(port, 0);
    mcp_http_options o = {
        .port = port, .threads = threads, .thread_stack_size = SIZE_MAX / 2};
    mcp_http *sentinel = (mcp_http *)&o, *h = sentinel;
    int rc = mcp_http_start(F.srv, &o, &h);
    if (rc == 0 && h != sentinel)
      mcp_http_stop(h);
    ck_assert_msg(rc == MCP_EIO, "start with an impossible stack: %s",
                  mcp_strerror(rc));
    ck_assert_ptr_eq(h, sentinel);
    ck_assert_int_eq(threads_settled(th0), th0);
    ck_assert_int_eq(fds_now(), fd0);
    ck_assert_uint_eq(loopback_port(port), port); /* the port is free */
    o.thread_stack_size = 0;
    ck_assert_int_eq(mcp_http_start(F.srv, &o, &h), 0);
    mcp_http_stop(h);
  }
  pthread_mutex_lock(&F.mu);
  bool said = F.log.p && strstr(F.log.p, "thread_stack_size");
  pthread_mutex_unlock(&F.mu);
  ck_assert_msg(said, "no clear reason in the log:\n%s", F.log.p);
  ck_assert_int_eq(init_with(NULL, 0), 200);
}
END_TEST

/* thread_stack_size for a daemon with many threads: a pool of two
 * polling threads with 256 KiB stacks serves sessions, calls, a deferred
 * call and deeply nested input. */
START_TEST(small_thread_stack_serves) {
  fx_start(&(mcp_http_options){.threads = 2,
                               .thread_stack_size = (size_t)256 << 10});
  char *sid = open_session(V, "{}");
  lc_resp r;
  post(sid, CALL("3", "echo", "{\"text\":\"small stack\"}"), &r);
  cJSON *m = expect_result(&r);
  ck_assert_str_eq(result_text(m), "small stack");
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* 10,000 brackets: refused at the depth limit, not by a stack overflow. */
  size_t depth = 10000;
  char *deep = malloc(2 * depth + 1);
  ck_assert_ptr_nonnull(deep);
  memset(deep, '[', depth);
  memset(deep + depth, ']', depth);
  deep[2 * depth] = '\0';
  post(sid, deep, &r);
  ck_assert_int_eq(r.status, 400);
  lc_resp_free(&r);
  free(deep);
  lc_req q = {.body = CALL_P("4", "park", "{}"), .session = sid, .version = V};
  stream *p = stream_open(&q);
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(mcp_result_text(c, "parked"), 0);
  ck_assert_int_eq(mcp_call_finish(c, 0), 0);
  ck_assert_msg(stream_wait_done(p, T(5000)), "the deferred call's stream");
  stream_close(p);
  free(sid);
}
END_TEST

/* mcp_http_stop with a standalone stream open and a call deferred: the
 * streams end, the call is cancelled, finishing it later is harmless. */
START_TEST(stop_with_open_streams_and_deferred_call) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  stream *g = open_get(sid, NULL);
  ck_assert_int_eq(stream_wait_headers(g, T(5000)), 200);
  lc_req q = {.body = CALL_P("41", "park", "{}"), .session = sid, .version = V};
  stream *p = stream_open(&q);
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  long t0 = lc_now_ms();
  mcp_http_stop(F.http);
  F.http = NULL;
  long took = lc_now_ms() - t0;
  ck_assert_msg(stream_wait_done(g, T(3000)), "GET stream still open");
  ck_assert_msg(stream_wait_done(p, T(3000)), "request stream still open");
  ck_assert(mcp_call_cancelled(c));
  mcp_call_finish(c, 0);
  printf("stop with open streams took %ld ms\n", took);
  ck_assert_msg(took < T(5000), "mcp_http_stop took %ld ms", took);
  stream_close(g);
  stream_close(p);
  free(sid);
}
END_TEST

/* 1,000 sessions opened, then expired: the RSS comes back near its
 * baseline (figures printed; asserted within +4 MiB after malloc_trim,
 * except under valgrind, which runs 50). */
START_TEST(rss_1000_sessions_then_expired) {
  mcp_http_options o = {.session_idle_s = 2, .max_sessions = 2048};
  fx_start(&o);
  /* Warm-up: lazily allocated state of the server, libcurl and libc. */
  for (int i = 0; i < 20; i++) {
    char *sid = open_session(V, "{}");
    lc_resp r;
    lc_req del = {.method = "DELETE", .session = sid, .version = V};
    http(&del, &r);
    lc_resp_free(&r);
    free(sid);
  }
  malloc_trim(0);
  long base = lc_rss_kib();
  int n = scaled(1000, 50);
  char **ids = calloc((size_t)n, sizeof *ids);
  long t0 = lc_now_ms();
  for (int i = 0; i < n; i++) {
    ids[i] = open_session(V, "{}");
    lc_resp r;
    post(ids[i], TOOLS_LIST, &r);
    ck_assert_int_eq(r.status, 200);
    lc_resp_free(&r);
  }
  long opened = lc_now_ms() - t0;
  long peak = lc_rss_kib();
  lc_sleep_ms(4500);
  /* All gone: the last ones opened too. */
  for (int i = n - 5; i < n; i++) {
    lc_resp r;
    post(ids[i], PING, &r);
    ck_assert_msg(r.status == 404, "session %d alive after its idle time", i);
    lc_resp_free(&r);
  }
  long after = lc_rss_kib();
  malloc_trim(0);
  long trimmed = lc_rss_kib();
  printf("rss: baseline %ld KiB; %d sessions opened in %ld ms: %ld KiB "
         "(%+ld); expired: %ld KiB, after malloc_trim %ld KiB (%+ld)\n",
         base, n, opened, peak, peak - base, after, trimmed, trimmed - base);
  if (rss_bounded())
    ck_assert_msg(trimmed - base <= 4096,
                  "RSS %ld KiB above the baseline after the sessions expired",
                  trimmed - base);
  for (int i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
}
END_TEST

/* ===========================================================================
 * One reply is one JSON body, whoever runs the call and whenever it
 * answers: at once, deferred, on an executor's thread or under the guard;
 * an event stream only when something comes before the reply
 * ======================================================================== */

/* A thread executor: each call runs on a thread of its own once the gate
 * is open, so that a test can hold calls until their request was settled. */
static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool open;
  int n; /* threads started */
  pthread_t th[8];
} TX = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0, {0}};

static void *tx_run(void *call) {
  struct timespec dl = deadline_in(T(30000));
  pthread_mutex_lock(&TX.mu);
  while (!TX.open)
    if (pthread_cond_timedwait(&TX.cv, &TX.mu, &dl) == ETIMEDOUT)
      break;
  pthread_mutex_unlock(&TX.mu);
  mcp_call_execute(call, "a test thread");
  return NULL;
}

static int tx_submit(mcp_call *call, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&TX.mu);
  int rc = TX.n < (int)TU_COUNT(TX.th)
               ? pthread_create(&TX.th[TX.n], NULL, tx_run, call)
               : -1;
  if (rc == 0)
    TX.n++;
  pthread_cond_broadcast(&TX.cv);
  pthread_mutex_unlock(&TX.mu);
  return rc == 0 ? 0 : MCP_EXECUTE_HERE;
}

static const mcp_executor tx_executor = {.submit = tx_submit};

static void tx_gate(bool open) {
  pthread_mutex_lock(&TX.mu);
  TX.open = open;
  pthread_cond_broadcast(&TX.cv);
  pthread_mutex_unlock(&TX.mu);
}

/* Waits until n calls were handed to the executor; returns how many. */
static int tx_started(int n, long ms) {
  struct timespec dl = deadline_in(ms);
  pthread_mutex_lock(&TX.mu);
  while (TX.n < n)
    if (pthread_cond_timedwait(&TX.cv, &TX.mu, &dl) == ETIMEDOUT)
      break;
  int k = TX.n;
  pthread_mutex_unlock(&TX.mu);
  return k;
}

/* Opens the gate and joins every thread the executor started. */
static void tx_join(void) {
  tx_gate(true);
  pthread_mutex_lock(&TX.mu);
  int n = TX.n;
  TX.n = 0;
  pthread_mutex_unlock(&TX.mu);
  for (int i = 0; i < n; i++)
    pthread_join(TX.th[i], NULL);
}

/* Sends q (the executor's nth call) with the gate shut, and opens it once
 * the response has begun (as an event stream would at once) or T(300) ms
 * passed without one: the call then runs after its request was settled,
 * whatever the scheduler does. Returns the stream, answered. */
static stream *call_gated(const lc_req *q, int nth) {
  tx_gate(false);
  stream *s = stream_open(q);
  ck_assert_int_eq(tx_started(nth, T(5000)), nth);
  (void)stream_wait_headers(s, T(300));
  tx_gate(true);
  ck_assert_msg(stream_wait_done(s, T(10000)), "call %d: no answer", nth);
  return s;
}

/* r is one JSON body, application/json, whose result's text is text. */
static void expect_json_reply(const lc_resp *r, const char *what,
                              const char *text) {
  char type[128];
  ck_assert_msg(r->status == 200, "%s: HTTP %ld", what, r->status);
  resp_type(r, type, sizeof type);
  ck_assert_msg(strcmp(type, "application/json") == 0,
                "%s: one reply came as %s: %.*s", what, type, (int)r->body.n,
                r->body.p ? r->body.p : "");
  cJSON *m = reply_of(r);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(result_text(m), text);
  cJSON_Delete(m);
}

/* r is an event stream: n progress notifications, then the result. */
static void expect_progress_then_result(const lc_resp *r, const char *what) {
  char type[128];
  ck_assert_msg(r->status == 200, "%s: HTTP %ld", what, r->status);
  ck_assert_str_eq(resp_type(r, type, sizeof type), "text/event-stream");
  sse e = sse_parse(r->body.p, r->body.n);
  cJSON *m[16];
  int n = sse_messages(&e, m, 16);
  ck_assert_msg(n == 4, "%s: %d messages: %.300s", what, n, r->body.p);
  for (int i = 0; i < 3; i++)
    ck_assert_str_eq(tu_jstr(m[i], "method"), "notifications/progress");
  ck_assert_str_eq(result_text(m[3]), "progressed");
  free_messages(m, n);
  sse_free(&e);
}

#define MODERN_Q(b, tool)                                                      \
  {                                                                            \
    .body = (b), .version = "2026-07-28", .headers = {                         \
      "Mcp-Method: tools/call",                                                \
      "Mcp-Name: " tool                                                        \
    }                                                                          \
  }
#define MODERN_PROGRESS                                                        \
  "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"       \
  "\"name\":\"progress\",\"arguments\":{}," MODERN_META_P "}}"

/* Calls on an executor's threads, run only after their request was
 * settled: a single reply is JSON in both eras; progress first makes an
 * event stream. */
START_TEST(executor_single_reply_is_json_in_both_eras) {
  fx_executor = &tx_executor;
  fx_start(NULL);
  fx_executor = NULL;
  char *sid = open_session(V, "{}");
  lc_req legacy = {.body = CALL("3", "echo", "{\"text\":\"on a thread\"}"),
                   .session = sid,
                   .version = V};
  stream *s = call_gated(&legacy, 1);
  expect_json_reply(&s->r, "2025-11-25", "on a thread");
  stream_close(s);
  lc_req stateless =
      MODERN_Q(MODERN_CALL("4", "echo", "{\"text\":\"stateless\"}"), "echo");
  s = call_gated(&stateless, 2);
  expect_json_reply(&s->r, "2026-07-28", "stateless");
  stream_close(s);
  lc_resp r;
  post(sid, CALL_P("5", "progress", "{}"), &r);
  expect_progress_then_result(&r, "2025-11-25 progress");
  lc_resp_free(&r);
  modern("2026-07-28", "tools/call", "progress", MODERN_PROGRESS, &r);
  expect_progress_then_result(&r, "2026-07-28 progress");
  lc_resp_free(&r);
  tx_join();
  free(sid);
}
END_TEST

/* The tutorial's case: with the guard on, echo answers as JSON in both
 * eras; so does a call the guarded handler defers; progress first makes
 * an event stream. */
START_TEST(guarded_single_reply_is_json_in_both_eras) {
#ifndef MCP_TEST_GUARD
  ck_abort_msg("built without the guard (MCP_GUARD)");
#endif
  fx_guard = true;
  fx_start(NULL);
  fx_guard = false;
  char *sid = open_session(V, "{}");
  lc_resp r;
  /* A few times: before, whether the worker beat the transport decided. */
  for (int i = 0; i < 5; i++) {
    post(sid, CALL("3", "echo", "{\"text\":\"guarded\"}"), &r);
    expect_json_reply(&r, "2025-11-25 guarded", "guarded");
    lc_resp_free(&r);
    modern("2026-07-28", "tools/call", "echo",
           MODERN_CALL("4", "echo", "{\"text\":\"guarded too\"}"), &r);
    expect_json_reply(&r, "2026-07-28 guarded", "guarded too");
    lc_resp_free(&r);
  }
  lc_req legacy = {
      .body = CALL("5", "park", "{}"), .session = sid, .version = V};
  lc_req stateless = MODERN_Q(MODERN_CALL("6", "park", "{}"), "park");
  const lc_req *qs[] = {&legacy, &stateless};
  for (int i = 0; i < 2; i++) {
    stream *s = stream_open(qs[i]);
    finish_text(unpark(T(5000)), "deferred");
    ck_assert(stream_wait_done(s, T(10000)));
    expect_json_reply(&s->r, i ? "2026-07-28 deferred" : "2025-11-25 deferred",
                      "deferred");
    stream_close(s);
  }
  post(sid, CALL_P("7", "progress", "{}"), &r);
  expect_progress_then_result(&r, "2025-11-25 guarded progress");
  lc_resp_free(&r);
  modern("2026-07-28", "tools/call", "progress", MODERN_PROGRESS, &r);
  expect_progress_then_result(&r, "2026-07-28 guarded progress");
  lc_resp_free(&r);
  free(sid);
}
END_TEST

/* A handler that defers and finishes from another thread, no executor:
 * its one reply is JSON in both eras, and other requests are answered
 * while it waits. */
START_TEST(deferred_single_reply_is_json_in_both_eras) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_req legacy = {
      .body = CALL("5", "park", "{}"), .session = sid, .version = V};
  lc_req stateless = MODERN_Q(MODERN_CALL("6", "park", "{}"), "park");
  const lc_req *qs[] = {&legacy, &stateless};
  for (int i = 0; i < 2; i++) {
    stream *s = stream_open(qs[i]);
    mcp_call *c = unpark(T(5000));
    ck_assert_ptr_nonnull(c);
    expect_ping_ok(sid);
    ck_assert(!stream_done(s));
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, finish_late, c), 0);
    pthread_join(th, NULL);
    ck_assert(stream_wait_done(s, T(10000)));
    expect_json_reply(&s->r, i ? "2026-07-28" : "2025-11-25", "late");
    stream_close(s);
  }
  free(sid);
}
END_TEST

/* A reply awaited for a keep-alive interval becomes an event stream (its
 * keep-alives keep a proxy's read timeout off, and show when the client
 * left): the result comes as an event; a 2026-07-28 client that closes
 * it cancels the call. */
START_TEST(long_wait_becomes_an_event_stream) {
  mcp_http_options o = {.keepalive_s = 1};
  fx_start(&o);
  char *sid = open_session(V, "{}");
  lc_req legacy = {
      .body = CALL("5", "park", "{}"), .session = sid, .version = V};
  lc_req stateless = MODERN_Q(MODERN_CALL("6", "park", "{}"), "park");
  const lc_req *qs[] = {&legacy, &stateless};
  for (int i = 0; i < 2; i++) {
    stream *s = stream_open(qs[i]);
    mcp_call *c = unpark(T(5000));
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(stream_wait_headers(s, T(10000)), 200);
    char v[128];
    ck_assert_ptr_nonnull(stream_header(s, "Content-Type", v, sizeof v));
    ck_assert_msg(strncasecmp(v, "text/event-stream", 17) == 0, "%s", v);
    finish_text(c, "after a while");
    ck_assert(stream_wait(s, "after a while", 1, T(5000)));
    ck_assert(stream_wait_done(s, T(5000)));
    stream_close(s);
  }
  stream *s = stream_open(&stateless);
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  stream_close(s);
  long end = lc_now_ms() + T(8000);
  while (!mcp_call_cancelled(c) && lc_now_ms() < end)
    lc_sleep_ms(50);
  bool cancelled = mcp_call_cancelled(c);
  mcp_call_finish(c, 0);
  ck_assert_msg(cancelled, "the call was not cancelled by the disconnect");
  free(sid);
}
END_TEST

/* A 2025-11-25 request cancelled while it waits gets no reply (the spec's
 * rule for a cancelled request), and its POST is answered with an event
 * stream that ends empty: never 202, which is for notifications. */
START_TEST(cancelled_while_awaited_ends_an_empty_stream) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_req q = {.body = CALL("5", "park", "{}"), .session = sid, .version = V};
  stream *s = stream_open(&q);
  mcp_call *c = unpark(T(5000));
  ck_assert_ptr_nonnull(c);
  lc_resp r;
  post(sid,
       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
       "\"params\":{\"requestId\":5}}",
       &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  ck_assert(mcp_call_cancelled(c));
  finish_text(c, "nobody asked");
  ck_assert(stream_wait_done(s, T(5000)));
  ck_assert_int_eq(s->r.status, 200);
  char type[128];
  ck_assert_str_eq(resp_type(&s->r, type, sizeof type), "text/event-stream");
  sse e = sse_parse(s->r.body.p, s->r.body.n);
  cJSON *m[4];
  int n = sse_messages(&e, m, 4);
  ck_assert_msg(n == 0, "%d messages: %.300s", n, s->r.body.p);
  sse_free(&e);
  stream_close(s);
  expect_ping_ok(sid);
  free(sid);
}
END_TEST

/* mcp_http_stop with requests waiting for their reply ends them, and the
 * calls are cancelled. */
START_TEST(stop_while_replies_are_awaited) {
  fx_start(NULL);
  char *sid = open_session(V, "{}");
  lc_req legacy = {
      .body = CALL("5", "park", "{}"), .session = sid, .version = V};
  lc_req stateless = MODERN_Q(MODERN_CALL("6", "park", "{}"), "park");
  stream *s[2] = {stream_open(&legacy), NULL};
  mcp_call *c[2] = {unpark(T(5000)), NULL};
  s[1] = stream_open(&stateless);
  c[1] = unpark(T(5000));
  ck_assert(c[0] && c[1]);
  mcp_http_stop(F.http);
  F.http = NULL;
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(stream_wait_done(s[i], T(5000)), "request %d still open", i);
    ck_assert(mcp_call_cancelled(c[i]));
    mcp_call_finish(c[i], 0);
    stream_close(s[i]);
  }
  free(sid);
}
END_TEST

/* ===========================================================================
 * The suite: one tcase per ctest test (tests/http/CMakeLists.txt reads the
 * tc(s, "...") names below)
 * ======================================================================== */

static TCase *tc(Suite *s, const char *name) {
  return tu_tcase(s, name, setup, teardown, 120);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
    return EXIT_FAILURE;
  Suite *s = suite_create("http");
  TCase *t = tc(s, "legacy");
  tcase_add_test(t, legacy_initialize_mints_session_id);
  tcase_add_test(t, c2_b1_missing_session_400);
  tcase_add_test(t, c1_f9_unknown_session_404);
  tcase_add_test(t, c3_malformed_session_id_refused);
  tcase_add_test(t, c6_delete_ends_session);
  tcase_add_test(t, session_bound_to_principal);
  tcase_add_test(t, b2_second_initialize_400);
  tcase_add_test(t, b5_unsupported_protocol_version_400);
  tcase_add_test(t, protocol_version_absent_or_any_supported);
  tcase_add_test(t, c13_notification_and_response_202_empty);
  t = tc(s, "session_ids");
  tcase_add_test(t, c4_session_ids_random_and_distinct);
  t = tc(s, "session_limits");
  tcase_add_test(t, idle_session_expires);
  tcase_add_test(t, f8_session_cap_503_retry_after);
  t = tc(s, "framing");
  tcase_add_test(t, a1_malformed_json_400);
  tcase_add_test(t, a2_not_an_object_400);
  tcase_add_test(t, a6_deep_nesting_400);
  tcase_add_test(t, a3_batch_refused_nothing_run);
  tcase_add_test(t, a4_empty_body_400);
  tcase_add_test(t, a5_trailing_garbage_400);
  tcase_add_test(t, a7_duplicate_keys_400);
  t = tc(s, "responses");
  tcase_add_test(t, json_response_for_simple_request);
  tcase_add_test(t, sse_framing_and_headers);
  tcase_add_test(t, sse_priming_event_2025_11_25);
  tcase_add_test(t, progress_on_sse_then_result);
  tcase_add_test(t, c7_get_accept_406_and_disabled_405);
  tcase_add_test(t, c8_post_accept_406);
  tcase_add_test(t, c9_content_type_415_before_dispatch);
  tcase_add_test(t, c14_other_methods_405_with_allow);
  t = tc(s, "streams");
  tcase_add_test(t, get_stream_receives_list_changed);
  tcase_add_test(t, c10_second_get_409);
  tcase_add_test(t, last_event_id_replays_only_that_stream);
  tcase_add_test(t, c11_foreign_or_forged_last_event_id);
  tcase_add_test(t, f11_quiet_stream_keepalive);
  t = tc(s, "calls");
  tcase_add_test(t, elicitation_answered_on_second_post);
  tcase_add_test(t, task_input_reaches_tasks_result_without_get_stream);
  tcase_add_test(t, deferred_call_finished_from_another_thread);
  tcase_add_test(t, guarded_calls_in_both_eras);
  tcase_add_test(t, f18_deferred_call_times_out);
  tcase_add_test(t, f16_rate_limited_over_http);
  tcase_add_test(t, c12_client_disconnects_mid_sse);
  tcase_add_test(t, f10_inflight_cap);
  tcase_add_test(t, parked_elicitations_all_answered);
  tcase_add_test(t, f12_sse_client_never_reads);
  t = tc(s, "modern");
  tcase_add_test(t, modern_stateless_requests);
  tcase_add_test(t, modern_header_mismatch_400_32020);
  tcase_add_test(t, modern_base64_mcp_name);
  tcase_add_test(t, modern_unknown_method_404_32601);
  tcase_add_test(t, modern_unsupported_version_400_32022);
  tcase_add_test(t, modern_missing_capability_400_32021);
  tcase_add_test(t, modern_get_and_delete_405);
  tcase_add_test(t, modern_progress_on_sse);
  tcase_add_test(t, modern_closed_stream_cancels_call);
  tcase_add_test(t, modern_listen_stream);
  tcase_add_test(t, modern_listen_hears_another_server);
  tcase_add_test(t, legacy_session_adopted_by_another_server);
  tcase_add_test(t, modern_param_headers);
  tcase_add_test(t, huge_numeric_ids);
  tcase_add_test(t, legacy_resource_updates_on_get_stream);
  t = tc(s, "one_reply");
  tcase_add_test(t, executor_single_reply_is_json_in_both_eras);
  tcase_add_test(t, guarded_single_reply_is_json_in_both_eras);
  tcase_add_test(t, deferred_single_reply_is_json_in_both_eras);
  tcase_add_test(t, long_wait_becomes_an_event_stream);
  tcase_add_test(t, stop_while_replies_are_awaited);
  tcase_add_test(t, cancelled_while_awaited_ends_an_empty_stream);
  t = tc(s, "mcp_name");
  tcase_add_test(t, modern_mcp_name_refusal_says_the_value);
  t = tc(s, "inherited");
  tcase_add_test(t, serves_an_inherited_socket);
  tcase_add_test(t, node_id_prefixes_session_ids);
  tcase_add_test(t, node_id_checked);
  tcase_add_test(t, inherited_socket_checked);
  tcase_add_test(t, systemd_socket_only_when_passed_to_this_process);
  t = tc(s, "tls");
  tcase_add_test(t, https_serves_both_eras_and_refuses_plain_http);
  tcase_add_test(t, https_certificate_reloaded_without_dropping_connections);
  tcase_add_test(t, https_options_checked_at_start);
  t = tc(s, "tls_versions");
  tcase_add_test(t, https_refuses_tls_1_0_and_1_1_by_default);
  tcase_add_test(t, https_priorities_option_taken);
  tcase_add_test(t, https_bad_priorities_refused_at_start);
  t = tc(s, "origin");
  tcase_add_test(t, d1_foreign_host_403_before_body);
  tcase_add_test(t, d2_d4_foreign_or_null_origin_403);
  tcase_add_test(t, d3_no_origin_allowed);
  tcase_add_test(t, d7_cross_site_without_origin_403);
  tcase_add_test(t, d6_empty_allowlists_fail_closed);
  tcase_add_test(t, d7_missing_host_400);
  tcase_add_test(t, d8_nul_in_host_or_origin);
  tcase_add_test(t, d9_default_bind_loopback);
  tcase_add_test(t, d10_cors_preflight_unlisted_origin);
  t = tc(s, "body_limits");
  tcase_add_test(t, f1_content_length_over_cap_413);
  tcase_add_test(t, f2_chunked_over_cap_closed);
  tcase_add_test(t, f3_huge_header_block_431);
  tcase_add_test(t, f15_ping_and_cancel_flood_bounded);
  t = tc(s, "connections");
  tcase_add_test(t, f4_f6_per_ip_limit_and_slowloris);
  tcase_add_test(t, f7_global_connection_limit);
  tcase_add_test(t, f5_idle_connection_closed);
  t = tc(s, "embed");
  tcase_add_test(t, external_loop_driven_by_poll);
  tcase_add_test(t, start_on_port_in_use_fails_cleanly);
  tcase_add_test(t, the_transports_threads_take_no_signal);
  tcase_add_test(t, h6_thread_creation_fails_cleanly);
  tcase_add_test(t, small_thread_stack_serves);
  tcase_add_test(t, stop_with_open_streams_and_deferred_call);
  t = tc(s, "rss");
  tcase_add_test(t, rss_1000_sessions_then_expired);
  int rc = tu_run(s);
  curl_global_cleanup();
  return rc;
}
