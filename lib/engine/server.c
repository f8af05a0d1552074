/* The server: identity, the tables of tools, prompts, resources and
 * skills, hooks, what it offers and the look-ups of its entries, and the
 * sessions to tell when a table changes. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define DEFAULT_PAGE_SIZE 100
#define DEFAULT_LIST_TTL_MS 0
#define DEFAULT_INPUT_TTL_S 600

/* The last error is kept per thread, and remembers which server it belongs
 * to: two threads registering tools on one server each read their own
 * message, and no lock is needed to read it. */
static _Thread_local const mcp_server *err_server;
static _Thread_local bool err_set; /* err_text is err_server's failure */
/* Thread-local storage comes out of every thread's stack, the embedder's
 * threads included, so the text kept there is short; a longer one (a
 * definition with many problems) goes to a block of its own, which the
 * thread's next failure, mcp_server_free of its server or the thread's
 * end frees. */
#define ERR_INLINE 512
#define ERR_MAX 2048
static _Thread_local char err_text[ERR_INLINE];
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static bool err_key_ok;

static void err_long_free(void *p) { mcp__free(p); }
static void err_key_init(void) {
  err_key_ok = pthread_key_create(&err_key, err_long_free) == 0;
}

/* The calling thread's long message, or NULL. */
static char *err_long(void) {
  pthread_once(&err_once, err_key_init);
  return err_key_ok ? pthread_getspecific(err_key) : NULL;
}

static void err_long_set(char *p) {
  char *old = err_long();
  if (err_key_ok && pthread_setspecific(err_key, p) == 0)
    mcp__free(old);
  else
    mcp__free(p);
}

