/* bench_alloc: heap allocations per tools/call on the echo path, counted
 * through the allocator hook (mcp_set_allocator), and the engine's own rate
 * with no transport at all.
 *
 *   bench_alloc [calls]        default 100000
 *
 * One session is driven with mcp_session_receive, as the stdio transport
 * drives it (that transport allocates nothing per message: its line buffer
 * is made once), first in a legacy session (initialize, then tools/call),
 * then with stateless 2026-07-28 requests on a fresh session. Every reply
 * is checked. Prints one "name value" line per figure:
 *
 *   legacy_allocs    allocations (malloc, calloc, realloc) per call
 *   legacy_reallocs  of which reallocs of a block that existed
 *   legacy_bytes     bytes asked for per call
 *   legacy_rate      calls per second through mcp_session_receive
 *   modern_...       the same for 2026-07-28 requests
 *   tool_bytes       heap bytes held per registered tool (the generated
 *   tool_blocks      tools of bench_tools.h), in how many blocks
 *   session_bytes    heap bytes held per initialized, idle session (the
 *   session_blocks   engine's part; a transport adds its own)
 *
 * Exits non-zero if a reply is wrong or memory is left allocated. */
#define _POSIX_C_SOURCE 200809L
#include <mcp/mcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_tools.h"

typedef struct counts {
  unsigned long long mallocs, reallocs, frees, bytes;
  long long live, live_bytes;
} counts;

static counts c;

/* Each block carries its size in front, so that live bytes are known. */
typedef union header {
  size_t size;
  max_align_t align;
} header;

static void *count_malloc(size_t n, void *user_data) {
  (void)user_data;
  c.mallocs++;
  c.bytes += n;
  header *h = malloc(sizeof *h + n);
  if (h == NULL)
    return NULL;
  h->size = n;
  c.live++;
  c.live_bytes += (long long)n;
  return h + 1;
}

static void *count_realloc(void *p, size_t n, void *user_data) {
  if (p == NULL)
    return count_malloc(n, user_data);
  c.reallocs++;
  c.bytes += n;
  header *h = (header *)p - 1;
  size_t old = h->size;
  header *q = realloc(h, sizeof *q + n);
  if (q == NULL)
    return NULL;
  q->size = n;
  c.live_bytes += (long long)n - (long long)old;
  return q + 1;
}

static void count_free(void *p, void *user_data) {
  (void)user_data;
  if (p == NULL)
    return;
  header *h = (header *)p - 1;
  c.frees++;
  c.live--;
  c.live_bytes -= (long long)h->size;
  free(h);
}

/* What the session sent last, checked after each message. */
typedef struct reply {
  char text[512];
  size_t len;
  unsigned count;
} reply;

static int on_send(const char *message, size_t len, void *user_data) {
  reply *r = user_data;
  r->count++;
  r->len = len < sizeof r->text - 1 ? len : sizeof r->text - 1;
  memcpy(r->text, message, r->len);
  r->text[r->len] = '\0';
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text;
  int rc = mcp_call_arg_string(call, "text", &text);
  return rc ? rc : mcp_result_text(call, text);
}

static const mcp_tool echo_tool = {
    .name = "echo",
    .description = BENCH_ECHO_DESCRIPTION,
    .input_schema = BENCH_ECHO_SCHEMA,
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = echo,
};

/* Sends one echo call with id i and checks its reply. */
static int call_once(mcp_session *s, reply *r, long i, bool modern) {
  char msg[512], want[64];
  int n = snprintf(
      msg, sizeof msg,
      "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"echo\",\"arguments\":{\"text\":\"hello %ld\"}%s}}",
      i, i,
      modern ? ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
               "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":"
               "{}}"
             : "");
  unsigned before = r->count;
  if (mcp_session_receive(s, msg, (size_t)n) != 0 || r->count != before + 1)
    return -1;
  snprintf(want, sizeof want, "\"id\":%ld,", i);
  if (strstr(r->text, want) == NULL || strstr(r->text, "\"error\"") != NULL)
    return -1;
  snprintf(want, sizeof want, "\"text\":\"hello %ld\"", i);
  return strstr(r->text, want) ? 0 : -1;
}

