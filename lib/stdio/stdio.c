/* The stdio transport: newline-delimited JSON-RPC on two file descriptors,
 * built only on the public session API (promise 3, docs/architecture.md). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base.h" /* allocator and buffers only */

#define DEFAULT_MAX_LINE (4u << 20)

/* Replies written while the reader still holds more complete lines wait
 * in a buffer and leave in one write once those lines are handled, or once
 * about 2 KiB of them wait: a client that pipelines requests gets its
 * answers in few system calls, yet gets the first of them while the rest
 * are being worked on, so that it reads and sends more while the server
 * works (with 64 echo calls in flight, a 64 KiB cap held every answer back
 * to the end of the batch, and the two processes mostly took turns: 0.4 M
 * calls/s against 0.9 M with 2 KiB, on two CPUs); one that waits for each
 * answer gets it at once. */
#define MAX_PENDING (2u * 1024)

typedef struct stdio_out {
  int fd;
  pthread_mutex_t lock;  /* guards pending, and batching's changes */
  mcp__buf pending;      /* whole lines not written yet */
  _Atomic bool batching; /* the reader has more lines queued; only the
                            reader changes it, and while it is false
                            nothing is pending */
} stdio_out;

/* Writes iov[0..n) whole. One buffer goes by write(2), whose path through
 * the kernel is shorter than writev's. */
static int write_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w =
        n == 1 ? write(fd, iov->iov_base, iov->iov_len) : writev(fd, iov, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return MCP_EIO;
    }
    for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
      w -= (ssize_t)iov->iov_len;
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

/* Writes what is pending, then msg and its newline (msg may be NULL).
 * Call with out->lock held. */
static int flush_locked(stdio_out *out, const char *msg, size_t len) {
  struct iovec iov[3];
  int n = 0;
  if (out->pending.len)
    iov[n++] = (struct iovec){out->pending.data, out->pending.len};
  if (msg) {
    iov[n++] = (struct iovec){(void *)msg, len};
    iov[n++] = (struct iovec){(void *)"\n", 1};
  }
  int rc = n ? write_all(out->fd, iov, n) : 0;
  out->pending.len = 0;
  return rc;
}

/* Adds msg and its newline to what is pending when that stays under
 * MAX_PENDING and there is memory; returns whether it did (if not,
 * pending is as it was). Call with out->lock held. */
static bool join_locked(stdio_out *out, const char *msg, size_t len) {
  if (len >= MAX_PENDING - out->pending.len)
    return false;
  size_t before = out->pending.len;
  mcp__buf_append(&out->pending, msg, len);
  mcp__buf_putc(&out->pending, '\n');
  if (out->pending.err == 0)
    return true;
  out->pending.err = 0; /* no memory: forget the partial line */
  out->pending.len = before;
  return false;
}

/* The session's send callback: one message and its newline. The session
 * serializes calls, and the lock orders them with the reader's flushes, so
 * lines never interleave even when a deferred call finishes on another
 * thread. A short message joins what is pending: while the reader batches
 * it waits there; otherwise all of it leaves in one write(2) (the buffer
 * keeps its room between replies, so nothing is allocated once it has
 * grown; sequential echo calls were 2-3% faster so than with writev of
 * the pieces). A long one, or one without memory to join, goes as pieces
 * behind what is pending. */
static int send_line(const char *msg, size_t len, void *user_data) {
  stdio_out *out = user_data;
  pthread_mutex_lock(&out->lock);
  bool joined = join_locked(out, msg, len);
  int rc =
      out->batching && joined ? 0 : flush_locked(out, joined ? NULL : msg, len);
  pthread_mutex_unlock(&out->lock);
  return rc;
}

/* Tells the transport whether more lines wait in the reader's buffer; when
 * none do, what is pending is written. Returns 0 or MCP_EIO. */
