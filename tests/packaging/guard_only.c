/* Built against the installed <mcp/guard.h> (tests/packaging): a program
 * whose only call into libmcp is one to libmcp_guard, linked with
 * --as-needed, so libmcp_guard is all it asks the loader for. It starts
 * only when the installed libmcp_guard finds libmcp, its sibling, by
 * itself (its run path), without LD_LIBRARY_PATH. */
#include <mcp/guard.h>
#include <stdio.h>

int main(void) {
  int rc = mcp_guard_enable(NULL, NULL); /* no server: refused */
  if (rc != MCP_EINVAL) {
    fprintf(stderr, "guard_only: mcp_guard_enable(NULL) = %d\n", rc);
    return 1;
  }
  puts("guard_only: started");
  return 0;
}
