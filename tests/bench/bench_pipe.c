/* bench_pipe: ceiling (c), a process that answers every line it reads on
 * standard input with one fixed line on standard output: the cost of the
 * pipes, the reads, the writes and the wake-ups, with no work in between.
 * It reads and splits lines as the stdio transport does (one buffer, one
 * write per reply) and exits at end of input. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_fixed.h"

static int write_all(const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDOUT_FILENO, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int main(void) {
  static const char reply[] = BENCH_FIXED_BODY "\n";
  static char buf[1 << 16];
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n == 0 ? 0 : 1;
    /* A line may straddle two reads; only its newline counts. */
    for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
      if (write_all(reply, sizeof reply - 1) != 0)
        return 1;
  }
}
