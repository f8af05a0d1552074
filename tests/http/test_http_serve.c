/* Serving until a signal (lib/http/http_serve.c, include/mcp/http.h): the
 * common flags read without writing to argv, the pairs they must come in,
 * and mcp_http_serve_until_signal on a loopback port: its listening line,
 * SIGHUP re-reading the JWKS file, SIGTERM stopping it with the calls
 * still deferred cancelled and the caller's signal mask given back, the
 * tasks still working cancelled when the server is freed after it, and
 * each failure said on standard error with nothing left running.
 *
 * The server runs on a thread of the test, and the signals are sent to
 * that thread (pthread_kill), never to the process. What the library
 * writes to standard error goes to a file while a test runs (see
 * capture_start), where the tests read it. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <mcp/http.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "jwt_sign.h"
#include "testutil.h"
#include "tools.h"

/* ---- standard error, captured ------------------------------------------- */

static char capture_path[512];
static int saved_stderr = -1;

/* A new temporary file's name in path (size bytes), in $TMPDIR. */
static void temp_file(char *path, size_t size, const char *name) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, size, "%s/%s.XXXXXX", dir && *dir ? dir : "/tmp", name);
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

/* Sends this process's standard error to a new temporary file. */
static void capture_start(void) {
  temp_file(capture_path, sizeof capture_path, "test_http_serve");
  int fd = open(capture_path, O_WRONLY | O_TRUNC);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  saved_stderr = dup(2);
  ck_assert_int_ge(saved_stderr, 0);
  ck_assert_int_eq(dup2(fd, 2), 2);
  close(fd);
}