static int set_batching(stdio_out *out, bool more) {
  /* Unchanged, there is nothing to do: still batching, or not batching
   * with nothing pending. A client that waits for each answer so costs
   * the reader no lock per line. Only this thread changes batching. */
  if (more == atomic_load(&out->batching))
    return 0;
  pthread_mutex_lock(&out->lock);
  out->batching = more;
  int rc = more ? 0 : flush_locked(out, NULL, 0);
  pthread_mutex_unlock(&out->lock);
  return rc;
}

/* Hands one line to the session: a trailing CR is dropped (CRLF input) and
 * blank lines are skipped. */
static int deliver(mcp_session *s, char *line, size_t len) {
  if (len && line[len - 1] == '\r')
    len--;
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t'))
    i++;
  if (i == len)
    return 0;
  return mcp_session_receive(s, line, len);
}

static int oversized(mcp_session *s, size_t max_line) {
  char why[80];
  mcp__fmt(why, sizeof why, "message longer than %zu bytes", max_line);
  return mcp_session_reject(s, why);
}

/* The graceful stop (mcp_stdio_options.stop_on_signal). A signal handler
 * may only call async-signal-safe functions, so it writes one byte to a
 * pipe whose read end the reader polls beside its input; this works
 * whichever thread the signal lands on. The pipe is made once and kept for
 * the life of the process, so that a handler still running on another
 * thread after the old handlers are back never writes to a closed (or
 * reused) descriptor. */
static pthread_mutex_t stop_lock = PTHREAD_MUTEX_INITIALIZER;
static bool stop_taken;                /* under stop_lock */
static int stop_read_fd = -1;          /* under stop_lock */
static _Atomic int stop_write_fd = -1; /* read by the handler */

static void on_stop_signal(int sig) {
  (void)sig;
  int saved = errno;
  (void)!write(atomic_load_explicit(&stop_write_fd, memory_order_relaxed), "",
               1);
  errno = saved;
}

/* Installs the stop handlers for SIGTERM and SIGINT, keeping the previous
 * ones in old, and sets *stop_fd to the descriptor that becomes readable on
 * either signal. Returns 0, MCP_ESTATE when another mcp_serve_stdio holds
 * the signals, or MCP_EIO when the pipe cannot be made. */
static int take_signals(struct sigaction old[2], int *stop_fd) {
  pthread_mutex_lock(&stop_lock);
  int rc = stop_taken ? MCP_ESTATE : 0;
  if (rc == 0 && stop_read_fd < 0) {
    int p[2];
    if (pipe(p) != 0) {
      rc = MCP_EIO;
    } else {
      /* Non-blocking: a burst of signals must never block the handler,
       * and draining must never block the reader. */
      for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
        fcntl(p[i], F_SETFL, O_NONBLOCK);
      }
      stop_read_fd = p[0];
      atomic_store(&stop_write_fd, p[1]);
    }
  }
  if (rc == 0) {
    /* A signal taken by an earlier call must not stop this one. */
    char drain[64];
    while (read(stop_read_fd, drain, sizeof drain) > 0)
      ;
    struct sigaction sa = {.sa_handler = on_stop_signal,
                           .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old[0]);
    sigaction(SIGINT, &sa, &old[1]);
    stop_taken = true;
    *stop_fd = stop_read_fd;
  }
  pthread_mutex_unlock(&stop_lock);
  return rc;
}

static void give_signals(const struct sigaction old[2]) {
  pthread_mutex_lock(&stop_lock);
  sigaction(SIGTERM, &old[0], NULL);
  sigaction(SIGINT, &old[1], NULL);
  stop_taken = false;
  pthread_mutex_unlock(&stop_lock);
}

/* Whether the stop signal came (stop_fd, when >= 0, is readable). */
static bool stop_requested(int stop_fd) {
  struct pollfd p = {.fd = stop_fd, .events = POLLIN};
  return stop_fd >= 0 && poll(&p, 1, 0) == 1;
}

/* Waits until fd has something for read (data, end of input or an error,
 * which read then reports) or stop_fd (when >= 0) is readable. Returns
 * false on the stop, which wins when both are ready. Meanwhile it answers
 * the calls whose deadline passes (mcp_server_expire), so a deferred call
 * gets its timeout even while the client is silent. */
