/* The kernel's side of the guard: Landlock rulesets and seccomp filters,
 * applied to the calling thread. The Landlock interface is stable kernel
 * ABI; its structures and the constants Debian 12's headers lack are
 * spelled out here, so the same source builds on older headers and runs
 * on newer kernels (the ABI is probed at run time). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <linux/types.h>
#include <pthread.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

#include "effects.h"
#include "guard_int.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* include/uapi/linux/landlock.h, by ABI version. */
enum {
  LL_CREATE_RULESET_VERSION = 1,
  LL_RULE_PATH_BENEATH = 1,
  LL_RULE_NET_PORT = 2 /* ABI 4 */
};
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_CHAR (1ull << 6)
#define LL_FS_MAKE_DIR (1ull << 7)
#define LL_FS_MAKE_REG (1ull << 8)
#define LL_FS_MAKE_SOCK (1ull << 9)
#define LL_FS_MAKE_FIFO (1ull << 10)
#define LL_FS_MAKE_BLOCK (1ull << 11)
#define LL_FS_MAKE_SYM (1ull << 12)
#define LL_FS_REFER (1ull << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ull << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ull << 1)

struct ll_ruleset_attr {
  __u64 handled_access_fs;
  __u64 handled_access_net; /* ABI 4; zero before */
};

struct ll_path_beneath_attr {
  __u64 allowed_access;
  __s32 parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  __u64 allowed_access;
  __u64 port;
};

/* Every right that writes, creates or removes, at ABI 1. */
#define LL_FS_WRITES_1                                                         \
  (LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | \
   LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |       \
   LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)

/* The rights a rule on a file (not a directory) may name. */
#define LL_FS_FILE_RIGHTS                                                      \
  (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE |       \
   LL_FS_IOCTL_DEV)

/* Never given back under writable_paths: a device node made there would
 * open the device itself (a disk, written raw) to the handler. */
#define LL_FS_DEVICES (LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV)

int mcp__guard_landlock_abi(void) {
  long abi =
      syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi > 0 ? (int)abi : 0;
}

/* The filesystem rights a rule set forbids, at ABI abi. */
static __u64 handled_fs(mcp__guard_fs fs, int abi) {
  if (abi < 1)
    return 0;
  __u64 trunc = abi >= 3 ? LL_FS_TRUNCATE : 0;
  /* REFER handled: moving a file to another folder needs it under both,
   * for additive tools as for read-only ones (within writable_paths). */
  __u64 refer = abi >= 2 ? LL_FS_REFER : 0;
  switch (fs) {
  case MCP__GUARD_FS_READ_ONLY:
    /* Device ioctls too: a read-only tool gets none on a device it opens. */
    return LL_FS_WRITES_1 | refer | trunc | (abi >= 5 ? LL_FS_IOCTL_DEV : 0);
  case MCP__GUARD_FS_ADDITIVE:
    return LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | refer | trunc;
  case MCP__GUARD_FS_ANY:
    break;
  }
  return 0;
}

static int fail(char *why, size_t size, const char *what, int err) {
  mcp__fmt(why, size, "%s: %s", what, strerror(err));
  return MCP_EIO;
}

/* Allows everything handled beneath each writable path. */
static int allow_paths(int fd, __u64 handled, const int *writable, char *why,
                       size_t size) {
  for (size_t i = 0; writable && writable[i] >= 0; i++) {
    struct stat st;
    if (fstat(writable[i], &st) != 0)
      return fail(why, size, "fstat of a writable path", errno);
    __u64 allowed = handled & ~LL_FS_DEVICES;
    struct ll_path_beneath_attr rule = {
        .allowed_access =
            S_ISDIR(st.st_mode) ? allowed : allowed & LL_FS_FILE_RIGHTS,
        .parent_fd = writable[i],
    };
    /* A file under an additive rule set has nothing of its own to allow:
     * removing it is a right of its directory. */
    if (rule.allowed_access == 0)
      continue;
    if (syscall(__NR_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &rule, 0))
      return fail(why, size, "landlock_add_rule (writable path)", errno);
  }
  return 0;
}

static int allow_ports(int fd, const unsigned short *ports, char *why,
                       size_t size) {
  for (size_t i = 0; ports && ports[i]; i++) {
    struct ll_net_port_attr rule = {
        .allowed_access = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP,
        .port = ports[i],
    };
    if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT, &rule, 0))
      return fail(why, size, "landlock_add_rule (TCP port)", errno);
  }
  return 0;
}

