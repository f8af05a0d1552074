/* Formatting into fixed buffers, and the clocks. */
#include <stdio.h>
#include <time.h>

#include "base.h"

void mcp__fmt(char *dst, size_t n, const char *fmt, ...) {
  if (n == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, n, fmt, ap);
  va_end(ap);
}

unsigned long long mcp__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000ull +
         (unsigned long long)ts.tv_nsec / 1000ull;
}

long long mcp__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
