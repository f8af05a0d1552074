/* Resource subscriptions: the legacy era's resources/subscribe and
 * unsubscribe, and the modern era's subscriptions/listen, whose stream
 * stays open for the notifications it asked for (the listeners
 * themselves are session state: lib/engine/session.c). */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* Most URIs one legacy session or one listener may subscribe to. */
#define MAX_SUBSCRIPTIONS 256

/* ---- legacy subscriptions ------------------------------------------------ */

/* Adds (on) or drops uri from the session's subscriptions. */
static void subscription(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         const char *uri, bool on) {
  int rc = 0;
  pthread_mutex_lock(&s->home.lock);
  size_t i = 0;
  while (i < s->nsubscribed && strcmp(s->subscribed[i], uri) != 0)
    i++;
  if (on && i == s->nsubscribed) {
    char *copy = NULL;
    char **grown = NULL;
    if (s->nsubscribed >= MAX_SUBSCRIPTIONS)
      rc = MCP_ELIMIT;
    else if ((copy = mcp__strdup(uri)) == NULL ||
             (grown = mcp__realloc(s->subscribed, (s->nsubscribed + 1) *
                                                      sizeof *grown)) == NULL)
      rc = MCP_ENOMEM;
    if (rc == 0) {
      s->subscribed = grown;
      s->subscribed[s->nsubscribed++] = copy;
    } else {
      mcp__free(copy);
    }
  } else if (!on && i < s->nsubscribed) {
    mcp__free(s->subscribed[i]);
    s->subscribed[i] = s->subscribed[--s->nsubscribed];
  }
  pthread_mutex_unlock(&s->home.lock);
  if (rc == MCP_ELIMIT) {
    mcp__reply_invalid_params(s, ctx, r,
                              "this session already watches 256 resources; "
                              "unsubscribe from some first");
  } else if (rc) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  } else {
    mcp__session_changed(s);
    mcp__buf b = {0};
    mcp__reply_result(s, ctx, r, &b);
  }
}

/* Admitted: the caller may read what it subscribes to, or it would learn
 * of changes to what it may not read. */
void mcp__handle_subscribe(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  subscription(s, ctx, r, t->uri, true);
}

/* Dropping a subscription touches nothing guarded. */
void mcp__handle_unsubscribe(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r, mcp__target *t) {
  (void)t;
  const char *uri = mcp__request_uri(s, ctx, r);
  if (uri)
    subscription(s, ctx, r, uri, false);
}

/* Reads a listen request's filter into l; returns NULL or why it is bad. */
/* Copies the strings of array (at most MAX_SUBSCRIPTIONS, each valid as
 * ok says) into *out. Returns 0; 1 when it names too many; 2 when an entry
 * is not a valid string; or MCP_ENOMEM. */
static int read_strings(const cJSON *array, bool (*ok)(const char *),
                        char ***out, size_t *n) {
  int count = cJSON_GetArraySize(array);
  if (count > MAX_SUBSCRIPTIONS)
    return 1;
  if (count && (*out = mcp__calloc((size_t)count, sizeof **out)) == NULL)
    return MCP_ENOMEM;
  for (const cJSON *u = array->child; u; u = u->next) {
    if (!cJSON_IsString(u) || !ok(u->valuestring))
      return 2;
    if (((*out)[*n] = mcp__strdup(u->valuestring)) == NULL)
      return MCP_ENOMEM;
    (*n)++;
  }
  return 0;
}

static bool uri_ok(const char *uri) {
  return mcp__uri_valid(uri, MCP__URI_REQUESTED);
}

static bool task_id_ok(const char *id) {
  size_t n = strlen(id);
  return n > 0 && n <= 64;
}

