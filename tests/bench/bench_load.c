/* bench_load: the load driver, and the report `make bench` prints.
 *
 *   bench_load [--quick] [--out FILE] [--bin DIR] [SCENARIO...]
 *
 * Scenarios, all of them by default, in this order:
 *   stdio     echo tools/call over pipes, sequential and 64 in flight,
 *             against ceiling (c) (bench_pipe) and ceiling (a)
 *   http      echo over keep-alive connections (1, 16, 64): legacy
 *             sessions and stateless 2026-07-28 requests, against
 *             ceiling (b) (bench_mhd)
 *   list      tools/list of 1,000 and 10,000 tools, one page and
 *             paginated, against the same listing built with cJSON
 *   big       echo of a 1 MiB argument
 *   wide      a tool whose arguments are a 100-field object
 *   sessions  RSS per idle legacy session at 1,000 and 10,000 sessions
 *   idle      server RSS with 100 tools, stdio and HTTP
 *   alloc     heap allocations per echo call (runs bench_alloc)
 *   schema    validation against parsing (runs bench_schema)
 *   jwt       token verification (runs bench_jwt)
 *   guard     a guarded echo call against an unguarded one plus a thread
 *             hand-off (runs bench_guard)
 *   cluster   stateless echo through nginx in front of two servers against
 *             one of them directly (1 and 16 connections): throughput
 *             ratio and added p50; no figures when nginx is not installed
 *   tls       HTTPS against plain HTTP on one server process: calls/s, p50
 *             and handshakes/s (runs bench_tls)
 *   streams   RSS per open stream at 10,000 streams against bare
 *             libmicrohttpd holding as many connections, and the fan-out
 *             of one update to every subscriber (runs bench_streams)
 *
 * Servers are the programs beside this one (or in --bin DIR), started as
 * children (bench_server_stdio for stdio: it links only libmcp, as a
 * stdio-only server does); their CPU time is read from the kernel
 * (clock_getcpuclockid) and their RSS from /proc. The ceilings run in the
 * same invocation:
 *   (a) the same request parsed, and the same result built and printed,
 *       with bare cJSON in this process;
 *   (b) a bare libmicrohttpd server answering a fixed JSON body;
 *   (c) a process answering each line on a pipe with a fixed line.
 * Every reply is checked (its id, and its text or its tools); a wrong or
 * missing reply fails the run and the exit status. The report is a
 * markdown table on standard output, also written to FILE with --out.
 * --quick runs every step with a handful of requests: the smoke test of
 * `make check`, which never compares timings. MCP_TEST_LAUNCHER, when set
 * (valgrind), is put in front of every server started (never in front of
 * nginx, which is not what is measured). */
#define _GNU_SOURCE /* sched_setaffinity: this driver is Linux-only */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_fixed.h"
#include "bench_tools.h"

/* Seconds without any reply after which a run is declared hung. */
#define STALL_S 60
#define MODERN_META                                                            \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define LEGACY_VERSION "2025-11-25"

/* ---- utilities ----------------------------------------------------------- */

static bool quick;
static char bin_dir[4096];
/* The wide tool's schema and arguments (bench_tools.h). */
static char wide_schema[16384], wide_args[8192];
static char **launcher; /* MCP_TEST_LAUNCHER split at spaces, or NULL */
static size_t nlauncher;

static void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_load: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (q == NULL) {
    fail("out of memory");
    exit(EXIT_FAILURE);
  }
  return q;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_s(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return -1;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct dbuf {
  char *p;
  size_t len, cap;
} dbuf;

static void db_reserve(dbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra + 1)
    cap *= 2;
  b->p = xrealloc(b->p, cap);
  b->cap = cap;
}

static void db_put(dbuf *b, const void *p, size_t n) {
  db_reserve(b, n);
  memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void db_printf(dbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void db_printf(dbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  db_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static void db_free(dbuf *b) {
  free(b->p);
  *b = (dbuf){0};
}

/* A watchdog: while a stdio run blocks in read or write, SIGALRM comes
 * every second and interrupts the call (no SA_RESTART), so a hung server
 * fails the run instead of the test timing out. HTTP runs wait in
 * epoll_wait with a timeout instead. progress is bumped by every reply. */
static long progress, progress_seen;
static uint64_t progress_ns;

static void on_alarm(int sig) { (void)sig; }

static void watchdog_start(void) {
  struct sigaction sa = {.sa_handler = on_alarm};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* Starts the clock of stalled() afresh, and the alarm when on (off for
 * anything outside a stdio run, whose calls need not expect EINTR). */
static void watch(bool on) {
  progress_seen = progress;
  progress_ns = now_ns();
  struct itimerval it = {{on, 0}, {on, 0}};
  setitimer(ITIMER_REAL, &it, NULL);
}

/* True when nothing has been answered for STALL_S seconds. */
static bool stalled(void) {
  if (progress != progress_seen) {
    progress_seen = progress;
    progress_ns = now_ns();
    return false;
  }
  return now_ns() - progress_ns > (uint64_t)STALL_S * 1000000000u;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR && !stalled())
      continue;
    if (w < 0) {
      fail("write: %s",
           errno == EINTR ? "the server stopped reading" : strerror(errno));
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* ---- JSON spans ------------------------------------------------------------
 * Replies are checked by walking their text, not by parsing them into a
 * tree, so that the client stays far cheaper than the server it measures.
 * A span is [p, e). */

static const char *ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* p at '"'; returns just past the closing quote. */
static const char *skip_string(const char *p, const char *e) {
  for (p++; p < e;) {
    const char *q = memchr(p, '"', (size_t)(e - p));
    if (q == NULL)
      return NULL;
    size_t bs = 0;
    while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
      bs++;
    if (bs % 2 == 0)
      return q + 1;
    p = q + 1;
  }
  return NULL;
}

static const char *skip_value(const char *p, const char *e) {
  p = ws(p, e);
  if (p >= e)
    return NULL;
  if (*p == '"')
    return skip_string(p, e);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < e) {
      char ch = *p;
      if (ch == '"') {
        if ((p = skip_string(p, e)) == NULL)
          return NULL;
        continue;
      }
      if (ch == '{' || ch == '[')
        depth++;
      else if ((ch == '}' || ch == ']') && --depth == 0)
        return p + 1;
      p++;
    }
    return NULL;
  }
  const char *s = p;
  while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' &&
         *p != '\n')
    p++;
  return p > s ? p : NULL;
}

/* Finds key in the object at [p, e); sets the value's span. */
static bool member(const char *p, const char *e, const char *key,
                   const char **vp, const char **ve) {
  p = ws(p, e);
  if (p >= e || *p != '{')
    return false;
  size_t klen = strlen(key);
  p++;
  for (;;) {
    p = ws(p, e);
    if (p >= e || *p != '"')
      return false;
    const char *ks = p + 1, *kend = skip_string(p, e);
    if (kend == NULL)
      return false;
    bool match = (size_t)(kend - 1 - ks) == klen && memcmp(ks, key, klen) == 0;
    p = ws(kend, e);
    if (p >= e || *p != ':')
      return false;
    p = ws(p + 1, e);
    const char *vend = skip_value(p, e);
    if (vend == NULL)
      return false;
    if (match) {
      *vp = p;
      *ve = vend;
      return true;
    }
    p = ws(vend, e);
    if (p >= e || *p != ',')
      return false;
    p++;
  }
}

/* The first element of the array at [p, e). */
static bool first_element(const char *p, const char *e, const char **vp,
                          const char **ve) {
  p = ws(p, e);
  if (p >= e || *p != '[')
    return false;
  p = ws(p + 1, e);
  *vp = p;
  *ve = skip_value(p, e);
  return *ve != NULL && *p != ']';
}

static bool span_is(const char *p, const char *e, const char *text,
                    size_t len) {
  return (size_t)(e - p) == len && memcmp(p, text, len) == 0;
}

/* The reply's id is the integer want; it has a result and no error. Sets
 * the result's span. One pass over the top-level members: a listing's
 * result is skipped once, not once per member looked for. */
static bool reply_envelope(const char *p, const char *e, long want,
                           const char **rp, const char **re) {
  char id[32];
  int idlen = snprintf(id, sizeof id, "%ld", want);
  bool id_ok = false, result = false;
  p = ws(p, e);
  if (p >= e || *p != '{')
    return false;
  for (p++;;) {
    p = ws(p, e);
    if (p >= e || *p != '"')
      return false;
    const char *ks = p + 1, *kend = skip_string(p, e);
    if (kend == NULL)
      return false;
    p = ws(kend, e);
    if (p >= e || *p != ':')
      return false;
    p = ws(p + 1, e);
    const char *vend = skip_value(p, e);
    if (vend == NULL)
      return false;
    size_t klen = (size_t)(kend - 1 - ks);
    if (klen == 2 && memcmp(ks, "id", 2) == 0) {
      id_ok = span_is(p, vend, id, (size_t)idlen);
    } else if (klen == 6 && memcmp(ks, "result", 6) == 0) {
      *rp = p;
      *re = vend;
      result = true;
    } else if (klen == 5 && memcmp(ks, "error", 5) == 0) {
      return false;
    }
    p = ws(vend, e);
    if (p < e && *p == '}')
      return id_ok && result;
    if (p >= e || *p != ',')
      return false;
    p++;
  }
}

/* The result's first content block is a text block saying text (len bytes
 * of JSON string contents), and it is not an error. */
static bool result_text(const char *rp, const char *re, const char *text,
                        size_t len) {
  const char *cp, *ce, *bp, *be, *tp, *te;
  if (member(rp, re, "isError", &tp, &te) && span_is(tp, te, "true", 4))
    return false;
  return member(rp, re, "content", &cp, &ce) &&
         first_element(cp, ce, &bp, &be) && member(bp, be, "text", &tp, &te) &&
         te - tp >= 2 && span_is(tp + 1, te - 1, text, len);
}

/* ---- workloads ----------------------------------------------------------- */

typedef enum kind {
  K_FIXED, /* ceilings (b) and (c): any request, the fixed reply */
  K_ECHO,  /* echo "hello <id>" */
  K_WIDE,  /* wide with the 100-field object */
  K_BIG,   /* echo of the 1 MiB text */
  K_LIST   /* a whole tools/list, following nextCursor */
} kind;

/* One page of a listing, as first seen and checked in full; later pages
 * must be the same bytes. */
typedef struct page {
  char *result;
  size_t len;
  char cursor[64]; /* nextCursor, "" on the last page */
} page;

typedef struct workload {
  kind k;
  bool modern;
  const char *big; /* K_BIG: the text, without quotes or escapes */
  size_t big_len;
  const char *wide_args; /* K_WIDE: the arguments object */
  unsigned ntools;       /* K_LIST: tools expected in all */
  page *pages;           /* K_LIST: filled by the first listing */
  size_t npages;
  unsigned char *seen; /* K_LIST: names seen in the first listing */
  size_t nseen;
} workload;

static void workload_free(workload *w) {
  for (size_t i = 0; i < w->npages; i++)
    free(w->pages[i].result);
  free(w->pages);
  free(w->seen);
  w->pages = NULL;
  w->seen = NULL;
  w->npages = w->nseen = 0;
}

/* Appends the request of op with this id, page (of a listing) and cursor,
 * without the newline. */
static void make_request(const workload *w, long id, const char *cursor,
                         dbuf *out) {
  const char *meta = w->modern ? "," MODERN_META : "";
  switch (w->k) {
  case K_FIXED:
  case K_ECHO:
    db_printf(out,
              "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
              "\"hello %ld\"}%s}}",
              id, id, meta);
    break;
  case K_WIDE:
    db_printf(out,
              "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"wide\",\"arguments\":%s%s}}",
              id, w->wide_args, meta);
    break;
  case K_BIG:
    db_printf(out,
              "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"",
              id);
    db_put(out, w->big, w->big_len);
    db_printf(out, "\"}%s}}", meta);
    break;
  case K_LIST:
    if (cursor && *cursor)
      db_printf(out,
                "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/list\","
                "\"params\":{\"cursor\":\"%s\"%s}}",
                id, cursor, meta);
    else
      db_printf(out,
                "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/list\","
                "\"params\":{%s}}",
                id, w->modern ? MODERN_META : "");
    break;
  }
}

/* The index a tool name stands for in a listing: echo 0, wide 1,
 * tool_%05u 2 + u; -1 for anything else. */
static long tool_index(const char *name, unsigned ntools) {
  if (strcmp(name, "echo") == 0)
    return 0;
  if (strcmp(name, "wide") == 0)
    return 1;
  char *end;
  if (strncmp(name, "tool_", 5) != 0 || strlen(name) != 10)
    return -1;
  long i = strtol(name + 5, &end, 10);
  return *end == '\0' && i >= 0 && i + BENCH_BUILTIN_TOOLS < (long)ntools
             ? i + BENCH_BUILTIN_TOOLS
             : -1;
}

/* Checks page number pageno of a listing: in full (with cJSON) the first
 * time, by comparing bytes afterwards. Copies its nextCursor (or "") to
 * cursor. */
static bool check_page(workload *w, size_t pageno, const char *rp,
                       const char *re, char *cursor, size_t cursor_size) {
  if (pageno < w->npages) {
    page *pg = &w->pages[pageno];
    if (!span_is(rp, re, pg->result, pg->len))
      return false;
    snprintf(cursor, cursor_size, "%s", pg->cursor);
    return true;
  }
  if (pageno != w->npages || pageno > w->ntools)
    return false;
  if (w->seen == NULL) {
    w->seen = calloc(w->ntools ? w->ntools : 1, 1);
    w->nseen = 0;
  }
  cJSON *res = cJSON_ParseWithLength(rp, (size_t)(re - rp));
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(res, "tools");
  const cJSON *next = cJSON_GetObjectItemCaseSensitive(res, "nextCursor");
  bool ok = cJSON_IsArray(tools) && (next == NULL || cJSON_IsString(next));
  const cJSON *t;
  cJSON_ArrayForEach(t, tools) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(t, "annotations");
    long i =
        cJSON_IsString(name) ? tool_index(name->valuestring, w->ntools) : -1;
    if (i < 0 || w->seen[i] || !cJSON_IsObject(ann) ||
        !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(ann, "readOnlyHint")) ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t, "inputSchema"))) {
      ok = false;
      break;
    }
    w->seen[i] = 1;
    w->nseen++;
  }
  if (ok && next == NULL && w->nseen != w->ntools)
    ok = false; /* the last page, and tools are missing */
  if (ok && next && strlen(next->valuestring) >= sizeof w->pages->cursor)
    ok = false;
  if (ok) {
    w->pages = xrealloc(w->pages, (w->npages + 1) * sizeof *w->pages);
    page *pg = &w->pages[w->npages++];
    pg->len = (size_t)(re - rp);
    pg->result = xrealloc(NULL, pg->len);
    memcpy(pg->result, rp, pg->len);
    snprintf(pg->cursor, sizeof pg->cursor, "%s",
             next ? next->valuestring : "");
    snprintf(cursor, cursor_size, "%s", pg->cursor);
  }
  cJSON_Delete(res);
  return ok;
}

