/* The base layer of lib/ (lib/base): memory, buffers, formatting, clocks,
 * base64, hashing and randomness, and the table of protocol versions. No
 * MCP semantics live here; every other folder builds on it, and it is
 * linked, with hidden symbols, into both libraries (libmcp and, for the
 * HTTP transport, libmcp_http, whose copy allocates through libmcp's public
 * mcp_malloc: lib/base/alloc_client.c). Not installed. */
#ifndef MCP_BASE_H
#define MCP_BASE_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcp/mcp.h"

/* ---- allocator (alloc.c, alloc_client.c) ---------------------------------
 * Every allocation of the library, cJSON's included, goes through these, so
 * the allocator hook sees all of them and a test can fail any one. */
void *mcp__malloc(size_t n);
void *mcp__calloc(size_t count, size_t n);
void *mcp__realloc(void *p, size_t n);
void mcp__free(void *p);
char *mcp__strdup(const char *s); /* NULL for NULL or on failure */
char *mcp__strndup(const char *s, size_t n);
/* Whether a and b are the same string. Comparing first bytes settles most
 * mismatches (names and methods looked up in a message) without a call. */
static inline bool mcp__streq(const char *a, const char *b) {
  return a[0] == b[0] && strcmp(a, b) == 0;
}

/* ---- growable byte buffer (buf.c) ----------------------------------------
 * Latches its first failure: after an allocation fails every later append is
 * a no-op returning MCP_ENOMEM, so a sequence of appends needs one check. */
typedef struct mcp__buf {
  char *data; /* NUL-terminated when len > 0 or after mcp__buf_str */
  size_t len;
  size_t cap;
  int err; /* 0 or the first error */
} mcp__buf;

/* The appends below take a short path, inline, when the bytes fit in the
 * room already there (a reply is built from dozens of small pieces); the
 * rest goes to mcp__buf_append_slow, which grows the buffer. Each returns 0
 * or the buffer's latched error. */
int mcp__buf_append_slow(mcp__buf *b, const void *p, size_t n);
static inline int mcp__buf_append(mcp__buf *b, const void *p, size_t n) {
  /* cap is 0 or above len, so this keeps room for the NUL. */
  if (b->err == 0 && n < b->cap - b->len) {
    if (n)
      memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
  }
  return mcp__buf_append_slow(b, p, n);
}
static inline int mcp__buf_puts(mcp__buf *b, const char *s) {
  return mcp__buf_append(b, s, strlen(s));
}
static inline int mcp__buf_putc(mcp__buf *b, char c) {
  if (b->err == 0 && b->len + 1 < b->cap) {
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return 0;
  }
  return mcp__buf_append_slow(b, &c, 1);
}
/* Grows b by n bytes and returns where they start, for the caller to
 * fill (the buffer stays NUL-terminated after them); NULL on failure
 * (latched). */