static int measure(mcp_session *s, reply *r, long calls, bool modern,
                   long *id) {
  const char *era = modern ? "modern" : "legacy";
  for (long i = 0; i < 1000; i++) /* warm every cache and free list */
    if (call_once(s, r, (*id)++, modern) != 0)
      goto bad;
  counts start = c;
  double t0 = now();
  for (long i = 0; i < calls; i++)
    if (call_once(s, r, (*id)++, modern) != 0)
      goto bad;
  double secs = now() - t0;
  double n = (double)calls;
  printf("%s_allocs %.2f\n", era,
         (double)(c.mallocs - start.mallocs + c.reallocs - start.reallocs) / n);
  printf("%s_reallocs %.2f\n", era, (double)(c.reallocs - start.reallocs) / n);
  printf("%s_bytes %.0f\n", era, (double)(c.bytes - start.bytes) / n);
  printf("%s_rate %.0f\n", era, n / secs);
  return 0;
bad:
  fprintf(stderr, "bench_alloc: wrong %s reply: %.*s\n", era, (int)r->len,
          r->text);
  return -1;
}

static int lookup(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "no such record");
}

/* What tools and idle sessions hold on the heap, each. */
static int memory(mcp_server *srv, unsigned n) {
  counts start = c;
  for (unsigned i = 0; i < n; i++) {
    bench_gen_tool g;
    bench_gen_tool_make(i, &g);
    const mcp_tool t = {.name = g.name,
                        .title = g.title,
                        .description = g.description,
                        .input_schema = BENCH_GEN_SCHEMA,
                        .annotations = bench_gen_hints(g.kind),
                        .handler = lookup};
    if (mcp_server_add_tool(srv, &t, NULL) != 0) {
      fprintf(stderr, "bench_alloc: %s\n", mcp_server_errmsg(srv));
      return -1;
    }
  }
  printf("tool_bytes %.0f\n", (double)(c.live_bytes - start.live_bytes) / n);
  printf("tool_blocks %.1f\n", (double)(c.live - start.live) / n);

  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"bench\",\"version\":\"1\"}}}";
  static const char initialized[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  const mcp_principal who = {.subject = "bench", .all_scopes = true};
  mcp_session **all = calloc(n, sizeof *all);
  reply r = {0};
  int rc = all ? 0 : -1;
  start = c;
  for (unsigned i = 0; rc == 0 && i < n; i++)
    if (mcp_session_new(srv, &who, on_send, &r, &all[i]) != 0 ||
        mcp_session_receive(all[i], init, sizeof init - 1) != 0 ||
        mcp_session_receive(all[i], initialized, sizeof initialized - 1) != 0)
      rc = -1;
  if (rc == 0) {
    printf("session_bytes %.0f\n",
           (double)(c.live_bytes - start.live_bytes) / n);
    printf("session_blocks %.1f\n", (double)(c.live - start.live) / n);
  }
  for (unsigned i = 0; all && i < n; i++)
    mcp_session_free(all[i]);
  free(all);
  return rc;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 100000;
  if (calls < 1)
    calls = 1;
  const mcp_allocator counting = {.malloc_fn = count_malloc,
                                  .realloc_fn = count_realloc,
                                  .free_fn = count_free};
  if (mcp_set_allocator(&counting) != 0)
    return 1;
  mcp_server *srv;
  const mcp_server_info info = {.name = "bench", .version = "1"};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (mcp_server_add_tool(srv, &echo_tool, NULL) != 0) {
    fprintf(stderr, "bench_alloc: %s\n", mcp_server_errmsg(srv));
    return 1;
  }
  reply r = {0};
  const mcp_principal who = {.subject = "bench", .all_scopes = true};
  mcp_session *s;
  if (mcp_session_new(srv, &who, on_send, &r, &s) != 0)
    return 1;
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"bench\",\"version\":\"1\"}}}";
  static const char initialized[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  int rc = mcp_session_receive(s, init, sizeof init - 1) != 0 ||
           mcp_session_receive(s, initialized, sizeof initialized - 1) != 0 ||
           r.count != 1;
  long id = 1;
  if (rc == 0)
    rc = measure(s, &r, calls, false, &id);
  mcp_session_free(s);
  /* 2026-07-28 requests carry their version in _meta and need no
   * initialize: stateless, on a session of their own. */
  if (rc == 0 && mcp_session_new(srv, &who, on_send, &r, &s) == 0) {
    rc = measure(s, &r, calls, true, &id);
    mcp_session_free(s);
  }
  if (rc == 0)
    rc = memory(srv, calls < 1000 ? 50 : 1000);
  mcp_server_free(srv);
  if (rc == 0 && c.live != 0) {
    fprintf(stderr, "bench_alloc: %lld allocations never freed\n", c.live);
    rc = 1;
  }
  return rc ? 1 : 0;
}
