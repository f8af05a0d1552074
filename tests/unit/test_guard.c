/* The guard (lib/guard) on the real kernel: tools whose handlers try to
 * write, remove, truncate and reach out, under each rule set, with the
 * disk and a loopback listener telling what really happened. No mocks: a
 * refused operation is refused by Landlock or seccomp on this machine.
 * Where the kernel lacks a feature a test needs, the test fails saying
 * which; landlock_abi_max runs the rules as on an older kernel (Debian
 * 12's 6.1 answers ABI 2). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <mcp/guard.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static mcp_server *srv;
static tu_peer P;
static char dir[64]; /* this test's folder, with existing.txt and w/ */
static int listener = -1, listener2 = -1; /* loopback TCP listeners */
static unsigned short port, port2;

/* ---- what a handler tries ------------------------------------------------ */

static char *at(const char *name) {
  static _Thread_local char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static int ret(int rc) { return rc < 0 ? errno : 0; }

static int tcp_connect(unsigned short p) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return errno;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(p)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ret(connect(fd, (struct sockaddr *)&a, sizeof a));
  close(fd);
  return rc;
}

static int op_create(void) {
  int fd = open(at("new.txt"), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0)
    close(fd);
  return fd < 0 ? errno : 0;
}
static int op_write_open(void) {
  int fd = open(at("existing.txt"), O_WRONLY | O_APPEND);
  if (fd < 0)
    return errno;
  int rc = write(fd, "+", 1) == 1 ? 0 : errno;
  close(fd);
  return rc;
}
static int op_unlink(void) { return ret(unlink(at("existing.txt"))); }
static int op_rename(void) {
  char to[128];
  snprintf(to, sizeof to, "%s", at("renamed.txt"));
  return ret(rename(at("existing.txt"), to));
}
static int op_mkdir(void) { return ret(mkdir(at("newdir"), 0700)); }
static int op_symlink(void) { return ret(symlink("existing.txt", at("sym"))); }
static int op_link(void) {
  char to[128];
  snprintf(to, sizeof to, "%s", at("hard"));
  return ret(link(at("existing.txt"), to));
}
static int op_truncate(void) { return ret(truncate(at("existing.txt"), 0)); }
static int op_open_trunc(void) {
  int fd = open(at("existing.txt"), O_WRONLY | O_TRUNC);
  if (fd >= 0)
    close(fd);
  return fd < 0 ? errno : 0;
}
static int op_create_in_w(void) {
  int fd = open(at("w/new.txt"), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd >= 0)
    close(fd);
  return fd < 0 ? errno : 0;
}
static int op_unlink_in_w(void) { return ret(unlink(at("w/f.txt"))); }
/* One of each: a file made, renamed, its mode changed, removed; a TCP
 * socket that connects to the first listener. */
static int op_sequence(void) {
  char made[128], moved[128];
  snprintf(made, sizeof made, "%s", at("o.txt"));
  snprintf(moved, sizeof moved, "%s", at("o2.txt"));
  int fd = open(made, O_WRONLY | O_CREAT, 0600);
  if (fd < 0)
    return errno;
  close(fd);
  if (rename(made, moved) != 0 || chmod(moved, 0644) != 0 || unlink(moved) != 0)
    return errno;
  return tcp_connect(port);
}
/* Waits for the other call of a pair, then removes existing.txt. */
static pthread_barrier_t pair_barrier;
static int op_pair(void) {
  pthread_barrier_wait(&pair_barrier);
  return ret(unlink(at("existing.txt")));
}
/* MANY refusals in one call, for the log's limit. */
#define MANY 25
static int op_many(void) {
  int refused = 0;
  for (int i = 0; i < MANY; i++)
    refused += unlink(at("existing.txt")) != 0;
  return refused == MANY ? EACCES : 0;
}
static int op_connect(void) { return tcp_connect(port); }
static int op_connect_allowed(void) { return tcp_connect(port2); }
static int op_bind(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return errno;
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = ret(bind(fd, (struct sockaddr *)&a, sizeof a));
  close(fd);
  return rc;
}
static int op_udp(void) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0)
    return errno;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc =
      sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof a) == 1 ? 0 : errno;
  close(fd);
  return rc;
}
static int op_packet(void) {
  int fd = socket(AF_PACKET, SOCK_DGRAM, 0);
  if (fd >= 0)
    close(fd);
  return fd < 0 ? errno : 0;
}
static int op_unix(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    return errno;
  close(sv[0]);
  close(sv[1]);
  return 0;
}
static int op_uring(void) {
#ifdef SYS_io_uring_setup
  unsigned char params[120] = {0}; /* struct io_uring_params */
  long fd = syscall(SYS_io_uring_setup, 1, params);
  if (fd >= 0)
    close((int)fd);
  return fd < 0 ? errno : 0;
#else
  return ENOSYS;
#endif
}
static int op_fastopen(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return errno;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc =
      sendto(fd, "hello", 5, MSG_FASTOPEN, (struct sockaddr *)&a, sizeof a) < 0
          ? errno
          : 0;
  close(fd);
  return rc;
}
static int op_listen(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return errno;
  int rc = ret(listen(fd, 1)); /* no bind: the kernel would pick a port */
  close(fd);
  return rc;
}
static int op_mknod_in_w(void) {
  return ret(mknod(at("w/null"), S_IFCHR | 0600, makedev(1, 3)));
}
static int op_chmod(void) { return ret(chmod(at("existing.txt"), 0)); }
static int op_chown(void) { return ret(chown(at("existing.txt"), 1, 1)); }
static int op_utime(void) {
  struct timespec t[2] = {{0, 0}, {0, 0}};
  return ret(utimensat(AT_FDCWD, at("existing.txt"), t, 0));
}
static int op_setxattr(void) {
  return ret(setxattr(at("existing.txt"), "user.mcp", "x", 1, 0));
}
static int op_move_in_w(void) {
  char to[128];
  snprintf(to, sizeof to, "%s", at("w/sub/g.txt"));
  return ret(rename(at("w/g.txt"), to));
}
static int op_handle_trunc(void) {
  struct {
    struct file_handle h;
    unsigned char bytes[128];
  } fh = {.h.handle_bytes = 128};
  int mount_id;
  if (name_to_handle_at(AT_FDCWD, at("existing.txt"), &fh.h, &mount_id, 0))
    return errno;
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
  int fd = open_by_handle_at(dirfd, &fh.h, O_RDONLY | O_TRUNC);
  int rc = fd < 0 ? errno : 0;
  if (fd >= 0)
    close(fd);
  close(dirfd);
  return rc;
}

/* ---- every member of each class, by raw system call ----------------------
 * syscall(2) with the number, never the C library's wrapper (which may use
 * another call, or none), for each call guard.h names. */

#define BIG_SIZE 12288 /* big.bin: three 4 KiB blocks of 'b' */

static int raw(long rc) { return rc < 0 ? errno : 0; }

static int open_ro(void) { return open(at("existing.txt"), O_RDONLY); }

/* fn on a descriptor of existing.txt opened for reading. */
static int on_ro(long (*fn)(int)) {
  int fd = open_ro();
  if (fd < 0)
    return errno;
  int rc = raw(fn(fd));
  close(fd);
  return rc;
}

/* fn on a descriptor of big.bin opened for reading and writing. */
static int on_big(long (*fn)(int)) {
  int fd = open(at("big.bin"), O_RDWR);
  if (fd < 0)
    return errno;
  int rc = raw(fn(fd));
  close(fd);
  return rc;
}

static uid_t me(void) { return getuid(); }
static gid_t my_group(void) { return getgid(); }

static int r_chmod(void) {
  return raw(syscall(SYS_chmod, at("existing.txt"), 0600));
}
static long fchmod_(int fd) { return syscall(SYS_fchmod, fd, 0600); }
static int r_fchmod(void) { return on_ro(fchmod_); }
static int r_fchmodat(void) {
  return raw(syscall(SYS_fchmodat, AT_FDCWD, at("existing.txt"), 0600));
}
static int r_fchmodat2(void) {
  return raw(syscall(452, AT_FDCWD, at("existing.txt"), 0600, 0));
}
static int r_chown(void) {
  return raw(syscall(SYS_chown, at("existing.txt"), me(), my_group()));
}
static long fchown_(int fd) {
  return syscall(SYS_fchown, fd, me(), my_group());
}
static int r_fchown(void) { return on_ro(fchown_); }
static int r_lchown(void) {
  return raw(syscall(SYS_lchown, at("existing.txt"), me(), my_group()));
}
static int r_fchownat(void) {
  return raw(
      syscall(SYS_fchownat, AT_FDCWD, at("existing.txt"), me(), my_group(), 0));
}
static int r_utime(void) {
  return raw(syscall(SYS_utime, at("existing.txt"), NULL));
}
static int r_utimes(void) {
  return raw(syscall(SYS_utimes, at("existing.txt"), NULL));
}
static int r_utimensat(void) {
  return raw(syscall(SYS_utimensat, AT_FDCWD, at("existing.txt"), NULL, 0));
}
static int r_futimesat(void) {
  return raw(syscall(SYS_futimesat, AT_FDCWD, at("existing.txt"), NULL));
}
static int r_setxattr(void) {
  return raw(syscall(SYS_setxattr, at("existing.txt"), "user.mcp", "x", 1, 0));
}
static int r_lsetxattr(void) {
  return raw(syscall(SYS_lsetxattr, at("existing.txt"), "user.mcp", "x", 1, 0));
}
static long fsetxattr_(int fd) {
  return syscall(SYS_fsetxattr, fd, "user.mcp", "x", 1, 0);
}
static int r_fsetxattr(void) { return on_ro(fsetxattr_); }
static int r_setxattrat(void) {
  struct {
    uint64_t value;
    uint32_t size, flags;
  } args = {(uintptr_t) "x", 1, 0}; /* struct xattr_args */
  return raw(syscall(463, AT_FDCWD, at("existing.txt"), 0, "user.mcp", &args,
                     sizeof args));
}
static int r_removexattr(void) {
  return raw(syscall(SYS_removexattr, at("existing.txt"), "user.keep"));
}
static int r_lremovexattr(void) {
  return raw(syscall(SYS_lremovexattr, at("existing.txt"), "user.keep"));
}
static long fremovexattr_(int fd) {
  return syscall(SYS_fremovexattr, fd, "user.keep");
}
static int r_fremovexattr(void) { return on_ro(fremovexattr_); }
static int r_removexattrat(void) {
  return raw(syscall(466, AT_FDCWD, at("existing.txt"), 0, "user.keep"));
}
/* struct file_attr, FILE_ATTR_SIZE_VER0 (Linux 6.17). */
typedef struct {
  uint64_t xflags;
  uint32_t extsize, nextents, projid, cowextsize;
} file_attr;
static int r_file_getattr(void) {
  file_attr fa = {0};
  return raw(syscall(468, AT_FDCWD, at("existing.txt"), &fa, sizeof fa, 0));
}
static int r_file_setattr(void) {
  file_attr fa = {0};
  syscall(468, AT_FDCWD, at("existing.txt"), &fa, sizeof fa, 0);
  return raw(syscall(469, AT_FDCWD, at("existing.txt"), &fa, sizeof fa, 0));
}

/* ioctls on a file opened for reading: each setter is given what the
 * getter answered, so that the old guard, which let them through, changed
 * nothing either. */
