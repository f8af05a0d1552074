/* Built against the installed <mcp/redis.h> (tests/packaging): a program
 * whose only call into libmcp is one to libmcp_redis, linked with
 * --as-needed, so libmcp_redis is all it asks the loader for. It starts
 * only when the installed libmcp_redis finds libmcp, its sibling, by
 * itself (its run path), without LD_LIBRARY_PATH. */
#include <mcp/redis.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  mcp_store *st = NULL;
  char err[256] = "";
  /* A malformed URL: refused before any connection, with its reason. */
  int rc = mcp_redis_store_new("redis://host:0", &st, err, sizeof err);
  if (rc != MCP_EINVAL || st != NULL || strstr(err, "port") == NULL) {
    fprintf(stderr, "redis_only: mcp_redis_store_new = %d: %s\n", rc, err);
    return 1;
  }
  puts("redis_only: started");
  return 0;
}
