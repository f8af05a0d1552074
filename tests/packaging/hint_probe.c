/* The C-bool probe (tests/packaging, issue [honest]): built against the
 * installed <mcp/mcp.h>, it registers tools whose hints are written the way
 * C's bool invites, `true` and `false` in each member, and checks that
 * every one is refused with a message naming the member and the fix
 * (MCP_HINT_...). Exit status 0 when all are refused, 1 otherwise. */
#include <mcp/mcp.h>
#include <stdio.h>
#include <string.h>

static int handler(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "done");
}

/* Each probe writes one member as C's true or false, the others right. */
#define HINTS(ro, de, id, ow)                                                  \
  { .read_only = ro, .destructive = de, .idempotent = id, .open_world = ow }
#define T MCP_HINT_TRUE
#define F MCP_HINT_FALSE
#define U MCP_HINT_UNSET

static const struct {
  const char *member;
  mcp_tool_annotations hints;
} probes[] = {
    {"read_only", HINTS(true, U, U, F)},
    {"read_only", HINTS(false, U, U, F)},
    {"open_world", HINTS(T, U, U, true)},
    {"open_world", HINTS(T, U, U, false)},
    {"destructive", HINTS(F, true, F, F)},
    {"destructive", HINTS(F, false, F, F)},
    {"idempotent", HINTS(F, T, true, F)},
    {"idempotent", HINTS(F, T, false, F)},
    {"destructive", HINTS(T, true, U, F)},
    {"idempotent", HINTS(T, U, true, F)},
    {"read_only", HINTS(true, true, true, true)},
};

int main(void) {
  mcp_server *srv;
  const mcp_server_info info = {.name = "hint-probe", .version = "1"};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  int failures = 0;
  for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
    const mcp_tool tool = {.name = "probe",
                           .description = "A tool with C-bool hints.",
                           .annotations = probes[i].hints,
                           .handler = handler};
    int rc = mcp_server_add_tool(srv, &tool, NULL);
    const char *msg = mcp_server_errmsg(srv);
    if (rc != MCP_EINVAL || strstr(msg, probes[i].member) == NULL ||
        strstr(msg, "MCP_HINT_") == NULL) {
      fprintf(stderr, "probe %zu (%s): rc %d, message: %s\n", i,
              probes[i].member, rc, rc ? msg : "(accepted)");
      failures++;
      mcp_server_remove_tool(srv, "probe");
    }
  }
  mcp_server_free(srv);
  printf("hint probe: %zu C-bool definitions, %d accepted or unexplained\n",
         sizeof probes / sizeof *probes, failures);
  return failures ? 1 : 0;
}