static long setflags_(int fd) {
  long flags = 0;
  syscall(SYS_ioctl, fd, FS_IOC_GETFLAGS, &flags);
  return syscall(SYS_ioctl, fd, FS_IOC_SETFLAGS, &flags);
}
static int i_setflags(void) { return on_ro(setflags_); }
static long setflags32_(int fd) {
  int flags = 0;
  syscall(SYS_ioctl, fd, FS_IOC32_GETFLAGS, &flags);
  return syscall(SYS_ioctl, fd, FS_IOC32_SETFLAGS, &flags);
}
static int i_setflags32(void) { return on_ro(setflags32_); }
static long fssetxattr_(int fd) {
  struct fsxattr fa = {0};
  syscall(SYS_ioctl, fd, FS_IOC_FSGETXATTR, &fa);
  return syscall(SYS_ioctl, fd, FS_IOC_FSSETXATTR, &fa);
}
static int i_fssetxattr(void) { return on_ro(fssetxattr_); }
static long setversion_(int fd) {
  long v = 0;
  syscall(SYS_ioctl, fd, FS_IOC_GETVERSION, &v);
  return syscall(SYS_ioctl, fd, FS_IOC_SETVERSION, &v);
}
static int i_setversion(void) { return on_ro(setversion_); }
static long setversion32_(int fd) {
  int v = 0;
  syscall(SYS_ioctl, fd, FS_IOC32_GETVERSION, &v);
  return syscall(SYS_ioctl, fd, FS_IOC32_SETVERSION, &v);
}
static int i_setversion32(void) { return on_ro(setversion32_); }
static long setfslabel_(int fd) {
  char label[FSLABEL_MAX] = "";
  if (syscall(SYS_ioctl, fd, FS_IOC_GETFSLABEL, label) != 0)
    return -1; /* never set what was not read */
  return syscall(SYS_ioctl, fd, FS_IOC_SETFSLABEL, label);
}
static int i_setfslabel(void) { return on_ro(setfslabel_); }
static long set_policy_(int fd) {
  unsigned char policy[12] = {0}; /* fscrypt_policy_v1, modes invalid */
  return syscall(SYS_ioctl, fd, FS_IOC_SET_ENCRYPTION_POLICY, policy);
}
static int i_set_policy(void) { return on_ro(set_policy_); }
static long getflags_(int fd) {
  long flags = 0;
  return syscall(SYS_ioctl, fd, FS_IOC_GETFLAGS, &flags);
}
static int i_getflags(void) { return on_ro(getflags_); }
static long fsgetxattr_(int fd) {
  struct fsxattr fa = {0};
  return syscall(SYS_ioctl, fd, FS_IOC_FSGETXATTR, &fa);
}
static int i_fsgetxattr(void) { return on_ro(fsgetxattr_); }

/* What removes bytes from big.bin. */
static long punch_(int fd) {
  return syscall(SYS_fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 0L, 4096L);
}
static int f_punch(void) { return on_big(punch_); }
static long collapse_(int fd) {
  return syscall(SYS_fallocate, fd, FALLOC_FL_COLLAPSE_RANGE, 0L, 8192L);
}
static int f_collapse(void) { return on_big(collapse_); }
static long zero_(int fd) {
  return syscall(SYS_fallocate, fd, FALLOC_FL_ZERO_RANGE, 0L, 4096L);
}
static int f_zero(void) { return on_big(zero_); }
static long write_zeroes_(int fd) {
  return syscall(SYS_fallocate, fd, 0x80 /* WRITE_ZEROES, 6.17 */, 0L, 4096L);
}
static int f_write_zeroes(void) { return on_big(write_zeroes_); }
static long unknown_mode_(int fd) {
  return syscall(SYS_fallocate, fd, 0x4000 /* no mode yet */, 0L, 4096L);
}
static int f_unknown_mode(void) { return on_big(unknown_mode_); }
static long allocate_(int fd) {
  return syscall(SYS_fallocate, fd, 0, (long)BIG_SIZE, 4096L);
}
static int f_allocate(void) { return on_big(allocate_); }
static long madv_remove_(int fd) {
  void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    return -1;
  long rc = syscall(SYS_madvise, m, 4096L, MADV_REMOVE);
  int e = errno;
  munmap(m, 4096);
  errno = e;
  return rc;
}
static int f_madv_remove(void) { return on_big(madv_remove_); }
/* struct space_resv, of FS_IOC_UNRESVSP64 and FS_IOC_ZERO_RANGE. */
typedef struct {
  int16_t type, whence;
  int64_t start, len;
  int32_t sysid;
  uint32_t pid;
  int32_t pad[4];
} space_resv;
#define IOC_UNRESVSP64 _IOW('X', 43, space_resv)
#define IOC_ZERO_RANGE _IOW('X', 57, space_resv)
static long unresvsp_(int fd) {
  space_resv r = {.len = 4096};
  return syscall(SYS_ioctl, fd, IOC_UNRESVSP64, &r);
}
static int f_unresvsp(void) { return on_big(unresvsp_); }
static long zero_ioctl_(int fd) {
  space_resv r = {.len = 4096};
  return syscall(SYS_ioctl, fd, IOC_ZERO_RANGE, &r);
}
static int f_zero_ioctl(void) { return on_big(zero_ioctl_); }

