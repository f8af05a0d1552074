/* libmcp guard: hints the kernel keeps (Linux).
 *
 * A tool's hints are claims; clients are told not to trust them. The guard
 * makes the claims true for the handler's own work: it installs an
 * executor (mcp_server_set_executor) that runs each tool on worker threads
 * the kernel restricts by what the tool states of itself.
 *
 *   readOnlyHint: true      no file may be opened for writing, created,
 *                           removed, renamed, linked or truncated (Landlock,
 *                           every write right), nor its mode, owner, times,
 *                           extended attributes or inode attributes changed
 *                           (seccomp: chmod, chown, utime(s), setxattr,
 *                           removexattr in their f, l and at forms,
 *                           file_setattr); no ioctl of the filesystems'
 *                           families that changes a file (seccomp: every
 *                           request of types 'f', 'v', 'X', 0x94 and 'r'
 *                           not numbered as a read, in every size, so
 *                           FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR,
 *                           FS_IOC_SETVERSION and the label, clone and
 *                           space calls; and the encryption policy's
 *                           setter, numbered as a read; every request of
 *                           f2fs's 0xf5); no ioctl on a device it opens
 *                           (Landlock from ABI 5; before it, seccomp
 *                           refuses every ioctl but the descriptor's own,
 *                           TCGETS, TIOCGWINSZ and the inode reads, since
 *                           it cannot tell a device from a file). Under
 *                           writable_paths Landlock's rights come back but
 *                           making device nodes; seccomp's rules hold
 *                           there too
 *   destructiveHint: false  (additive) no file may be removed, renamed or
 *                           truncated (Landlock), nor lose bytes: no
 *                           fallocate mode but allocating, unsharing and
 *                           inserting (punch hole, collapse and zero range
 *                           are refused, and any mode a later kernel adds),
 *                           no madvise(MADV_REMOVE), no ioctl of XFS's or
 *                           btrfs's families ('X', 0x94) not numbered as a
 *                           read but FICLONE, FICLONERANGE and
 *                           FIDEDUPERANGE, none of f2fs's (0xf5)
 *                           (seccomp). Creating files and writing to them
 *                           stays allowed, overwriting bytes of an existing
 *                           file included. Under writable_paths, removing,
 *                           renaming and truncating too (truncating before
 *                           ABI 3 and the seccomp rules excepted)
 *   openWorldHint: false    no socket but unix ones (seccomp): no TCP, UDP,
 *                           raw, packet or netlink socket. With tcp_ports,
 *                           TCP sockets that connect and bind to those
 *                           ports only (Landlock, ABI 4), and never
 *                           listen() nor send with MSG_FASTOPEN, which the
 *                           port rules do not see
 *
 * Every guarded thread (any of the three above) is also refused (seccomp)
 * io_uring, whose operations would pass by the filter; Landlock's three
 * calls, so that it can neither make, widen nor apply a ruleset; a seccomp
 * filter for every thread of the process (SECCOMP_FILTER_FLAG_TSYNC: its
 * own filters, which only narrow it, stay allowed); the calls that, for
 * root, run code in the kernel or reach the hardware past every rule
 * (init_module, finit_module, kexec_load, kexec_file_load, bpf, iopl,
 * ioperm); system calls of another architecture (x86-64's int 0x80,
 * x32's numbers); and, with ENOSYS, every system call newer than the guard
 * (above file_setattr, Linux 6.17, the newest the rules were written for), so a
 * kernel newer than the guard adds nothing a guarded handler may call. Calls
 * the libseccomp at hand cannot name are refused by number.
 *
 * A tool whose hints promise none of this (destructive and open-world)
 * runs on the same executor path, on unrestricted workers. Prompts and
 * resources are not tools and run where they would without the guard.
 * Hints only ever narrow what a handler can do; who may call a tool is
 * decided by its scopes, as before.
 *
 * A restriction cannot be lifted from a thread, so each distinct rule set
 * has its own small pool of worker threads, created when the first call
 * that needs them comes. They are started by a thread of their rule set
 * that restricted itself in mcp_guard_enable, and inherit its
 * restrictions: no Landlock ruleset is open while guarded threads run.
 * Threads a handler starts inherit its restrictions, and so do the
 * processes they run. A worker that finished a call watches its queue for
 * up to 50 µs before it sleeps, so that the next call costs no wake-up
 * (not when the process may run on one CPU only). A call waits in its
 * pool's queue while every worker of its rule set is busy; its deadline
 * counts meanwhile.
 *
 * Reports. The guard says what it refuses: every effect a guarded call
 * attempts beyond its tool's hints (a file opened for writing, created,
 * removed, renamed, linked or truncated; a mode, owner, times, attributes
 * or inode flags changed; bytes removed; a socket other than unix, a
 * connection) is reported with the tool, the call's request id, the hint
 * it breaks, the operation and its target (mcp_guard_effect), to the
 * report hook of mcp_guard_options and to the server's log. Each such
 * system call is stopped by seccomp user notification (a rule whose
 * action is SECCOMP_RET_USER_NOTIF) and handed to the guard's supervisor,
 * one more thread per guard, which answers:
 *  - refused (the default): the errno the silent rule gave (EACCES; ENOSYS
 *    for openat2 where truncation is seccomp's), computed by running the
 *    silent filter on the call's registers, never on what the thread's
 *    memory says (another thread could change it); for what Landlock
 *    refuses, the call goes on and Landlock refuses it (EACCES): Landlock
 *    stays applied and has the last word, so an answer never widens what
 *    the kernel allows;
 *  - allowed by configuration: a write under writable_paths (as its path
 *    reads; Landlock decides on the real hierarchy), a TCP socket of a
 *    closed-world tool with tcp_ports, a connect or bind to one of them;
 *  - observed (MCP_GUARD_OBSERVE): the call goes on, and no Landlock
 *    ruleset is applied, so it happens.
 * An effect is tied to the call the worker that made it runs; a thread the
 * handler started is tied to the only call of its rule set then running,
 * or to none (mcp_guard_attribution says which). The target is read with
 * process_vm_readv; one that cannot be read is "(unreadable)". The log
 * line, MCP_LOG_WARNING (MCP_LOG_INFO when allowed by configuration):
 *   guard: tool "NAME" (request ID) breaks HINT: OP TARGET[ -> TARGET2]
 *   (SYSCALL): refused|observed|allowed by configuration
 * at most 10 a second per tool; the rest of a second are counted and said
 * with the tool's next report: guard: tool "NAME": ... N more.
 * System calls that are no effect are never stopped: a well-behaved call
 * makes no round trip to the supervisor. Not reported: the refusals that
 * are no effect (io_uring, Landlock's calls, the kernel-code calls, calls
 * newer than the guard, other architectures: EPERM or ENOSYS as before),
 * and on Landlock ABI 5 and later a device's ioctls, which Landlock
 * refuses alone. Before ABI 5, every ioctl of a read-only tool is stopped
 * for the supervisor, which answers as the short list above does. If the
 * supervisor is gone (the server freed while a thread a handler started
 * still runs), a stopped call fails with ENOSYS: closed, never hung.
 * MCP_GUARD_QUIET keeps the silent filter of earlier versions.
 *
 * What the guarantee is not:
 *  - A descriptor the process opened before (a database connection, a log
 *    file, a socket) stays usable from a guarded handler: the rules apply
 *    to opening, creating and connecting, not to what is already open.
 *  - Landlock's TCP rules are by port, not by address: a port in tcp_ports
 *    is open to every host.
 *  - A guarded thread shares the process's memory with every other thread:
 *    the guard keeps a handler's own system calls to its hints, it is not a
 *    sandbox against code that attacks the rest of the process (for that,
 *    run the work in a child process, see mcp_tool_fn).
 *  - Writes another thread makes for the handler (a logger, a database
 *    connection's thread, the daemon it talks to over a unix socket) are
 *    that thread's, not the handler's.
 *  - Rulesets exist while mcp_guard_enable runs: enabling the guard of a
 *    second server while the first one's guarded handlers run opens them
 *    to those handlers' descriptor table (not to their Landlock calls,
 *    which are refused). Enable every guard before serving.
 *  - What the kernel cannot do it does not do: mcp_guard_enable probes the
 *    Landlock ABI at run time and refuses (or, with MCP_GUARD_BEST_EFFORT,
 *    says) what it cannot enforce.
 *
 * The workers are joined when the server is finally freed. When that
 * happens on a worker (the last call ended there after mcp_server_free),
 * that worker ends itself afterwards and frees the guard as it goes.
 *
 * Link with mcp::guard (pkg-config libmcp-guard; find_package(mcp
 * COMPONENTS guard)). Linux only.
 */
