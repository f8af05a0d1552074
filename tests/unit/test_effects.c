/* lib/guard/effects.c: the decoder, fed notifications made here about this
 * thread (its memory read back by process_vm_readv, its cwd and fds through
 * /proc), and the filter and supervisor on the real kernel: a thread of
 * this process and a child that execs a shell, stopped on each effect,
 * continued or refused, and a listener closed under a waiting call. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "effects.h"
#include "mcp/mcp.h"
#include "testutil.h"

static char dir[64]; /* this test's folder */

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/mcp-effects-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* dir/name, in one of four buffers: a call may name two paths. */
static char *at(const char *name) {
  static _Thread_local char path[4][160];
  static _Thread_local unsigned next;
  char *p = path[next++ % 4];
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  return p;
}

/* A notification about this thread's call nr with args. */
static struct seccomp_notif notif(const char *call, uint64_t a0, uint64_t a1,
                                  uint64_t a2, uint64_t a3, uint64_t a4,
                                  uint64_t a5) {
  struct seccomp_notif n;
  memset(&n, 0, sizeof n);
  n.pid = (__u32)syscall(SYS_gettid);
  n.data.arch = seccomp_arch_native();
  n.data.nr = seccomp_syscall_resolve_name(call);
  uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
  memcpy(n.data.args, args, sizeof args);
  return n;
}

#define P(x) ((uint64_t)(uintptr_t)(x))

static mcp__effect e;

static int decode(const char *call, uint64_t a0, uint64_t a1, uint64_t a2,
                  uint64_t a3, uint64_t a4, uint64_t a5) {
  struct seccomp_notif n = notif(call, a0, a1, a2, a3, a4, a5);
  return mcp__effects_decode(0, &n, &e);
}

/* An address nothing is mapped at. */
static void *unmapped(void) {
  void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  munmap(p, 4096);
  return p;
}

START_TEST(every_op_has_its_stable_name) {
  static const char *const want[] = {
      "write",  "create",  "remove", "rename", "link",       "truncate",
      "chmod",  "chown",   "times",  "xattr",  "attr-ioctl", "shrink",
      "socket", "connect", "bind",   "listen", "send"};
  ck_assert_int_eq(MCP__EFFECT_OPS, sizeof want / sizeof *want);
  for (int i = 0; i < MCP__EFFECT_OPS; i++)
    ck_assert_str_eq(mcp__effect_op_name((mcp__effect_op)i), want[i]);
  ck_assert_str_eq(mcp__effect_op_name(MCP__EFFECT_OPS), "?");
}
END_TEST

