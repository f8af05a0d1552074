/* proc.c: starting and stopping the server process. The child reports how
 * its exec went through a close-on-exec socket: end of file means it
 * happened, four bytes are the errno it failed with; the listener of an
 * observed child comes through the same socket, as SCM_RIGHTS. */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long mcpc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void child_fail(int sock, int code) {
  ssize_t w = write(sock, &code, sizeof code);
  (void)w;
  _exit(127);
}

/* Takes descriptor fd of process pid into this one (pidfd_getfd, Linux
 * 5.6): the child cannot send it, as its sendmsg would already wait on the
 * listener nobody serves yet. */
static int take_fd(pid_t pid, int fd) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  int got;
  if (pidfd < 0)
    return -1;
  got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  close(pidfd);
  return got;
}

/* In the child: its own process group, its descriptors, observation, exec.
 * Only async-signal-safe calls, except watch, which runs while the parent
 * has one thread. */
static void child(char *const argv[], int pipes, mcpc_watch_fn watch, int sock,
                  const int in[2], const int out[2], int log_fd) {
  char why[256];
  int null_fd;
  setpgid(0, 0);
  signal(SIGPIPE, SIG_DFL);
  if (pipes) {
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
      child_fail(sock, errno);
  } else {
    if ((null_fd = open("/dev/null", O_RDONLY)) < 0 || dup2(null_fd, 0) < 0 ||
        dup2(log_fd, 1) < 0)
      child_fail(sock, errno);
  }
  if (dup2(log_fd, 2) < 0)
    child_fail(sock, errno);
  if (watch) {
    int listener = watch(why, sizeof why);
    if (listener < 0) {
      /* The reason goes to the log, which the parent reads back. */
      ssize_t w = write(2, why, strnlen(why, sizeof why));
      (void)w;
      child_fail(sock, -1);
    }
    /* Its number goes to the parent, which takes it and says go: write
     * and read are not effects, so nothing here waits on the listener. */
    char word[1 + sizeof(int)], go;
    word[0] = 'L';
    memcpy(word + 1, &listener, sizeof listener);
    if (write(sock, word, sizeof word) != (ssize_t)sizeof word ||
        read(sock, &go, 1) != 1)
      child_fail(sock, errno);
    close(listener);
  }
  execvp(argv[0], argv);
  child_fail(sock, errno);
}

/* Waits (bounded) for the child's word on sock: its listener when
 * observed, then end of file (exec done) or an errno. */
static int await_exec(mcpc_proc *p, int sock, int observed, char *why,
                      size_t size) {
  struct pollfd pfd = {.fd = sock, .events = POLLIN};
  int code = 0;
  ssize_t got;
  if (poll(&pfd, 1, 10000) <= 0) {
    snprintf(why, size, "the child did not reach exec within 10 s");
    return -1;
  }
  if (observed) {
    char word[1 + sizeof(int)];
    int theirs = -1;
    if (read(sock, word, sizeof word) == (ssize_t)sizeof word &&
        word[0] == 'L') {
      memcpy(&theirs, word + 1, sizeof theirs);
      p->listener = take_fd(p->pid, theirs);
    }
    if (p->listener < 0 || write(sock, "g", 1) != 1) {
      char tail[200];
      int err = errno;
      mcpc_proc_log_tail(p, tail, sizeof tail);
      snprintf(why, size, "could not put the server under observation: %s",
               tail[0]      ? tail
               : theirs < 0 ? "the child made no listener"
                            : strerror(err));
      return -1;
    }
    if (poll(&pfd, 1, 10000) <= 0) {
      snprintf(why, size, "the child did not reach exec within 10 s");
      return -1;
    }
  }
  got = read(sock, &code, sizeof code);
  if (got == (ssize_t)sizeof code) {
    snprintf(why, size, "cannot run %s", code > 0 ? strerror(code) : "");
    return -1;
  }
  return 0;
}