/* Landlock's write rights, each call that needs one (read-only). */
/* Its own buffer: at() has one per thread, and a call names two paths. */
static const char *made_path(void) {
  static _Thread_local char path[128];
  snprintf(path, sizeof path, "%s/made", dir);
  return path;
}
#define EXISTING at("existing.txt")
#define NEW_NAME made_path()
static int w_openat(void) {
  long fd = syscall(SYS_openat, AT_FDCWD, EXISTING, O_WRONLY);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_openat_creat(void) {
  long fd = syscall(SYS_openat, AT_FDCWD, NEW_NAME, O_RDONLY | O_CREAT, 0600);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int openat2_with(const char *path, uint64_t flags) {
  struct {
    uint64_t flags, mode, resolve;
  } how = {flags, 0, 0}; /* struct open_how */
  long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_openat2(void) { return openat2_with(EXISTING, O_WRONLY); }
static int w_mknodat(void) {
  return raw(syscall(SYS_mknodat, AT_FDCWD, NEW_NAME, S_IFIFO | 0600, 0));
}
static int w_mkdirat(void) {
  return raw(syscall(SYS_mkdirat, AT_FDCWD, NEW_NAME, 0700));
}
static int w_unlinkat(void) {
  return raw(syscall(SYS_unlinkat, AT_FDCWD, EXISTING, 0));
}
static int w_rmdirat(void) {
  return raw(syscall(SYS_unlinkat, AT_FDCWD, at("empty"), AT_REMOVEDIR));
}
static int w_renameat(void) {
  return raw(syscall(SYS_renameat, AT_FDCWD, EXISTING, AT_FDCWD, NEW_NAME));
}
static int w_renameat2(void) {
  return raw(syscall(SYS_renameat2, AT_FDCWD, EXISTING, AT_FDCWD, NEW_NAME, 0));
}
static int w_linkat(void) {
  return raw(syscall(SYS_linkat, AT_FDCWD, EXISTING, AT_FDCWD, NEW_NAME, 0));
}
static int w_symlinkat(void) {
  return raw(syscall(SYS_symlinkat, "existing.txt", AT_FDCWD, NEW_NAME));
}
static int w_truncate(void) { return raw(syscall(SYS_truncate, EXISTING, 0L)); }
static int w_openat_trunc(void) {
  long fd = syscall(SYS_openat, AT_FDCWD, EXISTING, O_WRONLY | O_TRUNC);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_openat2_trunc(void) {
  return openat2_with(EXISTING, O_WRONLY | O_TRUNC);
}
static int w_ftruncate(void) {
  int fd = open(EXISTING, O_WRONLY);
  if (fd < 0)
    return errno;
  int rc = raw(syscall(SYS_ftruncate, fd, 0L));
  close(fd);
  return rc;
}
#ifdef SYS_open /* the calls before *at, on the architectures that have them   \
                 */
static int w_open(void) {
  long fd = syscall(SYS_open, EXISTING, O_WRONLY);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_open_trunc(void) {
  long fd = syscall(SYS_open, EXISTING, O_WRONLY | O_TRUNC);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_creat(void) {
  long fd = syscall(SYS_creat, NEW_NAME, 0600);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_creat_existing(void) {
  long fd = syscall(SYS_creat, EXISTING, 0600);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int w_mknod(void) {
  return raw(syscall(SYS_mknod, NEW_NAME, S_IFIFO | 0600, 0));
}
static int w_mkdir(void) { return raw(syscall(SYS_mkdir, NEW_NAME, 0700)); }
static int w_unlink(void) { return raw(syscall(SYS_unlink, EXISTING)); }
static int w_rmdir(void) { return raw(syscall(SYS_rmdir, at("empty"))); }
static int w_rename(void) {
  return raw(syscall(SYS_rename, EXISTING, NEW_NAME));
}
static int w_link(void) { return raw(syscall(SYS_link, EXISTING, NEW_NAME)); }
static int w_symlink(void) {
  return raw(syscall(SYS_symlink, "existing.txt", NEW_NAME));
}
#endif

/* Sockets of each family but unix, and io_uring (closed-world). */
static int sock(int family, int type, int protocol) {
  long fd = syscall(SYS_socket, family, type, protocol);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int n_tcp(void) { return sock(AF_INET, SOCK_STREAM, 0); }
static int n_tcp6(void) { return sock(AF_INET6, SOCK_STREAM, 0); }
static int n_udp(void) { return sock(AF_INET, SOCK_DGRAM, 0); }
static int n_udp6(void) { return sock(AF_INET6, SOCK_DGRAM, 0); }
static int n_sctp(void) { return sock(AF_INET, SOCK_STREAM, 132); }
static int n_raw(void) { return sock(AF_INET, SOCK_RAW, 1); }
static int n_packet(void) { return sock(AF_PACKET, SOCK_DGRAM, 0); }
static int n_netlink(void) { return sock(AF_NETLINK, SOCK_RAW, 0); }
static int n_unix(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static int n_socketpair_unix(void) {
  int sv[2];
  int rc = raw(syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv));
  if (rc == 0) {
    close(sv[0]);
    close(sv[1]);
  }
  return rc;
}
static int n_uring_setup(void) {
  unsigned char params[120] = {0}; /* struct io_uring_params */
  long fd = syscall(SYS_io_uring_setup, 1, params);
  if (fd >= 0)
    close((int)fd);
  return raw(fd);
}
static int n_uring_enter(void) {
  return raw(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
}
static int n_uring_register(void) {
  return raw(syscall(SYS_io_uring_register, -1, 0, NULL, 0));
}

/* With tcp_ports: what the port rules do not see, on a TCP socket. */
static int tcp_with(long (*fn)(int)) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return errno;
  int rc = raw(fn(fd));
  close(fd);
  return rc;
}
static struct sockaddr_in to_port(void) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}
static long sendto_fo_(int fd) {
  struct sockaddr_in a = to_port();
  return syscall(SYS_sendto, fd, "x", 1, MSG_FASTOPEN, &a, sizeof a);
}
static int t_sendto_fastopen(void) { return tcp_with(sendto_fo_); }
static long sendmsg_fo_(int fd) {
  struct sockaddr_in a = to_port();
  struct iovec v = {.iov_base = "x", .iov_len = 1};
  struct msghdr m = {
      .msg_name = &a, .msg_namelen = sizeof a, .msg_iov = &v, .msg_iovlen = 1};
  return syscall(SYS_sendmsg, fd, &m, MSG_FASTOPEN);
}
static int t_sendmsg_fastopen(void) { return tcp_with(sendmsg_fo_); }
static long sendmmsg_fo_(int fd) {
  struct sockaddr_in a = to_port();
  struct iovec v = {.iov_base = "x", .iov_len = 1};
  struct mmsghdr m = {.msg_hdr = {.msg_name = &a,
                                  .msg_namelen = sizeof a,
                                  .msg_iov = &v,
                                  .msg_iovlen = 1}};
  return syscall(SYS_sendmmsg, fd, &m, 1, MSG_FASTOPEN);
}
static int t_sendmmsg_fastopen(void) { return tcp_with(sendmmsg_fo_); }
static long listen_(int fd) { return syscall(SYS_listen, fd, 1); }
static int t_listen(void) { return tcp_with(listen_); }
static long connect_(int fd) {
  struct sockaddr_in a = to_port();
  return syscall(SYS_connect, fd, &a, sizeof a);
}
static int t_connect(void) { return tcp_with(connect_); }
static long bind_(int fd) {
  struct sockaddr_in a = to_port();
  a.sin_port = 0;
  return syscall(SYS_bind, fd, &a, sizeof a);
}
static int t_bind(void) { return tcp_with(bind_); }

/* Landlock's calls: the version query, a rule on a descriptor that is no
 * ruleset, a restriction by no descriptor. */
static int l_create(void) { return raw(syscall(444, NULL, 0, 1u)); }
static int l_add_rule(void) {
  struct {
    uint64_t allowed;
    int32_t parent_fd;
  } __attribute__((packed)) rule = {1, -1};
  return raw(syscall(445, 0, 1, &rule, 0));
}
/* An allow-everything filter for every thread of the process. */
static int l_tsync(void) {
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog prog = {.len = 1, .filter = allow};
  long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                    SECCOMP_FILTER_FLAG_TSYNC, &prog);
  return rc < 0 ? errno : rc > 0 ? ESRCH : 0; /* > 0: a thread's id */
}
/* Code in the kernel or hardware by hand, each with an argument that
 * fails harmlessly where the call is allowed. */
static int k_finit_module(void) {
  return raw(syscall(SYS_finit_module, -1, "", 0));
}
static int k_init_module(void) {
  return raw(syscall(SYS_init_module, NULL, 0L, ""));
}
static int k_kexec_load(void) {
  return raw(syscall(SYS_kexec_load, 0L, 0L, NULL, ~0UL));
}
static int k_bpf(void) { return raw(syscall(SYS_bpf, -1, NULL, 0)); }
#ifdef SYS_iopl
static int k_iopl(void) { return raw(syscall(SYS_iopl, 0)); }
#endif
static int l_restrict(void) { return raw(syscall(446, -1, 0)); }

/* Every number above the newest call the guard knows, up to 2048: 0 when
 * each answers ENOSYS, else the first that does not. */
static int s_above(void) {
  for (long nr = 470; nr < 2048; nr++)
    if (syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L) != -1 || errno != ENOSYS)
      return (int)nr;
  return 0;
}
#ifdef __x86_64__
/* getpid by x32's number (the x32 bit and 39). */
static int s_x32(void) { return raw(syscall(0x40000000L | 39)); }
#endif

/* A device's ioctls, on /dev/null opened for reading: SG_IO (which writes
 * a SCSI disk for root) and TIOCSTI (which types into a terminal). The
 * driver answers ENOTTY; a guard that refuses them, EACCES. */
static long dev_ioctl_(unsigned long request) {
  int fd = open("/dev/null", O_RDONLY);
  if (fd < 0)
    return -1;
  char arg[256] = {0};
  long rc = syscall(SYS_ioctl, fd, request, arg);
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}
static int d_sg_io(void) { return raw(dev_ioctl_(0x2285 /* SG_IO */)); }
static int d_tiocsti(void) { return raw(dev_ioctl_(TIOCSTI)); }

static void *create_from_thread(void *arg) {
  *(int *)arg = op_create();
  return NULL;
}
static int op_thread_create(void) {
  pthread_t t;
  int rc = -1;
  if (pthread_create(&t, NULL, create_from_thread, &rc) != 0)
    return -1;
  pthread_join(t, NULL);
  return rc;
}

static const struct op {
  const char *name;
  int (*fn)(void);
} ops[] = {
    {"create", op_create},
    {"sequence", op_sequence},
    {"many", op_many},
    {"pair", op_pair},
    {"write_open", op_write_open},
    {"unlink", op_unlink},
    {"rename", op_rename},
    {"mkdir", op_mkdir},
    {"symlink", op_symlink},
    {"link", op_link},
    {"truncate", op_truncate},
    {"open_trunc", op_open_trunc},
    {"create_in_w", op_create_in_w},
    {"unlink_in_w", op_unlink_in_w},
    {"connect", op_connect},
    {"connect_allowed", op_connect_allowed},
    {"bind", op_bind},
    {"udp", op_udp},
    {"packet", op_packet},
    {"unix", op_unix},
    {"uring", op_uring},
    {"thread_create", op_thread_create},
    {"fastopen", op_fastopen},
    {"listen", op_listen},
    {"mknod_in_w", op_mknod_in_w},
    {"chmod", op_chmod},
    {"chown", op_chown},
    {"utime", op_utime},
    {"setxattr", op_setxattr},
    {"move_in_w", op_move_in_w},
    {"handle_trunc", op_handle_trunc},
    {"r_chmod", r_chmod},
    {"r_fchmod", r_fchmod},
    {"r_fchmodat", r_fchmodat},
    {"r_fchmodat2", r_fchmodat2},
    {"r_chown", r_chown},
    {"r_fchown", r_fchown},
    {"r_lchown", r_lchown},
    {"r_fchownat", r_fchownat},
    {"r_utime", r_utime},
    {"r_utimes", r_utimes},
    {"r_utimensat", r_utimensat},
    {"r_futimesat", r_futimesat},
    {"r_setxattr", r_setxattr},
    {"r_lsetxattr", r_lsetxattr},
    {"r_fsetxattr", r_fsetxattr},
    {"r_setxattrat", r_setxattrat},
    {"r_removexattr", r_removexattr},
    {"r_lremovexattr", r_lremovexattr},
    {"r_fremovexattr", r_fremovexattr},
    {"r_removexattrat", r_removexattrat},
    {"r_file_setattr", r_file_setattr},
    {"r_file_getattr", r_file_getattr},
    {"i_setflags", i_setflags},
    {"i_setflags32", i_setflags32},
    {"i_fssetxattr", i_fssetxattr},
    {"i_setversion", i_setversion},
    {"i_setversion32", i_setversion32},
    {"i_setfslabel", i_setfslabel},
    {"i_set_policy", i_set_policy},
    {"i_getflags", i_getflags},
    {"i_fsgetxattr", i_fsgetxattr},
    {"f_punch", f_punch},
    {"f_collapse", f_collapse},
    {"f_zero", f_zero},
    {"f_write_zeroes", f_write_zeroes},
    {"f_unknown_mode", f_unknown_mode},
    {"f_allocate", f_allocate},
    {"f_madv_remove", f_madv_remove},
    {"f_unresvsp", f_unresvsp},
    {"f_zero_ioctl", f_zero_ioctl},
    {"w_openat", w_openat},
    {"w_openat_creat", w_openat_creat},
    {"w_openat2", w_openat2},
    {"w_mknodat", w_mknodat},
    {"w_mkdirat", w_mkdirat},
    {"w_unlinkat", w_unlinkat},
    {"w_rmdirat", w_rmdirat},
    {"w_renameat", w_renameat},
    {"w_renameat2", w_renameat2},
    {"w_linkat", w_linkat},
    {"w_symlinkat", w_symlinkat},
    {"w_truncate", w_truncate},
    {"w_openat_trunc", w_openat_trunc},
    {"w_openat2_trunc", w_openat2_trunc},
    {"w_ftruncate", w_ftruncate},
#ifdef SYS_open
    {"w_open", w_open},
    {"w_open_trunc", w_open_trunc},
    {"w_creat", w_creat},
    {"w_creat_existing", w_creat_existing},
    {"w_mknod", w_mknod},
    {"w_mkdir", w_mkdir},
    {"w_unlink", w_unlink},
    {"w_rmdir", w_rmdir},
    {"w_rename", w_rename},
    {"w_link", w_link},
    {"w_symlink", w_symlink},
#endif
    {"n_tcp", n_tcp},
    {"n_tcp6", n_tcp6},
    {"n_udp", n_udp},
    {"n_udp6", n_udp6},
    {"n_sctp", n_sctp},
    {"n_raw", n_raw},
    {"n_packet", n_packet},
    {"n_netlink", n_netlink},
    {"n_unix", n_unix},
    {"n_socketpair_unix", n_socketpair_unix},
    {"n_uring_setup", n_uring_setup},
    {"n_uring_enter", n_uring_enter},
    {"n_uring_register", n_uring_register},
    {"t_sendto_fastopen", t_sendto_fastopen},
    {"t_sendmsg_fastopen", t_sendmsg_fastopen},
    {"t_sendmmsg_fastopen", t_sendmmsg_fastopen},
    {"t_listen", t_listen},
    {"t_connect", t_connect},
    {"t_bind", t_bind},
    {"d_sg_io", d_sg_io},
    {"d_tiocsti", d_tiocsti},
    {"l_create", l_create},
    {"l_add_rule", l_add_rule},
    {"l_restrict", l_restrict},
    {"l_tsync", l_tsync},
    {"k_finit_module", k_finit_module},
    {"k_init_module", k_init_module},
    {"k_kexec_load", k_kexec_load},
    {"k_bpf", k_bpf},
#ifdef SYS_iopl
    {"k_iopl", k_iopl},
#endif
    {"s_above", s_above},
#ifdef __x86_64__
    {"s_x32", s_x32},
#endif
};

/* Runs the op named by argument "op"; the text result is its errno (0 when
 * it succeeded). */
static int h_try(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *name = NULL;
  if (mcp_call_arg_string(call, "op", &name) != 0)
    return MCP_EINVAL;
  for (size_t i = 0; i < TU_COUNT(ops); i++)
    if (strcmp(ops[i].name, name) == 0) {
      char text[16];
      snprintf(text, sizeof text, "%d", ops[i].fn());
      return mcp_result_text(call, text);
    }
  return MCP_EINVAL;
}

#define OP_SCHEMA                                                              \
  "{\"type\":\"object\",\"properties\":{\"op\":{\"type\":\"string\"}},"        \
  "\"required\":[\"op\"]}"
#define TRY_TOOL(tool_name, ...)                                               \
  {                                                                            \
    .name = tool_name, .description = "Tries an operation.",                   \
    .input_schema = OP_SCHEMA, .annotations = {__VA_ARGS__}, .handler = h_try  \
  }

static const mcp_tool tools[] = {
    TRY_TOOL("ro_closed", .read_only = MCP_HINT_TRUE,
             .open_world = MCP_HINT_FALSE),
    TRY_TOOL("ro_open", .read_only = MCP_HINT_TRUE,
             .open_world = MCP_HINT_TRUE),
    TRY_TOOL("additive", .read_only = MCP_HINT_FALSE,
             .destructive = MCP_HINT_FALSE, .idempotent = MCP_HINT_FALSE,
             .open_world = MCP_HINT_TRUE),
    TRY_TOOL("closed", .read_only = MCP_HINT_FALSE,
             .destructive = MCP_HINT_TRUE, .idempotent = MCP_HINT_FALSE,
             .open_world = MCP_HINT_FALSE),
    TRY_TOOL("anything", .read_only = MCP_HINT_FALSE,
             .destructive = MCP_HINT_TRUE, .idempotent = MCP_HINT_FALSE,
             .open_world = MCP_HINT_TRUE),
};

/* ---- fixture ------------------------------------------------------------- */

static char audit_where[64];
static char audit_effects[8][320]; /* the last record's first effects */
static int audit_neffects;
static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static void on_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&audit_lock);
  snprintf(audit_where, sizeof audit_where, "%s",
           r->ran_under ? r->ran_under : "(null)");
  audit_neffects = 0;
  for (int i = 0; r->effects[i]; i++, audit_neffects++)
    if (i < 8)
      snprintf(audit_effects[i], sizeof audit_effects[i], "%s", r->effects[i]);
  pthread_mutex_unlock(&audit_lock);
}

/* The last audit record's effect i (a copy), "" past its end; n: how
 * many it had. */
static void audit_effect(int i, char *out, size_t size, int *n) {
  pthread_mutex_lock(&audit_lock);
  snprintf(out, size, "%s",
           i < audit_neffects && i < 8 ? audit_effects[i] : "");
  *n = audit_neffects;
  pthread_mutex_unlock(&audit_lock);
}

/* Checks where the last audited call ran (the copy is taken under the
 * lock; a failed check must not leave it held). */
static void assert_ran_under(const char *expected) {
  char where[64];
  pthread_mutex_lock(&audit_lock);
  snprintf(where, sizeof where, "%s", audit_where);
  pthread_mutex_unlock(&audit_lock);
  ck_assert_str_eq(where, expected);
}

static char log_text[1024];
static int guard_lines; /* lines the guard logged about itself */
/* Lines about effects, and the sum of their "... n more" counts. */
static _Atomic int effect_lines, more_lines;
static void keep_log(mcp_log_level level, const char *message,
                     void *user_data) {
  (void)user_data;
  (void)level;
  const char *more = strstr(message, "... ");
  if (strncmp(message, "guard: tool ", 12) == 0) {
    if (more)
      more_lines += atoi(more + 4);
    else
      effect_lines++;
  } else if (strncmp(message, "guard", 5) == 0) {
    snprintf(log_text, sizeof log_text, "%s", message);
    guard_lines++;
  }
}

static void put_file(const char *name, const char *text) {
  FILE *f = fopen(at(name), "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static int listen_on(unsigned short *out) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  ck_assert_int_eq(listen(fd, 8), 0);
  socklen_t len = sizeof a;
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *out = ntohs(a.sin_port);
  return fd;
}

/* Whether the listener has a connection waiting (taken, if so). */
static bool connection_came(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, 50) != 1)
    return false;
  int c = accept(fd, NULL, NULL);
  if (c >= 0)
    close(c);
  return c >= 0;
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/mcp-guard-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  put_file("existing.txt", "keep");
  ck_assert_int_eq(setxattr(at("existing.txt"), "user.keep", "k", 1, 0), 0);
  ck_assert_int_eq(mkdir(at("empty"), 0700), 0);
  char big[BIG_SIZE];
  memset(big, 'b', sizeof big);
  FILE *f = fopen(at("big.bin"), "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(big, 1, sizeof big, f), sizeof big);
  fclose(f);
  ck_assert_int_eq(mkdir(at("w"), 0700), 0);
  ck_assert_int_eq(mkdir(at("w/sub"), 0700), 0);
  put_file("w/f.txt", "scratch");
  put_file("w/g.txt", "moved");
  listener = listen_on(&port);
  listener2 = listen_on(&port2);
  mcp_server_info info = {.name = "guarded", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, keep_log, NULL);
  mcp_server_set_audit(srv, on_audit, NULL);
  for (size_t i = 0; i < TU_COUNT(tools); i++)
    ck_assert_int_eq(mcp_server_add_tool(srv, &tools[i], NULL), 0);
  tu_peer_open(&P, srv, NULL);
  tu_initialize(&P, "2025-11-25");
  log_text[0] = '\0';
  guard_lines = 0;
}

static void remove_tree(const char *path) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
  close(listener);
  close(listener2);
  remove_tree(dir);
}

/* The kernel this suite needs: Landlock with the network rules. */
static void need_abi(int abi) {
  int have = mcp_guard_landlock_abi();
  ck_assert_msg(have >= abi,
                "this test needs Landlock ABI %d (TCP rules came in 4, kernel "
                "6.7); this kernel answers %d",
                abi, have);
}

/* ---- what the guard reports -------------------------------------------- */

#define MAX_REPORTS 64

typedef struct report {
  char tool[64], id[32], hint[32], op[32], target[256], target2[256];
  char call[32];
  mcp_guard_verdict verdict;
  mcp_guard_attribution attribution;
} report;

static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;
static report reports[MAX_REPORTS];
static int nreports;

static void keep_report(const mcp_guard_effect *e, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&reports_lock);
  if (nreports < MAX_REPORTS) {
    report *r = &reports[nreports++];
    snprintf(r->tool, sizeof r->tool, "%s", e->tool ? e->tool : "");
    snprintf(r->id, sizeof r->id, "%s", e->request_id ? e->request_id : "");
    snprintf(r->hint, sizeof r->hint, "%s", e->hint);
    snprintf(r->op, sizeof r->op, "%s", e->operation);
    snprintf(r->target, sizeof r->target, "%s", e->target);
    snprintf(r->target2, sizeof r->target2, "%s", e->target2);
    snprintf(r->call, sizeof r->call, "%s", e->syscall);
    r->verdict = e->verdict;
    r->attribution = e->attribution;
  }
  pthread_mutex_unlock(&reports_lock);
}

static void clear_reports(void) {
  pthread_mutex_lock(&reports_lock);
  nreports = 0;
  pthread_mutex_unlock(&reports_lock);
}

static int last_id = 10; /* the request id of try_op's last call */

/* The hint a refusal of op by tool breaks. */
static const char *hint_of(const char *tool, const char *op) {
  if (strncmp(op, "n_", 2) == 0 || strncmp(op, "t_", 2) == 0 ||
      strcmp(tool, "closed") == 0)
    return "openWorldHint";
  return strncmp(tool, "ro", 2) == 0 ? "readOnlyHint" : "destructiveHint";
}

/* Asserts that try_op(tool, op)'s call was reported refused, with its
 * tool, request id, hint and a target; returns the report. */
static report assert_reported(const char *tool, const char *op) {
  char id[16];
  snprintf(id, sizeof id, "%d", last_id);
  pthread_mutex_lock(&reports_lock);
  int n = nreports;
  report r = n ? reports[0] : (report){0};
  pthread_mutex_unlock(&reports_lock);
  ck_assert_msg(n >= 1, "%s: %s was refused but not reported", tool, op);
  ck_assert_msg(strcmp(r.tool, tool) == 0 && strcmp(r.id, id) == 0,
                "%s: %s reported as tool %s request %s", tool, op, r.tool,
                r.id);
  ck_assert_msg(strcmp(r.hint, hint_of(tool, op)) == 0,
                "%s: %s reported breaking %s", tool, op, r.hint);
  ck_assert_msg(r.verdict == MCP_GUARD_REFUSED, "%s: %s verdict %d", tool, op,
                r.verdict);
  ck_assert_int_eq(r.attribution, MCP_GUARD_BY_THREAD);
  ck_assert_msg(r.target[0] && strcmp(r.target, "(unreadable)") != 0,
                "%s: %s: no target", tool, op);
  /* The call's audit record has it too. */
  char line[320];
  int na;
  audit_effect(0, line, sizeof line, &na);
  ck_assert_msg(na >= 1 && strncmp(line, r.op, strlen(r.op)) == 0 &&
                    strstr(line, r.hint) && strstr(line, "refused"),
                "%s: %s: audit record has %d effects, the first \"%s\"", tool,
                op, na, line);
  return r;
}

/* With the report hook of this file unless o names one. */
static void enable(const mcp_guard_options *o) {
  mcp_guard_options with = o ? *o : (mcp_guard_options){0};
  if (with.report == NULL && !(with.flags & MCP_GUARD_QUIET))
    with.report = keep_report;
  clear_reports();
  int rc = mcp_guard_enable(srv, &with);
  ck_assert_msg(rc == 0, "mcp_guard_enable: %s: %s", mcp_strerror(rc),
                mcp_server_errmsg(srv));
}

/* Calls tool with op; returns the errno the handler saw. */
static int try_op(const char *tool, const char *op) {
  char *args = tu_text("{\"op\":\"%s\"}", op);
  char ids[16];
  snprintf(ids, sizeof ids, "%d", ++last_id);
  clear_reports();
  char *msg = tu_call_text(ids, tool, args, NULL);
  free(args);
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  cJSON *r = tu_msg(&P, 0);
  const char *text = tu_jstr(r, "result.content.0.text");
  ck_assert_msg(text != NULL, "%s %s: %s", tool, op, P.out[0]);
  int e = atoi(text);
  cJSON_Delete(r);
  return e;
}

#define REFUSED(tool, op)                                                      \
  do {                                                                         \
    int e_ = try_op(tool, op);                                                 \
    ck_assert_msg(e_ == EACCES || e_ == EPERM,                                 \
                  "%s: %s gave %d (%s), not EACCES or EPERM", tool, op, e_,    \
                  strerror(e_));                                               \
  } while (0)
#define ALLOWED(tool, op)                                                      \
  do {                                                                         \
    int e_ = try_op(tool, op);                                                 \
    ck_assert_msg(e_ == 0, "%s: %s gave %d (%s)", tool, op, e_, strerror(e_)); \
  } while (0)

#define REFUSED_WITH(tool, op, err)                                            \
  do {                                                                         \
    int e_ = try_op(tool, op);                                                 \
    ck_assert_msg(e_ == (err), "%s: %s gave %d (%s), not %d (%s)", tool, op,   \
                  e_, strerror(e_), (err), strerror(err));                     \
    if ((err) == EACCES && strncmp(op, "d_", 2) != 0)                          \
      assert_reported(tool, op);                                               \
  } while (0)

static bool exists(const char *name) {
  struct stat st;
  return stat(at(name), &st) == 0;
}

static void assert_existing_unchanged(void) {
  char buf[32] = "";
  FILE *f = fopen(at("existing.txt"), "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  fclose(f);
  ck_assert_str_eq(buf, "keep");
}

/* ---- tests --------------------------------------------------------------- */

static const char *const writes[] = {
    "create",  "write_open", "unlink",   "rename",     "mkdir",
    "symlink", "link",       "truncate", "open_trunc", "create_in_w"};

START_TEST(read_only_cannot_write_and_the_disk_is_unchanged) {
  need_abi(4);
  enable(NULL);
  for (size_t i = 0; i < TU_COUNT(writes); i++)
    REFUSED("ro_closed", writes[i]);
  REFUSED("ro_open", "create");
  REFUSED("ro_open", "truncate");
  /* What Landlock leaves of a file it may read: refused by seccomp. */
  static const char *const metadata[] = {"chmod", "chown", "utime", "setxattr"};
  for (size_t i = 0; i < TU_COUNT(metadata); i++)
    REFUSED("ro_closed", metadata[i]);
  struct stat st;
  ck_assert_int_eq(stat(at("existing.txt"), &st), 0);
  ck_assert_uint_ne(st.st_mode & 0777, 0);
  ck_assert_uint_eq(st.st_uid, 0u + getuid());
  ck_assert_int_gt(st.st_mtime, 0);
  assert_existing_unchanged();
  static const char *const made[] = {"new.txt", "renamed.txt", "newdir",
                                     "sym",     "hard",        "w/new.txt"};
  for (size_t i = 0; i < TU_COUNT(made); i++)
    ck_assert_msg(!exists(made[i]), "%s was made", made[i]);
  /* Reading stays allowed. */
  ck_assert_int_eq(try_op("ro_closed", "unix"), 0);
  assert_ran_under("guard: read-only, closed-world");
  ck_assert_int_eq(try_op("ro_open", "unix"), 0);
  assert_ran_under("guard: read-only");
}
END_TEST

START_TEST(closed_world_cannot_reach_out) {
  need_abi(4);
  enable(NULL);
  REFUSED("ro_closed", "connect");
  ck_assert_msg(!connection_came(listener), "the listener saw a connection");
  REFUSED("closed", "connect");
  ck_assert(!connection_came(listener));
  REFUSED("closed", "bind");
  REFUSED("closed", "fastopen");
  ck_assert(!connection_came(listener));
  REFUSED("closed", "listen");
  REFUSED("closed", "udp");
  REFUSED("closed", "packet");
  REFUSED("closed", "uring");
  ALLOWED("closed", "unix");
  /* Closed-world but destructive: the disk is open to it. */
  ALLOWED("closed", "create");
  ALLOWED("closed", "unlink");
  assert_ran_under("guard: closed-world");
  /* An open-world read-only tool may connect. */
  ALLOWED("ro_open", "connect");
  ck_assert(connection_came(listener));
}
END_TEST

START_TEST(additive_creates_but_never_removes_or_truncates) {
  need_abi(4);
  enable(NULL);
  ALLOWED("additive", "create");
  ck_assert(exists("new.txt"));
  ALLOWED("additive", "mkdir");
  ALLOWED("additive", "write_open");
  REFUSED("additive", "unlink");
  REFUSED("additive", "rename");
  REFUSED("additive", "truncate");
  REFUSED("additive", "open_trunc");
  ck_assert(exists("existing.txt"));
  ck_assert(!exists("renamed.txt"));
  ALLOWED("additive", "connect"); /* open-world */
  ck_assert(connection_came(listener));
}
END_TEST

START_TEST(threads_a_handler_starts_are_guarded_too) {
  need_abi(4);
  enable(NULL);
  REFUSED("ro_closed", "thread_create");
  ck_assert(!exists("new.txt"));
  ALLOWED("anything", "thread_create");
  ck_assert(exists("new.txt"));
}
END_TEST

START_TEST(destructive_open_world_may_do_anything) {
  need_abi(4);
  enable(NULL);
  static const char *const all[] = {"create", "write_open", "symlink", "link",
                                    "mkdir",  "truncate",   "rename",  "udp",
                                    "bind",   "unix",       "connect"};
  for (size_t i = 0; i < TU_COUNT(all); i++)
    ALLOWED("anything", all[i]);
  ck_assert(connection_came(listener));
  ck_assert(exists("renamed.txt"));
  assert_ran_under("guard: unguarded");
}
END_TEST

START_TEST(without_the_guard_nothing_changes) {
  ALLOWED("ro_closed", "create");
  ALLOWED("ro_closed", "unlink");
  ALLOWED("ro_closed", "udp");
  ALLOWED("ro_closed", "connect");
  ck_assert(connection_came(listener));
  assert_ran_under("(null)");
}
END_TEST

START_TEST(writable_paths_and_tcp_ports_open_exactly_what_they_name) {
  need_abi(4);
  char w[96];
  snprintf(w, sizeof w, "%s/w", dir);
  const char *paths[] = {w, NULL};
  unsigned short ports[] = {port2, 0};
  mcp_guard_options o = {.writable_paths = paths, .tcp_ports = ports};
  enable(&o);
  ALLOWED("ro_closed", "create_in_w");
  ALLOWED("ro_closed", "unlink_in_w");
  REFUSED("ro_closed", "create");
  REFUSED("additive", "unlink");
  ALLOWED("ro_closed", "connect_allowed");
  ck_assert(connection_came(listener2));
  REFUSED("ro_closed", "connect");
  ck_assert(!connection_came(listener));
  REFUSED("ro_closed", "udp");
  /* TCP to tcp_ports only: MSG_FASTOPEN elsewhere and listening are not
   * seen by the port rules, so they are refused. */
  REFUSED("ro_closed", "fastopen");
  ck_assert(!connection_came(listener));
  REFUSED("ro_closed", "listen");
  /* A device node is never given back under a writable path. */
  REFUSED("ro_closed", "mknod_in_w");
  ck_assert(!exists("w/null"));
  /* Moving between folders inside the writable path: both rule sets. */
  ALLOWED("additive", "move_in_w");
  ck_assert(exists("w/sub/g.txt"));
}
END_TEST

/* A writable file (not a folder): written, never removed. */
START_TEST(a_writable_file_is_written_not_removed) {
  need_abi(4);
  char f[96];
  snprintf(f, sizeof f, "%s/existing.txt", dir);
  const char *paths[] = {f, NULL};
  mcp_guard_options o = {.writable_paths = paths};
  enable(&o);
  ALLOWED("ro_closed", "write_open");
  ALLOWED("ro_closed", "open_trunc");
  REFUSED("ro_closed", "unlink");
  REFUSED("ro_closed", "create");
  REFUSED("additive", "unlink");
  ck_assert(exists("existing.txt"));
}
END_TEST

/* ---- each rule, every member of its class, by raw system call ------------ */

static const char *const metadata_calls[] = {
    "r_chmod",       "r_fchmod",       "r_fchmodat",     "r_fchmodat2",
    "r_chown",       "r_fchown",       "r_lchown",       "r_fchownat",
    "r_utime",       "r_utimes",       "r_utimensat",    "r_futimesat",
    "r_setxattr",    "r_lsetxattr",    "r_fsetxattr",    "r_setxattrat",
    "r_removexattr", "r_lremovexattr", "r_fremovexattr", "r_removexattrat",
    "r_file_setattr"};
static const char *const inode_ioctls[] = {
    "i_setflags",     "i_setflags32", "i_fssetxattr", "i_setversion",
    "i_setversion32", "i_setfslabel", "i_set_policy"};
static const char *const inode_reads[] = {"i_getflags", "i_fsgetxattr"};
static const char *const shrinking_calls[] = {
    "f_punch",        "f_collapse",    "f_zero",     "f_write_zeroes",
    "f_unknown_mode", "f_madv_remove", "f_unresvsp", "f_zero_ioctl"};
static const char *const landlock_calls[] = {"l_create", "l_add_rule",
                                             "l_restrict"};
static const char *const guarded_tools[] = {"ro_closed", "ro_open", "additive",
                                            "closed"};

/* big.bin still holds its 12 KiB of 'b' (allocating may have added). */
static void assert_big_intact(void) {
  char buf[BIG_SIZE];
  FILE *f = fopen(at("big.bin"), "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ck_assert_uint_eq(n, sizeof buf);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(buf[i] == 'b', "big.bin lost byte %zu", i);
}

static void assert_metadata_unchanged(const struct stat *before) {
  struct stat st;
  ck_assert_int_eq(stat(at("existing.txt"), &st), 0);
  ck_assert_uint_eq(st.st_mode, before->st_mode);
  ck_assert_int_eq(st.st_mtim.tv_sec, before->st_mtim.tv_sec);
  ck_assert_int_eq(st.st_mtim.tv_nsec, before->st_mtim.tv_nsec);
  char v[8];
  ck_assert_int_eq(getxattr(at("existing.txt"), "user.keep", v, sizeof v), 1);
  ck_assert_int_lt(getxattr(at("existing.txt"), "user.mcp", v, sizeof v), 0);
}

/* op as the unguarded tool sees it: 0 when this kernel has what it needs. */
static bool kernel_has(const char *op, const char *what) {
  int e = try_op("anything", op);
  if (e != 0)
    fprintf(stderr, "test_guard: skipped %s: this kernel has no %s (%s)\n", op,
            what, strerror(e));
  return e == 0;
}

/* Each test below runs twice: on this kernel as it is (_i 0), and as on
 * one with Landlock ABI 2 (_i 1), where seccomp keeps more of the rules. */
static void enable_as(int i) {
  need_abi(4);
  mcp_guard_options o = {.landlock_abi_max = i ? 2 : 0};
  enable(&o);
}

static const char *const write_calls[] = {
    "w_openat",       "w_openat_creat",  "w_openat2",   "w_mknodat",
    "w_mkdirat",      "w_unlinkat",      "w_rmdirat",   "w_renameat",
    "w_renameat2",    "w_linkat",        "w_symlinkat", "w_truncate",
    "w_openat_trunc", "w_openat2_trunc",
#ifdef SYS_open
    "w_open",         "w_open_trunc",    "w_creat",     "w_mknod",
    "w_mkdir",        "w_unlink",        "w_rmdir",     "w_rename",
    "w_link",         "w_symlink",
#endif
};
static const char *const remove_calls[] = {
    "w_unlinkat", "w_rmdirat", "w_renameat", "w_renameat2",
#ifdef SYS_open
    "w_unlink",   "w_rmdir",   "w_rename",
#endif
};
static const char *const truncate_calls[] = {
    "w_truncate",   "w_openat_trunc",   "w_openat2_trunc", "w_ftruncate",
#ifdef SYS_open
    "w_open_trunc", "w_creat_existing",
#endif
};
static const char *const socket_calls[] = {"n_tcp",    "n_tcp6",   "n_udp",
                                           "n_udp6",   "n_sctp",   "n_raw",
                                           "n_packet", "n_netlink"};
static const char *const uring_calls[] = {"n_uring_setup", "n_uring_enter",
                                          "n_uring_register"};
static const char *const port_bypasses[] = {"t_sendto_fastopen",
                                            "t_sendmsg_fastopen",
                                            "t_sendmmsg_fastopen", "t_listen"};

/* Refused, by Landlock or seccomp: openat2, whose flags seccomp cannot
 * read, answers ENOSYS where seccomp keeps the truncation rule. */
#define REFUSED_RAW(tool, op)                                                  \
  do {                                                                         \
    int e_ = try_op(tool, op);                                                 \
    ck_assert_msg(e_ == EACCES || e_ == EPERM ||                               \
                      (e_ == ENOSYS && strstr(op, "openat2")),                 \
                  "%s: %s gave %d (%s)", tool, op, e_, strerror(e_));          \
    if (e_ != EPERM)                                                           \
      assert_reported(tool, op);                                               \
  } while (0)

START_TEST(read_only_writes_nothing_by_any_call) {
  enable_as(_i);
  for (size_t i = 0; i < TU_COUNT(write_calls); i++) {
    REFUSED_RAW("ro_closed", write_calls[i]);
    REFUSED_RAW("ro_open", write_calls[i]);
  }
  assert_existing_unchanged();
  ck_assert(!exists("made"));
  ck_assert(exists("empty"));
  ALLOWED("anything", "w_mkdirat"); /* the calls themselves work here */
  ck_assert(exists("made"));
}
END_TEST

START_TEST(additive_removes_and_truncates_nothing_by_any_call) {
  enable_as(_i);
  for (size_t i = 0; i < TU_COUNT(remove_calls); i++)
    REFUSED_RAW("additive", remove_calls[i]);
  for (size_t i = 0; i < TU_COUNT(truncate_calls); i++)
    REFUSED_RAW("additive", truncate_calls[i]);
  assert_existing_unchanged();
  ck_assert(exists("empty"));
  ALLOWED("additive", "w_openat_creat"); /* creating stays allowed */
  ALLOWED("additive", "w_openat");
}
END_TEST

START_TEST(closed_world_opens_no_socket_but_unix_by_any_call) {
  enable_as(_i);
  static const char *const closed_tools[] = {"ro_closed", "closed"};
  for (size_t t = 0; t < TU_COUNT(closed_tools); t++) {
    for (size_t i = 0; i < TU_COUNT(socket_calls); i++)
      REFUSED_RAW(closed_tools[t], socket_calls[i]);
    ALLOWED(closed_tools[t], "n_unix");
    ALLOWED(closed_tools[t], "n_socketpair_unix");
  }
  for (size_t t = 0; t < TU_COUNT(guarded_tools); t++)
    for (size_t i = 0; i < TU_COUNT(uring_calls); i++)
      REFUSED_WITH(guarded_tools[t], uring_calls[i], EPERM);
  ALLOWED("ro_open", "n_udp");
}
END_TEST

START_TEST(tcp_ports_open_nothing_the_port_rules_do_not_see) {
  need_abi(4);
  unsigned short ports[] = {port2, 0};
  mcp_guard_options o = {.tcp_ports = ports};
  enable(&o);
  for (size_t i = 0; i < TU_COUNT(port_bypasses); i++)
    REFUSED_RAW("ro_closed", port_bypasses[i]);
  REFUSED_RAW("ro_closed", "t_connect");
  REFUSED_RAW("ro_closed", "t_bind");
  ck_assert(!connection_came(listener));
  ALLOWED("ro_closed", "n_tcp");
  REFUSED_RAW("ro_closed", "n_udp");
}
END_TEST

START_TEST(read_only_changes_no_metadata_by_any_call) {
  enable_as(_i);
  struct stat before;
  ck_assert_int_eq(stat(at("existing.txt"), &before), 0);
  for (size_t i = 0; i < TU_COUNT(metadata_calls); i++) {
    REFUSED_WITH("ro_closed", metadata_calls[i], EACCES);
    REFUSED_WITH("ro_open", metadata_calls[i], EACCES);
  }
  assert_metadata_unchanged(&before);
  ALLOWED("ro_closed", "r_file_getattr"); /* known to the filter, a read */
}
END_TEST

START_TEST(read_only_sets_no_inode_attribute_by_ioctl) {
  enable_as(_i);
  struct stat before;
  ck_assert_int_eq(stat(at("existing.txt"), &before), 0);
  for (size_t i = 0; i < TU_COUNT(inode_ioctls); i++)
    REFUSED_WITH("ro_closed", inode_ioctls[i], EACCES);
  assert_metadata_unchanged(&before);
  for (size_t i = 0; i < TU_COUNT(inode_reads); i++) {
    int e = try_op("ro_closed", inode_reads[i]);
    ck_assert_msg(e != EACCES && e != EPERM && e != ENOSYS, "%s gave %s",
                  inode_reads[i], strerror(e));
  }
}
END_TEST

START_TEST(additive_removes_no_byte_by_any_call) {
  enable_as(_i);
  for (size_t i = 0; i < TU_COUNT(shrinking_calls); i++)
    REFUSED_WITH("additive", shrinking_calls[i], EACCES);
  assert_big_intact();
  ALLOWED("additive", "f_allocate"); /* adding stays allowed */
  assert_big_intact();
}
END_TEST

START_TEST(no_guarded_thread_makes_widens_or_applies_a_ruleset) {
  enable_as(_i);
  for (size_t t = 0; t < TU_COUNT(guarded_tools); t++)
    for (size_t i = 0; i < TU_COUNT(landlock_calls); i++)
      REFUSED_WITH(guarded_tools[t], landlock_calls[i], EPERM);
  for (size_t t = 0; t < TU_COUNT(guarded_tools); t++)
    REFUSED_WITH(guarded_tools[t], "l_tsync", EPERM);
  ALLOWED("anything", "l_create");
}
END_TEST

/* Landlock refuses a device's ioctls from ABI 5; before, the filter
 * refuses every ioctl but a few reads. */
START_TEST(read_only_asks_no_device_ioctl) {
  enable_as(_i);
  static const char *const dev[] = {"d_sg_io", "d_tiocsti"};
  for (size_t i = 0; i < TU_COUNT(dev); i++) {
    REFUSED_WITH("ro_closed", dev[i], EACCES);
    REFUSED_WITH("ro_open", dev[i], EACCES);
    REFUSED_WITH("anything", dev[i], ENOTTY);
  }
  for (size_t i = 0; i < TU_COUNT(inode_reads); i++)
    ALLOWED("ro_closed", inode_reads[i]);
}
END_TEST

/* A module, a kernel, a BPF program or I/O ports would reach past every
 * rule for a handler running as root. */
START_TEST(no_guarded_thread_runs_code_in_the_kernel) {
  enable_as(_i);
  static const char *const kernel_code[] = {
      "k_finit_module", "k_init_module", "k_kexec_load", "k_bpf",
#ifdef SYS_iopl
      "k_iopl",
#endif
  };
  for (size_t t = 0; t < TU_COUNT(guarded_tools); t++)
    for (size_t i = 0; i < TU_COUNT(kernel_code); i++)
      REFUSED_WITH(guarded_tools[t], kernel_code[i], EPERM);
}
END_TEST

START_TEST(no_call_newer_than_the_guard_nor_of_another_abi) {
  enable_as(_i);
  for (size_t t = 0; t < TU_COUNT(guarded_tools); t++)
    ck_assert_int_eq(try_op(guarded_tools[t], "s_above"), 0);
#ifdef __x86_64__
  /* x32's numbers share x86-64's architecture: above the bound. (int 0x80
   * is refused as another architecture, but faults where the kernel has
   * no IA-32 emulation, so it is not tried here.) */
  for (size_t t = 0;
       kernel_has("s_x32", "x32 ABI") && t < TU_COUNT(guarded_tools); t++)
    REFUSED_WITH(guarded_tools[t], "s_x32", ENOSYS);
#endif
}
END_TEST

/* ---- the kernel and the options ------------------------------------------ */

START_TEST(abi_probe_agrees_with_the_kernel) {
  long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1u);
  int probed = mcp_guard_landlock_abi();
  ck_assert_int_eq(probed, abi > 0 ? (int)abi : 0);
  /* The LSM list the kernel booted with names landlock when it answers. */
  FILE *f = fopen("/sys/kernel/security/lsm", "r");
  if (f) {
    char lsm[256] = "";
    ck_assert_ptr_nonnull(fgets(lsm, sizeof lsm, f));
    fclose(f);
    ck_assert_int_eq(strstr(lsm, "landlock") != NULL, probed > 0);
  }
  need_abi(1);
}
END_TEST

START_TEST(full_kernel_says_every_rule_is_kept) {
  need_abi(4);
  enable(NULL);
  ck_assert_ptr_nonnull(strstr(log_text, "keep every rule"));
  /* Four tools need no scope but are destructive or open-world; the
   * guard's sentence is information, not a fifth warning. */
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 4);
}
END_TEST

/* Debian 12's kernel (6.1) answers ABI 2: no truncation right, no TCP
 * rules. The guard keeps both by seccomp and says so. */
START_TEST(as_on_debian_12_seccomp_keeps_what_landlock_cannot) {
  need_abi(4);
  mcp_guard_options o = {.landlock_abi_max = 2};
  enable(&o);
  ck_assert_ptr_nonnull(strstr(
      log_text, "network rules need Landlock ABI 4; found 2: closed-world "
                "tools are guarded by seccomp only"));
  ck_assert_ptr_nonnull(strstr(log_text, "truncation rules need Landlock "
                                         "ABI 3; found 2"));
  /* Four tools; the guard's warning was logged once, at enable. */
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 4);
  REFUSED("ro_closed", "truncate");
  REFUSED("additive", "truncate");
  REFUSED("additive", "open_trunc");
  REFUSED("additive", "unlink");
  REFUSED("ro_closed", "create");
  REFUSED("ro_closed", "handle_trunc"); /* open_by_handle_at's O_TRUNC */
  REFUSED("ro_closed", "connect");
  ck_assert(!connection_came(listener));
  REFUSED("closed", "udp");
  ALLOWED("closed", "unix");
  assert_existing_unchanged();
}
END_TEST

START_TEST(a_rule_the_kernel_cannot_keep_is_an_error_unless_best_effort) {
  need_abi(4);
  unsigned short ports[] = {port2, 0};
  mcp_guard_options o = {.tcp_ports = ports, .landlock_abi_max = 3};
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_ENOTSUP);
  const char *why = mcp_server_errmsg(srv);
  ck_assert_msg(strstr(why, "tcp_ports need Landlock ABI 4") &&
                    strstr(why, "found ABI 3"),
                "%s", why);
  /* Nothing was installed: the call runs as before. */
  ALLOWED("ro_closed", "create");
  o.flags = MCP_GUARD_BEST_EFFORT;
  enable(&o);
  ck_assert_ptr_nonnull(strstr(log_text, "tcp_ports stay closed"));
  REFUSED("ro_closed", "connect_allowed"); /* kept closed: no TCP at all */
  ck_assert(!connection_came(listener2));
  assert_ran_under("guard: read-only, closed-world (best effort)");
}
END_TEST