static int fail(const mcp_server *srv, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Why info cannot make a server, naming the member; NULL when it can. */
static const char *bad_info(const mcp_server_info *info) {
  if (info->name == NULL)
    return "info.name is required (the server's name)";
  if (info->version == NULL)
    return "info.version is required (the server's version)";
  if (!mcp__utf8_valid(info->name, strlen(info->name)))
    return "info.name is not valid UTF-8";
  if (!mcp__utf8_valid(info->version, strlen(info->version)))
    return "info.version is not valid UTF-8";
  if (info->title && !mcp__utf8_valid(info->title, strlen(info->title)))
    return "info.title is not valid UTF-8";
  if (info->instructions &&
      !mcp__utf8_valid(info->instructions, strlen(info->instructions)))
    return "info.instructions is not valid UTF-8";
  return NULL;
}

/* Checks info's icons and website_url (mcp.h) and renders the icons into
 * *icons. Returns 0, MCP_EINVAL with the sentence naming every problem in
 * why, or MCP_ENOMEM. */
static int server_extras(const mcp_server_info *info, char **icons, char *why,
                         size_t size) {
  mcp__problems p;
  mcp__problems_init(&p, why, size, "server", info->name);
  const char *url = info->website_url;
  if (url && (strncmp(url, "https://", 8) != 0 || url[8] == '\0' ||
              url[8] == '/' || !mcp__uri_valid(url, MCP__URI_REGISTERED)))
    mcp__problem(&p, "website_url must be an https: URL (printable ASCII "
                     "without spaces, a host, at most 2048 bytes)");
  int rc = mcp__icons_render(info->icons, &p, icons);
  if (rc == 0 && p.n > 0) {
    mcp__free(*icons); /* good icons, but the url is not */
    *icons = NULL;
    rc = MCP_EINVAL;
  }
  return rc;
}

/* Sets up srv's locks, limiter and task table; 0, or MCP_ENOMEM with
 * what was set up undone. */
static int server_locks(mcp_server *srv) {
  if (pthread_mutex_init(&srv->lock, NULL) != 0)
    return MCP_ENOMEM;
  if (pthread_mutex_init(&srv->deadline_lock, NULL) != 0)
    goto no_deadline_lock;
  if (pthread_mutex_init(&srv->store_lock, NULL) != 0)
    goto no_store_lock;
  if (mcp__ratelimit_init(&srv->rate) != 0)
    goto no_rate;
  if (mcp__tasks_init(srv) != 0)
    goto no_tasks;
  return 0;

no_tasks:
  mcp__ratelimit_free(&srv->rate);
no_rate:
  pthread_mutex_destroy(&srv->store_lock);
no_store_lock:
  pthread_mutex_destroy(&srv->deadline_lock);
no_deadline_lock:
  pthread_mutex_destroy(&srv->lock);
  return MCP_ENOMEM;
}

/* The fields of a new server: info's texts copied (NULL where no memory),
 * the registries, the timer and the defaults. */
static void server_fields(mcp_server *srv, const mcp_server_info *info) {
  srv->deadlines = (mcp__heap){.less = mcp__deadline_less};
  mcp__list_init(&srv->sessions);
  atomic_init(&srv->next_deadline_us, ULLONG_MAX);
  atomic_init(&srv->max_result, MCP_DEFAULT_MAX_RESULT);
  atomic_init(&srv->call_timeout_ms, 0);
  atomic_init(&srv->next_serial, 0);
  atomic_init(&srv->store, NULL);
  atomic_init(&srv->store_events, false);
  srv->name = mcp__strdup(info->name);
  srv->version = mcp__strdup(info->version);
  srv->title = mcp__strdup(info->title);
  srv->instructions = mcp__strdup(info->instructions);
  srv->website_url = mcp__strdup(info->website_url);
  srv->reg = (mcp__registry){.key = "tools", .tag = 't'};
  srv->prompts = (mcp__registry){.key = "prompts", .tag = 'p'};
  srv->resources = (mcp__registry){.key = "resources", .tag = 'r'};
  srv->templates = (mcp__registry){.key = "resourceTemplates", .tag = 'u'};
  srv->skills = (mcp__registry){.key = "skills", .tag = 's'};
  atomic_init(&srv->refs, 1);
  atomic_init(&srv->page_size, DEFAULT_PAGE_SIZE);
  atomic_init(&srv->node_lease_ms, MCP__NODE_LEASE_MS);
  atomic_init(&srv->list_ttl_ms, DEFAULT_LIST_TTL_MS);
  atomic_init(&srv->input_ttl_s, DEFAULT_INPUT_TTL_S);
  atomic_init(&srv->hide_forbidden, false);
  /* In every build: a tool that declares an outputSchema promised its
   * clients that shape, and the build users run is the one that must keep
   * the promise. */
  atomic_init(&srv->check_output, true);
}

int mcp_server_new(const mcp_server_info *info, mcp_server **out) {
  /* A failure here has no server to read the message from: it is the
   * calling thread's, read with mcp_server_errmsg(NULL). */
  if (info == NULL || out == NULL)
    return fail(NULL, MCP_EINVAL, "mcp_server_new: %s is NULL",
                info == NULL ? "info" : "out");
  const char *bad = bad_info(info);
  if (bad)
    return fail(NULL, MCP_EINVAL, "mcp_server_new: %s", bad);
  char why[600];
  char *icons = NULL;
  int rc = server_extras(info, &icons, why, sizeof why);
  if (rc == MCP_EINVAL)
    return fail(NULL, rc, "mcp_server_new: %s", why);
  mcp_server *srv = rc ? NULL : mcp__calloc(1, sizeof *srv);
  if (srv == NULL || server_locks(srv) != 0) {
    mcp__free(icons);
    mcp__free(srv);
    return fail(NULL, MCP_ENOMEM, "mcp_server_new: out of memory");
  }
  srv->icons = icons;
  server_fields(srv, info);
  /* The requestState key must be unguessable; without the kernel's CSPRNG
   * there is no server rather than a weak one. */
  if (mcp__random(srv->state_key, sizeof srv->state_key) != 0) {
    mcp_server_free(srv);
    return fail(NULL, MCP_EIO,
                "mcp_server_new: the kernel's CSPRNG (getrandom) cannot seed "
                "the requestState key");
  }
  /* This server's name in the rate keys of anonymous callers, which a
   * shared store sees from every process: random, so two never meet. */
  unsigned char node[8];
  if (mcp__random(node, sizeof node) != 0) {
    mcp_server_free(srv);
    return fail(NULL, MCP_EIO,
                "mcp_server_new: the kernel's CSPRNG (getrandom) cannot name "
                "the server");
  }
  for (size_t i = 0; i < sizeof node; i++)
    mcp__fmt(srv->node + 2 * i, 3, "%02x", node[i]);
  if (!srv->name || !srv->version || (info->title && !srv->title) ||
      (info->instructions && !srv->instructions) ||
      (info->website_url && !srv->website_url)) {
    mcp_server_free(srv);
    return fail(NULL, MCP_ENOMEM, "mcp_server_new: out of memory");
  }
  *out = srv;
  return 0;
}

static void server_destroy(mcp_server *srv) {
  /* No call exists any more: the executor may let go of its threads. */
  if (atomic_load(&srv->has_executor) && srv->executor.release)
    srv->executor.release(srv->executor.user_data);
  mcp__registry_clear(&srv->reg);
  mcp__registry_clear(&srv->prompts);
  mcp__registry_clear(&srv->resources);
  mcp__registry_clear(&srv->templates);
  mcp__registry_clear(&srv->skills);
  mcp__free(srv->name);
  mcp__free(srv->version);
  mcp__free(srv->title);
  mcp__free(srv->instructions);
  mcp__free(srv->icons);
  mcp__free(srv->website_url);
  mcp__ratelimit_free(&srv->rate);
  mcp__tasks_fini(srv);
  pthread_mutex_destroy(&srv->store_lock);
  pthread_mutex_destroy(&srv->deadline_lock);
  pthread_mutex_destroy(&srv->lock);
  mcp__free(srv);
}

void mcp__server_unref(mcp_server *srv) {
  if (atomic_fetch_sub(&srv->refs, 1) == 1)
    server_destroy(srv);
}

/* Sessions hold the server too: a deferred call that finishes after the
 * owner let go (the natural order at shutdown: stop the transport, free
 * the server) still finds it, and the last session frees it. */
void mcp_server_free(mcp_server *srv) {
  if (srv == NULL)
    return;
  if (err_server == srv) {
    err_set = false;
    if (err_long())
      err_long_set(NULL);
  }
  /* The store's events stop reaching the server before it goes. */
  mcp__server_use_store(srv, NULL);
  /* Task records (and their calls' homes) hold the server: forgetting
   * them (cancelling the running calls) lets the last holder free it. */
  mcp__tasks_drop_all(srv);
  mcp__server_unref(srv);
}

const char *mcp_server_errmsg(const mcp_server *srv) {
  if (!err_set || err_server != srv)
    return "no error";
  const char *longer = err_long();
  return longer ? longer : err_text;
}

static int fail(const mcp_server *srv, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char text[ERR_MAX];
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  mcp__utf8_trim(text);
  size_t n = strlen(text);
  char *longer = n >= sizeof err_text ? mcp__malloc(n + 1) : NULL;
  if (longer)
    memcpy(longer, text, n + 1);
  if (longer || err_long())
    err_long_set(longer);
  /* Without memory for a long one, its beginning. */
  mcp__fmt(err_text, sizeof err_text, "%s", text);
  mcp__utf8_trim(err_text);
  err_server = srv;
  err_set = true;
  return rc;
}

void mcp_server_set_errmsg(mcp_server *srv, const char *message) {
  if (srv && message)
    fail(srv, 0, "%s", message);
}

void mcp_server_set_log(mcp_server *srv, mcp_log_fn fn, void *user_data) {
  srv->log = fn;
  srv->log_data = user_data;
}

void mcp_server_set_authorizer(mcp_server *srv, mcp_authorize_fn fn,
                               void *user_data) {
  srv->policy.authorize = fn;
  srv->policy.authorize_data = user_data;
}

void mcp_server_set_audit(mcp_server *srv, mcp_audit_fn fn, void *user_data) {
  srv->audit = fn;
  srv->audit_data = user_data;
}

void mcp_server_set_page_size(mcp_server *srv, unsigned tools) {
  atomic_store(&srv->page_size, tools ? tools : DEFAULT_PAGE_SIZE);
}

void mcp_server_set_list_ttl(mcp_server *srv, unsigned ttl_ms) {
  atomic_store(&srv->list_ttl_ms, ttl_ms);
}

void mcp_server_set_check_output(mcp_server *srv, bool on) {
  atomic_store(&srv->check_output, on);
}

void mcp_server_set_hide_forbidden(mcp_server *srv, bool hide) {
  atomic_store(&srv->hide_forbidden, hide);
}

void mcp_server_set_max_result(mcp_server *srv, size_t bytes) {
  if (srv)
    atomic_store(&srv->max_result, bytes ? bytes : MCP_DEFAULT_MAX_RESULT);
}

void mcp_server_set_call_timeout(mcp_server *srv, unsigned ms) {
  if (srv)
    atomic_store(&srv->call_timeout_ms, ms);
}

void mcp_server_set_input_ttl(mcp_server *srv, unsigned seconds) {
  atomic_store(&srv->input_ttl_s, seconds ? seconds : DEFAULT_INPUT_TTL_S);
}

int mcp_server_set_state_key(mcp_server *srv, const void *key, size_t key_len) {
  if (srv == NULL || key == NULL || key_len < 32)
    return fail(srv, MCP_EINVAL, "the requestState key needs 32 bytes or more");
  /* Longer secrets are reduced to the key size with SHA-256. */
  if (key_len > sizeof srv->state_key) {
    mcp__sha256 h;
    mcp__sha256_init(&h);
    mcp__sha256_update(&h, key, key_len);
    mcp__sha256_final(&h, srv->state_key);
  } else {
    memcpy(srv->state_key, key, key_len);
  }
  return 0;
}

static void put_string(mcp__buf *b, const char *key, const char *val) {
  if (val == NULL)
    return;
  mcp__buf_printf(b, ",\"%s\":", key);
  mcp__json_quote(b, val, strlen(val));
}

void mcp__server_info(mcp__buf *b, const mcp_server *srv, mcp__version v,
                      bool full) {
  mcp__buf_puts(b, "{\"name\":");
  mcp__json_quote(b, srv->name, strlen(srv->name));
  put_string(b, "version", srv->version);
  if (v >= MCP__V2025_06_18)
    put_string(b, "title", srv->title);
  if (full && v >= MCP__V2025_11_25) {
    put_string(b, "websiteUrl", srv->website_url);
    mcp__put_extras(b, srv->icons, NULL, v);
  }
  mcp__buf_putc(b, '}');
}

void mcp__result_begin(mcp__buf *b, const mcp_server *srv, bool modern,
                       const char *result_type) {
  mcp__result_begin_info(b, srv, modern, result_type, false);
}

static void result_begin(mcp__buf *b, const mcp_server *srv, bool modern,
                         const char *result_type, bool full, const char *meta) {
  mcp__buf_putc(b, '{');
  if (!modern) {
    if (meta) {
      mcp__buf_puts(b, "\"_meta\":{");
      mcp__buf_puts(b, meta);
      mcp__buf_puts(b, "},");
    }
    return;
  }
  /* Every modern result starts so: plain appends, not a format. */
  mcp__buf_puts(b, "\"resultType\":\"");
  mcp__buf_puts(b, result_type);
  mcp__buf_puts(b, "\",\"_meta\":{\"io.modelcontextprotocol/serverInfo\":");
  mcp__server_info(b, srv, MCP__VERSION_MODERN, full);
  if (meta) {
    mcp__buf_putc(b, ',');
    mcp__buf_puts(b, meta);
  }
  mcp__buf_puts(b, "},");
}

void mcp__result_begin_info(mcp__buf *b, const mcp_server *srv, bool modern,
                            const char *result_type, bool full) {
  result_begin(b, srv, modern, result_type, full, NULL);
}

void mcp__result_begin_meta(mcp__buf *b, const mcp_server *srv, bool modern,
                            const char *result_type, const char *meta) {
  result_begin(b, srv, modern, result_type, false, meta);
}

void mcp__put_cache(mcp__buf *b, const mcp_server *srv, bool private_) {
  mcp__buf_printf(b, "\"ttlMs\":%u,\"cacheScope\":\"%s\",",
                  atomic_load(&srv->list_ttl_ms),
                  private_ ? "private" : "public");
}

int mcp__result_end(mcp__buf *b) {
  if (b->err == 0 && b->len > 0 && b->data[b->len - 1] == ',')
    b->data[b->len - 1] = '}';
  else
    mcp__buf_putc(b, '}');
  return b->err;
}

void mcp_server_log(mcp_server *srv, mcp_log_level level, const char *message) {
  if (srv && message)
    mcp__log(srv, level, "%s", message);
}

void mcp__log(mcp_server *srv, mcp_log_level level, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* Messages quote client text (tool names, arguments): a control
   * character must not start a forged log line. */
  for (char *p = line; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
  mcp__utf8_trim(line);
  if (srv->log) {
    srv->log(level, line, srv->log_data);
  } else if (level >= MCP_LOG_WARNING) {
    fprintf(stderr, "libmcp: %s\n", line);
  }
}

void mcp__audit(mcp_server *srv, const char *tool, const mcp_principal *p,
                mcp_decision decision, const char *const *missing,
                bool is_error, bool failed, unsigned long long started_us,
                const char *ran_under, const mcp__hints *hints,
                const char *const *effects) {
  if (srv->audit == NULL)
    return;
  static const char *const none[] = {NULL};
  mcp_tool_annotations ran = {0};
  if (hints)
    ran = mcp__hints_annotations(hints);
  mcp_audit_record rec = {
      .tool = tool,
      .subject = p->subject,
      .decision = decision,
      .missing_scopes = missing ? missing : none,
      .is_error = is_error,
      .failed = failed,
      .duration_us = mcp__now_us() - started_us,
      .ran_under = ran_under,
      .hints = hints ? &ran : NULL,
      .effects = effects ? effects : none,
  };
  srv->audit(&rec, srv->audit_data);
}

void mcp__audit_reply(mcp_session *s, mcp__reply_ctx *ctx, const char *tool,
                      mcp_decision decision, const char *const *missing,
                      bool is_error, bool failed,
                      unsigned long long started_us) {
  mcp__audit(s->home.srv, tool, &s->home.principal, decision, missing, is_error,
             failed, started_us, NULL, NULL, NULL);
  ctx->facts.audited = true;
  ctx->facts.decision = decision;
}

/* The legacy notification for a change, and its method. */
static const char *change_method(mcp__change what) {
  switch (what) {
  case MCP__CHANGED_TOOLS:
    return "notifications/tools/list_changed";
  case MCP__CHANGED_PROMPTS:
    return "notifications/prompts/list_changed";
  case MCP__CHANGED_RESOURCES:
    return "notifications/resources/list_changed";
  default:
    return "notifications/resources/updated";
  }
}

static bool uri_listed(char *const *uris, size_t n, const char *uri) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(uris[i], uri) == 0)
      return true;
  return false;
}