int mcpc_proc_start(char *const argv[], int pipes, mcpc_watch_fn watch,
                    mcpc_proc *p, char *why, size_t size) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, sock[2] = {-1, -1};
  FILE *log = tmpfile();
  memset(p, 0, sizeof *p);
  p->in_fd = p->out_fd = p->listener = p->log_fd = -1;
  if (log == NULL) {
    snprintf(why, size, "no temporary file for the server's log: %s",
             strerror(errno));
    return -1;
  }
  p->log_fd = dup(fileno(log));
  fclose(log);
  if (p->log_fd < 0 ||
      (pipes && (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)) ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) < 0) {
    snprintf(why, size, "cannot make pipes: %s", strerror(errno));
    goto fail;
  }
  p->pid = fork();
  if (p->pid < 0) {
    snprintf(why, size, "cannot fork: %s", strerror(errno));
    p->pid = 0;
    goto fail;
  }
  if (p->pid == 0)
    child(argv, pipes, watch, sock[1], in, out, p->log_fd);
  /* Both sides set the group, so that a signal to it cannot come first. */
  setpgid(p->pid, p->pid);
  close(sock[1]);
  sock[1] = -1;
  if (pipes) {
    close(in[0]);
    close(out[1]);
    p->in_fd = in[1];
    p->out_fd = out[0];
  }
  if (await_exec(p, sock[0], watch != NULL, why, size) < 0) {
    close(sock[0]);
    mcpc_proc_stop(p, 0);
    return -1;
  }
  close(sock[0]);
  return 0;
fail:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0)
      close(in[i]);
    if (out[i] >= 0)
      close(out[i]);
    if (sock[i] >= 0)
      close(sock[i]);
  }
  if (p->log_fd >= 0)
    close(p->log_fd);
  p->log_fd = -1;
  return -1;
}

static int reap(mcpc_proc *p, int flags) {
  int status;
  pid_t got;
  if (p->pid == 0 || p->reaped)
    return 1;
  do
    got = waitpid(p->pid, &status, flags);
  while (got < 0 && errno == EINTR);
  if (got == p->pid || (got < 0 && errno == ECHILD)) {
    p->reaped = 1;
    p->status = got == p->pid ? status : 0;
    return 1;
  }
  return 0;
}

int mcpc_proc_alive(mcpc_proc *p) { return p->pid != 0 && !reap(p, WNOHANG); }

/* Waits up to ms for the child to exit, in 10 ms steps. */
int mcpc_proc_wait(mcpc_proc *p, unsigned ms) {
  long long end = mcpc_now_ms() + ms;
  for (;;) {
    if (reap(p, WNOHANG))
      return 1;
    if (mcpc_now_ms() >= end)
      return 0;
    struct timespec step = {0, 10 * 1000 * 1000};
    nanosleep(&step, NULL);
  }
}

void mcpc_proc_log_tail(const mcpc_proc *p, char *buf, size_t size) {
  off_t end;
  ssize_t got;
  size_t want = size - 1;
  buf[0] = '\0';
  if (p->log_fd < 0 || size < 2 || (end = lseek(p->log_fd, 0, SEEK_END)) < 0)
    return;
  if ((size_t)end < want)
    want = (size_t)end;
  got = pread(p->log_fd, buf, want, end - (off_t)want);
  if (got < 0)
    got = 0;
  buf[got] = '\0';
  /* Trailing newlines say nothing; the others become "; ". */
  while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
    buf[--got] = '\0';
  for (ssize_t i = 0; i < got; i++)
    if (buf[i] == '\n')
      buf[i] = ';';
    else if ((unsigned char)buf[i] < 0x20)
      buf[i] = ' ';
}

void mcpc_proc_describe(const mcpc_proc *p, char *buf, size_t size) {
  if (!p->reaped)
    snprintf(buf, size, "is still running");
  else if (WIFEXITED(p->status))
    snprintf(buf, size, "exited with status %d", WEXITSTATUS(p->status));
  else if (WIFSIGNALED(p->status))
    snprintf(buf, size, "killed by signal %d", WTERMSIG(p->status));
  else
    snprintf(buf, size, "ended");
}

void mcpc_proc_stop(mcpc_proc *p, unsigned grace_ms) {
  if (p->in_fd >= 0)
    close(p->in_fd);
  p->in_fd = -1;
  if (p->pid != 0 && !p->stopped) {
    if (!mcpc_proc_wait(p, grace_ms)) {
      kill(-p->pid, SIGTERM);
      if (!mcpc_proc_wait(p, grace_ms)) {
        kill(-p->pid, SIGKILL);
        reap(p, 0);
      }
    }
    /* Whatever the server started and left behind goes with it. */
    kill(-p->pid, SIGKILL);
    p->stopped = 1;
  }
  if (p->out_fd >= 0)
    close(p->out_fd);
  if (p->listener >= 0)
    close(p->listener);
  if (p->log_fd >= 0)
    close(p->log_fd);
  p->out_fd = p->listener = p->log_fd = -1;
}
