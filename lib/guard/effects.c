/* Effects (effects.h): the table of effect system calls, the filter that
 * stops them, the decoder and the supervisor's loop. Knows nothing of
 * tools, hints or servers: the guard and mcp-check put those around it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "mcp/mcp.h"

#include "effects.h"

const char *mcp__effect_op_name(mcp__effect_op op) {
  static const char *const names[MCP__EFFECT_OPS] = {
      [MCP__EFFECT_WRITE] = "write",
      [MCP__EFFECT_CREATE] = "create",
      [MCP__EFFECT_REMOVE] = "remove",
      [MCP__EFFECT_RENAME] = "rename",
      [MCP__EFFECT_LINK] = "link",
      [MCP__EFFECT_TRUNCATE] = "truncate",
      [MCP__EFFECT_CHMOD] = "chmod",
      [MCP__EFFECT_CHOWN] = "chown",
      [MCP__EFFECT_TIMES] = "times",
      [MCP__EFFECT_XATTR] = "xattr",
      [MCP__EFFECT_ATTR_IOCTL] = "attr-ioctl",
      [MCP__EFFECT_SHRINK] = "shrink",
      [MCP__EFFECT_SOCKET] = "socket",
      [MCP__EFFECT_CONNECT] = "connect",
      [MCP__EFFECT_BIND] = "bind",
      [MCP__EFFECT_LISTEN] = "listen",
      [MCP__EFFECT_SEND] = "send",
  };
  return (unsigned)op < MCP__EFFECT_OPS ? names[op] : "?";
}

/* ---- the table -------------------------------------------------------------
 * One row per effect system call: how its arguments read (kind and the
 * argument indexes), the effect it has, its class, and when the filter
 * stops it (always, or when an argument has a bit of mask set). */

typedef enum kind {
  K_OPEN,      /* a: path, b: flags, d: dirfd (-1 none) */
  K_CREAT,     /* a: path; flags O_CREAT|O_WRONLY|O_TRUNC */
  K_OPENAT2,   /* d: dirfd, a: path, b: struct open_how */
  K_BY_HANDLE, /* d: the mount fd, b: flags */
  K_PATH,      /* d: dirfd (-1 none), a: path (NULL or "": the dirfd) */
  K_FD,        /* a: fd */
  K_PATH2,     /* d, a: the first path; e, b: the second */
  K_SYMLINK,   /* a: what it points to; d: dirfd (-1 none), b: the link */
  K_SOCKET,    /* a: family, b: type */
  K_ADDR,      /* a: fd, b: address, e: its length */
  K_SENDTO,    /* a: fd, b: address (4), e: length (5) */
  K_SENDMSG,   /* a: fd, b: struct msghdr */
  K_SENDMMSG,  /* a: fd, b: struct mmsghdr[] (the first is read) */
  K_LISTEN,    /* a: fd */
  K_MADVISE,   /* a: address, b: length */
  K_IOCTL      /* a: fd, b: request */
} kind;

typedef struct row {
  const char *call;
  int newer; /* the unified number (424 on) where libseccomp may lack the
                name; 0 otherwise */
  kind kind;
  mcp__effect_op op;
  unsigned cls;
  signed char a, b, d, e;
  signed char when_arg; /* -1: always; else stopped when the argument has
                           a bit of when_mask (each bit a rule), or for
                           socket, when the family is not AF_UNIX, for
                           sendto when the address is not NULL */
  unsigned long when_mask;
} row;

#define W MCP__EFFECTS_WRITES
#define T MCP__EFFECTS_TRUNCATE
#define M MCP__EFFECTS_METADATA
#define S MCP__EFFECTS_SHRINK
#define N MCP__EFFECTS_NET

/* Opened for writing, creating or truncating. O_TMPFILE carries O_WRONLY
 * or O_RDWR (the kernel refuses it without). */
#define OPEN_BITS ((unsigned long)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC))
#define FALLOC_KEPT 0x61u /* KEEP_SIZE, INSERT_RANGE, UNSHARE_RANGE */
#define MADV_REMOVE_ADVICE 9

#define PATH_AT(name, op, cls, d, a)                                           \
  { name, 0, K_PATH, op, cls, a, 0, d, 0, -1, 0 }
#define PATH_ONLY(name, op, cls) PATH_AT(name, op, cls, -1, 0)
#define PATH_NEWER(name, nr, op, cls, d, a)                                    \
  { name, nr, K_PATH, op, cls, a, 0, d, 0, -1, 0 }
#define FD_ONLY(name, op, cls)                                                 \
  { name, 0, K_FD, op, cls, 0, 0, -1, 0, -1, 0 }

