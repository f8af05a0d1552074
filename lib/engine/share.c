/* Legacy sessions kept in the server's store, so that another process
 * sharing it can adopt one whose process is gone (mcp_session_share,
 * mcp_session_adopt).
 *
 * A shared session's state (its handshake: version, client capabilities,
 * what initialize announced; its log level and resource subscriptions;
 * the principal it belongs to) is the record "session:<id>", written by
 * the process that holds the session after every change and again before
 * half its TTL passed. One put is in flight at a time; a change made
 * meanwhile is put when it is answered, so an older state never overwrites
 * a newer one. A session that ends for good (mcp_session_unshare) is
 * settled final, so nobody adopts it; one that only leaves its process
 * (the process stops) stays adoptable until its record expires.
 *
 * The share outlives its session while a put is in flight: it holds what
 * the put needs (the store, the text, the server for its log) and never
 * points back at the session. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define SESSION_KEY "session:"

/* One shared session's record and its puts. */
struct mcp__share {
  pthread_mutex_t lock;
  unsigned refs; /* the session's, and one while a put is in flight */
  mcp_server *srv;
  mcp_store *store;
  char *key;
  unsigned long long ttl_ms;
  /* Under lock. text is the state put last (or being put); it changes
   * only as a put is issued, by the thread that set busy. */
  char *text, *pending;
  size_t len, pending_len;
  _Atomic bool gone;           /* a put was refused: another process settled the
                                  record (deleted the session there) */
  bool busy;                   /* a put is in flight */
  bool ended;                  /* unshared: the next put settles the record */
  bool settled;                /* the final put was issued: nothing after it */
  uint64_t kept_us;            /* when the last put was issued */
  unsigned long long since_ms; /* wall clock when this copy was shared or
                                  adopted: of two copies, the later one
                                  serves (mcp__session_event) */
};

/* ---- the record's text ----------------------------------------------------
 * {"state":1,"version":"2025-06-18","caps":{...},"announced":5,"log":-1,
 *  "subs":["uri",...],"subject":"alice"|null,"scopes":["a","b"]|null,
 *  "all":false}; scopes sorted, so that two principals compare as sets. */