static void plan_name(mcp__guard_plan *p) {
  static const char *const fs_names[] = {"", "additive", "read-only"};
  const char *fs = fs_names[p->fs];
  if (*fs == '\0' && !p->closed) {
    mcp__fmt(p->name, sizeof p->name, "guard: unguarded");
    return;
  }
  mcp__fmt(p->name, sizeof p->name, "guard: %s%s%s%s", fs,
           *fs && p->closed ? ", " : "", p->closed ? "closed-world" : "",
           p->partial ? " (best effort)" : "");
}

bool mcp__guard_fs_kept(const mcp__guard_kernel *k, mcp__guard_fs fs) {
  int abi = k->landlock ? k->abi : 0;
  if (fs == MCP__GUARD_FS_ANY)
    return true;
  if (abi < 1)
    return false;
  /* seccomp refuses truncation before ABI 3, and for read-only tools the
   * metadata calls, whatever the ABI. */
  return k->seccomp || (abi >= 3 && fs == MCP__GUARD_FS_ADDITIVE);
}

bool mcp__guard_net_kept(const mcp__guard_kernel *k, bool ported) {
  int abi = k->landlock ? k->abi : 0;
  return k->seccomp && (!ported || abi >= 4);
}

int mcp__guard_plan_build(mcp__guard_plan *plan, const mcp__guard_kernel *k,
                          mcp__guard_fs fs, bool closed, const int *writable,
                          const unsigned short *ports, char *why,
                          size_t why_size) {
  *plan = (mcp__guard_plan){.fs = fs, .closed = closed, .ruleset_fd = -1};
  bool guarded = fs != MCP__GUARD_FS_ANY || closed;
  int abi = k->landlock ? k->abi : 0;
  struct ll_ruleset_attr attr = {.handled_access_fs = handled_fs(fs, abi)};
  /* TCP sockets exist for a closed-world tool only to reach tcp_ports,
   * under Landlock's port rules; without ports it gets none at all, since
   * a TCP socket can reach out past connect() (MSG_FASTOPEN) and listen
   * on a port the kernel picks (listen() without bind()). */
  bool ported = ports != NULL && ports[0] != 0;
  bool tcp = closed && abi >= 4 && ported;
  if (tcp)
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  /* What Landlock cannot do here, seccomp does where it can: truncation
   * (before ABI 3) by refusing the calls that truncate, TCP (before ABI 4)
   * by refusing TCP sockets altogether. */
  plan->no_truncate = fs != MCP__GUARD_FS_ANY && abi < 3 && k->seccomp;
  plan->no_metadata = fs == MCP__GUARD_FS_READ_ONLY && k->seccomp;
  plan->few_ioctls = plan->no_metadata && abi < 5;
  plan->sockets = closed && k->seccomp;
  plan->inet = tcp;
  plan->no_shrink = fs == MCP__GUARD_FS_ADDITIVE && k->seccomp;
  plan->filtered = guarded && k->seccomp;
  plan->partial =
      !mcp__guard_fs_kept(k, fs) || (closed && !mcp__guard_net_kept(k, ported));
  plan_name(plan);
  if (attr.handled_access_fs == 0 && attr.handled_access_net == 0)
    return 0;
  long fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0)
    return fail(why, why_size, "landlock_create_ruleset", errno);
  plan->ruleset_fd = (int)fd;
  int rc = allow_paths(plan->ruleset_fd, attr.handled_access_fs, writable, why,
                       why_size);
  if (rc == 0 && tcp)
    rc = allow_ports(plan->ruleset_fd, ports, why, why_size);
  if (rc)
    mcp__guard_plan_free(plan);
  return rc;
}

void mcp__guard_plan_free(mcp__guard_plan *plan) {
  if (plan->ruleset_fd >= 0)
    close(plan->ruleset_fd);
  plan->ruleset_fd = -1;
}

/* ---- seccomp ------------------------------------------------------------- */

/* What a refusal does: fail with its errno, or, while a reporting guard
 * builds its filter (notify_refusals), stop the call for the guard's
 * supervisor, which answers with that errno (mcp__guard_program). Set on
 * the thread that builds a filter, for the length of the build. */
static _Thread_local bool notify_refusals;

static uint32_t deny_with(int err) {
  return notify_refusals ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)err);
}

#define DENY deny_with(EACCES)

/* One comparison of system call argument arg. The filter compares the
 * whole 64-bit register; the kernel reads an int argument's low 32 bits,
 * so each rule below is written so that a value with garbage in the high
 * half meets a refusal (the family's ">= 64", the protocol's "> 6", the
 * type's mask), never the allowed case. */
static struct scmp_arg_cmp arg_is(unsigned arg, enum scmp_compare op,
                                  scmp_datum_t a, scmp_datum_t b) {
  return (struct scmp_arg_cmp){
      .arg = arg, .op = op, .datum_a = a, .datum_b = b};
}