#ifndef MCP_GUARD_H
#define MCP_GUARD_H

#include "mcp/mcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** mcp_guard_options.flags: enforce what the kernel can and log the rest
 * (once, at enable). Without it a rule the kernel cannot enforce makes
 * mcp_guard_enable fail with MCP_ENOTSUP. */
#define MCP_GUARD_BEST_EFFORT 1u

/** mcp_guard_options.flags: observe instead of refusing. Every effect a
 * tool's hints rule out is reported (verdict MCP_GUARD_OBSERVED) and then
 * allowed to happen: no Landlock ruleset is applied, and the seccomp
 * rules that would refuse stop the call for the guard's supervisor, which
 * lets it go on. For test suites that want the whole list of what each
 * tool does at once; never for production. The refusals that are no
 * effect (io_uring, Landlock's calls, the kernel-code calls, calls newer
 * than the guard) stay refused. */
#define MCP_GUARD_OBSERVE 2u

/** mcp_guard_options.flags: refuse silently, as before reporting existed:
 * each refusal is a seccomp errno rule or Landlock's, no call is stopped
 * for the supervisor and no supervisor thread runs. The report hook is
 * never called. Incompatible with MCP_GUARD_OBSERVE. */
#define MCP_GUARD_QUIET 4u

/** What the guard made of an effect. */
typedef enum mcp_guard_verdict {
  MCP_GUARD_REFUSED = 0, /**< refused: the call failed (by seccomp, with
                              the errno its rule gives: EACCES, ENOSYS for
                              openat2 when truncation is seccomp's), or
                              will be refused by Landlock (EACCES) as the
                              call goes on: Landlock has the last word */
  MCP_GUARD_OBSERVED,    /**< MCP_GUARD_OBSERVE: it happened */
  MCP_GUARD_ALLOWED      /**< allowed by configuration: a write under
                              writable_paths, a TCP socket, connect or bind
                              to a port of tcp_ports (Landlock still has
                              the last word) */
} mcp_guard_verdict;

