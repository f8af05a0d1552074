/* Asking the client for input, one handler API for both eras.
 *
 * Modern era (2026-07-28): the call is answered with an InputRequiredResult
 * and the client retries the same request with inputResponses and the
 * requestState we gave it. The requestState is the only memory between the
 * two requests, and the client holds it, so it is signed (HMAC-SHA-256 with
 * the server's key) and bound to the tool, a digest of the arguments, the
 * caller's subject and an expiry; anything else is refused before the
 * handler runs.
 *
 * Legacy era: the library sends real requests to the client, parks the call
 * without holding a thread, and runs the handler again once every answer is
 * in. Either way the handler reads answers with mcp_call_input and keeps its
 * own notes with mcp_call_set_state. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

#define STATE_VERSION 1
/* Bounds of a requestState: its signed payload (room for MCP_STATE_MAX
 * bytes of state even if every byte needs a 6-byte JSON escape), and the
 * token that carries it (base64url of that, a dot and the MAC). A payload
 * over the bound is never signed, so every token we issue is one we accept. */
#define MAX_PAYLOAD (6 * MCP_STATE_MAX + 16384)
#define MAX_TOKEN ((MAX_PAYLOAD + 2) / 3 * 4 + 1 + 43)
/* Requests one round may ask the client for. */
#define MAX_REQUESTS 32

/* Which capabilities a request of this kind needs from this client, as
 * MCP__CAP_* bits not declared (0 when all are). */
static unsigned missing_caps(const cJSON *caps, mcp__version v,
                             mcp_input_kind kind, const cJSON *params) {
  const cJSON *elicit = mcp__json_member(caps, "elicitation");
  const cJSON *sampling = mcp__json_member(caps, "sampling");
  switch (kind) {
  case MCP_INPUT_ELICITATION: {
    const cJSON *mode = mcp__json_member(params, "mode");
    bool url = cJSON_IsString(mode) && strcmp(mode->valuestring, "url") == 0;
    /* Elicitation arrived in 2025-06-18 and its URL mode in 2025-11-25: an
     * older session cannot have it, whatever it declared. */
    if (!cJSON_IsObject(elicit) || v < MCP__V2025_06_18 ||
        (url && v < MCP__V2025_11_25))
      return url ? MCP__CAP_ELICITATION_URL : MCP__CAP_ELICITATION;
    if (url)
      return mcp__json_member(elicit, "url") ? 0 : MCP__CAP_ELICITATION_URL;
    /* An empty elicitation object means form mode (2025-11-25). */
    return mcp__json_member(elicit, "form") || !mcp__json_member(elicit, "url")
               ? 0
               : MCP__CAP_ELICITATION;
  }
  case MCP_INPUT_SAMPLING:
    if (!cJSON_IsObject(sampling))
      return MCP__CAP_SAMPLING;
    /* Tool use in sampling is a capability of its own. */
    if ((mcp__json_member(params, "tools") ||
         mcp__json_member(params, "toolChoice")) &&
        !cJSON_IsObject(mcp__json_member(sampling, "tools")))
      return MCP__CAP_SAMPLING_TOOLS;
    return 0;
  case MCP_INPUT_ROOTS:
    return cJSON_IsObject(mcp__json_member(caps, "roots")) ? 0 : MCP__CAP_ROOTS;
  }
  return 0;
}

