/* The base layer's small modules, called directly (lib/base): the
 * allocator hook (alloc.c), the growable buffer that latches its first
 * failure (buf.c), fixed-buffer formatting and the monotonic clock
 * (fmt.c), string copies (strdup.c) and the one table of protocol
 * versions (version.c). base64.c and crypto.c are test_crypto's, heap.c
 * test_heap's. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "testutil.h"

/* ---- alloc.c --------------------------------------------------------------
 */

static long calls;

static void *count_malloc(size_t n, void *ud) {
  (void)ud;
  calls++;
  return malloc(n);
}

static void *count_realloc(void *p, size_t n, void *ud) {
  (void)ud;
  calls++;
  return realloc(p, n);
}

static void count_free(void *p, void *ud) {
  (void)ud;
  calls++;
  free(p);
}

START_TEST(allocator_hook_sees_every_block) {
  calls = 0;
  mcp_allocator a = {.malloc_fn = count_malloc,
                     .realloc_fn = count_realloc,
                     .free_fn = count_free};
  ck_assert_int_eq(mcp_set_allocator(&a), 0);
  void *p = mcp__malloc(0); /* a block, even of nothing */
  ck_assert_ptr_nonnull(p);
  p = mcp__realloc(p, 64);
  ck_assert_ptr_nonnull(p);
  mcp__free(p);
  ck_assert_int_eq(calls, 3);
  /* cJSON's blocks go through the same hook. */
  cJSON *o = cJSON_CreateObject();
  ck_assert_int_eq(calls, 4);
  cJSON_Delete(o);
  ck_assert_int_eq(calls, 5);
  /* The public face allocates through it too. */
  p = mcp_calloc(4, 8);
  ck_assert_ptr_nonnull(p);
  for (size_t i = 0; i < 32; i++)
    ck_assert_int_eq(((unsigned char *)p)[i], 0);
  mcp_free(p);
  mcp_free(NULL);
  ck_assert_int_eq(calls, 7);
  ck_assert_int_eq(mcp_set_allocator(NULL), 0);
  p = mcp__malloc(8);
  mcp__free(p);
  ck_assert_int_eq(calls, 7); /* back to the C library */
}
END_TEST