static int cmp_text(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* p's scopes, sorted (a new array of borrowed strings), in *out; *n of
 * them. Returns 0 or MCP_ENOMEM. */
static int sorted_scopes(const mcp_principal *p, const char ***out, size_t *n) {
  *n = 0;
  *out = NULL;
  while (p->scopes && p->scopes[*n])
    (*n)++;
  if (*n == 0)
    return 0;
  const char **v = mcp__malloc(*n * sizeof *v);
  if (v == NULL)
    return MCP_ENOMEM;
  memcpy(v, p->scopes, *n * sizeof *v);
  qsort(v, *n, sizeof *v, cmp_text);
  *out = v;
  return 0;
}

static void put_string_or_null(mcp__buf *b, const char *s) {
  if (s)
    mcp__json_quote(b, s, strlen(s));
  else
    mcp__buf_puts(b, "null");
}

/* The state of s as its record's text. Call with s->home.lock held. */
static void state_text_locked(mcp_session *s, mcp__buf *b) {
  const mcp_principal *p = &s->home.principal;
  mcp__buf_printf(
      b, "{\"state\":%d,\"version\":\"%s\",\"caps\":", atomic_load(&s->state),
      mcp__version_name((mcp__version)atomic_load(&s->version)));
  if (s->home.client_caps)
    mcp__json_write(b, s->home.client_caps);
  else
    mcp__buf_puts(b, "{}");
  mcp__buf_printf(b, ",\"announced\":%u,\"log\":%d,\"subs\":[", s->announced,
                  atomic_load(&s->log_level));
  for (size_t i = 0; i < s->nsubscribed; i++) {
    if (i)
      mcp__buf_putc(b, ',');
    mcp__json_quote(b, s->subscribed[i], strlen(s->subscribed[i]));
  }
  mcp__buf_puts(b, "],\"subject\":");
  put_string_or_null(b, p->subject);
  const char **scopes;
  size_t n;
  if (sorted_scopes(p, &scopes, &n) != 0) {
    b->err = MCP_ENOMEM;
    return;
  }
  mcp__buf_puts(b, p->scopes ? ",\"scopes\":[" : ",\"scopes\":null");
  for (size_t i = 0; i < n; i++) {
    if (i)
      mcp__buf_putc(b, ',');
    mcp__json_quote(b, scopes[i], strlen(scopes[i]));
  }
  if (p->scopes)
    mcp__buf_putc(b, ']');
  mcp__free(scopes);
  mcp__buf_printf(b, ",\"all\":%s}", p->all_scopes ? "true" : "false");
}

/* ---- puts ---------------------------------------------------------------- */

static void share_unref(mcp__share *sh) {
  pthread_mutex_lock(&sh->lock);
  bool last = --sh->refs == 0;
  pthread_mutex_unlock(&sh->lock);
  if (!last)
    return;
  mcp__free(sh->text);
  mcp__free(sh->pending);
  mcp__free(sh->key);
  pthread_mutex_destroy(&sh->lock);
  mcp__server_unref(sh->srv);
  mcp__free(sh);
}

static void put_answered(void *arg, int rc, const mcp_store_record *recs,
                         unsigned n, bool more, const char *why);

/* Issues the next put: the pending text when there is one, else the
 * current one again (a renewal), final once the session ended. Call with
 * sh->lock held and busy just set by the caller; returns with it
 * released. */
static void issue_unlock(mcp__share *sh) {
  /* The store the share was made for, while the server still uses it: a
   * store taken away (the server goes, or the embedder changed it) may be
   * freed, so nothing more is put there. */
  if (mcp__records(sh->srv) != sh->store) {
    sh->busy = false;
    pthread_mutex_unlock(&sh->lock);
    return;
  }
  if (sh->pending) {
    mcp__free(sh->text);
    sh->text = sh->pending;
    sh->len = sh->pending_len;
    sh->pending = NULL;
  }
  bool final = sh->ended;
  sh->settled = final;
  sh->kept_us = mcp__now_us();
  sh->refs++; /* the put's */
  pthread_mutex_unlock(&sh->lock);
  /* A settled session's record keeps no state: "ended" is all another
   * process needs to learn, and all it must not adopt. */
  static const char ended[] = "{\"ended\":true}";
  mcp_store_record rec = {
      .key = sh->key,
      .value = final ? ended : sh->text,
      .len = final ? sizeof ended - 1 : sh->len,
      .holder = sh->srv->node,
      .ttl_ms = sh->ttl_ms,
      .final = final,
  };
  int rc = mcp_store_put(sh->store, &rec, put_answered, sh);
  if (rc != 0)
    put_answered(sh, rc, NULL, 0, false, mcp_strerror(rc));
}

static void put_answered(void *arg, int rc, const mcp_store_record *recs,
                         unsigned n, bool more, const char *why) {
  (void)more;
  mcp__share *sh = arg;
  if (rc != 0)
    mcp__log(sh->srv, MCP_LOG_WARNING,
             "a session's state was not kept in the store (%s): another "
             "process could not adopt its latest state",
             why);
  bool refused = rc == 0 && n == 1 && !recs[0].written;
  pthread_mutex_lock(&sh->lock);
  if (refused && !sh->settled) {
    /* Ended elsewhere (a DELETE that reached another process): this copy
     * is stale, and nothing more is put. */
    sh->settled = true;
    atomic_store(&sh->gone, true);
  }
  if (!sh->settled && (sh->pending || sh->ended))
    issue_unlock(sh); /* busy stays set: the next put is this one's */
  else {
    sh->busy = false;
    pthread_mutex_unlock(&sh->lock);
  }
  share_unref(sh);
}

/* Hands text (taken: len bytes from mcp__malloc, or NULL with end) to sh:
 * put now, or after the put in flight. */
static void offer(mcp__share *sh, char *text, size_t len) {
  pthread_mutex_lock(&sh->lock);
  if (sh->settled || (sh->ended && text)) {
    pthread_mutex_unlock(&sh->lock);
    mcp__free(text);
    return;
  }
  if (text) {
    mcp__free(sh->pending);
    sh->pending = text;
    sh->pending_len = len;
  }
  if (sh->busy) {
    pthread_mutex_unlock(&sh->lock);
    return;
  }
  sh->busy = true;
  issue_unlock(sh);
}

void mcp__session_changed(mcp_session *s) {
  mcp__share *sh = atomic_load(&s->share);
  if (sh == NULL || atomic_load(&s->state) == MCP__STATE_NEW)
    return;
  mcp__buf b = {0};
  pthread_mutex_lock(&s->home.lock);
  state_text_locked(s, &b);
  pthread_mutex_unlock(&s->home.lock);
  if (b.err) {
    mcp__buf_free(&b);
    mcp__log(s->home.srv, MCP_LOG_WARNING,
             "a session's state was not kept in the store: out of memory");
    return;
  }
  offer(sh, b.data, b.len);
}

void mcp__session_touch(mcp_session *s) {
  mcp__share *sh = atomic_load(&s->share);
  if (sh == NULL)
    return;
  pthread_mutex_lock(&sh->lock);
  bool due = !sh->busy && !sh->ended && sh->text &&
             mcp__now_us() - sh->kept_us >= sh->ttl_ms * 500;
  if (!due) {
    pthread_mutex_unlock(&sh->lock);
    return;
  }
  sh->busy = true;
  issue_unlock(sh);
}

void mcp__session_share_drop(mcp_session *s) {
  mcp__share *sh = atomic_exchange(&s->share, NULL);
  if (sh)
    share_unref(sh);
}

/* ---- the public side ----------------------------------------------------- */

bool mcp_server_shares_sessions(mcp_server *srv) {
  return srv && mcp__records(srv) != NULL;
}

/* A share of s under id in st (refs: the session's), or NULL without
 * memory. */
static mcp__share *share_new(mcp_session *s, mcp_store *st, const char *id,
                             unsigned long long ttl_ms) {
  mcp__share *sh = mcp__calloc(1, sizeof *sh);
  size_t n = strlen(id);
  char *key = mcp__malloc(sizeof SESSION_KEY + n);
  if (sh == NULL || key == NULL || pthread_mutex_init(&sh->lock, NULL) != 0) {
    mcp__free(sh);
    mcp__free(key);
    return NULL;
  }
  memcpy(key, SESSION_KEY, sizeof SESSION_KEY - 1);
  memcpy(key + sizeof SESSION_KEY - 1, id, n + 1);
  sh->key = key;
  sh->refs = 1;
  sh->srv = s->home.srv;
  atomic_fetch_add(&sh->srv->refs, 1);
  sh->store = st;
  sh->ttl_ms = ttl_ms;
  sh->since_ms = (unsigned long long)mcp__wall_ms();
  return sh;
}

/* The checks mcp_session_share and mcp_session_adopt share: 0 and the
 * store, or why not. */
static int can_share(mcp_session *s, const char *id, unsigned long long ttl_ms,
                     mcp_store **st) {
  if (s == NULL || id == NULL || id[0] == '\0' || ttl_ms == 0)
    return MCP_EINVAL;
  if (strlen(id) > 255 - (sizeof SESSION_KEY - 1))
    return MCP_ELIMIT;
  if (atomic_load(&s->share) != NULL)
    return MCP_EINVAL;
  *st = mcp__records(s->home.srv);
  return *st ? 0 : MCP_ENOTSUP;
}

int mcp_session_share(mcp_session *s, const char *id,
                      unsigned long long ttl_ms) {
  mcp_store *st = NULL;
  int rc = can_share(s, id, ttl_ms, &st);
  if (rc)
    return rc;
  mcp__share *sh = share_new(s, st, id, ttl_ms);
  if (sh == NULL)
    return MCP_ENOMEM;
  mcp__share *none = NULL;
  if (!atomic_compare_exchange_strong(&s->share, &none, sh)) {
    share_unref(sh);
    return MCP_EINVAL;
  }
  mcp__session_changed(s);
  return 0;
}

void mcp_session_unshare(mcp_session *s) {
  mcp__share *sh = s ? atomic_load(&s->share) : NULL;
  if (sh == NULL)
    return;
  pthread_mutex_lock(&sh->lock);
  sh->ended = true;
  pthread_mutex_unlock(&sh->lock);
  offer(sh, NULL, 0);
}

/* ---- adoption ------------------------------------------------------------ */

typedef struct adoption {
  mcp_session *s; /* a reference to its home */
  mcp__share *sh;
  mcp_session_adopted_fn done;
  void *arg;
} adoption;

/* Whether the record's principal (subject, scopes, all) is s's. */
static bool same_principal(const cJSON *j, const mcp_principal *p) {
  const cJSON *subject = mcp__json_member(j, "subject");
  const cJSON *scopes = mcp__json_member(j, "scopes");
  const cJSON *all = mcp__json_member(j, "all");
  if (!cJSON_IsBool(all) || cJSON_IsTrue(all) != p->all_scopes)
    return false;
  if (cJSON_IsNull(subject) ? p->subject != NULL
                            : !cJSON_IsString(subject) || p->subject == NULL ||
                                  strcmp(subject->valuestring, p->subject))
    return false;
  if (cJSON_IsNull(scopes))
    return p->scopes == NULL;
  const char **mine;
  size_t n;
  if (!cJSON_IsArray(scopes) || p->scopes == NULL ||
      sorted_scopes(p, &mine, &n) != 0 ||
      (size_t)cJSON_GetArraySize(scopes) != n) {
    return false; /* (sorted_scopes allocates nothing on these paths) */
  }
  size_t i = 0;
  const cJSON *e;
  bool same = true;
  cJSON_ArrayForEach(e, scopes) {
    same = same && cJSON_IsString(e) && strcmp(e->valuestring, mine[i]) == 0;
    i++;
  }
  mcp__free(mine);
  return same;
}

/* The subscriptions of the record (an array of strings), copied: 0, or
 * MCP_ENOENT for a record this library did not write, MCP_ENOMEM. */
static int copy_subs(const cJSON *subs, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!cJSON_IsArray(subs))
    return MCP_ENOENT;
  size_t count = (size_t)cJSON_GetArraySize(subs);
  if (count == 0)
    return 0;
  char **v = mcp__calloc(count, sizeof *v);
  if (v == NULL)
    return MCP_ENOMEM;
  const cJSON *e;
  int rc = 0;
  cJSON_ArrayForEach(e, subs) {
    if (!cJSON_IsString(e))
      rc = MCP_ENOENT;
    else if (rc == 0 && (v[*n] = mcp__strdup(e->valuestring)) == NULL)
      rc = MCP_ENOMEM;
    else if (rc == 0)
      (*n)++;
  }
  if (rc) {
    for (size_t i = 0; i < *n; i++)
      mcp__free(v[i]);
    mcp__free(v);
    *n = 0;
    return rc;
  }
  *out = v;
  return 0;
}

