/* The one cursor codec of lib/: the opaque cursors of paged lists
 * (tools, prompts, resources and templates in the registry; tasks/list in
 * the engine), written and read strictly.
 *
 * A cursor is the list's tag and 16 hex digits: the sequence number of
 * the last entry the previous page listed, enciphered. Sequence
 * numbers only grow, so a cursor stays meaningful while entries come and
 * go: the next page starts after it. They count every entry ever added,
 * those a caller may not see too, so a caller must not read them: the gap
 * between two entries it was shown would tell how many it was not, and a
 * cursor it made up would say how many entries there are. The cipher is a
 * Feistel network over the 64 bits, its round function HMAC-SHA256 under
 * the page reader's key (the server's requestState key, which every
 * process of a deployment may share, so any of them continues a listing).
 * Only cursors this server could have issued for that list are accepted.
 */
#include <stdint.h>
#include <string.h>

#include "registry.h"

#define CURSOR_ROUNDS 4

/* The round function: 32 bits of HMAC(key, label, tag, round, half). */
static uint32_t cursor_round(const unsigned char *key, char tag, int round,
                             uint32_t half) {
  unsigned char msg[] = {'m',
                         'c',
                         'p',
                         '-',
                         'c',
                         'u',
                         'r',
                         's',
                         'o',
                         'r',
                         (unsigned char)tag,
                         (unsigned char)round,
                         (unsigned char)(half >> 24),
                         (unsigned char)(half >> 16),
                         (unsigned char)(half >> 8),
                         (unsigned char)half};
  unsigned char out[32];
  mcp__hmac_sha256(key, MCP__CURSOR_KEY, msg, sizeof msg, out);
  return (uint32_t)out[0] << 24 | (uint32_t)out[1] << 16 |
         (uint32_t)out[2] << 8 | out[3];
}

/* A cursor's number v enciphered (with decipher, deciphered) under key for
 * the list whose tag is tag: a 64-bit Feistel permutation, so that a
 * cursor shows a caller no count of what it may not see. */
static unsigned long long cipher(const unsigned char *key, char tag,
                                 unsigned long long v, bool decipher) {
  uint32_t l = (uint32_t)(v >> 32), r = (uint32_t)v;
  for (int i = 0; i < CURSOR_ROUNDS; i++) {
    int round = decipher ? CURSOR_ROUNDS - 1 - i : i;
    if (decipher) {
      uint32_t prev_r = l;
      l = r ^ cursor_round(key, tag, round, l);
      r = prev_r;
    } else {
      uint32_t next_l = r;
      r = l ^ cursor_round(key, tag, round, r);
      l = next_l;
    }
  }
  return (uint64_t)l << 32 | r;
}

void mcp__cursor_encode(const unsigned char *key, char tag,
                        unsigned long long v, char out[MCP__CURSOR_LEN + 1]) {
  static const char hex[] = "0123456789abcdef";
  unsigned long long c = cipher(key, tag, v, false);
  out[0] = tag;
  for (int i = 16; i >= 1; i--, c >>= 4)
    out[i] = hex[c & 0xf];
  out[MCP__CURSOR_LEN] = '\0';
}

int mcp__cursor_decode(const unsigned char *key, char tag, const char *cursor,
                       unsigned long long newest, unsigned long long *v) {
  if (cursor == NULL || cursor[0] != tag)
    return MCP_EINVAL;
  uint64_t c = 0;
  for (int i = 1; i < MCP__CURSOR_LEN; i++) {
    char ch = cursor[i];
    int d = ch >= '0' && ch <= '9'   ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                     : -1;
    if (d < 0) /* a NUL too: shorter than a cursor */
      return MCP_EINVAL;
    c = c << 4 | (uint64_t)d;
  }
  if (cursor[MCP__CURSOR_LEN] != '\0')
    return MCP_EINVAL;
  c = cipher(key, tag, c, true);
  if (c == 0 || c > newest)
    return MCP_EINVAL;
  *v = c;
  return 0;
}