static const row table[] = {
    {"open", 0, K_OPEN, MCP__EFFECT_WRITE, W, 0, 1, -1, 0, 1, OPEN_BITS},
    {"openat", 0, K_OPEN, MCP__EFFECT_WRITE, W, 1, 2, 0, 0, 2, OPEN_BITS},
    {"creat", 0, K_CREAT, MCP__EFFECT_CREATE, W, 0, 0, -1, 0, -1, 0},
    {"openat2", 437, K_OPENAT2, MCP__EFFECT_WRITE, W, 1, 2, 0, 0, -1, 0},
    {"open_by_handle_at", 0, K_BY_HANDLE, MCP__EFFECT_WRITE, W, 0, 2, 0, 0, 2,
     OPEN_BITS},
    PATH_ONLY("unlink", MCP__EFFECT_REMOVE, W),
    PATH_AT("unlinkat", MCP__EFFECT_REMOVE, W, 0, 1),
    PATH_ONLY("rmdir", MCP__EFFECT_REMOVE, W),
    PATH_ONLY("mkdir", MCP__EFFECT_CREATE, W),
    PATH_AT("mkdirat", MCP__EFFECT_CREATE, W, 0, 1),
    PATH_ONLY("mknod", MCP__EFFECT_CREATE, W),
    PATH_AT("mknodat", MCP__EFFECT_CREATE, W, 0, 1),
    {"rename", 0, K_PATH2, MCP__EFFECT_RENAME, W, 0, 1, -1, -1, -1, 0},
    {"renameat", 0, K_PATH2, MCP__EFFECT_RENAME, W, 1, 3, 0, 2, -1, 0},
    {"renameat2", 0, K_PATH2, MCP__EFFECT_RENAME, W, 1, 3, 0, 2, -1, 0},
    {"link", 0, K_PATH2, MCP__EFFECT_LINK, W, 1, 0, -1, -1, -1, 0},
    {"linkat", 0, K_PATH2, MCP__EFFECT_LINK, W, 3, 1, 2, 0, -1, 0},
    {"symlink", 0, K_SYMLINK, MCP__EFFECT_LINK, W, 0, 1, -1, 0, -1, 0},
    {"symlinkat", 0, K_SYMLINK, MCP__EFFECT_LINK, W, 0, 2, 1, 0, -1, 0},
    PATH_ONLY("truncate", MCP__EFFECT_TRUNCATE, T),
    FD_ONLY("ftruncate", MCP__EFFECT_TRUNCATE, T),
    PATH_ONLY("chmod", MCP__EFFECT_CHMOD, M),
    FD_ONLY("fchmod", MCP__EFFECT_CHMOD, M),
    PATH_AT("fchmodat", MCP__EFFECT_CHMOD, M, 0, 1),
    PATH_NEWER("fchmodat2", 452, MCP__EFFECT_CHMOD, M, 0, 1),
    PATH_ONLY("chown", MCP__EFFECT_CHOWN, M),
    FD_ONLY("fchown", MCP__EFFECT_CHOWN, M),
    PATH_ONLY("lchown", MCP__EFFECT_CHOWN, M),
    PATH_AT("fchownat", MCP__EFFECT_CHOWN, M, 0, 1),
    PATH_ONLY("utime", MCP__EFFECT_TIMES, M),
    PATH_ONLY("utimes", MCP__EFFECT_TIMES, M),
    PATH_AT("utimensat", MCP__EFFECT_TIMES, M, 0, 1),
    PATH_AT("futimesat", MCP__EFFECT_TIMES, M, 0, 1),
    PATH_ONLY("setxattr", MCP__EFFECT_XATTR, M),
    PATH_ONLY("lsetxattr", MCP__EFFECT_XATTR, M),
    FD_ONLY("fsetxattr", MCP__EFFECT_XATTR, M),
    PATH_NEWER("setxattrat", 463, MCP__EFFECT_XATTR, M, 0, 1),
    PATH_ONLY("removexattr", MCP__EFFECT_XATTR, M),
    PATH_ONLY("lremovexattr", MCP__EFFECT_XATTR, M),
    FD_ONLY("fremovexattr", MCP__EFFECT_XATTR, M),
    PATH_NEWER("removexattrat", 466, MCP__EFFECT_XATTR, M, 0, 1),
    PATH_NEWER("file_setattr", 469, MCP__EFFECT_ATTR_IOCTL, M, 0, 1),
    {"ioctl", 0, K_IOCTL, MCP__EFFECT_ATTR_IOCTL, M | S, 0, 1, -1, 0, -1, 0},
    {"fallocate", 0, K_FD, MCP__EFFECT_SHRINK, S, 0, 0, -1, 0, 1,
     0xffffffffUL & ~(unsigned long)FALLOC_KEPT},
    {"madvise", 0, K_MADVISE, MCP__EFFECT_SHRINK, S, 0, 1, -1, 0, -1, 0},
    {"socket", 0, K_SOCKET, MCP__EFFECT_SOCKET, N, 0, 1, -1, 0, 0, 0},
    {"connect", 0, K_ADDR, MCP__EFFECT_CONNECT, N, 0, 1, -1, 2, -1, 0},
    {"bind", 0, K_ADDR, MCP__EFFECT_BIND, N, 0, 1, -1, 2, -1, 0},
    {"listen", 0, K_LISTEN, MCP__EFFECT_LISTEN, N, 0, 0, -1, 0, -1, 0},
    {"sendto", 0, K_SENDTO, MCP__EFFECT_SEND, N, 0, 4, -1, 5, 4, 0},
    {"sendmsg", 0, K_SENDMSG, MCP__EFFECT_SEND, N, 0, 1, -1, 0, -1, 0},
    {"sendmmsg", 0, K_SENDMMSG, MCP__EFFECT_SEND, N, 0, 1, -1, 0, -1, 0},
};