/* Sends the change to one session: on its callback if it is a legacy
 * session that wants it, and to each modern listener that asked for it.
 * Returns how many were told. Call with s->home.lock held. */
static int tell_locked(mcp_session *s, mcp__change what, const char *uri,
                       const mcp__tool *entry, const char *legacy,
                       size_t legacy_len) {
  int told = 0;
  /* A change to a resource reaches only callers who may read it now: its
   * scopes were required when they subscribed, and are again here, in
   * case the caller's session outlived a change of the resource. */
  if (what == MCP__CHANGED_RESOURCE &&
      (entry == NULL || !mcp__tool_callable_by(entry, &s->home.principal)))
    return 0;
  unsigned feature = what == MCP__CHANGED_RESOURCE
                         ? (unsigned)MCP__LISTEN_RESOURCES
                         : (unsigned)what;
  /* A copy another process adopted hears nothing more: its client listens
   * there now. */
  if (atomic_load(&s->state) == MCP__STATE_READY && !s->home.closed &&
      !atomic_load(&s->moved) && (s->announced & feature) &&
      (what != MCP__CHANGED_RESOURCE ||
       uri_listed(s->subscribed, s->nsubscribed, uri)) &&
      mcp__send_locked(s, NULL, legacy, legacy_len, &mcp__sent_notification) ==
          0)
    told++;
  for (mcp__listener *l = s->listeners; l; l = l->next) {
    if (what == MCP__CHANGED_RESOURCE ? !uri_listed(l->uris, l->nuris, uri)
                                      : !(l->flags & (unsigned)what))
      continue;
    mcp__buf b = {0};
    mcp__buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":{",
                    change_method(what));
    if (uri) {
      mcp__buf_puts(&b, "\"uri\":");
      mcp__json_quote(&b, uri, strlen(uri));
      mcp__buf_putc(&b, ',');
    }
    mcp__buf_puts(&b, "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
    mcp__buf_append(&b, l->id, l->id_len);
    mcp__buf_puts(&b, "}}}");
    if (b.err == 0 && mcp__send_locked(s, l->sink, b.data, b.len,
                                       &mcp__sent_notification) == 0)
      told++;
    mcp__buf_free(&b);
  }
  return told;
}

