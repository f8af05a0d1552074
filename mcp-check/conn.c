/* conn.c: the two transports of mcp-check's client side. */
#define _GNU_SOURCE
#include "conn.h"

#include "proc.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct mcpc_conn {
  int http;
  int late; /* stdio: the last exchange failed on time alone */
  /* stdio */
  int to, from;
  char *buf; /* bytes read and not yet a whole line */
  size_t len, cap;
  size_t scanned; /* buf[0..scanned) holds no newline */
  /* HTTP */
  CURL *curl;
  char *url;
  char session[256]; /* Mcp-Session-Id, or "" */
};

void mcpc_exchange_clear(mcpc_exchange *x) {
  free(x->www_authenticate);
  cJSON_Delete(x->response);
  x->www_authenticate = NULL;
  x->response = NULL;
  x->status = 0;
}

/* A message's kind: 'q' request, 'n' notification, 'r' response, 0 neither. */
static int kind(const cJSON *m) {
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
  int has_id = cJSON_GetObjectItemCaseSensitive(m, "id") != NULL;
  if (!cJSON_IsObject(m))
    return 0;
  if (cJSON_IsString(method))
    return has_id ? 'q' : 'n';
  if (has_id && (cJSON_GetObjectItemCaseSensitive(m, "result") ||
                 cJSON_GetObjectItemCaseSensitive(m, "error")))
    return 'r';
  return 0;
}

static int same_id(const cJSON *m, const cJSON *id) {
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(m, "id");
  return got && id && cJSON_Compare(got, id, 1);
}

/* What we say to a request the server sends us: we declared no client
 * capabilities, so only ping is ours to answer. */
static cJSON *answer_request(const cJSON *req) {
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(req, "method");
  cJSON *reply = cJSON_CreateObject(), *id;
  if (reply == NULL)
    return NULL;
  id = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(req, "id"), 1);
  cJSON_AddStringToObject(reply, "jsonrpc", "2.0");
  if (id)
    cJSON_AddItemToObject(reply, "id", id);
  if (strcmp(method->valuestring, "ping") == 0) {
    cJSON_AddObjectToObject(reply, "result");
  } else {
    cJSON *err = cJSON_AddObjectToObject(reply, "error");
    cJSON_AddNumberToObject(err, "code", -32601);
    cJSON_AddStringToObject(err, "message",
                            "mcp-check declared no client capabilities");
  }
  return reply;
}

/* ---- stdio ------------------------------------------------------------- */

mcpc_conn *mcpc_conn_stdio(int to_server, int from_server) {
  mcpc_conn *c = calloc(1, sizeof *c);
  if (c) {
    c->to = to_server;
    c->from = from_server;
  }
  return c;
}

static int write_all(int fd, const char *s, size_t n, long long deadline,
                     char *why, size_t size) {
  while (n > 0) {
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    long long left = deadline - mcpc_now_ms();
    ssize_t w;
    if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
      snprintf(why, size, "the server did not read its input in time");
      errno = ETIMEDOUT;
      return -1;
    }
    w = write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      snprintf(why, size, "cannot write to the server: %s",
               errno == EPIPE ? "it closed its input" : strerror(errno));
      return -1;
    }
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

static int send_line(mcpc_conn *c, const cJSON *msg, long long deadline,
                     char *why, size_t size) {
  char *text = cJSON_PrintUnformatted(msg);
  int rc;
  if (text == NULL) {
    snprintf(why, size, "out of memory");
    return -1;
  }
  rc = write_all(c->to, text, strlen(text), deadline, why, size);
  if (rc == 0)
    rc = write_all(c->to, "\n", 1, deadline, why, size);
  free(text);
  return rc;
}

/* Takes the next whole line out of the buffer, reading (bounded) as
 * needed. Returns a malloc'd line, or NULL with why. */
static char *read_line(mcpc_conn *c, long long deadline, char *why,
                       size_t size) {
  for (;;) {
    /* Only the bytes not yet looked at are searched: a long line read in
     * many pieces costs linear time, not quadratic. */
    char *nl = c->len > c->scanned
                   ? memchr(c->buf + c->scanned, '\n', c->len - c->scanned)
                   : NULL;
    struct pollfd pfd = {.fd = c->from, .events = POLLIN};
    long long left;
    ssize_t got;
    if (nl) {
      size_t n = (size_t)(nl - c->buf);
      char *line = malloc(n + 1);
      if (line == NULL) {
        snprintf(why, size, "out of memory");
        return NULL;
      }
      memcpy(line, c->buf, n);
      line[n] = '\0';
      memmove(c->buf, nl + 1, c->len - n - 1);
      c->len -= n + 1;
      c->scanned = 0;
      return line;
    }
    c->scanned = c->len;
    if (c->len >= MCPC_MAX_MESSAGE) {
      snprintf(why, size, "the server wrote a line longer than %u bytes",
               MCPC_MAX_MESSAGE);
      return NULL;
    }
    if (c->cap - c->len < 65536) {
      size_t cap = c->cap ? c->cap * 2 : 65536;
      char *grown = realloc(c->buf, cap);
      if (grown == NULL) {
        snprintf(why, size, "out of memory");
        return NULL;
      }
      c->buf = grown;
      c->cap = cap;
    }
    left = deadline - mcpc_now_ms();
    if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
      snprintf(why, size, "no answer from the server in time");
      c->late = 1;
      return NULL;
    }
    got = read(c->from, c->buf + c->len, c->cap - c->len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      snprintf(why, size, "the server closed its output%s",
               c->len ? " in the middle of a line" : "");
      return NULL;
    }
    c->len += (size_t)got;
  }
}