#define ROWS (sizeof table / sizeof *table)

/* This architecture's base for the unified numbers (pidfd_open is 434 on
 * every architecture, from its base). */
static int call_base(void) {
  int nr = seccomp_syscall_resolve_name("pidfd_open");
  return nr == __NR_SCMP_ERROR ? -1 : nr - 434;
}

static int row_nr(const row *r) {
  int nr = seccomp_syscall_resolve_name(r->call);
  int base = call_base();
  if (nr == __NR_SCMP_ERROR && r->newer > 0 && base >= 0)
    nr = base + r->newer;
  return nr;
}

/* Each row's number, resolved once: libseccomp's name lookup is a search
 * of its tables, too slow to do for each notification. */
static int numbers[ROWS];
static pthread_once_t numbers_once = PTHREAD_ONCE_INIT;

static void resolve_numbers(void) {
  for (size_t i = 0; i < ROWS; i++)
    numbers[i] = row_nr(&table[i]);
}

/* The row of system call nr, NULL for none. */
static const row *row_of(int nr) {
  pthread_once(&numbers_once, resolve_numbers);
  for (size_t i = 0; i < ROWS; i++)
    if (numbers[i] == nr && nr >= 0)
      return &table[i];
  return NULL;
}

/* ---- the filter ---------------------------------------------------------- */

static struct scmp_arg_cmp cmp(unsigned arg, enum scmp_compare op,
                               scmp_datum_t a, scmp_datum_t b) {
  return (struct scmp_arg_cmp){
      .arg = arg, .op = op, .datum_a = a, .datum_b = b};
}

/* The rules of one row: each bit of when_mask a rule of its own (the
 * filter stops the call when any is set). */
static int add_row(scmp_filter_ctx f, const row *r, int nr, uint32_t act) {
  if (r->when_arg < 0)
    return seccomp_rule_add(f, act, nr, 0);
  unsigned arg = (unsigned)r->when_arg;
  if (r->kind == K_SOCKET) /* the whole register: garbage above is stopped */
    return seccomp_rule_add(f, act, nr, 1, cmp(arg, SCMP_CMP_NE, AF_UNIX, 0));
  if (r->kind == K_SENDTO)
    return seccomp_rule_add(f, act, nr, 1, cmp(arg, SCMP_CMP_NE, 0, 0));
  int rc = 0;
  for (unsigned bit = 0; bit < 32 && rc == 0; bit++) {
    scmp_datum_t b = (scmp_datum_t)1 << bit;
    if (r->when_mask & b)
      rc = seccomp_rule_add(f, act, nr, 1, cmp(arg, SCMP_CMP_MASKED_EQ, b, b));
  }
  return rc;
}

/* madvise is stopped for MADV_REMOVE only (its low 32 bits: the kernel
 * reads an int). */
static int add_madvise(scmp_filter_ctx f, int nr, uint32_t act) {
  return seccomp_rule_add(
      f, act, nr, 1,
      cmp(2, SCMP_CMP_MASKED_EQ, 0xffffffffu, MADV_REMOVE_ADVICE));
}

/* ioctls of the filesystems' families ('f', 'v', 'X', btrfs 0x94, FAT
 * 'r', f2fs 0xf5), by type: the decoder tells the reads apart. */
static int add_ioctls(scmp_filter_ctx f, int nr, uint32_t act) {
  static const unsigned types[] = {'f', 'v', 'X', 0x94, 'r', 0xf5};
  int rc = 0;
  scmp_datum_t mask = (scmp_datum_t)_IOC_TYPEMASK << _IOC_TYPESHIFT;
  for (size_t i = 0; i < sizeof types / sizeof *types && rc == 0; i++)
    rc = seccomp_rule_add(f, act, nr, 1,
                          cmp(1, SCMP_CMP_MASKED_EQ, mask,
                              (scmp_datum_t)types[i] << _IOC_TYPESHIFT));
  return rc;
}

