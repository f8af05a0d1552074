/* Tests for lib/base/crypto.c: SHA-256 against FIPS 180-2 (appendix B) vectors,
 * HMAC-SHA-256 against RFC 4231, the strict unpadded base64url codec,
 * constant-time comparison and the kernel CSPRNG. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static void to_hex(const unsigned char *d, size_t n, char *hex) {
  for (size_t i = 0; i < n; i++)
    snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static void sha256_of(const void *data, size_t n, char hex[65]) {
  mcp__sha256 s;
  unsigned char d[32];
  mcp__sha256_init(&s);
  mcp__sha256_update(&s, data, n);
  mcp__sha256_final(&s, d);
  to_hex(d, sizeof d, hex);
}

static void hmac_hex(const void *key, size_t key_len, const void *msg,
                     size_t msg_len, char hex[65]) {
  unsigned char d[32];
  mcp__hmac_sha256(key, key_len, msg, msg_len, d);
  to_hex(d, sizeof d, hex);
}

/* ---- SHA-256 (FIPS 180-2, appendix B) ---------------------------------- */

START_TEST(sha256_empty) {
  char hex[65];
  sha256_of("", 0, hex);
  ck_assert_str_eq(
      hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(sha256_abc) {
  char hex[65];
  sha256_of("abc", 3, hex);
  ck_assert_str_eq(
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(sha256_448_bits) {
  static const char m[] =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  char hex[65];
  ck_assert_uint_eq(strlen(m) * 8, 448);
  sha256_of(m, strlen(m), hex);
  ck_assert_str_eq(
      hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
END_TEST

/* One million 'a', fed in chunks of uneven sizes (1, 2, 3, ... 127 bytes
 * and again), so partial blocks are carried across every offset. */
START_TEST(sha256_million_a_uneven_chunks) {
  static char a[128];
  memset(a, 'a', sizeof a);
  mcp__sha256 s;
  mcp__sha256_init(&s);
  size_t left = 1000000, chunk = 1;
  while (left > 0) {
    size_t n = chunk < left ? chunk : left;
    mcp__sha256_update(&s, a, n);
    left -= n;
    chunk = chunk % 127 + 1;
  }
  unsigned char d[32];
  char hex[65];
  mcp__sha256_final(&s, d);
  to_hex(d, sizeof d, hex);
  ck_assert_str_eq(
      hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* Messages of every length around the padding boundaries (55, 56, 63, 64
 * bytes...) give the same digest whether fed whole or a byte at a time. */
START_TEST(sha256_bytewise_equals_whole) {
  unsigned char m[200];
  for (size_t i = 0; i < sizeof m; i++)
    m[i] = (unsigned char)(i * 7 + 3);
  for (size_t n = 0; n <= sizeof m; n++) {
    char whole[65], bytewise[65];
    sha256_of(m, n, whole);
    mcp__sha256 s;
    unsigned char d[32];
    mcp__sha256_init(&s);
    for (size_t i = 0; i < n; i++)
      mcp__sha256_update(&s, m + i, 1);
    mcp__sha256_final(&s, d);
    to_hex(d, sizeof d, bytewise);
    ck_assert_msg(strcmp(whole, bytewise) == 0, "length %zu", n);
  }
}
END_TEST

/* ---- HMAC-SHA-256 (RFC 4231, section 4) --------------------------------- */

START_TEST(hmac_rfc4231_case1) {
  unsigned char key[20];
  char hex[65];
  memset(key, 0x0b, sizeof key);
  hmac_hex(key, sizeof key, "Hi There", 8, hex);
  ck_assert_str_eq(
      hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}
END_TEST

START_TEST(hmac_rfc4231_case2) {
  static const char data[] = "what do ya want for nothing?";
  char hex[65];
  hmac_hex("Jefe", 4, data, strlen(data), hex);
  ck_assert_str_eq(
      hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}
END_TEST

START_TEST(hmac_rfc4231_case3) {
  unsigned char key[20], data[50];
  char hex[65];
  memset(key, 0xaa, sizeof key);
  memset(data, 0xdd, sizeof data);
  hmac_hex(key, sizeof key, data, sizeof data, hex);
  ck_assert_str_eq(
      hex, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}
END_TEST

START_TEST(hmac_rfc4231_case4) {
  unsigned char key[25], data[50];
  char hex[65];
  for (size_t i = 0; i < sizeof key; i++)
    key[i] = (unsigned char)(i + 1);
  memset(data, 0xcd, sizeof data);
  hmac_hex(key, sizeof key, data, sizeof data, hex);
  ck_assert_str_eq(
      hex, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}
END_TEST

/* Case 6: a 131-byte key, longer than the 64-byte block, is hashed first. */
START_TEST(hmac_rfc4231_case6_key_longer_than_block) {
  static const char data[] =
      "Test Using Larger Than Block-Size Key - Hash Key First";
  unsigned char key[131];
  char hex[65];
  memset(key, 0xaa, sizeof key);
  hmac_hex(key, sizeof key, data, strlen(data), hex);
  ck_assert_str_eq(
      hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

/* Case 7: long key and data longer than a block. */
START_TEST(hmac_rfc4231_case7_key_and_data_longer_than_block) {
  static const char data[] =
      "This is a test using a larger than block-size key and a larger than "
      "block-size data. The key needs to be hashed before being used by the "
      "HMAC algorithm.";
  unsigned char key[131];
  char hex[65];
  memset(key, 0xaa, sizeof key);
  hmac_hex(key, sizeof key, data, strlen(data), hex);
  ck_assert_str_eq(
      hex, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}
END_TEST

/* A key of exactly one block is used as is; one byte more is hashed. The
 * two must differ from each other and from the hashed-key equivalence. */
START_TEST(hmac_block_sized_key) {
  unsigned char key[65];
  memset(key, 0x5a, sizeof key);
  char a[65], b[65], c[65];
  hmac_hex(key, 64, "x", 1, a);
  hmac_hex(key, 65, "x", 1, b);
  ck_assert_str_ne(a, b);
  /* HMAC(K, m) == HMAC(SHA-256(K), m) for |K| > 64. */
  mcp__sha256 s;
  unsigned char hk[32];
  mcp__sha256_init(&s);
  mcp__sha256_update(&s, key, 65);
  mcp__sha256_final(&s, hk);
  hmac_hex(hk, sizeof hk, "x", 1, c);
  ck_assert_str_eq(b, c);
}
END_TEST

/* ---- base64url ----------------------------------------------------------- */

/* The reference: standard base64 (lib/base/base64.c) with '+' '/' mapped to '-'
 * '_' and the padding dropped. */
static char *reference_b64url(const unsigned char *d, size_t n) {
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__base64(&b, d, n), 0);
  size_t len = 0;
  char *s = mcp__buf_take(&b, &len);
  if (s == NULL) {
    s = mcp__strdup("");
    ck_assert_ptr_nonnull(s);
  }
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '=')
      continue;
    s[k++] = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];
  }
  s[k] = '\0';
  return s;
}

START_TEST(base64url_round_trips_0_to_70) {
  unsigned char d[70];
  for (size_t i = 0; i < sizeof d; i++)
    d[i] = (unsigned char)(0xfb - 37 * i); /* hits '-' and '_' too */
  for (size_t n = 0; n <= sizeof d; n++) {
    mcp__buf enc = {0}, dec = {0};
    ck_assert_int_eq(mcp__base64url(&enc, d, n), 0);
    const char *text = mcp__buf_str(&enc);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(enc.len, (n * 4 + 2) / 3); /* unpadded length */
    ck_assert_ptr_null(strchr(text, '='));
    ck_assert_ptr_null(strchr(text, '+'));
    ck_assert_ptr_null(strchr(text, '/'));
    char *ref = reference_b64url(d, n);
    ck_assert_msg(strcmp(text, ref) == 0, "length %zu: %s vs %s", n, text, ref);
    mcp__free(ref);
    ck_assert_int_eq(mcp__base64url_decode(text, enc.len, &dec), 0);
    ck_assert_uint_eq(dec.len, n);
    if (n)
      ck_assert(memcmp(dec.data, d, n) == 0);
    mcp__buf_free(&enc);
    mcp__buf_free(&dec);
  }
}
END_TEST

START_TEST(base64url_known_values) {
  static const struct {
    const char *plain, *encoded;
  } v[] = {{"", ""},        {"f", "Zg"},         {"fo", "Zm8"},
           {"foo", "Zm9v"}, {"foob", "Zm9vYg"},  {"fooba", "Zm9vYmE"},
           {"A", "QQ"},     {"\xfb\xff", "-_8"}, {"\xff\xff\xff", "____"}};
  for (size_t i = 0; i < TU_COUNT(v); i++) {
    mcp__buf b = {0};
    mcp__base64url(&b, v[i].plain, strlen(v[i].plain));
    const char *s = mcp__buf_str(&b);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, v[i].encoded);
    mcp__buf_free(&b);
  }
}
END_TEST

static int decode(const char *s, size_t n) {
  mcp__buf out = {0};
  int rc = mcp__base64url_decode(s, n, &out);
  mcp__buf_free(&out);
  return rc;
}

static int decode_str(const char *s) { return decode(s, strlen(s)); }

START_TEST(base64url_decode_rejects) {
  /* Padding is not part of the unpadded form. */
  ck_assert_int_eq(decode_str("QQ=="), MCP_EINVAL);
  ck_assert_int_eq(decode_str("QUI="), MCP_EINVAL);
  ck_assert_int_eq(decode_str("="), MCP_EINVAL);
  /* Standard base64's alphabet is not base64url's. */
  ck_assert_int_eq(decode_str("ab+c"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("ab/c"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("+w"), MCP_EINVAL);
  /* A lone trailing character carries 6 bits: never a whole byte. */
  ck_assert_int_eq(decode_str("Q"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("QUJDR"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("QUJDRUZHS"), MCP_EINVAL);
  /* Non-canonical: unused low bits of the last character must be zero. */
  ck_assert_int_eq(decode_str("QQ"), 0);
  ck_assert_int_eq(decode_str("QR"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("QUI"), 0);
  ck_assert_int_eq(decode_str("QUJ"), MCP_EINVAL);
  ck_assert_int_eq(decode_str("Zm9vYg"), 0);
  ck_assert_int_eq(decode_str("Zm9vYh"), MCP_EINVAL);
  /* Characters outside the alphabet, anywhere. */
  static const char *const bad[] = {"QQ Q", " QQ",        "QQ\n", "Q.Q",
                                    "Q*Q",  "\xc3\xa9QQ", "QQ\t", "a~bc",
                                    "QQ\"", "ab\\c"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    ck_assert_msg(decode_str(bad[i]) == MCP_EINVAL, "accepted \"%s\"", bad[i]);
  /* An embedded NUL counts as a character, not as the end. */
  ck_assert_int_eq(decode("QQ\0A", 4), MCP_EINVAL);
  ck_assert_int_eq(decode("\0\0", 2), MCP_EINVAL);
  /* Empty input is the empty value. */
  ck_assert_int_eq(decode("", 0), 0);
}
END_TEST

/* The decoder reads exactly n bytes: a valid prefix of a longer string
 * decodes, and what follows is not looked at. */
START_TEST(base64url_decode_reads_n_bytes) {
  mcp__buf out = {0};
  ck_assert_int_eq(mcp__base64url_decode("Zm9v!!!", 4, &out), 0);
  ck_assert_uint_eq(out.len, 3);
  ck_assert(memcmp(out.data, "foo", 3) == 0);
  mcp__buf_free(&out);
}
END_TEST

/* The standard alphabet decodes strictly too: padding only at the end and
 * exactly where it belongs, whole quanta, zero unused bits. */
START_TEST(base64_standard_decode) {
  static const struct {
    const char *text;
    const char *plain; /* NULL: refused */
  } v[] = {{"", ""},          {"Zg==", "f"},        {"Zm8=", "fo"},
           {"Zm9v", "foo"},   {"Zm9vYg==", "foob"}, {"+/8=", "\xfb\xff"},
           {"Zg", NULL},      {"Zg=", NULL},        {"Zg===", NULL},
           {"Z===", NULL},    {"=Zg=", NULL},       {"Zh==", NULL},
           {"Zm9=", NULL},    {"-_8=", NULL},       {"Zm 9v", NULL},
           {"Zg==Zg==", NULL}};
  for (size_t i = 0; i < TU_COUNT(v); i++) {
    unsigned char out[16];
    size_t n = 99;
    bool ok = mcp__base64_decode(v[i].text, strlen(v[i].text), out, sizeof out,
                                 &n, 0);
    ck_assert_msg(ok == (v[i].plain != NULL), "\"%s\"", v[i].text);
    if (ok) {
      ck_assert_uint_eq(n, strlen(v[i].plain));
      ck_assert(memcmp(out, v[i].plain, n) == 0);
      /* And back: one spelling each way. */
      char enc[32];
      mcp__base64_encode(enc, out, n, 0);
      ck_assert_str_eq(enc, v[i].text);
    }
  }
  /* Checking alone (no output), the room it needs, and NUL refused on
   * request (header values are compared with JSON text). */
  size_t n = 0;
  ck_assert(mcp__base64_decode("Zm9vYg==", 8, NULL, 0, &n, 0) && n == 4);
  unsigned char small[3];
  ck_assert(!mcp__base64_decode("Zm9vYg==", 8, small, sizeof small, &n, 0));
  ck_assert(mcp__base64_decode("AA==", 4, small, sizeof small, &n, 0));
  ck_assert(!mcp__base64_decode("AA==", 4, small, sizeof small, &n,
                                MCP__BASE64_NO_NUL));
  ck_assert(!mcp__base64_decode("AAE", 3, NULL, 0, &n,
                                MCP__BASE64_URL | MCP__BASE64_NO_NUL));
  /* The lengths the encoders write. */
  for (size_t k = 0; k < 10; k++) {
    ck_assert_uint_eq(mcp__base64_len(k, 0), (k + 2) / 3 * 4);
    ck_assert_uint_eq(mcp__base64_len(k, MCP__BASE64_URL), (k * 4 + 2) / 3);
  }
}
END_TEST

/* ---- constant-time comparison and randomness ----------------------------- */

START_TEST(ct_equal) {
  unsigned char a[32], b[32];
  for (int i = 0; i < 32; i++)
    a[i] = b[i] = (unsigned char)(i * 13);
  ck_assert(mcp__ct_equal(a, b, 32));
  ck_assert(mcp__ct_equal(a, b, 0));
  for (int i = 0; i < 32; i++) {
    for (int bit = 0; bit < 8; bit++) {
      b[i] ^= (unsigned char)(1u << bit);
      ck_assert_msg(!mcp__ct_equal(a, b, 32), "byte %d bit %d", i, bit);
      b[i] ^= (unsigned char)(1u << bit);
    }
  }
  /* Only the first n bytes count. */
  b[31] ^= 1;
  ck_assert(mcp__ct_equal(a, b, 31));
  ck_assert(!mcp__ct_equal(a, b, 32));
}
END_TEST

START_TEST(random_fills_and_differs) {
  unsigned char a[64], b[64], zero[64] = {0};
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  ck_assert_int_eq(mcp__random(a, sizeof a), 0);
  ck_assert_int_eq(mcp__random(b, sizeof b), 0);
  /* 2^-512 chance of a false failure for each. */
  ck_assert(memcmp(a, zero, sizeof a) != 0);
  ck_assert(memcmp(a, b, sizeof a) != 0);
  /* Every part of the buffer is written: the last 8 bytes are not all the
   * marker byte (2^-64 chance of a false failure). */
  unsigned char c[300];
  memset(c, 0xa5, sizeof c);
  ck_assert_int_eq(mcp__random(c, sizeof c), 0);
  int marker = 0;
  for (size_t i = sizeof c - 8; i < sizeof c; i++)
    marker += c[i] == 0xa5;
  ck_assert_int_lt(marker, 8);
  /* A large draw (more than getrandom's single-call guarantee of 256). */
  static unsigned char big[1 << 16];
  ck_assert_int_eq(mcp__random(big, sizeof big), 0);
  ck_assert_int_eq(mcp__random(big, 0), 0);
}
END_TEST

static Suite *crypto_suite(void) {
  Suite *s = suite_create("crypto");
  TCase *t = tcase_create("sha256");
  tcase_add_test(t, sha256_empty);
  tcase_add_test(t, sha256_abc);
  tcase_add_test(t, sha256_448_bits);
  tcase_add_test(t, sha256_million_a_uneven_chunks);
  tcase_add_test(t, sha256_bytewise_equals_whole);
  suite_add_tcase(s, t);

  t = tcase_create("hmac");
  tcase_add_test(t, hmac_rfc4231_case1);
  tcase_add_test(t, hmac_rfc4231_case2);
  tcase_add_test(t, hmac_rfc4231_case3);
  tcase_add_test(t, hmac_rfc4231_case4);
  tcase_add_test(t, hmac_rfc4231_case6_key_longer_than_block);
  tcase_add_test(t, hmac_rfc4231_case7_key_and_data_longer_than_block);
  tcase_add_test(t, hmac_block_sized_key);
  suite_add_tcase(s, t);

  t = tcase_create("base64url");
  tcase_add_test(t, base64url_round_trips_0_to_70);
  tcase_add_test(t, base64url_known_values);
  tcase_add_test(t, base64url_decode_rejects);
  tcase_add_test(t, base64url_decode_reads_n_bytes);
  tcase_add_test(t, base64_standard_decode);
  suite_add_tcase(s, t);

  t = tcase_create("primitives");
  tcase_add_test(t, ct_equal);
  tcase_add_test(t, random_fills_and_differs);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(crypto_suite()); }
