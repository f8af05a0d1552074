/* A reply's body as the HTTP benchmarks' libcurl clients keep it: its
 * first 4 KiB, in place (no allocation in the measured loop), and whether
 * it was longer (taken as wrong: the replies measured are far smaller). */
#ifndef BENCH_BODY_H
#define BENCH_BODY_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct body {
  char p[4096];
  size_t len;
  bool over;
} body;

/* libcurl's write callback into the body in user_data. */
static inline size_t on_body(char *data, size_t size, size_t n,
                             void *user_data) {
  body *b = user_data;
  size_t len = size * n;
  if (len >= sizeof b->p - b->len) {
    b->over = true;
    return len;
  }
  memcpy(b->p + b->len, data, len);
  b->len += len;
  b->p[b->len] = '\0';
  return len;
}

/* Says what was wrong with request id of the benchmark named bench, and
 * the body's beginning, and exits 1. */
static inline void http_fail(const char *bench, const char *what, long id,
                             const body *b) {
  fprintf(stderr, "%s: over HTTP, request %ld: %s: %.300s\n", bench, id, what,
          b->p);
  exit(1);
}

#endif