/* The rules of row r, its stop condition narrowed to mask (for opens). */
static int add_one(scmp_filter_ctx f, const row *r, unsigned long mask,
                   uint32_t action) {
  int nr = row_nr(r);
  if (nr == __NR_SCMP_ERROR)
    return -ENOSYS;
  if (nr < 0) /* a call this architecture lacks (open on arm64) */
    return 0;
  if (r->kind == K_MADVISE)
    return add_madvise(f, nr, action);
  if (r->kind == K_IOCTL)
    return add_ioctls(f, nr, action);
  row narrowed = *r;
  narrowed.when_mask = mask;
  return add_row(f, &narrowed, nr, action);
}

int mcp__effects_add_rules(void *filter, unsigned classes, uint32_t action) {
  int rc = 0;
  for (size_t i = 0; i < ROWS && rc == 0; i++)
    if (table[i].cls & classes)
      rc = add_one(filter, &table[i], table[i].when_mask, action);
  return rc;
}

#define OP(x) (1u << MCP__EFFECT_##x)

/* Whether row r can have an effect of ops, and the open flags that do. */
static bool row_has(const row *r, unsigned ops, unsigned long *mask) {
  *mask = r->when_mask;
  bool opens = r->kind == K_OPEN || r->kind == K_BY_HANDLE ||
               r->kind == K_OPENAT2 || r->kind == K_CREAT;
  if (!opens)
    return (ops & (1u << r->op)) != 0;
  if (ops & (OP(WRITE) | OP(CREATE)))
    return true;
  if ((ops & OP(TRUNCATE)) == 0)
    return false;
  if (r->when_arg >= 0)
    *mask = O_TRUNC;
  return true;
}

int mcp__effects_add_ops(void *filter, unsigned ops, uint32_t action) {
  int rc = 0;
  unsigned long mask;
  for (size_t i = 0; i < ROWS && rc == 0; i++)
    if (row_has(&table[i], ops, &mask))
      rc = add_one(filter, &table[i], mask, action);
  return rc;
}

static int fail(char *why, size_t size, const char *what, int err, int rc) {
  if (why && size)
    snprintf(why, size, "%s: %s", what, strerror(err));
  return rc;
}

int mcp__effects_export(void *filter, struct sock_filter **code, size_t *len) {
  *code = NULL;
  *len = 0;
  int mem = memfd_create("mcp-effects", MFD_CLOEXEC);
  if (mem < 0)
    return -errno;
  int rc = seccomp_export_bpf((scmp_filter_ctx)filter, mem);
  off_t size = rc == 0 ? lseek(mem, 0, SEEK_END) : -1;
  if (rc == 0 && (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0))
    rc = -EINVAL;
  struct sock_filter *out = rc == 0 ? malloc((size_t)size) : NULL;
  if (rc == 0 && out == NULL)
    rc = -ENOMEM;
  if (rc == 0 && pread(mem, out, (size_t)size, 0) != size)
    rc = -EIO;
  close(mem);
  if (rc) {
    free(out);
    return rc;
  }
  *code = out;
  *len = (size_t)size / sizeof *out;
  return 0;
}

int mcp__effects_load(void *filter, char *why, size_t size) {
  /* libseccomp 2.5 keeps one listener per process (seccomp_notify_fd):
   * the program is exported and loaded here instead. */
  struct sock_filter *code;
  size_t len;
  int rc = mcp__effects_export(filter, &code, &len);
  if (rc)
    return fail(why, size, "seccomp_export_bpf", -rc,
                rc == -ENOMEM ? MCP_ENOMEM : MCP_EIO);
  struct sock_fprog prog = {.len = (unsigned short)len, .filter = code};
  long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  int err = errno;
  free(code);
  if (fd < 0)
    return fail(why, size, "seccomp(NEW_LISTENER)", err, MCP_EIO);
  return (int)fd;
}

/* ---- running a program ----------------------------------------------------
 * Classic BPF as seccomp runs it (the subset libseccomp writes and more:
 * loads of the data and of scratch memory, ALU and jumps with K or X). */

static uint32_t alu(uint16_t op, uint32_t a, uint32_t v) {
  switch (op) {
  case BPF_ADD:
    return a + v;
  case BPF_SUB:
    return a - v;
  case BPF_MUL:
    return a * v;
  case BPF_DIV:
    return v ? a / v : 0;
  case BPF_OR:
    return a | v;
  case BPF_AND:
    return a & v;
  case BPF_LSH:
    return v < 32 ? a << v : 0;
  case BPF_RSH:
    return v < 32 ? a >> v : 0;
  case BPF_NEG:
    return -a;
  case BPF_XOR:
    return a ^ v;
  default:
    return a;
  }
}

static bool jump(uint16_t op, uint32_t a, uint32_t v) {
  switch (op) {
  case BPF_JEQ:
    return a == v;
  case BPF_JGT:
    return a > v;
  case BPF_JGE:
    return a >= v;
  case BPF_JSET:
    return (a & v) != 0;
  default:
    return false;
  }
}

/* The machine's registers and scratch memory. */
typedef struct bpf_state {
  uint32_t a, x, mem[BPF_MEMWORDS];
} bpf_state;