/* Refuses every socket family but unix (and, with inet, TCP over IPv4 and
 * IPv6, which Landlock's rules then guard by port). */
static int deny_sockets(scmp_filter_ctx f, bool inet) {
  int rc = 0;
  for (unsigned fam = 0; fam < 64 && rc == 0; fam++) {
    bool tcp_family = fam == AF_INET || fam == AF_INET6;
    if (fam == AF_UNIX || (inet && tcp_family))
      continue;
    rc = seccomp_rule_add(f, DENY, SCMP_SYS(socket), 1,
                          arg_is(0, SCMP_CMP_EQ, fam, 0));
  }
  if (rc == 0)
    rc = seccomp_rule_add(f, DENY, SCMP_SYS(socket), 1,
                          arg_is(0, SCMP_CMP_GE, 64, 0));
  static const unsigned tcp_families[] = {AF_INET, AF_INET6};
  for (size_t i = 0; inet && i < 2 && rc == 0; i++) {
    unsigned fam = tcp_families[i];
    /* Only SOCK_STREAM (the flags above the type bits do not matter)... */
    for (unsigned type = 0; type < 16 && rc == 0; type++)
      if (type != SOCK_STREAM)
        rc = seccomp_rule_add(f, DENY, SCMP_SYS(socket), 2,
                              arg_is(0, SCMP_CMP_EQ, fam, 0),
                              arg_is(1, SCMP_CMP_MASKED_EQ, 0xf, type));
    /* ...with protocol 0 or IPPROTO_TCP: SCTP and MPTCP are not TCP. */
    for (unsigned proto = 1; proto < 6 && rc == 0; proto++)
      rc = seccomp_rule_add(f, DENY, SCMP_SYS(socket), 2,
                            arg_is(0, SCMP_CMP_EQ, fam, 0),
                            arg_is(2, SCMP_CMP_EQ, proto, 0));
    if (rc == 0)
      rc = seccomp_rule_add(f, DENY, SCMP_SYS(socket), 2,
                            arg_is(0, SCMP_CMP_EQ, fam, 0),
                            arg_is(2, SCMP_CMP_GT, 6, 0));
  }
  return rc;
}

/* One refusal: the system call named, answered err, always (arg < 0) or
 * when its argument arg has (arg & mask) == value. nr is the call's number
 * where this libseccomp may not know its name: Linux numbers every call
 * added since 5.1 (424 on) alike on every architecture, from the
 * architecture's base (0 but on alpha and mips). */
typedef struct refusal {
  const char *call;
  int nr;
  int err;
  int arg;
  scmp_datum_t mask, value;
} refusal;

#define ALWAYS(call, err)                                                      \
  { call, 0, err, -1, 0, 0 }
#define NEWER(call, nr, err)                                                   \
  { call, nr, err, -1, 0, 0 }
#define WITH_BITS(call, err, arg, bits)                                        \
  { call, 0, err, arg, bits, bits }

/* The newest system call this filter was written for: file_setattr (469,
 * Linux 6.17). Every call up to it, in the tables of Linux 6.18, was read
 * for the rules below; a guarded thread gets ENOSYS for every number above
 * (load_bound), so a call newer than this file is refused, not let
 * through a deny-list that cannot name it. Raise it only after reading
 * the new calls for each rule. */
#define NEWEST_CALL 469

/* This architecture's base for the unified numbers: pidfd_open is 434 on
 * every architecture, from its base, and libseccomp names it (2.5 does). */
static int call_base(void) {
  int nr = seccomp_syscall_resolve_name("pidfd_open");
  return nr == __NR_SCMP_ERROR ? -1 : nr - 434;
}

/* The number of r's call on this architecture, or __NR_SCMP_ERROR when
 * neither this libseccomp nor the table can name it. A negative number
 * other than that is libseccomp's for a call this architecture lacks: a
 * rule on it adds nothing. */
static int call_nr(const refusal *r) {
  int nr = seccomp_syscall_resolve_name(r->call);
  int base = call_base();
  if (nr == __NR_SCMP_ERROR && r->nr > 0 && base >= 0)
    nr = base + r->nr;
  return nr;
}

/* Adds every refusal of list (n of them). A call nobody here can name is
 * an error, never skipped: skipping one is how a filter forgets a rule. */
static int refuse(scmp_filter_ctx f, const refusal *list, size_t n) {
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const refusal *r = &list[i];
    int nr = call_nr(r);
    if (nr == __NR_SCMP_ERROR)
      return -ENOSYS;
    /* EPERM's refusals (every_guarded) are no effect: never reported. */
    uint32_t act = r->err == EPERM ? SCMP_ACT_ERRNO(EPERM) : deny_with(r->err);
    rc = r->arg < 0
             ? seccomp_rule_add(f, act, nr, 0)
             : seccomp_rule_add(f, act, nr, 1,
                                arg_is((unsigned)r->arg, SCMP_CMP_MASKED_EQ,
                                       r->mask, r->value));
  }
  return rc;
}

