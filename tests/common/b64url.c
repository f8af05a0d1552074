#include "b64url.h"

#include <stdlib.h>
#include <string.h>

char *tc_b64url(const void *data, size_t n) {
  static const char abc[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const unsigned char *p = data;
  char *out = malloc(n / 3 * 4 + 4);
  if (out == NULL)
    abort();
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned long v =
        (unsigned long)p[i] << 16 | (unsigned long)p[i + 1] << 8 | p[i + 2];
    out[o++] = abc[v >> 18];
    out[o++] = abc[(v >> 12) & 63];
    out[o++] = abc[(v >> 6) & 63];
    out[o++] = abc[v & 63];
  }
  if (n - i >= 1) {
    /* One or two bytes left: two or three characters, no padding. */
    unsigned long v = (unsigned long)p[i] << 16;
    if (n - i == 2)
      v |= (unsigned long)p[i + 1] << 8;
    out[o++] = abc[v >> 18];
    out[o++] = abc[(v >> 12) & 63];
    if (n - i == 2)
      out[o++] = abc[(v >> 6) & 63];
  }
  out[o] = '\0';
  return out;
}

char *tc_b64url_str(const char *s) { return tc_b64url(s, strlen(s)); }
