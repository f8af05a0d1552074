/* Small helpers: formatting, base64, clocks, error texts, version. */
#include <stdio.h>
#include <time.h>

#include "internal.h"

void mcp__fmt(char *dst, size_t n, const char *fmt, ...) {
  if (n == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, n, fmt, ap);
  va_end(ap);
}

int mcp__base64(mcp__buf *b, const void *p, size_t n) {
  static const char tab[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *s = p;
  char q[4];
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
    q[0] = tab[v >> 18];
    q[1] = tab[(v >> 12) & 63];
    q[2] = tab[(v >> 6) & 63];
    q[3] = tab[v & 63];
    if (mcp__buf_append(b, q, 4))
      return b->err;
  }
  if (i < n) {
    unsigned v = (unsigned)s[i] << 16;
    if (i + 1 < n)
      v |= (unsigned)s[i + 1] << 8;
    q[0] = tab[v >> 18];
    q[1] = tab[(v >> 12) & 63];
    q[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
    q[3] = '=';
    return mcp__buf_append(b, q, 4);
  }
  return b->err;
}

unsigned long long mcp__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000ull +
         (unsigned long long)ts.tv_nsec / 1000ull;
}

const char *mcp_strerror(int rc) {
  switch (rc) {
#define MCP_ERROR_CASE_(name, value, text)                                     \
  case value:                                                                  \
    return text;
    MCP_ERROR_LIST(MCP_ERROR_CASE_)
#undef MCP_ERROR_CASE_
  case MCP_DEFERRED:
    return "deferred: the handler will finish later";
  case MCP_INPUT_REQUIRED:
    return "input required: the handler asked the client for input";
  default:
    return "unknown error";
  }
}

const char *mcp_version(void) { return MCP_VERSION_STRING; }