#define MSG_FASTOPEN_BIT 0x20000000 /* MSG_FASTOPEN */

/* With TCP allowed (to tcp_ports), what Landlock's port rules do not see:
 * data sent by MSG_FASTOPEN, which connects without connect(), and
 * listen(), which on an unbound socket takes a port the kernel picks. */
static const refusal tcp_bypasses[] = {
    WITH_BITS("sendto", EACCES, 3, MSG_FASTOPEN_BIT),
    WITH_BITS("sendmsg", EACCES, 2, MSG_FASTOPEN_BIT),
    WITH_BITS("sendmmsg", EACCES, 3, MSG_FASTOPEN_BIT),
    ALWAYS("listen", EACCES),
};

/* What Landlock leaves a read-only tool on files it may open for reading:
 * their mode, owner, times, extended attributes and inode attributes
 * (file_setattr sets what FS_IOC_FSSETXATTR sets). */
static const refusal metadata[] = {
    ALWAYS("chmod", EACCES),
    ALWAYS("fchmod", EACCES),
    ALWAYS("fchmodat", EACCES),
    NEWER("fchmodat2", 452, EACCES),
    ALWAYS("chown", EACCES),
    ALWAYS("fchown", EACCES),
    ALWAYS("lchown", EACCES),
    ALWAYS("fchownat", EACCES),
    ALWAYS("utime", EACCES),
    ALWAYS("utimes", EACCES),
    ALWAYS("utimensat", EACCES),
    ALWAYS("futimesat", EACCES),
    ALWAYS("setxattr", EACCES),
    ALWAYS("lsetxattr", EACCES),
    ALWAYS("fsetxattr", EACCES),
    NEWER("setxattrat", 463, EACCES),
    ALWAYS("removexattr", EACCES),
    ALWAYS("lremovexattr", EACCES),
    ALWAYS("fremovexattr", EACCES),
    NEWER("removexattrat", 466, EACCES),
    NEWER("file_setattr", 469, EACCES),
};

/* Truncation: truncate, ftruncate, and opening with O_TRUNC (openat2, whose
 * flags seccomp cannot read, says ENOSYS, so the C library falls back to
 * openat). */
static const refusal truncation[] = {
    ALWAYS("truncate", EACCES),
    ALWAYS("ftruncate", EACCES),
    ALWAYS("creat", EACCES),
    WITH_BITS("open", EACCES, 1, O_TRUNC),
    WITH_BITS("openat", EACCES, 2, O_TRUNC),
    WITH_BITS("open_by_handle_at", EACCES, 2, O_TRUNC),
    NEWER("openat2", 437, ENOSYS),
};

#define MADV_REMOVE_ADVICE 9 /* MADV_REMOVE: frees a shared file's bytes */

/* What removes bytes from a file an additive tool may write (Landlock has
 * no right for it): madvise(MADV_REMOVE) on a shared mapping of it. The
 * fallocate modes and the ioctls are deny_fallocate's and deny_ioctls'. */
static const refusal shrinking[] = {
    {"madvise", 0, EACCES, 2, 0xffffffff, MADV_REMOVE_ADVICE},
};

/* What every guarded thread is refused: io_uring, whose operations open
 * sockets and files without the system calls the filter reads;
 * Landlock's calls, so that a guarded thread can neither make, widen nor
 * apply a ruleset (of a pool that is starting, say); and a seccomp filter
 * loaded onto every thread of the process (TSYNC), which would put the
 * handler's filter on the server's own threads (its own filters only
 * narrow it and stay allowed); and, for root, the calls that run code in
 * the kernel or reach the hardware past every rule: loading a module or
 * a kernel, BPF programs, I/O ports. */
static const refusal every_guarded[] = {
    WITH_BITS("seccomp", EPERM, 1, SECCOMP_FILTER_FLAG_TSYNC),
    ALWAYS("init_module", EPERM),
    ALWAYS("finit_module", EPERM),
    ALWAYS("kexec_load", EPERM),
    ALWAYS("kexec_file_load", EPERM),
    ALWAYS("bpf", EPERM),
    ALWAYS("iopl", EPERM),
    ALWAYS("ioperm", EPERM),
    NEWER("io_uring_setup", 425, EPERM),
    NEWER("io_uring_enter", 426, EPERM),
    NEWER("io_uring_register", 427, EPERM),
    NEWER("landlock_create_ruleset", 444, EPERM),
    NEWER("landlock_add_rule", 445, EPERM),
    NEWER("landlock_restrict_self", 446, EPERM),
};

