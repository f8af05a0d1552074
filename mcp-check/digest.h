/* digest.h: SHA-256 of a file's bytes (OpenSSL's EVP), for the behaviour
 * check's before and after. */
#ifndef MCPC_DIGEST_H
#define MCPC_DIGEST_H

/* The SHA-256 of the first `limit` bytes of the regular file at path
 * (limit < 0: all of it) into out, and its size into *size. Returns 0, or
 * -1 when it is not a readable regular file, is shorter than limit, or is
 * over 256 MiB (not digested: the bound of one file's cost). */
int mcpc_digest_file(const char *path, long long limit, unsigned char out[32],
                     long long *size);

#endif
