#include "ossl_count.h"

#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Each block carries a header whose first byte says whether it counts as
 * live. */
#define HEADER 16

static atomic_long live;
static bool (*fail_fn)(void);

static void *count_malloc(size_t n, const char *file, int line) {
  (void)line;
  if (fail_fn && fail_fn())
    return NULL;
  unsigned char *p = malloc(n + HEADER);
  if (p == NULL)
    return NULL;
  p[0] = file == NULL || strstr(file, "/err/") == NULL;
  if (p[0])
    atomic_fetch_add(&live, 1);
  return p + HEADER;
}

static void count_free(void *p, const char *file, int line) {
  (void)file;
  (void)line;
  if (p == NULL)
    return;
  unsigned char *base = (unsigned char *)p - HEADER;
  if (base[0])
    atomic_fetch_sub(&live, 1);
  free(base);
}

static void *count_realloc(void *p, size_t n, const char *file, int line) {
  if (p == NULL)
    return count_malloc(n, file, line);
  if (n == 0) {
    count_free(p, file, line);
    return NULL;
  }
  if (fail_fn && fail_fn())
    return NULL;
  unsigned char *q = realloc((unsigned char *)p - HEADER, n + HEADER);
  return q ? q + HEADER : NULL;
}

bool tc_ossl_count_install(bool (*fail)(void)) {
  fail_fn = fail;
  return CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) == 1;
}

long tc_ossl_live(void) { return atomic_load(&live); }