/* What the kernel enforces is said once, at enable: mcp_server_lint (which
 * the HTTP transport runs when it starts) does not say it again. */
START_TEST(the_status_line_is_logged_once) {
  mcp_guard_options o = {.flags = MCP_GUARD_BEST_EFFORT};
  enable(&o);
  ck_assert_int_eq(guard_lines, 1);
  mcp_server_lint(srv, NULL);
  mcp_server_lint(srv, NULL);
  ck_assert_int_eq(guard_lines, 1);
  o.landlock_abi_max = 2; /* a warning this time: once all the same */
  mcp_server *s2 = NULL;
  mcp_server_info info = {.name = "second", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &s2), 0);
  mcp_server_set_log(s2, keep_log, NULL);
  ck_assert_int_eq(mcp_guard_enable(s2, &o), 0);
  mcp_server_lint(s2, NULL);
  ck_assert_int_eq(guard_lines, 2);
  mcp_server_free(s2);
}
END_TEST

/* The reports of the last call, copied. */
static int copy_reports(report *out, int max) {
  pthread_mutex_lock(&reports_lock);
  int n = nreports < max ? nreports : max;
  memcpy(out, reports, (size_t)n * sizeof *out);
  pthread_mutex_unlock(&reports_lock);
  return n;
}

static void assert_report(const report *r, const char *op, const char *target,
                          const char *hint, mcp_guard_verdict verdict) {
  ck_assert_msg(strcmp(r->op, op) == 0 && strcmp(r->target, target) == 0,
                "reported %s %s, wanted %s %s", r->op, r->target, op, target);
  ck_assert_str_eq(r->hint, hint);
  ck_assert_int_eq(r->verdict, verdict);
}