/** How an effect was tied to a call. */
typedef enum mcp_guard_attribution {
  MCP_GUARD_BY_THREAD = 0, /**< the guard's worker running the call made it */
  MCP_GUARD_BY_POOL,       /**< a thread the handler started made it, while
                                that call was the only one running under the
                                tool's rule set (it may be a thread left
                                over from an earlier call of that set) */
  MCP_GUARD_UNATTRIBUTED   /**< a thread the handler started, while none or
                                several calls of its rule set ran: tool and
                                request_id are NULL */
} mcp_guard_attribution;

/** One effect outside a tool's hints, as reported (see mcp_guard_report_fn).
 * The strings are valid during the hook's call only. */
typedef struct mcp_guard_effect {
  const char *tool;          /**< the tool's name; NULL when unattributed */
  const char *request_id;    /**< the call's JSON-RPC id as received (JSON
                                  text: 7 or "abc" with its quotes); NULL when
                                  unattributed */
  const char *hint;          /**< the hint it breaks: "readOnlyHint",
                                  "destructiveHint" or "openWorldHint" */
  const char *operation;     /**< "write", "create", "remove", "rename", "link",
                                  "truncate", "chmod", "chown", "times",
                                  "xattr", "attr-ioctl", "shrink", "socket",
                                  "connect", "bind", "listen", "send" */
  const char *target;        /**< the path (absolute when the thread's cwd or
                                  directory fd could be read, as the call named
                                  it: symbolic links are not followed),
                                  "address:port" ("[v6]:port"), or a socket's
                                  family and type ("inet stream");
                                  "(unreadable)" when its memory could not be
                                  read */
  const char *target2;       /**< rename: the new path; link: what the link
                                  points to; "" otherwise */
  const char *syscall;       /**< the system call: "openat", "unlinkat"... */
  mcp_guard_verdict verdict; /**< what the guard made of it */
  mcp_guard_attribution attribution; /**< how it was tied to the call */
  int open_flags; /**< write, create, truncate by open: its flags */
  long tid;       /**< the thread that made the call */
} mcp_guard_effect;

/** Receives each effect a guarded call makes outside its tool's hints.
 * Called on the guard's supervisor thread, one effect at a time, in the
 * order the kernel stopped them, while the thread that made the call
 * waits for the answer: keep it short, and call nothing that waits for a
 * guarded call. Never called with MCP_GUARD_QUIET. */
