/* Adopting a legacy session another node held (mcp__http_adopt).
 *
 * When the server shares sessions through its store, every session it
 * publishes is shared under its Mcp-Session-Id (http.c), and a request
 * naming a session it does not have may be one whose node is gone: nginx
 * sends a session's requests to another node when its owner refuses the
 * connection. Such a request makes a session with that id for its caller
 * (counted against max_sessions like any other) and asks the engine to
 * adopt the shared state (mcp_session_adopt), which checks that the record
 * is the caller's. An unknown id costs one read of the store.
 *
 * The store may answer at once (the in-process store) or on a thread of
 * its own: then the connection is suspended until the answer, which
 * resumes it, and libmicrohttpd calls the request again. The state moves
 * under http->lock: RUNNING while the engine is asked (from here the hub
 * counts a resume owed, so mcp_http_stop waits for the answer; settled
 * without a resume when the connection never had to wait); SUSPENDED once
 * the connection waits; DONE with the answer; USED once acted on, so a
 * request adopts at most once. */
#include "http_int.h"

/* Twice the idle timeout: a session in use is written again at least every
 * idle_s (mcp_session_share renews after half the TTL), so its record
 * outlives the session here by at most idle_s; a request naming it in that
 * while adopts it again. */
unsigned long long mcp__http_share_ttl_ms(const mcp_http *h) {
  return 2000ull * h->idle_s;
}

static void adopted(void *arg, int rc) {
  mcp__http_req *r = arg;
  mcp_http *h = r->http;
  pthread_mutex_lock(&h->lock);
  bool suspended = r->adopt == MCP__HTTP_ADOPT_SUSPENDED;
  r->adopt = MCP__HTTP_ADOPT_DONE;
  r->adopt_rc = rc;
  pthread_mutex_unlock(&h->lock);
  if (suspended)
    mcp__http_resume(h->hub, r->conn);
}

/* Asks the engine to adopt id for r: true when the answer is in (at once,
 * or the request could not be started: adopt_rc says), false when the
 * connection now waits for it. The resume is owed (counted in the hub)
 * from before the engine is asked, under the lock mcp_http_stop sets
 * stopping with: a stop either refuses the adoption here or waits for its
 * answer before it stops libmicrohttpd. */
static bool start(mcp_http *h, mcp__http_req *r, const char *id, size_t len) {
  int rc = mcp__http_session_create(h, &r->caller, id, len, &r->adopting);
  if (rc == 0) {
    pthread_mutex_lock(&h->lock);
    if (h->stopping) {
      rc = MCP_ELIMIT; /* 503: try another node */
    } else {
      r->adopt = MCP__HTTP_ADOPT_RUNNING;
      pthread_mutex_lock(&h->hub->lock);
      h->hub->resuming++;
      pthread_mutex_unlock(&h->hub->lock);
    }
    pthread_mutex_unlock(&h->lock);
  }
  bool owed = rc == 0;
  if (rc == 0) {
    char key[MCP__HTTP_ID_MAX + 1];
    memcpy(key, id, len);
    key[len] = '\0';
    rc = mcp_session_adopt(r->adopting->mcp, key, mcp__http_share_ttl_ms(h),
                           adopted, r);
  }
  pthread_mutex_lock(&h->lock);
  if (rc != 0) {
    r->adopt = MCP__HTTP_ADOPT_DONE;
    r->adopt_rc = rc;
  }
  bool answered = r->adopt == MCP__HTTP_ADOPT_DONE;
  if (!answered) {
    MHD_suspend_connection(r->conn);
    r->adopt = MCP__HTTP_ADOPT_SUSPENDED; /* adopted() resumes it */
  }
  pthread_mutex_unlock(&h->lock);
  if (answered && owed)
    mcp__http_hub_settle(h->hub); /* never suspended: nothing to resume */
  return answered;
}

/* Whether id has the shape of an id some node minted: MCP__HTTP_SID_LEN
 * base64url characters, after "NODE." (a node id: 1 to MCP__HTTP_NODE_MAX
 * of the same characters) or alone. Anything else is unknown at once, and
 * costs no session and no read of the store. */
static bool minted_shape(const char *id, size_t len) {
  if (len < MCP__HTTP_SID_LEN || len > MCP__HTTP_ID_MAX ||
      len == MCP__HTTP_SID_LEN + 1)
    return false;
  size_t node = len > MCP__HTTP_SID_LEN ? len - MCP__HTTP_SID_LEN - 1 : 0;
  if (node && id[node] != '.')
    return false;
  for (size_t i = 0; i < len; i++)
    if (!(node && i == node) && !mcp__http_id_char(id[i]))
      return false;
  return true;
}

mcp__http_adopted mcp__http_adopt(mcp_http *h, mcp__http_req *r, const char *id,
                                  size_t len) {
  if (r->adopt == MCP__HTTP_ADOPT_USED ||
      (r->adopt == MCP__HTTP_ADOPT_NONE &&
       (!minted_shape(id, len) || !mcp_server_shares_sessions(h->srv))))
    return MCP__HTTP_ADOPT_GONE;
  if (r->adopt == MCP__HTTP_ADOPT_NONE && !start(h, r, id, len))
    return MCP__HTTP_ADOPT_WAIT;
  /* Answered: acted on once. */
  pthread_mutex_lock(&h->lock);
  r->adopt = MCP__HTTP_ADOPT_USED;
  pthread_mutex_unlock(&h->lock);
  mcp__http_session *hs = r->adopting;
  r->adopting = NULL;
  int rc = r->adopt_rc;
  if (rc == 0) {
    hs->adopted = true;
    /* Another request may have adopted it here meanwhile: then that one
     * serves, and this copy goes. */
    mcp__http_session *kept = mcp__http_session_publish(h, hs);
    mcp__http_log(h, MCP_LOG_INFO,
                  kept == hs ? "a session of another node was adopted"
                             : "a session was adopted twice at once: one "
                               "copy kept");
    if (kept != hs)
      mcp__http_session_release(h, kept); /* the reference publish took */
  }
  mcp__http_session_release(h, hs);
  switch (rc) {
  case 0:
    return MCP__HTTP_ADOPTED;
  case MCP_EIO:
    return MCP__HTTP_ADOPT_DOWN;
  case MCP_ELIMIT:
    return MCP__HTTP_ADOPT_FULL;
  case MCP_ENOMEM:
    return MCP__HTTP_ADOPT_FAILED;
  default:
    return MCP__HTTP_ADOPT_GONE;
  }
}
