/* Growable bytes (lc_buf.h). */
#include "lc_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lc_buf_add(lc_buf *b, const void *data, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1)
      cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL)
      abort();
    b->p = p;
    b->cap = cap;
  }
  if (n)
    memcpy(b->p + b->n, data, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void lc_buf_str(lc_buf *b, const char *s) { lc_buf_add(b, s, strlen(s)); }

void lc_buf_fmt(lc_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    abort();
  char *tmp = malloc((size_t)n + 1);
  if (tmp == NULL)
    abort();
  va_start(ap, fmt);
  vsnprintf(tmp, (size_t)n + 1, fmt, ap);
  va_end(ap);
  lc_buf_add(b, tmp, (size_t)n);
  free(tmp);
}

void lc_buf_free(lc_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void lc_buf_drop(lc_buf *b, size_t n) {
  memmove(b->p, b->p + n, b->n - n + 1);
  b->n -= n;
}
