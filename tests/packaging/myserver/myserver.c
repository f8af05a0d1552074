/* myserver: a server of your own, outside the libmcp tree (the tutorial's
 * section "Your own server", built by tests/packaging/own_server.sh against
 * an installed libmcp). One tool that counts the words of a text. */
#include <ctype.h>
#include <mcp/mcp.h>
#include <stdio.h>

static int count_words(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text = "";
  mcp_call_arg_string(call, "text", &text);
  unsigned long words = 0;
  for (const char *p = text; *p; p++)
    if (!isspace((unsigned char)*p) &&
        (p == text || isspace((unsigned char)p[-1])))
      words++;
  char reply[64];
  snprintf(reply, sizeof reply, "%lu words", words);
  return mcp_result_text(call, reply);
}

static const mcp_tool count_tool = {
    .name = "count_words",
    .title = "Count words",
    .description = "Counts the words of a text.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{"
                    "\"type\":\"string\"}},\"required\":[\"text\"]}",
    .annotations = {.read_only = MCP_HINT_TRUE, /* changes nothing */
                    .open_world = MCP_HINT_FALSE},
    .handler = count_words,
};

int main(void) {
  mcp_server *srv;
  const mcp_server_info info = {.name = "myserver", .version = "0.1.0"};
  if (mcp_server_new(&info, &srv) != 0) {
    fprintf(stderr, "myserver: %s\n", mcp_server_errmsg(NULL));
    return 1;
  }
  if (mcp_server_add_tool(srv, &count_tool, NULL) != 0) {
    fprintf(stderr, "myserver: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  const mcp_stdio_options opts = {.stop_on_signal = true};
  int rc = mcp_serve_stdio(srv, &opts);
  mcp_server_free(srv);
  return rc == 0 ? 0 : 1;
}
