/* Growable bytes, NUL-terminated, for the test suites (the libcurl client,
 * the stream fleet). Plain C, no libcurl. Test code only: it aborts when the
 * test process runs out of memory. */
#ifndef MCP_TEST_LC_BUF_H
#define MCP_TEST_LC_BUF_H

#include <stddef.h>

typedef struct lc_buf {
  char *p;
  size_t n, cap;
} lc_buf;

/* Appends n bytes (and keeps a NUL after them). */
void lc_buf_add(lc_buf *b, const void *data, size_t n);
/* Appends the string s. */
void lc_buf_str(lc_buf *b, const char *s);
/* Appends printf-formatted text. */
void lc_buf_fmt(lc_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Drops the first n bytes (n at most b->n). */
void lc_buf_drop(lc_buf *b, size_t n);
/* Frees the bytes and empties b. */
void lc_buf_free(lc_buf *b);

#endif