/* Pins every open session (a reference each) under the server lock, so
 * that they are sent to after it is released and a send callback may call
 * back into the server. Returns them (*n of them; free the array), or NULL
 * with *oom set when there are some but no memory for the array. */
static mcp_session **pin_sessions(mcp_server *srv, size_t *n, bool *oom) {
  pthread_mutex_lock(&srv->lock);
  size_t all = 0;
  mcp__list_each(link, &srv->sessions) all++;
  mcp_session **pinned = all ? mcp__calloc(all, sizeof *pinned) : NULL;
  *n = 0;
  mcp__list_each(link, &srv->sessions) {
    mcp_session *s = mcp__container_of(link, mcp_session, link);
    if (pinned == NULL)
      break;
    pthread_mutex_lock(&s->home.lock);
    if (!s->home.closed) {
      atomic_fetch_add(&s->home.refs, 1);
      pinned[(*n)++] = s;
    }
    pthread_mutex_unlock(&s->home.lock);
  }
  *oom = all && pinned == NULL;
  pthread_mutex_unlock(&srv->lock);
  return pinned;
}

/* Tells this process's sessions (mcp__broadcast without publishing). */
static int broadcast_here(mcp_server *srv, mcp__change what, const char *uri) {
  pthread_mutex_lock(&srv->lock);
  bool nobody = mcp__list_empty(&srv->sessions);
  pthread_mutex_unlock(&srv->lock);
  if (nobody)
    return 0; /* a server being set up: nothing to tell, nothing to fail */
  /* What serves the resource decides who may hear of it (no one, when
   * nothing does). */
  int found = 0;
  mcp__tool *entry = what == MCP__CHANGED_RESOURCE
                         ? mcp__find_resource(srv, uri, NULL, NULL, &found)
                         : NULL;
  if (what == MCP__CHANGED_RESOURCE && entry == NULL && found == MCP_ENOENT)
    return 0;
  mcp__buf legacy = {0};
  mcp__buf_printf(&legacy, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"",
                  change_method(what));
  if (uri) {
    mcp__buf_puts(&legacy, ",\"params\":{\"uri\":");
    mcp__json_quote(&legacy, uri, strlen(uri));
    mcp__buf_putc(&legacy, '}');
  }
  mcp__buf_putc(&legacy, '}');
  size_t n;
  bool oom;
  mcp_session **pinned = pin_sessions(srv, &n, &oom);
  oom = oom || legacy.err || found == MCP_ENOMEM;
  int told = 0;
  for (size_t i = 0; i < n; i++) {
    pthread_mutex_lock(&pinned[i]->home.lock);
    if (!oom)
      told += tell_locked(pinned[i], what, uri, entry, legacy.data, legacy.len);
    mcp__session_unref_locked(pinned[i]);
  }
  mcp__free(pinned);
  mcp__buf_free(&legacy);
  mcp__tool_unref(entry);
  if (oom) {
    mcp__log(srv, MCP_LOG_ERROR, "out of memory: %s not sent",
             change_method(what));
    return MCP_ENOMEM;
  }
  return told;
}

/* ---- changes across processes ----------------------------------------------
 * With a store that has events (mcp_server_set_store), a change is also
 * published as {"node":N,"change":C,"uri":U}: N the publishing server's
 * node name (a server ignores its own), C one of the names below, U the
 * resource's uri for "resource". Every server sharing the store hears it
 * and tells its own sessions, as if the change were its own. */

static const struct {
  mcp__change what;
  const char *name;
} CHANGES[] = {{MCP__CHANGED_TOOLS, "tools"},
               {MCP__CHANGED_PROMPTS, "prompts"},
               {MCP__CHANGED_RESOURCES, "resources"},
               {MCP__CHANGED_RESOURCE, "resource"}};

static void publish_change(mcp_server *srv, mcp__change what, const char *uri) {
  mcp_store *st = atomic_load(&srv->store);
  if (st == NULL || !atomic_load(&srv->store_events))
    return;
  const char *name = NULL;
  for (size_t i = 0; i < sizeof CHANGES / sizeof CHANGES[0]; i++)
    if (CHANGES[i].what == what)
      name = CHANGES[i].name;
  mcp__buf b = {0};
  mcp__buf_printf(&b, "{\"node\":\"%s\",\"change\":\"%s\"", srv->node, name);
  if (uri) {
    mcp__buf_puts(&b, ",\"uri\":");
    mcp__json_quote(&b, uri, strlen(uri));
  }
  mcp__buf_putc(&b, '}');
  int rc = b.err ? MCP_ENOMEM : mcp_store_publish(st, b.data, b.len);
  mcp__buf_free(&b);
  if (rc == 0)
    return;
  char where[200];
  mcp_store_describe(st, where, sizeof where);
  mcp__log(srv, MCP_LOG_WARNING,
           "%s%s%.200s not published to the other processes sharing the "
           "store %s: %s",
           change_method(what), uri ? " of " : "", uri ? uri : "", where,
           mcp_strerror(rc));
}