static bool wait_input(mcp_server *srv, int fd, int stop_fd) {
  struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                        {.fd = stop_fd, .events = POLLIN}};
  for (;;) {
    long t = mcp_server_next_expiry_ms(srv);
    int n = poll(p, stop_fd >= 0 ? 2 : 1, t < 0 ? -1 : (int)t);
    if (n == 0) {
      mcp_server_expire(srv);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return true;
    if (stop_fd >= 0 && p[1].revents)
      return false;
    if (p[0].revents)
      return true;
  }
}

/* Reads until end of input, splitting lines. A line over max_line bytes is
 * answered once and discarded up to its newline, so memory stays bounded
 * and the stream resynchronizes. With stop_fd (>= 0) it also ends when
 * stop_fd becomes readable; a partial line read so far is dropped. */
static int read_loop(mcp_session *s, stdio_out *out, int fd, size_t max_line,
                     int stop_fd, mcp_server *srv) {
  size_t cap = 64 * 1024, len = 0;
  char *buf = mcp__malloc(cap);
  if (buf == NULL)
    return MCP_ENOMEM;
  bool skipping = false;
  int rc = 0;
  for (;;) {
    if (len == cap) {
      size_t ncap = cap * 2 > max_line + 1 ? max_line + 1 : cap * 2;
      char *p = ncap > cap ? mcp__realloc(buf, ncap) : NULL;
      if (p == NULL) {
        rc = MCP_ENOMEM;
        break;
      }
      buf = p;
      cap = ncap;
    }
    /* Every whole line read so far has been handled: a stop here leaves
     * no request half done. With call deadlines to watch, the wait is
     * where they are answered. */
    if ((stop_fd >= 0 || mcp_server_next_expiry_ms(srv) >= 0) &&
        !wait_input(srv, fd, stop_fd))
      break;
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      rc = MCP_EIO;
      break;
    }
    if (n == 0) {
      if (len && !skipping)
        rc = deliver(s, buf, len); /* a last line without its newline */
      break;
    }
    size_t scan = len;
    len += (size_t)n;
    size_t start = 0;
    const char *nl = memchr(buf + scan, '\n', len - scan);
    while (nl != NULL) {
      size_t i = (size_t)(nl - buf);
      nl = memchr(buf + i + 1, '\n', len - i - 1);
      /* Replies wait while another whole line is already here. */
      set_batching(out, nl != NULL);
      /* A whole line can arrive in one read; the limit applies to it too. */
      if (!skipping)
        rc = i - start > max_line ? oversized(s, max_line)
                                  : deliver(s, buf + start, i - start);
      skipping = false;
      start = i + 1;
      if (rc == MCP_ECLOSED)
        goto out;
    }
    if (set_batching(out, false) != 0) {
      rc = MCP_ECLOSED;
      break;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    if (len > max_line) {
      if (!skipping && oversized(s, max_line) == MCP_ECLOSED) {
        rc = MCP_ECLOSED;
        break;
      }
      skipping = true;
      len = 0;
    }
  }
out:
  mcp__free(buf);
  return rc == MCP_ECLOSED ? MCP_EIO : rc == MCP_ENOMEM ? rc : 0;
}

/* Only protocol messages may reach standard output. Keeps a private
 * descriptor for them in *out_fd, the original fd 1 in *saved_stdout, and
 * points fd 1 at stderr, so stray output from a handler or a library lands
 * in the log instead of corrupting a frame. Returns 0 or MCP_EIO. */
static int private_stdout(int *out_fd, int *saved_stdout) {
  fflush(stdout);
  int priv = dup(STDOUT_FILENO);
  *saved_stdout = dup(STDOUT_FILENO);
  if (priv < 0 || *saved_stdout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    if (priv >= 0)
      close(priv);
    if (*saved_stdout >= 0)
      close(*saved_stdout);
    *saved_stdout = -1;
    return MCP_EIO;
  }
  *out_fd = priv;
  return 0;
}

