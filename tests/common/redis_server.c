/* A redis-server of a test's own: see redis_server.h. */
#include "redis_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void rs_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int rs_init(rs_server *s, const char *prefix, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  const char *tmp = getenv("TMPDIR");
  snprintf(s->dir, sizeof s->dir, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
           prefix);
  if (mkdtemp(s->dir) == NULL) {
    snprintf(err, errlen, "mkdtemp %s: %s", s->dir, strerror(errno));
    return -1;
  }
  snprintf(s->sock, sizeof s->sock, "%s/redis.sock", s->dir);
  return 0;
}

/* 1 when s's server answers within a second: PING with +PONG, or, when it
 * has an ACL user (its default user off, PING not among its commands), AUTH
 * as that user with +OK. */
static int answers(const rs_server *s) {
  const char *path = s->sock;
  char req[512];
  const char *want = "+PONG\r\n";
  int len = snprintf(req, sizeof req, "PING\r\n");
  if (s->acl_user && s->acl_pass) {
    len = snprintf(
        req, sizeof req, "*3\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n",
        strlen(s->acl_user), s->acl_user, strlen(s->acl_pass), s->acl_pass);
    want = "+OK\r\n";
  }
  size_t wantlen = strlen(want);
  if (len < 0 || (size_t)len >= sizeof req)
    return 0;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path)
    return 0;
  memcpy(a.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  int ok = 0;
  char buf[64];
  size_t got = 0;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      write(fd, req, (size_t)len) == len) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < wantlen && poll(&p, 1, 1000) == 1) {
      ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
      if (n <= 0)
        break;
      got += (size_t)n;
    }
    ok = got >= wantlen && memcmp(buf, want, wantlen) == 0;
  }
  close(fd);
  return ok;
}

static int write_conf(const rs_server *s, const char *conf, char *err,
                      size_t errlen) {
  FILE *f = fopen(conf, "w");
  if (f == NULL) {
    snprintf(err, errlen, "%s: %s", conf, strerror(errno));
    return -1;
  }
  fprintf(f,
          "port %d\nbind 127.0.0.1\nunixsocket %s\nunixsocketperm 700\n"
          "dir %s\nsave \"\"\nappendonly no\ndaemonize no\n"
          "logfile redis.log\n",
          s->port, s->sock, s->dir);
  if (s->acl_user && s->acl_pass)
    fprintf(f,
            "user %s on >%s ~mcp:* -@all +time +hmget +hset +hdel +pexpire "
            "+eval +evalsha +script +select +xadd +xread +xrevrange +del "
            "+exists +pttl +set +zadd +zcount +zrange +zrem\n"
            "user default off\n",
            s->acl_user, s->acl_pass);
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s: %s", conf, strerror(errno));
    return -1;
  }
  return 0;
}

int rs_start(rs_server *s, const char *path, char *err, size_t errlen) {
  char conf[400];
  snprintf(conf, sizeof conf, "%s/redis.conf", s->dir);
  if (write_conf(s, conf, err, errlen) != 0)
    return -1;
  unlink(s->sock); /* a stale one would look ready to nobody, but be sure */
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errlen, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the test */
    execl(path, path, conf, (char *)NULL);
    _exit(127);
  }
  s->pid = pid;
  for (int i = 0; i < 400; i++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      s->pid = 0;
      snprintf(err, errlen, "redis-server exited at start (see %s/redis.log)",
               s->dir);
      return -1;
    }
    if (answers(s))
      return 0;
    rs_sleep_ms(25);
  }
  rs_stop(s);
  snprintf(err, errlen, "redis-server did not answer PING in 10 s (see %s)",
           s->dir);
  return -1;
}

void rs_stop(rs_server *s) {
  if (s->pid <= 0)
    return;
  kill(s->pid, SIGCONT);
  kill(s->pid, SIGTERM);
  int status;
  /* No persistence: it shuts down at once. */
  for (int i = 0; i < 400 && waitpid(s->pid, &status, WNOHANG) == 0; i++)
    rs_sleep_ms(25);
  if (waitpid(s->pid, &status, WNOHANG) == 0) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
  }
  s->pid = 0;
  unlink(s->sock);
}

void rs_remove(rs_server *s) {
  rs_stop(s);
  static const char *const files[] = {"redis.conf", "redis.log", "redis.sock"};
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", s->dir, files[i]);
    unlink(path);
  }
  rmdir(s->dir);
}

int rs_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
      getsockname(fd, (struct sockaddr *)&a, &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}