/* One message from the server, parsed; a line that is not JSON is the
 * server's fault and ends the exchange. */
static cJSON *read_message(mcpc_conn *c, long long deadline, char *why,
                           size_t size) {
  for (;;) {
    char *line = read_line(c, deadline, why, size);
    cJSON *m;
    if (line == NULL)
      return NULL;
    if (line[strspn(line, " \t\r")] == '\0') {
      free(line);
      continue;
    }
    m = cJSON_Parse(line);
    if (m == NULL)
      snprintf(why, size, "the server wrote a line that is not JSON: %.60s",
               line);
    free(line);
    return m;
  }
}

static int stdio_exchange(mcpc_conn *c, const cJSON *msg, mcpc_exchange *x,
                          char *why, size_t size) {
  long long deadline = mcpc_now_ms() + x->timeout_ms;
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  c->late = 0;
  if (send_line(c, msg, deadline, why, size) < 0) {
    c->late = errno == ETIMEDOUT;
    return -1;
  }
  if (id == NULL)
    return 0;
  for (unsigned i = 0; i < MCPC_MAX_INTERLEAVED; i++) {
    cJSON *m = read_message(c, deadline, why, size);
    int k;
    if (m == NULL)
      return -1;
    k = kind(m);
    if (k == 'r' && same_id(m, id)) {
      x->response = m;
      return 0;
    }
    if (k == 'q') {
      cJSON *reply = answer_request(m);
      int rc = reply ? send_line(c, reply, deadline, why, size) : 0;
      cJSON_Delete(reply);
      if (rc < 0) {
        cJSON_Delete(m);
        return -1;
      }
    }
    cJSON_Delete(m);
  }
  snprintf(why, size, "more than %u messages came before the answer",
           MCPC_MAX_INTERLEAVED);
  return -1;
}

/* ---- HTTP -------------------------------------------------------------- */

typedef struct body {
  char *data;
  size_t len, cap;
  int too_long;
  char content_type[128];
  char session[256];
  char *www_authenticate;
} body;