int mcp__publish(mcp_server *srv, const char *what, const char *event,
                 size_t len) {
  mcp_store *st = atomic_load(&srv->store);
  int rc = st && atomic_load(&srv->store_events)
               ? mcp_store_publish(st, event, len)
               : MCP_ENOTSUP;
  if (rc != 0) {
    char where[200];
    mcp_store_describe(st, where, sizeof where);
    mcp__log(srv, MCP_LOG_WARNING,
             "%s not published to the other processes sharing the store "
             "%s: %s",
             what, where[0] ? where : "(none)", mcp_strerror(rc));
  }
  return rc;
}

mcp_store *mcp__records(mcp_server *srv) {
  mcp_store *st = atomic_load(&srv->store);
  return mcp_store_has_records(st) ? st : NULL;
}

/* A store's listener: a change another server published, told here; or
 * what another server asks of a task this one runs (task.c). */
static void on_store_event(void *arg, const char *event, unsigned long len) {
  mcp_server *srv = arg;
  cJSON *j = cJSON_ParseWithLength(event, len);
  if (cJSON_IsString(mcp__json_member(j, "task"))) {
    mcp__task_event(srv, j);
    cJSON_Delete(j);
    return;
  }
  if (cJSON_IsString(mcp__json_member(j, "session"))) {
    mcp__session_event(srv, j);
    cJSON_Delete(j);
    return;
  }
  const cJSON *node = mcp__json_member(j, "node");
  const cJSON *change = mcp__json_member(j, "change");
  const cJSON *uri = mcp__json_member(j, "uri");
  const char *from = cJSON_GetStringValue(node);
  const char *name = cJSON_GetStringValue(change);
  int what = -1;
  for (size_t i = 0; name && i < sizeof CHANGES / sizeof CHANGES[0]; i++)
    if (strcmp(name, CHANGES[i].name) == 0)
      what = (int)CHANGES[i].what;
  bool needs_uri = what == (int)MCP__CHANGED_RESOURCE;
  if (from == NULL || what < 0 || needs_uri != cJSON_IsString(uri))
    mcp__log(srv, MCP_LOG_WARNING,
             "an event of the store that is not a change (%lu bytes): "
             "ignored",
             len);
  else if (strcmp(from, srv->node) != 0)
    broadcast_here(srv, (mcp__change)what, cJSON_GetStringValue(uri));
  cJSON_Delete(j);
}

void mcp__server_use_store(mcp_server *srv, mcp_store *st) {
  pthread_mutex_lock(&srv->store_lock);
  mcp_store *old = atomic_exchange(&srv->store, st);
  if (old != st) {
    if (atomic_exchange(&srv->store_events, false))
      mcp_store_unlisten(old, on_store_event, srv);
    int rc = st ? mcp_store_listen(st, on_store_event, srv) : MCP_ENOTSUP;
    atomic_store(&srv->store_events, rc == 0);
    if (rc != 0 && rc != MCP_ENOTSUP)
      mcp__log(srv, MCP_LOG_ERROR,
               "the store's events: %s; changes stay in this process",
               mcp_strerror(rc));
    /* This server's node lives in the records of the store it uses. */
    if (srv->joined)
      mcp_store_node_join(srv->joined, srv->node, 0);
    srv->joined = NULL;
    if (mcp_store_has_records(st)) {
      rc = mcp_store_node_join(st, srv->node, atomic_load(&srv->node_lease_ms));
      if (rc == 0)
        srv->joined = st;
      else
        mcp__log(srv, MCP_LOG_ERROR,
                 "the store's records: node %s not joined: %s; other "
                 "processes will take its tasks as lost",
                 srv->node, mcp_strerror(rc));
    }
  }
  pthread_mutex_unlock(&srv->store_lock);
}

int mcp_server_set_node_lease(mcp_server *srv, unsigned ms) {
  if (srv == NULL || (ms != 0 && (ms < 300 || ms > 3600000)))
    return MCP_EINVAL;
  atomic_store(&srv->node_lease_ms, ms ? ms : MCP__NODE_LEASE_MS);
  return 0;
}

int mcp__broadcast(mcp_server *srv, mcp__change what, const char *uri) {
  publish_change(srv, what, uri);
  return broadcast_here(srv, what, uri);
}

/* Whether s is to hear of a task: its caller's (subject), with a tool it
 * may use (with hide-forbidden on). */
static bool hears_remote(mcp_session *s, const char *subject,
                         const mcp__tool *tool) {
  const char *own = s->home.principal.subject;
  bool same = own == NULL ? subject == NULL
                          : subject != NULL && strcmp(own, subject) == 0;
  return same && (tool == NULL || !atomic_load(&s->home.srv->hide_forbidden) ||
                  mcp__tool_callable_by(tool, &s->home.principal));
}

int mcp__broadcast_remote_task(mcp_server *srv, const char *id,
                               const char *detail, size_t len,
                               const char *subject, const char *tool) {
  if (atomic_load(&srv->task_listeners) == 0)
    return 0;
  mcp__tool *entry = mcp__find_visible(srv, &srv->reg, tool, NULL);
  if (entry == NULL)
    return 0; /* a tool this node does not serve: nobody may hear */
  int told = mcp__broadcast_task(srv, id, detail, len, subject, entry);
  mcp__tool_unref(entry);
  return told;
}

int mcp__broadcast_task(mcp_server *srv, const char *id, const char *detail,
                        size_t len, const char *subject,
                        const mcp__tool *tool) {
  if (atomic_load(&srv->task_listeners) == 0)
    return 0; /* nobody listens for a task: no session to visit */
  size_t n;
  bool oom;
  mcp_session **pinned = pin_sessions(srv, &n, &oom);
  int told = 0;
  for (size_t i = 0; i < n; i++) {
    mcp_session *s = pinned[i];
    pthread_mutex_lock(&s->home.lock);
    bool hears = hears_remote(s, subject, tool);
    for (mcp__listener *l = hears ? s->listeners : NULL; l; l = l->next) {
      if (!uri_listed(l->task_ids, l->ntask_ids, id))
        continue;
      /* Each carries the whole task, as tasks/get would give it now. */
      mcp__buf b = {0};
      mcp__buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                        "tasks\",\"params\":{");
      mcp__buf_append(&b, detail, len);
      mcp__buf_puts(&b,
                    "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
      mcp__buf_append(&b, l->id, l->id_len);
      mcp__buf_puts(&b, "}}}");
      if (b.err == 0 && mcp__send_locked(s, l->sink, b.data, b.len,
                                         &mcp__sent_notification) == 0)
        told++;
      oom = oom || b.err;
      mcp__buf_free(&b);
    }
    mcp__session_unref_locked(s);
  }
  mcp__free(pinned);
  if (oom) {
    mcp__log(srv, MCP_LOG_ERROR, "out of memory: notifications/tasks not sent");
    return MCP_ENOMEM;
  }
  return told;
}