int mcp_call_request_input(mcp_call *call, const char *key, mcp_input_kind kind,
                           const char *params) {
  static const char *const methods[] = {NULL, "elicitation/create",
                                        "sampling/createMessage", "roots/list"};
  if (call == NULL)
    return MCP_EINVAL;
  const char *why = !mcp__name_valid(key, 64)
                        ? "the key must be 1-64 characters of [A-Za-z0-9_.-]"
                    : kind < MCP_INPUT_ELICITATION || kind > MCP_INPUT_ROOTS
                        ? "the kind is not an mcp_input_kind"
                    : params == NULL && kind != MCP_INPUT_ROOTS
                        ? "params are required (only roots has none)"
                    : mcp__json_member(call->requests, key)
                        ? "this key was asked already this round"
                    : cJSON_GetArraySize(call->requests) >= MAX_REQUESTS
                        ? "too many requests in one round"
                        : NULL;
  if (why) {
    mcp__call_refused(call, "mcp_call_request_input", why);
    return MCP_EINVAL;
  }
  mcp__json_doc doc = {0};
  char perr[200];
  int rc = mcp__json_parse(params ? params : "{}", params ? strlen(params) : 2,
                           NULL, &doc, perr, sizeof perr);
  if (rc == MCP_ENOMEM)
    return call->latched = MCP_ENOMEM;
  if (rc || !cJSON_IsObject(doc.root)) {
    char msg[240];
    mcp__fmt(msg, sizeof msg, "params must be a JSON object%s%s",
             rc ? ": " : "", rc ? perr : "");
    mcp__call_refused(call, "mcp_call_request_input", msg);
    mcp__json_doc_free(&doc);
    return MCP_EINVAL;
  }
  unsigned missing = missing_caps(call->caps, call->version, kind, doc.root);
  if (missing) {
    call->missing_caps |= missing;
    mcp__json_doc_free(&doc);
    return MCP_ECAPABILITY;
  }
  cJSON *req = cJSON_CreateObject();
  if (call->requests == NULL)
    call->requests = cJSON_CreateObject();
  if (req == NULL || call->requests == NULL ||
      !cJSON_AddStringToObject(req, "method", methods[kind]) ||
      !cJSON_AddItemToObject(req, "params", doc.root) ||
      !cJSON_AddItemToObject(call->requests, key, req)) {
    /* doc.root belongs to req once added; free whichever owns it. */
    if (mcp__json_member(req, "params") == NULL)
      cJSON_Delete(doc.root);
    cJSON_Delete(req);
    doc.root = NULL;
    mcp__json_doc_free(&doc);
    return call->latched = MCP_ENOMEM;
  }
  doc.root = NULL;
  mcp__json_doc_free(&doc);
  return 0;
}

const cJSON *mcp_call_input(const mcp_call *call, const char *key) {
  return call && key ? mcp__json_member(call->inputs, key) : NULL;
}

int mcp_call_set_state(mcp_call *call, const char *state) {
  if (call == NULL)
    return MCP_EINVAL;
  const char *why = state == NULL                   ? "the state is NULL"
                    : strlen(state) > MCP_STATE_MAX ? "the state is longer "
                                                      "than MCP_STATE_MAX"
                    : !mcp__utf8_valid(state, strlen(state))
                        ? "the state is not valid UTF-8"
                        : NULL;
  if (why) {
    mcp__call_refused(call, "mcp_call_set_state", why);
    return MCP_EINVAL;
  }
  char *copy = mcp__strdup(state);
  if (copy == NULL)
    return MCP_ENOMEM;
  mcp__free(call->next_state);
  call->next_state = copy;
  return 0;
}

const char *mcp_call_state(const mcp_call *call) {
  return call ? call->state : NULL;
}

void mcp__input_clear(mcp_call *c) {
  cJSON_Delete(c->inputs);
  cJSON_Delete(c->requests);
  mcp__free(c->state);
  mcp__free(c->next_state);
  c->inputs = c->requests = NULL;
  c->state = c->next_state = NULL;
}

/* ---- the signed requestState --------------------------------------------- */

static int by_key(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string,
                (*(const cJSON *const *)b)->string);
}

/* Hashes a JSON value in a canonical binary form (type tag, length, bytes;
 * object members sorted by key; numbers by value), so a client that
 * re-serializes the same arguments differently still matches. */