/* Runs one load or store; false for a load out of data. */
static bool load_store(bpf_state *m, const struct sock_filter *i,
                       const struct seccomp_data *data) {
  uint16_t cls = BPF_CLASS(i->code);
  if (cls == BPF_ST || cls == BPF_STX) {
    if (i->k < BPF_MEMWORDS)
      m->mem[i->k] = cls == BPF_ST ? m->a : m->x;
    return true;
  }
  uint32_t got;
  if (BPF_MODE(i->code) == BPF_ABS) {
    if (i->k > sizeof *data - 4 || i->k % 4)
      return false;
    memcpy(&got, (const unsigned char *)data + i->k, 4);
  } else if (BPF_MODE(i->code) == BPF_IMM) {
    got = i->k;
  } else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS) {
    got = m->mem[i->k];
  } else {
    got = (uint32_t)sizeof *data; /* BPF_LEN */
  }
  if (cls == BPF_LD)
    m->a = got;
  else
    m->x = got;
  return true;
}

uint32_t mcp__effects_bpf_run(const struct sock_filter *code, size_t len,
                              const struct seccomp_data *data) {
  bpf_state m = {0};
  for (size_t pc = 0; pc < len; pc++) {
    const struct sock_filter *i = &code[pc];
    uint16_t cls = BPF_CLASS(i->code);
    uint32_t v = BPF_SRC(i->code) == BPF_X ? m.x : i->k;
    if (cls == BPF_LD || cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
      if (!load_store(&m, i, data))
        return SECCOMP_RET_KILL_PROCESS;
    } else if (cls == BPF_ALU) {
      m.a = alu(BPF_OP(i->code), m.a, v);
    } else if (cls == BPF_JMP) {
      if (BPF_OP(i->code) == BPF_JA)
        pc += i->k;
      else
        pc += jump(BPF_OP(i->code), m.a, v) ? i->jt : i->jf;
    } else if (cls == BPF_RET) {
      return BPF_RVAL(i->code) == BPF_A ? m.a : i->k;
    } else if (cls == BPF_MISC) {
      if (BPF_MISCOP(i->code) == BPF_TAX)
        m.x = m.a;
      else
        m.a = m.x;
    }
  }
  return SECCOMP_RET_KILL_PROCESS; /* ran off the end: the kernel's too */
}

int mcp__effects_watch(unsigned classes, char *why, size_t size) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fail(why, size, "prctl(PR_SET_NO_NEW_PRIVS)", errno, MCP_EIO);
  scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
  if (f == NULL)
    return fail(why, size, "seccomp_init", ENOMEM, MCP_ENOMEM);
  /* Another architecture's calls (int 0x80) would pass unseen. */
  int rc = seccomp_attr_set(f, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  if (rc == 0)
    rc = mcp__effects_add_rules(f, classes, SCMP_ACT_NOTIFY);
  int fd = rc == 0 ? mcp__effects_load(f, why, size)
                   : fail(why, size, "seccomp rules", -rc, MCP_EIO);
  seccomp_release(f);
  return fd;
}

int mcp__effects_watch_self(char *why, size_t size) {
  return mcp__effects_watch(MCP__EFFECTS_ALL, why, size);
}

/* ---- reading the thread --------------------------------------------------
 * Only through process_vm_readv, a page at a time (a string may end just
 * before an unmapped page): a bad pointer is an unreadable target, never
 * a fault here. */

#define CHUNK 4096u