/* ---- what is offered, and lookups -----------------------------------------
 */

const mcp_principal *mcp__visible_to(mcp_session *s) {
  return atomic_load(&s->home.srv->hide_forbidden) ? &s->home.principal : NULL;
}

mcp__tool *mcp__find_visible(mcp_server *srv, const mcp__registry *r,
                             const char *name, const mcp_principal *visible) {
  pthread_mutex_lock(&srv->lock);
  mcp__tool *t = mcp__registry_find(r, name);
  pthread_mutex_unlock(&srv->lock);
  /* With hide-forbidden on, what the caller may not use does not exist for
   * it: the request gets the very answer an unknown name gets. */
  if (t && visible && !mcp__tool_callable_by(t, visible)) {
    mcp__tool_unref(t);
    t = NULL;
  }
  return t;
}

static bool any_complete(const mcp__registry *r) {
  for (size_t i = 0; i < r->n; i++)
    if (r->tools[i]->complete)
      return true;
  return false;
}

/* A feature is offered while the server has something of it registered:
 * announced in the capabilities, its methods served; without it they
 * answer -32601, as for a capability not advertised. Register prompts and
 * resources before serving, so that initialize announces them. */
bool mcp__offers(mcp_server *srv, mcp__feature f) {
  pthread_mutex_lock(&srv->lock);
  bool on;
  switch (f) {
  case MCP__FEATURE_PROMPTS:
    on = srv->prompts.n > 0;
    break;
  case MCP__FEATURE_RESOURCES:
    on = srv->resources.n + srv->templates.n > 0;
    break;
  case MCP__FEATURE_SKILLS:
    on = srv->skills.n > 0;
    break;
  case MCP__FEATURE_TASKS:
    on = srv->reg.ntask > 0;
    break;
  case MCP__FEATURE_RESOLUTION:
    on = srv->reg.nresolve > 0;
    break;
  case MCP__FEATURE_TRUST:
    on = srv->reg.n > 0;
    break;
  default: /* completions */
    on = any_complete(&srv->prompts) || any_complete(&srv->templates);
  }
  pthread_mutex_unlock(&srv->lock);
  return on;
}

/* Finds what serves uri: a resource registered under it, else the first
 * template that matches it, whose variables go to *vars (NULL when vars is
 * NULL). With visible, entries hidden from that caller are passed over, as
 * if absent. Returns a new reference, or NULL with *rc MCP_ENOENT or
 * MCP_ENOMEM. */
mcp__tool *mcp__find_resource(mcp_server *srv, const char *uri,
                              const mcp_principal *visible, cJSON **vars,
                              int *rc) {
  cJSON *found = NULL;
  *rc = MCP_ENOENT;
  pthread_mutex_lock(&srv->lock);
  mcp__tool *t = mcp__registry_find(&srv->resources, uri);
  if (t && visible && !mcp__tool_callable_by(t, visible)) {
    mcp__tool_unref(t);
    t = NULL;
  }
  for (size_t i = 0; t == NULL && i < srv->templates.n; i++) {
    mcp__tool *c = srv->templates.tools[i];
    if (visible && !mcp__tool_callable_by(c, visible))
      continue;
    int m = mcp__uritemplate_match(c->tmpl, uri, &found);
    if (m == 0) {
      t = c;
      mcp__tool_ref(t);
    } else if (m == MCP_ENOMEM) {
      *rc = MCP_ENOMEM;
      break;
    }
  }
  pthread_mutex_unlock(&srv->lock);
  if (t && found == NULL && vars && (found = cJSON_CreateObject()) == NULL) {
    mcp__tool_unref(t);
    *rc = MCP_ENOMEM;
    return NULL;
  }
  if (vars)
    *vars = found;
  else
    cJSON_Delete(found);
  return t;
}

/* Adds a built entry to one of the server's tables and tells the clients. */
static int add_entry(mcp_server *srv, mcp__registry *r, mcp__tool *t,
                     const char *what, mcp__change change) {
  pthread_mutex_lock(&srv->lock);
  int rc = mcp__registry_add(r, t);
  pthread_mutex_unlock(&srv->lock);
  if (rc == MCP_EEXIST)
    fail(srv, rc, "%s \"%.200s\": a %s of that name is already registered",
         what, t->name, what);
  else if (rc)
    fail(srv, rc, "%s \"%.200s\": out of memory", what, t->name);
  if (rc) {
    mcp__tool_unref(t);
    return rc;
  }
  mcp__broadcast(srv, change, NULL);
  return 0;
}

static int remove_entry(mcp_server *srv, mcp__registry *r, const char *name,
                        const char *what, mcp__change change) {
  if (srv == NULL || name == NULL)
    return MCP_EINVAL;
  pthread_mutex_lock(&srv->lock);
  int rc = mcp__registry_remove(r, name);
  pthread_mutex_unlock(&srv->lock);
  if (rc)
    return fail(
        srv, rc, "%s \"%.200s\": no %s of that name is registered", what,
        mcp__utf8_valid(name, strlen(name)) ? name : "(invalid UTF-8)", what);
  mcp__broadcast(srv, change, NULL);
  return 0;
}

int mcp_server_add_tool(mcp_server *srv, const mcp_tool *tool,
                        void *user_data) {
  if (srv == NULL)
    return MCP_EINVAL;
  char err[ERR_MAX];
  mcp__tool *t = NULL;
  int rc = mcp__tool_new(tool, user_data, &t, err, sizeof err);
  if (rc)
    return fail(srv, rc, "%s", err);
  return add_entry(srv, &srv->reg, t, "tool", MCP__CHANGED_TOOLS);
}

int mcp_server_remove_tool(mcp_server *srv, const char *name) {
  return remove_entry(srv, srv ? &srv->reg : NULL, name, "tool",
                      MCP__CHANGED_TOOLS);
}

int mcp_server_add_prompt(mcp_server *srv, const mcp_prompt *prompt,
                          void *user_data) {
  if (srv == NULL)
    return MCP_EINVAL;
  char err[ERR_MAX];
  mcp__tool *t = NULL;
  int rc = mcp__prompt_new(prompt, user_data, &t, err, sizeof err);
  if (rc)
    return fail(srv, rc, "%s", err);
  return add_entry(srv, &srv->prompts, t, "prompt", MCP__CHANGED_PROMPTS);
}