static size_t on_data(char *p, size_t one, size_t n, void *user_data) {
  body *b = user_data;
  n *= one;
  if (b->len + n > MCPC_MAX_MESSAGE) {
    b->too_long = 1;
    return 0;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    char *grown;
    while (cap < b->len + n + 1)
      cap *= 2;
    if ((grown = realloc(b->data, cap)) == NULL)
      return 0;
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return n;
}

/* Copies a header's value (trimmed) into out when line is that header. */
static int header_value(const char *line, size_t n, const char *name, char *out,
                        size_t size) {
  size_t k = strlen(name), v;
  if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
    return 0;
  line += k + 1;
  n -= k + 1;
  while (n && (*line == ' ' || *line == '\t'))
    line++, n--;
  while (n &&
         (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
    n--;
  v = n < size - 1 ? n : size - 1;
  memcpy(out, line, v);
  out[v] = '\0';
  return 1;
}

static size_t on_header(char *p, size_t one, size_t n, void *user_data) {
  body *b = user_data;
  char value[1024];
  n *= one;
  header_value(p, n, "content-type", b->content_type, sizeof b->content_type);
  header_value(p, n, "mcp-session-id", b->session, sizeof b->session);
  if (header_value(p, n, "www-authenticate", value, sizeof value)) {
    free(b->www_authenticate);
    b->www_authenticate = strdup(value);
  }
  return n;
}

mcpc_conn *mcpc_conn_http(const char *url, char *why, size_t size) {
  mcpc_conn *c = calloc(1, sizeof *c);
  if (c == NULL || (c->url = strdup(url)) == NULL ||
      (c->curl = curl_easy_init()) == NULL) {
    snprintf(why, size, "cannot set up libcurl");
    mcpc_conn_free(c);
    return NULL;
  }
  c->http = 1;
  c->to = c->from = -1;
  return c;
}

/* Parses one event's data; keeps it in *found when it is the answer. */
static void take_event(char *data, const cJSON *id, cJSON **found) {
  cJSON *m = cJSON_Parse(data);
  if (m && *found == NULL && kind(m) == 'r' && same_id(m, id))
    *found = m;
  else
    cJSON_Delete(m);
}

/* The JSON-RPC messages of an event stream: each event's data lines,
 * joined with newlines, up to the blank line that ends it; the answer to
 * id is kept, the rest skipped. Data lines are moved down in place. */
static cJSON *from_event_stream(char *text, const cJSON *id) {
  cJSON *found = NULL;
  char *data = text; /* the current event's data, built in place */
  size_t dlen = 0;
  unsigned events = 0;
  char *line = text;
  while (*line && events <= MCPC_MAX_INTERLEAVED) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    char *next = nl ? nl + 1 : line + n;
    if (n && line[n - 1] == '\r')
      n--;
    if (n == 0) {
      if (dlen) {
        data[dlen - 1] = '\0';
        take_event(data, id, &found);
        events++;
      }
      data = next;
      dlen = 0;
    } else if (n >= 5 && strncmp(line, "data:", 5) == 0) {
      size_t skip = 5 + (n > 5 && line[5] == ' ');
      memmove(data + dlen, line + skip, n - skip);
      dlen += n - skip;
      data[dlen++] = '\n';
    }
    line = next;
  }
  if (dlen) {
    data[dlen - 1] = '\0';
    take_event(data, id, &found);
  }
  return found;
}

static struct curl_slist *headers(const mcpc_conn *c, const mcpc_exchange *x) {
  struct curl_slist *h = NULL, *next;
  char line[4096];
  const char *fixed[] = {"Content-Type: application/json",
                         "Accept: application/json, text/event-stream"};
  for (size_t i = 0; i < 2; i++) {
    if ((next = curl_slist_append(h, fixed[i])) == NULL)
      goto fail;
    h = next;
  }
#define ADD(fmt, v)                                                            \
  do {                                                                         \
    if (v && *v) {                                                             \
      snprintf(line, sizeof line, fmt, v);                                     \
      if ((next = curl_slist_append(h, line)) == NULL)                         \
        goto fail;                                                             \
      h = next;                                                                \
    }                                                                          \
  } while (0)
  ADD("Authorization: Bearer %s", x->token);
  ADD("MCP-Protocol-Version: %s", x->protocol_version);
  ADD("Mcp-Method: %s", x->method);
  ADD("Mcp-Name: %s", x->name);
  ADD("Mcp-Session-Id: %s", c->session);
#undef ADD
  return h;
fail:
  curl_slist_free_all(h);
  return NULL;
}

static int http_exchange(mcpc_conn *c, const cJSON *msg, mcpc_exchange *x,
                         char *why, size_t size) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  char *text = cJSON_PrintUnformatted(msg);
  struct curl_slist *h = headers(c, x);
  body b;
  CURLcode rc;
  int out = -1;
  memset(&b, 0, sizeof b);
  if (text == NULL || h == NULL) {
    snprintf(why, size, "out of memory");
    goto done;
  }
  curl_easy_reset(c->curl);
  curl_easy_setopt(c->curl, CURLOPT_URL, c->url);
  curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, text);
  curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, &b);
  curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, (long)x->timeout_ms);
  curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
  rc = curl_easy_perform(c->curl);
  if (rc != CURLE_OK) {
    snprintf(why, size, "%s",
             b.too_long ? "the server's answer is longer than the limit "
                          "(8 MiB)"
                        : curl_easy_strerror(rc));
    goto done;
  }
  curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &x->status);
  x->www_authenticate = b.www_authenticate;
  b.www_authenticate = NULL;
  if (b.session[0])
    memcpy(c->session, b.session, sizeof c->session);
  out = 0;
  if (id == NULL || b.data == NULL)
    goto done;
  if (strncasecmp(b.content_type, "text/event-stream", 17) == 0) {
    x->response = from_event_stream(b.data, id);
  } else {
    x->response = cJSON_Parse(b.data);
    if (x->response &&
        !(kind(x->response) == 'r' && same_id(x->response, id))) {
      cJSON_Delete(x->response);
      x->response = NULL;
    }
    if (x->response == NULL && x->status == 200) {
      snprintf(why, size, "HTTP 200 without the answer to the request: %.60s",
               b.data);
      out = -1;
    }
  }
done:
  free(text);
  free(b.data);
  free(b.www_authenticate);
  curl_slist_free_all(h);
  return out;
}

int mcpc_conn_exchange(mcpc_conn *c, const cJSON *msg, mcpc_exchange *x,
                       char *why, size_t size) {
  mcpc_exchange_clear(x);
  return c->http ? http_exchange(c, msg, x, why, size)
                 : stdio_exchange(c, msg, x, why, size);
}

void mcpc_conn_reset_session(mcpc_conn *c) { c->session[0] = '\0'; }

int mcpc_conn_usable(const mcpc_conn *c) { return c->http || c->late; }

void mcpc_conn_free(mcpc_conn *c) {
  if (c == NULL)
    return;
  if (c->curl)
    curl_easy_cleanup(c->curl);
  free(c->url);
  free(c->buf);
  free(c);
}
