#include "calls.h"

#include <stdio.h>
#include <stdlib.h>

int mcpc_calls_read(const char *path, mcpc_call **out, size_t *n, char *why,
                    size_t size) {
  *out = NULL;
  *n = 0;
  if (size > 0)
    snprintf(why, size, "%s: not implemented yet", path);
  return -1;
}

void mcpc_calls_free(mcpc_call *c, size_t n) {
  for (size_t i = 0; c && i < n; i++) {
    free(c[i].name);
    cJSON_Delete(c[i].arguments);
  }
  free(c);
}
