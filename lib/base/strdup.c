/* Copies of strings, through the allocator of the library they are in. */
#include "base.h"

char *mcp__strndup(const char *s, size_t n) {
  if (s == NULL)
    return NULL;
  char *d = mcp__malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

char *mcp__strdup(const char *s) {
  return s ? mcp__strndup(s, strlen(s)) : NULL;
}
