/* A program outside the libmcp tree, built against an installed libmcp
 * (tests/packaging): it checks that headers and library agree, answers a
 * tools/call through the session engine, and starts and stops the HTTP
 * transport on a free loopback port. */
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <stdio.h>
#include <string.h>

static char replies[8192];
static size_t used;

static int collect(const char *message, size_t len, void *user_data) {
  (void)user_data;
  if (len >= sizeof replies - used)
    return MCP_ENOMEM;
  memcpy(replies + used, message, len);
  used += len;
  replies[used] = '\0';
  return 0;
}

static int ping(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "pong");
}

static const mcp_tool ping_tool = {
    .name = "ping_tool",
    .description = "Answers pong.",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = ping,
};

static int feed(mcp_session *session, const char *json) {
  return mcp_session_receive(session, json, strlen(json));
}

int main(void) {
  if (strcmp(mcp_version(), MCP_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: headers %s, library %s\n", MCP_VERSION_STRING,
            mcp_version());
    return 1;
  }
  const mcp_server_info info = {.name = "consumer", .version = "1"};
  mcp_server *srv;
  mcp_session *session;
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (mcp_server_add_tool(srv, &ping_tool, NULL) != 0 ||
      mcp_session_new(srv, NULL, collect, NULL, &session) != 0) {
    mcp_server_free(srv);
    return 1;
  }
  feed(session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                "\"params\":{\"protocolVersion\":\"2025-11-25\","
                "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
                "\"version\":\"1\"}}}");
  feed(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                "initialized\"}");
  feed(session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                "\"params\":{\"name\":\"ping_tool\"}}");
  mcp_session_free(session);
  int rc = strstr(replies, "\"text\":\"pong\"") ? 0 : 1;

  mcp_http *http;
  const mcp_http_options opts = {.bind_addr = "127.0.0.1"};
  if (rc == 0 && mcp_http_start(srv, &opts, &http) == 0) {
    printf("consumer: libmcp %s answered pong; HTTP listened on port %u\n",
           mcp_version(), (unsigned)mcp_http_port(http));
    mcp_http_stop(http);
  } else {
    fprintf(stderr, "consumer: failed; replies: %s\n", replies);
    rc = 1;
  }
  mcp_server_free(srv);
  return rc;
}