#define REFUSE(f, list) refuse((f), (list), sizeof(list) / sizeof *(list))

/* fallocate's modes an additive tool keeps: allocating (keeping the size
 * or not), unsharing, and inserting a range; each other bit, those of
 * today (punch hole, collapse range, zero range, write zeroes) and any a
 * later kernel defines, is refused. */
#define FALLOC_KEPT 0x61u /* KEEP_SIZE, INSERT_RANGE, UNSHARE_RANGE */

static int deny_fallocate(scmp_filter_ctx f) {
  int rc = 0;
  for (unsigned bit = 0; bit < 32 && rc == 0; bit++) {
    scmp_datum_t b = (scmp_datum_t)1 << bit;
    if ((FALLOC_KEPT & b) == 0)
      rc = seccomp_rule_add(f, DENY, SCMP_SYS(fallocate), 1,
                            arg_is(1, SCMP_CMP_MASKED_EQ, b, b));
  }
  return rc;
}

/* ---- ioctls ----
 * A request number carries its direction, type, number and size
 * (<asm/ioctl.h>, per architecture). The filesystems' ioctls keep to a
 * few types, and those that change a file are numbered as writes (the
 * caller passes data in) or as neither; the classes below are refused by
 * type and direction, every size, so that the 32-bit compatible numbers
 * (FS_IOC32_SETFLAGS...) and requests added later to the same families
 * are refused with them. */

#define IOC_FIELD(x, f) (((scmp_datum_t)(x)&_IOC_##f##MASK) << _IOC_##f##SHIFT)
#define IOC_NR_BITS ((scmp_datum_t)_IOC_NRMASK)

/* The requests of direction dir and type that are numbered lo to hi, as
 * the fewest masked comparisons (aligned blocks of numbers). */
static int deny_ioctl_range(scmp_filter_ctx f, unsigned dir, unsigned type,
                            unsigned lo, unsigned hi) {
  int rc = 0;
  while (lo <= hi && rc == 0) {
    unsigned size = 1;
    while (size <= IOC_NR_BITS && (lo & (2 * size - 1)) == 0 &&
           lo + 2 * size - 1 <= hi)
      size *= 2;
    scmp_datum_t mask = IOC_FIELD(_IOC_DIRMASK, DIR) |
                        IOC_FIELD(_IOC_TYPEMASK, TYPE) |
                        IOC_FIELD(IOC_NR_BITS & ~(scmp_datum_t)(size - 1), NR);
    scmp_datum_t value =
        IOC_FIELD(dir, DIR) | IOC_FIELD(type, TYPE) | IOC_FIELD(lo, NR);
    rc = seccomp_rule_add(f, DENY, SCMP_SYS(ioctl), 1,
                          arg_is(1, SCMP_CMP_MASKED_EQ, mask, value));
    lo += size;
  }
  return rc;
}

/* Requests a refused family leaves alone. The generic descriptor ioctls
 * are of type 'f' on some architectures (powerpc, mips, sparc, alpha):
 * FIONBIO there is _IOW('f', 126, int). Cloning and deduplicating write
 * bytes over bytes, which an additive tool may do. */
static const unsigned long ioctl_kept[] = {
    FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC, FIONREAD, FIOQSIZE,
};
static const unsigned long ioctl_kept_additive[] = {
    FICLONE,
    FICLONERANGE,
    FIDEDUPERANGE,
};

static bool kept(const unsigned long *list, size_t n, unsigned dir,
                 unsigned type, unsigned nr) {
  for (size_t i = 0; i < n; i++)
    if (_IOC_DIR(list[i]) == dir && _IOC_TYPE(list[i]) == type &&
        _IOC_NR(list[i]) == nr)
      return true;
  return false;
}

/* One family: its type, and whether its reads are refused too (f2fs
 * numbers requests that change a file as reads). */
typedef struct ioctl_family {
  unsigned type;
  bool reads;
} ioctl_family;

/* Every request of family fam but those of direction read (unless its
 * reads are refused too) and those in kept_list (n of them). */
