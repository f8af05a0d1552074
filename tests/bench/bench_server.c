/* bench_server: the server bench_load measures, written on the public API
 * only, the way a user's server would be.
 *
 *   bench_server [--stdio | --http ADDR:PORT [--tls-cert FILE --tls-key FILE]
 *                [--node-id ID]] [--tools N] [--page-size N]
 *                [--max-sessions N]
 *
 * Its tools: echo (read-only, closed-world) answers the text it is given;
 * wide takes the 100-field object of bench_tools.h and says how many fields
 * it got; --tools N fills up to N tools in all with generated ones, for the
 * listing and idle-memory figures. --page-size sets how many tools one
 * tools/list page holds (default: the library's).
 *
 * With --http it serves Streamable HTTP with the library's defaults (one
 * polling thread), prints "listening on http://ADDR:PORT/mcp" on standard
 * error and serves until SIGINT or SIGTERM. --max-sessions raises the cap
 * on legacy sessions for the idle-session figures. With --tls-cert and
 * --tls-key (PEM files) it serves HTTPS instead and says "listening on
 * https://ADDR:PORT/mcp" (bench_tls); --node-id names the process in a
 * deployment of several (the nginx figures of bench_load's cluster). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <mcp/mcp.h>
#ifdef BENCH_HTTP
#include <mcp/http.h>
#include <pthread.h>
#include <signal.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tools.h"

static int echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text;
  int rc = mcp_call_arg_string(call, "text", &text);
  return rc ? rc : mcp_result_text(call, text);
}

static int wide(mcp_call *call, void *user_data) {
  (void)user_data;
  char text[64];
  snprintf(text, sizeof text, "got %d fields",
           cJSON_GetArraySize(mcp_call_arguments(call)));
  return mcp_result_text(call, text);
}

static int lookup(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *id;
  int rc = mcp_call_arg_string(call, "id", &id);
  return rc ? rc : mcp_result_text(call, "no such record");
}

static const mcp_tool echo_tool = {
    .name = "echo",
    .title = "Echo",
    .description = BENCH_ECHO_DESCRIPTION,
    .input_schema = BENCH_ECHO_SCHEMA,
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = echo,
};

static int add_tools(mcp_server *srv, unsigned ntools) {
  static char wide_schema[16384];
  if (bench_wide_make(wide_schema, sizeof wide_schema, NULL, 0) != 0)
    return -1;
  const mcp_tool wide_tool = {
      .name = "wide",
      .title = "Wide",
      .description = BENCH_WIDE_DESCRIPTION,
      .input_schema = wide_schema,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = wide,
  };
  if (mcp_server_add_tool(srv, &echo_tool, NULL) != 0 ||
      mcp_server_add_tool(srv, &wide_tool, NULL) != 0)
    return -1;
  for (unsigned i = 0; i + BENCH_BUILTIN_TOOLS < ntools; i++) {
    bench_gen_tool g;
    bench_gen_tool_make(i, &g);
    const mcp_tool t = {
        .name = g.name,
        .title = g.title,
        .description = g.description,
        .input_schema = BENCH_GEN_SCHEMA,
        .annotations = bench_gen_hints(g.kind),
        .handler = lookup,
    };
    if (mcp_server_add_tool(srv, &t, NULL) != 0)
      return -1;
  }
  return 0;
}

#ifdef BENCH_HTTP
/* How to serve HTTP: the command line's --http and what goes with it. */
typedef struct http_args {
  char *spec;            /* --http ADDR:PORT */
  const char *tls_cert;  /* --tls-cert: HTTPS with this chain */
  const char *tls_key;   /* --tls-key: and this key */
  const char *node_id;   /* --node-id */
  unsigned max_sessions; /* --max-sessions; 0 = the library's */
} http_args;