START_TEST(observe_mode_lets_each_effect_happen_and_reports_it_once) {
  /* One worker per rule set: the previous call's is then done when the
   * next one runs, and a thread a handler starts has one call to be tied
   * to (with two, the one that just replied may still count as running:
   * unattributed, never misattributed). */
  mcp_guard_options o = {.flags = MCP_GUARD_OBSERVE, .threads = 1};
  enable(&o);
  ALLOWED("ro_closed", "sequence");
  ck_assert(!exists("o.txt") && !exists("o2.txt"));
  ck_assert(connection_came(listener));
  report r[MAX_REPORTS];
  int n = copy_reports(r, MAX_REPORTS);
  ck_assert_int_eq(n, 6);
  char o_txt[128], o2_txt[128], peer[64];
  snprintf(o_txt, sizeof o_txt, "%s", at("o.txt"));
  snprintf(o2_txt, sizeof o2_txt, "%s", at("o2.txt"));
  snprintf(peer, sizeof peer, "127.0.0.1:%u", port);
  assert_report(&r[0], "create", o_txt, "readOnlyHint", MCP_GUARD_OBSERVED);
  assert_report(&r[1], "rename", o_txt, "readOnlyHint", MCP_GUARD_OBSERVED);
  ck_assert_str_eq(r[1].target2, o2_txt);
  assert_report(&r[2], "chmod", o2_txt, "readOnlyHint", MCP_GUARD_OBSERVED);
  assert_report(&r[3], "remove", o2_txt, "readOnlyHint", MCP_GUARD_OBSERVED);
  assert_report(&r[4], "socket", "inet stream", "openWorldHint",
                MCP_GUARD_OBSERVED);
  assert_report(&r[5], "connect", peer, "openWorldHint", MCP_GUARD_OBSERVED);
  char id[16];
  snprintf(id, sizeof id, "%d", last_id);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(r[i].tool, "ro_closed");
    ck_assert_str_eq(r[i].id, id);
    ck_assert_int_eq(r[i].attribution, MCP_GUARD_BY_THREAD);
  }
  /* The audit record lists the six, in order. */
  char line[320];
  int na;
  audit_effect(0, line, sizeof line, &na);
  ck_assert_int_eq(na, 6);
  char want[400];
  snprintf(want, sizeof want,
           "create %s (openat) breaks readOnlyHint: observed", o_txt);
  ck_assert_str_eq(line, want);
  audit_effect(5, line, sizeof line, &na);
  snprintf(want, sizeof want,
           "connect %s (connect) breaks openWorldHint: "
           "observed",
           peer);
  ck_assert_str_eq(line, want);
  /* A thread the handler starts: tied to the only call of its rule set. */
  ALLOWED("ro_closed", "thread_create");
  n = copy_reports(r, MAX_REPORTS);
  ck_assert_int_eq(n, 1);
  ck_assert_msg(strcmp(r[0].tool, "ro_closed") == 0, "%s %s by %d", r[0].op,
                r[0].target, r[0].attribution);
  ck_assert_int_eq(r[0].attribution, MCP_GUARD_BY_POOL);
  /* A tool whose hints allow it all is not reported. */
  ALLOWED("anything", "w_mkdirat");
  ck_assert_int_eq(copy_reports(r, MAX_REPORTS), 0);
}
END_TEST