/* Takes the record's state into s (fresh, never initialized): 0, or
 * MCP_ENOENT for a record that is not a session of s's principal, or
 * MCP_ENOMEM. */
static int take_state(mcp_session *s, const char *text, size_t len) {
  cJSON *j = cJSON_ParseWithLength(text, len);
  if (j == NULL)
    return MCP_ENOENT; /* not JSON, or no memory to read it: not adopted */
  const cJSON *state = mcp__json_member(j, "state");
  const cJSON *version = mcp__json_member(j, "version");
  const cJSON *caps = mcp__json_member(j, "caps");
  const cJSON *announced = mcp__json_member(j, "announced");
  const cJSON *log = mcp__json_member(j, "log");
  int v =
      cJSON_IsString(version) ? mcp__version_find(version->valuestring) : -1;
  bool shaped = cJSON_IsNumber(state) &&
                (state->valueint == MCP__STATE_INITIALIZED ||
                 state->valueint == MCP__STATE_READY) &&
                v >= 0 && v < MCP__VERSION_MODERN && cJSON_IsObject(caps) &&
                cJSON_IsNumber(announced) && announced->valueint >= 0 &&
                cJSON_IsNumber(log) && log->valueint >= -1 && log->valueint < 8;
  int rc = shaped && same_principal(j, &s->home.principal) ? 0 : MCP_ENOENT;
  char **subs = NULL;
  size_t nsubs = 0;
  cJSON *caps_copy = NULL;
  if (rc == 0)
    rc = copy_subs(mcp__json_member(j, "subs"), &subs, &nsubs);
  if (rc == 0 && (caps_copy = cJSON_Duplicate(caps, 1)) == NULL)
    rc = MCP_ENOMEM;
  if (rc == 0) {
    pthread_mutex_lock(&s->home.lock);
    s->home.client_caps = caps_copy;
    s->announced = (unsigned)announced->valueint;
    s->subscribed = subs;
    s->nsubscribed = nsubs;
    /* The ids of requests sent from here on start at the adoption's wall
     * clock in milliseconds, far past any the client may still answer for
     * the process that held the session before. */
    s->home.next_request_id = mcp__wall_ms();
    pthread_mutex_unlock(&s->home.lock);
    atomic_store(&s->log_level, log->valueint);
    atomic_store(&s->version, v);
    atomic_store(&s->state, state->valueint);
  } else {
    for (size_t i = 0; i < nsubs; i++)
      mcp__free(subs[i]);
    mcp__free(subs);
  }
  cJSON_Delete(j);
  return rc;
}