START_TEST(allocator_incomplete_refused) {
  calls = 0;
  mcp_allocator good = {.malloc_fn = count_malloc,
                        .realloc_fn = count_realloc,
                        .free_fn = count_free};
  ck_assert_int_eq(mcp_set_allocator(&good), 0);
  const mcp_allocator bad[] = {
      {.malloc_fn = NULL, .realloc_fn = count_realloc, .free_fn = count_free},
      {.malloc_fn = count_malloc, .realloc_fn = NULL, .free_fn = count_free},
      {.malloc_fn = count_malloc, .realloc_fn = count_realloc, .free_fn = NULL},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    ck_assert_int_eq(mcp_set_allocator(&bad[i]), MCP_EINVAL);
  /* The allocator in place stays. */
  mcp__free(mcp__malloc(1));
  ck_assert_int_eq(calls, 2);
  ck_assert_int_eq(mcp_set_allocator(NULL), 0);
}
END_TEST

START_TEST(calloc_overflow) {
  tu_alloc_install(1000); /* counts every request, fails none of these */
  ck_assert_ptr_null(mcp__calloc(SIZE_MAX / 2, 3));
  ck_assert_ptr_null(mcp_calloc(3, SIZE_MAX / 2));
  ck_assert_int_eq(tu_alloc.count, 0); /* refused before asking */
  void *p = mcp__calloc(0, 16);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(tu_alloc.count, 1);
  mcp__free(p);
  tu_assert_no_leak(0);
  tu_alloc_remove();
}
END_TEST

/* ---- buf.c ----------------------------------------------------------------
 */

START_TEST(buf_appends) {
  mcp__buf b = {0};
  ck_assert_str_eq(mcp__buf_str(&b), ""); /* an empty buffer is "" */
  ck_assert_int_eq(mcp__buf_puts(&b, "ab"), 0);
  ck_assert_int_eq(mcp__buf_putc(&b, 'c'), 0);
  ck_assert_int_eq(mcp__buf_append(&b, "d\0e", 3), 0);
  ck_assert_uint_eq(b.len, 6);
  ck_assert_int_eq(memcmp(b.data, "abcd\0e", 7), 0);
  ck_assert_int_eq(mcp__buf_printf(&b, "-%d-%s", 42, "x"), 0);
  ck_assert_uint_eq(b.len, 11);
  ck_assert_int_eq(memcmp(b.data + 6, "-42-x", 6), 0);
  char *at = mcp__buf_extend(&b, 3);
  ck_assert_ptr_nonnull(at);
  memcpy(at, "XYZ", 3);
  ck_assert_uint_eq(b.len, 14);
  ck_assert_int_eq(b.data[14], '\0');
  size_t len = 0;
  char *s = mcp__buf_take(&b, &len);
  ck_assert_uint_eq(len, 14);
  ck_assert_int_eq(memcmp(s, "abcd\0e-42-xXYZ", 15), 0);
  ck_assert_ptr_null(b.data); /* emptied */
  ck_assert_uint_eq(b.len, 0);
  mcp__free(s);
}
END_TEST

/* Past the room it starts with: growth, and printf longer than its own
 * small buffer. */
START_TEST(buf_grows) {
  mcp__buf b = {0};
  char piece[1000];
  memset(piece, 'p', sizeof piece);
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(mcp__buf_append(&b, piece, sizeof piece), 0);
  ck_assert_uint_eq(b.len, 100000);
  ck_assert_uint_gt(b.cap, b.len);
  ck_assert_int_eq(mcp__buf_printf(&b, "%300s|", "r"), 0);
  ck_assert_uint_eq(b.len, 100301);
  ck_assert_int_eq(b.data[100299], 'r');
  ck_assert_int_eq(b.data[100300], '|');
  ck_assert_int_eq(b.data[100301], '\0');
  mcp__buf_free(&b);
  ck_assert_ptr_null(b.data);
  mcp__buf_free(&b); /* twice is harmless */
}
END_TEST

/* The first failure latches: every later call is a no-op returning it,
 * and the contents are gone. */
START_TEST(buf_latches_its_first_failure) {
  mcp__buf b = {0};
  tu_alloc_install(1);
  ck_assert_int_eq(mcp__buf_puts(&b, "lost"), MCP_ENOMEM);
  tu_alloc_disarm();
  ck_assert_int_eq(mcp__buf_puts(&b, "later"), MCP_ENOMEM);
  ck_assert_int_eq(mcp__buf_putc(&b, 'c'), MCP_ENOMEM);
  ck_assert_int_eq(mcp__buf_printf(&b, "%d", 1), MCP_ENOMEM);
  ck_assert_ptr_null(mcp__buf_extend(&b, 1));
  ck_assert_ptr_null(mcp__buf_str(&b));
  size_t len = 99;
  ck_assert_ptr_null(mcp__buf_take(&b, &len));
  ck_assert_uint_eq(len, 99);
  ck_assert_int_eq(b.err, 0); /* take frees and resets */
  tu_assert_no_leak(1);

  /* A length that cannot be had is refused without allocating. */
  ck_assert_int_eq(mcp__buf_puts(&b, "x"), 0);
  tu_alloc_arm(1000); /* counts every request */
  long before = tu_alloc.count;
  ck_assert_ptr_null(mcp__buf_extend(&b, SIZE_MAX - 8));
  ck_assert_int_eq(b.err, MCP_ENOMEM);
  ck_assert_int_eq(tu_alloc.count, before);
  mcp__buf_free(&b);
  ck_assert_int_eq(tu_alloc_disarm(), 1);
  tu_assert_no_leak(0);
  tu_alloc_remove();
}
END_TEST

/* A failure in the middle of a grown buffer: the old block is freed with
 * the buffer, not leaked. */
START_TEST(buf_failure_after_growth) {
  mcp__buf b = {0};
  tu_alloc_install(2);
  char piece[300];
  memset(piece, 'q', sizeof piece);
  ck_assert_int_eq(mcp__buf_append(&b, piece, 200), 0);
  ck_assert_int_eq(mcp__buf_append(&b, piece, sizeof piece), MCP_ENOMEM);
  ck_assert_uint_eq(b.len, 200);
  mcp__buf_free(&b);
  tu_assert_no_leak(2);
  tu_alloc_remove();
}
END_TEST

/* ---- fmt.c and strdup.c ---------------------------------------------------
 */

START_TEST(fmt_truncates) {
  char out[8];
  mcp__fmt(out, sizeof out, "%s-%d", "abc", 12);
  ck_assert_str_eq(out, "abc-12");
  mcp__fmt(out, sizeof out, "%s", "0123456789");
  ck_assert_str_eq(out, "0123456");
  memcpy(out, "keep", 5);
  mcp__fmt(out, 0, "%s", "nothing written");
  ck_assert_str_eq(out, "keep");
  /* The clock is monotonic: it never goes back. */
  unsigned long long a = mcp__now_us(), b = mcp__now_us();
  ck_assert(b >= a);
  ck_assert(a > 0);
  /* The wall clock is the epoch's, in milliseconds: after 2020-01-01. */
  long long w = mcp__wall_ms();
  time_t t = time(NULL);
  ck_assert(w > 1577836800000LL);
  ck_assert(w / 1000 >= (long long)t - 1 && w / 1000 <= (long long)t + 1);
}
END_TEST

/* ---- thread.c --------------------------------------------------------------
 */

/* The mask of the thread that runs it, into *arg. */
static void *read_mask(void *arg) {
  pthread_sigmask(SIG_SETMASK, NULL, (sigset_t *)arg);
  return NULL;
}

/* A thread the library starts takes no signal sent to the process, but the
 * faults it raises itself stay open; whatever the starter's mask (empty or
 * with SIGUSR1 only), the starter's is as it was. */
START_TEST(started_threads_take_no_process_signal) {
  static const int quiet[] = {SIGTERM, SIGINT,  SIGHUP, SIGUSR1,
                              SIGPIPE, SIGCHLD, SIGALRM};
  static const int faults[] = {SIGSEGV, SIGBUS,  SIGFPE,
                               SIGILL,  SIGTRAP, SIGSYS};
  sigset_t saved;
  pthread_sigmask(SIG_SETMASK, NULL, &saved);
  for (int round = 0; round < 2; round++) {
    sigset_t mine, now, theirs;
    sigemptyset(&mine);
    if (round == 1)
      sigaddset(&mine, SIGUSR1);
    pthread_sigmask(SIG_SETMASK, &mine, NULL);
    pthread_t t;
    ck_assert_int_eq(mcp__thread_start(&t, NULL, read_mask, &theirs), 0);
    pthread_join(t, NULL);
    for (size_t i = 0; i < sizeof quiet / sizeof *quiet; i++)
      ck_assert_msg(sigismember(&theirs, quiet[i]), "signal %d open", quiet[i]);
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
      ck_assert_msg(!sigismember(&theirs, faults[i]), "fault %d blocked",
                    faults[i]);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    ck_assert_int_eq(sigismember(&now, SIGUSR1), round == 1);
    ck_assert(!sigismember(&now, SIGTERM));
  }
  /* With attributes: the stack size asked for is the thread's. */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t t;
  sigset_t theirs;
  ck_assert_int_eq(mcp__thread_start(&t, &attr, read_mask, &theirs), 0);
  pthread_join(t, NULL);
  ck_assert(sigismember(&theirs, SIGTERM));
  /* A start the system refuses (a stack no address space holds) is
   * pthread_create's error, and leaves the starter's mask as it was. */
  sigset_t mine, now;
  sigemptyset(&mine);
  pthread_sigmask(SIG_SETMASK, &mine, NULL);
  ck_assert_int_eq(pthread_attr_setstacksize(&attr, SIZE_MAX / 2), 0);
  ck_assert_int_ne(mcp__thread_start(&t, &attr, read_mask, &theirs), 0);
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  ck_assert(!sigismember(&now, SIGTERM));
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
}
END_TEST

START_TEST(string_copies) {
  tu_alloc_install(0);
  char *s = mcp__strdup("hello");
  ck_assert_str_eq(s, "hello");
  mcp__free(s);
  s = mcp__strndup("hello", 3);
  ck_assert_str_eq(s, "hel");
  mcp__free(s);
  s = mcp__strndup("a\0b", 3); /* n bytes, whatever they are */
  ck_assert_int_eq(memcmp(s, "a\0b", 4), 0);
  mcp__free(s);
  ck_assert_ptr_null(mcp__strdup(NULL));
  ck_assert_ptr_null(mcp__strndup(NULL, 4));
  tu_alloc_arm(1);
  ck_assert_ptr_null(mcp__strdup("lost"));
  ck_assert_int_eq(tu_alloc_disarm(), 1);
  tu_assert_no_leak(1);
  tu_alloc_remove();
}
END_TEST

/* ---- version.c ------------------------------------------------------------
 */

START_TEST(version_table) {
  static const char *const names[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                      "2025-11-25", "2026-07-28"};
  ck_assert_int_eq(MCP__VERSION_COUNT, TU_COUNT(names));
  for (int v = 0; v < MCP__VERSION_COUNT; v++) {
    ck_assert_str_eq(mcp__version_name((mcp__version)v), names[v]);
    ck_assert_int_eq(mcp__version_find(names[v]), v);
  }
  ck_assert_str_eq(mcp__version_name(MCP__VERSION_LATEST), "2025-11-25");
  ck_assert_str_eq(mcp__version_name(MCP__VERSION_MODERN), "2026-07-28");
  ck_assert_int_eq(mcp__version_find("2025-11-24"), -1);
  ck_assert_int_eq(mcp__version_find("2025-11-25 "), -1);
  ck_assert_int_eq(mcp__version_find(""), -1);
  ck_assert_int_eq(mcp__version_find(NULL), -1);
}
END_TEST

typedef struct item {
  int v;
  mcp__list link;
} item;

/* The values of l's items in order, as digits, into out. */
static const char *list_digits(const mcp__list *l, char *out) {
  size_t n = 0;
  mcp__list_each(k, l) out[n++] =
      (char)('0' + mcp__container_of(k, item, link)->v);
  out[n] = '\0';
  return out;
}

START_TEST(intrusive_list) {
  char buf[16];
  item it[5];
  mcp__list l;
  mcp__list_init(&l);
  ck_assert(mcp__list_empty(&l));
  ck_assert_str_eq(list_digits(&l, buf), "");
  for (int i = 0; i < 5; i++) {
    it[i].v = i;
    mcp__list_init(&it[i].link);
    ck_assert(!mcp__list_linked(&it[i].link));
  }
  mcp__list_push(&l, &it[1].link);
  mcp__list_push(&l, &it[2].link);
  mcp__list_push_front(&l, &it[0].link);
  mcp__list_push(&l, &it[3].link);
  ck_assert(!mcp__list_empty(&l));
  ck_assert(mcp__list_linked(&it[2].link));
  ck_assert_str_eq(list_digits(&l, buf), "0123");
  /* Removing the link the walk stands on, middle, first and last. */
  mcp__list_each(k, &l) {
    int v = mcp__container_of(k, item, link)->v;
    if (v == 0 || v == 2 || v == 3)
      mcp__list_remove(k);
  }
  ck_assert_str_eq(list_digits(&l, buf), "1");
  ck_assert(!mcp__list_linked(&it[2].link));
  mcp__list_remove(&it[2].link); /* in no list: nothing happens */
  ck_assert_str_eq(list_digits(&l, buf), "1");
  mcp__list_remove(&it[1].link);
  ck_assert(mcp__list_empty(&l));
  mcp__list_push(&l, &it[4].link);
  ck_assert_str_eq(list_digits(&l, buf), "4");
}
END_TEST

int main(void) {
  Suite *s = suite_create("base");
  TCase *t = tu_tcase(s, "alloc", NULL, NULL, 0);
  tcase_add_test(t, allocator_hook_sees_every_block);
  tcase_add_test(t, allocator_incomplete_refused);
  tcase_add_test(t, calloc_overflow);
  t = tu_tcase(s, "buf", NULL, NULL, 0);
  tcase_add_test(t, buf_appends);
  tcase_add_test(t, buf_grows);
  tcase_add_test(t, buf_latches_its_first_failure);
  tcase_add_test(t, buf_failure_after_growth);
  t = tu_tcase(s, "strings", NULL, NULL, 0);
  tcase_add_test(t, fmt_truncates);
  tcase_add_test(t, string_copies);
  t = tu_tcase(s, "threads", NULL, NULL, 0);
  tcase_add_test(t, started_threads_take_no_process_signal);
  t = tu_tcase(s, "versions", NULL, NULL, 0);
  tcase_add_test(t, version_table);
  t = tu_tcase(s, "list", NULL, NULL, 0);
  tcase_add_test(t, intrusive_list);
  return tu_run(s);
}
