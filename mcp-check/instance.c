#include "instance.h"

#include <stdio.h>

cJSON *mcpc_instance(const cJSON *schema, char *why, size_t size) {
  (void)schema;
  if (size > 0)
    snprintf(why, size, "not implemented yet");
  return NULL;
}
