/* A redis-server of a test's own (the redis suites and bench_redis_limit):
 * started from Debian's binary in a scratch folder with no persistence, on a
 * unix socket and optionally a loopback port, with an optional ACL user, and
 * ready only once it answers a command on that socket (PING, or AUTH as its
 * ACL user): the socket file appears at bind(), before listen(), so the
 * file alone is no sign that it accepts connections.
 *
 * Test code only, plain POSIX; no Check, so that a benchmark can use it too.
 * Every wait has a deadline (10 s); the child dies with the test
 * (PR_SET_PDEATHSIG) even when a failed assertion skips the stop. */
#ifndef MCP_TEST_REDIS_SERVER_H
#define MCP_TEST_REDIS_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct rs_server {
  char dir[256];  /* the scratch folder: redis.conf, redis.log, the socket */
  char sock[300]; /* dir/redis.sock */
  int port;       /* a loopback TCP port as well; 0: the unix socket only */
  pid_t pid;      /* 0 while stopped */
  /* With acl_pass: an ACL user with the commands docs/deployment.md names
   * and no others, and the default user off. */
  const char *acl_user;
  const char *acl_pass;
} rs_server;

/* Makes s's scratch folder under $TMPDIR (or /tmp) named prefix-XXXXXX and
 * clears the rest of s. Returns 0, or -1 with why in err. */
int rs_init(rs_server *s, const char *prefix, char *err, size_t errlen);

/* Writes s's configuration, starts redis-server (the binary at path) and
 * waits until it answers on its unix socket. Returns 0, or -1 with why
 * in err (it exited, or did not answer within 10 s: then it is stopped; its
 * folder stays, with redis.log, for the reader of the failure). */
int rs_start(rs_server *s, const char *path, char *err, size_t errlen);

/* Stops s's server (SIGCONT first, for one a test stopped; SIGTERM, then
 * SIGKILL after 10 s) and removes its socket. Does nothing when stopped. */
void rs_stop(rs_server *s);

/* Stops s's server and removes its scratch folder and what is in it. */
void rs_remove(rs_server *s);

/* A loopback TCP port nobody listens on right now; -1 when none. */
int rs_free_port(void);

#endif
