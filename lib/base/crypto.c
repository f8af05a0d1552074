/* SHA-256 (FIPS 180-4), HMAC-SHA-256 (RFC 2104) and a CSPRNG.
 *
 * The core library depends on cJSON only (docs/architecture.md), yet it
 * must sign the requestState it hands to clients. These few primitives are
 * small enough to carry, are checked against the published test vectors in
 * test_crypto, and the randomness comes from the kernel (getrandom), never from
 * a fallback. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "base.h"

static const uint32_t k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }

static void compress(uint32_t h[8], const unsigned char block[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
           (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6],
           k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
                  ((e & f) ^ (~e & g)) + k256[i] + w[i];
    uint32_t t2 =
        (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void mcp__sha256_init(mcp__sha256 *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof iv);
  s->len = 0;
  s->fill = 0;
}

void mcp__sha256_update(mcp__sha256 *s, const void *data, size_t n) {
  const unsigned char *p = data;
  s->len += n;
  if (s->fill) {
    size_t take = 64 - s->fill < n ? 64 - s->fill : n;
    memcpy(s->buf + s->fill, p, take);
    s->fill += take;
    p += take;
    n -= take;
    if (s->fill < 64)
      return;
    compress(s->h, s->buf);
    s->fill = 0;
  }
  for (; n >= 64; p += 64, n -= 64)
    compress(s->h, p);
  memcpy(s->buf, p, n);
  s->fill = n;
}

void mcp__sha256_final(mcp__sha256 *s, unsigned char out[32]) {
  unsigned long long bits = s->len * 8;
  unsigned char pad = 0x80;
  mcp__sha256_update(s, &pad, 1);
  static const unsigned char zeros[64];
  mcp__sha256_update(s, zeros, (s->fill <= 56 ? 56 : 120) - s->fill);
  unsigned char be[8];
  for (int i = 0; i < 8; i++)
    be[i] = (unsigned char)(bits >> (56 - 8 * i));
  mcp__sha256_update(s, be, 8);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(s->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)s->h[i];
  }
}

void mcp__hmac_sha256(const void *key, size_t key_len, const void *msg,
                      size_t msg_len, unsigned char out[32]) {
  unsigned char k[64] = {0}, pad[64], inner[32];
  mcp__sha256 s;
  if (key_len > 64) {
    mcp__sha256_init(&s);
    mcp__sha256_update(&s, key, key_len);
    mcp__sha256_final(&s, k);
  } else if (key_len) {
    memcpy(k, key, key_len);
  }
  for (int i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x36;
  mcp__sha256_init(&s);
  mcp__sha256_update(&s, pad, 64);
  mcp__sha256_update(&s, msg, msg_len);
  mcp__sha256_final(&s, inner);
  for (int i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x5c;
  mcp__sha256_init(&s);
  mcp__sha256_update(&s, pad, 64);
  mcp__sha256_update(&s, inner, 32);
  mcp__sha256_final(&s, out);
}

int mcp__ct_equal(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  unsigned char d = 0;
  for (size_t i = 0; i < n; i++)
    d |= x[i] ^ y[i];
  return d == 0;
}

int mcp__random(void *buf, size_t n) {
  unsigned char *p = buf;
  while (n > 0) {
    ssize_t r = getrandom(p, n, 0);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return MCP_EIO; /* never a weaker fallback */
    }
    p += r;
    n -= (size_t)r;
  }
  return 0;
}
