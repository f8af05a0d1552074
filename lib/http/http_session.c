/* Legacy-era HTTP sessions: the table of Mcp-Session-Id values, id
 * minting, principal binding, the streams kept for Last-Event-ID, and idle
 * expiry.
 *
 * Ids are 24 bytes from the kernel's CSPRNG (getrandom) in base64url: 192
 * bits, visible ASCII. There is no fallback: if the CSPRNG fails, the
 * initialize fails. The kernel's generator, not OpenSSL's, so that a server
 * without token verification never initialises OpenSSL's RNG (about 2 MiB
 * of resident memory per process). Lookups hash the presented id and
 * compare in constant time; an unknown id allocates nothing. */
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

#define SID_BYTES 24

static uint64_t hash_id(const char *id, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)id[i];
    h *= 1099511628211ull;
  }
  return h;
}

int mcp__http_sessions_init(mcp_http *h) {
  size_t n = 64;
  while (n < h->max_sessions && n < ((size_t)1 << 20))
    n *= 2;
  h->buckets = mcp_calloc(n, sizeof *h->buckets);
  if (h->buckets == NULL)
    return MCP_ENOMEM;
  for (size_t b = 0; b < n; b++)
    mcp__list_init(&h->buckets[b]);
  h->nbuckets = n;
  return 0;
}

/* The session's callback: messages no request asked for (list_changed)
 * go to the standalone GET stream when the client opened one, else
 * nowhere. It never fails, so the session stays open either way. */
static int session_send(const char *message, size_t len, void *user_data) {
  mcp__http_session *hs = user_data;
  mcp_http *h = hs->http;
  pthread_mutex_lock(&h->lock);
  mcp__http_stream *st = hs->standalone;
  if (st)
    mcp__http_stream_ref(st);
  pthread_mutex_unlock(&h->lock);
  if (st) {
    mcp__http_stream_push(st, message, len, NULL);
    mcp__http_stream_unref(st);
  }
  return 0;
}

static void session_destroy(mcp__http_session *hs) {
  /* Closing the engine session cancels its calls; parked ones answer on
   * their own streams, which end when the engine lets go of them. */
  mcp_session_free(hs->mcp);
  for (size_t i = 0; i < hs->nstreams; i++) {
    mcp__http_stream *st = hs->streams[i];
    /* No connection is attached once the last reference went; resuming
     * is only for safety. */
    mcp__http_resume(hs->http->hub, mcp__http_stream_end(st));
    mcp__http_stream_unref(st);
  }
  mcp_free(hs->streams);
  pthread_mutex_destroy(&hs->drive);
  mcp_free(hs->subject);
  mcp_free(hs->scope_key);
  mcp_free(hs);
}

/* Mints hs's id: this server's node prefix and SID_BYTES from the
 * CSPRNG. Returns 0 or MCP_EIO. */
static int mint(const mcp_http *h, mcp__http_session *hs) {
  unsigned char raw[SID_BYTES];
  if (mcp__random(raw, sizeof raw) != 0)
    return MCP_EIO;
  size_t node_len = strlen(h->node);
  memcpy(hs->id, h->node, node_len);
  mcp__base64_encode(hs->id + node_len, raw, sizeof raw, MCP__BASE64_URL);
  OPENSSL_cleanse(raw, sizeof raw);
  hs->id_len = h->sid_len;
  return 0;
}

