/* Built against the installed <mcp/http.h> (tests/packaging): a program
 * whose only call into libmcp is one to libmcp_http, linked with
 * --as-needed, so libmcp_http is all it asks the loader for. It starts
 * only when the installed libmcp_http finds libmcp, its sibling, by itself
 * (its run path), without LD_LIBRARY_PATH. */
#include <mcp/http.h>
#include <stdio.h>

int main(void) {
  if (mcp_http_port(NULL) != 0) { /* no transport: no port */
    fputs("http_only: mcp_http_port(NULL) is not 0\n", stderr);
    return 1;
  }
  puts("http_only: started");
  return 0;
}