typedef void (*mcp_guard_report_fn)(const mcp_guard_effect *effect,
                                    void *user_data);

/** One tool's own writable paths (mcp_guard_options.tool_paths): they add
 * to writable_paths for that tool only, so that one tool's folder does not
 * open it to every read-only or additive tool. A call of a tool with a
 * resolver (mcp_tool.resolve) that its resolver made read-only for the
 * call's arguments does not get them (mcp_call_hints_resolved): they are
 * for the tool's writing calls, and such a read writes nothing, there
 * either (writable_paths still apply to it, as to every read-only call). */
typedef struct mcp_guard_tool_paths {
  const char *tool;                  /**< the tool's name; NULL ends the
                                          list */
  const char *const *writable_paths; /**< NULL-terminated, as
                                          mcp_guard_options.writable_paths */
} mcp_guard_tool_paths;

/** Options of mcp_guard_enable. Initialize with designated initializers;
 * a zeroed struct means: every rule, nothing allowed beyond them, fail
 * when the kernel cannot enforce them all. Everything is copied. */
typedef struct mcp_guard_options {
  unsigned flags;                         /**< MCP_GUARD_* bits */
  const char *const *writable_paths;      /**< NULL-terminated list of existing
                                               files and directories (each with
                                               everything below it) where
                                               read-only and additive tools may
                                               still write, create, remove and
                                               truncate; NULL = none */
  const unsigned short *tcp_ports;        /**< 0-terminated list of TCP ports
                                               closed-world tools may still
                                               connect to and bind (any
                                               address; no listen()); NULL =
                                               none: no TCP socket at all.
                                               Needs Landlock ABI 4 */
  unsigned threads;                       /**< worker threads per rule set;
                                               0 = 2 */
  unsigned landlock_abi_max;              /**< use at most this Landlock ABI
                                               (to run as on an older kernel);
                                               0 = whatever the kernel offers */
  mcp_guard_report_fn report;             /**< called with each effect outside
                                               a tool's hints; NULL = none (the
                                               log still has them) */
  void *report_user_data;                 /**< passed to report */
  const mcp_guard_tool_paths *tool_paths; /**< tools with writable paths
                                               of their own, ended by a
                                               NULL tool; NULL = none. A
                                               tool named here runs its
                                               read-only and additive calls
                                               on pools of its own: one
                                               spawner thread per such rule
                                               set (four per tool) at
                                               enable, and its workers when
                                               it is first called */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
} mcp_guard_options;

/** Turns the guard on for srv: from now on every tools/call runs on the
 * guard's workers under the rules of its tool's hints (see above), for
 * tools added before or after. opts NULL means a zeroed struct. Call it
 * once, before serving; the guard lasts as long as the server.
 *
 * Returns 0; MCP_ENOTSUP when the kernel cannot enforce a rule and
 * MCP_GUARD_BEST_EFFORT is not set (mcp_server_errmsg names the missing
 * kernel feature and the Landlock ABI found, e.g. "network rules need
 * Landlock ABI 4; found 2"); MCP_ENOENT when a writable path does not
 * exist; MCP_EINVAL (NULL srv, a NULL or relative writable path, an
 * unknown flag); MCP_ESTATE when srv has an executor already; MCP_ENOMEM;
 * MCP_EIO when the kernel refused to build or apply a rule set. The
 * reason is left for mcp_server_errmsg(srv). What the kernel enforces is
 * logged once, here, through the server's log (MCP_LOG_INFO when every
 * rule is kept: "keep every rule" then also means that system calls newer
 * than the guard are refused; MCP_LOG_WARNING naming what is not kept,
 * with MCP_GUARD_BEST_EFFORT); mcp_server_lint does not repeat it. Starts
 * one thread per guarded rule set (five) and, unless MCP_GUARD_QUIET, the
 * supervisor that reports effects (one), which the server's end joins.
 * MCP_EINVAL also for MCP_GUARD_OBSERVE with MCP_GUARD_QUIET.
 * Any thread. */
MCP_API int mcp_guard_enable(mcp_server *srv, const mcp_guard_options *opts);

/** The Landlock ABI version this kernel offers (1, 2, ...), 0 when it has
 * no Landlock or has it turned off, as probed now. Any thread. */
MCP_API int mcp_guard_landlock_abi(void);

#ifdef __cplusplus
}
#endif

#endif /* MCP_GUARD_H */