static int digest(mcp__sha256 *h, const cJSON *v, int depth) {
  char tag;
  if (depth > 64)
    return MCP_ELIMIT;
  switch (v->type & 0xff) {
  case cJSON_String: {
    unsigned long long n = strlen(v->valuestring);
    mcp__sha256_update(h, "s", 1);
    mcp__sha256_update(h, &n, sizeof n);
    mcp__sha256_update(h, v->valuestring, (size_t)n);
    return 0;
  }
  case cJSON_Number: {
    /* Integers by their exact value, which a handler can read beyond 2^53
     * (mcp_call_arg_int); other numbers by their double. 1, 1.0 and 1e0
     * stay one value. */
    char num[40];
    long long i;
    int overflow = 0;
    if (mcp__json_integral(v, &i, &overflow) && !overflow)
      mcp__fmt(num, sizeof num, "i%lld;", i);
    else
      mcp__fmt(num, sizeof num, "n%.17g;", v->valuedouble);
    mcp__sha256_update(h, num, strlen(num));
    return 0;
  }
  case cJSON_Array:
    mcp__sha256_update(h, "[", 1);
    for (const cJSON *e = v->child; e; e = e->next)
      if (digest(h, e, depth + 1))
        return MCP_ENOMEM;
    mcp__sha256_update(h, "]", 1);
    return 0;
  case cJSON_Object: {
    size_t n = 0;
    for (const cJSON *e = v->child; e; e = e->next)
      n++;
    const cJSON **sorted = mcp__calloc(n ? n : 1, sizeof *sorted);
    if (sorted == NULL)
      return MCP_ENOMEM;
    n = 0;
    for (const cJSON *e = v->child; e; e = e->next)
      sorted[n++] = e;
    qsort(sorted, n, sizeof *sorted, by_key);
    int rc = 0;
    mcp__sha256_update(h, "{", 1);
    for (size_t i = 0; i < n && rc == 0; i++) {
      cJSON key = {.type = cJSON_String, .valuestring = sorted[i]->string};
      rc = digest(h, &key, depth + 1);
      if (rc == 0)
        rc = digest(h, sorted[i], depth + 1);
    }
    mcp__sha256_update(h, "}", 1);
    mcp__free(sorted);
    return rc;
  }
  case cJSON_True:
    tag = 't';
    break;
  case cJSON_False:
    tag = 'f';
    break;
  default:
    tag = 'z';
    break;
  }
  mcp__sha256_update(h, &tag, 1);
  return 0;
}

static int args_digest(const mcp_call *c, char hex[65]) {
  mcp__sha256 h;
  unsigned char d[32];
  mcp__sha256_init(&h);
  int rc = digest(&h, c->arguments, 0);
  if (rc)
    return rc;
  mcp__sha256_final(&h, d);
  for (int i = 0; i < 32; i++)
    mcp__fmt(hex + 2 * i, 3, "%02x", d[i]);
  return 0;
}

static void mac(const mcp_call *c, const char *payload, size_t n,
                unsigned char out[32]) {
  const mcp_server *srv = c->home->srv;
  mcp__hmac_sha256(srv->state_key, sizeof srv->state_key, payload, n, out);
}

