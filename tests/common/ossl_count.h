/* OpenSSL's allocations counted, and failed on demand, for the suites that
 * check that the JWT verifier and the HTTP transport leak nothing of
 * OpenSSL's and survive its allocation failures (tests/http test_jwt,
 * tests/torture). */
#ifndef MCP_TEST_OSSL_COUNT_H
#define MCP_TEST_OSSL_COUNT_H

#include <stdbool.h>

/* Routes OpenSSL's allocations through a counter (CRYPTO_set_mem_functions):
 * call it before OpenSSL allocates anything, or OpenSSL refuses (false).
 * fail, when not NULL, is asked before each allocation whether it fails;
 * it may be called from any thread. */
bool tc_ossl_count_install(bool (*fail)(void));

/* Blocks OpenSSL holds now, leaving out those of a thread's error queue
 * (crypto/err/): OpenSSL keeps them for reuse until the thread ends, so
 * they are not the verifier's to free. */
long tc_ossl_live(void);

#endif
