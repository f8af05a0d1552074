#include "http_client.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- HTTP ---------------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  lc_buf_add(&((lc_resp *)ud)->body, p, size * n);
  return size * n;
}

long lc_status_of(const char *line, size_t len) {
  if (len < 12 || memcmp(line, "HTTP/", 5) != 0)
    return 0;
  const char *sp = memchr(line, ' ', len);
  return sp ? strtol(sp + 1, NULL, 10) : 0;
}

void lc_head_line(lc_resp *r, const char *p, size_t len) {
  long st = lc_status_of(p, len);
  if (st) { /* a new response (after an interim one): start over */
    r->head.n = 0;
    if (r->head.p)
      r->head.p[0] = '\0';
    r->status = st;
    r->headers_done = false;
  } else if (len <= 2 && (len == 0 || p[0] == '\r' || p[0] == '\n')) {
    r->headers_done = r->status >= 200;
  }
  lc_buf_add(&r->head, p, len);
}

/* Keeps the header lines of the last response only (a 100 Continue or a
 * redirect would come first). */
static size_t on_head(char *p, size_t size, size_t n, void *ud) {
  lc_head_line(ud, p, size * n);
  return size * n;
}

static bool has_header(const lc_req *q, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0;
       i < sizeof q->headers / sizeof q->headers[0] && q->headers[i]; i++)
    if (strncasecmp(q->headers[i], name, n) == 0 && q->headers[i][n] == ':')
      return true;
  return false;
}

static struct curl_slist *add(struct curl_slist *sl, const char *h) {
  struct curl_slist *n = curl_slist_append(sl, h);
  if (n == NULL)
    abort();
  return n;
}

struct curl_slist *lc_prepare(CURL *c, uint16_t port, const lc_req *q,
                              lc_resp *r) {
  memset(r, 0, sizeof *r);
  const char *m = q->method ? q->method : "POST";
  bool post = strcmp(m, "POST") == 0, get = strcmp(m, "GET") == 0;
  struct curl_slist *sl = NULL;
  lc_buf line = {0};
  if ((post || get) && !has_header(q, "Accept"))
    sl = add(sl, post ? "Accept: application/json, text/event-stream"
                      : "Accept: text/event-stream");
  if (post && !has_header(q, "Content-Type"))
    sl = add(sl, "Content-Type: application/json");
  sl = add(sl, "Expect:");
  if (q->session) {
    lc_buf_fmt(&line, "Mcp-Session-Id: %s", q->session);
    sl = add(sl, line.p);
    line.n = 0;
  }
  if (q->version) {
    lc_buf_fmt(&line, "MCP-Protocol-Version: %s", q->version);
    sl = add(sl, line.p);
  }
  lc_buf_free(&line);
  for (size_t i = 0;
       i < sizeof q->headers / sizeof q->headers[0] && q->headers[i]; i++)
    sl = add(sl, q->headers[i]);

  char url[300];
  snprintf(url, sizeof url, "%s://%s:%u%s", q->ca_file ? "https" : "http",
           q->host ? q->host : "127.0.0.1", (unsigned)port,
           q->path ? q->path : "/mcp");
  curl_easy_reset(c);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, sl);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_head);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
  if (q->source)
    curl_easy_setopt(c, CURLOPT_INTERFACE, q->source);
  if (q->ca_file)
    curl_easy_setopt(c, CURLOPT_CAINFO, q->ca_file);
  long timeout = q->timeout_ms ? q->timeout_ms : 15000;
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   lc_slow_run() ? timeout * 5 : timeout);
  if (get) {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else if (strcmp(m, "HEAD") == 0) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else {
    if (post)
      curl_easy_setopt(c, CURLOPT_POST, 1L);
    else
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
    if (q->body || post) {
      const char *b = q->body ? q->body : "";
      size_t len = q->body_len ? q->body_len : strlen(b);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
      curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, b);
    }
  }
  return sl;
}

void lc_http(CURL *c, uint16_t port, const lc_req *q, lc_resp *r) {
  struct curl_slist *sl = lc_prepare(c, port, q, r);
  r->curl_rc = curl_easy_perform(c);
  long st = 0;
  if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st) == CURLE_OK && st)
    r->status = st;
  curl_slist_free_all(sl);
}