/* Gives fd 1 back to the protocol and closes the private descriptor. What
 * a handler printed is still in stdio's buffer: it goes to stderr, where
 * fd 1 points now, before fd 1 is the protocol's again, so it never lands
 * after (or between) the replies. */
static void restore_stdout(int saved_stdout, int out_fd) {
  fflush(stdout);
  dup2(saved_stdout, STDOUT_FILENO);
  close(saved_stdout);
  close(out_fd);
}

/* Without a principal the local user holds every scope. Said once per
 * process (a forked child says it again), not per run, and through the
 * server's log: a warning, so the default log writes it to stderr and a
 * log callback that keeps only errors drops it. */
static void warn_all_scopes(mcp_server *srv) {
  static atomic_int all_scopes_said_by; /* the process that said it */
  int me = (int)getpid();
  if (atomic_exchange(&all_scopes_said_by, me) != me)
    mcp_server_log(srv, MCP_LOG_WARNING,
                   "stdio: no principal configured, so the local user holds "
                   "every scope");
}

/* One session for principal over the framer, from its start to its end
 * (end of input, a write failure or the stop signal). */
static int run_session(mcp_server *srv, const mcp_principal *principal,
                       stdio_out *out, int in_fd, size_t max_line,
                       int stop_fd) {
  mcp_session *s = NULL;
  int rc = mcp_session_new(srv, principal, send_line, out, &s);
  if (rc != 0)
    return rc;
  rc = read_loop(s, out, in_fd, max_line, stop_fd, srv);
  /* At end of input, calls an executor holds finish first: without one
   * they would have finished before the next line was read. Then (and
   * at once on the stop signal) what still runs is cancelled, and we
   * wait (bounded) for deferred calls so their threads never write to
   * a closed fd. */
  while (!stop_requested(stop_fd) && mcp_session_executing(s) > 0)
    nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
  mcp_session_cancel_all(s);
  for (int i = 0; i < 500 && mcp_session_pending(s) > 0; i++)
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  mcp_session_free(s);
  return rc;
}

int mcp_serve_stdio(mcp_server *srv, const mcp_stdio_options *opts) {
  if (srv == NULL)
    return MCP_EINVAL;
  mcp_stdio_options o = opts ? *opts : (mcp_stdio_options){0};
  size_t max_line = o.max_line ? o.max_line : DEFAULT_MAX_LINE;
  int in_fd = o.in_fd ? o.in_fd : STDIN_FILENO;
  int out_fd = o.out_fd ? o.out_fd : STDOUT_FILENO;
  int saved_stdout = -1;
  struct sigaction old_stop[2];
  int stop_fd = -1;
  if (o.stop_on_signal) {
    int rc = take_signals(old_stop, &stop_fd);
    if (rc != 0)
      return rc;
  }
  if (out_fd == STDOUT_FILENO && private_stdout(&out_fd, &saved_stdout) != 0) {
    if (stop_fd >= 0)
      give_signals(old_stop);
    return MCP_EIO;
  }
  /* A vanished peer must show up as EPIPE on write, not kill the process. */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old_pipe);
  const mcp_principal local = {.subject = "local", .all_scopes = true};
  if (o.principal == NULL)
    warn_all_scopes(srv);

  stdio_out out = {.fd = out_fd};
  bool locked = pthread_mutex_init(&out.lock, NULL) == 0;
  int rc = locked ? run_session(srv, o.principal ? o.principal : &local, &out,
                                in_fd, max_line, stop_fd)
                  : MCP_ENOMEM;
  if (locked) {
    set_batching(&out, false); /* nothing may stay unwritten */
    pthread_mutex_destroy(&out.lock);
  }
  mcp__buf_free(&out.pending);
  sigaction(SIGPIPE, &old_pipe, NULL);
  if (stop_fd >= 0)
    give_signals(old_stop);
  if (saved_stdout >= 0)
    restore_stdout(saved_stdout, out_fd);
  return rc;
}