int mcp_server_remove_prompt(mcp_server *srv, const char *name) {
  return remove_entry(srv, srv ? &srv->prompts : NULL, name, "prompt",
                      MCP__CHANGED_PROMPTS);
}

int mcp_server_add_resource(mcp_server *srv, const mcp_resource *resource,
                            void *user_data) {
  if (srv == NULL)
    return MCP_EINVAL;
  char err[ERR_MAX];
  mcp__tool *t = NULL;
  int rc = mcp__resource_new(resource, user_data, &t, err, sizeof err);
  if (rc)
    return fail(srv, rc, "%s", err);
  return add_entry(srv, t->tmpl ? &srv->templates : &srv->resources, t,
                   t->tmpl ? "resource template" : "resource",
                   MCP__CHANGED_RESOURCES);
}

int mcp_server_remove_resource(mcp_server *srv, const char *uri) {
  if (srv == NULL || uri == NULL)
    return MCP_EINVAL;
  pthread_mutex_lock(&srv->lock);
  int rc = mcp__registry_remove(&srv->resources, uri);
  if (rc == MCP_ENOENT)
    rc = mcp__registry_remove(&srv->templates, uri);
  pthread_mutex_unlock(&srv->lock);
  if (rc)
    return fail(srv, rc, "resource \"%.200s\": none is registered under it",
                mcp__utf8_valid(uri, strlen(uri)) ? uri : "(invalid UTF-8)");
  mcp__broadcast(srv, MCP__CHANGED_RESOURCES, NULL);
  return 0;
}

/* Reads one file of a skill: the bytes its entry keeps, as text when they
 * are UTF-8, else as a blob. */
static int read_skill_file(mcp_call *call, void *user_data) {
  const mcp__tool *t = user_data;
  if (mcp__utf8_valid(t->owned, t->owned_len))
    return mcp_result_resource_text(call, t->name, t->mime_type, t->owned);
  return mcp_result_resource_blob(call, t->name, t->mime_type, t->owned,
                                  t->owned_len);
}

/* Takes out of the registries what add_skill put in: the skill entry
 * (when skill) and the first n files. Call with srv->lock held. */
static void skill_unregister(mcp_server *srv, const mcp__tool *skill,
                             char *const *files, size_t n) {
  for (size_t i = 0; i < n; i++)
    mcp__registry_remove(&srv->resources, files[i]);
  if (skill)
    mcp__registry_remove(&srv->skills, skill->name);
}

int mcp_server_add_skill(mcp_server *srv, const mcp_skill *skill) {
  if (srv == NULL)
    return MCP_EINVAL;
  char err[ERR_MAX];
  mcp__skill_entries e;
  int rc = mcp__skill_new(skill, read_skill_file, &e, err, sizeof err);
  if (rc)
    return fail(srv, rc, "%s", err);
  /* Each registry takes a reference of its own; e keeps its own until the
   * end, for the messages and for taking back what went in when a later
   * entry is refused. */
  pthread_mutex_lock(&srv->lock);
  mcp__tool_ref(e.skill);
  rc = mcp__registry_add(&srv->skills, e.skill);
  bool skill_in = rc == 0;
  if (!skill_in)
    mcp__tool_unref(e.skill);
  size_t in = 0;
  const char *clash = NULL;
  while (rc == 0 && in < e.nfiles) {
    mcp__tool_ref(e.files[in]);
    rc = mcp__registry_add(&srv->resources, e.files[in]);
    if (rc == 0) {
      in++;
    } else {
      mcp__tool_unref(e.files[in]);
      clash = e.files[in]->name;
    }
  }
  if (rc && skill_in)
    skill_unregister(srv, e.skill, e.skill->arg_names, in);
  pthread_mutex_unlock(&srv->lock);
  if (rc == MCP_EEXIST && !skill_in)
    fail(srv, rc, "skill \"%s\": a skill at that path is already registered",
         skill->path);
  else if (rc == MCP_EEXIST)
    fail(srv, rc,
         "skill \"%s\": a resource is already registered under \"%.200s\"",
         skill->path, clash);
  else if (rc)
    fail(srv, rc, "skill \"%s\": out of memory", skill->path);
  mcp__skill_entries_free(&e);
  if (rc == 0)
    mcp__broadcast(srv, MCP__CHANGED_RESOURCES, NULL);
  return rc;
}

int mcp_server_remove_skill(mcp_server *srv, const char *path) {
  if (srv == NULL || path == NULL)
    return MCP_EINVAL;
  mcp__buf b = {0};
  mcp__buf_printf(&b, "skill://%s/SKILL.md", path);
  if (b.err) {
    mcp__buf_free(&b);
    return fail(srv, MCP_ENOMEM, "skill: out of memory");
  }
  pthread_mutex_lock(&srv->lock);
  mcp__tool *t = mcp__registry_find(&srv->skills, b.data);
  if (t)
    skill_unregister(srv, t, t->arg_names, t->nargs);
  pthread_mutex_unlock(&srv->lock);
  mcp__buf_free(&b);
  if (t == NULL)
    return fail(srv, MCP_ENOENT, "skill \"%.200s\": no skill at that path",
                mcp__utf8_valid(path, strlen(path)) ? path : "(invalid UTF-8)");
  mcp__tool_unref(t);
  mcp__broadcast(srv, MCP__CHANGED_RESOURCES, NULL);
  return 0;
}

int mcp_server_resource_updated(mcp_server *srv, const char *uri) {
  if (srv == NULL || uri == NULL || !mcp__utf8_valid(uri, strlen(uri)))
    return MCP_EINVAL;
  return mcp__broadcast(srv, MCP__CHANGED_RESOURCE, uri);
}

int mcp_server_check_param_headers(mcp_server *srv, const char *tool,
                                   const cJSON *arguments, mcp_header_fn header,
                                   void *user_data, char *why,
                                   size_t why_size) {
  if (srv == NULL || tool == NULL || header == NULL ||
      (why == NULL && why_size > 0))
    return MCP_EINVAL;
  pthread_mutex_lock(&srv->lock);
  mcp__tool *t = mcp__registry_find(&srv->reg, tool);
  pthread_mutex_unlock(&srv->lock);
  if (t == NULL)
    return MCP_ENOENT;
  int rc = mcp__params_check(t, arguments, header, user_data, why, why_size);
  mcp__tool_unref(t);
  return rc;
}