static int deny_ioctl_family(scmp_filter_ctx f, const ioctl_family *fam,
                             const unsigned long *kept_list, size_t n) {
  int rc = 0;
  for (unsigned dir = 0; dir <= _IOC_DIRMASK && rc == 0; dir++) {
    if (dir == _IOC_READ && !fam->reads)
      continue;
    unsigned lo = 0;
    for (unsigned nr = 0; nr <= IOC_NR_BITS && rc == 0; nr++) {
      bool keep = kept(ioctl_kept, sizeof ioctl_kept / sizeof *ioctl_kept, dir,
                       fam->type, nr) ||
                  kept(kept_list, n, dir, fam->type, nr);
      if (keep && nr > lo)
        rc = deny_ioctl_range(f, dir, fam->type, lo, nr - 1);
      if (keep)
        lo = nr + 1;
    }
    if (rc == 0 && lo <= IOC_NR_BITS)
      rc = deny_ioctl_range(f, dir, fam->type, lo, IOC_NR_BITS);
  }
  return rc;
}

/* What a read-only tool may not ask of a file it opened for reading: the
 * families of the filesystems' ioctls, 'f' (FS_IOC_SETFLAGS, ext4's
 * version, UUID, encryption policy, verity), 'v' (FS_IOC_SETVERSION), 'X'
 * (FS_IOC_FSSETXATTR, XFS, the space reservations), 0x94 (btrfs, the file
 * system label, cloning), 'r' (FAT's attributes) and 0xf5 (f2fs); and
 * FS_IOC_SET_ENCRYPTION_POLICY, which is numbered as a read. */
static const ioctl_family read_only_ioctls[] = {
    {'f', false},  {'v', false}, {'X', false},
    {0x94, false}, {'r', false}, {0xf5, true},
};

/* What can remove bytes from a file an additive tool may write: XFS's
 * family ('X': FS_IOC_UNRESVSP, FS_IOC_ZERO_RANGE, the extent swaps),
 * btrfs's (0x94), f2fs's (0xf5), cloning and deduplicating aside. */
static const ioctl_family additive_ioctls[] = {
    {'X', false}, {0x94, false}, {0xf5, true}};

#define FS_IOC_SET_ENCRYPTION_POLICY_NR 19

static int deny_ioctls(scmp_filter_ctx f, mcp__guard_fs fs) {
  bool ro = fs == MCP__GUARD_FS_READ_ONLY;
  const ioctl_family *list = ro ? read_only_ioctls : additive_ioctls;
  size_t n = ro ? sizeof read_only_ioctls / sizeof *read_only_ioctls
                : sizeof additive_ioctls / sizeof *additive_ioctls;
  size_t nkept =
      ro ? 0 : sizeof ioctl_kept_additive / sizeof *ioctl_kept_additive;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = deny_ioctl_family(f, &list[i], ioctl_kept_additive, nkept);
  if (rc == 0 && ro)
    rc = deny_ioctl_range(f, _IOC_READ, 'f', FS_IOC_SET_ENCRYPTION_POLICY_NR,
                          FS_IOC_SET_ENCRYPTION_POLICY_NR);
  return rc;
}

/* ---- the bound ----
 * libseccomp's rules name calls; "every number above NEWEST_CALL" is not a
 * rule it can state, so a second, hand-written filter is stacked on its
 * own (the kernel runs both and the stricter answer wins): another
 * architecture (int 0x80 on x86-64) and every number outside this
 * architecture's [base, base + NEWEST_CALL] answer ENOSYS. x32's numbers
 * (0x40000000 on, same architecture as x86-64's) are above the bound. */
static int load_bound(char *why, size_t size) {
  int base = call_base();
  if (base < 0)
    return fail(why, size, "seccomp bound (libseccomp names no pidfd_open)",
                ENOSYS);
  __u32 arch = seccomp_arch_native();
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (__u32)base, 0, 1),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (__u32)(base + NEWEST_CALL), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof code / sizeof *code, .filter = code};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    return fail(why, size, "seccomp bound", errno);
  return 0;
}

/* Before ABI 5 Landlock lets a read-only tool ask any ioctl of a device
 * it opens for reading, and a device's ioctls write (SG_IO and NVMe's
 * passthrough write the disk for root, TIOCSTI types into a terminal).
 * seccomp cannot tell a device from a file, so there a read-only tool
 * keeps these requests only: the descriptor's own, the terminal's size
 * and mode reads (isatty), and the inode reads. */
static const __u32 few_ioctls[] = {
    FIOCLEX,
    FIONCLEX,
    FIONBIO,
    FIOASYNC,
    FIONREAD,
    FIOQSIZE,
    TCGETS,
    TIOCGWINSZ,
    FS_IOC_GETFLAGS,
    FS_IOC_FSGETXATTR,
    FS_IOC_GETVERSION,
    FS_IOC_FIEMAP,
    FIGETBSZ,
    FS_IOC32_GETFLAGS,
    FS_IOC32_GETVERSION,
};

#define FEW_IOCTLS (sizeof few_ioctls / sizeof *few_ioctls)