/* Writes the signed token: base64url(payload) "." base64url(mac). */
static int sign_state(mcp_call *c, mcp__buf *out) {
  char hex[65];
  int rc = args_digest(c, hex);
  if (rc)
    return rc;
  const mcp_principal *p = &c->home->principal;
  unsigned ttl = atomic_load(&c->home->srv->input_ttl_s);
  mcp__buf payload = {0}, token = {0};
  /* A prompt, a resource and a tool may share a name: the kind is bound
   * too. */
  mcp__buf_printf(&payload, "{\"v\":%d,\"kind\":%d,\"tool\":", STATE_VERSION,
                  c->kind);
  mcp__json_quote(&payload, c->tool->name, strlen(c->tool->name));
  mcp__buf_printf(&payload, ",\"args\":\"%s\",\"sub\":", hex);
  if (p->subject)
    mcp__json_quote(&payload, p->subject, strlen(p->subject));
  else
    mcp__buf_puts(&payload, "null");
  /* "keys" maps each request asked to its method, so a retry's answers can
   * be checked against what was asked. */
  mcp__buf_printf(&payload, ",\"exp\":%lld,\"keys\":{",
                  (long long)time(NULL) + ttl);
  for (const cJSON *r = c->requests ? c->requests->child : NULL; r;
       r = r->next) {
    mcp__json_quote(&payload, r->string, strlen(r->string));
    mcp__buf_putc(&payload, ':');
    mcp__json_write(&payload, mcp__json_member(r, "method"));
    if (r->next)
      mcp__buf_putc(&payload, ',');
  }
  mcp__buf_putc(&payload, '}');
  if (c->next_state) {
    mcp__buf_puts(&payload, ",\"state\":");
    mcp__json_quote(&payload, c->next_state, strlen(c->next_state));
  }
  mcp__buf_putc(&payload, '}');
  if (payload.err == 0 && payload.len > MAX_PAYLOAD)
    payload.err = MCP_ELIMIT; /* a huge subject, say: refuse to sign */
  if (payload.err == 0)
    mcp__base64url(&token, payload.data, payload.len);
  if (token.err == 0 && payload.err == 0) {
    unsigned char m[32];
    mac(c, token.data, token.len, m);
    mcp__buf_putc(&token, '.');
    mcp__base64url(&token, m, sizeof m);
  }
  rc = payload.err ? payload.err : token.err;
  if (rc == 0)
    mcp__buf_append(out, token.data, token.len);
  mcp__buf_free(&payload);
  mcp__buf_free(&token);
  return rc ? rc : out->err;
}

int mcp__input_result(mcp_call *c, mcp__buf *out) {
  if (c->requests == NULL && c->next_state == NULL)
    return MCP_EINVAL;
  mcp__buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcp__buf_append(out, c->id, c->id_len);
  mcp__buf_puts(out, ",\"result\":");
  mcp__result_begin(out, c->home->srv, true, "input_required");
  if (c->requests) {
    mcp__buf_puts(out, "\"inputRequests\":");
    mcp__json_write(out, c->requests);
    mcp__buf_putc(out, ',');
  }
  mcp__buf_puts(out, "\"requestState\":\"");
  int rc = sign_state(c, out);
  if (rc) {
    out->err = out->err ? out->err : rc;
    return rc;
  }
  mcp__buf_puts(out, "\",");
  mcp__result_end(out);
  mcp__buf_putc(out, '}');
  return out->err;
}

/* Returns NULL when answer has the shape of the result of a request of
 * method (ElicitResult, CreateMessageResult, ListRootsResult), else what is
 * wrong with it. Handlers then read fields they can rely on. */
const char *mcp__input_problem(const char *method, const cJSON *answer) {
  if (!cJSON_IsObject(answer))
    return "must be an object";
  if (strcmp(method, "elicitation/create") == 0) {
    const cJSON *action = mcp__json_member(answer, "action");
    const cJSON *content = mcp__json_member(answer, "content");
    if (!cJSON_IsString(action) || (strcmp(action->valuestring, "accept") &&
                                    strcmp(action->valuestring, "decline") &&
                                    strcmp(action->valuestring, "cancel")))
      return "needs an action: accept, decline or cancel";
    if (content && !cJSON_IsObject(content))
      return "content must be an object";
  } else if (strcmp(method, "sampling/createMessage") == 0) {
    const cJSON *content = mcp__json_member(answer, "content");
    if (!cJSON_IsString(mcp__json_member(answer, "role")) ||
        !cJSON_IsString(mcp__json_member(answer, "model")) ||
        !(cJSON_IsObject(content) || cJSON_IsArray(content)))
      return "needs role, content and model";
  } else if (strcmp(method, "roots/list") == 0) {
    if (!cJSON_IsArray(mcp__json_member(answer, "roots")))
      return "needs a roots array";
  }
  return NULL;
}

/* Checks the token's signature and returns its payload, parsed, in *doc.
 * Returns 0, MCP_EINVAL or MCP_ENOMEM. */