static bool read_mem(pid_t pid, uint64_t addr, void *buf, size_t len) {
  if (addr == 0)
    return false;
  struct iovec local = {.iov_base = buf, .iov_len = len};
  struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Reads the string at addr into buf (size > 0). Returns 0, 1 when cut to
 * size - 1, -1 when unreadable (buf then ""). */
static int read_str(pid_t pid, uint64_t addr, char *buf, size_t size) {
  size_t have = 0;
  buf[0] = '\0';
  while (have + 1 < size) {
    size_t room = CHUNK - (size_t)((addr + have) % CHUNK);
    if (room > size - 1 - have)
      room = size - 1 - have;
    if (!read_mem(pid, addr + have, buf + have, room)) {
      buf[have] = '\0';
      return have ? 1 : -1; /* a partial string is cut, not lost */
    }
    char *nul = memchr(buf + have, '\0', room);
    if (nul)
      return 0;
    have += room;
  }
  buf[size - 1] = '\0';
  return 1;
}

static void put(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void put(char *dst, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, size, fmt, ap);
  va_end(ap);
}

/* The path /proc/<pid>/<what> points to, into buf; false when gone. */
static bool proc_link(pid_t pid, const char *what, char *buf, size_t size) {
  char link[64];
  put(link, sizeof link, "/proc/%d/%s", (int)pid, what);
  ssize_t n = readlink(link, buf, size - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return true;
}

static bool fd_path(pid_t pid, int fd, char *buf, size_t size) {
  char what[32];
  put(what, sizeof what, "fd/%d", fd);
  return proc_link(pid, what, buf, size);
}

/* A path argument as the kernel will see it: absolute paths as they are,
 * relative ones joined to dirfd's path (AT_FDCWD: the thread's cwd); an
 * empty or NULL path (AT_EMPTY_PATH, utimensat's fd form) is dirfd
 * itself. Fills out->target or ->target2 (dst). */
static void path_arg(pid_t pid, mcp__effect *out, char *dst, int dirfd,
                     uint64_t addr, bool at) {
  char path[MCP__EFFECT_TARGET];
  int rc = addr ? read_str(pid, addr, path, sizeof path) : 0;
  if (addr == 0)
    path[0] = '\0';
  if (rc < 0 || (addr == 0 && !at)) {
    put(dst, MCP__EFFECT_TARGET, "(unreadable)");
    out->unreadable = true;
    return;
  }
  out->truncated |= rc == 1;
  if (path[0] == '/') {
    put(dst, MCP__EFFECT_TARGET, "%s", path);
    return;
  }
  char base[MCP__EFFECT_TARGET];
  bool known = dirfd == AT_FDCWD ? proc_link(pid, "cwd", base, sizeof base)
                                 : fd_path(pid, dirfd, base, sizeof base);
  if (!known) {
    put(dst, MCP__EFFECT_TARGET, "%s", path[0] ? path : "(unreadable)");
    out->unreadable = path[0] == '\0';
    return;
  }
  int n = path[0] == '\0' ? snprintf(dst, MCP__EFFECT_TARGET, "%s", base)
          : !strcmp(base, "/")
              ? snprintf(dst, MCP__EFFECT_TARGET, "/%s", path)
              : snprintf(dst, MCP__EFFECT_TARGET, "%s/%s", base, path);
  out->truncated |= n >= MCP__EFFECT_TARGET;
}

static void fd_arg(pid_t pid, mcp__effect *out, int fd) {
  if (!fd_path(pid, fd, out->target, sizeof out->target)) {
    put(out->target, sizeof out->target, "(unreadable)");
    out->unreadable = true;
  }
}

/* An address as "a.b.c.d:port", "[v6]:port", "unix:/path" or
 * "unix:@abstract". */
static void format_addr(const struct sockaddr_storage *ss, size_t len,
                        char *dst, size_t size) {
  char ip[INET6_ADDRSTRLEN];
  if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *a = (const void *)ss;
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    put(dst, size, "%s:%u", ip, ntohs(a->sin_port));
  } else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *a = (const void *)ss;
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
    put(dst, size, "[%s]:%u", ip, ntohs(a->sin6_port));
  } else if (ss->ss_family == AF_UNIX) {
    const struct sockaddr_un *a = (const void *)ss;
    size_t n = len > offsetof(struct sockaddr_un, sun_path)
                   ? len - offsetof(struct sockaddr_un, sun_path)
                   : 0;
    if (n > sizeof a->sun_path)
      n = sizeof a->sun_path;
    bool abstract = n > 0 && a->sun_path[0] == '\0';
    put(dst, size, "unix:%s%.*s", abstract ? "@" : "", (int)(n - abstract),
        a->sun_path + abstract);
  } else {
    put(dst, size, "family %d", ss->ss_family);
  }
}

static void addr_arg(pid_t pid, mcp__effect *out, uint64_t addr, uint64_t len) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  size_t n = len > sizeof ss ? sizeof ss : (size_t)len;
  if (n < sizeof(sa_family_t) || !read_mem(pid, addr, &ss, n)) {
    put(out->target, sizeof out->target, "(unreadable)");
    out->unreadable = true;
    return;
  }
  out->family = ss.ss_family;
  format_addr(&ss, n, out->target, sizeof out->target);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* listen: the socket's own address, through a copy of the thread's fd
 * (pidfd_getfd); "fd N" when that is not allowed. */
static void listen_arg(pid_t pid, mcp__effect *out, int fd) {
  long pidfd = syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
  if (pidfd < 0)
    pidfd = syscall(SYS_pidfd_open, pid, 0);
  long mine = pidfd >= 0 ? syscall(SYS_pidfd_getfd, (int)pidfd, fd, 0) : -1;
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  memset(&ss, 0, sizeof ss);
  if (mine >= 0 && getsockname((int)mine, (struct sockaddr *)&ss, &len) == 0) {
    out->family = ss.ss_family;
    format_addr(&ss, len, out->target, sizeof out->target);
  } else {
    put(out->target, sizeof out->target, "fd %d", fd);
  }
  if (mine >= 0)
    close((int)mine);
  if (pidfd >= 0)
    close((int)pidfd);
}

static const char *family_name(int fam) {
  switch (fam) {
  case AF_INET:
    return "inet";
  case AF_INET6:
    return "inet6";
  case AF_NETLINK:
    return "netlink";
  case AF_PACKET:
    return "packet";
  default:
    return NULL;
  }
}