/* Two calls of two read-only tools at once, each refused: each report
 * names its own tool and request. */
START_TEST(concurrent_calls_of_two_tools_are_told_apart) {
  enable(NULL);
  ck_assert_int_eq(pthread_barrier_init(&pair_barrier, NULL, 2), 0);
  clear_reports();
  tu_clear(&P);
  const char *args = "{\"op\":\"pair\"}";
  char *a = tu_call_text("901", "ro_closed", args, NULL);
  char *b = tu_call_text("902", "ro_open", args, NULL);
  ck_assert_int_eq(tu_send(&P, a), 0);
  ck_assert_int_eq(tu_send(&P, b), 0);
  free(a);
  free(b);
  ck_assert_uint_eq(tu_wait(&P, 2, 5000), 2);
  pthread_barrier_destroy(&pair_barrier);
  report r[MAX_REPORTS];
  ck_assert_int_eq(copy_reports(r, MAX_REPORTS), 2);
  for (int i = 0; i < 2; i++) {
    bool closed = strcmp(r[i].tool, "ro_closed") == 0;
    ck_assert_msg(closed || strcmp(r[i].tool, "ro_open") == 0, "tool %s",
                  r[i].tool);
    ck_assert_str_eq(r[i].id, closed ? "901" : "902");
    ck_assert_int_eq(r[i].attribution, MCP_GUARD_BY_THREAD);
    assert_report(&r[i], "remove", at("existing.txt"), "readOnlyHint",
                  MCP_GUARD_REFUSED);
  }
  ck_assert_str_ne(r[0].tool, r[1].tool);
  assert_existing_unchanged();
}
END_TEST

