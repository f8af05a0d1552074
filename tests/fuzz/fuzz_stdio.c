/* libFuzzer target: the stdio transport (mcp_serve_stdio) on pipes, with
 * the input cut into chunks of fuzzer-chosen sizes.
 *
 * Input: one options byte, k chunk-size bytes, then the bytes to send.
 * The low four bits of the options byte give k (0-15); bits 4-5 pick
 * max_line (the default 4 MiB, 64, 512 or 4096 bytes). A writer thread
 * sends the payload in chunks whose sizes cycle through the k bytes
 * (each 1-256; k = 0 sends it whole) and, after each chunk, waits until
 * the server has read everything in the pipe, so every chunk boundary is a
 * read() boundary; after 256 chunks the rest goes at once. A reader thread
 * takes the output. The server is the fixture of fixture.h, with deferred
 * calls finished from inside their handler, so end of input never waits
 * for them.
 *
 * Checked beyond "no crash, no leak": mcp_serve_stdio returns 0; every
 * output line is one strict JSON-RPC message and the output ends with a
 * newline. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PAYLOAD (16u << 10) /* well under a pipe's 64 KiB */
#define MAX_THROTTLED 256       /* chunks sent one read at a time */

static mcp_server *srv;

typedef struct writer {
  int fd, server_fd; /* our end, and the server's end of the pipe */
  const uint8_t *sizes;
  size_t nsizes;
  const uint8_t *payload;
  size_t len;
  atomic_bool *served;
} writer;

static unsigned long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000 +
         (unsigned long long)ts.tv_nsec / 1000000;
}

/* Waits (at most a second) until the server has read the pipe empty or
 * stopped serving. */
static void wait_drained(const writer *w) {
  unsigned long long deadline = now_ms() + 1000;
  for (;;) {
    int queued = 0;
    if (ioctl(w->server_fd, FIONREAD, &queued) != 0 || queued == 0 ||
        atomic_load(w->served) || now_ms() > deadline)
      return;
    nanosleep(&(struct timespec){0, 20 * 1000}, NULL);
  }
}

static bool write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

static void *write_input(void *arg) {
  writer *w = arg;
  size_t at = 0;
  for (size_t i = 0; w->nsizes > 0 && i < MAX_THROTTLED && at < w->len; i++) {
    size_t n = (size_t)w->sizes[i % w->nsizes] + 1;
    if (n > w->len - at)
      n = w->len - at;
    if (!write_all(w->fd, w->payload + at, n))
      break;
    at += n;
    wait_drained(w);
  }
  if (at < w->len)
    write_all(w->fd, w->payload + at, w->len - at);
  close(w->fd);
  return NULL;
}

typedef struct reader {
  int fd;
  char *buf;
  size_t len, cap;
} reader;

static void *read_output(void *arg) {
  reader *r = arg;
  for (;;) {
    if (r->cap - r->len < 4096) {
      r->cap = r->cap ? r->cap * 2 : 65536;
      r->buf = realloc(r->buf, r->cap);
      if (r->buf == NULL)
        abort();
    }
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    size_t start = 0, end = r->len + (size_t)n;
    for (size_t i = r->len; i < end; i++) {
      if (r->buf[i] == '\n') {
        fuzz_check_message(r->buf + start, i - start);
        start = i + 1;
      }
    }
    memmove(r->buf, r->buf + start, end - start);
    r->len = end - start;
  }
  return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  srv = fuzz_server_new(true);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t k = data[0] & 15;
  static const size_t max_lines[] = {0, 64, 512, 4096};
  size_t max_line = max_lines[(data[0] >> 4) & 3];
  if (size < 1 + k || size - 1 - k > MAX_PAYLOAD)
    return 0;

  int in[2], out[2];
  if (pipe(in) != 0)
    abort();
  if (pipe(out) != 0)
    abort();
  atomic_bool served = false;
  writer w = {.fd = in[1],
              .server_fd = in[0],
              .sizes = data + 1,
              .nsizes = k,
              .payload = data + 1 + k,
              .len = size - 1 - k,
              .served = &served};
  reader r = {.fd = out[0]};
  pthread_t wt, rt;
  if (pthread_create(&wt, NULL, write_input, &w) != 0 ||
      pthread_create(&rt, NULL, read_output, &r) != 0)
    abort();

  const mcp_stdio_options opts = {.principal = &fuzz_principal,
                                  .in_fd = in[0],
                                  .out_fd = out[1],
                                  .max_line = max_line};
  int rc = mcp_serve_stdio(srv, &opts);
  atomic_store(&served, true);
  close(out[1]);
  pthread_join(wt, NULL);
  pthread_join(rt, NULL);
  close(in[0]);
  close(out[0]);
  if (rc != 0 || r.len != 0)
    abort(); /* a failure, or output that does not end with a newline */
  free(r.buf);
  return 0;
}