static void socket_arg(mcp__effect *out, uint64_t fam, uint64_t type) {
  static const char *const types[] = {
      "", "stream", "dgram", "raw", "rdm", "seq", "", "", "", "", "packet"};
  unsigned t = (unsigned)type & 0xf;
  const char *tn = t < sizeof types / sizeof *types ? types[t] : "";
  const char *fn = family_name((int)fam);
  out->family = (int)fam;
  if (fn)
    put(out->target, sizeof out->target, "%s %s", fn, *tn ? tn : "type");
  else
    put(out->target, sizeof out->target, "family %d %s", (int)fam,
        *tn ? tn : "type");
}

/* ---- decoding ------------------------------------------------------------ */

/* The op of an open, from its flags: a file made, emptied or written.
 * Whether O_CREAT makes one is seen on the disk (a race, said so). */
static mcp__effect_op open_op(const mcp__effect *e) {
  struct stat st;
  if ((e->flags & O_CREAT) && !e->unreadable && e->target[0] == '/' &&
      stat(e->target, &st) != 0)
    return MCP__EFFECT_CREATE;
  if (e->flags & O_TRUNC)
    return MCP__EFFECT_TRUNCATE;
  return MCP__EFFECT_WRITE;
}

static int decode_open(pid_t pid, const row *r, const uint64_t *arg,
                       mcp__effect *out) {
  int dirfd = r->d >= 0 ? (int)arg[r->d] : AT_FDCWD;
  if (r->kind == K_CREAT) {
    out->flags = O_CREAT | O_WRONLY | O_TRUNC;
  } else if (r->kind == K_OPENAT2) {
    uint64_t how_flags; /* struct open_how begins with its flags */
    if (read_mem(pid, arg[r->b], &how_flags, sizeof how_flags))
      out->flags = (int)how_flags;
    else
      out->unreadable = true;
  } else {
    out->flags = (int)arg[r->b];
  }
  if (r->kind == K_BY_HANDLE)
    fd_arg(pid, out, dirfd);
  else
    path_arg(pid, out, out->target, dirfd, arg[r->a], false);
  if (r->kind == K_OPENAT2 && out->unreadable)
    return 0; /* flags unknown: reported as a write */
  if ((out->flags & (int)OPEN_BITS) == 0)
    return 1; /* openat2 for reading */
  out->op = open_op(out);
  return 0;
}

static int decode_send(pid_t pid, const row *r, const uint64_t *arg,
                       mcp__effect *out) {
  uint64_t name = 0, len = 0;
  if (r->kind == K_SENDTO) {
    name = arg[4];
    len = arg[5];
  } else {
    struct msghdr m;
    if (!read_mem(pid, arg[1], &m, sizeof m)) {
      put(out->target, sizeof out->target, "(unreadable)");
      out->unreadable = true;
      return 0;
    }
    name = (uint64_t)(uintptr_t)m.msg_name;
    len = m.msg_namelen;
  }
  if (name == 0 || len == 0)
    return 1; /* on a connected socket: its connect was the effect */
  addr_arg(pid, out, name, len);
  return 0;
}

/* An ioctl of the filesystems' families: a read ('f' reads flags, the
 * version...) is no effect, but f2fs (0xf5) numbers its changes as reads
 * and FS_IOC_SET_ENCRYPTION_POLICY is one too. */
static int decode_ioctl(pid_t pid, const uint64_t *arg, mcp__effect *out) {
  unsigned req = (unsigned)arg[1];
  bool changes = _IOC_DIR(req) != _IOC_READ || _IOC_TYPE(req) == 0xf5 ||
                 (_IOC_TYPE(req) == 'f' && _IOC_NR(req) == 19);
  fd_arg(pid, out, (int)arg[0]);
  return changes ? 0 : 1;
}

static int decode_row(pid_t pid, const row *r, const uint64_t *arg,
                      mcp__effect *out) {
  switch (r->kind) {
  case K_OPEN:
  case K_CREAT:
  case K_OPENAT2:
  case K_BY_HANDLE:
    return decode_open(pid, r, arg, out);
  case K_PATH:
    path_arg(pid, out, out->target, r->d >= 0 ? (int)arg[r->d] : AT_FDCWD,
             arg[r->a], r->d >= 0);
    return 0;
  case K_FD:
    fd_arg(pid, out, (int)arg[r->a]);
    return 0;
  case K_PATH2:
    path_arg(pid, out, out->target, r->d >= 0 ? (int)arg[r->d] : AT_FDCWD,
             arg[r->a], false);
    path_arg(pid, out, out->target2, r->e >= 0 ? (int)arg[r->e] : AT_FDCWD,
             arg[r->b], false);
    return 0;
  case K_SYMLINK:
    path_arg(pid, out, out->target, r->d >= 0 ? (int)arg[r->d] : AT_FDCWD,
             arg[r->b], false);
    if (read_str(pid, arg[r->a], out->target2, sizeof out->target2) < 0) {
      put(out->target2, sizeof out->target2, "(unreadable)");
      out->unreadable = true;
    }
    return 0;
  case K_SOCKET:
    socket_arg(out, arg[0], arg[1]);
    return out->family == AF_UNIX ? 1 : 0;
  case K_ADDR:
    addr_arg(pid, out, arg[r->b], arg[r->e]);
    return 0;
  case K_SENDTO:
  case K_SENDMSG:
  case K_SENDMMSG:
    return decode_send(pid, r, arg, out);
  case K_LISTEN:
    listen_arg(pid, out, (int)arg[0]);
    return 0;
  case K_MADVISE:
    put(out->target, sizeof out->target, "memory 0x%llx+%llu",
        (unsigned long long)arg[0], (unsigned long long)arg[1]);
    return 0;
  case K_IOCTL:
    return decode_ioctl(pid, arg, out);
  }
  return MCP_EINVAL;
}