START_TEST(relative_paths_resolve_against_cwd_and_dirfd) {
  char cwd[512];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  ck_assert_int_eq(chdir(dir), 0);
  /* AT_FDCWD, a file that does not exist: created. */
  ck_assert_int_eq(decode("openat", (uint64_t)(int64_t)AT_FDCWD, P("new.txt"),
                          O_WRONLY | O_CREAT, 0644, 0, 0),
                   0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CREATE);
  ck_assert_str_eq(e.target, at("new.txt"));
  ck_assert_str_eq(e.call, "openat");
  ck_assert_int_eq(e.flags, O_WRONLY | O_CREAT);
  ck_assert_int_eq(e.tid, (pid_t)syscall(SYS_gettid));
  ck_assert(!e.unreadable);
  ck_assert_int_eq(chdir(cwd), 0);
  /* A dirfd, a file that exists: written, or with O_TRUNC truncated. */
  FILE *f = fopen(at("old.txt"), "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  int d = open(dir, O_PATH | O_DIRECTORY);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(
      decode("openat", (uint64_t)d, P("old.txt"), O_RDWR | O_CREAT, 0, 0, 0),
      0);
  ck_assert_int_eq(e.op, MCP__EFFECT_WRITE);
  ck_assert_str_eq(e.target, at("old.txt"));
  ck_assert_int_eq(
      decode("openat", (uint64_t)d, P("old.txt"), O_WRONLY | O_TRUNC, 0, 0, 0),
      0);
  ck_assert_int_eq(e.op, MCP__EFFECT_TRUNCATE);
  /* unlinkat relative to the dirfd; unlink of an absolute path. */
  ck_assert_int_eq(decode("unlinkat", (uint64_t)d, P("old.txt"), 0, 0, 0, 0),
                   0);
  ck_assert_int_eq(e.op, MCP__EFFECT_REMOVE);
  ck_assert_str_eq(e.target, at("old.txt"));
  ck_assert_int_eq(decode("unlink", P("/var/x"), 0, 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "/var/x");
  /* utimensat with no path: the fd itself. */
  ck_assert_int_eq(decode("utimensat", (uint64_t)d, 0, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_TIMES);
  ck_assert_str_eq(e.target, dir);
  /* An fd: its path. */
  ck_assert_int_eq(decode("fchmod", (uint64_t)d, 0600, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CHMOD);
  ck_assert_str_eq(e.target, dir);
  close(d);
}
END_TEST

START_TEST(a_bad_pointer_is_unreadable_not_a_crash) {
  void *bad = unmapped();
  ck_assert_int_eq(
      decode("openat", (uint64_t)(int64_t)AT_FDCWD, P(bad), O_WRONLY, 0, 0, 0),
      0);
  ck_assert(e.unreadable);
  ck_assert_str_eq(e.target, "(unreadable)");
  ck_assert_int_eq(decode("unlink", 0, 0, 0, 0, 0, 0), 0);
  ck_assert(e.unreadable);
  ck_assert_int_eq(decode("rename", P(bad), P("/b"), 0, 0, 0, 0), 0);
  ck_assert(e.unreadable);
  ck_assert_str_eq(e.target2, "/b");
  ck_assert_int_eq(decode("connect", 3, P(bad), 16, 0, 0, 0), 0);
  ck_assert(e.unreadable);
  ck_assert_int_eq(
      decode("openat2", (uint64_t)(int64_t)AT_FDCWD, P("/a"), P(bad), 24, 0, 0),
      0);
  ck_assert(e.unreadable);
  ck_assert_int_eq(decode("sendmsg", 3, P(bad), 0, 0, 0, 0), 0);
  ck_assert(e.unreadable);
  /* An fd this thread does not have. */
  ck_assert_int_eq(decode("ftruncate", 9999, 0, 0, 0, 0, 0), 0);
  ck_assert(e.unreadable);
  ck_assert_int_eq(e.op, MCP__EFFECT_TRUNCATE);
}
END_TEST

START_TEST(a_string_may_end_just_before_an_unmapped_page) {
  char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  munmap(p + 4096, 4096);
  memcpy(p + 4096 - 7, "/a/b/c", 7);
  ck_assert_int_eq(decode("unlink", P(p + 4096 - 7), 0, 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "/a/b/c");
  ck_assert(!e.unreadable && !e.truncated);
  /* No NUL before the page ends: what was read, cut. */
  memcpy(p + 4096 - 4, "/abc", 4);
  ck_assert_int_eq(decode("unlink", P(p + 4096 - 4), 0, 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "/abc");
  ck_assert(e.truncated);
  munmap(p, 4096);
}
END_TEST

START_TEST(openat2_reads_its_struct) {
  uint64_t how[3] = {O_WRONLY | O_CREAT, 0600, 0};
  ck_assert_int_eq(decode("openat2", (uint64_t)(int64_t)AT_FDCWD, P(at("x")),
                          P(how), sizeof how, 0, 0),
                   0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CREATE);
  ck_assert_int_eq(e.flags, O_WRONLY | O_CREAT);
  ck_assert_str_eq(e.target, at("x"));
  ck_assert_str_eq(e.call, "openat2");
  how[0] = O_RDONLY;
  ck_assert_int_eq(decode("openat2", (uint64_t)(int64_t)AT_FDCWD, P(at("x")),
                          P(how), sizeof how, 0, 0),
                   1);
}
END_TEST

START_TEST(rename_and_link_have_two_paths) {
  int d = open(dir, O_PATH | O_DIRECTORY);
  ck_assert_int_ge(d, 0);
  ck_assert_int_eq(decode("renameat2", (uint64_t)d, P("a"),
                          (uint64_t)(int64_t)AT_FDCWD, P("/srv/b"), 0, 0),
                   0);
  ck_assert_int_eq(e.op, MCP__EFFECT_RENAME);
  ck_assert_str_eq(e.target, at("a"));
  ck_assert_str_eq(e.target2, "/srv/b");
  ck_assert_int_eq(decode("rename", P("/x/a"), P("/x/b"), 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "/x/a");
  ck_assert_str_eq(e.target2, "/x/b");
  /* link(old, new): the link made is the target, what it names target2. */
  ck_assert_int_eq(decode("linkat", (uint64_t)(int64_t)AT_FDCWD, P("/x/old"),
                          (uint64_t)d, P("new"), 0, 0),
                   0);
  ck_assert_int_eq(e.op, MCP__EFFECT_LINK);
  ck_assert_str_eq(e.target, at("new"));
  ck_assert_str_eq(e.target2, "/x/old");
  /* symlinkat(content, dirfd, path): the content is not a path here. */
  ck_assert_int_eq(
      decode("symlinkat", P("../etc/passwd"), (uint64_t)d, P("s"), 0, 0, 0), 0);
  ck_assert_str_eq(e.target, at("s"));
  ck_assert_str_eq(e.target2, "../etc/passwd");
  close(d);
}
END_TEST

START_TEST(socket_addresses_are_formatted) {
  struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(8080)};
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(decode("connect", 3, P(&in), sizeof in, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CONNECT);
  ck_assert_str_eq(e.target, "127.0.0.1:8080");
  ck_assert_int_eq(e.family, AF_INET);
  struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(443)};
  in6.sin6_addr = in6addr_loopback;
  ck_assert_int_eq(decode("bind", 3, P(&in6), sizeof in6, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_BIND);
  ck_assert_str_eq(e.target, "[::1]:443");
  struct sockaddr_un un = {.sun_family = AF_UNIX};
  strcpy(un.sun_path, "/run/example.sock");
  ck_assert_int_eq(decode("connect", 3, P(&un), sizeof un, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "unix:/run/example.sock");
  ck_assert_int_eq(e.family, AF_UNIX);
  memcpy(un.sun_path, "\0abs", 4);
  ck_assert_int_eq(decode("connect", 3, P(&un),
                          offsetof(struct sockaddr_un, sun_path) + 4, 0, 0, 0),
                   0);
  ck_assert_str_eq(e.target, "unix:@abs");
  /* sendto with an address; without one it is no effect. */
  ck_assert_int_eq(decode("sendto", 3, P("x"), 1, 0, P(&in), sizeof in), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_SEND);
  ck_assert_str_eq(e.target, "127.0.0.1:8080");
  ck_assert_int_eq(decode("sendto", 3, P("x"), 1, 0, 0, 0), 1);
  /* sendmsg: msg_name read from the message. */
  struct msghdr m = {.msg_name = &in6, .msg_namelen = sizeof in6};
  ck_assert_int_eq(decode("sendmsg", 3, P(&m), 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "[::1]:443");
  m.msg_name = NULL;
  m.msg_namelen = 0;
  ck_assert_int_eq(decode("sendmsg", 3, P(&m), 0, 0, 0, 0), 1);
  /* socket: its family and type; a unix one is none. */
  ck_assert_int_eq(
      decode("socket", AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_SOCKET);
  ck_assert_str_eq(e.target, "inet stream");
  ck_assert_int_eq(decode("socket", AF_INET6, SOCK_DGRAM, 0, 0, 0, 0), 0);
  ck_assert_str_eq(e.target, "inet6 dgram");
  ck_assert_int_eq(decode("socket", AF_UNIX, SOCK_STREAM, 0, 0, 0, 0), 1);
  /* listen: the socket's own address, read through a copy of the fd. */
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(s, 0);
  in.sin_port = 0;
  ck_assert_int_eq(bind(s, (struct sockaddr *)&in, sizeof in), 0);
  socklen_t len = sizeof in;
  ck_assert_int_eq(getsockname(s, (struct sockaddr *)&in, &len), 0);
  char want[64];
  snprintf(want, sizeof want, "127.0.0.1:%u", ntohs(in.sin_port));
  /* Without pidfd_open (valgrind has none), the fd's number. */
  long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
  if (pidfd < 0 && errno == ENOSYS)
    snprintf(want, sizeof want, "fd %d", s);
  if (pidfd >= 0)
    close((int)pidfd);
  ck_assert_int_eq(decode("listen", (uint64_t)s, 1, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_LISTEN);
  ck_assert_str_eq(e.target, want);
  close(s);
}
END_TEST

START_TEST(the_rest_of_the_table) {
  ck_assert_int_eq(decode("getpid", 0, 0, 0, 0, 0, 0), MCP_EINVAL);
  ck_assert_str_eq(e.call, "#39");
  ck_assert_int_eq(decode("fallocate", 0, 2, 0, 10, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_SHRINK);
  ck_assert_int_eq(decode("madvise", 4096, 8192, 9, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_SHRINK);
  ck_assert_str_eq(e.target, "memory 0x1000+8192");
  ck_assert_int_eq(
      decode("mkdirat", (uint64_t)(int64_t)AT_FDCWD, P("/q/d"), 0755, 0, 0, 0),
      0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CREATE);
  ck_assert_int_eq(decode("fsetxattr", 0, P("user.a"), 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_XATTR);
  ck_assert_int_eq(
      decode("fchownat", (uint64_t)(int64_t)AT_FDCWD, P("/q"), 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_CHOWN);
  ck_assert_int_eq(decode("truncate", P("/q/f"), 0, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_TRUNCATE);
  ck_assert_int_eq(decode("creat", P("/q/f"), 0600, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.flags, O_CREAT | O_WRONLY | O_TRUNC);
  /* ioctls: FS_IOC_SETFLAGS changes, FS_IOC_GETFLAGS reads. */
  ck_assert_int_eq(decode("ioctl", 0, 0x40086602, 0, 0, 0, 0), 0);
  ck_assert_int_eq(e.op, MCP__EFFECT_ATTR_IOCTL);
  ck_assert_int_eq(decode("ioctl", 0, 0x80086601, 0, 0, 0, 0), 1);
  /* Another architecture's number is not this table's. */
  struct seccomp_notif n = notif("unlink", P("/a"), 0, 0, 0, 0, 0);
  n.data.arch = 0x40000003; /* AUDIT_ARCH_I386 */
  ck_assert_int_eq(mcp__effects_decode(0, &n, &e), MCP_EINVAL);
}
END_TEST

/* ---- on the kernel ------------------------------------------------------- */

#define MAX_SEEN 32

typedef struct seen {
  int n;
  mcp__effect e[MAX_SEEN];
  mcp__effect_op refuse; /* refused with EACCES; MCP__EFFECT_OPS: none */
} seen;

static int record(const mcp__effect *ef, const struct seccomp_notif *n,
                  void *user_data) {
  (void)n;
  seen *s = user_data;
  if (s->n < MAX_SEEN)
    s->e[s->n++] = *ef;
  return ef->op == s->refuse ? EACCES : MCP__EFFECT_CONTINUE;
}

typedef struct worker {
  int listener;
  int errs[8];
  int port;
  char why[160];
} worker;

static int ret(int rc) { return rc < 0 ? errno : 0; }

/* A thread that watches itself, hands the listener over, then acts. */
static void *acting(void *arg) {
  worker *w = arg;
  int fd = mcp__effects_watch(MCP__EFFECTS_ALL, w->why, sizeof w->why);
  __atomic_store_n(&w->listener, fd, __ATOMIC_RELEASE);
  if (fd < 0)
    return NULL;
  /* Reading is never stopped. */
  int r = open("/dev/null", O_RDONLY);
  w->errs[0] = r >= 0 ? 0 : errno;
  if (r >= 0)
    close(r);
  int f = open(at("f"), O_WRONLY | O_CREAT, 0600);
  w->errs[1] = f >= 0 ? 0 : errno;
  if (f >= 0)
    close(f);
  w->errs[2] = ret(rename(at("f"), at("g")));
  w->errs[3] = ret(chmod(at("g"), 0644));
  w->errs[4] = ret(unlink(at("g")));
  int s = socket(AF_INET, SOCK_STREAM, 0);
  w->errs[5] = s >= 0 ? 0 : errno;
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((unsigned short)w->port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  w->errs[6] = s >= 0 ? ret(connect(s, (struct sockaddr *)&a, sizeof a)) : -1;
  if (s >= 0)
    close(s);
  return NULL;
}

static int loopback_listener(int *port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(l, 4), 0);
  socklen_t len = sizeof a;
  ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
  *port = ntohs(a.sin_port);
  return l;
}

/* Runs acting on a thread and serves its listener until the thread ends. */
static void watch_a_thread(worker *w, seen *s) {
  int l = loopback_listener(&w->port);
  w->listener = -2;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, acting, w), 0);
  int fd;
  while ((fd = __atomic_load_n(&w->listener, __ATOMIC_ACQUIRE)) == -2)
    usleep(1000); /* bounded by the test's timeout */
  ck_assert_msg(fd >= 0, "watch: %s", w->why);
  ck_assert_int_eq(mcp__effects_serve(fd, -1, record, s), 0);
  pthread_join(t, NULL);
  close(fd);
  close(l);
}

static void assert_effect(const seen *s, int i, mcp__effect_op op,
                          const char *target) {
  ck_assert_int_gt(s->n, i);
  ck_assert_msg(s->e[i].op == op, "effect %d: %s %s, wanted %s", i,
                mcp__effect_op_name(s->e[i].op), s->e[i].target,
                mcp__effect_op_name(op));
  ck_assert_str_eq(s->e[i].target, target);
}

START_TEST(a_watched_thread_is_continued_and_every_effect_seen_in_order) {
  worker w = {0};
  seen s = {.refuse = MCP__EFFECT_OPS};
  watch_a_thread(&w, &s);
  for (int i = 0; i < 7; i++)
    ck_assert_msg(w.errs[i] == 0, "step %d: %s", i, strerror(w.errs[i]));
  ck_assert_int_eq(s.n, 6);
  char want[64];
  snprintf(want, sizeof want, "127.0.0.1:%d", w.port);
  assert_effect(&s, 0, MCP__EFFECT_CREATE, at("f"));
  assert_effect(&s, 1, MCP__EFFECT_RENAME, at("f"));
  ck_assert_str_eq(s.e[1].target2, at("g"));
  assert_effect(&s, 2, MCP__EFFECT_CHMOD, at("g"));
  assert_effect(&s, 3, MCP__EFFECT_REMOVE, at("g"));
  assert_effect(&s, 4, MCP__EFFECT_SOCKET, "inet stream");
  assert_effect(&s, 5, MCP__EFFECT_CONNECT, want);
  ck_assert_int_eq(access(at("g"), F_OK), -1);
}
END_TEST

START_TEST(a_refused_effect_fails_with_the_answer) {
  worker w = {0};
  seen s = {.refuse = MCP__EFFECT_REMOVE};
  watch_a_thread(&w, &s);
  ck_assert_int_eq(w.errs[4], EACCES);
  ck_assert_int_eq(access(at("g"), F_OK), 0);
  assert_effect(&s, 3, MCP__EFFECT_REMOVE, at("g"));
}
END_TEST

/* With its listener closed, a stopped call fails (ENOSYS): never hangs. */
static void *orphan(void *arg) {
  worker *w = arg;
  int fd = mcp__effects_watch(MCP__EFFECTS_WRITES, w->why, sizeof w->why);
  if (fd >= 0)
    close(fd);
  w->listener = fd;
  w->errs[0] = ret(mkdir(at("d"), 0700));
  return NULL;
}

START_TEST(a_closed_listener_fails_calls_closed) {
  worker w = {0};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, orphan, &w), 0);
  pthread_join(t, NULL);
  ck_assert_msg(w.listener >= 0, "watch: %s", w.why);
  ck_assert_int_eq(w.errs[0], ENOSYS);
  ck_assert_int_eq(access(at("d"), F_OK), -1);
}
END_TEST

/* The child: watches itself, writes the listener's number to pipe_fd
 * (write is never stopped; sendmsg would be, with nobody yet to answer),
 * waits for the parent to have taken it, execs sh. */
static void child(int pipe_fd, int go_fd) {
  char why[160];
  int fd = mcp__effects_watch_self(why, sizeof why);
  if (fd < 0)
    _exit(90);
  if (write(pipe_fd, &fd, sizeof fd) != (ssize_t)sizeof fd)
    _exit(91);
  char byte;
  if (read(go_fd, &byte, 1) != 1)
    _exit(92);
  close(fd);
  if (chdir(dir) != 0)
    _exit(93);
  execl("/bin/sh", "sh", "-c", "echo > file; rm file", (char *)NULL);
  _exit(94);
}

/* The child's fd, copied here (the parent may: the child is its own). */
static int take_fd(pid_t pid, int fd) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return -1;
  int mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  close(pidfd);
  return mine;
}

START_TEST(a_child_that_execs_is_watched_with_its_children) {
  int up[2], go[2];
  ck_assert_int_eq(pipe2(up, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    child(up[1], go[0]);
  close(up[1]);
  close(go[0]);
  int theirs = -1;
  ck_assert_int_eq(read(up[0], &theirs, sizeof theirs), sizeof theirs);
  int fd = take_fd(pid, theirs);
  ck_assert_int_eq(write(go[1], "x", 1), 1);
  close(up[0]);
  close(go[1]);
  ck_assert_int_ge(fd, 0);
  seen s = {.refuse = MCP__EFFECT_OPS};
  ck_assert_int_eq(mcp__effects_serve(fd, -1, record, &s), 0);
  close(fd);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  /* sh made the file; rm (a child of sh) removed it. */
  int made = -1, removed = -1;
  for (int i = 0; i < s.n; i++) {
    if (strcmp(s.e[i].target, at("file")) != 0)
      continue;
    if (s.e[i].op == MCP__EFFECT_CREATE && made < 0)
      made = i;
    if (s.e[i].op == MCP__EFFECT_REMOVE)
      removed = i;
  }
  ck_assert_int_ge(made, 0);
  ck_assert_int_gt(removed, made);
  ck_assert_int_eq(access(at("file"), F_OK), -1);
}
END_TEST

/* serve returns when its stop fd is readable. */
START_TEST(serve_stops_on_its_stop_fd) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  ck_assert_int_eq(write(p[1], "x", 1), 1);
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  seen s = {.refuse = MCP__EFFECT_OPS};
  /* A socket never readable stands for a quiet listener. */
  ck_assert_int_eq(mcp__effects_serve(sv[0], p[0], record, &s), 0);
  ck_assert_int_eq(s.n, 0);
  close(p[0]);
  close(p[1]);
  close(sv[0]);
  close(sv[1]);
  /* A listener that is no fd at all. */
  ck_assert_int_eq(mcp__effects_serve(sv[0], -1, record, &s), MCP_EIO);
}
END_TEST

int main(void) {
  Suite *s = suite_create("effects");
  TCase *t = tu_tcase(s, "decode", setup, teardown, 30);
  tcase_add_test(t, every_op_has_its_stable_name);
  tcase_add_test(t, relative_paths_resolve_against_cwd_and_dirfd);
  tcase_add_test(t, a_bad_pointer_is_unreadable_not_a_crash);
  tcase_add_test(t, a_string_may_end_just_before_an_unmapped_page);
  tcase_add_test(t, openat2_reads_its_struct);
  tcase_add_test(t, rename_and_link_have_two_paths);
  tcase_add_test(t, socket_addresses_are_formatted);
  tcase_add_test(t, the_rest_of_the_table);
  t = tu_tcase(s, "kernel", setup, teardown, 60);
  tcase_add_test(t,
                 a_watched_thread_is_continued_and_every_effect_seen_in_order);
  tcase_add_test(t, a_refused_effect_fails_with_the_answer);
  tcase_add_test(t, a_closed_listener_fails_calls_closed);
  tcase_add_test(t, a_child_that_execs_is_watched_with_its_children);
  tcase_add_test(t, serve_stops_on_its_stop_fd);
  return tu_run(s);
}
