/* base64url without padding (RFC 4648 §5), the encoding of every part of
 * a JWT and of a JWK's numbers: the suites' own encoder, written apart
 * from the library's codec (lib/base/base64.c), so that tokens the tests
 * make do not depend on the code under test. */
#ifndef MCP_TEST_B64URL_H
#define MCP_TEST_B64URL_H

#include <stddef.h>

/* The n bytes at p, base64url-encoded without padding, in a new string
 * (free with free). Aborts when memory runs out. */
char *tc_b64url(const void *p, size_t n);
/* tc_b64url of the string s without its NUL. */
char *tc_b64url_str(const char *s);

#endif