int mcp__http_session_create(mcp_http *h, const mcp__http_caller *caller,
                             const char *id, size_t len,
                             mcp__http_session **out) {
  if (id && (len == 0 || len > MCP__HTTP_ID_MAX))
    return MCP_EINVAL;
  pthread_mutex_lock(&h->lock);
  bool full = h->stopping || h->nsessions >= h->max_sessions;
  if (!full)
    h->nsessions++;
  pthread_mutex_unlock(&h->lock);
  if (full)
    return MCP_ELIMIT;
  int rc = MCP_ENOMEM;
  mcp__http_session *hs = mcp_calloc(1, sizeof *hs);
  if (hs == NULL)
    goto fail;
  if (id) {
    memcpy(hs->id, id, len);
    hs->id_len = len;
  } else if ((rc = mint(h, hs)) != 0) {
    goto fail;
  }
  rc = MCP_ENOMEM;
  const mcp_principal *who = &caller->principal;
  if ((who->subject && (hs->subject = mcp__strdup(who->subject)) == NULL) ||
      (caller->scope_key &&
       (hs->scope_key = mcp__strdup(caller->scope_key)) == NULL))
    goto fail;
  if (pthread_mutex_init(&hs->drive, NULL) != 0)
    goto fail;
  hs->http = h;
  hs->refs = 1;
  mcp__list_init(&hs->link);
  hs->last_ms = mcp__http_now_ms();
  rc = mcp_session_new(h->srv, who, session_send, hs, &hs->mcp);
  if (rc) {
    pthread_mutex_destroy(&hs->drive);
    goto fail;
  }
  *out = hs;
  return 0;
fail:
  if (hs) {
    mcp_free(hs->subject);
    mcp_free(hs->scope_key);
  }
  mcp_free(hs);
  pthread_mutex_lock(&h->lock);
  h->nsessions--;
  pthread_mutex_unlock(&h->lock);
  return rc;
}

/* The published session called id, or NULL. Call with h->lock held. */
static mcp__http_session *lookup_locked(mcp_http *h, const char *id,
                                        size_t len) {
  uint64_t b = hash_id(id, len) & (h->nbuckets - 1);
  mcp__list_each(link, &h->buckets[b]) {
    mcp__http_session *hs = mcp__container_of(link, mcp__http_session, link);
    if (hs->id_len == len && CRYPTO_memcmp(hs->id, id, len) == 0)
      return hs;
  }
  return NULL;
}

mcp__http_session *mcp__http_session_publish(mcp_http *h,
                                             mcp__http_session *hs) {
  uint64_t b = hash_id(hs->id, hs->id_len) & (h->nbuckets - 1);
  pthread_mutex_lock(&h->lock);
  mcp__http_session *there = lookup_locked(h, hs->id, hs->id_len);
  if (there) {
    there->refs++; /* the caller's */
  } else {
    mcp__list_push_front(&h->buckets[b], &hs->link);
    hs->refs++; /* the table's */
  }
  pthread_mutex_unlock(&h->lock);
  return there ? there : hs;
}

static bool end_session(mcp_http *h, mcp__http_session *hs, bool for_good);

/* Both NULL, or equal text. */
static bool same_text(const char *a, const char *b) {
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp(a, b) == 0;
}

mcp__http_session *mcp__http_session_find(mcp_http *h, const char *id,
                                          size_t len,
                                          const mcp__http_caller *caller,
                                          bool same_scopes) {
  const char *subject = caller->principal.subject;
  if (len == 0 || len > MCP__HTTP_ID_MAX)
    return NULL;
  pthread_mutex_lock(&h->lock);
  mcp__http_session *found = lookup_locked(h, id, len);
  /* Another principal's session looks exactly like an unknown one. */
  if (found &&
      (!same_text(found->subject, subject) ||
       (same_scopes && !same_text(found->scope_key, caller->scope_key))))
    found = NULL;
  if (found) {
    found->refs++;
    found->last_ms = mcp__http_now_ms();
  }
  pthread_mutex_unlock(&h->lock);
  if (found && mcp_session_moved(found->mcp)) {
    /* Another node adopted it while this copy was out of reach: let go of
     * the copy, and the caller adopts the session back as it is now. */
    end_session(h, found, false);
    mcp__http_session_release(h, found);
    mcp__http_log(h, MCP_LOG_INFO,
                  "a session adopted by another node came back: its stale "
                  "copy here is let go");
    return NULL;
  }
  return found;
}

/* Unlinks hs from the table. Call with h->lock held. Returns true when it
 * was linked (the table's reference is then the caller's to drop). */
static bool unlink_locked(mcp__http_session *hs) {
  if (!mcp__list_linked(&hs->link))
    return false;
  mcp__list_remove(&hs->link);
  return true;
}

/* Drops one reference with h->lock held; returns true when it was the
 * last (the caller destroys the session after unlocking). */
static bool unref_locked(mcp_http *h, mcp__http_session *hs) {
  if (--hs->refs > 0)
    return false;
  h->nsessions--;
  return true;
}

void mcp__http_session_release(mcp_http *h, mcp__http_session *hs) {
  if (hs == NULL)
    return;
  pthread_mutex_lock(&h->lock);
  bool last = unref_locked(h, hs);
  pthread_mutex_unlock(&h->lock);
  if (last)
    session_destroy(hs);
}