/* The kernel reads an ioctl's request as an unsigned int: the low half of
 * the argument, wherever the byte order puts it. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG1_LOW offsetof(struct seccomp_data, args[1])
#else
#define ARG1_LOW (offsetof(struct seccomp_data, args[1]) + 4)
#endif

/* A filter of its own, stacked like the bound: ioctl answers EACCES to
 * every request but few_ioctls. Other architectures are the bound's. */
static int load_few_ioctls(char *why, size_t size) {
  int nr = seccomp_syscall_resolve_name("ioctl");
  if (nr < 0)
    return fail(why, size, "seccomp ioctl list (no ioctl)", ENOSYS);
  struct sock_filter code[4 + FEW_IOCTLS + 2] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)nr, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LOW),
  };
  for (size_t i = 0; i < FEW_IOCTLS; i++) /* a match jumps to ALLOW */
    code[4 + i] = (struct sock_filter)BPF_JUMP(
        BPF_JMP | BPF_JEQ | BPF_K, few_ioctls[i], (__u8)(FEW_IOCTLS - i), 0);
  code[4 + FEW_IOCTLS] =
      (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES);
  code[5 + FEW_IOCTLS] =
      (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {.len = sizeof code / sizeof *code, .filter = code};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    return fail(why, size, "seccomp ioctl list", errno);
  return 0;
}

/* The effects a reporting guard stops for plan beyond its refusals: what
 * Landlock refuses (or, observing, would), and with TCP allowed, where a
 * socket connects and binds. */
static unsigned watched_ops(const mcp__guard_plan *plan) {
  unsigned ops = 0;
  if (plan->fs == MCP__GUARD_FS_READ_ONLY)
    ops |= 1u << MCP__EFFECT_WRITE | 1u << MCP__EFFECT_CREATE |
           1u << MCP__EFFECT_LINK;
  if (plan->fs != MCP__GUARD_FS_ANY)
    ops |= 1u << MCP__EFFECT_REMOVE | 1u << MCP__EFFECT_RENAME |
           1u << MCP__EFFECT_TRUNCATE;
  if (plan->inet)
    ops |= 1u << MCP__EFFECT_CONNECT | 1u << MCP__EFFECT_BIND;
  if (plan->closed && plan->observe)
    ops |= 1u << MCP__EFFECT_CONNECT | 1u << MCP__EFFECT_BIND |
           1u << MCP__EFFECT_LISTEN | 1u << MCP__EFFECT_SEND;
  return ops;
}

/* plan's filter as a libseccomp context: refusals that fail (notify
 * false) or stop the call for the supervisor (notify true, with the
 * effects of watched_ops). NULL and *rc set on failure. */