static const char *read_filter(const cJSON *filter, mcp__listener *l, int *rc) {
  static const struct {
    const char *key;
    unsigned flag;
  } kinds[] = {{"toolsListChanged", MCP__LISTEN_TOOLS},
               {"promptsListChanged", MCP__LISTEN_PROMPTS},
               {"resourcesListChanged", MCP__LISTEN_RESOURCES}};
  if (!cJSON_IsObject(filter))
    return "notifications is required (an object)";
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    const cJSON *v = mcp__json_member(filter, kinds[i].key);
    if (v && !cJSON_IsBool(v))
      return "the list-changed members of notifications must be booleans";
    if (cJSON_IsTrue(v))
      l->flags |= kinds[i].flag;
  }
  const cJSON *uris = mcp__json_member(filter, "resourceSubscriptions");
  int got =
      cJSON_IsArray(uris) ? read_strings(uris, uri_ok, &l->uris, &l->nuris) : 0;
  if (uris && !cJSON_IsArray(uris))
    return "resourceSubscriptions must be an array of URIs";
  if (got == 1)
    return "resourceSubscriptions names more than 256 URIs";
  if (got == 2)
    return "resourceSubscriptions must hold URIs (1-4096 bytes of UTF-8 "
           "without control characters)";
  /* The tasks extension's: the tasks whose status the listener hears of. */
  const cJSON *tasks = mcp__json_member(filter, "taskIds");
  int ids = got == 0 && cJSON_IsArray(tasks)
                ? read_strings(tasks, task_id_ok, &l->task_ids, &l->ntask_ids)
                : 0;
  if (tasks && !cJSON_IsArray(tasks))
    return "taskIds must be an array of task ids";
  if (ids == 1)
    return "taskIds names more than 256 tasks";
  if (ids == 2)
    return "taskIds must hold task ids (strings of 1-64 bytes)";
  if (got == MCP_ENOMEM || ids == MCP_ENOMEM)
    *rc = MCP_ENOMEM;
  return NULL;
}

/* Reads the listen request's filter into a listener kept in t, and finds
 * what serves each URI it watches: those URIs are admitted (a caller hears
 * of changes only to what it may read), and those nothing serves (or, with
 * hide-forbidden on, the caller may not see) are not honoured. */
bool mcp__target_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  mcp__listener *l = mcp__calloc(1, sizeof *l);
  int rc = l ? 0 : MCP_ENOMEM;
  const char *bad =
      l ? read_filter(mcp__json_member(r->params, "notifications"), l, &rc)
        : NULL;
  if (bad) {
    mcp__listener_free(l);
    mcp__reply_invalid_params(s, ctx, r, bad);
    return false;
  }
  t->listener = l;
  if (rc == 0 && l->ntask_ids && !mcp__task_listen_allowed(s, ctx, r))
    return false;
  if (rc == 0 && l->nuris &&
      (t->entries = mcp__calloc(l->nuris, sizeof *t->entries)) == NULL)
    rc = MCP_ENOMEM;
  const mcp_principal *visible = mcp__visible_to(s);
  for (size_t i = 0; rc == 0 && i < l->nuris; i++) {
    int found;
    t->entries[i] =
        mcp__find_resource(s->home.srv, l->uris[i], visible, NULL, &found);
    t->nentries = i + 1;
    if (t->entries[i] == NULL && found == MCP_ENOMEM)
      rc = MCP_ENOMEM;
  }
  if (rc)
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  return rc == 0;
}

/* Frees each of the n strings v that keep says no to, and packs the rest;
 * returns how many are kept. */
static size_t keep_strings(char **v, size_t n,
                           bool (*keep)(size_t i, const char *, void *),
                           void *user) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (keep(i, v[i], user))
      v[kept++] = v[i];
    else
      mcp__free(v[i]);
  }
  return kept;
}

static bool served(size_t i, const char *uri, void *user) {
  (void)uri;
  return ((const mcp__target *)user)->entries[i] != NULL;
}

static bool own_task(size_t i, const char *id, void *user) {
  (void)i;
  mcp_session *s = user;
  /* With a store that keeps records, a task this node does not have may
   * be another node's: kept, and heard of only when it is this caller's
   * (mcp__broadcast_remote_task checks each change's principal and
   * tool). */
  return mcp__task_visible(s->home.srv, id, &s->home.principal) ||
         mcp__records(s->home.srv) != NULL;
}

/* Keeps in l what it may hear of: URIs something serves (t's entries, when
 * the server offers resources), the caller's own tasks, and the lists the
 * server offers (as server/discover announces them: no prompts, no prompt
 * list changes; no resources, neither resource list changes nor resource
 * subscriptions; tools always). */