bool mcp__http_session_delete(mcp_http *h, mcp__http_session *hs) {
  return end_session(h, hs, true);
}

/* Unlinks hs and ends its streams; for_good (DELETE) settles a shared
 * session's record, otherwise (a copy another node adopted) it is left to
 * the node that holds the session now. */
static bool end_session(mcp_http *h, mcp__http_session *hs, bool for_good) {
  pthread_mutex_lock(&h->lock);
  bool was = unlink_locked(hs);
  bool last = was && unref_locked(h, hs);
  /* Every stream ends now, so each client carrying one sees the session
   * go; their connections are resumed after the lock (the lock order of
   * http_impl.h), or here with it held when there is no memory for the
   * list (resuming takes no lock of ours). */
  struct MHD_Connection **conns =
      was && hs->nstreams ? mcp_calloc(hs->nstreams, sizeof *conns) : NULL;
  size_t nconns = 0;
  for (size_t i = 0; was && i < hs->nstreams; i++) {
    struct MHD_Connection *conn = mcp__http_stream_end(hs->streams[i]);
    if (conn && conns)
      conns[nconns++] = conn;
    else if (conn)
      mcp__http_resume(h->hub, conn);
  }
  pthread_mutex_unlock(&h->lock);
  for (size_t i = 0; i < nconns; i++)
    mcp__http_resume(h->hub, conns[i]);
  mcp_free(conns);
  if (was) {
    if (for_good)
      mcp_session_unshare(hs->mcp); /* deleted: nobody adopts it */
    mcp_session_cancel_all(hs->mcp);
  }
  if (last)
    session_destroy(hs); /* not reached while the caller holds a reference */
  return was;
}

mcp__http_stream *mcp__http_session_stream_locked(mcp__http_session *hs,
                                                  mcp__http_stream_kind kind) {
  mcp_http *h = hs->http;
  if (h->stopping)
    return NULL;
  size_t out_cap = h->max_body > (16u << 20) ? h->max_body : (16u << 20);
  mcp__http_stream *st = mcp__http_stream_new(h->hub, kind, ++hs->next_stream,
                                              h->replay_events, out_cap);
  if (st && kind == MCP__HTTP_STREAM_GET &&
      !mcp__http_session_keep_stream_locked(hs, st)) {
    mcp__http_stream_unref(st);
    st = NULL;
  }
  return st;
}

/* Whether the engine is done with st: nothing more will be sent on it, so
 * losing it loses only its replay. */
static bool stream_finished(mcp__http_stream *st, bool *attached) {
  pthread_mutex_lock(&st->lock);
  bool done = st->engine_done;
  *attached = st->attached != NULL;
  pthread_mutex_unlock(&st->lock);
  return done;
}

bool mcp__http_session_keep_stream_locked(mcp__http_session *hs,
                                          mcp__http_stream *st) {
  mcp_http *h = hs->http;
  /* Room for every call the session may have in flight, and as many
   * finished streams again for resumption. A finished stream makes room
   * for a new one at once (the oldest first, one no connection carries
   * before one still being read); a stream the engine still sends to is
   * never dropped, since its client may need to resume it. */
  size_t cap = (size_t)h->max_inflight + MCP__HTTP_KEPT_FINISHED;
  if (hs->nstreams >= cap) {
    size_t victim = hs->nstreams, busy = hs->nstreams;
    for (size_t i = 0; i < hs->nstreams && victim == hs->nstreams; i++) {
      bool attached;
      if (hs->streams[i] == hs->standalone ||
          !stream_finished(hs->streams[i], &attached))
        continue;
      if (!attached)
        victim = i;
      else if (busy == hs->nstreams)
        busy = i;
    }
    if (victim == hs->nstreams)
      victim = busy;
    if (victim == hs->nstreams)
      return false; /* every kept stream is live: this one is not kept */
    mcp__http_stream_unref(hs->streams[victim]);
    memmove(&hs->streams[victim], &hs->streams[victim + 1],
            (hs->nstreams - victim - 1) * sizeof *hs->streams);
    hs->nstreams--;
  }
  if (hs->nstreams == hs->cap) {
    size_t grown = hs->cap ? hs->cap * 2 : 8;
    mcp__http_stream **p = mcp_realloc(hs->streams, grown * sizeof *p);
    if (p == NULL)
      return false;
    hs->streams = p;
    hs->cap = grown;
  }
  mcp__http_stream_ref(st); /* the session's */
  hs->streams[hs->nstreams++] = st;
  return true;
}