static int by_string(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

long mcp_server_scopes(mcp_server *srv, char *buf, size_t size) {
  if (srv == NULL || (buf == NULL && size > 0))
    return MCP_EINVAL;
  const mcp__registry *tables[] = {&srv->reg, &srv->prompts, &srv->resources,
                                   &srv->templates};
  pthread_mutex_lock(&srv->lock);
  size_t n = 0;
  for (size_t t = 0; t < 4; t++)
    for (size_t i = 0; i < tables[t]->n; i++)
      n += tables[t]->tools[i]->nscopes;
  const char **all = mcp__calloc(n ? n : 1, sizeof *all);
  if (all == NULL) {
    pthread_mutex_unlock(&srv->lock);
    return MCP_ENOMEM;
  }
  n = 0;
  for (size_t t = 0; t < 4; t++)
    for (size_t i = 0; i < tables[t]->n; i++)
      for (size_t k = 0; k < tables[t]->tools[i]->nscopes; k++)
        all[n++] = tables[t]->tools[i]->scopes[k];
  qsort(all, n, sizeof *all, by_string);
  size_t need = 0;
  if (size)
    buf[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (i && strcmp(all[i], all[i - 1]) == 0)
      continue;
    size_t len = strlen(all[i]);
    size_t at = need ? need + 1 : 0;
    if (at + len < size) {
      if (need)
        buf[need] = ' ';
      memcpy(buf + at, all[i], len + 1);
    }
    need = at + len;
  }
  pthread_mutex_unlock(&srv->lock);
  mcp__free(all);
  return (long)need;
}

int mcp_server_set_executor(mcp_server *srv, const mcp_executor *ex) {
  if (srv == NULL)
    return MCP_EINVAL;
  if (ex == NULL || ex->submit == NULL)
    return fail(srv, MCP_EINVAL,
                "mcp_server_set_executor: an executor needs a submit "
                "callback");
  pthread_mutex_lock(&srv->lock);
  bool taken = atomic_load(&srv->has_executor);
  if (!taken) {
    srv->executor = *ex;
    atomic_store_explicit(&srv->has_executor, true, memory_order_release);
  }
  pthread_mutex_unlock(&srv->lock);
  if (taken)
    return fail(srv, MCP_ESTATE,
                "mcp_server_set_executor: the server has an executor "
                "already (it stays until the server is freed)");
  return 0;
}

/* The executor's sentence for mcp_server_lint; 1 when it warned. */
static unsigned lint_executor(mcp_server *srv) {
  if (!atomic_load_explicit(&srv->has_executor, memory_order_acquire) ||
      srv->executor.lint == NULL)
    return 0;
  char text[512] = "";
  int rc = srv->executor.lint(text, sizeof text, srv->executor.user_data);
  if (rc < 0 || text[0] == '\0')
    return 0;
  text[sizeof text - 1] = '\0';
  mcp__log(srv, rc > 0 ? MCP_LOG_WARNING : MCP_LOG_INFO, "%s", text);
  return rc > 0;
}

/* MCP Apps: a tool whose _meta.ui.resourceUri (or the deprecated
 * _meta["ui/resourceUri"]) names no registered view (a tool and its view
 * may be registered in either order, so only now can it be seen). Returns
 * the warnings written. */
static unsigned lint_views(mcp_server *srv) {
  pthread_mutex_lock(&srv->lock);
  size_t n = 0;
  mcp__tool **with = mcp__calloc(srv->reg.n + 1, sizeof *with);
  for (size_t i = 0; with && i < srv->reg.n; i++)
    if (srv->reg.tools[i]->meta) {
      with[n] = srv->reg.tools[i];
      mcp__tool_ref(with[n++]);
    }
  pthread_mutex_unlock(&srv->lock);
  unsigned warnings = 0;
  for (size_t i = 0; i < n; i++) {
    mcp__json_doc doc = {0};
    const char *uri = NULL, *key = NULL;
    /* ui.resourceUri or its deprecated flat key, which registration made
     * agree. */
    if (mcp__json_parse(with[i]->meta, strlen(with[i]->meta), NULL, &doc, NULL,
                        0) == 0)
      uri = mcp__ui_view_uri(doc.root, &key);
    int rc = 0;
    mcp__tool *view =
        uri ? mcp__find_resource(srv, uri, NULL, NULL, &rc) : NULL;
    if (uri && view == NULL && rc == MCP_ENOENT) {
      mcp__log(srv, MCP_LOG_WARNING,
               "tool \"%s\" names the view \"%s\" (meta %s), but no "
               "resource serves it: hosts cannot show the tool's UI",
               with[i]->name, uri, key);
      warnings++;
    }
    mcp__tool_unref(view);
    mcp__json_doc_free(&doc);
    mcp__tool_unref(with[i]);
  }
  mcp__free(with);
  return warnings;
}

unsigned mcp_server_lint(mcp_server *srv, const char *const *supported) {
  if (srv == NULL)
    return 0;
  unsigned warnings = lint_executor(srv) + lint_views(srv);
  pthread_mutex_lock(&srv->lock);
  for (size_t i = 0; i < srv->reg.n; i++) {
    const mcp__tool *t = srv->reg.tools[i];
    /* The hints are read here only to point the author at a tool whose
     * claims say it needs guarding; access is still decided by scopes. */
    if (t->nscopes == 0 && (t->destructive || t->open_world)) {
      mcp__log(srv, MCP_LOG_WARNING,
               "tool \"%s\" is %s but needs no scope: any authenticated "
               "caller may use it",
               t->name, t->destructive ? "destructive" : "open-world");
      warnings++;
    }
    /* A resolver can only tighten the static hints: read-only and
     * closed-world are already the tightest, so it has nothing to say. */
    if (t->resolve && t->read_only && !t->open_world) {
      mcp__log(srv, MCP_LOG_WARNING,
               "tool \"%s\" has a resolver, but its static hints (read-only, "
               "closed-world) are already the tightest: nothing to resolve",
               t->name);
      warnings++;
    }
    for (size_t k = 0; supported && k < t->nscopes; k++) {
      bool listed = false;
      for (const char *const *s = supported; *s && !listed; s++)
        listed = strcmp(*s, t->scopes[k]) == 0;
      if (!listed) {
        mcp__log(srv, MCP_LOG_WARNING,
                 "tool \"%s\" needs scope \"%s\", which scopes_supported "
                 "does not list: no client can obtain it",
                 t->name, t->scopes[k]);
        warnings++;
      }
    }
  }
  pthread_mutex_unlock(&srv->lock);
  return warnings;
}