/* Publishes that this server adopted s, so that another that still holds
 * a copy (it was only unreachable) lets go of it. */
static void announce(mcp_server *srv, mcp_session *s) {
  mcp__share *sh = atomic_load(&s->share);
  mcp__buf b = {0};
  mcp__buf_printf(&b,
                  "{\"node\":\"%s\",\"session\":\"adopted\",\"since\":%llu,"
                  "\"key\":",
                  srv->node, sh->since_ms);
  mcp__json_quote(&b, sh->key, strlen(sh->key));
  mcp__buf_putc(&b, '}');
  if (b.err == 0)
    mcp__publish(srv, "a session's adoption", b.data, b.len);
  mcp__buf_free(&b);
}

void mcp__session_event(mcp_server *srv, const cJSON *event) {
  const char *what = cJSON_GetStringValue(mcp__json_member(event, "session"));
  const char *from = cJSON_GetStringValue(mcp__json_member(event, "node"));
  const char *key = cJSON_GetStringValue(mcp__json_member(event, "key"));
  const cJSON *since = mcp__json_member(event, "since");
  if (what == NULL || strcmp(what, "adopted") != 0 || from == NULL ||
      key == NULL || !cJSON_IsNumber(since) || since->valuedouble < 0) {
    mcp__log(srv, MCP_LOG_WARNING,
             "an event of the store about a session that says nothing "
             "known: ignored");
    return;
  }
  if (strcmp(from, srv->node) == 0)
    return; /* its own */
  unsigned moved = 0;
  pthread_mutex_lock(&srv->lock);
  mcp__list_each(link, &srv->sessions) {
    mcp_session *s = mcp__container_of(link, mcp_session, link);
    mcp__share *sh = atomic_load(&s->share);
    /* sh->key and since_ms never change once the share is set. Only an
     * adoption as late as this copy or later makes it stale: an event
     * that arrives late says nothing of a newer copy. (Two adopting in the
     * same millisecond both let go, and the next request adopts again.) */
    bool later = sh && (unsigned long long)since->valuedouble >= sh->since_ms;
    if (later && strcmp(sh->key, key) == 0 && !atomic_exchange(&s->moved, true))
      moved++;
  }
  pthread_mutex_unlock(&srv->lock);
  if (moved)
    mcp__log(srv, MCP_LOG_INFO,
             "a session this node held was adopted by node %s: its copy "
             "here is let go",
             from);
}

