/* mcp-check: audits an MCP server's tool hints, whatever it is written in
 * (mcp-check(1)). main.c reads the command line, starts or reaches the
 * server, runs the checks in order (hints, behaviour, scopes) and prints
 * the report. Exit codes: 0 nothing found, 1 findings, 2 usage, 3 the
 * server could not be reached, started or spoken to. */
#define _GNU_SOURCE
#include "behave.h"
#include "calls.h"
#include "conn.h"
#include "hints.h"
#include "instance.h"
#include "observe.h"
#include "opts.h"
#include "proc.h"
#include "report.h"
#include "session.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_CLEAN = 0, EXIT_FOUND = 1, EXIT_USAGE = 2, EXIT_SERVER = 3 };

typedef struct run {
  const mcpc_opts *o;
  mcpc_report rep;
  mcpc_proc proc;
  int started; /* proc holds a server we started */
  mcpc_conn *conn;
  mcpc_session s;
  mcpc_observer *obs;
  cJSON *tools;
  mcpc_call *calls;
  size_t n_calls;
  char *read_token;
  int *outcome; /* per tool: the first outcome of a call, or -1 */
  int next_call;
} run;

static volatile sig_atomic_t child_group;

/* Ctrl-C or a kill: the server we started goes too. */
static void on_signal(int sig) {
  if (child_group > 0)
    kill(-child_group, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

static int fail_server(run *r, const char *what, const char *why) {
  char tail[600] = "", how[64];
  fprintf(stderr, "mcp-check: %s: %s\n", what, why);
  if (r->started) {
    /* A server that closed its output is usually on its way out: its
     * status says more than "running". */
    mcpc_proc_wait(&r->proc, 1000);
    mcpc_proc_describe(&r->proc, how, sizeof how);
    mcpc_proc_log_tail(&r->proc, tail, sizeof tail);
    fprintf(stderr, "mcp-check: the server %s%s%s\n", how,
            tail[0] ? "; its last words: " : "", tail);
  }
  return EXIT_SERVER;
}

/* ---- tokens and starting ------------------------------------------------ */

/* Runs --read-token-cmd: its first line of output is the token. */
static int read_token_cmd(run *r, char *why, size_t size) {
  char *argv[] = {"/bin/sh", "-c", (char *)r->o->read_token_cmd, NULL};
  char buf[65536];
  size_t len = 0;
  long long end = mcpc_now_ms() + 30000;
  mcpc_proc p;
  if (mcpc_proc_start(argv, 1, NULL, &p, why, size) < 0)
    return -1;
  while (len < sizeof buf - 1) {
    struct pollfd pfd = {.fd = p.out_fd, .events = POLLIN};
    long long left = end - mcpc_now_ms();
    ssize_t got;
    if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
      break;
    got = read(p.out_fd, buf + len, sizeof buf - 1 - len);
    if (got <= 0)
      break;
    len += (size_t)got;
  }
  buf[len] = '\0';
  buf[strcspn(buf, "\r\n")] = '\0';
  mcpc_proc_stop(&p, 1000);
  if (!WIFEXITED(p.status) || WEXITSTATUS(p.status) != 0 || buf[0] == '\0') {
    snprintf(why, size, "--read-token-cmd printed no token (it %s)",
             WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0
                 ? "printed nothing"
                 : "failed");
    return -1;
  }
  r->read_token = strdup(buf);
  return r->read_token ? 0 : -1;
}

/* Any HTTP answer at all from the URL. */
static int answers(const char *url) {
  char why[256];
  mcpc_conn *c = mcpc_conn_http(url, why, sizeof why);
  mcpc_exchange x = {.timeout_ms = 1000};
  cJSON *ping = cJSON_Parse("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
                            "\"ping\"}");
  int up = 0;
  if (c && ping) {
    mcpc_conn_exchange(c, ping, &x, why, sizeof why);
    up = x.status > 0;
  }
  mcpc_exchange_clear(&x);
  cJSON_Delete(ping);
  mcpc_conn_free(c);
  return up;
}

static int start_server(run *r) {
  char why[512];
  const mcpc_opts *o = r->o;
  /* MCP_CHECK_UNOBSERVED (the benchmark's baseline): the same calls as
   * --observe makes, without the filter and its supervisor. */
  int watched = o->observe && getenv("MCP_CHECK_UNOBSERVED") == NULL;
  mcpc_watch_fn watch = watched ? mcpc_observe_watch : NULL;
  if (o->command) {
    if (mcpc_proc_start(o->command, 1, watch, &r->proc, why, sizeof why) < 0)
      return fail_server(r, "cannot start the server", why);
  } else if (o->launch) {
    char *argv[] = {"/bin/sh", "-c", (char *)o->launch, NULL};
    if (mcpc_proc_start(argv, 0, watch, &r->proc, why, sizeof why) < 0)
      return fail_server(r, "cannot launch the server", why);
  }
  r->started = o->command || o->launch;
  if (r->started)
    child_group = r->proc.pid;
  if (o->observe &&
      (r->obs = mcpc_observer_start(r->proc.listener, why, sizeof why)) == NULL)
    return fail_server(r, "cannot observe the server", why);
  if (o->observe)
    r->proc.listener = -1; /* the observer owns it now */
  if (o->launch) {
    long long end = mcpc_now_ms() + (long long)o->launch_timeout_s * 1000;
    while (!answers(o->url)) {
      struct timespec step = {0, 200 * 1000 * 1000};
      if (!mcpc_proc_alive(&r->proc))
        return fail_server(r, "the launched server ended", o->url);
      if (mcpc_now_ms() >= end) {
        snprintf(why, sizeof why, "%s did not answer within %u s", o->url,
                 o->launch_timeout_s);
        return fail_server(r, "the launched server is not answering", why);
      }
      nanosleep(&step, NULL);
    }
  }
  return 0;
}

static int open_session(run *r) {
  char why[512];
  int rc;
  if (r->o->url)
    r->conn = mcpc_conn_http(r->o->url, why, sizeof why);
  else
    r->conn = mcpc_conn_stdio(r->proc.in_fd, r->proc.out_fd);
  if (r->conn == NULL)
    return fail_server(r, "cannot connect", why);
  rc = mcpc_session_open(&r->s, r->conn, r->o->token, r->o->protocol_version,
                         r->o->timeout_s * 1000, why, sizeof why);
  if (rc == MCPC_UNAUTHORIZED)
    return fail_server(r, "the server wants a token (HTTP 401)",
                       r->o->token ? "--token was refused" : "give --token");
  if (rc < 0)
    return fail_server(r, "cannot speak MCP with the server", why);
  r->rep.server_name = strdup(r->s.name[0] ? r->s.name : "?");
  r->rep.server_version =
      strdup(r->s.server_version[0] ? r->s.server_version : "?");
  r->rep.protocol_version = strdup(r->s.version);
  r->rep.transport = r->o->url ? "http" : "stdio";
  return 0;
}

/* ---- the tools and their hints ---------------------------------------- */

/* The hints report lists the resolvable tools. */
static void note_resolvable(run *r) {
  char names[1024] = "";
  size_t n = 0, len;
  for (size_t i = 0; i < r->rep.n_tools; i++) {
    const mcpc_tool_row *row = &r->rep.tools[i];
    if (!row->resolvable)
      continue;
    len = strlen(names);
    if (len + strlen(row->name) + 3 < sizeof names)
      snprintf(names + len, sizeof names - len, "%s%s", n ? ", " : "",
               row->name);
    n++;
    if (row->effective[MCPC_READ_ONLY] && !row->effective[MCPC_OPEN_WORLD])
      mcpc_report_note(&r->rep,
                       "%s: resolvable, but its static hints are already "
                       "the tightest (read-only, closed world): nothing to "
                       "resolve",
                       row->name);
  }
  if (n)
    mcpc_report_note(&r->rep,
                     "tool resolution: %zu resolvable tool%s (%s): each call "
                     "is first resolved (tools/resolve) and judged against "
                     "the hints resolved for its arguments",
                     n, n == 1 ? "" : "s", names);
  else
    mcpc_report_note(&r->rep, "tool resolution: %s",
                     r->s.resolution ? "offered, but no tool is marked "
                                       "resolvable"
                                     : "not offered by the server: every call "
                                       "is judged against the static hints");
}

static int list_tools(run *r) {
  char why[512];
  size_t n;
  r->tools = mcpc_session_tools(&r->s, why, sizeof why);
  if (r->tools == NULL)
    return fail_server(r, "cannot list the tools", why);
  n = (size_t)cJSON_GetArraySize(r->tools);
  r->rep.tools = calloc(n ? n : 1, sizeof *r->rep.tools);
  r->outcome = malloc((n ? n : 1) * sizeof *r->outcome);
  if (r->rep.tools == NULL || r->outcome == NULL)
    return fail_server(r, "cannot list the tools", "out of memory");
  for (size_t i = 0; i < n; i++) {
    const cJSON *t = cJSON_GetArrayItem(r->tools, (int)i);
    mcpc_tool_row *row = &r->rep.tools[i];
    row->name =
        strdup(cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring);
    mcpc_hints_read(t, row->hint, row->effective);
    row->tier = mcpc_hints_tier(row->effective);
    row->resolvable = mcpc_hints_resolvable(t);
    r->outcome[i] = -1;
    r->rep.n_tools++;
    if (mcpc_hints_check(&r->rep, row->name, row->hint) < 0)
      r->rep.oom = 1;
    mcpc_report_settle(&r->rep, MCPC_HINTS, i, 1);
  }
  note_resolvable(r);
  return 0;
}

static int tool_index(const run *r, const char *name) {
  for (size_t i = 0; i < r->rep.n_tools; i++)
    if (strcmp(r->rep.tools[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* The arguments of a call of tool i: the first of the calls file for it,
 * else a minimal instance of its input schema, else {} (noted). */
static cJSON *arguments_for(run *r, size_t i) {
  const char *name = r->rep.tools[i].name;
  const cJSON *tool = cJSON_GetArrayItem(r->tools, (int)i);
  char why[256];
  cJSON *args;
  for (size_t k = 0; k < r->n_calls; k++)
    if (strcmp(r->calls[k].name, name) == 0)
      return cJSON_Duplicate(r->calls[k].arguments, 1);
  args = mcpc_instance(cJSON_GetObjectItemCaseSensitive(tool, "inputSchema"),
                       why, sizeof why);
  if (args == NULL) {
    mcpc_report_note(&r->rep,
                     "%s: no valid arguments from its input "
                     "schema (%s): called with {}",
                     name, why);
    args = cJSON_CreateObject();
  }
  return args;
}

/* ---- behaviour -------------------------------------------------------- */

/* The effects attributed to call k, copied into a new array: those
 * recorded since index from (the count before the call began), so a run
 * copies each effect once, not the whole record at every call. */
static mcpc_effect *effects_of(run *r, int k, size_t from, size_t *n) {
  size_t total = mcpc_observer_count(r->obs), got = 0;
  size_t fresh = total > from ? total - from : 0;
  mcpc_effect *out = malloc((fresh ? fresh : 1) * sizeof *out);
  for (size_t i = from; out && i < total; i++) {
    mcpc_observer_get(r->obs, i, &out[got]);
    if (out[got].call == k)
      got++;
  }
  *n = got;
  return out;
}

/* One observed call; returns its outcome, and its effects in *e. */
static mcpc_outcome observed_call(run *r, size_t i, const cJSON *args,
                                  mcpc_effect **e, size_t *n, char *detail,
                                  size_t size) {
  int k = r->next_call++;
  size_t from = mcpc_observer_count(r->obs);
  mcpc_outcome o;
  mcpc_observer_set_call(r->obs, k);
  o = mcpc_session_call(&r->s, r->rep.tools[i].name, args, NULL, detail, size);
  mcpc_observer_set_call(r->obs, -1);
  *e = effects_of(r, k, from, n);
  return o;
}

/* Keeps what a call of tool i did, for the report (--json: "effects"). */
static void keep_effects(run *r, size_t i, const mcpc_effect *e, size_t n,
                         const char *what) {
  mcpc_tool_row *row = &r->rep.tools[i];
  if (row->effects == NULL && (row->effects = cJSON_CreateArray()) == NULL) {
    r->rep.oom = 1;
    return;
  }
  for (size_t k = 0; e && k < n; k++) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddStringToObject(o, "op", e[k].op) ||
        !cJSON_AddStringToObject(o, "target", e[k].target) ||
        (e[k].target2[0] &&
         !cJSON_AddStringToObject(o, "target2", e[k].target2)) ||
        !cJSON_AddStringToObject(o, "syscall", e[k].syscall) ||
        !cJSON_AddStringToObject(o, "call", what) ||
        !cJSON_AddItemToArray(row->effects, o)) {
      cJSON_Delete(o);
      r->rep.oom = 1;
      return;
    }
  }
}

static int ran(mcpc_outcome o) {
  return o == MCPC_RAN || o == MCPC_RAN_ERROR || o == MCPC_INPUT;
}

/* After a call without an answer: whether the run cannot go on (the
 * stream is broken, or the server we started is gone). One tool that is
 * only slow is noted, and the others are still checked. */
static int no_more(run *r) {
  return !mcpc_conn_usable(r->conn) ||
         (r->started && !mcpc_proc_alive(&r->proc));
}

/* ---- tool resolution -------------------------------------------------- */

/* Whether the tool has a "resolution" finding in the check. */
static int has_resolution_finding(const run *r, mcpc_check check,
                                  const char *name) {
  for (size_t k = 0; k < r->rep.n_findings; k++) {
    const mcpc_finding *f = &r->rep.findings[k];
    if (f->check == check && f->tool && strcmp(f->tool, name) == 0 &&
        strcmp(f->hint, "resolution") == 0)
      return 1;
  }
  return 0;
}

/* What tools/resolve said of one call of a tool. */
typedef struct resolution {
  int resolved;       /* hints[] are the resolver's answer for the call */
  int hints[4];       /* the hints the call is judged against */
  int bad_answer;     /* a result, but unusable or looser than the static */
  mcpc_outcome asked; /* how tools/resolve ended */
  char detail[512];   /* why the call is not resolved */
} resolution;

/* Keeps what tools/resolve answered for a call of tool i (--json:
 * "resolutions"). */
static void keep_resolution(run *r, size_t i, const cJSON *args,
                            const resolution *res, const char *what) {
  mcpc_tool_row *row = &r->rep.tools[i];
  cJSON *o = cJSON_CreateObject(), *a = cJSON_Duplicate(args, 1), *h = NULL;
  int ok = o && a && cJSON_AddStringToObject(o, "call", what) &&
           cJSON_AddItemToObject(o, "arguments", a);
  if (!ok)
    cJSON_Delete(a);
  ok = ok && cJSON_AddBoolToObject(o, "resolved", res->resolved);
  for (int k = 0; ok && res->resolved && k < 4; k++)
    ok = (h || (h = cJSON_AddObjectToObject(o, "hints"))) &&
         cJSON_AddBoolToObject(h, mcpc_hint_name(k), res->hints[k]);
  if (ok && !res->resolved)
    ok = cJSON_AddStringToObject(o, "detail", res->detail) != NULL;
  if (ok && row->resolutions == NULL)
    ok = (row->resolutions = cJSON_CreateArray()) != NULL;
  if (!ok || !cJSON_AddItemToArray(row->resolutions, o)) {
    cJSON_Delete(o);
    r->rep.oom = 1;
  }
}

/* tools/resolve under observation, when there is any: a resolution runs
 * nothing (the draft), so whatever the server does meanwhile is a finding
 * of the behaviour check (one per tool), not an effect outside any call. */
static mcpc_outcome observed_resolve(run *r, size_t i, const cJSON *args,
                                     cJSON **result, char *detail, size_t size,
                                     const char *what) {
  const char *name = r->rep.tools[i].name;
  char evidence[900];
  size_t from = mcpc_observer_count(r->obs), n, len;
  int k = r->next_call++;
  mcpc_effect *e;
  mcpc_outcome o;
  mcpc_observer_set_call(r->obs, k);
  o = mcpc_session_resolve(&r->s, name, args, NULL, result, detail, size);
  if (r->obs == NULL)
    return o;
  mcpc_observer_set_call(r->obs, -1);
  e = effects_of(r, k, from, &n);
  snprintf(evidence, sizeof evidence,
           "%s: tools/resolve, which is to run nothing, had effects:", what);
  for (size_t j = 0; e && j < n && j < 3; j++) {
    len = strlen(evidence);
    snprintf(evidence + len, sizeof evidence - len, "%s %s %s (%s)",
             j ? ";" : "", e[j].op, e[j].target, e[j].syscall);
  }
  len = strlen(evidence);
  if (n > 3)
    snprintf(evidence + len, sizeof evidence - len, "; and %zu more", n - 3);
  if (e == NULL)
    r->rep.oom = 1;
  else if (n && !has_resolution_finding(r, MCPC_BEHAVIOUR, name)) {
    if (mcpc_report_add(&r->rep, MCPC_BEHAVIOUR, name, "resolution", "certain",
                        evidence,
                        "make the resolver only read what it needs to "
                        "classify the call: no write, no message, no "
                        "connection") < 0)
      r->rep.oom = 1;
    mcpc_report_settle(&r->rep, MCPC_BEHAVIOUR, i, 0);
  }
  free(e);
  return o;
}

/* Resolves a call of tool i with args over the main session. res->hints
 * are the resolved hints, or the tool's static ones when it is not
 * resolvable or its resolution failed (res->detail says why). */
static void resolve_call(run *r, size_t i, const cJSON *args, resolution *res,
                         const char *what) {
  const mcpc_tool_row *row = &r->rep.tools[i];
  cJSON *result = NULL;
  char why[300];
  int rc;
  memset(res, 0, sizeof *res);
  memcpy(res->hints, row->effective, sizeof res->hints);
  if (!row->resolvable)
    return;
  res->asked = observed_resolve(r, i, args, &result, res->detail,
                                sizeof res->detail, what);
  if (res->asked == MCPC_RAN) {
    int got[4];
    rc = mcpc_hints_resolved(result, row->name, row->effective, got, why,
                             sizeof why);
    if (rc == 0) {
      res->resolved = 1;
      memcpy(res->hints, got, sizeof got);
    } else {
      res->bad_answer = 1;
      snprintf(res->detail, sizeof res->detail, "answered %s", why);
    }
  } else if (res->asked == MCPC_RAN_ERROR || res->asked == MCPC_INPUT) {
    res->bad_answer = 1;
    snprintf(res->detail, sizeof res->detail, "answered %s",
             res->asked == MCPC_INPUT ? "without hints (not complete)"
                                      : "isError");
  }
  cJSON_Delete(result);
  keep_resolution(r, i, args, res, what);
}

/* Whether a failed resolution only met the refusal the call met too:
 * refused on scope or for want of a token, or invalid arguments (-32602),
 * while the call did not run either. call_ran: 1, 0, or -1 (no call to
 * compare with: such a refusal is given the benefit of the doubt). */
static int same_refusal(const resolution *res, int call_ran) {
  int refusal = res->asked == MCPC_SCOPE || res->asked == MCPC_NO_TOKEN ||
                (res->asked == MCPC_RPC_ERROR &&
                 strncmp(res->detail, "JSON-RPC -32602:", 16) == 0);
  return refusal && call_ran != 1;
}

/* A resolvable tool's call whose resolution failed is a finding of the
 * hints check (one per tool; later ones are notes): the call was judged
 * against the static hints. */
static void judge_resolution(run *r, size_t i, const resolution *res,
                             int call_ran, const char *what) {
  const char *name = r->rep.tools[i].name;
  char evidence[900];
  if (!r->rep.tools[i].resolvable || res->resolved)
    return;
  if (res->bad_answer || !same_refusal(res, call_ran)) {
    snprintf(evidence, sizeof evidence,
             "%s: tools/resolve %s%s: the call was judged against the static "
             "hints",
             what, res->bad_answer ? "" : "failed: ", res->detail);
    if (!has_resolution_finding(r, MCPC_HINTS, name)) {
      if (mcpc_report_add(&r->rep, MCPC_HINTS, name, "resolution", "certain",
                          evidence,
                          "answer tools/resolve for every call the tool "
                          "accepts, with all four hints and none looser than "
                          "the tool's static hints") < 0)
        r->rep.oom = 1;
      mcpc_report_settle(&r->rep, MCPC_HINTS, i, 1);
      return;
    }
  }
  mcpc_report_note(&r->rep,
                   "%s: %s: not resolved (%s): judged against the "
                   "static hints",
                   name, what, res->detail);
}

/* The second of two identical calls of a tool whose hints for it (resolved
 * or not) say idempotent. Returns 0, or EXIT_SERVER. */
static int repeat_one(run *r, size_t i, const cJSON *args, const char *what,
                      int resolved) {
  mcpc_tool_row *row = &r->rep.tools[i];
  char detail[512], label[600];
  mcpc_effect *e;
  size_t n;
  mcpc_outcome o = observed_call(r, i, args, &e, &n, detail, sizeof detail);
  if (o == MCPC_NO_ANSWER && no_more(r)) {
    free(e);
    return fail_server(r, "the server stopped answering", detail);
  }
  snprintf(label, sizeof label, "%s, repeated (%s)", what,
           mcpc_outcome_name(o));
  keep_effects(r, i, e, n, "repeated");
  if (e == NULL ||
      mcpc_behaviour_repeat(&r->rep, row->name, resolved, label, e, n) < 0)
    r->rep.oom = 1;
  free(e);
  return 0;
}

static int behave_one(run *r, size_t i, const cJSON *args, const char *what) {
  mcpc_tool_row *row = &r->rep.tools[i];
  char detail[512], label[700], words[96];
  mcpc_effect *e;
  size_t n;
  resolution res;
  mcpc_outcome o;
  resolve_call(r, i, args, &res, what);
  if (row->resolvable && res.asked == MCPC_NO_ANSWER && no_more(r))
    return fail_server(r, "the server stopped answering", res.detail);
  o = observed_call(r, i, args, &e, &n, detail, sizeof detail);
  /* The scopes check over stdio weighs the first call that may write. */
  if (r->outcome[i] < 0 && !res.hints[MCPC_READ_ONLY])
    r->outcome[i] = (int)o;
  if (o == MCPC_NO_ANSWER && no_more(r)) {
    free(e);
    return fail_server(r, "the server stopped answering", detail);
  }
  judge_resolution(r, i, &res, ran(o), what);
  if (res.resolved) {
    snprintf(label, sizeof label, "%s (%s; %s for these arguments, resolved)",
             what, mcpc_outcome_name(o),
             mcpc_hints_describe(res.hints, words, sizeof words));
    mcpc_report_note(&r->rep, "%s: %s", row->name, label);
  } else {
    snprintf(label, sizeof label, "%s (%s)", what, mcpc_outcome_name(o));
  }
  if (!ran(o))
    mcpc_report_note(&r->rep, "%s: %s: %s", row->name, label, detail);
  keep_effects(r, i, e, n, what);
  if (e == NULL || mcpc_behaviour_judge(&r->rep, row->name, res.hints,
                                        res.resolved, label, e, n) < 0)
    r->rep.oom = 1;
  free(e);
  if (ran(o) && !res.hints[MCPC_READ_ONLY] && res.hints[MCPC_IDEMPOTENT]) {
    if (repeat_one(r, i, args, what, res.resolved) != 0)
      return EXIT_SERVER;
  }
  if (ran(o) || row->state[MCPC_BEHAVIOUR] == MCPC_PASSED)
    row->state[MCPC_BEHAVIOUR] = MCPC_PASSED;
  else if (row->state[MCPC_BEHAVIOUR] == MCPC_NOT_RUN)
    row->state[MCPC_BEHAVIOUR] = MCPC_SKIPPED;
  return 0;
}

static int behaviour(run *r) {
  char what[300];
  for (size_t k = 0; mcpc_observe_limits[k]; k++)
    mcpc_report_note(&r->rep, "observation %s", mcpc_observe_limits[k]);
  if (r->o->calls) {
    for (size_t k = 0; k < r->n_calls; k++) {
      int i = tool_index(r, r->calls[k].name);
      if (i < 0) {
        mcpc_report_note(&r->rep,
                         "--calls line %u: no tool %s on this "
                         "server: not called",
                         r->calls[k].line, r->calls[k].name);
        continue;
      }
      snprintf(what, sizeof what, "call of --calls line %u", r->calls[k].line);
      if (behave_one(r, (size_t)i, r->calls[k].arguments, what) != 0)
        return EXIT_SERVER;
    }
  } else {
    for (size_t i = 0; i < r->rep.n_tools; i++) {
      cJSON *args = arguments_for(r, i);
      int rc = args ? behave_one(r, i, args, "call with a minimal instance")
                    : (r->rep.oom = 1, 0);
      cJSON_Delete(args);
      if (rc != 0)
        return EXIT_SERVER;
    }
  }
  for (size_t i = 0; i < r->rep.n_tools; i++) {
    mcpc_report_settle(&r->rep, MCPC_BEHAVIOUR, i, 0);
    if (r->rep.tools[i].state[MCPC_BEHAVIOUR] == MCPC_NOT_RUN)
      mcpc_report_note(&r->rep,
                       "%s: not called under observation (not in "
                       "--calls)",
                       r->rep.tools[i].name);
  }
  return 0;
}

static void outside_effects(run *r) {
  size_t total = r->obs ? mcpc_observer_count(r->obs) : 0;
  for (size_t i = 0; i < total; i++) {
    mcpc_effect e;
    mcpc_observer_get(r->obs, i, &e);
    if (e.call < 0)
      mcpc_report_outside(&r->rep, "%s %s%s%s (%s, thread %d)", e.op, e.target,
                          e.target2[0] ? " -> " : "", e.target2, e.syscall,
                          (int)e.tid);
  }
}

/* ---- scopes ----------------------------------------------------------- */

/* Whether arguments of tool i resolve to hints that may write (or do not
 * resolve at all: the static hints apply); what names them. */
static int may_write(run *r, size_t i, const cJSON *args, const char *what) {
  resolution res;
  char label[300];
  snprintf(label, sizeof label, "scopes check, %s", what);
  resolve_call(r, i, args, &res, label);
  judge_resolution(r, i, &res, -1, label);
  return !res.hints[MCPC_READ_ONLY];
}

/* The arguments the scopes check calls tool i with: for a resolvable tool,
 * the first (of its --calls lines, else the generated instance) that does
 * not resolve read-only, since a call resolved read-only may run with a
 * read-only token. NULL (noted) when every one resolves read-only. */
static cJSON *scope_arguments(run *r, size_t i) {
  const mcpc_tool_row *row = &r->rep.tools[i];
  size_t tried = 0;
  char what[64];
  cJSON *args;
  if (!row->resolvable) {
    if ((args = arguments_for(r, i)) == NULL)
      r->rep.oom = 1;
    return args;
  }
  for (size_t k = 0; k < r->n_calls; k++) {
    if (strcmp(r->calls[k].name, row->name) != 0)
      continue;
    tried++;
    snprintf(what, sizeof what, "--calls line %u", r->calls[k].line);
    if (may_write(r, i, r->calls[k].arguments, what))
      return cJSON_Duplicate(r->calls[k].arguments, 1);
  }
  if (tried == 0 && (args = arguments_for(r, i)) != NULL) {
    if (may_write(r, i, args, "a minimal instance"))
      return args;
    cJSON_Delete(args);
  }
  mcpc_report_note(&r->rep,
                   "%s: scopes not checked: every call mcp-check has for it "
                   "resolved read-only, and a read-only token may run a call "
                   "resolved read-only (give --calls a call that writes)",
                   row->name);
  return NULL;
}

/* A call of the scopes check. Under observation its effects are kept
 * apart from the behaviour check's, and what it did joins the detail. */
static mcpc_outcome scope_call(run *r, mcpc_session *s, size_t i,
                               const cJSON *args, char *detail, size_t size) {
  mcpc_effect *e;
  size_t n, len;
  int k = r->next_call++;
  size_t from = mcpc_observer_count(r->obs);
  mcpc_outcome o;
  if (r->obs)
    mcpc_observer_set_call(r->obs, k);
  o = mcpc_session_call(s, r->rep.tools[i].name, args, NULL, detail, size);
  if (r->obs == NULL)
    return o;
  mcpc_observer_set_call(r->obs, -1);
  e = effects_of(r, k, from, &n);
  for (size_t j = 0; e && j < n && j < 3; j++) {
    len = strlen(detail);
    snprintf(detail + len, size - len, "%s%s %s",
             j ? "; " : "; it did: ", e[j].op, e[j].target);
  }
  free(e);
  return o;
}

static void judge_scope(run *r, size_t i, mcpc_outcome o, const char *detail,
                        const char *who) {
  mcpc_tool_row *row = &r->rep.tools[i];
  char evidence[900];
  if (o == MCPC_SCOPE) {
    row->state[MCPC_SCOPES] = MCPC_PASSED;
    return;
  }
  if (o == MCPC_NO_TOKEN || o == MCPC_NO_ANSWER) {
    row->state[MCPC_SCOPES] = MCPC_SKIPPED;
    mcpc_report_note(&r->rep, "%s: scopes not checked: %s", row->name, detail);
    return;
  }
  snprintf(evidence, sizeof evidence,
           "called %s, a tool that is not read-only %s (%s) instead of "
           "being refused on scope (HTTP 403 insufficient_scope or JSON-RPC "
           "-31403)",
           who, mcpc_outcome_name(o), detail);
  if (mcpc_report_add(&r->rep, MCPC_SCOPES, row->name, "scopes",
                      o == MCPC_RAN || o == MCPC_INPUT ? "certain" : "possible",
                      evidence,
                      "require a write scope for the tool and refuse a "
                      "caller without it before the handler runs, whatever "
                      "its hints say") < 0)
    r->rep.oom = 1;
  row->state[MCPC_SCOPES] = MCPC_FAILED;
}

/* HTTP: does the server answer without a token at all? */
static void probe_authorization(run *r) {
  char why[512];
  mcpc_conn *c = mcpc_conn_http(r->o->url, why, sizeof why);
  mcpc_session s;
  int rc = c ? mcpc_session_open(&s, c, NULL, r->s.version,
                                 r->o->timeout_s * 1000, why, sizeof why)
             : -1;
  if (rc == 0 &&
      mcpc_report_add(&r->rep, MCPC_SCOPES, NULL, "authorization", "certain",
                      "the server speaks MCP to a client without a token "
                      "(no HTTP 401): anyone who reaches it may call every "
                      "tool",
                      "verify a bearer token on every request (OAuth 2.1 "
                      "resource server) and give each tool the scopes it "
                      "needs") < 0)
    r->rep.oom = 1;
  if (rc < 0)
    mcpc_report_note(&r->rep,
                     "authorization: could not tell whether the "
                     "server needs a token: %s",
                     why);
  mcpc_conn_free(c);
}

static int scopes_http(run *r) {
  char why[512], detail[512];
  mcpc_conn *c;
  mcpc_session s;
  int rc;
  probe_authorization(r);
  if (r->read_token == NULL) {
    mcpc_report_note(&r->rep, "scopes: not checked: give --read-token or "
                              "--read-token-cmd");
    return 0;
  }
  c = mcpc_conn_http(r->o->url, why, sizeof why);
  rc = c ? mcpc_session_open(&s, c, r->read_token, r->s.version,
                             r->o->timeout_s * 1000, why, sizeof why)
         : -1;
  if (rc != 0) {
    mcpc_report_note(&r->rep, "scopes: not checked: the read token %s",
                     rc == MCPC_UNAUTHORIZED ? "was refused (HTTP 401)" : why);
    mcpc_conn_free(c);
    return 0;
  }
  for (size_t i = 0; i < r->rep.n_tools; i++) {
    cJSON *args;
    mcpc_outcome o;
    if (r->rep.tools[i].effective[MCPC_READ_ONLY])
      continue;
    if ((args = scope_arguments(r, i)) == NULL) {
      r->rep.tools[i].state[MCPC_SCOPES] = MCPC_SKIPPED;
      continue;
    }
    o = scope_call(r, &s, i, args, detail, sizeof detail);
    cJSON_Delete(args);
    judge_scope(r, i, o, detail, "with a token without write scopes");
  }
  mcpc_conn_free(c);
  return 0;
}

/* stdio: the principal is the server's own configuration; a call of each
 * tool that is not read-only (the behaviour check's, when it ran) shows
 * whether it has one without write scopes. */
/* stdio: a call of tool i that may write, unless the behaviour check made
 * one. Returns 0, or EXIT_SERVER. */
static int stdio_call(run *r, size_t i) {
  char detail[512] = "";
  cJSON *args;
  int rc = 0;
  if (r->outcome[i] >= 0)
    return 0;
  if ((args = scope_arguments(r, i)) == NULL)
    return 0;
  if (r->obs)
    rc = behave_one(r, i, args, "call with a minimal instance");
  else
    r->outcome[i] = (int)mcpc_session_call(&r->s, r->rep.tools[i].name, args,
                                           NULL, detail, sizeof detail);
  cJSON_Delete(args);
  if (rc != 0)
    return rc;
  if (r->outcome[i] == MCPC_NO_ANSWER && no_more(r))
    return fail_server(r, "the server stopped answering", detail);
  if (r->outcome[i] == MCPC_NO_ANSWER)
    mcpc_report_note(&r->rep, "%s: scopes not checked: %s",
                     r->rep.tools[i].name, detail);
  return 0;
}

/* stdio: the principal is the server's own configuration; a call of each
 * tool that is not read-only (the behaviour check's, when it ran; for a
 * resolvable tool one not resolved read-only) shows whether it has one
 * without write scopes. */
static int scopes_stdio(run *r) {
  size_t refused = 0, called = 0; /* called: those that ran */
  for (size_t i = 0; i < r->rep.n_tools; i++) {
    int rc;
    if (r->rep.tools[i].effective[MCPC_READ_ONLY])
      continue;
    if ((rc = stdio_call(r, i)) != 0)
      return rc;
    if (r->outcome[i] < 0)
      continue;
    called += ran((mcpc_outcome)r->outcome[i]);
    refused += r->outcome[i] == MCPC_SCOPE;
  }
  if (called && refused == 0) {
    if (mcpc_report_add(
            &r->rep, MCPC_SCOPES, NULL, "authorization", "certain",
            "no tool that is not read-only was refused on scope: the stdio "
            "server has no authorization, or its principal holds every "
            "scope",
            "give each tool that writes a scope, and run the server for "
            "this check with a principal holding only read scopes") < 0)
      r->rep.oom = 1;
    for (size_t i = 0; i < r->rep.n_tools; i++)
      if (!r->rep.tools[i].effective[MCPC_READ_ONLY])
        r->rep.tools[i].state[MCPC_SCOPES] = MCPC_SKIPPED;
    return 0;
  }
  for (size_t i = 0; i < r->rep.n_tools; i++) {
    if (r->rep.tools[i].effective[MCPC_READ_ONLY])
      continue;
    if (r->outcome[i] < 0)
      r->rep.tools[i].state[MCPC_SCOPES] = MCPC_SKIPPED;
    else
      judge_scope(r, i, (mcpc_outcome)r->outcome[i], "",
                  "with the stdio server's principal");
  }
  return 0;
}

/* ---- output ----------------------------------------------------------- */

static int output(run *r) {
  int code = r->rep.n_findings ? EXIT_FOUND : EXIT_CLEAN;
  if (r->rep.oom) {
    fprintf(stderr, "mcp-check: out of memory: the report is incomplete\n");
    code = EXIT_SERVER;
  }
  if (r->o->json) {
    cJSON *j = mcpc_report_json(&r->rep, code);
    char *text = j ? cJSON_Print(j) : NULL;
    if (text)
      printf("%s\n", text);
    free(text);
    cJSON_Delete(j);
  } else {
    int color =
        !r->o->no_color && isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;
    mcpc_report_print(&r->rep, stdout, color);
  }
  if (r->o->junit) {
    FILE *f = fopen(r->o->junit, "w");
    if (f == NULL || mcpc_report_junit(&r->rep, f) < 0) {
      fprintf(stderr, "mcp-check: cannot write %s: %s\n", r->o->junit,
              strerror(errno));
      code = EXIT_USAGE;
    }
    if (f)
      fclose(f);
  }
  return code;
}

static int checks(run *r) {
  int rc = start_server(r);
  if (rc == 0)
    rc = open_session(r);
  if (rc == 0)
    rc = list_tools(r);
  if (rc == 0 && r->o->observe)
    rc = behaviour(r);
  if (rc == 0)
    rc = r->o->url ? scopes_http(r) : scopes_stdio(r);
  for (size_t i = 0; rc == 0 && i < r->rep.n_tools; i++)
    mcpc_report_settle(&r->rep, MCPC_SCOPES, i, 0);
  return rc;
}

static void finish(run *r) {
  mcpc_conn_free(r->conn);
  r->conn = NULL;
  if (r->started)
    mcpc_proc_stop(&r->proc, 2000);
  child_group = 0;
  outside_effects(r);
  mcpc_observer_stop(r->obs);
  r->obs = NULL;
}

static int usage_error(const char *why) {
  fprintf(stderr, "mcp-check: %s\n(mcp-check --help says how)\n", why);
  return EXIT_USAGE;
}

int main(int argc, char **argv) {
  mcpc_opts o;
  run r;
  char why[512];
  int rc;
  if (mcpc_opts_parse(argc, argv, &o, why, sizeof why) < 0)
    return usage_error(why);
  if (o.help) {
    fputs(mcpc_usage, stdout);
    return EXIT_CLEAN;
  }
  if (o.version) {
    printf("mcp-check %s\n", MCPC_VERSION);
    return EXIT_CLEAN;
  }
  memset(&r, 0, sizeof r);
  r.o = &o;
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  if (o.calls &&
      mcpc_calls_read(o.calls, &r.calls, &r.n_calls, why, sizeof why) < 0)
    return usage_error(why);
  if (o.read_token) {
    r.read_token = strdup(o.read_token);
  } else if (o.read_token_cmd && read_token_cmd(&r, why, sizeof why) < 0) {
    mcpc_calls_free(r.calls, r.n_calls);
    return usage_error(why);
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  rc = checks(&r);
  finish(&r);
  if (rc == 0)
    rc = output(&r);
  cJSON_Delete(r.tools);
  free(r.outcome);
  free(r.read_token);
  mcpc_calls_free(r.calls, r.n_calls);
  mcpc_report_clear(&r.rep);
  curl_global_cleanup();
  return rc;
}
