/* hello: the smallest useful MCP server. One tool, served over stdio.
 * Build it, then point any MCP client at the binary. */
#include <mcp/mcp.h>
#include <stdio.h>

static int greet(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *name = "world";
  mcp_call_arg_string(call, "name", &name); /* optional: keeps the default */
  char text[256];
  snprintf(text, sizeof text, "Hello, %s!", name);
  return mcp_result_text(call, text);
}

static const mcp_tool greet_tool = {
    .name = "greet",
    .title = "Greet",
    .description = "Says hello to someone by name.",
    .input_schema = "{\"type\":\"object\","
                    "\"properties\":{\"name\":{\"type\":\"string\"}}}",
    .annotations =
        {
            .read_only = MCP_HINT_TRUE,   /* changes nothing */
            .open_world = MCP_HINT_FALSE, /* talks to nothing outside */
        },
    .handler = greet,
};

int main(void) {
  mcp_server *srv;
  const mcp_server_info info = {.name = "hello", .version = "1.0.0"};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (mcp_server_add_tool(srv, &greet_tool, NULL) != 0) {
    fprintf(stderr, "hello: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  /* Until the client closes our input, or stops us with SIGTERM (or Ctrl-C):
   * either way, replies already made are written and we exit cleanly. */
  const mcp_stdio_options opts = {.stop_on_signal = true};
  int rc = mcp_serve_stdio(srv, &opts);
  mcp_server_free(srv);
  return rc == 0 ? 0 : 1;
}