void mcp__http_session_forget_stream_locked(mcp__http_session *hs,
                                            mcp__http_stream *st) {
  for (size_t i = 0; i < hs->nstreams; i++) {
    if (hs->streams[i] == st) {
      memmove(&hs->streams[i], &hs->streams[i + 1],
              (hs->nstreams - i - 1) * sizeof hs->streams[0]);
      hs->nstreams--;
      mcp__http_stream_unref(st);
      return;
    }
  }
}

mcp__http_stream *mcp__http_session_find_stream_locked(mcp__http_session *hs,
                                                       unsigned no) {
  for (size_t i = 0; i < hs->nstreams; i++) {
    if (hs->streams[i]->no == no) {
      mcp__http_stream_ref(hs->streams[i]);
      return hs->streams[i];
    }
  }
  return NULL;
}

/* Ends the sessions that are idle since before now_ms by idle_ms, or every
 * session with all set. They are unlinked under the lock and destroyed
 * after it. */
static void end_sessions(mcp_http *h, bool all, uint64_t now_ms,
                         uint64_t idle_ms) {
  mcp__list dead;
  mcp__list_init(&dead);
  pthread_mutex_lock(&h->lock);
  for (size_t b = 0; b < h->nbuckets && h->nsessions > 0; b++) {
    mcp__list_each(link, &h->buckets[b]) {
      mcp__http_session *hs = mcp__container_of(link, mcp__http_session, link);
      /* last_ms may be later than now_ms: a request or a connection's end
       * on another thread since the caller read the clock. */
      if (!all && (hs->attached > 0 || hs->last_ms >= now_ms ||
                   now_ms - hs->last_ms < idle_ms || hs->refs > 1))
        continue;
      unlink_locked(hs);
      if (unref_locked(h, hs))
        mcp__list_push_front(&dead, &hs->link);
    }
  }
  pthread_mutex_unlock(&h->lock);
  /* A shared session's record is left to expire (mcp__http_share_ttl_ms):
   * settling it here could end the session where another node adopted it
   * since (this copy only idled because its requests went there). */
  mcp__list_each(link, &dead)
      session_destroy(mcp__container_of(link, mcp__http_session, link));
}

void mcp__http_sessions_tend(mcp_http *h) {
  if (!mcp_server_shares_sessions(h->srv))
    return;
  /* The sessions to look at, with a reference each, gathered under the
   * lock and seen to after it (no engine call under http->lock). */
  pthread_mutex_lock(&h->lock);
  size_t n = 0, k = 0;
  for (size_t b = 0; b < h->nbuckets && h->nsessions > 0; b++)
    mcp__list_each(link, &h->buckets[b]) n++;
  mcp__http_session **v = n ? mcp_malloc(n * sizeof *v) : NULL;
  for (size_t b = 0; v && b < h->nbuckets; b++) {
    mcp__list_each(link, &h->buckets[b]) {
      mcp__http_session *hs = mcp__container_of(link, mcp__http_session, link);
      hs->refs++;
      v[k++] = hs;
    }
  }
  pthread_mutex_unlock(&h->lock);
  for (size_t i = 0; i < k; i++) {
    /* A copy another node adopted (or ended) ends here, its streams with
     * it; one in use without messages (a GET stream, a long call) keeps
     * its record alive. */
    if (mcp_session_moved(v[i]->mcp) && end_session(h, v[i], false))
      mcp__http_log(h, MCP_LOG_INFO,
                    "a session went to another node: its stale copy here "
                    "is let go");
    else if (!mcp_session_moved(v[i]->mcp))
      mcp_session_touch(v[i]->mcp);
    mcp__http_session_release(h, v[i]);
  }
  mcp_free(v);
}

void mcp__http_sessions_expire(mcp_http *h, uint64_t now_ms) {
  end_sessions(h, false, now_ms, (uint64_t)h->idle_s * 1000);
}

void mcp__http_sessions_free_all(mcp_http *h) { end_sessions(h, true, 0, 0); }