START_TEST(a_write_under_writable_paths_is_reported_allowed) {
  const char *w[] = {at("w"), NULL};
  char wdir[128];
  snprintf(wdir, sizeof wdir, "%s", w[0]);
  w[0] = wdir;
  mcp_guard_options o = {.writable_paths = w};
  enable(&o);
  ALLOWED("ro_closed", "create_in_w");
  report r[MAX_REPORTS];
  ck_assert_int_eq(copy_reports(r, MAX_REPORTS), 1);
  assert_report(&r[0], "create", at("w/new.txt"), "readOnlyHint",
                MCP_GUARD_ALLOWED);
  ALLOWED("additive", "unlink_in_w");
  ck_assert_int_eq(copy_reports(r, MAX_REPORTS), 1);
  assert_report(&r[0], "remove", at("w/f.txt"), "destructiveHint",
                MCP_GUARD_ALLOWED);
  /* Outside it, refused as before. */
  REFUSED_RAW("ro_closed", "w_unlinkat");
}
END_TEST

START_TEST(a_tools_own_writable_path_opens_no_other_tool) {
  char wdir[128];
  snprintf(wdir, sizeof wdir, "%s", at("w"));
  const char *w[] = {wdir, NULL};
  const mcp_guard_tool_paths own[] = {{"ro_closed", w}, {NULL, NULL}};
  mcp_guard_options o = {.tool_paths = own};
  enable(&o);
  ALLOWED("ro_closed", "create_in_w");
  report r[MAX_REPORTS];
  ck_assert_int_eq(copy_reports(r, MAX_REPORTS), 1);
  assert_report(&r[0], "create", at("w/new.txt"), "readOnlyHint",
                MCP_GUARD_ALLOWED);
  /* Another read-only tool, an additive one: refused there. */
  ck_assert_int_eq(try_op("ro_open", "unlink_in_w"), EACCES);
  assert_reported("ro_open", "unlink_in_w");
  ck_assert_int_eq(try_op("additive", "unlink_in_w"), EACCES);
  assert_reported("additive", "unlink_in_w");
  ck_assert(exists("w/f.txt"));
  /* Its own path is no wider than writable_paths: elsewhere, refused. */
  REFUSED_RAW("ro_closed", "w_unlinkat");
  ck_assert(exists("existing.txt"));
}
END_TEST

START_TEST(the_log_has_at_most_ten_effects_a_second_per_tool) {
  mcp_guard_options o = {0};
  enable(&o);
  effect_lines = more_lines = 0;
  REFUSED_WITH("ro_closed", "many", EACCES);
  /* The hook has each one; the log at most ten a second. */
  ck_assert_int_eq(copy_reports((report[MAX_REPORTS]){0}, MAX_REPORTS), MANY);
  ck_assert_int_ge(effect_lines, 10);
  ck_assert_int_lt(effect_lines, MANY);
  /* A second later, the next line says how many were left out. */
  struct timespec wait = {.tv_sec = 1, .tv_nsec = 100000000};
  nanosleep(&wait, NULL);
  REFUSED_RAW("ro_closed", "w_unlinkat");
  ck_assert_int_gt(more_lines, 0);
  ck_assert_int_eq(effect_lines + more_lines, MANY + 1);
}
END_TEST

START_TEST(quiet_refuses_as_before_and_reports_nothing) {
  mcp_guard_options o = {.flags = MCP_GUARD_QUIET, .report = keep_report};
  enable(&o);
  effect_lines = 0;
  ck_assert_int_eq(try_op("ro_closed", "w_unlinkat"), EACCES);
  ck_assert_int_eq(try_op("ro_closed", "n_tcp"), EACCES);
  ck_assert_int_eq(copy_reports((report[MAX_REPORTS]){0}, MAX_REPORTS), 0);
  ck_assert_int_eq(effect_lines, 0);
}
END_TEST

START_TEST(bad_options_are_refused_with_a_reason) {
  ck_assert_int_eq(mcp_guard_enable(NULL, NULL), MCP_EINVAL);
  mcp_guard_options o = {.flags = 8};
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "flags"));
  o.flags = MCP_GUARD_OBSERVE | MCP_GUARD_QUIET;
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "choose one"));
  const char *rel[] = {"relative/path", NULL};
  o = (mcp_guard_options){.writable_paths = rel};
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "not absolute"));
  const char *missing[] = {"/nonexistent/mcp-guard", NULL};
  o = (mcp_guard_options){.writable_paths = missing};
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_ENOENT);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "/nonexistent"));
  o = (mcp_guard_options){.threads = 1000};
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_EINVAL);
  o = (mcp_guard_options){.flags = MCP_GUARD_BEST_EFFORT};
  enable(&o);
  ck_assert_int_eq(mcp_guard_enable(srv, &o), MCP_ESTATE);
}
END_TEST

/* ---- the executor path: deferred, input, cancellation, deadlines ----------
 */

static int h_defer_write(mcp_call *call, void *user_data);
static void *finish_write(void *arg) {
  mcp_call *call = arg;
  /* A thread the guarded handler started: still read-only. */
  char text[16];
  snprintf(text, sizeof text, "%d", op_create());
  mcp_result_text(call, text);
  mcp_call_finish(call, 0);
  return NULL;
}
static int h_defer_write(mcp_call *call, void *user_data) {
  (void)user_data;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finish_write, call), 0);
  pthread_detach(t);
  return MCP_DEFERRED;
}

/* Round one asks; round two (with the answer) tries to create a file. */
static int h_ask_then_write(mcp_call *call, void *user_data) {
  (void)user_data;
  if (mcp_call_input(call, "go") == NULL) {
    int rc = mcp_call_request_input(
        call, "go", MCP_INPUT_ELICITATION,
        "{\"mode\":\"form\",\"message\":\"Go?\",\"requestedSchema\":{"
        "\"type\":\"object\",\"properties\":{}}}");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  char text[16];
  snprintf(text, sizeof text, "%d", op_create());
  return mcp_result_text(call, text);
}

/* Blocks its worker until released. */
static atomic_bool g_release;
static atomic_int g_blocked_runs;
static int h_block(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_blocked_runs, 1);
  while (!atomic_load(&g_release)) {
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL);
  }
  return mcp_result_text(call, "released");
}

/* Counts, until told to stop (at most 100000 rounds), the Landlock
 * ruleset descriptors it sees in the process's table: a read-only handler
 * looking for one to widen while other pools start. */
static atomic_bool g_scan_stop;
static atomic_int g_scanning;
static int rulesets_open(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
    char path[300], link[64] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    if (readlink(path, link, sizeof link - 1) > 0 &&
        strstr(link, "landlock-ruleset"))
      n++;
  }
  if (d)
    closedir(d);
  return n;
}
static int h_scan(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_store(&g_scanning, 1);
  int seen = 0;
  for (int i = 0; i < 100000 && !atomic_load(&g_scan_stop); i++)
    seen += rulesets_open();
  char text[16];
  snprintf(text, sizeof text, "%d", seen);
  return mcp_result_text(call, text);
}

#define RO_TOOL(tool_name, fn)                                                 \
  {                                                                            \
    .name = tool_name, .description = "Read-only.",                            \
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE}, \
    .handler = fn                                                              \
  }
static const mcp_tool more_tools[] = {
    RO_TOOL("defer_write", h_defer_write),
    RO_TOOL("ask_then_write", h_ask_then_write),
    RO_TOOL("block", h_block),
    RO_TOOL("scan", h_scan),
};

static void add_more_tools(void) {
  for (size_t i = 0; i < TU_COUNT(more_tools); i++)
    ck_assert_int_eq(mcp_server_add_tool(srv, &more_tools[i], NULL), 0);
}

START_TEST(deferred_and_legacy_input_rounds_stay_guarded) {
  need_abi(4);
  enable(NULL);
  add_more_tools(); /* added after enabling: guarded all the same */
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"defer_write\"}}"),
                   0);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  cJSON *r = tu_msg(&P, 0);
  int e = atoi(tu_jstr(r, "result.content.0.text"));
  ck_assert_msg(e == EACCES, "deferred create gave %d", e);
  cJSON_Delete(r);

  tu_peer_close(&P);
  tu_peer_open(&P, srv, NULL);
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"ask_then_write\"}}"),
                   0);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  r = tu_msg(&P, 0);
  ck_assert_str_eq(tu_jstr(r, "method"), "elicitation/create");
  char *answer = tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{"
                         "\"action\":\"accept\",\"content\":{}}}",
                         (int)tu_get(r, "id")->valuedouble);
  cJSON_Delete(r);
  ck_assert_int_eq(tu_send(&P, answer), 0);
  free(answer);
  ck_assert_uint_eq(tu_wait(&P, 2, 5000), 2);
  r = tu_msg(&P, 1);
  e = atoi(tu_jstr(r, "result.content.0.text"));
  ck_assert_msg(e == EACCES, "round two's create gave %d", e);
  cJSON_Delete(r);
  ck_assert(!exists("new.txt"));
}
END_TEST