static int open_state(const mcp_call *c, const char *token,
                      mcp__json_doc *doc) {
  const char *dot = strchr(token, '.');
  if (dot == NULL || strlen(token) > MAX_TOKEN)
    return MCP_EINVAL;
  mcp__buf payload = {0}, sig = {0};
  int rc = mcp__base64url_decode(token, (size_t)(dot - token), &payload);
  if (rc == 0)
    rc = mcp__base64url_decode(dot + 1, strlen(dot + 1), &sig);
  if (rc == 0 && (sig.len != 32 || payload.len == 0))
    rc = MCP_EINVAL;
  if (rc == 0) {
    unsigned char expect[32];
    mac(c, token, (size_t)(dot - token), expect);
    if (!mcp__ct_equal(expect, sig.data, 32))
      rc = MCP_EINVAL;
  }
  if (rc == 0) {
    rc = mcp__json_parse(payload.data, payload.len, NULL, doc, NULL, 0);
    if (rc == 0 && !cJSON_IsObject(doc->root))
      rc = MCP_EINVAL;
    if (rc && rc != MCP_ENOMEM)
      rc = MCP_EINVAL;
  }
  mcp__buf_free(&payload);
  mcp__buf_free(&sig);
  return rc;
}

/* Keeps a copy of answer under key in c->inputs. */
static int keep_answer(mcp_call *c, const char *key, const cJSON *answer) {
  cJSON *copy = cJSON_Duplicate(answer, 1);
  if (c->inputs == NULL)
    c->inputs = cJSON_CreateObject();
  if (copy == NULL || c->inputs == NULL ||
      !cJSON_AddItemToObject(c->inputs, key, copy)) {
    cJSON_Delete(copy);
    return MCP_ENOMEM;
  }
  return 0;
}

/* A retry without a requestState (a client that answers at once, or lost
 * the state) starts a first round that already has answers. Nothing binds
 * them to a question, so each must at least have the shape of one of the
 * results a client can give; the handler sees them as the client's word,
 * as it must any answer, and has no state. */
static int accept_unbound(mcp_call *c, const cJSON *answers, char *msg,
                          size_t msglen) {
  static const char *const methods[] = {"elicitation/create",
                                        "sampling/createMessage", "roots/list"};
  for (const cJSON *a = answers->child; a; a = a->next) {
    bool fits = false;
    for (size_t i = 0; i < 3 && !fits; i++)
      fits = mcp__input_problem(methods[i], a) == NULL;
    if (!fits) {
      mcp__fmt(msg, msglen,
               "inputResponses[\"%.64s\"] is not an elicitation, sampling or "
               "roots result",
               a->string);
      mcp__utf8_trim(msg);
      return MCP_EINVAL;
    }
    if (keep_answer(c, a->string, a) != 0) {
      mcp__fmt(msg, msglen, "out of memory");
      return MCP_ENOMEM;
    }
  }
  return 0;
}