static void honour(mcp_session *s, const mcp__target *t, mcp__listener *l) {
  l->nuris = keep_strings(l->uris, l->nuris, served, (void *)t);
  l->ntask_ids = keep_strings(l->task_ids, l->ntask_ids, own_task, s);
  if (!mcp__offers(s->home.srv, MCP__FEATURE_PROMPTS))
    l->flags &= ~(unsigned)MCP__LISTEN_PROMPTS;
  if (!mcp__offers(s->home.srv, MCP__FEATURE_RESOURCES)) {
    l->flags &= ~(unsigned)MCP__LISTEN_RESOURCES;
    for (size_t i = 0; i < l->nuris; i++)
      mcp__free(l->uris[i]);
    l->nuris = 0;
  }
}

/* Appends, after sep, "key":[the n strings v] when there is any; returns
 * the separator of what follows. */
static const char *put_list(mcp__buf *b, const char *sep, const char *key,
                            char *const *v, size_t n) {
  if (n == 0)
    return sep;
  mcp__buf_printf(b, "%s\"%s\":[", sep, key);
  for (size_t i = 0; i < n; i++) {
    mcp__buf_puts(b, i ? "," : "");
    mcp__json_quote(b, v[i], strlen(v[i]));
  }
  mcp__buf_putc(b, ']');
  return ",";
}

/* The acknowledgement of listener l: what it honours, tagged with its
 * subscriptionId. */
static void put_ack(mcp__buf *ack, const mcp__listener *l) {
  static const struct {
    unsigned flag;
    const char *key;
  } kinds[] = {{MCP__LISTEN_TOOLS, "toolsListChanged"},
               {MCP__LISTEN_PROMPTS, "promptsListChanged"},
               {MCP__LISTEN_RESOURCES, "resourcesListChanged"}};
  mcp__buf_puts(ack, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                     "subscriptions/acknowledged\",\"params\":{"
                     "\"notifications\":{");
  const char *sep = "";
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    if (l->flags & kinds[i].flag) {
      mcp__buf_printf(ack, "%s\"%s\":true", sep, kinds[i].key);
      sep = ",";
    }
  }
  sep = put_list(ack, sep, "resourceSubscriptions", l->uris, l->nuris);
  put_list(ack, sep, "taskIds", l->task_ids, l->ntask_ids);
  mcp__buf_puts(ack,
                "},\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
  mcp__buf_append(ack, l->id, l->id_len);
  mcp__buf_puts(ack, "}}}");
}

void mcp__handle_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  mcp__listener *l = t->listener;
  mcp__buf canon = {0}, ack = {0};
  int rc = 0;
  t->listener = NULL;
  honour(s, t, l);
  mcp__id_canonical(&canon, r->m->id_node);
  l->id = mcp__strndup(r->m->id, r->m->id_len);
  l->id_len = r->m->id_len;
  l->canon_id = mcp__buf_take(&canon, NULL);
  if (l->id == NULL || l->canon_id == NULL)
    rc = MCP_ENOMEM;
  if (rc == 0) {
    put_ack(&ack, l);
    rc = ack.err;
  }
  if (rc == 0 && ctx->batch)
    rc = MCP_EINVAL; /* never: modern requests are refused in batches */
  if (rc) {
    if (l)
      mcp__listener_free(l);
    mcp__buf_free(&ack);
    mcp__buf_free(&canon);
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  /* The acknowledgement goes first, then the listener joins: a change
   * between the two is not lost to a listener that never heard it was
   * established, and nothing is sent before the acknowledgement. */
  pthread_mutex_lock(&s->home.lock);
  bool duplicate = false;
  for (mcp__listener *o = s->listeners; o && !duplicate; o = o->next)
    duplicate = strcmp(o->canon_id, l->canon_id) == 0;
  if (!duplicate && mcp__send_locked(s, ctx->sink, ack.data, ack.len,
                                     &mcp__sent_notification) == 0) {
    l->sink = ctx->sink;
    mcp__sink_ref(l->sink);
    if (l->ntask_ids) {
      /* Counted while it lives, so a task's change looks for listeners
       * only when some exist (mcp__broadcast_task). */
      l->counted = s->home.srv;
      atomic_fetch_add(&s->home.srv->task_listeners, 1);
    }
    l->next = s->listeners;
    s->listeners = l;
    l = NULL;
  }
  pthread_mutex_unlock(&s->home.lock);
  mcp__buf_free(&ack);
  if (l) {
    mcp__listener_free(l);
    if (duplicate)
      mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                     "Invalid Request: a subscription with this id is open",
                     NULL);
  }
}
