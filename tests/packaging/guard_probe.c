/* Built against the installed <mcp/guard.h> (tests/packaging): a
 * read-only, closed-world tool whose handler tries to create a file and to
 * connect to a loopback TCP listener. Without the guard both succeed; with
 * it both are refused by the kernel. Prints what happened and exits 0 only
 * when that is so. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mcp/guard.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char dir[64];
static unsigned short port;
static int created, connected; /* errno of each try; 0 = it worked */

static int try_both(mcp_call *call, void *user_data) {
  (void)user_data;
  char path[128];
  snprintf(path, sizeof path, "%s/made-by-a-read-only-tool", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  created = fd < 0 ? errno : 0;
  if (fd >= 0) {
    close(fd);
    unlink(path);
  }
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected = s < 0                                              ? errno
              : connect(s, (struct sockaddr *)&a, sizeof a) != 0 ? errno
                                                                 : 0;
  if (s >= 0)
    close(s);
  return mcp_result_text(call, "tried");
}

static int answered;
static int on_send(const char *msg, size_t len, void *user_data) {
  (void)user_data;
  if (memmem(msg, len, "\"tried\"", 7))
    answered++;
  return 0;
}

/* Runs one tools/call of the tool, with or without the guard. */
static int run(bool guard) {
  mcp_server_info info = {.name = "guard-probe", .version = "1"};
  mcp_server *srv = NULL;
  static const mcp_tool tool = {
      .name = "peek",
      .description = "Says it only reads, in a closed world.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = try_both};
  if (mcp_server_new(&info, &srv) || mcp_server_add_tool(srv, &tool, NULL))
    return 1;
  if (guard && mcp_guard_enable(srv, NULL) != 0) {
    fprintf(stderr, "guard_probe: %s\n", mcp_server_errmsg(srv));
    return 1;
  }
  mcp_session *s = NULL;
  if (mcp_session_new(srv, NULL, on_send, NULL, &s))
    return 1;
  static const char *const msgs[] = {
      ("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
       "\"clientInfo\":{\"name\":\"p\",\"version\":\"1\"}}}"),
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
       "\"name\":\"peek\"}}")};
  answered = 0;
  for (size_t i = 0; i < sizeof msgs / sizeof *msgs; i++)
    mcp_session_receive(s, msgs[i], strlen(msgs[i]));
  /* With the guard the call is answered on its worker: wait for it. */
  for (int i = 0; i < 5000 && mcp_session_pending(s); i++)
    usleep(1000);
  mcp_session_free(s);
  mcp_server_free(srv);
  return answered == 1 ? 0 : 1;
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/mcp-guard-probe-XXXXXX");
  if (mkdtemp(dir) == NULL)
    return 1;
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 4) ||
      getsockname(l, (struct sockaddr *)&a, &len))
    return 1;
  port = ntohs(a.sin_port);
  int fails = 0;
  for (int guard = 0; guard < 2; guard++) {
    if (run(guard) != 0) {
      fprintf(stderr, "guard_probe: the call was not answered\n");
      return 1;
    }
    printf("guard %s: create %s (%s), connect %s (%s)\n", guard ? "on" : "off",
           created ? "refused" : "done", strerror(created),
           connected ? "refused" : "done", strerror(connected));
    bool refused = created != 0 && connected != 0;
    bool done = created == 0 && connected == 0;
    fails += guard ? !refused : !done;
  }
  close(l);
  rmdir(dir);
  return fails ? 1 : 0;
}