int mcp__input_accept(mcp_call *c, const cJSON *params, char *msg,
                      size_t msglen) {
  const cJSON *token = mcp__json_member(params, "requestState");
  const cJSON *answers = mcp__json_member(params, "inputResponses");
  if (token == NULL && answers == NULL)
    return 0;
  if (answers && !cJSON_IsObject(answers)) {
    mcp__fmt(msg, msglen, "inputResponses must be an object");
    return MCP_EINVAL;
  }
  if (token == NULL)
    return accept_unbound(c, answers, msg, msglen);
  if (!cJSON_IsString(token)) {
    mcp__fmt(msg, msglen, "requestState must be a string from this server");
    return MCP_EINVAL;
  }
  mcp__json_doc doc = {0};
  int rc = open_state(c, token->valuestring, &doc);
  if (rc) {
    mcp__fmt(msg, msglen, "requestState is not one this server issued");
    return rc;
  }
  /* Signed by us, so well formed; what remains is whether it belongs to
   * this call, by this caller, now. */
  char hex[65];
  rc = args_digest(c, hex);
  const cJSON *p = doc.root;
  const cJSON *kind = mcp__json_member(p, "kind");
  const cJSON *v = mcp__json_member(p, "v"),
              *tool = mcp__json_member(p, "tool"),
              *args = mcp__json_member(p, "args"),
              *sub = mcp__json_member(p, "sub"),
              *exp = mcp__json_member(p, "exp"),
              *keys = mcp__json_member(p, "keys"),
              *state = mcp__json_member(p, "state");
  const char *subject = c->home->principal.subject;
  long long expiry = 0;
  if (rc == 0 &&
      (!cJSON_IsNumber(v) || v->valuedouble != STATE_VERSION ||
       !cJSON_IsNumber(kind) || kind->valuedouble != c->kind ||
       !cJSON_IsString(tool) || strcmp(tool->valuestring, c->tool->name) ||
       !cJSON_IsString(args) || strcmp(args->valuestring, hex) ||
       !(subject ? cJSON_IsString(sub) && strcmp(sub->valuestring, subject) == 0
                 : cJSON_IsNull(sub)) ||
       !cJSON_IsObject(keys))) {
    mcp__fmt(msg, msglen,
             "requestState belongs to another call (tool, arguments or "
             "caller differ)");
    rc = MCP_EINVAL;
  }
  if (rc == 0 && (!mcp__json_integer(exp, &expiry, NULL) ||
                  expiry < (long long)time(NULL))) {
    mcp__fmt(msg, msglen, "requestState has expired; call the tool again");
    rc = MCP_EINVAL;
  }
  /* Only answers to what we asked count, and each must have the shape of
   * the result of the request asked. */
  for (const cJSON *k = rc == 0 ? keys->child : NULL; k && rc == 0;
       k = k->next) {
    const cJSON *a = mcp__json_member(answers, k->string);
    if (a == NULL)
      continue; /* missing: the handler sees NULL and may ask again */
    const char *what = cJSON_IsString(k) ? mcp__input_problem(k->valuestring, a)
                                         : "unexpected";
    if (what) {
      mcp__fmt(msg, msglen, "inputResponses[\"%.64s\"] %s", k->string, what);
      rc = MCP_EINVAL;
      break;
    }
    rc = keep_answer(c, k->string, a);
  }
  if (rc == 0 && cJSON_IsString(state) &&
      (c->state = mcp__strdup(state->valuestring)) == NULL)
    rc = MCP_ENOMEM;
  if (rc == MCP_ENOMEM)
    mcp__fmt(msg, msglen, "out of memory");
  mcp__json_doc_free(&doc);
  return rc;
}

/* ---- legacy: real requests to the client --------------------------------- */

int mcp__input_number_locked(mcp__home *h, cJSON *requests, const char *related,
                             mcp__buf *texts, size_t *n) {
  *n = 0;
  for (cJSON *r = requests->child; r && texts->err == 0; r = r->next) {
    long long id = ++h->next_request_id;
    /* The id is kept in the request to match the client's answer. */
    if (!cJSON_AddNumberToObject(r, "id", (double)id))
      return MCP_ENOMEM;
    mcp__wire_request(texts, related, mcp__json_member(r, "method"),
                      mcp__json_member(r, "params"), id);
    mcp__buf_putc(texts, '\0'); /* one text after another */
    (*n)++;
  }
  return texts->err;
}

bool mcp__input_sent_as(const cJSON *entry, long long id) {
  const cJSON *rid = mcp__json_member(entry, "id");
  return cJSON_IsNumber(rid) && rid->valuedouble == (double)id;
}

const cJSON *mcp__input_answer(const cJSON *entry, const cJSON *node) {
  const cJSON *result = mcp__json_member(node, "result");
  const char *method = cJSON_GetStringValue(mcp__json_member(entry, "method"));
  return method && mcp__input_problem(method, result) == NULL ? result : NULL;
}