bool mcp_session_moved(const mcp_session *s) {
  if (s == NULL)
    return false;
  mcp_session *m = (mcp_session *)s;
  mcp__share *sh = atomic_load(&m->share);
  return atomic_load(&m->moved) || (sh && atomic_load(&sh->gone));
}

void mcp_session_touch(mcp_session *s) {
  if (s)
    mcp__session_touch(s);
}

static void adoption_got(void *arg, int rc, const mcp_store_record *recs,
                         unsigned n, bool more, const char *why) {
  (void)more;
  adoption *a = arg;
  mcp_session *s = a->s;
  mcp_server *srv = s->home.srv;
  int result = rc ? MCP_EIO : MCP_ENOENT;
  if (atomic_load(&s->home.closed))
    result = MCP_ECLOSED; /* freed meanwhile: nothing to adopt into */
  else if (rc != 0)
    mcp__log(srv, MCP_LOG_WARNING,
             "a session could not be adopted: the store failed (%s)", why);
  else if (n == 1 && recs[0].value && !recs[0].final)
    result = take_state(s, recs[0].value, recs[0].len);
  if (result == 0) {
    atomic_store(&s->share, a->sh);
    a->sh = NULL;
    mcp__log(srv, MCP_LOG_INFO, "a session of node %s was adopted by node %s",
             recs[0].holder ? recs[0].holder : "(none)", srv->node);
    /* The record names this node from now on, and a process that still
     * holds a copy lets go of it (mcp__session_event). */
    mcp__session_changed(s);
    announce(srv, s);
  }
  if (a->sh)
    share_unref(a->sh);
  a->done(a->arg, result);
  pthread_mutex_lock(&s->home.lock);
  mcp__session_unref_locked(s);
  mcp__free(a);
}

int mcp_session_adopt(mcp_session *s, const char *id, unsigned long long ttl_ms,
                      mcp_session_adopted_fn done, void *arg) {
  mcp_store *st = NULL;
  int rc = done ? can_share(s, id, ttl_ms, &st) : MCP_EINVAL;
  if (rc)
    return rc;
  if (atomic_load(&s->state) != MCP__STATE_NEW)
    return MCP_EINVAL;
  adoption *a = mcp__calloc(1, sizeof *a);
  mcp__share *sh = a ? share_new(s, st, id, ttl_ms) : NULL;
  if (sh == NULL) {
    mcp__free(a);
    return MCP_ENOMEM;
  }
  *a = (adoption){.s = s, .sh = sh, .done = done, .arg = arg};
  pthread_mutex_lock(&s->home.lock);
  atomic_fetch_add(&s->home.refs, 1);
  pthread_mutex_unlock(&s->home.lock);
  rc = mcp_store_get(st, sh->key, adoption_got, a);
  if (rc != 0) {
    share_unref(sh);
    pthread_mutex_lock(&s->home.lock);
    mcp__session_unref_locked(s);
    mcp__free(a);
  }
  return rc;
}