static scmp_filter_ctx build_filter(const mcp__guard_plan *plan, bool notify,
                                    int *rc_out) {
  scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
  if (f == NULL) {
    *rc_out = -ENOMEM;
    return NULL;
  }
  notify_refusals = notify;
  /* A system call of another architecture is refused, not let through the
   * filter written for this one (the bound says so again). */
  int rc = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  /* A binary tree of the system call numbers: every call a worker makes
   * (futex, read, write...) runs through the filter, and a list of the
   * calls with rules is longer the more rules there are. Best effort: an
   * older libseccomp keeps its list. */
  if (rc == 0)
    (void)seccomp_attr_set(f, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (rc == 0 && plan->sockets)
    rc = deny_sockets(f, plan->inet);
  if (rc == 0 && plan->inet)
    rc = REFUSE(f, tcp_bypasses);
  if (rc == 0 && plan->no_metadata)
    rc = REFUSE(f, metadata);
  if (rc == 0 && plan->no_truncate)
    rc = REFUSE(f, truncation);
  if (rc == 0 && plan->no_shrink)
    rc = REFUSE(f, shrinking);
  if (rc == 0 && plan->no_shrink)
    rc = deny_fallocate(f);
  if (rc == 0 && plan->no_metadata)
    rc = deny_ioctls(f, MCP__GUARD_FS_READ_ONLY);
  if (rc == 0 && plan->no_shrink)
    rc = deny_ioctls(f, MCP__GUARD_FS_ADDITIVE);
  if (rc == 0)
    rc = REFUSE(f, every_guarded);
  if (rc == 0 && notify)
    rc = mcp__effects_add_ops(f, watched_ops(plan), SCMP_ACT_NOTIFY);
  /* The short ioctl list's own filter would answer EACCES, which the
   * kernel prefers to any notification: reporting, every ioctl is stopped
   * here instead and mcp__guard_few_ioctls answers. */
  if (rc == 0 && notify && plan->few_ioctls)
    rc = seccomp_rule_add(f, SCMP_ACT_NOTIFY, SCMP_SYS(ioctl), 0);
  notify_refusals = false;
  if (rc) {
    seccomp_release(f);
    *rc_out = rc;
    return NULL;
  }
  return f;
}

int mcp__guard_program(const mcp__guard_plan *plan, struct sock_filter **code,
                       size_t *len, char *why, size_t why_size) {
  int rc = 0;
  scmp_filter_ctx f = build_filter(plan, false, &rc);
  if (f == NULL)
    return fail(why, why_size, "seccomp filter", -rc);
  rc = mcp__effects_export(f, code, len);
  seccomp_release(f);
  return rc ? fail(why, why_size, "seccomp program", -rc) : 0;
}

/* Loads plan's filter on the calling thread only (no TSYNC), and the
 * bound under it; with listener, the reporting filter, whose listener it
 * returns there. */
static int load_filter(const mcp__guard_plan *plan, int *listener, char *why,
                       size_t size) {
  int rc = 0;
  scmp_filter_ctx f = build_filter(plan, listener != NULL, &rc);
  if (f == NULL)
    return fail(why, size, "seccomp filter", -rc);
  if (listener) {
    *listener = mcp__effects_load(f, why, size);
    rc = *listener < 0 ? *listener : 0;
  } else {
    rc = seccomp_load(f);
    if (rc)
      rc = fail(why, size, "seccomp filter", -rc);
  }
  seccomp_release(f);
  if (rc)
    return rc < 0 ? MCP_EIO : rc;
  rc = plan->few_ioctls && !listener ? load_few_ioctls(why, size) : 0;
  return rc ? rc : load_bound(why, size);
}

int mcp__guard_few_ioctls(const mcp__guard_plan *plan,
                          const struct seccomp_data *data) {
  if (!plan->few_ioctls || data->nr != seccomp_syscall_resolve_name("ioctl"))
    return 0;
  __u32 request = (__u32)data->args[1]; /* read as an unsigned int */
  for (size_t i = 0; i < FEW_IOCTLS; i++)
    if (few_ioctls[i] == request)
      return 0;
  return EACCES;
}

int mcp__guard_apply_watched(const mcp__guard_plan *plan, int *listener,
                             char *why, size_t why_size) {
  /* Each guarded rule set has the filter (filtered), whatever else. */
  bool filter = plan->filtered;
  if (listener)
    *listener = -1;
  if (plan->ruleset_fd < 0 && !filter)
    return 0;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fail(why, why_size, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
  if (plan->ruleset_fd >= 0 &&
      syscall(__NR_landlock_restrict_self, plan->ruleset_fd, 0) != 0)
    return fail(why, why_size, "landlock_restrict_self", errno);
  return filter ? load_filter(plan, listener, why, why_size) : 0;
}

int mcp__guard_apply(const mcp__guard_plan *plan, char *why, size_t why_size) {
  return mcp__guard_apply_watched(plan, NULL, why, why_size);
}

/* ---- the trial ----------------------------------------------------------- */

/* On a thread of its own, which ends with the restrictions: the
 * strictest Landlock rule set, then a seccomp filter with every rule. */
static void *trial(void *arg) {
  mcp__guard_kernel *k = arg;
  char why[160];
  if (k->landlock) {
    mcp__guard_kernel landlock_only = *k;
    landlock_only.seccomp = false;
    mcp__guard_plan plan;
    k->landlock =
        mcp__guard_plan_build(&plan, &landlock_only, MCP__GUARD_FS_READ_ONLY,
                              true, NULL, NULL, why, sizeof why) == 0 &&
        mcp__guard_apply(&plan, why, sizeof why) == 0;
    mcp__guard_plan_free(&plan);
  }
  if (k->seccomp) {
    mcp__guard_plan plan = {.ruleset_fd = -1,
                            .sockets = true,
                            .inet = k->landlock && k->abi >= 4,
                            .no_truncate = true,
                            .filtered = true,
                            .no_shrink = true,
                            .no_metadata = true,
                            .few_ioctls = true};
    k->seccomp = mcp__guard_apply(&plan, why, sizeof why) == 0;
    /* A listener of its own, for reports: a filter that stops nothing. */
    int listener = k->seccomp ? mcp__effects_watch(0, why, sizeof why) : -1;
    k->notify = listener >= 0;
    if (listener >= 0)
      close(listener);
  }
  return NULL;
}

void mcp__guard_trial(mcp__guard_kernel *k) {
  k->landlock = k->abi > 0;
  k->seccomp = true;
  pthread_t t;
  if (mcp__thread_start(&t, NULL, trial, k) != 0) {
    k->landlock = k->seccomp = false;
    return;
  }
  pthread_join(t, NULL);
}
