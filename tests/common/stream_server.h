/* The server side of the stream tests (load.streams and bench_streams):
 * a small server on libmcp's public API whose limits are raised for
 * thousands of streams, run as a child process of the test and driven over
 * its standard input, and the helpers that start such a child, talk to it
 * and read its RSS and threads from /proc.
 *
 * A child prints "port N" once it listens and then answers each command
 * line with one line; at the end of its input it stops and exits. The
 * libmcp server (ss_serve) knows
 *   publish  one mcp_server_resource_updated of its resource: prints
 *            "told N us T" (subscribers told, microseconds of the call)
 *   stats    prints "blocks B bytes Y", the library's live blocks and
 *            bytes counted through mcp_set_allocator, after malloc_trim so
 *            that the RSS read next is what the process holds
 * Test code only, plain POSIX (Linux /proc); every wait has a deadline. */
#ifndef MCP_TEST_STREAM_SERVER_H
#define MCP_TEST_STREAM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Raises this process's soft RLIMIT_NOFILE to its hard limit; returns how
 * many descriptors it may open (-1 when it cannot tell). */
long ss_raise_nofile(void);

/* Sets glibc's heap to one arena with fixed trim and mmap thresholds, so
 * that RSS follows what is allocated rather than glibc's policy; call
 * first thing in a server child. */
void ss_heap_fixed(void);

/* The libmcp server: name (the server's name, and the prefix of what it
 * logs on standard error) serving one text resource at uri on 127.0.0.1,
 * an ephemeral port, with limits raised for n streams and keep-alive
 * comments every keepalive_s seconds, answering the commands above on
 * standard input until it closes. Returns the process's exit status: 0
 * when the server stopped with no block of the library left. */
int ss_serve(const char *name, long n, const char *uri, unsigned keepalive_s);

/* A server child and the pipes to its standard input and output. */
typedef struct ss_child {
  pid_t pid;
  int in, out;   /* its standard input and output */
  char *pending; /* what it printed that no ss_line took yet */
  size_t npending, cap;
  uint16_t port;
} ss_child;

/* Starts self mode n (self run again, in front of it MCP_TEST_LAUNCHER
 * split at spaces when that is set) and reads its "port N" within ms.
 * Returns 0, or -1 (errno's reason on standard error; the child's own is
 * on its standard error) with nothing left running. */
int ss_start(ss_child *c, const char *self, const char *mode, long n, long ms);
/* The next line c printed, without its newline, within ms; false at its
 * end or at the deadline. */
bool ss_line(ss_child *c, char *out, size_t size, long ms);
/* Writes command (a whole line) to c; false when c is gone. */
bool ss_tell(ss_child *c, const char *command);
/* ss_tell, then ss_line within ms. */
bool ss_ask(ss_child *c, const char *command, char *out, size_t size, long ms);
/* Ends c's input and returns its wait status; kills it (and returns -1)
 * when it has not exited within ms. */
int ss_stop(ss_child *c, long ms);

/* A field of /proc/PID/status ("VmRSS:") in KiB, or -1. */
long ss_status_kib(pid_t pid, const char *field);
/* Threads of process pid (/proc/PID/task). */
long ss_threads(pid_t pid);

#endif
