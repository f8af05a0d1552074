/* bench_mhd: ceiling (b), a bare libmicrohttpd server that reads each POST
 * body and answers a fixed JSON body. It starts the daemon the way
 * lib/http/http.c does (one internal polling thread on epoll, suspend/resume
 * allowed, the same limits bench_server sets), so the difference between
 * the two is what libmcp adds on top of libmicrohttpd.
 *
 *   bench_mhd ADDR:PORT
 *
 * Prints "listening on http://ADDR:PORT/mcp" on standard error and serves
 * until SIGINT or SIGTERM. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bench_fixed.h"

typedef struct request {
  size_t received;
} request;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **state) {
  struct MHD_Response *fixed = cls;
  (void)url;
  (void)version;
  (void)upload;
  request *r = *state;
  if (r == NULL) {
    if ((r = calloc(1, sizeof *r)) == NULL)
      return MHD_NO;
    *state = r;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    r->received += *upload_size; /* read, and not looked at */
    *upload_size = 0;
    return MHD_YES;
  }
  if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
    return MHD_NO;
  return MHD_queue_response(conn, MHD_HTTP_OK, fixed);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)conn;
  (void)toe;
  free(*state);
  *state = NULL;
}

int main(int argc, char **argv) {
  char *colon = argc == 2 ? strrchr(argv[1], ':') : NULL;
  if (colon == NULL) {
    fprintf(stderr, "usage: bench_mhd ADDR:PORT\n");
    return 2;
  }
  *colon = '\0';
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)atoi(colon + 1))};
  if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
    fprintf(stderr, "bench_mhd: %s is not an IPv4 address\n", argv[1]);
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  struct MHD_Response *fixed = MHD_create_response_from_buffer(
      strlen(BENCH_FIXED_BODY), (void *)BENCH_FIXED_BODY,
      MHD_RESPMEM_PERSISTENT);
  if (fixed == NULL)
    return 1;
  MHD_add_response_header(fixed, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "application/json");
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG | MHD_USE_INTERNAL_POLLING_THREAD;
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, fixed, MHD_OPTION_NOTIFY_COMPLETED,
      on_completed, NULL, MHD_OPTION_SOCK_ADDR, &sa,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600, MHD_OPTION_CONNECTION_LIMIT,
      (unsigned)512, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)512,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 << 10,
      MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "bench_mhd: cannot listen on %s port %s\n", argv[1],
            colon + 1);
    MHD_destroy_response(fixed);
    return 1;
  }
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  fprintf(stderr, "listening on http://%s:%u/mcp\n", argv[1],
          info ? (unsigned)info->port : 0u);
  int sig;
  sigwait(&stop, &sig);
  MHD_stop_daemon(d);
  MHD_destroy_response(fixed);
  return 0;
}
