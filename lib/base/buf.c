/* A growable byte buffer that latches its first failure. */
#include <stdio.h>
#include <string.h>

#include "base.h"

static int grow(mcp__buf *b, size_t extra) {
  if (b->err)
    return b->err;
  if (extra > (size_t)-1 / 2 - b->len)
    return b->err = MCP_ENOMEM;
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap *= 2;
  char *p = mcp__realloc(b->data, cap);
  if (p == NULL)
    return b->err = MCP_ENOMEM;
  b->data = p;
  b->cap = cap;
  return 0;
}

int mcp__buf_append_slow(mcp__buf *b, const void *p, size_t n) {
  if (grow(b, n))
    return b->err;
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

char *mcp__buf_extend(mcp__buf *b, size_t n) {
  if (grow(b, n))
    return NULL;
  char *at = b->data + b->len;
  b->len += n;
  b->data[b->len] = '\0';
  return at;
}

int mcp__buf_printf(mcp__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[128];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    return b->err ? b->err : (b->err = MCP_EINVAL);
  if ((size_t)n < sizeof small)
    return mcp__buf_append(b, small, (size_t)n);
  if (grow(b, (size_t)n))
    return b->err;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

const char *mcp__buf_str(mcp__buf *b) {
  if (b->err)
    return NULL;
  if (b->data == NULL && grow(b, 0))
    return NULL;
  b->data[b->len] = '\0';
  return b->data;
}

char *mcp__buf_take(mcp__buf *b, size_t *len) {
  char *p = NULL;
  if (mcp__buf_str(b) != NULL) {
    p = b->data;
    if (len)
      *len = b->len;
    b->data = NULL;
  }
  mcp__buf_free(b);
  return p;
}

void mcp__buf_free(mcp__buf *b) {
  mcp__free(b->data);
  *b = (mcp__buf){0};
}
