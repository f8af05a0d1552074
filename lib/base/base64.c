/* Base64 (RFC 4648): the one codec of lib/, for blobs in results (standard,
 * padded), requestState tokens, session ids and JWT segments (base64url,
 * unpadded), and Mcp-Param headers (standard). Decoding accepts exactly one
 * spelling of each byte string: see base.h. */
#include "base.h"

static const char std_abc[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_abc[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t mcp__base64_encode(char *out, const void *in, size_t n, unsigned flags) {
  const char *abc = flags & MCP__BASE64_URL ? url_abc : std_abc;
  const unsigned char *s = in;
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
    out[o++] = abc[v >> 18];
    out[o++] = abc[(v >> 12) & 63];
    out[o++] = abc[(v >> 6) & 63];
    out[o++] = abc[v & 63];
  }
  if (i < n) { /* one or two bytes left */
    unsigned v = (unsigned)s[i] << 16;
    if (i + 1 < n)
      v |= (unsigned)s[i + 1] << 8;
    out[o++] = abc[v >> 18];
    out[o++] = abc[(v >> 12) & 63];
    if (i + 1 < n)
      out[o++] = abc[(v >> 6) & 63];
    else if (!(flags & MCP__BASE64_URL))
      out[o++] = '=';
    if (!(flags & MCP__BASE64_URL))
      out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

int mcp__buf_base64(mcp__buf *b, const void *in, size_t n, unsigned flags) {
  /* Encoded straight into the buffer's room; the NUL the encoder writes
   * falls where the buffer keeps its own. */
  char *at = mcp__buf_extend(b, mcp__base64_len(n, flags));
  if (at)
    mcp__base64_encode(at, in, n, flags);
  return b->err;
}

static int value_of(unsigned char c, unsigned flags) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (flags & MCP__BASE64_URL)
    return c == '-' ? 62 : c == '_' ? 63 : -1;
  return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Checks the shape of an encoding and returns the number of characters
 * that carry bits (padding removed), or (size_t)-1. */
static size_t body_len(const char *in, size_t n, unsigned flags) {
  if (flags & MCP__BASE64_URL)
    return n % 4 == 1 ? (size_t)-1 : n;
  /* Standard: whole quanta, at most two '=' and only at the end. */
  if (n % 4 != 0)
    return (size_t)-1;
  if (n > 0 && in[n - 1] == '=')
    n -= n > 1 && in[n - 2] == '=' ? 2 : 1;
  return n;
}

/* Decodes n characters (no padding) into out when it is not NULL; returns
 * the byte count, or (size_t)-1 for a character outside the alphabet,
 * unused bits that are not zero, or (with MCP__BASE64_NO_NUL) a NUL. */
static size_t decode_body(const char *in, size_t n, unsigned char *out,
                          unsigned flags) {
  size_t o = 0;
  unsigned long acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = value_of((unsigned char)in[i], flags);
    if (v < 0)
      return (size_t)-1;
    acc = acc << 6 | (unsigned long)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      unsigned char byte = (unsigned char)(acc >> bits);
      if (byte == 0 && (flags & MCP__BASE64_NO_NUL))
        return (size_t)-1;
      if (out)
        out[o] = byte;
      o++;
      acc &= (1ul << bits) - 1;
    }
  }
  /* Non-zero leftover bits would give a second spelling of the bytes. */
  return acc != 0 ? (size_t)-1 : o;
}

bool mcp__base64_decode(const char *in, size_t n, unsigned char *out,
                        size_t cap, size_t *outlen, unsigned flags) {
  size_t body = body_len(in, n, flags);
  if (body == (size_t)-1 ||
      (out && body / 4 * 3 + (body % 4 ? body % 4 - 1 : 0) > cap))
    return false;
  size_t o = decode_body(in, body, out, flags);
  if (o == (size_t)-1)
    return false;
  if (outlen)
    *outlen = o;
  return true;
}

int mcp__buf_base64_decode(mcp__buf *b, const char *in, size_t n,
                           unsigned flags) {
  size_t body = body_len(in, n, flags);
  size_t need = body == (size_t)-1 ? body : decode_body(in, body, NULL, flags);
  if (need == (size_t)-1)
    return MCP_EINVAL;
  char *at = mcp__buf_extend(b, need);
  if (at)
    decode_body(in, body, (unsigned char *)at, flags);
  return b->err;
}