void lc_resp_free(lc_resp *r) {
  lc_buf_free(&r->head);
  lc_buf_free(&r->body);
}

bool lc_header_in(const char *head, size_t n, const char *name, char *out,
                  size_t size) {
  size_t nl = strlen(name);
  const char *p = head, *end = head ? head + n : NULL;
  while (p && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
    if (len > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
      const char *v = p + nl + 1, *stop = p + len;
      while (v < stop && (*v == ' ' || *v == '\t'))
        v++;
      while (stop > v && (stop[-1] == '\r' || stop[-1] == ' '))
        stop--;
      snprintf(out, size, "%.*s", (int)(stop - v), v);
      return true;
    }
    p = eol ? eol + 1 : NULL;
  }
  return false;
}

bool lc_resp_header(const lc_resp *r, const char *name, char *out,
                    size_t size) {
  return lc_header_in(r->head.p, r->head.n, name, out, size);
}

/* The data of each SSE event (lines "data: ..." joined by newlines) parsed
 * as JSON into arr. Events without data (the priming event, comments) are
 * skipped. */
static bool sse_messages(const char *text, cJSON *arr) {
  lc_buf data = {0};
  bool ok = true, have = false;
  const char *p = text;
  for (;;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len && p[len - 1] == '\r')
      len--;
    if (len == 0) {
      /* The end of an event. */
      if (have && data.n) {
        cJSON *m = cJSON_ParseWithLength(data.p, data.n);
        if (m == NULL)
          ok = false;
        else
          cJSON_AddItemToArray(arr, m);
      }
      have = false;
      data.n = 0;
    } else if (len >= 5 && strncmp(p, "data:", 5) == 0) {
      const char *v = p + 5;
      size_t vn = len - 5;
      if (vn && *v == ' ') {
        v++;
        vn--;
      }
      if (have)
        lc_buf_add(&data, "\n", 1);
      lc_buf_add(&data, v, vn);
      have = true;
    }
    if (end == NULL)
      break;
    p = end + 1;
  }
  if (have && data.n)
    ok = false; /* an event cut short */
  lc_buf_free(&data);
  return ok;
}

cJSON *lc_messages(const lc_resp *r) {
  cJSON *arr = cJSON_CreateArray();
  if (arr == NULL)
    abort();
  if (r->body.n == 0)
    return arr;
  char type[200] = "";
  lc_resp_header(r, "Content-Type", type, sizeof type);
  if (strncasecmp(type, "application/json", 16) == 0) {
    cJSON *m = cJSON_ParseWithLength(r->body.p, r->body.n);
    if (m == NULL) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, m);
    return arr;
  }
  if (strncasecmp(type, "text/event-stream", 17) == 0 &&
      sse_messages(r->body.p, arr))
    return arr;
  cJSON_Delete(arr);
  return NULL;
}

/* ---- sockets ------------------------------------------------------------- */

int lc_connect(uint16_t port, const char *source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (source) {
    struct sockaddr_in src = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, source, &src.sin_addr) != 1 ||
        bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
      close(fd);
      return -1;
    }
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool lc_send_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

void lc_close_reset(int fd) {
  struct linger l = {.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

/* ---- time, process, scale ------------------------------------------------ */

long lc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void lc_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

long lc_rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL)
    return -1;
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) {
      v = strtol(line + 6, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

bool lc_slow_run(void) { return getenv("MCP_VALGRIND_RUN") != NULL; }

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LC_SANITIZED 1
#endif
#endif
#ifndef LC_SANITIZED
#define LC_SANITIZED 0
#endif

bool lc_sanitized(void) { return LC_SANITIZED; }

long lc_scaled(long normal, long small) {
  long n = normal;
  if (lc_slow_run())
    n = small;
  else if (getenv("MCP_TSAN_RUN"))
    n = (normal + small) / 2 < small * 4 ? (normal + small) / 2 : small * 4;
  const char *pct = getenv("MCP_LOAD_SCALE");
  if (pct && *pct) {
    long p = strtol(pct, NULL, 10);
    if (p > 0)
      n = n * p / 100;
  }
  return n > 0 ? n : 1;
}