void mcp__input_withdraw(mcp__buf *b, const cJSON *requests,
                         const char *reason) {
  for (const cJSON *r = requests ? requests->child : NULL; r; r = r->next) {
    const cJSON *id = mcp__json_member(r, "id");
    if (!cJSON_IsNumber(id))
      continue; /* answered already */
    mcp__buf_printf(b,
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                    "cancelled\",\"params\":{\"requestId\":%lld,\"reason\":",
                    (long long)id->valuedouble);
    mcp__json_quote(b, reason, strlen(reason));
    mcp__buf_puts(b, "}}");
    mcp__buf_putc(b, '\0');
  }
}

int mcp__input_send_locked(mcp_call *c) {
  mcp__home *h = c->home;
  /* Answers from an earlier round are replaced by this round's, as in the
   * modern era, where a retry carries only the latest answers. */
  cJSON_Delete(c->inputs);
  c->inputs = NULL;
  c->waiting = 0;
  mcp__buf texts = {0};
  size_t n;
  int rc = mcp__input_number_locked(h, c->requests, NULL, &texts, &n);
  for (size_t i = 0, at = 0; i < n && rc == 0; i++) {
    size_t len = strlen(texts.data + at);
    rc = mcp__home_send_locked(h, c->sink, texts.data + at, len,
                               &mcp__sent_request);
    at += len + 1;
    c->waiting += rc == 0;
  }
  mcp__buf_free(&texts);
  if (rc)
    return rc;
  mcp__call_park_locked(c);
  return 0;
}

mcp_call *mcp__input_response(mcp__home *h, const mcp__msg *m,
                              const cJSON *node) {
  long long id;
  if (m->id_node == NULL || !mcp__json_integer(m->id_node, &id, NULL))
    return NULL;
  mcp_call *ready = NULL;
  bool matched = false;
  pthread_mutex_lock(&h->lock);
  mcp__list_each(link, &h->calls) {
    mcp_call *c = mcp__container_of(link, mcp_call, link);
    if (matched)
      break;
    if (c->phase != MCP__CALL_WAITING_INPUT)
      continue;
    for (cJSON *r = c->requests->child; r; r = r->next) {
      if (!mcp__input_sent_as(r, id))
        continue;
      /* An error answer counts as no answer; the handler sees NULL and may
       * ask again. Answered once: a repeated answer finds nothing. */
      const cJSON *answer = mcp__input_answer(r, node);
      cJSON_DeleteItemFromObjectCaseSensitive(r, "id");
      matched = true;
      bool fits = answer != NULL;
      cJSON *copy = fits ? cJSON_Duplicate(answer, 1) : NULL;
      if (copy) {
        if (c->inputs == NULL)
          c->inputs = cJSON_CreateObject();
        if (c->inputs == NULL ||
            !cJSON_AddItemToObject(c->inputs, r->string, copy)) {
          cJSON_Delete(copy);
          copy = NULL;
        }
      }
      /* An answer lost for lack of memory is not "no answer": asking the
       * user again would be wrong, so the call fails instead. */
      if (fits && copy == NULL)
        c->lost_input = true;
      if (--c->waiting == 0 && mcp__call_unpark_locked(c))
        ready = c;
      break;
    }
  }
  pthread_mutex_unlock(&h->lock);
  /* Not a call's: perhaps an answer a task asked for on this home's
   * session. */
  if (!matched && !mcp__task_response(h, m, node))
    mcp__log(h->srv, MCP_LOG_DEBUG, "ignored a response to no request");
  return ready;
}

void mcp__input_cancel_locked(mcp_call *c) {
  mcp__home *h = c->home;
  mcp__buf b = {0};
  mcp__input_withdraw(&b, c->requests, "the call that asked was cancelled");
  /* Best effort: a peer that cannot take it is going away anyway. */
  for (size_t at = 0; at < b.len && b.err == 0;) {
    size_t len = strlen(b.data + at);
    mcp__home_send_locked(h, c->sink, b.data + at, len,
                          &mcp__sent_notification);
    at += len + 1;
  }
  mcp__buf_free(&b);
}