int mcp__effects_decode(pid_t pid, const struct seccomp_notif *n,
                        mcp__effect *out) {
  memset(out, 0, sizeof *out);
  out->family = -1;
  out->tid = (pid_t)n->pid;
  out->nr = n->data.nr;
  if (pid == 0)
    pid = (pid_t)n->pid;
  const row *r =
      n->data.arch == seccomp_arch_native() ? row_of(n->data.nr) : NULL;
  if (r == NULL) {
    put(out->call, sizeof out->call, "#%d", n->data.nr);
    return MCP_EINVAL;
  }
  put(out->call, sizeof out->call, "%s", r->call);
  out->op = r->op;
  return decode_row(pid, r, (const uint64_t *)n->data.args, out);
}

/* ---- serving ------------------------------------------------------------- */

/* The kernel's structures may grow: each is received into room enough,
 * as large as the kernel says it is (SECCOMP_GET_NOTIF_SIZES, asked once). */
#define ROOM 512

static bool fits;
static pthread_once_t fits_once = PTHREAD_ONCE_INIT;

static void ask_sizes(void) {
  struct seccomp_notif_sizes s;
  fits = syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &s) == 0 &&
         s.seccomp_notif <= ROOM && s.seccomp_notif_resp <= ROOM;
}

static void respond(int listener, uint64_t id, int verdict) {
  _Alignas(16) unsigned char room[ROOM];
  memset(room, 0, sizeof room);
  struct seccomp_notif_resp *r = (void *)room;
  r->id = id;
  if (verdict == MCP__EFFECT_CONTINUE)
    r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  else
    r->error = -verdict;
  /* ENOENT: the thread is gone (a signal ended its call); nothing to do. */
  (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, r);
}

/* Receives one notification and answers it: fn decides effects, and with
 * all, every other call too. */
static int receive(int listener, mcp__effects_fn fn, void *user_data,
                   bool all) {
  pthread_once(&fits_once, ask_sizes);
  if (!fits)
    return MCP_EIO;
  _Alignas(16) unsigned char room[ROOM];
  memset(room, 0, sizeof room);
  struct seccomp_notif *n = (void *)room;
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, n) != 0)
    return errno == ENOENT || errno == EINTR || errno == EAGAIN ? 0 : MCP_EIO;
  mcp__effect e;
  int rc = mcp__effects_decode(0, n, &e);
  /* What was read is the thread's only while it still waits: a thread
   * gone and its number reused would have been read wrong. */
  uint64_t id = n->id;
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0)
    return 0; /* gone: nothing to decide, nobody to answer */
  e.harmless = rc != 0;
  int verdict = MCP__EFFECT_CONTINUE;
  if (rc == 0 || all)
    verdict = fn(&e, n, user_data);
  else if (rc < 0)
    verdict = ENOSYS;
  respond(listener, n->id, verdict);
  return 1;
}

int mcp__effects_receive(int listener, mcp__effects_fn fn, void *user_data) {
  return receive(listener, fn, user_data, false);
}

int mcp__effects_receive_all(int listener, mcp__effects_fn fn,
                             void *user_data) {
  return receive(listener, fn, user_data, true);
}

int mcp__effects_serve(int listener, int stop_fd, mcp__effects_fn fn,
                       void *user_data) {
  for (;;) {
    struct pollfd p[2] = {{.fd = listener, .events = POLLIN},
                          {.fd = stop_fd, .events = POLLIN}};
    int n = poll(p, stop_fd >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || (p[0].revents & POLLNVAL))
      return MCP_EIO;
    if (stop_fd >= 0 && p[1].revents)
      return 0;
    if (p[0].revents & POLLIN) {
      int rc = mcp__effects_receive(listener, fn, user_data);
      if (rc < 0)
        return rc;
      continue;
    }
    if (p[0].revents & (POLLHUP | POLLERR))
      return 0; /* every thread the filter stopped is gone */
  }
}