START_TEST(modern_input_round_stays_guarded) {
  need_abi(4);
  enable(NULL);
  add_more_tools();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(1, "ask_then_write", NULL,
                                             TU_META_ELICIT, NULL, NULL)),
                   0);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  cJSON *r = tu_msg(&P, 0);
  char *state = tu_text("\"%s\"", tu_jstr(r, "result.requestState"));
  cJSON_Delete(r);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(2, "ask_then_write", NULL,
                                             TU_META_ELICIT, state,
                                             "{\"go\":{\"action\":\"accept\","
                                             "\"content\":{}}}")),
                   0);
  free(state);
  ck_assert_uint_eq(tu_wait(&P, 2, 5000), 2);
  r = tu_msg(&P, 1);
  int e = atoi(tu_jstr(r, "result.content.0.text"));
  ck_assert_msg(e == EACCES, "retry's create gave %d", e);
  cJSON_Delete(r);
}
END_TEST

START_TEST(queued_calls_are_cancelled_and_time_out) {
  need_abi(4);
  mcp_guard_options o = {.threads = 1};
  enable(&o);
  add_more_tools();
  atomic_store(&g_release, false);
  atomic_store(&g_blocked_runs, 0);
  tu_clear(&P);
  /* One worker: the first call holds it, the others wait in its queue. */
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"block\"}}"),
                   0);
  while (atomic_load(&g_blocked_runs) == 0) {
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL);
  }
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"block\"}}"),
                   0);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":2}}"),
                   0);
  mcp_server_set_call_timeout(srv, 20);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"block\"}}"),
                   0);
  struct timespec ts = {0, 40000000L};
  nanosleep(&ts, NULL);
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  tu_assert_msg(&P, 0, "{\"id\":3,\"result\":{\"isError\":true}}");
  atomic_store(&g_release, true);
  ck_assert_uint_eq(tu_wait(&P, 2, 5000), 2);
  tu_assert_msg(&P, 1,
                "{\"id\":1,\"result\":{\"content\":[{\"text\":"
                "\"released\"}]}}");
  for (int i = 0; i < 1000 && mcp_session_pending(P.session); i++)
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* Neither queued call ran: the cancelled one said nothing. */
  ck_assert_int_eq(atomic_load(&g_blocked_runs), 1);
  ck_assert_uint_eq(P.nout, 2);
}
END_TEST

/* The other pools start while a read-only handler scans the descriptor
 * table: their rulesets were made, used and closed at enable, so it sees
 * none (before, each was open on the submitting thread while its workers
 * restricted themselves). */
START_TEST(no_ruleset_is_open_while_pools_start) {
  need_abi(4);
  enable(NULL);
  add_more_tools();
  atomic_store(&g_scan_stop, false);
  atomic_store(&g_scanning, 0);
  tu_peer Q;
  tu_peer_open(&Q, srv, NULL);
  tu_initialize(&Q, "2025-11-25");
  ck_assert_int_eq(tu_send(&Q, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":"
                               "\"scan\"}}"),
                   0);
  for (int i = 0; i < 5000 && !atomic_load(&g_scanning); i++)
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
  ck_assert(atomic_load(&g_scanning));
  static const char *const others[] = {"additive", "closed", "ro_open",
                                       "anything"};
  for (size_t i = 0; i < TU_COUNT(others); i++)
    ALLOWED(others[i], "unix");
  atomic_store(&g_scan_stop, true);
  ck_assert_uint_eq(tu_wait(&Q, 1, 10000), 1);
  cJSON *r = tu_msg(&Q, 0);
  ck_assert_str_eq(tu_jstr(r, "result.content.0.text"), "0");
  cJSON_Delete(r);
  tu_peer_close(&Q);
}
END_TEST

/* ---- signals ------------------------------------------------------------- */

/* A daemon blocks SIGTERM in the thread that waits for it (sigwait, as
 * mcp_http_serve_until_signal does): a thread the guard started with the
 * signal open would take it instead, and its default action would end the
 * process in the middle of serving. Every thread the guard starts (the
 * trial, the spawners, each pool's workers) blocks the process's signals,
 * whatever the mask of the thread that enabled it or made the call. */
START_TEST(the_guards_threads_take_no_signal) {
  need_abi(4);
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, NULL);
  long before[256];
  size_t nbefore = tu_thread_ids(before, TU_COUNT(before));
  enable(NULL);
  static const char *const all[] = {"ro_closed", "additive", "closed",
                                    "ro_open", "anything"};
  for (size_t i = 0; i < TU_COUNT(all); i++)
    (void)try_op(all[i], "unix");
  size_t nafter = 0;
  long open = tu_new_thread_taking_stop_signals(before, nbefore, &nafter);
  ck_assert_uint_gt(nafter, nbefore);
  ck_assert_msg(open == 0, "thread %ld of the guard takes SIGTERM", open);
}
END_TEST

/* ---- allocation failure -------------------------------------------------- */

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static int sink_count;
static int count_send(const char *msg, size_t len, void *user_data) {
  (void)msg;
  (void)len;
  (void)user_data;
  pthread_mutex_lock(&sink_lock);
  sink_count++;
  pthread_mutex_unlock(&sink_lock);
  return 0;
}

static bool guarded_call_run(long n, void *user) {
  (void)user;
  pthread_mutex_lock(&sink_lock);
  sink_count = 0;
  pthread_mutex_unlock(&sink_lock);
  mcp_server *s = NULL;
  mcp_server_info info = {.name = "torture", .version = "1"};
  if (mcp_server_new(&info, &s) != 0)
    return false;
  mcp_server_set_log(s, tu_silent_log, NULL);
  static const mcp_guard_options best = {.flags = MCP_GUARD_BEST_EFFORT};
  bool ok = mcp_server_add_tool(s, &tools[3], NULL) == 0 &&
            mcp_guard_enable(s, &best) == 0;
  mcp_session *session = NULL;
  if (ok)
    ok = mcp_session_new(s, NULL, count_send, NULL, &session) == 0;
  static const char *const msgs[] = {
      ("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"),
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
       "\"name\":\"closed\",\"arguments\":{\"op\":\"udp\"}}}")};
  for (size_t i = 0; ok && i < TU_COUNT(msgs); i++)
    ok = mcp_session_receive(session, msgs[i], strlen(msgs[i])) == 0;
  /* The guarded call finishes on a worker: wait until the worker is done
   * with the session too, so that the server is freed here, below, and
   * the guard with it (not on the worker, after the leak count). */
  for (int i = 0;
       session && i < 5000 &&
       (mcp_session_pending(session) || mcp_session_executing(session));
       i++)
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
  pthread_mutex_lock(&sink_lock);
  int sent = sink_count;
  pthread_mutex_unlock(&sink_lock);
  /* Every request that was taken was answered: initialize and the call. */
  if (ok)
    ck_assert_msg(sent == 2, "fail_at %ld: %d replies", n, sent);
  mcp_session_free(session);
  mcp_server_free(s);
  return ok;
}

START_TEST(every_allocation_failure_enabling_and_calling) {
  long n = tu_alloc_every(5000, guarded_call_run, NULL, NULL);
  ck_assert_int_gt(n, 10);
}
END_TEST

/* ---- on any kernel: seccomp's part ----------------------------------------
 * What holds whatever Landlock the kernel has (valgrind 3.19, which knows
 * no Landlock system call, shows the guard none): with best effort the
 * guard starts, says what it cannot keep, and seccomp keeps closed-world
 * tools from every socket but unix ones. */

START_TEST(closed_world_sockets_on_any_kernel) {
  mcp_guard_options o = {.flags = MCP_GUARD_BEST_EFFORT};
  enable(&o);
  if (mcp_guard_landlock_abi() == 0)
    ck_assert_msg(strstr(log_text, "filesystem rules need Landlock; found "
                                   "none") != NULL,
                  "%s", log_text);
  REFUSED("closed", "udp");
  REFUSED("closed", "packet");
  REFUSED("closed", "uring");
  REFUSED("closed", "connect");
  ck_assert(!connection_came(listener));
  ALLOWED("closed", "unix");
  ALLOWED("anything", "udp");
  ALLOWED("anything", "connect");
  ck_assert(connection_came(listener));
}
END_TEST

int main(void) {
  Suite *s = suite_create("guard");
  /* "kernel": Landlock's rules, which need the kernel's Landlock. */
  TCase *t = tu_tcase(s, "kernel", setup, teardown, 120);
  tcase_add_test(t, read_only_cannot_write_and_the_disk_is_unchanged);
  tcase_add_test(t, closed_world_cannot_reach_out);
  tcase_add_test(t, additive_creates_but_never_removes_or_truncates);
  tcase_add_test(t, threads_a_handler_starts_are_guarded_too);
  tcase_add_test(t, destructive_open_world_may_do_anything);
  tcase_add_test(t, writable_paths_and_tcp_ports_open_exactly_what_they_name);
  tcase_add_test(t, a_writable_file_is_written_not_removed);
  tcase_add_test(t, abi_probe_agrees_with_the_kernel);
  tcase_add_test(t, full_kernel_says_every_rule_is_kept);
  tcase_add_test(t, as_on_debian_12_seccomp_keeps_what_landlock_cannot);
  tcase_add_test(t,
                 a_rule_the_kernel_cannot_keep_is_an_error_unless_best_effort);
  tcase_add_test(t, deferred_and_legacy_input_rounds_stay_guarded);
  tcase_add_test(t, modern_input_round_stays_guarded);
  tcase_add_test(t, queued_calls_are_cancelled_and_time_out);
  tcase_add_test(t, no_ruleset_is_open_while_pools_start);
  tcase_add_test(t, the_guards_threads_take_no_signal);
  tcase_add_loop_test(t, read_only_writes_nothing_by_any_call, 0, 2);
  tcase_add_loop_test(t, additive_removes_and_truncates_nothing_by_any_call, 0,
                      2);
  tcase_add_loop_test(t, closed_world_opens_no_socket_but_unix_by_any_call, 0,
                      2);
  tcase_add_test(t, tcp_ports_open_nothing_the_port_rules_do_not_see);
  tcase_add_test(t, observe_mode_lets_each_effect_happen_and_reports_it_once);
  tcase_add_test(t, a_write_under_writable_paths_is_reported_allowed);
  tcase_add_test(t, concurrent_calls_of_two_tools_are_told_apart);
  tcase_add_test(t, a_tools_own_writable_path_opens_no_other_tool);
  tcase_add_test(t, the_log_has_at_most_ten_effects_a_second_per_tool);
  tcase_add_test(t, quiet_refuses_as_before_and_reports_nothing);
  tcase_add_loop_test(t, read_only_changes_no_metadata_by_any_call, 0, 2);
  tcase_add_loop_test(t, read_only_sets_no_inode_attribute_by_ioctl, 0, 2);
  tcase_add_loop_test(t, additive_removes_no_byte_by_any_call, 0, 2);
  tcase_add_loop_test(t, no_guarded_thread_makes_widens_or_applies_a_ruleset, 0,
                      2);
  tcase_add_loop_test(t, no_call_newer_than_the_guard_nor_of_another_abi, 0, 2);
  tcase_add_loop_test(t, no_guarded_thread_runs_code_in_the_kernel, 0, 2);
  tcase_add_loop_test(t, read_only_asks_no_device_ioctl, 0, 2);
  /* "any_kernel": what holds on every kernel (the valgrind build runs only
   * these: tests/CMakeLists.txt). */
  t = tu_tcase(s, "any_kernel", setup, teardown, 300);
  tcase_add_test(t, without_the_guard_nothing_changes);
  tcase_add_test(t, closed_world_sockets_on_any_kernel);
  tcase_add_test(t, bad_options_are_refused_with_a_reason);
  tcase_add_test(t, the_status_line_is_logged_once);
  tcase_add_test(t, every_allocation_failure_enabling_and_calling);
  return tu_run(s);
}