/* Checks the reply (len bytes, no newline) to request id, page pageno of
 * its op. Returns 1 when the op is done, 0 when a next page must be asked
 * for (its cursor in cursor), -1 when the reply is wrong. */
static int check_reply(workload *w, long id, size_t pageno, const char *p,
                       size_t len, char *cursor, size_t cursor_size) {
  const char *e = p + len, *rp, *re;
  char text[64];
  /* The fixed reply is checked as what it is, the echo reply to id 1, with
   * the same walk as a real one: the driver's own work per reply is then
   * the same against a ceiling as against the library. */
  if (w->k == K_FIXED) {
    if (!span_is(p, e, BENCH_FIXED_BODY, strlen(BENCH_FIXED_BODY)))
      return -1;
    id = 1;
  }
  if (!reply_envelope(p, e, id, &rp, &re))
    return -1;
  switch (w->k) {
  case K_FIXED:
  case K_ECHO: {
    int n = snprintf(text, sizeof text, "hello %ld", id);
    return result_text(rp, re, text, (size_t)n) ? 1 : -1;
  }
  case K_WIDE:
    return result_text(rp, re, "got 100 fields", 14) ? 1 : -1;
  case K_BIG:
    return result_text(rp, re, w->big, w->big_len) ? 1 : -1;
  case K_LIST:
    if (!check_page(w, pageno, rp, re, cursor, cursor_size))
      return -1;
    return *cursor ? 0 : 1;
  default:
    return -1;
  }
}

/* ---- statistics ---------------------------------------------------------- */

typedef struct stats {
  long ops;
  double secs, server_cpu, client_cpu;
  uint32_t *lat; /* ns per op, saturated */
  size_t nlat, cap;
  long rss_kb;
  /* Derived by stats_finish. */
  double rate, p50_us, p99_us, server_us, client_us;
} stats;

static void stats_record(stats *st, uint64_t ns) {
  if (st->nlat == st->cap) {
    st->cap = st->cap ? st->cap * 2 : 4096;
    st->lat = xrealloc(st->lat, st->cap * sizeof *st->lat);
  }
  st->lat[st->nlat++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void stats_finish(stats *st) {
  st->rate = st->secs > 0 ? (double)st->ops / st->secs : 0;
  st->server_us = st->ops ? st->server_cpu / (double)st->ops * 1e6 : 0;
  st->client_us = st->ops ? st->client_cpu / (double)st->ops * 1e6 : 0;
  if (st->nlat) {
    qsort(st->lat, st->nlat, sizeof *st->lat, cmp_u32);
    st->p50_us = st->lat[st->nlat / 2] / 1e3;
    size_t i99 = (size_t)((double)st->nlat * 0.99);
    st->p99_us = st->lat[i99 < st->nlat ? i99 : st->nlat - 1] / 1e3;
  }
  free(st->lat);
  st->lat = NULL;
  st->nlat = st->cap = 0;
}

/* ---- children ------------------------------------------------------------ */

typedef struct proc {
  pid_t pid;
  int to, from; /* stdio servers: their standard input and output */
  int err;      /* HTTP servers: their standard error */
  unsigned port;
  clockid_t clock;
  dbuf in;       /* bytes read from `from` */
  size_t in_off; /* of which this many are handled */
} proc;

/* A field of /proc/PID/status in KiB ("VmRSS:", "RssAnon:"), or -1. */
static long status_kb(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0)
      kb = atol(line + n);
  if (f)
    fclose(f);
  return kb;
}

static long rss_kb(pid_t pid) { return status_kb(pid, "VmRSS:"); }

static void cloexec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

/* The CPUs this driver may use, as it started. */
static cpu_set_t all_cpus;

/* Where a run puts the driver and its server. Only sequential runs are
 * placed: spreading the two over fixed CPUs measured worse and noisier on
 * a shared virtual machine (a busy CPU delays every wake-up by
 * milliseconds) than leaving the scheduler free. */
typedef enum place {
  ANYWHERE, /* wherever the scheduler likes */
  SHARED    /* both on one CPU: a round trip costs the CPU time of both
               sides and two context switches, not the time a virtual
               machine takes to wake an idle CPU, which varies tenfold
               from run to run */
} place;

/* Sets the CPUs of every thread of process pid (0: this one). */
static void pin_process(pid_t pid, const cpu_set_t *set) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/task", (long)(pid ? pid : getpid()));
  DIR *d = opendir(path);
  for (struct dirent *t; d && (t = readdir(d));)
    if (t->d_name[0] != '.')
      sched_setaffinity((pid_t)atol(t->d_name), sizeof *set, set);
  if (d)
    closedir(d);
}

/* Places this driver and server for a run (ANYWHERE undoes it). With a
 * single CPU there is nothing to place. */
static void put(pid_t server, place where) {
  cpu_set_t set = all_cpus;
  if (where == SHARED) {
    int last = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
      if (CPU_ISSET(i, &all_cpus))
        last = i;
    CPU_ZERO(&set);
    CPU_SET(last, &set);
  }
  pin_process(0, &set);
  pin_process(server, &set);
}

/* Starts bin_dir/name with args (NULL-terminated). A stdio server gets
 * pipes on standard input and output; an HTTP one (http true) gets its
 * standard error read until it says where it listens. */
static int proc_start(proc *p, const char *name, const char *const *args,
                      bool http) {
  *p = (proc){.pid = -1, .to = -1, .from = -1, .err = -1};
  char path[4352];
  snprintf(path, sizeof path, "%s/%s", bin_dir, name);
  size_t nargs = 0;
  while (args && args[nargs])
    nargs++;
  char **argv = xrealloc(NULL, (nlauncher + nargs + 2) * sizeof *argv);
  size_t n = 0;
  for (size_t i = 0; i < nlauncher; i++)
    argv[n++] = launcher[i];
  argv[n++] = path;
  for (size_t i = 0; i < nargs; i++)
    argv[n++] = (char *)args[i];
  argv[n] = NULL;
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if ((!http && (pipe(in) != 0 || pipe(out) != 0)) ||
      (http && pipe(err) != 0)) {
    fail("pipe: %s", strerror(errno));
    free(argv);
    return -1;
  }
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0)
      cloexec(in[i]);
    if (out[i] >= 0)
      cloexec(out[i]);
    if (err[i] >= 0)
      cloexec(err[i]);
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (http) {
      int null = open("/dev/null", O_RDONLY);
      dup2(null, STDIN_FILENO);
      dup2(err[1], STDERR_FILENO);
    } else {
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
    }
    execvp(argv[0], argv);
    fprintf(stderr, "bench_load: cannot run %s: %s\n", argv[0],
            strerror(errno));
    _exit(127);
  }
  free(argv);
  if (pid < 0) {
    fail("fork: %s", strerror(errno));
    return -1;
  }
  p->pid = pid;
  if (http) {
    close(err[1]);
    p->err = err[0];
  } else {
    close(in[0]);
    close(out[1]);
    p->to = in[1];
    p->from = out[0];
  }
  if (clock_getcpuclockid(pid, &p->clock) != 0) {
    fail("no CPU clock for process %ld", (long)pid);
    return -1;
  }
  if (!http)
    return 0;
  /* Read standard error until "listening on http://ADDR:PORT/mcp". */
  dbuf text = {0};
  uint64_t deadline = now_ns() + (uint64_t)STALL_S * 1000000000u;
  while (now_ns() < deadline) {
    struct pollfd pfd = {.fd = p->err, .events = POLLIN};
    if (poll(&pfd, 1, 1000) <= 0)
      continue;
    char chunk[512];
    ssize_t r = read(p->err, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    db_put(&text, chunk, (size_t)r);
    const char *at = strstr(text.p, "listening on http://");
    const char *eol = at ? strchr(at, '\n') : NULL;
    if (eol) {
      const char *mcp = strstr(at, "/mcp");
      const char *colon = mcp;
      while (colon && colon > at && *colon != ':')
        colon--;
      p->port = colon ? (unsigned)atoi(colon + 1) : 0;
      /* Whatever came before the line is the server's to say. */
      fwrite(text.p, 1, (size_t)(at - text.p), stderr);
      db_free(&text);
      return p->port ? 0 : -1;
    }
  }
  fail("%s did not say where it listens%s%s", name, text.len ? ": " : "",
       text.len ? text.p : "");
  db_free(&text);
  return -1;
}

/* Stops a child: end of input for a stdio server, SIGTERM for an HTTP one.
 * Returns 0 when it exited with status 0 (a launcher such as valgrind
 * exits non-zero when it found errors). */