/* Serves HTTP (HTTPS with a certificate) until SIGINT or SIGTERM. */
static int serve_http(mcp_server *srv, const mcp_principal *who,
                      const http_args *ha) {
  char *spec = ha->spec;
  char *colon = strrchr(spec, ':');
  char *end = NULL;
  unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (colon == NULL || colon == spec || end == colon + 1 || *end != '\0' ||
      port > 65535) {
    fprintf(stderr, "bench_server: --http wants ADDR:PORT\n");
    return 2;
  }
  *colon = '\0';
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  /* The load driver connects from one address, with a few hundred
   * keep-alive connections that wait idle while other runs take their
   * turn (slowly, under valgrind). */
  const mcp_http_tls tls = {.cert_file = ha->tls_cert, .key_file = ha->tls_key};
  const mcp_http_options opts = {.bind_addr = spec,
                                 .port = (uint16_t)port,
                                 .principal = who,
                                 .per_ip_connections = 512,
                                 .connection_timeout_s = 600,
                                 .max_sessions = ha->max_sessions,
                                 .node_id = ha->node_id,
                                 .tls = ha->tls_cert ? &tls : NULL};
  mcp_http *http;
  int rc = mcp_http_start(srv, &opts, &http);
  if (rc != 0) {
    fprintf(stderr, "bench_server: cannot serve HTTP on %s port %lu: %s\n",
            spec, port, mcp_strerror(rc));
    return 1;
  }
  fprintf(stderr, "listening on %s://%s:%u/mcp\n",
          ha->tls_cert ? "https" : "http", spec, (unsigned)mcp_http_port(http));
  int sig;
  sigwait(&stop, &sig);
  mcp_http_stop(http);
  return 0;
}
#endif

/* A count from the command line, or 0 when it is not one. */
static unsigned number(const char *s) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  return *s && *end == '\0' && v <= 1000000 ? (unsigned)v : 0;
}

/* Says how to call this program, on standard error. */
static void usage(void) {
  fprintf(stderr,
          "usage: bench_server [--stdio | --http ADDR:PORT [--tls-cert FILE "
          "--tls-key FILE] [--node-id ID]] [--tools N] [--page-size N] "
          "[--max-sessions N]\n");
}

int main(int argc, char **argv) {
  char *http = NULL;
  const char *tls_cert = NULL, *tls_key = NULL, *node_id = NULL;
  unsigned ntools = BENCH_BUILTIN_TOOLS, page_size = 0, max_sessions = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--stdio") == 0)
      http = NULL;
    else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc)
      http = argv[++i];
    else if (strcmp(argv[i], "--tls-cert") == 0 && i + 1 < argc)
      tls_cert = argv[++i];
    else if (strcmp(argv[i], "--tls-key") == 0 && i + 1 < argc)
      tls_key = argv[++i];
    else if (strcmp(argv[i], "--node-id") == 0 && i + 1 < argc)
      node_id = argv[++i];
    else if (strcmp(argv[i], "--tools") == 0 && i + 1 < argc)
      ntools = number(argv[++i]);
    else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc)
      page_size = number(argv[++i]);
    else if (strcmp(argv[i], "--max-sessions") == 0 && i + 1 < argc)
      max_sessions = number(argv[++i]);
    else {
      usage();
      return 2;
    }
  }
  if ((tls_cert == NULL) != (tls_key == NULL) ||
      (http == NULL && (tls_cert || node_id))) {
    usage();
    return 2;
  }
  mcp_server *srv;
  const mcp_server_info info = {.name = "bench", .version = mcp_version()};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (add_tools(srv, ntools) != 0) {
    fprintf(stderr, "bench_server: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  if (page_size)
    mcp_server_set_page_size(srv, page_size);
  /* A principal of our own, so the stdio transport does not print its
   * note about the local user on every start. */
  const mcp_principal who = {.subject = "bench", .all_scopes = true};
  int rc;
  if (http) {
#ifdef BENCH_HTTP
    const http_args ha = {.spec = http,
                          .tls_cert = tls_cert,
                          .tls_key = tls_key,
                          .node_id = node_id,
                          .max_sessions = max_sessions};
    rc = serve_http(srv, &who, &ha);
#else
    (void)max_sessions;
    fprintf(stderr, "bench_server: built without the HTTP transport\n");
    rc = 2;
#endif
  } else {
    const mcp_stdio_options o = {.principal = &who};
    rc = mcp_serve_stdio(srv, &o) == 0 ? 0 : 1;
  }
  mcp_server_free(srv);
  return rc;
}