char *mcp__buf_extend(mcp__buf *b, size_t n);
int mcp__buf_printf(mcp__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Returns the NUL-terminated contents ("" for an empty buffer), or NULL if
 * the buffer failed. The buffer still owns it. */
const char *mcp__buf_str(mcp__buf *b);
/* Hands the contents to the caller (free with mcp__free) and empties b. */
char *mcp__buf_take(mcp__buf *b, size_t *len);
void mcp__buf_free(mcp__buf *b);

/* ---- formatting and clocks (fmt.c) --------------------------------------- */
/* Formats into a fixed buffer, truncating; used for error messages. */
void mcp__fmt(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Monotonic microseconds (CLOCK_MONOTONIC). */
unsigned long long mcp__now_us(void);
/* The wall clock (CLOCK_REALTIME) in milliseconds since the epoch: for
 * times other processes read (records in a store, task timestamps). */
long long mcp__wall_ms(void);

/* ---- threads (thread.c) --------------------------------------------------
 * A signal sent to the process (SIGTERM, SIGINT, SIGHUP) goes to any
 * thread that does not block it; on one of the library's, its default
 * action would end the process while the application waits for it (as
 * mcp_http_serve_until_signal does in sigwait). So every thread the library
 * starts blocks every signal but the faults it raises itself (SIGSEGV and
 * the like), whatever its starter's mask. */

/* Blocks, in the calling thread, every signal but the faults, its mask
 * before to *old (restore it with pthread_sigmask(SIG_SETMASK, old,
 * NULL)). For threads started by code not ours (libmicrohttpd's), which
 * inherit the mask. */
void mcp__signals_quiet(sigset_t *old);
/* pthread_create(t, attr, fn, arg) with the new thread's signals quiet
 * (above); the caller's mask is as it was. Returns pthread_create's
 * result. */
int mcp__thread_start(pthread_t *t, const pthread_attr_t *attr,
                      void *(*fn)(void *), void *arg);

/* ---- min-heap (heap.c) ---------------------------------------------------
 * An intrusive binary min-heap: the element embeds an mcp__heap_node, so
 * inserting never allocates and removing any element (not only the least)
 * is O(log n). The caller orders elements with less and guards the heap
 * with its own lock. The tree is kept complete: the node at 1-based
 * position k is reached from the root by the bits of k below its top bit,
 * 0 left and 1 right. */
typedef struct mcp__heap_node {
  struct mcp__heap_node *left, *right, *parent;
} mcp__heap_node;

typedef bool (*mcp__heap_less)(const mcp__heap_node *a,
                               const mcp__heap_node *b);

typedef struct mcp__heap {
  mcp__heap_node *min; /* the root: the least element, NULL when empty */
  size_t n;
  mcp__heap_less less;
} mcp__heap;

/* Adds node, which is in no heap. */
void mcp__heap_insert(mcp__heap *h, mcp__heap_node *node);
/* Takes node, which is in h, out of it. */
void mcp__heap_remove(mcp__heap *h, mcp__heap_node *node);

/* ---- intrusive list (inline) ----------------------------------------------
 * The one doubly linked list of lib/: an element embeds an mcp__list link,
 * and a list is a head link that is its own neighbour when empty (a ring),
 * so inserting and removing never allocate, never branch on an end and
 * never look for the head. mcp__container_of turns a link back into the
 * element holding it. The caller guards a list with its own lock. */
typedef struct mcp__list {
  struct mcp__list *next, *prev;
} mcp__list;

#define mcp__container_of(ptr, type, member)                                   \
  ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Makes head an empty list (or a link that is in none). */
static inline void mcp__list_init(mcp__list *head) {
  head->next = head->prev = head;
}
static inline bool mcp__list_empty(const mcp__list *head) {
  return head->next == head;
}
/* Puts link, which is in no list, last in head's list. */
static inline void mcp__list_push(mcp__list *head, mcp__list *link) {
  link->prev = head->prev;
  link->next = head;
  head->prev->next = link;
  head->prev = link;
}
/* Puts link, which is in no list, first in head's list. */
static inline void mcp__list_push_front(mcp__list *head, mcp__list *link) {
  mcp__list_push(head->next, link);
}
/* Takes link out of its list; it is then in none (removing it again does
 * nothing). */
static inline void mcp__list_remove(mcp__list *link) {
  link->prev->next = link->next;
  link->next->prev = link->prev;
  mcp__list_init(link);
}
/* Whether link is in a list (pushed, not removed since). */
static inline bool mcp__list_linked(const mcp__list *link) {
  return link->next != link;
}
/* Walks head's list from first to last; the body may remove link itself
 * (the next one is read before it runs), nothing else. */
#define mcp__list_each(link, head)                                             \
  for (mcp__list *link = (head)->next, *link##_next_ = link->next;             \
       link != (head); link = link##_next_, link##_next_ = link->next)

/* ---- base64 (base64.c): the one codec of lib/ ----------------------------
 * Standard base64 (RFC 4648 §4) with padding, or base64url (§5) without.
 * Decoding is strict: only the alphabet's characters, padding exactly
 * where the standard alphabet puts it (and never in base64url), no length
 * of 4k+1, and the unused low bits of the last character zero, so every
 * byte string has exactly one accepted spelling. */
#define MCP__BASE64_URL 1u    /* the URL-safe alphabet, no padding */
#define MCP__BASE64_NO_NUL 2u /* decoding: a NUL byte makes it invalid */

/* Characters the encoding of n bytes takes (without a NUL). */
static inline size_t mcp__base64_len(size_t n, unsigned flags) {
  return flags & MCP__BASE64_URL ? n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0)
                                 : (n + 2) / 3 * 4;
}
/* Writes the encoding of the n bytes at in to out, which has room for
 * mcp__base64_len(n, flags) + 1 characters, and a NUL; returns the length
 * without it. */
size_t mcp__base64_encode(char *out, const void *in, size_t n, unsigned flags);
/* Decodes the n characters at in into out (cap bytes; out NULL only
 * checks, whatever cap says). Returns true with *outlen set (outlen may be
 * NULL); false for anything but the one canonical encoding, or when the
 * bytes do not fit. Allocates nothing. */
bool mcp__base64_decode(const char *in, size_t n, unsigned char *out,
                        size_t cap, size_t *outlen, unsigned flags);
/* The same, appending to b: returns 0, MCP_EINVAL (not canonical) or the
 * buffer's error. */
int mcp__buf_base64_decode(mcp__buf *b, const char *in, size_t n,
                           unsigned flags);
/* Appends the encoding of n bytes to b. Returns 0 or b's error. */
int mcp__buf_base64(mcp__buf *b, const void *in, size_t n, unsigned flags);
/* Standard base64 of n bytes appended to b (mcp__buf_base64, flags 0). */
static inline int mcp__base64(mcp__buf *b, const void *p, size_t n) {
  return mcp__buf_base64(b, p, n, 0);
}
/* Unpadded base64url appended to b, and its strict inverse. */
static inline int mcp__base64url(mcp__buf *b, const void *p, size_t n) {
  return mcp__buf_base64(b, p, n, MCP__BASE64_URL);
}
static inline int mcp__base64url_decode(const char *s, size_t n,
                                        mcp__buf *out) {
  return mcp__buf_base64_decode(out, s, n, MCP__BASE64_URL);
}

/* ---- hashing and randomness (crypto.c) ----------------------------------- */
typedef struct mcp__sha256 {
  uint32_t h[8];
  unsigned long long len;
  unsigned char buf[64];
  size_t fill;
} mcp__sha256;

void mcp__sha256_init(mcp__sha256 *s);
void mcp__sha256_update(mcp__sha256 *s, const void *data, size_t n);
void mcp__sha256_final(mcp__sha256 *s, unsigned char out[32]);
void mcp__hmac_sha256(const void *key, size_t key_len, const void *msg,
                      size_t msg_len, unsigned char out[32]);
/* Compares n bytes in time independent of where they differ. */
int mcp__ct_equal(const void *a, const void *b, size_t n);
/* Fills buf from the kernel's CSPRNG (getrandom); MCP_EIO when it cannot:
 * there is never a weaker fallback. */
int mcp__random(void *buf, size_t n);

/* ---- protocol versions (version.c): the one table ------------------------
 * Ordered oldest to newest, so feature checks are comparisons. */
typedef enum mcp__version {
  MCP__V2024_11_05 = 0,
  MCP__V2025_03_26,
  MCP__V2025_06_18,
  MCP__V2025_11_25,
  MCP__V2026_07_28, /* the modern era: stateless, no initialize */
  MCP__VERSION_COUNT
} mcp__version;
/* The newest version initialize can negotiate. */
#define MCP__VERSION_LATEST MCP__V2025_11_25
/* The first version of the modern era. */
#define MCP__VERSION_MODERN MCP__V2026_07_28

const char *mcp__version_name(mcp__version v);
/* Returns the version named s (NULL finds none), or -1. */
int mcp__version_find(const char *s);

#endif