static int proc_stop(proc *p) {
  if (p->pid <= 0)
    return 0;
  if (p->to >= 0)
    close(p->to);
  else
    kill(p->pid, SIGTERM);
  int status = 0, rc = -1;
  for (int i = 0; i < STALL_S * 100; i++) {
    if (p->err >= 0) {
      char chunk[4096];
      struct pollfd pfd = {.fd = p->err, .events = POLLIN};
      while (poll(&pfd, 1, 0) > 0) {
        ssize_t r = read(p->err, chunk, sizeof chunk);
        if (r <= 0)
          break;
        fwrite(chunk, 1, (size_t)r, stderr);
      }
    }
    pid_t w = waitpid(p->pid, &status, WNOHANG);
    if (w == p->pid) {
      rc = 0;
      break;
    }
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  if (rc != 0) {
    fail("process %ld did not exit; killing it", (long)p->pid);
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &status, 0);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("process %ld ended with %s %d", (long)p->pid,
         WIFEXITED(status) ? "status" : "signal",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    rc = -1;
  }
  if (p->from >= 0)
    close(p->from);
  if (p->err >= 0)
    close(p->err);
  db_free(&p->in);
  p->pid = -1;
  return rc;
}

/* ---- the stdio driver ---------------------------------------------------- */

/* One op in flight: a call, or a listing that may take several pages. */
typedef struct slot {
  bool busy, send; /* in flight; its next request is due */
  long id;         /* of the request in flight */
  size_t page;
  uint64_t t0;
  char cursor[64];
} slot;

/* Reads one reply line from p (blocking); sets its span, valid until the
 * next call. */
static int read_line(proc *p, const char **line, size_t *len) {
  size_t scanned = p->in_off;
  for (;;) {
    char *nl = p->in.len > scanned
                   ? memchr(p->in.p + scanned, '\n', p->in.len - scanned)
                   : NULL;
    if (nl) {
      *line = p->in.p + p->in_off;
      *len = (size_t)(nl - *line);
      p->in_off += *len + 1;
      return 0;
    }
    /* Keep only the partial line before reading more. */
    if (p->in_off) {
      memmove(p->in.p, p->in.p + p->in_off, p->in.len - p->in_off);
      p->in.len -= p->in_off;
      p->in_off = 0;
    }
    scanned = p->in.len;
    db_reserve(&p->in, 65536);
    ssize_t r = read(p->from, p->in.p + p->in.len, p->in.cap - p->in.len - 1);
    if (r < 0 && errno == EINTR && !stalled())
      continue;
    if (r <= 0) {
      fail("no reply: %s", r == 0           ? "the server closed its output"
                           : errno == EINTR ? "no reply for a minute"
                                            : strerror(errno));
      return -1;
    }
    p->in.len += (size_t)r;
  }
}

/* Reads one reply and checks it against the op it answers. Returns 1 when
 * that op is done, 0 when it needs its next page, -1 for a wrong or
 * missing reply. */
static int take_reply(proc *p, workload *w, slot *slots, int depth, stats *st) {
  const char *line;
  size_t len;
  if (read_line(p, &line, &len) != 0)
    return -1;
  progress++;
  /* Replies come in order on stdio, but find them by id anyway. */
  long id = -1;
  const char *ip, *ie;
  if (member(line, line + len, "id", &ip, &ie))
    id = strtol(ip, NULL, 10);
  slot *s = NULL;
  for (int i = 0; i < depth && s == NULL; i++)
    if (slots[i].busy && !slots[i].send &&
        (w->k == K_FIXED || slots[i].id == id))
      s = &slots[i];
  int verdict =
      s ? check_reply(w, s->id, s->page, line, len, s->cursor, sizeof s->cursor)
        : -1;
  if (verdict < 0) {
    fail("wrong reply%s: %.300s%s", s ? "" : " (unknown id)", line,
         len > 300 ? "..." : "");
    return -1;
  }
  if (verdict == 0) {
    s->page++;
    s->send = true;
    return 0;
  }
  if (st)
    stats_record(st, now_ns() - s->t0);
  s->busy = false;
  return 1;
}

/* The loop of run_stdio. */
static int stdio_ops(proc *p, workload *w, int depth, long count,
                     double seconds, long *next_id, stats *st) {
  slot slots[64] = {{0}};
  if (depth < 1 || depth > 64)
    return -1;
  dbuf out = {0};
  long started = 0, inflight = 0, done = 0;
  double cpu0 = cpu_s(p->clock), self0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t t_start = now_ns(), limit = (uint64_t)(seconds * 1e9);
  int rc = 0;
  for (;;) {
    out.len = 0;
    for (int i = 0; i < depth; i++) {
      slot *s = &slots[i];
      if (!s->busy) {
        if (started >= count || now_ns() - t_start >= limit)
          continue;
        *s = (slot){.busy = true, .send = true, .t0 = now_ns()};
        started++;
        inflight++;
      }
      if (s->send) {
        s->id = (*next_id)++;
        s->send = false;
        make_request(w, s->id, s->cursor, &out);
        db_put(&out, "\n", 1);
      }
    }
    if (out.len && write_all(p->to, out.p, out.len) != 0) {
      rc = -1;
      break;
    }
    if (inflight == 0)
      break;
    /* Every reply already here is handled before the window is refilled,
     * so one write carries the requests of several replies, as a real
     * pipelining client does. */
    bool more = true;
    while (rc == 0 && more) {
      rc = take_reply(p, w, slots, depth, st);
      if (rc == 1) {
        inflight--;
        done++;
        rc = 0;
      }
      more = p->in.len > p->in_off &&
             memchr(p->in.p + p->in_off, '\n', p->in.len - p->in_off) != NULL;
    }
    if (rc != 0)
      break;
  }
  db_free(&out);
  if (st) {
    st->ops = done;
    st->secs = (double)(now_ns() - t_start) / 1e9;
    st->server_cpu = cpu_s(p->clock) - cpu0;
    st->client_cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - self0;
    st->rss_kb = rss_kb(p->pid);
  }
  return rc;
}

/* Runs ops over p, depth of them in flight, until count ops have started
 * or seconds have passed; then waits for those in flight. With st NULL it
 * only warms up. Returns 0, or -1 after a wrong or missing reply. */
static int run_stdio(proc *p, workload *w, int depth, long count,
                     double seconds, long *next_id, stats *st) {
  watch(true);
  int rc = stdio_ops(p, w, depth, count, seconds, next_id, st);
  watch(false);
  return rc;
}

static int handshake(proc *p, long *next_id) {
  char msg[512];
  long id = (*next_id)++;
  int n = snprintf(msg, sizeof msg,
                   "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"" LEGACY_VERSION
                   "\",\"capabilities\":{},\"clientInfo\":{\"name\":"
                   "\"bench_load\",\"version\":\"1\"}}}\n",
                   id);
  if (write_all(p->to, msg, (size_t)n) != 0)
    return -1;
  size_t len;
  const char *line, *rp, *re, *vp, *ve;
  if (read_line(p, &line, &len) != 0)
    return -1;
  bool ok = reply_envelope(line, line + len, id, &rp, &re) &&
            member(rp, re, "protocolVersion", &vp, &ve) &&
            span_is(vp, ve, "\"" LEGACY_VERSION "\"", 12);
  if (!ok)
    fail("initialize failed: %.*s", (int)len, line);
  static const char note[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  return ok ? write_all(p->to, note, sizeof note - 1) : -1;
}

/* initialize and notifications/initialized on a stdio server. */
static int stdio_handshake(proc *p, long *next_id) {
  watch(true);
  int rc = handshake(p, next_id);
  watch(false);
  return rc;
}

/* ---- the HTTP driver ------------------------------------------------------
 * A minimal HTTP/1.1 client on raw non-blocking sockets and epoll, one
 * thread, one request in flight per keep-alive connection. */

typedef enum hmode {
  H_FIXED,   /* ceiling (b): any POST, the fixed body */
  H_LEGACY,  /* initialize once per connection, then calls in the session */
  H_MODERN,  /* stateless 2026-07-28 calls */
  H_SESSIONS /* initialize + notifications/initialized, over and over */
} hmode;

typedef enum hstep { S_NONE, S_INIT, S_NOTIFY, S_CALL, S_PING } hstep;

typedef struct conn {
  int fd;
  bool ready; /* H_LEGACY: its session is initialized */
  char sid[160];
  dbuf in;
  dbuf out;
  size_t out_off;
  hstep step; /* the request in flight */
  long id;
  uint64_t t0;
} conn;

typedef struct client {
  unsigned port;
  int epfd;
  conn *c;
  int n;
  char **sids; /* H_SESSIONS: every session made */
  size_t nsids;
} client;

static int client_open(client *cl, unsigned port, int n) {
  *cl = (client){.port = port, .n = n};
  cl->c = xrealloc(NULL, (size_t)n * sizeof *cl->c);
  for (int i = 0; i < n; i++)
    cl->c[i] = (conn){.fd = -1};
  if ((cl->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
    return -1;
  for (int i = 0; i < n; i++) {
    conn *c = &cl->c[i];
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (c->fd < 0 ||
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
      fail("connect to port %u: %s", port, strerror(errno));
      return -1;
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(cl->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
      return -1;
  }
  return 0;
}

static void client_close(client *cl) {
  for (int i = 0; cl->c && i < cl->n; i++) {
    if (cl->c[i].fd >= 0)
      close(cl->c[i].fd);
    db_free(&cl->c[i].in);
    db_free(&cl->c[i].out);
  }
  free(cl->c);
  for (size_t i = 0; i < cl->nsids; i++)
    free(cl->sids[i]);
  free(cl->sids);
  if (cl->epfd >= 0)
    close(cl->epfd);
  *cl = (client){.epfd = -1};
}

/* Queues one POST on c and writes what the socket takes. */
static int http_send(client *cl, conn *c, hmode mode, hstep step, long id) {
  dbuf body = {0};
  const workload echo = {.k = K_ECHO, .modern = mode == H_MODERN};
  switch (step) {
  case S_INIT:
    db_printf(&body,
              "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"" LEGACY_VERSION
              "\",\"capabilities\":{},\"clientInfo\":{\"name\":"
              "\"bench_load\",\"version\":\"1\"}}}",
              id);
    break;
  case S_NOTIFY:
    db_printf(&body,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    break;
  case S_PING:
    db_printf(&body, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"ping\"}",
              id);
    break;
  default:
    make_request(&echo, id, NULL, &body);
    break;
  }
  c->out.len = c->out_off = 0;
  db_printf(&c->out,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: "
            "application/json\r\nAccept: application/json, "
            "text/event-stream\r\n",
            cl->port);
  if (mode == H_MODERN)
    db_printf(&c->out, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: "
                       "tools/call\r\nMcp-Name: echo\r\n");
  else if (step != S_INIT && mode != H_FIXED)
    db_printf(&c->out,
              "MCP-Protocol-Version: " LEGACY_VERSION
              "\r\nMcp-Session-Id: %s\r\n",
              c->sid);
  db_printf(&c->out, "Content-Length: %zu\r\n\r\n", body.len);
  db_put(&c->out, body.p, body.len);
  db_free(&body);
  c->step = step;
  c->id = id;
  c->t0 = now_ns();
  while (c->out_off < c->out.len) {
    ssize_t w = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                     MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
                               .data.u32 = (uint32_t)(c - cl->c)};
      return epoll_ctl(cl->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
    if (w < 0) {
      fail("send: %s", strerror(errno));
      return -1;
    }
    c->out_off += (size_t)w;
  }
  return 0;
}

static int http_flush(client *cl, conn *c) {
  while (c->out_off < c->out.len) {
    ssize_t w = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                     MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (w < 0 && errno != EINTR) {
      fail("send: %s", strerror(errno));
      return -1;
    }
    if (w > 0)
      c->out_off += (size_t)w;
  }
  struct epoll_event ev = {.events = EPOLLIN,
                           .data.u32 = (uint32_t)(c - cl->c)};
  return epoll_ctl(cl->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* A whole response at the front of in: its status, body and
 * Mcp-Session-Id. Returns its length, 0 when incomplete, -1 when it cannot
 * be read (or is not a plain Content-Length response). */
static long http_parse(const dbuf *in, int *status, const char **body,
                       size_t *body_len, char *sid, size_t sid_size) {
  const char *p = in->p, *e = in->p + in->len;
  if (in->len < 12)
    return 0;
  const char *end = NULL;
  for (const char *q = p; q + 3 < e; q++) {
    q = memchr(q, '\r', (size_t)(e - q));
    if (q == NULL || q + 3 >= e)
      break;
    if (q[1] == '\n' && q[2] == '\r' && q[3] == '\n') {
      end = q + 4;
      break;
    }
  }
  if (end == NULL)
    return 0;
  if (strncmp(p, "HTTP/1.1 ", 9) != 0)
    return -1;
  *status = atoi(p + 9);
  long length = -1;
  if (sid)
    *sid = '\0';
  for (const char *line = strstr(p, "\r\n") + 2; line < end - 2;) {
    const char *eol = strstr(line, "\r\n");
    size_t n = (size_t)(eol - line);
    if (n > 15 && strncasecmp(line, "Content-Length:", 15) == 0)
      length = atol(line + 15);
    else if (n > 18 && strncasecmp(line, "Transfer-Encoding:", 18) == 0)
      return -1; /* an event stream: not what these requests expect */
    else if (sid && n > 15 && strncasecmp(line, "Mcp-Session-Id:", 15) == 0) {
      const char *v = ws(line + 15, eol);
      snprintf(sid, sid_size, "%.*s", (int)(eol - v), v);
    }
    line = eol + 2;
  }
  if (length < 0)
    return -1;
  if ((size_t)(e - end) < (size_t)length)
    return 0;
  *body = end;
  *body_len = (size_t)length;
  return (long)(end - p) + length;
}

typedef struct hrun {
  hmode mode;
  long count, started, inflight, done;
  uint64_t t_start, limit;
  stats *st;
  long *next_id;
} hrun;

/* Gives an idle connection its next request, if the run goes on. */
static int http_next(client *cl, conn *c, hrun *r) {
  bool more = r->started < r->count && now_ns() - r->t_start < r->limit;
  if (r->mode == H_LEGACY && !c->ready) {
    if (!more)
      return 0;
    r->inflight++;
    return http_send(cl, c, r->mode, *c->sid ? S_NOTIFY : S_INIT,
                     (*r->next_id)++);
  }
  if (!more)
    return 0;
  r->started++;
  r->inflight++;
  return http_send(cl, c, r->mode, r->mode == H_SESSIONS ? S_INIT : S_CALL,
                   (*r->next_id)++);
}

/* Handles the response to c's request. Returns 0, or -1 when it is wrong. */
static int http_answer(client *cl, conn *c, hrun *r, int status,
                       const char *body, size_t len, const char *sid) {
  const char *e = body + len, *rp, *re;
  hstep step = c->step;
  c->step = S_NONE;
  r->inflight--;
  progress++;
  switch (step) {
  case S_INIT:
    if (status != 200 || !*sid || !reply_envelope(body, e, c->id, &rp, &re))
      goto wrong;
    snprintf(c->sid, sizeof c->sid, "%s", sid);
    r->inflight++;
    return http_send(cl, c, r->mode, S_NOTIFY, 0);
  case S_NOTIFY:
    if (status != 202)
      goto wrong;
    if (r->mode == H_LEGACY) {
      c->ready = true;
      return 0;
    }
    /* H_SESSIONS: a session is made; keep its id for the check. */
    cl->sids = xrealloc(cl->sids, (cl->nsids + 1) * sizeof *cl->sids);
    cl->sids[cl->nsids] = xrealloc(NULL, strlen(c->sid) + 1);
    strcpy(cl->sids[cl->nsids++], c->sid);
    *c->sid = '\0';
    break;
  case S_CALL: {
    workload w = {.k = r->mode == H_FIXED ? K_FIXED : K_ECHO};
    if (status != 200 || check_reply(&w, c->id, 0, body, len, NULL, 0) != 1)
      goto wrong;
    break;
  }
  default:
    goto wrong;
  }
  r->done++;
  if (r->st)
    stats_record(r->st, now_ns() - c->t0);
  return 0;
wrong:
  fail("wrong HTTP answer (status %d) to a %s: %.300s", status,
       step == S_INIT     ? "initialize"
       : step == S_NOTIFY ? "notifications/initialized"
                          : "tools/call",
       body);
  return -1;
}

/* Runs count ops (or for seconds) over every connection of cl. With st
 * NULL it only warms up (and initializes legacy sessions). */
static int run_http(client *cl, proc *server, hmode mode, long count,
                    double seconds, long *next_id, stats *st) {
  hrun r = {.mode = mode,
            .count = count,
            .t_start = now_ns(),
            .limit = (uint64_t)(seconds * 1e9),
            .st = st,
            .next_id = next_id};
  double cpu0 = cpu_s(server->clock), self0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
  int rc = 0;
  watch(false);
  for (int i = 0; i < cl->n && rc == 0; i++)
    rc = http_next(cl, &cl->c[i], &r);
  struct epoll_event evs[64];
  while (rc == 0 && r.inflight > 0) {
    int n = epoll_wait(cl->epfd, evs, 64, 1000);
    if (n < 0 && errno != EINTR) {
      fail("epoll_wait: %s", strerror(errno));
      rc = -1;
      break;
    }
    if (n <= 0) {
      if (stalled()) {
        fail("no HTTP answer for a minute");
        rc = -1;
      }
      continue;
    }
    for (int k = 0; k < n && rc == 0; k++) {
      conn *c = &cl->c[evs[k].data.u32];
      if ((evs[k].events & EPOLLOUT) && http_flush(cl, c) != 0) {
        rc = -1;
        break;
      }
      for (;;) {
        db_reserve(&c->in, 16384);
        size_t room = c->in.cap - c->in.len - 1;
        ssize_t got = recv(c->fd, c->in.p + c->in.len, room, 0);
        if (got < 0 && errno == EINTR)
          continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
          break;
        if (got <= 0) {
          fail("the server closed a connection%s%s", got ? ": " : "",
               got ? strerror(errno) : "");
          rc = -1;
          break;
        }
        c->in.len += (size_t)got;
        c->in.p[c->in.len] = '\0';
        if ((size_t)got < room)
          break; /* the socket is drained */
      }
      while (rc == 0 && c->step != S_NONE) {
        int status;
        const char *body;
        size_t len;
        char sid[160];
        long used = http_parse(&c->in, &status, &body, &len, sid, sizeof sid);
        if (used == 0)
          break;
        if (used < 0) {
          fail("unreadable HTTP response: %.300s", c->in.p);
          rc = -1;
          break;
        }
        rc = http_answer(cl, c, &r, status, body, len, sid);
        memmove(c->in.p, c->in.p + used, c->in.len - (size_t)used);
        c->in.len -= (size_t)used;
        c->in.p[c->in.len] = '\0';
        if (rc == 0 && c->step == S_NONE)
          rc = http_next(cl, c, &r);
      }
    }
  }
  if (st) {
    st->ops = r.done;
    st->secs = (double)(now_ns() - r.t_start) / 1e9;
    st->server_cpu = cpu_s(server->clock) - cpu0;
    st->client_cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - self0;
    st->rss_kb = rss_kb(server->pid);
  }
  return rc;
}

/* Pings session sid over connection c, blocking; 0 when it answers. */
static int http_ping(client *cl, conn *c, const char *sid, long id) {
  snprintf(c->sid, sizeof c->sid, "%s", sid);
  if (http_send(cl, c, H_LEGACY, S_PING, id) != 0)
    return -1;
  c->in.len = 0;
  for (int waited = 0; waited < STALL_S * 10; waited++) {
    int status;
    const char *body, *rp, *re;
    size_t len;
    long used = http_parse(&c->in, &status, &body, &len, NULL, 0);
    if (used > 0) {
      bool ok = status == 200 && reply_envelope(body, body + len, id, &rp, &re);
      c->in.len = 0;
      c->step = S_NONE;
      if (!ok)
        fail("the session did not answer ping: %.200s", body);
      return ok ? 0 : -1;
    }
    if (used < 0)
      return -1;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    if (poll(&pfd, 1, 100) > 0) {
      db_reserve(&c->in, 16384);
      ssize_t got =
          recv(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len - 1, 0);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
        return -1;
      if (got > 0) {
        c->in.len += (size_t)got;
        c->in.p[c->in.len] = '\0';
      }
    }
  }
  return -1;
}

/* ---- ceiling (a): bare cJSON in this process ----------------------------- */

/* Parses request, reads what the tool reads and builds and prints the
 * result the server would send, freeing everything: as much work as a
 * server that does nothing else must do. Returns the printed length. */
static size_t bare_call(const char *request, size_t len) {
  cJSON *req = cJSON_ParseWithLength(request, len);
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(req, "params");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  cJSON *reply = cJSON_CreateObject();
  cJSON_AddStringToObject(reply, "jsonrpc", "2.0");
  cJSON_AddItemToObject(
      reply, "id",
      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(req, "id"), 1));
  cJSON *result = cJSON_AddObjectToObject(reply, "result");
  cJSON *content = cJSON_AddArrayToObject(result, "content");
  cJSON *block = cJSON_CreateObject();
  cJSON_AddStringToObject(block, "type", "text");
  if (cJSON_IsString(name) && strcmp(name->valuestring, "wide") == 0) {
    char text[64];
    snprintf(text, sizeof text, "got %d fields", cJSON_GetArraySize(args));
    cJSON_AddStringToObject(block, "text", text);
  } else {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "text");
    cJSON_AddStringToObject(block, "text",
                            cJSON_IsString(t) ? t->valuestring : "");
  }
  cJSON_AddItemToArray(content, block);
  char *text = cJSON_PrintUnformatted(reply);
  size_t n = text ? strlen(text) : 0;
  cJSON_free(text);
  cJSON_Delete(reply);
  cJSON_Delete(req);
  return n;
}

/* The whole tools/list the server sends, built from the tool definitions
 * with cJSON, as a server without a cached wire form builds it. */
static size_t bare_list(const char *request, size_t len, unsigned ntools) {
  cJSON *req = cJSON_ParseWithLength(request, len);
  cJSON *reply = cJSON_CreateObject();
  cJSON_AddStringToObject(reply, "jsonrpc", "2.0");
  cJSON_AddItemToObject(
      reply, "id",
      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(req, "id"), 1));
  cJSON *result = cJSON_AddObjectToObject(reply, "result");
  cJSON *tools = cJSON_AddArrayToObject(result, "tools");
  for (unsigned i = 0; i < ntools; i++) {
    bench_gen_tool g;
    const char *name = g.name, *title = g.title, *desc = g.description;
    const char *schema = BENCH_GEN_SCHEMA;
    int hints = 0;
    if (i == 0) {
      name = "echo", title = "Echo", desc = BENCH_ECHO_DESCRIPTION;
      schema = BENCH_ECHO_SCHEMA;
    } else if (i == 1) {
      name = "wide", title = "Wide", desc = BENCH_WIDE_DESCRIPTION;
      schema = wide_schema;
    } else {
      bench_gen_tool_make(i - BENCH_BUILTIN_TOOLS, &g);
      hints = g.kind;
    }
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", name);
    cJSON_AddStringToObject(t, "title", title);
    cJSON_AddStringToObject(t, "description", desc);
    cJSON_AddItemToObject(t, "inputSchema", cJSON_Parse(schema));
    cJSON *a = cJSON_AddObjectToObject(t, "annotations");
    cJSON_AddStringToObject(a, "title", title);
    cJSON_AddBoolToObject(a, "readOnlyHint", hints == 0);
    if (hints != 0) {
      cJSON_AddBoolToObject(a, "destructiveHint", hints == 2);
      cJSON_AddBoolToObject(a, "idempotentHint", hints == 1);
    }
    cJSON_AddBoolToObject(a, "openWorldHint", hints == 2);
    cJSON_AddItemToArray(tools, t);
  }
  char *text = cJSON_PrintUnformatted(reply);
  size_t n = text ? strlen(text) : 0;
  cJSON_free(text);
  cJSON_Delete(reply);
  cJSON_Delete(req);
  return n;
}

/* Ceiling (a) for workload w: count ops, or for seconds, in this process;
 * its CPU time counts as the server's. */
static void ceiling_a(const workload *w, long count, double seconds,
                      stats *st) {
  dbuf req = {0};
  make_request(w, 1, NULL, &req);
  uint64_t t0 = now_ns(), limit = (uint64_t)(seconds * 1e9);
  double cpu0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
  long ops = 0;
  size_t sink = 0;
  while (ops < count && now_ns() - t0 < limit) {
    uint64_t t = now_ns();
    sink += w->k == K_LIST ? bare_list(req.p, req.len, w->ntools)
                           : bare_call(req.p, req.len);
    if (st)
      stats_record(st, now_ns() - t);
    ops++;
  }
  if (st) {
    st->ops = ops;
    st->secs = (double)(now_ns() - t0) / 1e9;
    st->server_cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    st->client_cpu = 0;
    st->rss_kb = rss_kb(getpid());
  }
  db_free(&req);
  if (sink == 0)
    fail("ceiling (a) printed nothing");
}

/* ---- the report ---------------------------------------------------------- */

typedef struct row {
  char figure[112], value[48], ceiling[64], ratio[24], target[40];
} row;

typedef struct detail {
  char name[96];
  stats st;
} detail;

static row rows[96];
static size_t nrows;
static detail details[64];
static size_t ndetails;
static int failures;
static int target_misses;

static void add_detail(const char *name, const stats *st) {
  if (ndetails < sizeof details / sizeof *details) {
    snprintf(details[ndetails].name, sizeof details[ndetails].name, "%s", name);
    details[ndetails++].st = *st;
  }
}

/* A figure with its ceiling. want > 0: the ratio must reach want ("≥");
 * want < 0: the value must stay at or under -want ("≤", ratio unused).
 * unit names the value's unit. */
static void add_row(const char *figure, double value, const char *unit,
                    const char *ceiling_name, double ceiling, double want,
                    const char *target_text) {
  if (nrows == sizeof rows / sizeof *rows)
    return;
  row *r = &rows[nrows++];
  snprintf(r->figure, sizeof r->figure, "%s", figure);
  snprintf(r->value, sizeof r->value, value >= 100 ? "%.0f%s%s" : "%.2f%s%s",
           value, *unit ? " " : "", unit);
  if (ceiling_name && ceiling > 0) {
    if (ceiling >= 100)
      snprintf(r->ceiling, sizeof r->ceiling, "%s %.0f %s", ceiling_name,
               ceiling, unit);
    else
      snprintf(r->ceiling, sizeof r->ceiling, "%s %.2f %s", ceiling_name,
               ceiling, unit);
    snprintf(r->ratio, sizeof r->ratio, "%.2f×", value / ceiling);
  } else {
    snprintf(r->ceiling, sizeof r->ceiling, "—");
    snprintf(r->ratio, sizeof r->ratio, "—");
  }
  if (target_text) {
    bool met =
        want > 0 ? ceiling > 0 && value / ceiling >= want : value <= -want;
    snprintf(r->target, sizeof r->target, "%s %s", target_text,
             met ? "met" : "MISSED");
    target_misses += !met;
  } else {
    snprintf(r->target, sizeof r->target, " ");
  }
}

static void print_report(FILE *f) {
  struct utsname u;
  char model[256] = "unknown CPU", line[512];
  FILE *ci = fopen("/proc/cpuinfo", "r");
  while (ci && fgets(line, sizeof line, ci)) {
    if (strncmp(line, "model name", 10) == 0) {
      const char *v = strchr(line, ':');
      if (v) {
        snprintf(model, sizeof model, "%s", ws(v + 1, v + strlen(v)));
        model[strcspn(model, "\n")] = '\0';
      }
      break;
    }
  }
  if (ci)
    fclose(ci);
  uname(&u);
  time_t t = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
  fprintf(f,
          "Machine: %ld CPUs (nproc), %s, %s %s %s; %s%s.\n\n"
          "| figure | value | ceiling | ratio | target |\n"
          "|---|---|---|---|---|\n",
          sysconf(_SC_NPROCESSORS_ONLN), model, u.sysname, u.release, u.machine,
          date, quick ? "; --quick (smoke run, not figures)" : "");
  for (size_t i = 0; i < nrows; i++)
    fprintf(f, "| %s | %s | %s | %s | %s |\n", rows[i].figure, rows[i].value,
            rows[i].ceiling, rows[i].ratio, rows[i].target);
  fprintf(f, "\nCeilings, measured in the same run: (a) the same request "
             "parsed and the same result built and printed with bare cJSON "
             "in-process; (b) a bare libmicrohttpd server (same thread "
             "model) answering a fixed JSON body; (c) a process answering "
             "each line on a pipe with a fixed line. Ratio = value / "
             "ceiling: for rates higher is better, for costs (µs, KiB, "
             "MiB) lower is better. Each figure is the best of 5 short "
             "runs taken in turns with its ceiling. Runs marked one CPU keep "
             "the driver and the server on one CPU, so that a round trip "
             "costs the CPU time of both sides and two context switches, "
             "not the time a virtual machine takes to wake an idle CPU, "
             "which varies tenfold from run to run; the unpinned figure is "
             "shown too. The driver's own CPU per operation is in the table "
             "below.\n\n");
  if (ndetails == 0)
    return;
  fprintf(f, "| run | ops | ops/s | p50 µs | p99 µs | server CPU µs/op | "
             "client CPU µs/op | server RSS KiB |\n"
             "|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < ndetails; i++) {
    const stats *s = &details[i].st;
    fprintf(f, "| %s | %ld | %.0f | %.1f | %.1f | %.2f | %.2f | %ld |\n",
            details[i].name, s->ops, s->rate, s->p50_us, s->p99_us,
            s->server_us, s->client_us, s->rss_kb);
  }
}

/* ---- scenarios ----------------------------------------------------------- */

static long next_id = 1;

/* Run sizes: (count, seconds) at full size, a handful with --quick. */
static long n_ops(long full) { return quick ? 16 : full; }
static double n_secs(double full) { return quick ? 30 : full; }

/* How the figures compared with each other are measured: every entry of a
 * contest (the libmcp runs and their ceilings) is warmed up, then they take
 * turns, ROUNDS short runs each, and each keeps its best round. The
 * machine's other work (a compiler, a test suite) then costs a round, not
 * the figure, and a ceiling and its figure see the same conditions. */
#define ROUNDS 5

typedef enum ekind { E_STDIO, E_HTTP, E_BARE } ekind;

typedef struct entry {
  const char *name;
  ekind kind;
  proc *p;     /* E_STDIO, E_HTTP: the server */
  workload *w; /* E_STDIO, E_BARE */
  int depth;   /* E_STDIO: ops in flight */
  place where; /* E_STDIO, E_HTTP */
  client *cl;  /* E_HTTP */
  hmode mode;
  bool failed;
  stats best;
} entry;

static entry on_stdio(const char *name, proc *p, workload *w, int depth,
                      place where) {
  return (entry){.name = name,
                 .kind = E_STDIO,
                 .p = p,
                 .w = w,
                 .depth = depth,
                 .where = where};
}

static entry bare(const char *name, workload *w) {
  return (entry){.name = name, .kind = E_BARE, .w = w};
}

/* One run of e: count ops or seconds; with st NULL a warm-up. */
static int entry_run(entry *e, long count, double seconds, stats *st) {
  int rc = 0;
  if (e->kind != E_BARE && e->where != ANYWHERE)
    put(e->p->pid, e->where);
  switch (e->kind) {
  case E_STDIO:
    rc = run_stdio(e->p, e->w, e->depth, count, seconds, &next_id, st);
    break;
  case E_HTTP:
    rc = run_http(e->cl, e->p, e->mode, count, seconds, &next_id, st);
    break;
  case E_BARE:
    ceiling_a(e->w, count, seconds, st);
    break;
  }
  if (e->kind != E_BARE && e->where != ANYWHERE)
    put(e->p->pid, ANYWHERE);
  return rc;
}

/* Runs the contest of n entries, seconds in all for each, and adds each
 * one's best round to the details. An entry that fails is out (and counted
 * as a failure); its figure stays zero. */
static void contest(entry *e, size_t n, long count, double seconds) {
  int rounds = quick ? 1 : ROUNDS;
  for (size_t i = 0; i < n; i++) {
    e[i].best = (stats){0};
    e[i].failed = e[i].kind != E_BARE && (e[i].p == NULL || e[i].p->pid <= 0);
    long warm = e[i].kind == E_HTTP ? 20L * e[i].cl->n + 1000 : 2000;
    if (!e[i].failed &&
        entry_run(&e[i], quick ? (e[i].kind == E_HTTP ? e[i].cl->n : 1) : warm,
                  quick ? 30 : 0.3, NULL) != 0)
      e[i].failed = true;
  }
  for (int r = 0; r < rounds; r++) {
    for (size_t i = 0; i < n; i++) {
      if (e[i].failed)
        continue;
      stats st = {0};
      if (entry_run(&e[i], n_ops(count) / rounds + 1, n_secs(seconds) / rounds,
                    &st) != 0) {
        free(st.lat);
        e[i].failed = true;
        continue;
      }
      stats_finish(&st);
      if (st.rate > e[i].best.rate)
        e[i].best = st;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (e[i].failed) {
      fail("%s: failed", e[i].name);
      failures++;
      e[i].best = (stats){0};
    } else {
      add_detail(e[i].name, &e[i].best);
    }
  }
}

static double ceiling_echo_rate, ceiling_echo_us;

/* Ceiling (a) of the echo call, for figures outside the stdio contest. */
static void need_ceiling_echo(void) {
  if (ceiling_echo_rate > 0)
    return;
  workload w = {.k = K_ECHO};
  entry e = {.name = "(a) echo, bare cJSON", .kind = E_BARE, .w = &w};
  contest(&e, 1, 5000000, 2);
  ceiling_echo_rate = e.best.rate;
  ceiling_echo_us = e.best.server_us;
}

/* Starts a stdio server; a failure counts and leaves p unusable (pid -1).
 * Servers are started first and greeted afterwards, so that several start
 * up at the same time (under valgrind that takes a while). */
static void start_stdio(proc *p, const char *name, const char *const *args) {
  if (proc_start(p, name, args, false) != 0) {
    failures++;
    proc_stop(p);
  }
}

/* initialize and notifications/initialized, on a started server. */
static void greet(proc *p) {
  if (p->pid > 0 && stdio_handshake(p, &next_id) != 0) {
    failures++;
    proc_stop(p);
  }
}

static void stop(proc *p) {
  if (proc_stop(p) != 0)
    failures++;
}

static void scenario_stdio(void) {
  proc lines, server;
  const char *args[] = {"--stdio", NULL};
  workload fixed = {.k = K_FIXED}, echo = {.k = K_ECHO};
  start_stdio(&lines, "bench_pipe", NULL);
  start_stdio(&server, "bench_server_stdio", args);
  greet(&server);
  entry e[] = {
      on_stdio("(c) pipe, 1 in flight, one CPU", &lines, &fixed, 1, SHARED),
      on_stdio("stdio echo, 1 in flight, one CPU", &server, &echo, 1, SHARED),
      on_stdio("(c) pipe, 1 in flight, unpinned", &lines, &fixed, 1, ANYWHERE),
      on_stdio("stdio echo, 1 in flight, unpinned", &server, &echo, 1,
               ANYWHERE),
      on_stdio("(c) pipe, 64 in flight", &lines, &fixed, 64, ANYWHERE),
      on_stdio("stdio echo, 64 in flight", &server, &echo, 64, ANYWHERE),
      bare("(a) echo, bare cJSON", &echo),
  };
  contest(e, sizeof e / sizeof *e, 4000000, 3);
  stop(&lines);
  stop(&server);
  const stats *c1 = &e[0].best, *s1 = &e[1].best, *cf = &e[2].best,
              *sf = &e[3].best, *c64 = &e[4].best, *s64 = &e[5].best,
              *a = &e[6].best;
  ceiling_echo_rate = a->rate;
  ceiling_echo_us = a->server_us;
  add_row("stdio echo tools/call, sequential (1 in flight, one CPU)", s1->rate,
          "calls/s", "(c)", c1->rate, 0.8, "≥ 0.8× (c)");
  add_row("  the same, round trip p50 / p99", s1->p50_us, "µs", "(c)",
          c1->p50_us, 0, NULL);
  snprintf(rows[nrows - 1].value, sizeof rows[nrows - 1].value,
           "%.1f / %.1f µs", s1->p50_us, s1->p99_us);
  snprintf(rows[nrows - 1].ceiling, sizeof rows[nrows - 1].ceiling,
           "(c) %.1f / %.1f µs", c1->p50_us, c1->p99_us);
  add_row("  the same, server CPU per call", s1->server_us, "µs", "(c)",
          c1->server_us, 0, NULL);
  add_row("stdio echo tools/call, sequential, unpinned", sf->rate, "calls/s",
          "(c)", cf->rate, 0, NULL);
  add_row("stdio echo tools/call, pipelined (64 in flight)", s64->rate,
          "calls/s", "(a)", a->rate, 0.5, "≥ 0.5× (a)");
  add_row("  the same, server CPU per call", s64->server_us, "µs", "(a)",
          a->server_us, 0, NULL);
  add_row("  the same, against pipes alone (64 in flight)", s64->rate,
          "calls/s", "(c)", c64->rate, 0, NULL);
}

/* Starts an HTTP server; a failure counts and leaves p unusable. */
static void start_http(proc *p, const char *name, const char *const *args) {
  if (proc_start(p, name, args, true) != 0) {
    failures++;
    proc_stop(p);
  }
}

static void scenario_http(void) {
  static const int conns[3] = {1, 16, 64};
  char names[9][96];
  client cl[9];
  entry e[9];
  proc mhd, server;
  const char *mhd_args[] = {"127.0.0.1:0", NULL};
  const char *args[] = {"--http", "127.0.0.1:0", NULL};
  start_http(&mhd, "bench_mhd", mhd_args);
  start_http(&server, "bench_server", args);
  for (int i = 0; i < 3; i++) {
    const char *s = conns[i] > 1 ? "s" : "";
    snprintf(names[3 * i], sizeof names[0],
             "(b) bare libmicrohttpd, %d connection%s", conns[i], s);
    snprintf(names[3 * i + 1], sizeof names[0],
             "HTTP echo, legacy sessions, %d connection%s", conns[i], s);
    snprintf(names[3 * i + 2], sizeof names[0],
             "HTTP echo, stateless 2026-07-28, %d connection%s", conns[i], s);
    for (int k = 0; k < 3; k++) {
      proc *p = k == 0 ? &mhd : &server;
      cl[3 * i + k] = (client){.epfd = -1};
      e[3 * i + k] = (entry){.name = names[3 * i + k],
                             .kind = E_HTTP,
                             .p = p,
                             .cl = &cl[3 * i + k],
                             .mode = k == 0   ? H_FIXED
                                     : k == 1 ? H_LEGACY
                                              : H_MODERN};
      if (p->pid > 0 && client_open(&cl[3 * i + k], p->port, conns[i]) != 0)
        p = NULL;
      if (p == NULL)
        e[3 * i + k].p = NULL;
    }
  }
  contest(e, 9, 5000000, 3);
  long mhd_rss = rss_kb(mhd.pid), rss = rss_kb(server.pid);
  for (int i = 0; i < 9; i++)
    client_close(&cl[i]);
  stop(&mhd);
  stop(&server);
  for (int i = 0; i < 3; i++) {
    char fig[112];
    const stats *b = &e[3 * i].best, *leg = &e[3 * i + 1].best,
                *mod = &e[3 * i + 2].best;
    bool target = conns[i] == 16;
    snprintf(fig, sizeof fig,
             "HTTP echo, legacy session per connection, %d connection%s",
             conns[i], conns[i] > 1 ? "s" : "");
    add_row(fig, leg->rate, "calls/s", "(b)", b->rate, target ? 0.6 : 0,
            target ? "≥ 0.6× (b)" : NULL);
    snprintf(fig, sizeof fig,
             "HTTP echo, stateless 2026-07-28, %d connection%s", conns[i],
             conns[i] > 1 ? "s" : "");
    add_row(fig, mod->rate, "calls/s", "(b)", b->rate, target ? 0.6 : 0,
            target ? "≥ 0.6× (b)" : NULL);
  }
  add_row("HTTP echo, server CPU per call (legacy, 16 connections)",
          e[4].best.server_us, "µs", "(b)", e[3].best.server_us, 0, NULL);
  add_row("HTTP echo, server CPU per call (stateless, 16 connections)",
          e[5].best.server_us, "µs", "(b)", e[3].best.server_us, 0, NULL);
  add_row("  load driver CPU per call (stateless, 16 connections)",
          e[5].best.client_us, "µs", "(b)", e[3].best.client_us, 0, NULL);
  add_row("HTTP server RSS after the echo runs", (double)rss / 1024.0, "MiB",
          "(b)", (double)mhd_rss / 1024.0, 0, NULL);
}

static void scenario_list(void) {
  /* --quick keeps pagination (pages of 10) with few tools. */
  unsigned sizes[2] = {1000, 10000}, per_page = quick ? 10 : 100;
  if (quick)
    sizes[0] = 12, sizes[1] = 40;
  for (int i = 0; i < 2; i++) {
    char tools[16], whole_size[16], page_size[16], fig[112], names[3][96];
    snprintf(tools, sizeof tools, "%u", sizes[i]);
    snprintf(whole_size, sizeof whole_size, "%u", sizes[i] + 1);
    snprintf(page_size, sizeof page_size, "%u", per_page);
    const char *one_page[] = {"--tools", tools, "--page-size", whole_size,
                              NULL};
    const char *paginated[] = {"--tools", tools, "--page-size", page_size,
                               NULL};
    workload whole = {.k = K_LIST, .ntools = sizes[i]},
             paged = {.k = K_LIST, .ntools = sizes[i]};
    proc pw, pp;
    start_stdio(&pw, "bench_server_stdio", one_page);
    start_stdio(&pp, "bench_server_stdio", paginated);
    greet(&pw);
    greet(&pp);
    snprintf(names[0], sizeof names[0],
             "(a) tools/list of %u tools, bare cJSON", sizes[i]);
    snprintf(names[1], sizeof names[1], "tools/list, %u tools, one page",
             sizes[i]);
    snprintf(names[2], sizeof names[2], "tools/list, %u tools, pages of %u",
             sizes[i], per_page);
    entry e[] = {
        bare(names[0], &whole),
        on_stdio(names[1], &pw, &whole, 1, ANYWHERE),
        on_stdio(names[2], &pp, &paged, 1, ANYWHERE),
    };
    contest(e, 3, 1000000, 2);
    stop(&pw);
    stop(&pp);
    workload_free(&whole);
    workload_free(&paged);
    snprintf(fig, sizeof fig,
             "tools/list of %u tools over stdio, one page (whole listing)",
             sizes[i]);
    add_row(fig, e[1].best.rate, "lists/s", "(a) from scratch", e[0].best.rate,
            i == 0 ? 1 : 0, i == 0 ? "≥ 1× (a)" : NULL);
    snprintf(fig, sizeof fig,
             "tools/list of %u tools over stdio, all %u pages of %u", sizes[i],
             (sizes[i] + per_page - 1) / per_page, per_page);
    add_row(fig, e[2].best.rate, "lists/s", "(a) from scratch", e[0].best.rate,
            0, NULL);
    snprintf(fig, sizeof fig, "  the same, server CPU per listing, one page");
    add_row(fig, e[1].best.server_us, "µs", "(a) from scratch",
            e[0].best.server_us, 0, NULL);
    snprintf(fig, sizeof fig, "  server RSS with %u tools", sizes[i]);
    add_row(fig, (double)e[1].best.rss_kb / 1024.0, "MiB", NULL, 0, 0, NULL);
  }
}

static void scenario_big(void) {
  size_t len = quick ? 65536 : (size_t)1 << 20;
  char *big = xrealloc(NULL, len);
  for (size_t i = 0; i < len; i++)
    big[i] = (char)('a' + i % 26);
  workload w = {.k = K_BIG, .big = big, .big_len = len};
  proc p;
  const char *args[] = {"--stdio", NULL};
  start_stdio(&p, "bench_server_stdio", args);
  greet(&p);
  entry e[] = {
      bare("(a) echo of a 1 MiB argument, bare cJSON", &w),
      on_stdio("stdio echo of a 1 MiB argument", &p, &w, 1, ANYWHERE),
  };
  contest(e, 2, 100000, 3);
  stop(&p);
  double mib = (double)len / (1 << 20);
  add_row("stdio echo of a 1 MiB argument (in and out)", e[1].best.rate * mib,
          "MiB/s", "(a)", e[0].best.rate * mib, 0, NULL);
  add_row("  the same, server CPU per call", e[1].best.server_us / 1000, "ms",
          "(a)", e[0].best.server_us / 1000, 0, NULL);
  free(big);
}

static void scenario_wide(void) {
  workload w = {.k = K_WIDE, .wide_args = wide_args};
  proc p;
  const char *args[] = {"--stdio", NULL};
  start_stdio(&p, "bench_server_stdio", args);
  greet(&p);
  entry e[] = {
      bare("(a) call with 100-field arguments, bare cJSON", &w),
      on_stdio("stdio wide (100-field arguments), 64 in flight", &p, &w, 64,
               ANYWHERE),
  };
  contest(e, 2, 2000000, 3);
  stop(&p);
  add_row("stdio tools/call with 100-field arguments validated, pipelined",
          e[1].best.rate, "calls/s", "(a)", e[0].best.rate, 0, NULL);
  add_row("  the same, server CPU per call", e[1].best.server_us, "µs", "(a)",
          e[0].best.server_us, 0, NULL);
}

/* RSS per idle legacy session: n sessions made over 16 connections and
 * left idle, against the RSS before them. */
static void sessions_once(long n) {
  char max[32], fig[112], name[96];
  snprintf(max, sizeof max, "%ld", n + 1000);
  const char *args[] = {"--http", "127.0.0.1:0", "--max-sessions", max, NULL};
  proc p;
  client cl = {.epfd = -1};
  stats st = {0};
  long before = 0, after = 0;
  int rc = proc_start(&p, "bench_server", args, true);
  if (rc == 0)
    rc = client_open(&cl, p.port, 16);
  if (rc == 0) /* warm up: the first sessions, then the baseline */
    rc = run_http(&cl, &p, H_SESSIONS, 64, 60, &next_id, NULL);
  if (rc == 0) {
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    before = rss_kb(p.pid);
    for (size_t i = 0; i < cl.nsids; i++)
      free(cl.sids[i]);
    cl.nsids = 0;
    rc = run_http(&cl, &p, H_SESSIONS, n, 600, &next_id, &st);
  }
  if (rc == 0) {
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    after = rss_kb(p.pid);
    /* The first and the last session are still there, and answer. */
    rc = cl.nsids == (size_t)n ? 0 : -1;
    if (rc == 0)
      rc = http_ping(&cl, &cl.c[0], cl.sids[0], next_id++);
    if (rc == 0)
      rc = http_ping(&cl, &cl.c[0], cl.sids[n - 1], next_id++);
  }
  client_close(&cl);
  if (proc_stop(&p) != 0 || rc != 0) {
    fail("the %ld-session run failed", n);
    failures++;
    free(st.lat);
    return;
  }
  stats_finish(&st);
  snprintf(name, sizeof name, "HTTP: %ld legacy sessions created", n);
  add_detail(name, &st);
  snprintf(fig, sizeof fig, "RSS per idle legacy session, %ld sessions", n);
  add_row(fig, (double)(after - before) / (double)n, "KiB", NULL, 0, -8,
          "≤ 8 KiB");
}

static void scenario_sessions(void) {
  sessions_once(quick ? 20 : 1000);
  sessions_once(quick ? 40 : 10000);
}

/* Server RSS with 100 tools, after one call has warmed it up. */
static void scenario_idle(void) {
  proc p;
  workload echo = {.k = K_ECHO}, fixed = {.k = K_FIXED};
  long stdio_kb = -1, pipe_kb = -1, http_kb = -1, mhd_kb = -1;
  long stdio_anon = -1, pipe_anon = -1, http_anon = -1, mhd_anon = -1;
  const char *args[] = {"--stdio", "--tools", "100", NULL};
  if (proc_start(&p, "bench_server_stdio", args, false) == 0 &&
      stdio_handshake(&p, &next_id) == 0 &&
      run_stdio(&p, &echo, 1, 10, 30, &next_id, NULL) == 0) {
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    stdio_kb = rss_kb(p.pid);
    stdio_anon = status_kb(p.pid, "RssAnon:");
  } else {
    failures++;
  }
  if (proc_stop(&p) != 0)
    failures++;
  if (proc_start(&p, "bench_pipe", NULL, false) == 0 &&
      run_stdio(&p, &fixed, 1, 10, 30, &next_id, NULL) == 0) {
    pipe_kb = rss_kb(p.pid);
    pipe_anon = status_kb(p.pid, "RssAnon:");
  } else {
    failures++;
  }
  if (proc_stop(&p) != 0)
    failures++;
  const char *hargs[] = {"--http", "127.0.0.1:0", "--tools", "100", NULL};
  client cl = {.epfd = -1};
  if (proc_start(&p, "bench_server", hargs, true) == 0 &&
      client_open(&cl, p.port, 1) == 0 &&
      run_http(&cl, &p, H_LEGACY, 10, 30, &next_id, NULL) == 0) {
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    http_kb = rss_kb(p.pid);
    http_anon = status_kb(p.pid, "RssAnon:");
  } else {
    failures++;
  }
  client_close(&cl);
  if (proc_stop(&p) != 0)
    failures++;
  const char *margs[] = {"127.0.0.1:0", NULL};
  if (proc_start(&p, "bench_mhd", margs, true) == 0 &&
      client_open(&cl, p.port, 1) == 0 &&
      run_http(&cl, &p, H_FIXED, 10, 30, &next_id, NULL) == 0) {
    mhd_kb = rss_kb(p.pid);
    mhd_anon = status_kb(p.pid, "RssAnon:");
  } else {
    failures++;
  }
  client_close(&cl);
  if (proc_stop(&p) != 0)
    failures++;
  add_row("server RSS, idle, 100 tools, stdio", (double)stdio_kb / 1024.0,
          "MiB", "(c)", (double)pipe_kb / 1024.0, -8, "≤ 8 MiB");
  add_row("  of which anonymous (heap, stacks), stdio",
          (double)stdio_anon / 1024.0, "MiB", "(c)", (double)pipe_anon / 1024.0,
          0, NULL);
  add_row("server RSS, idle, 100 tools, HTTP (one session)",
          (double)http_kb / 1024.0, "MiB", "(b)", (double)mhd_kb / 1024.0, -8,
          "≤ 8 MiB");
  add_row("  of which anonymous (heap, stacks), HTTP",
          (double)http_anon / 1024.0, "MiB", "(b)", (double)mhd_anon / 1024.0,
          0, NULL);
}

/* Runs a program beside this one and returns its standard output. */
static char *run_program(const char *name, const char *arg) {
  char cmd[8600];
  snprintf(cmd, sizeof cmd, "'%s/%s' %s", bin_dir, name, arg);
  FILE *f = popen(cmd, "r");
  if (f == NULL)
    return NULL;
  dbuf out = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    db_put(&out, chunk, n);
  int status = pclose(f);
  if (status != 0) {
    fail("%s exited with status %d:\n%s", name, status, out.p ? out.p : "");
    db_free(&out);
    return NULL;
  }
  return out.p ? out.p : strdup("");
}

/* The number after label in text, or -1. */
static double number_after(const char *text, const char *label) {
  const char *at = text ? strstr(text, label) : NULL;
  return at ? atof(at + strlen(label)) : -1;
}

static void scenario_alloc(void) {
  /* The counts are the same every run; the rate is the best of a few, as
   * in a contest. */
  char *out = NULL;
  double rate = 0;
  for (int r = 0; r < (quick ? 1 : 3); r++) {
    free(out);
    out = run_program("bench_alloc", quick ? "200" : "100000");
    if (out == NULL) {
      failures++;
      return;
    }
    double v = number_after(out, "legacy_rate ");
    rate = v > rate ? v : rate;
  }
  need_ceiling_echo();
  add_row("heap allocations per echo tools/call (stdio path, legacy)",
          number_after(out, "legacy_allocs "), "", NULL, 0, -16, "≤ 16");
  add_row("heap allocations per echo tools/call (2026-07-28 request)",
          number_after(out, "modern_allocs "), "", NULL, 0, 0, NULL);
  add_row("engine alone: echo calls/s through mcp_session_receive", rate,
          "calls/s", "(a)", ceiling_echo_rate, 0, NULL);
  add_row("heap held per registered tool (3-argument schema)",
          number_after(out, "tool_bytes ") / 1024.0, "KiB", NULL, 0, 0, NULL);
  snprintf(rows[nrows - 1].value, sizeof rows[nrows - 1].value,
           "%.1f KiB in %.0f blocks", number_after(out, "tool_bytes ") / 1024.0,
           number_after(out, "tool_blocks "));
  add_row("heap held per idle legacy session (engine only)",
          number_after(out, "session_bytes "), "bytes", NULL, 0, 0, NULL);
  free(out);
}

static void scenario_schema(void) {
  char *out = run_program("bench_schema", quick ? "50" : "20000");
  if (out == NULL) {
    failures++;
    return;
  }
  add_row("validating 100-field arguments against inputSchema",
          number_after(out, "validate (inputSchema):"), "µs",
          "strict parse of the same",
          number_after(out, "parse (strict "
                            "parser):"),
          0, NULL);
  free(out);
}

static void scenario_jwt(void) {
  char path[4352];
  snprintf(path, sizeof path, "%s/bench_jwt", bin_dir);
  if (access(path, X_OK) != 0)
    return; /* built without the HTTP transport */
  char *out = run_program("bench_jwt", quick ? "20" : "2000");
  if (out == NULL) {
    failures++;
    return;
  }
  add_row("JWT verification, RS256 (RSA 2048)",
          number_after(out, "RS256 (RSA 2048):"), "µs", NULL, 0, 0, NULL);
  add_row("JWT verification, ES256 (P-256)",
          number_after(out, "ES256 (P-256):"), "µs", NULL, 0, 0, NULL);
  free(out);
}

static void scenario_guard(void) {
  char path[4352];
  snprintf(path, sizeof path, "%s/bench_guard", bin_dir);
  if (access(path, X_OK) != 0)
    return; /* built without the guard */
  char *out = run_program("bench_guard", quick ? "50" : "20000");
  if (out == NULL) {
    failures++;
    return;
  }
  double plain = number_after(out, "unguarded echo: ");
  double hand = number_after(out, "thread hand-off (half a ping-pong): ");
  add_row("guarded echo tools/call (read-only, closed-world), sequential",
          number_after(out, "\nguarded echo: "), "µs",
          "unguarded + one hand-off", plain + hand, 0, NULL);
  /* Reporting (the guard as it ships) against the guard without it. */
  double quiet =
      number_after(out, "guarded echo, no reporting (MCP_GUARD_QUIET): ");
  add_row("guarded echo, reporting, against no reporting (MCP_GUARD_QUIET)",
          number_after(out, "\nguarded echo: "), "µs", "no reporting", quiet, 0,
          NULL);
  /* Observing needs seccomp user notification: not measured without it. */
  if (strstr(out, "(MCP_GUARD_OBSERVE): not measured") == NULL)
    add_row("guarded echo, observing (MCP_GUARD_OBSERVE)",
            number_after(out, "guarded echo, observing (MCP_GUARD_OBSERVE): "),
            "µs", "no reporting", quiet, 0, NULL);
  add_row("guarded echo, the caller spinning for its reply",
          number_after(out, "guarded echo, caller spinning: "), "µs",
          "unguarded", plain, 0, NULL);
  add_row("guard overhead per call (guarded − unguarded)",
          number_after(out, "guard overhead: "), "µs", NULL, 0, 0, NULL);
  double one_plain = number_after(out, "one CPU, unguarded: ");
  double one_hand = number_after(out, "one CPU, hand-off: ");
  add_row("guarded echo, one CPU", number_after(out, "one CPU, guarded: "),
          "µs", "unguarded + one hand-off, one CPU", one_plain + one_hand, 0,
          NULL);
  add_row("guard overhead per call, one CPU",
          number_after(out, "one CPU, guard overhead: "), "µs", NULL, 0, -10,
          "≤ 10");
  add_row("guard overhead per call, one CPU, no reporting",
          number_after(out, "one CPU, guard overhead, no reporting: "), "µs",
          NULL, 0, 0, NULL);
  /* The guard's own cost: with the caller awake, no thread sleeps. */
  add_row("guard overhead per call, no wake-up (caller spinning)",
          number_after(out, "guard overhead without a wake-up: "), "µs", NULL,
          0, -10, "≤ 10");
  free(out);
}

/* ---- nginx in front of two servers (scenario cluster) --------------------
 * nginx is started as a child, never under the launcher (it is not what is
 * measured, and valgrind would only slow it), from a folder of its own made
 * here: its configuration, pid file, logs and temp paths. */

typedef struct nginx {
  pid_t pid;   /* the master, a child of this process; -1 when none */
  proc worker; /* its one worker, for CPU time and RSS (never stopped) */
  unsigned port;
  char dir[4096]; /* "" when none */
} nginx;

/* The nginx program: the first on PATH, else /usr/sbin/nginx; NULL when
 * there is none. */
static const char *nginx_program(void) {
  static char path[4352];
  const char *env = getenv("PATH");
  char *dirs = strdup(env ? env : "");
  for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
       d = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof path, "%s/nginx", d);
    if (access(path, X_OK) == 0) {
      free(dirs);
      return path;
    }
  }
  free(dirs);
  snprintf(path, sizeof path, "/usr/sbin/nginx");
  return access(path, X_OK) == 0 ? path : NULL;
}

/* A loopback port free right now (the kernel's pick for port 0), or 0. */
static unsigned free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET};
  socklen_t len = sizeof sa;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  unsigned port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
      getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
    port = ntohs(sa.sin_port);
  if (fd >= 0)
    close(fd);
  return port;
}

/* Writes ng->dir/nginx.conf: plain HTTP on 127.0.0.1:ng->port, every
 * request to /mcp sent round-robin to the n backend ports over pooled
 * keep-alive connections, unbuffered, as docs/deployment.md sets it up
 * (without TLS and session routing: stateless requests go anywhere). As
 * root, the worker runs as nobody. Returns 0 or -1. */
static int nginx_conf(const nginx *ng, const unsigned *backends, int n) {
  char path[4352], user[160] = "";
  if (geteuid() == 0) {
    const struct passwd *pw = getpwnam("nobody");
    const struct group *gr = pw ? getgrgid(pw->pw_gid) : NULL;
    if (pw == NULL || gr == NULL)
      return -1;
    snprintf(user, sizeof user, "user nobody %s;\n", gr->gr_name);
  }
  snprintf(path, sizeof path, "%s/nginx.conf", ng->dir);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -1;
  const char *d = ng->dir;
  fprintf(f,
          "%sdaemon off;\nworker_processes 1;\npid %s/nginx.pid;\n"
          "error_log %s/error.log warn;\n"
          "events {\n  worker_connections 1024;\n}\n"
          "http {\n  access_log off;\n"
          "  client_body_temp_path %s/tmp/body;\n"
          "  proxy_temp_path %s/tmp/proxy;\n"
          "  fastcgi_temp_path %s/tmp/fastcgi;\n"
          "  uwsgi_temp_path %s/tmp/uwsgi;\n"
          "  scgi_temp_path %s/tmp/scgi;\n"
          /* The driver's connections live through every round. */
          "  keepalive_requests 1000000;\n  keepalive_timeout 3600s;\n"
          "  upstream backends {\n",
          user, d, d, d, d, d, d, d);
  for (int i = 0; i < n; i++)
    fprintf(f, "    server 127.0.0.1:%u;\n", backends[i]);
  fprintf(f,
          "    keepalive 64;\n    keepalive_requests 1000000;\n"
          "    keepalive_timeout 3600s;\n  }\n"
          "  server {\n    listen 127.0.0.1:%u;\n"
          "    location = /mcp {\n      proxy_pass http://backends;\n"
          "      proxy_http_version 1.1;\n"
          "      proxy_set_header Connection \"\";\n"
          "      proxy_set_header Host $http_host;\n"
          "      proxy_buffering off;\n      proxy_read_timeout 3600s;\n"
          "      proxy_send_timeout 3600s;\n    }\n  }\n}\n",
          ng->port);
  return fclose(f) == 0 ? 0 : -1;
}

/* Copies a file of ng->dir (a log) to standard error, if it has anything. */
static void nginx_show(const nginx *ng, const char *name) {
  char path[4352], chunk[4096];
  snprintf(path, sizeof path, "%s/%s", ng->dir, name);
  FILE *f = fopen(path, "r");
  size_t n;
  while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
    fwrite(chunk, 1, n, stderr);
  if (f)
    fclose(f);
}

/* True when something accepts connections on 127.0.0.1:port. */
static bool port_open(unsigned port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
  if (fd >= 0)
    close(fd);
  return ok;
}

/* Points ng->worker at nginx's worker process (the master's child), or at
 * the master when it cannot be found. */
static void nginx_find_worker(nginx *ng) {
  char path[96];
  long worker = 0;
  snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)ng->pid,
           (long)ng->pid);
  for (int i = 0; i < 100 && worker <= 0; i++) {
    FILE *f = fopen(path, "r");
    if (f == NULL || fscanf(f, "%ld", &worker) != 1)
      worker = 0;
    if (f)
      fclose(f);
    if (worker <= 0)
      nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  ng->worker = (proc){.pid = worker > 0 ? (pid_t)worker : ng->pid,
                      .to = -1,
                      .from = -1,
                      .err = -1,
                      .port = ng->port};
  if (clock_getcpuclockid(ng->worker.pid, &ng->worker.clock) != 0)
    ng->worker.clock = CLOCK_PROCESS_CPUTIME_ID; /* no figure, no harm */
}

/* Starts nginx (the program exe) in front of the n backend ports, on a
 * free loopback port, and waits until it accepts connections. A port
 * taken between the pick and nginx's bind costs a retry. Returns 0, or
 * -1 with what nginx said on standard error; nginx_stop cleans up either
 * way. */
static int nginx_start(nginx *ng, const char *exe, const unsigned *backends,
                       int n) {
  *ng = (nginx){.pid = -1};
  const char *tmp = getenv("TMPDIR");
  char sub[4352];
  snprintf(ng->dir, sizeof ng->dir, "%s/bench_nginx.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(ng->dir) == NULL) {
    fail("mkdtemp: %s", strerror(errno));
    *ng->dir = '\0';
    return -1;
  }
  snprintf(sub, sizeof sub, "%s/tmp", ng->dir);
  if (mkdir(sub, 0700) != 0)
    return -1;
  if (geteuid() == 0) {
    /* The worker, as nobody, reaches its temp folder and nothing else. */
    const struct passwd *pw = getpwnam("nobody");
    if (pw == NULL || chmod(ng->dir, 0711) != 0 ||
        chown(sub, pw->pw_uid, pw->pw_gid) != 0) {
      fail("cannot give nginx's temp folder to nobody");
      return -1;
    }
  }
  char conf[4352], log[4352], errlog[4352];
  snprintf(conf, sizeof conf, "%s/nginx.conf", ng->dir);
  snprintf(errlog, sizeof errlog, "%s/error.log", ng->dir);
  snprintf(log, sizeof log, "%s/nginx.log", ng->dir);
  for (int attempt = 0; attempt < 5; attempt++) {
    ng->port = free_port();
    if (ng->port == 0 || nginx_conf(ng, backends, n) != 0) {
      fail("cannot write %s", conf);
      return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_RDONLY);
      int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(null, STDIN_FILENO);
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
      execl(exe, exe, "-p", ng->dir, "-e", errlog, "-c", conf, (char *)NULL);
      fprintf(stderr, "cannot run %s: %s\n", exe, strerror(errno));
      _exit(127);
    }
    if (pid < 0) {
      fail("fork: %s", strerror(errno));
      return -1;
    }
    ng->pid = pid;
    bool exited = false;
    for (int i = 0; i < 200 && !exited; i++) { /* 10 s at most */
      if (port_open(ng->port)) {
        nginx_find_worker(ng);
        return 0;
      }
      int status;
      exited = waitpid(pid, &status, WNOHANG) == pid;
      if (!exited)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    if (!exited) {
      fail("nginx did not listen on 127.0.0.1:%u within 10 s", ng->port);
      return -1;
    }
    ng->pid = -1;
    fail("nginx exited at start (attempt %d):", attempt + 1);
    nginx_show(ng, "nginx.log");
    nginx_show(ng, "error.log");
  }
  return -1;
}

/* Removes one entry of nginx's folder, for nftw (deepest first). */
static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* Stops nginx (SIGTERM, then SIGKILL after 10 s) and removes its folder.
 * Returns 0 when it exited by itself. */
static int nginx_stop(nginx *ng) {
  int rc = 0;
  if (ng->pid > 0) {
    kill(ng->pid, SIGTERM);
    int status;
    bool gone = false;
    for (int i = 0; i < 1000 && !gone; i++) {
      gone = waitpid(ng->pid, &status, WNOHANG) == ng->pid;
      if (!gone)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (!gone) {
      fail("nginx did not exit; killing it");
      kill(ng->pid, SIGKILL);
      waitpid(ng->pid, &status, 0);
      rc = -1;
    }
    ng->pid = -1;
  }
  if (*ng->dir)
    nftw(ng->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  *ng->dir = '\0';
  return rc;
}

/* Stateless echo calls through nginx in front of two servers, against one
 * of those servers directly, at 1 and 16 connections. */
static void scenario_cluster(void) {
  const char *exe = nginx_program();
  if (exe == NULL) {
    fprintf(stderr, "bench_load: cluster: nginx is not installed; no "
                    "figures (cmake/deps.sh --cluster installs it)\n");
    return;
  }
  static const int conns[2] = {1, 16};
  const char *a1[] = {"--http", "127.0.0.1:0", "--node-id", "n1", NULL};
  const char *a2[] = {"--http", "127.0.0.1:0", "--node-id", "n2", NULL};
  proc b[2];
  nginx ng = {.pid = -1};
  start_http(&b[0], "bench_server", a1);
  start_http(&b[1], "bench_server", a2);
  if (b[0].pid > 0 && b[1].pid > 0) {
    const unsigned ports[2] = {b[0].port, b[1].port};
    if (nginx_start(&ng, exe, ports, 2) != 0) {
      fail("cluster: nginx did not start");
      failures++;
    }
  }
  char names[4][96];
  client cl[4];
  entry e[4];
  for (int i = 0; i < 2; i++) {
    const char *s = conns[i] > 1 ? "s" : "";
    snprintf(names[2 * i], sizeof names[0],
             "HTTP echo, stateless, direct to one backend, %d connection%s",
             conns[i], s);
    snprintf(names[2 * i + 1], sizeof names[0],
             "through nginx, 2 backends, %d connection%s (server: nginx)",
             conns[i], s);
    for (int k = 0; k < 2; k++) {
      proc *p = k == 0 ? &b[0] : &ng.worker;
      if (ng.pid <= 0)
        p = NULL; /* no contest without nginx */
      cl[2 * i + k] = (client){.epfd = -1};
      if (p && client_open(&cl[2 * i + k], p->port, conns[i]) != 0)
        p = NULL;
      e[2 * i + k] = (entry){.name = names[2 * i + k],
                             .kind = E_HTTP,
                             .p = p,
                             .cl = &cl[2 * i + k],
                             .mode = H_MODERN};
    }
  }
  if (ng.pid > 0)
    contest(e, 4, 5000000, 3);
  for (int i = 0; i < 4; i++)
    client_close(&cl[i]);
  if (nginx_stop(&ng) != 0)
    failures++;
  stop(&b[0]);
  stop(&b[1]);
  if (e[0].p == NULL || e[0].best.rate <= 0 || e[1].best.rate <= 0 ||
      e[2].best.rate <= 0 || e[3].best.rate <= 0)
    return;
  const stats *d1 = &e[0].best, *n1 = &e[1].best, *d16 = &e[2].best,
              *n16 = &e[3].best;
  add_row("HTTP echo through nginx to 2 backends, stateless, 16 connections",
          n16->rate, "calls/s", "direct, 1 backend", d16->rate, 0, NULL);
  add_row("  the same, 1 connection", n1->rate, "calls/s", "direct, 1 backend",
          d1->rate, 0, NULL);
  add_row("  p50 latency through nginx, 1 connection", n1->p50_us, "µs",
          "direct", d1->p50_us, 0, NULL);
  add_row("  added p50 latency through nginx, 1 connection",
          n1->p50_us - d1->p50_us, "µs", NULL, 0, 0, NULL);
  add_row("  p50 latency through nginx, 16 connections", n16->p50_us, "µs",
          "direct", d16->p50_us, 0, NULL);
  add_row("  added p50 latency through nginx, 16 connections",
          n16->p50_us - d16->p50_us, "µs", NULL, 0, 0, NULL);
  add_row("  nginx worker CPU per call, 16 connections", n16->server_us, "µs",
          "backend CPU, direct", d16->server_us, 0, NULL);
}

/* HTTPS against plain HTTP on one server process (runs bench_tls). */
static void scenario_tls(void) {
  char path[4352];
  snprintf(path, sizeof path, "%s/bench_tls", bin_dir);
  if (access(path, X_OK) != 0)
    return; /* built without the HTTP transport or without libssl */
  char *out = run_program("bench_tls", quick ? "16 30 1" : "200000 0.6 5");
  if (out == NULL) {
    failures++;
    return;
  }
  add_row("HTTPS echo, stateless 2026-07-28, 16 connections, one process",
          number_after(out, "tls_16_rate "), "calls/s", "plain HTTP",
          number_after(out, "plain_16_rate "), 0, NULL);
  add_row("  the same, 1 connection", number_after(out, "tls_1_rate "),
          "calls/s", "plain HTTP", number_after(out, "plain_1_rate "), 0, NULL);
  add_row("  p50 latency HTTPS, 1 connection",
          number_after(out, "tls_1_p50_us "), "µs", "plain HTTP",
          number_after(out, "plain_1_p50_us "), 0, NULL);
  add_row("  server CPU per call, HTTPS, 16 connections",
          number_after(out, "tls_16_server_us "), "µs", "plain HTTP",
          number_after(out, "plain_16_server_us "), 0, NULL);
  add_row("HTTPS handshakes/s (one call per new connection, sequential)",
          number_after(out, "tls_new_rate "), "conn/s",
          "plain, new connections", number_after(out, "plain_new_rate "), 0,
          NULL);
  add_row("  server CPU per new HTTPS connection (handshake and call)",
          number_after(out, "tls_new_server_us "), "µs", "plain HTTP",
          number_after(out, "plain_new_server_us "), 0, NULL);
  free(out);
}

/* RSS per open stream at 10,000 streams against bare libmicrohttpd holding
 * as many connections, and the fan-out of one update to every subscriber
 * (issue 20; runs bench_streams). */
static void scenario_streams(void) {
  char path[4352];
  snprintf(path, sizeof path, "%s/bench_streams", bin_dir);
  if (access(path, X_OK) != 0)
    return; /* built without the HTTP transport */
  const char *n = quick ? "200" : "10000";
  char *out = run_program("bench_streams", n);
  if (out == NULL) {
    failures++;
    return;
  }
  char fig[112];
  double bare = number_after(out, "bare libmicrohttpd RSS per connection: ");
  double same = number_after(
      out, "bare libmicrohttpd RSS per connection, same exchanges: ");
  snprintf(fig, sizeof fig,
           "RSS per connection, bare libmicrohttpd holding a stream, %s", n);
  add_row(fig, bare, "KiB", NULL, 0, 0, NULL);
  snprintf(fig, sizeof fig,
           "RSS per open stream, %s streams (half legacy, half 2026-07-28)", n);
  add_row(fig, number_after(out, "libmcp RSS per stream: "), "KiB",
          "bare libmicrohttpd", bare, 0, NULL);
  add_row("  beyond a bare connection holding a stream",
          number_after(out, "libmcp beyond libmicrohttpd: "), "KiB", NULL, 0, 0,
          NULL);
  /* A legacy stream's connection first carries initialize,
   * notifications/initialized and resources/subscribe, which make
   * libmicrohttpd touch more of its connection pool: the same exchanges
   * against the bare server show what of the difference is its own. */
  add_row("RSS per connection, bare libmicrohttpd, the same requests", same,
          "KiB", NULL, 0, 0, NULL);
  add_row("  libmcp beyond libmicrohttpd's own per-connection cost",
          number_after(out, "libmcp beyond libmicrohttpd, same exchanges: "),
          "KiB", NULL, 0, -4, "≤ 4 KiB");
  snprintf(fig, sizeof fig, "fan-out of one resource update to %s subscribers",
           n);
  add_row(fig, number_after(out, "subscribers: "), "ms", NULL, 0, -250,
          "≤ 250 ms");
  free(out);
}

typedef struct scenario {
  const char *name;
  void (*run)(void);
  bool http;
} scenario;

static const scenario scenarios[] = {
    {"stdio", scenario_stdio, false},   {"http", scenario_http, true},
    {"list", scenario_list, false},     {"big", scenario_big, false},
    {"wide", scenario_wide, false},     {"sessions", scenario_sessions, true},
    {"idle", scenario_idle, true},      {"alloc", scenario_alloc, false},
    {"schema", scenario_schema, false}, {"jwt", scenario_jwt, true},
    {"guard", scenario_guard, false},   {"cluster", scenario_cluster, true},
    {"tls", scenario_tls, true},        {"streams", scenario_streams, true},
};
#define NSCENARIOS (sizeof scenarios / sizeof *scenarios)

static void usage(void) {
  fprintf(stderr, "usage: bench_load [--quick] [--out FILE] [--bin DIR] "
                  "[SCENARIO...]\nscenarios:");
  for (size_t i = 0; i < NSCENARIOS; i++)
    fprintf(stderr, " %s", scenarios[i].name);
  fputc('\n', stderr);
}

int main(int argc, char **argv) {
  const char *out_path = NULL;
  bool chosen[NSCENARIOS] = {false}, any = false;
  /* By default the servers are this program's siblings. */
  ssize_t n = readlink("/proc/self/exe", bin_dir, sizeof bin_dir - 1);
  bin_dir[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(bin_dir, '/');
  if (slash)
    *slash = '\0';
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (strcmp(argv[i], "--bin") == 0 && i + 1 < argc) {
      snprintf(bin_dir, sizeof bin_dir, "%s", argv[++i]);
    } else {
      size_t k = 0;
      while (k < NSCENARIOS && strcmp(argv[i], scenarios[k].name) != 0)
        k++;
      if (k == NSCENARIOS) {
        usage();
        return 2;
      }
      chosen[k] = any = true;
    }
  }
  char *spec = getenv("MCP_TEST_LAUNCHER");
  char *spec_copy = spec && *spec ? strdup(spec) : NULL;
  for (char *save = NULL,
            *tok = spec_copy ? strtok_r(spec_copy, " ", &save) : NULL;
       tok; tok = strtok_r(NULL, " ", &save)) {
    launcher = xrealloc(launcher, (nlauncher + 1) * sizeof *launcher);
    launcher[nlauncher++] = tok;
  }
  if (bench_wide_make(wide_schema, sizeof wide_schema, wide_args,
                      sizeof wide_args) != 0)
    return 1;
  char mhd[4352];
  snprintf(mhd, sizeof mhd, "%s/bench_mhd", bin_dir);
  bool http = access(mhd, X_OK) == 0;
  watchdog_start();
  sched_getaffinity(0, sizeof all_cpus, &all_cpus);
  for (size_t k = 0; k < NSCENARIOS; k++) {
    if ((any && !chosen[k]) || (scenarios[k].http && !http && !any))
      continue;
    fprintf(stderr, "bench_load: %s\n", scenarios[k].name);
    scenarios[k].run();
  }
  print_report(stdout);
  if (out_path) {
    FILE *f = fopen(out_path, "w");
    if (f == NULL) {
      fail("cannot write %s: %s", out_path, strerror(errno));
      failures++;
    } else {
      print_report(f);
      fclose(f);
    }
  }
  free(launcher);
  free(spec_copy);
  if (failures)
    fprintf(stderr, "bench_load: %d step(s) failed\n", failures);
  else if (target_misses && !quick)
    fprintf(stderr, "bench_load: %d target(s) missed (see the table)\n",
            target_misses);
  return failures ? 1 : 0;
}