/* What standard error received so far (caller frees). */
static char *captured(void) {
  fflush(stderr);
  FILE *f = fopen(capture_path, "rb");
  ck_assert_ptr_nonnull(f);
  char *text = calloc(1, 65536);
  ck_assert_ptr_nonnull(text);
  size_t n = fread(text, 1, 65535, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* Gives standard error back; returns what the file received (caller
 * frees). */
static char *capture_end(void) {
  char *text = captured();
  dup2(saved_stderr, 2);
  close(saved_stderr);
  saved_stderr = -1;
  unlink(capture_path);
  return text;
}

/* Waits (bounded) until standard error holds needle; returns the text
 * from needle on (caller frees), or NULL when it never came. */
static char *await_text(const char *needle) {
  long deadline = lc_now_ms() + (lc_slow_run() ? 120000 : 30000);
  while (lc_now_ms() < deadline) {
    char *text = captured();
    char *at = strstr(text, needle);
    if (at) {
      char *rest = strdup(at);
      free(text);
      return rest;
    }
    free(text);
    lc_sleep_ms(10);
  }
  return NULL;
}

/* ---- the flags ----------------------------------------------------------- */

/* Every common flag is taken, its value kept as the pointer into argv it
 * was, the index moved to that value; argv's bytes are the same after. */
START_TEST(serve_arg_takes_each_flag) {
  char a0[] = "daemon", a1[] = "--http", a2[] = "127.0.0.1:8080",
       a3[] = "--tls-cert", a4[] = "c.pem", a5[] = "--tls-key", a6[] = "k.pem",
       a7[] = "--jwks", a8[] = "jwks.json", a9[] = "--issuer",
       a10[] = "https://as", a11[] = "--audience", a12[] = "https://rs/mcp",
       a13[] = "--node-id", a14[] = "n1", a15[] = "--own", a16[] = "--http",
       a17[] = "[::1]:0";
  char *argv[] = {a0, a1,  a2,  a3,  a4,  a5,  a6,  a7,  a8,
                  a9, a10, a11, a12, a13, a14, a15, a16, a17};
  int argc = (int)TU_COUNT(argv);
  char *before[TU_COUNT(argv)];
  for (int i = 0; i < argc; i++)
    before[i] = strdup(argv[i]);
  mcp_http_serve_options o = {.program = "daemon"};
  int own = 0;
  for (int i = 1; i < argc; i++) {
    int at = i;
    int took = mcp_http_serve_arg(&o, argc, argv, &i);
    ck_assert_int_ge(took, 0);
    if (took) {
      ck_assert_int_eq(i, at + 1);
      continue;
    }
    ck_assert_int_eq(i, at); /* not a common flag: left alone */
    ck_assert_str_eq(argv[i], "--own");
    own++;
  }
  ck_assert_int_eq(own, 1);
  ck_assert_ptr_eq(o.listen, a17); /* the last --http wins */
  ck_assert_ptr_eq(o.tls_cert_file, a4);
  ck_assert_ptr_eq(o.tls_key_file, a6);
  ck_assert_ptr_eq(o.jwks_file, a8);
  ck_assert_ptr_eq(o.issuer, a10);
  ck_assert_ptr_eq(o.audience, a12);
  ck_assert_ptr_eq(o.node_id, a14);
  for (int i = 0; i < argc; i++) {
    ck_assert_str_eq(argv[i], before[i]);
    free(before[i]);
  }
  ck_assert_int_eq(mcp_http_serve_check(&o), 0);
}
END_TEST

/* --http takes ADDR:PORT (ADDR an IPv4 or IPv6 literal, the IPv6 one with
 * brackets or without) and systemd, and refuses every other form with one
 * line, changing nothing. */
START_TEST(serve_arg_http_forms) {
  static const char *const good[] = {"127.0.0.1:0", "0.0.0.0:65535",
                                     "[::1]:8080",  "::1:8080",
                                     "systemd",     "10.1.2.3:00080"};
  static const char *const bad[] = {
      "127.0.0.1", "127.0.0.1:", ":8080", "[]:80", "127.0.0.1:65536",
      "127.0.0.1:80a", "127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:-1",
      "127.0.0.1:123456", "", "systemd:",
      "1111111111111111111111111111111111111111111111111111111111111111:80",
      /* The address an IPv4 or IPv6 literal (the IPv6 one alone in
       * brackets), as mcp_http_start takes it. */
      "[::1", "[:80", "]:80", "[::1]]:80", "[[::1]]:80", "[127.0.0.1]:80",
      "::1]:80", "a b:80", "localhost:80", "x:00080", "127.0.0.256:80",
      "127.0.0.1 :80"};
  for (size_t k = 0; k < TU_COUNT(good); k++) {
    char flag[] = "--http", value[80];
    snprintf(value, sizeof value, "%s", good[k]);
    char *argv[] = {flag, value};
    mcp_http_serve_options o = {0};
    int i = 0;
    ck_assert_int_eq(mcp_http_serve_arg(&o, 2, argv, &i), 1);
    ck_assert_int_eq(i, 1);
    ck_assert_ptr_eq(o.listen, value);
    ck_assert_str_eq(value, good[k]);
  }
  capture_start();
  for (size_t k = 0; k < TU_COUNT(bad); k++) {
    char flag[] = "--http", value[80];
    snprintf(value, sizeof value, "%s", bad[k]);
    char *argv[] = {flag, value};
    mcp_http_serve_options o = {.program = "daemon"};
    int i = 0;
    ck_assert_msg(mcp_http_serve_arg(&o, 2, argv, &i) == MCP_EINVAL,
                  "--http %s taken", bad[k]);
    ck_assert_int_eq(i, 0);
    ck_assert_ptr_null(o.listen);
    ck_assert_str_eq(value, bad[k]);
  }
  char *err = capture_end();
  size_t lines = 0;
  for (const char *p = err; (p = strstr(p, "daemon: --http wants ADDR:PORT, "
                                           "e.g. 127.0.0.1:8080\n"));
       p++)
    lines++;
  ck_assert_msg(lines == TU_COUNT(bad), "%zu lines: %s", lines, err);
  free(err);
}
END_TEST

/* A flag without its value, and calls that make no sense, are refused. */
START_TEST(serve_arg_refusals) {
  char a0[] = "daemon", a1[] = "--tls-key";
  char *argv[] = {a0, a1};
  mcp_http_serve_options o = {0};
  int i = 1;
  capture_start();
  ck_assert_int_eq(mcp_http_serve_arg(&o, 2, argv, &i), MCP_EINVAL);
  char *err = capture_end();
  ck_assert_str_eq(err, "libmcp: --tls-key needs a value\n");
  free(err);
  ck_assert_int_eq(i, 1);
  ck_assert_ptr_null(o.tls_key_file);
  i = 2;
  ck_assert_int_eq(mcp_http_serve_arg(&o, 2, argv, &i), MCP_EINVAL);
  i = -1;
  ck_assert_int_eq(mcp_http_serve_arg(&o, 2, argv, &i), MCP_EINVAL);
  i = 1;
  ck_assert_int_eq(mcp_http_serve_arg(NULL, 2, argv, &i), MCP_EINVAL);
  ck_assert_int_eq(mcp_http_serve_arg(&o, 2, NULL, &i), MCP_EINVAL);
  ck_assert_int_eq(mcp_http_serve_arg(&o, 2, argv, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_http_serve_check(NULL), MCP_EINVAL);
}
END_TEST

/* The pairs: each combination mcp_http_serve_check accepts or refuses. */
START_TEST(serve_check_pairs) {
  static const struct {
    mcp_http_serve_options o;
    const char *says; /* NULL: accepted */
  } rows[] = {
      {{0}, NULL},
      {{.listen = "127.0.0.1:0"}, NULL},
      {{.listen = "systemd", .tls_cert_file = "c", .tls_key_file = "k"}, NULL},
      {{.listen = "127.0.0.1:0",
        .jwks_file = "j",
        .issuer = "i",
        .audience = "a"},
       NULL},
      {{.node_id = "n1"}, NULL}, /* as notes always took it */
      {{.listen = "127.0.0.1:0", .tls_cert_file = "c"}, "--tls-cert and"},
      {{.listen = "127.0.0.1:0", .tls_key_file = "k"}, "--tls-cert and"},
      {{.tls_cert_file = "c", .tls_key_file = "k"}, "--tls-cert and"},
      {{.listen = "127.0.0.1:0", .jwks_file = "j"}, "--jwks, --issuer"},
      {{.listen = "127.0.0.1:0", .issuer = "i", .audience = "a"},
       "--jwks, --issuer"},
      {{.jwks_file = "j", .issuer = "i", .audience = "a"}, "--jwks, --issuer"},
  };
  for (size_t k = 0; k < TU_COUNT(rows); k++) {
    capture_start();
    int rc = mcp_http_serve_check(&rows[k].o);
    char *err = capture_end();
    if (rows[k].says == NULL) {
      ck_assert_msg(rc == 0 && err[0] == '\0', "row %zu: %d %s", k, rc, err);
    } else {
      ck_assert_msg(rc == MCP_EINVAL, "row %zu accepted", k);
      ck_assert_msg(strncmp(err, "libmcp: ", 8) == 0 &&
                        strstr(err, rows[k].says) && strstr(err, "--http\n"),
                    "row %zu: %s", k, err);
    }
    free(err);
  }
}
END_TEST

/* ---- serving ------------------------------------------------------------- */

/* A server serving on a thread of its own. */
typedef struct serve_run {
  mcp_server *srv;
  mcp_http_serve_options opts;
  int rc;
  sigset_t before, after; /* the thread's mask around the call */
  pthread_t thread;
} serve_run;

static void *serve_main(void *arg) {
  serve_run *r = arg;
  pthread_sigmask(SIG_SETMASK, NULL, &r->before);
  r->rc = mcp_http_serve_until_signal(r->srv, &r->opts);
  pthread_sigmask(SIG_SETMASK, NULL, &r->after);
  return NULL;
}

/* Starts r on its thread, with SIGINT, SIGTERM and SIGHUP unblocked there
 * (the test's thread keeps its own mask), and waits for its listening
 * line on 127.0.0.1: returns its port. */
static uint16_t serve_start(serve_run *r) {
  sigset_t three, old;
  sigemptyset(&three);
  sigaddset(&three, SIGINT);
  sigaddset(&three, SIGTERM);
  sigaddset(&three, SIGHUP);
  pthread_sigmask(SIG_UNBLOCK, &three, &old);
  ck_assert_int_eq(pthread_create(&r->thread, NULL, serve_main, r), 0);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  char *line = await_text("listening on ");
  ck_assert_msg(line != NULL, "no listening line");
  unsigned port = 0;
  char tail[16] = "";
  ck_assert_msg(
      sscanf(line, "listening on http://127.0.0.1:%u%15s", &port, tail) == 2 &&
          tail[0] == '/' && port > 0 && port < 65536,
      "%s", line);
  free(line);
  return (uint16_t)port;
}

/* Stops r with sig (sent twice: the second is taken too, never delivered
 * once the mask is given back) and checks what it returned and its mask. */
static void serve_stop(serve_run *r, int sig) {
  pthread_kill(r->thread, sig);
  pthread_kill(r->thread, sig);
  pthread_join(r->thread, NULL);
  ck_assert_int_eq(r->rc, 0);
  for (int s = 1; s < 32; s++)
    ck_assert_int_eq(sigismember(&r->after, s), sigismember(&r->before, s));
  ck_assert_int_eq(sigismember(&r->after, SIGTERM), 0);
}

static int answer(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "answered");
}

static const mcp_tool answer_tool = TC_TOOL_RUN(answer);

static mcp_server *server_new(void) {
  mcp_server *srv;
  const mcp_server_info info = {.name = "serve", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &answer_tool, NULL), 0);
  return srv;
}

/* A 2026-07-28 tools/call of run on port; returns the HTTP status. */
static long call_run(CURL *c, uint16_t port, const char *auth) {
  const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"run\"," LC_META("{}") "}}";
  lc_req q = {.body = body,
              .version = LC_MODERN,
              .headers = {"Mcp-Method: tools/call", "Mcp-Name: run", auth}};
  lc_resp r;
  lc_http(c, port, &q, &r);
  long status = r.status;
  if (status == 200)
    ck_assert_ptr_nonnull(strstr(r.body.p, "answered"));
  lc_resp_free(&r);
  return status;
}

/* Serves until SIGTERM: the line, a call answered, 0 returned, the
 * thread's mask given back, and the port closed. */
START_TEST(serve_until_sigterm) {
  serve_run r = {.srv = server_new(), .opts = {.listen = "127.0.0.1:0"}};
  capture_start();
  uint16_t port = serve_start(&r);
  CURL *c = curl_easy_init();
  ck_assert_int_eq(call_run(c, port, NULL), 200);
  curl_easy_cleanup(c);
  serve_stop(&r, SIGTERM);
  char *err = capture_end();
  char want[64];
  snprintf(want, sizeof want, "listening on http://127.0.0.1:%u/mcp\n",
           (unsigned)port);
  ck_assert_str_eq(err, want); /* that line, and nothing else */
  free(err);
  ck_assert_int_eq(lc_connect(port, NULL), -1); /* nothing listens */
  mcp_server_free(r.srv);
}
END_TEST

/* SIGINT stops it too; options of mcp_http_start given through http
 * (the path, in the line) and a principal are used. */
START_TEST(serve_until_sigint_with_options) {
  static const char *const scopes[] = {"a", NULL};
  const mcp_principal who = {.subject = "local", .scopes = scopes};
  const mcp_http_options http = {.path = "/rpc"};
  serve_run r = {.srv = server_new(),
                 .opts = {.http = &http, .principal = &who}};
  capture_start();
  uint16_t port = serve_start(&r); /* no listen: http's (127.0.0.1) */
  (void)port;
  serve_stop(&r, SIGINT);
  char *err = capture_end();
  char want[64];
  snprintf(want, sizeof want, ":%u/rpc\n", (unsigned)port);
  ck_assert_msg(strstr(err, want) != NULL, "%s", err);
  free(err);
  mcp_server_free(r.srv);
}
END_TEST

/* Writes text to path. */
static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* A P-256 key and a JWKS file in path (a temporary file named after name)
 * holding its public half as "k1". Free the key; unlink the file. */
static EVP_PKEY *jwks_file(char *path, size_t size, const char *name) {
  EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  ck_assert_ptr_nonnull(k);
  char *jwk = tc_jwk(k, "k1", NULL, 0);
  char jwks[4096];
  snprintf(jwks, sizeof jwks, "{\"keys\":[%s]}", jwk);
  free(jwk);
  temp_file(path, size, name);
  write_file(path, jwks);
  return k;
}

/* --jwks: a resource server (401 without a token); SIGHUP re-reads the
 * file, and a file no longer usable leaves the last good keys, each said
 * on a line. */
START_TEST(serve_sighup_rereads_jwks) {
  char path[512];
  EVP_PKEY *k = jwks_file(path, sizeof path, "test_http_serve_jwks");
  serve_run r = {.srv = server_new(),
                 .opts = {.listen = "127.0.0.1:0",
                          .jwks_file = path,
                          .issuer = "https://as.example",
                          .audience = "http://127.0.0.1/mcp",
                          .program = "daemon"}};
  capture_start();
  uint16_t port = serve_start(&r);
  CURL *c = curl_easy_init();
  ck_assert_int_eq(call_run(c, port, NULL), 401);
  pthread_kill(r.thread, SIGHUP);
  char want[600];
  snprintf(want, sizeof want, "daemon: %s re-read\n", path);
  char *said = await_text(want);
  ck_assert_msg(said != NULL, "no re-read line");
  free(said);
  write_file(path, "not a key set");
  pthread_kill(r.thread, SIGHUP);
  snprintf(want, sizeof want, "daemon: %s not used (the last good keys stay)\n",
           path);
  said = await_text(want);
  ck_assert_msg(said != NULL, "no not-used line");
  free(said);
  ck_assert_int_eq(call_run(c, port, NULL), 401); /* still serving */
  curl_easy_cleanup(c);
  serve_stop(&r, SIGTERM);
  free(capture_end());
  unlink(path);
  EVP_PKEY_free(k);
  mcp_server_free(r.srv);
}
END_TEST

/* --jwks with the program's scopes_supported: the protected resource
 * metadata lists those (a scope only step-up asks for among them), not the
 * union of the tools' scopes, which is empty here. */
START_TEST(serve_jwks_lists_the_programs_scopes) {
  char path[512];
  EVP_PKEY *k = jwks_file(path, sizeof path, "test_http_serve_scopes");
  static const char *const scopes[] = {"notes:read", "notes:admin", NULL};
  serve_run r = {.srv = server_new(),
                 .opts = {.listen = "127.0.0.1:0",
                          .jwks_file = path,
                          .issuer = "https://as.example",
                          .audience = "http://127.0.0.1/mcp",
                          .scopes_supported = scopes,
                          .program = "daemon"}};
  capture_start();
  uint16_t port = serve_start(&r);
  CURL *c = curl_easy_init();
  lc_req q = {.method = "GET",
              .path = "/.well-known/oauth-protected-resource/mcp"};
  lc_resp resp;
  lc_http(c, port, &q, &resp);
  ck_assert_int_eq(resp.status, 200);
  ck_assert_msg(resp.body.p &&
                    strstr(resp.body.p, "\"scopes_supported\":[\"notes:read\","
                                        "\"notes:admin\"]"),
                "%s", resp.body.p ? resp.body.p : "");
  lc_resp_free(&resp);
  curl_easy_cleanup(c);
  serve_stop(&r, SIGTERM);
  free(capture_end());
  unlink(path);
  EVP_PKEY_free(k);
  mcp_server_free(r.srv);
}
END_TEST

/* A deferred call when SIGTERM comes is cancelled by the stop, and a task
 * still working when the server is freed afterwards is cancelled by the
 * free: the threads running them then end early, so that a daemon stops
 * promptly whatever its calls were doing. */
static mcp_call *held;
static int hold(mcp_call *call, void *user_data) {
  (void)user_data;
  held = call;
  return MCP_DEFERRED;
}

static const mcp_tool hold_tool = {.name = "hold",
                                   .description = "Holds the call.",
                                   .annotations = TC_READ_ONLY,
                                   .flags = MCP_TOOL_TASK_OPTIONAL,
                                   .handler = hold};

/* Starts a call of hold on port (a task when task is true) and waits until
 * the handler holds it; returns it. */
static mcp_call *start_hold(uint16_t port, bool task) {
  held = NULL;
  CURL *c = curl_easy_init();
  lc_req init = {
      .body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
              "{\"tasks\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":"
              "\"1\"}}}"};
  lc_resp r;
  lc_http(c, port, &init, &r);
  char sid[128] = "";
  ck_assert(lc_resp_header(&r, "Mcp-Session-Id", sid, sizeof sid));
  lc_resp_free(&r);
  lc_req ready = {.body = "{\"jsonrpc\":\"2.0\",\"method\":"
                          "\"notifications/initialized\"}",
                  .session = sid,
                  .version = LC_LEGACY};
  lc_http(c, port, &ready, &r);
  lc_resp_free(&r);
  lc_req call = {
      .body = task ? "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"hold\",\"task\":{\"ttl\":60000}}}"
                   : "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"hold\"}}",
      .session = sid,
      .version = LC_LEGACY,
      .timeout_ms = 500}; /* a plain call's answer never comes */
  lc_http(c, port, &call, &r);
  if (task)
    ck_assert_msg(r.status == 200 && strstr(r.body.p, "\"taskId\""), "%ld %s",
                  r.status, r.body.p ? r.body.p : "");
  lc_resp_free(&r);
  curl_easy_cleanup(c);
  long deadline = lc_now_ms() + (lc_slow_run() ? 120000 : 30000);
  while (__atomic_load_n(&held, __ATOMIC_ACQUIRE) == NULL &&
         lc_now_ms() < deadline)
    lc_sleep_ms(5);
  ck_assert_ptr_nonnull(held);
  return held;
}

START_TEST(serve_stop_cancels_calls_and_tasks) {
  for (int task = 0; task < 2; task++) {
    serve_run r = {.srv = server_new(), .opts = {.listen = "127.0.0.1:0"}};
    ck_assert_int_eq(mcp_server_add_tool(r.srv, &hold_tool, NULL), 0);
    capture_start();
    uint16_t port = serve_start(&r);
    mcp_call *call = start_hold(port, task);
    ck_assert(!mcp_call_cancelled(call));
    serve_stop(&r, SIGTERM);
    free(capture_end());
    if (!task)
      ck_assert(mcp_call_cancelled(call)); /* by the stop */
    mcp_server_free(r.srv);
    ck_assert(mcp_call_cancelled(call));  /* a task: by the free */
    mcp_call_finish(call, MCP_ECANCELED); /* late: harmless */
  }
}
END_TEST

/* Each failure returns its code after one line, with nothing left running
 * and the mask given back: a malformed listen, pairs that do not go
 * together, no socket from systemd, an address that cannot be bound. */
START_TEST(serve_failures_said) {
  static const struct {
    mcp_http_serve_options o;
    int rc;
    const char *says;
  } rows[] = {
      {{.listen = "127.0.0.1"}, MCP_EINVAL, "libmcp: --http wants ADDR:PORT"},
      {{.listen = "127.0.0.1:0", .tls_cert_file = "c"},
       MCP_EINVAL,
       "libmcp: --tls-cert and --tls-key go together"},
      {{.listen = "systemd", .program = "daemon"},
       MCP_ENOENT,
       "daemon: --http systemd: no socket from systemd (LISTEN_FDS is not "
       "set for this process)\n"},
      {{.listen = "192.0.2.1:80", .program = "daemon"},
       MCP_EIO,
       "daemon: cannot serve HTTP on 192.0.2.1 port 80: mcp_http_start: "},
  };
  int pipe_fds[2];
  ck_assert_int_eq(pipe(pipe_fds), 0);
  const mcp_http_options on_pipe = {.listen_fd = pipe_fds[0]};
  const mcp_http_serve_options given_pipe = {.http = &on_pipe};
  mcp_server *on = server_new();
  capture_start();
  ck_assert_int_eq(mcp_http_serve_until_signal(on, &given_pipe), MCP_EINVAL);
  char *said = capture_end();
  ck_assert_msg(strstr(said, "is not a bound TCP socket\n") != NULL, "%s",
                said);
  free(said);
  mcp_server_free(on);
  close(pipe_fds[0]); /* still the caller's */
  close(pipe_fds[1]);
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, NULL, &before);
  for (size_t k = 0; k < TU_COUNT(rows); k++) {
    mcp_server *srv = server_new();
    capture_start();
    int rc = mcp_http_serve_until_signal(srv, &rows[k].o);
    char *err = capture_end();
    ck_assert_msg(rc == rows[k].rc, "row %zu: %d", k, rc);
    ck_assert_msg(strncmp(err, rows[k].says, strlen(rows[k].says)) == 0,
                  "row %zu: %s", k, err);
    ck_assert_msg(strstr(err, "listening on") == NULL, "row %zu: %s", k, err);
    free(err);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    for (int s = 1; s < 32; s++)
      ck_assert_int_eq(sigismember(&after, s), sigismember(&before, s));
    mcp_server_free(srv);
  }
  ck_assert_int_eq(mcp_http_serve_until_signal(NULL, NULL), MCP_EINVAL);
}
END_TEST

static TCase *tc(Suite *s, const char *name) {
  return tu_tcase(s, name, NULL, NULL, 300);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
    return EXIT_FAILURE;
  Suite *s = suite_create("http_serve");
  TCase *t = tc(s, "args");
  tcase_add_test(t, serve_arg_takes_each_flag);
  tcase_add_test(t, serve_arg_http_forms);
  tcase_add_test(t, serve_arg_refusals);
  tcase_add_test(t, serve_check_pairs);
  t = tc(s, "signals");
  tcase_add_test(t, serve_until_sigterm);
  tcase_add_test(t, serve_until_sigint_with_options);
  tcase_add_test(t, serve_sighup_rereads_jwks);
  tcase_add_test(t, serve_jwks_lists_the_programs_scopes);
  tcase_add_test(t, serve_stop_cancels_calls_and_tasks);
  tcase_add_test(t, serve_failures_said);
  int rc = tu_run(s);
  curl_global_cleanup();
  return rc;
}
