/* digest.c: file digests; opened without following a FIFO's wait
 * (O_NONBLOCK) and only for regular files. */
#define _POSIX_C_SOURCE 200809L
#include "digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

int mcpc_digest_file(const char *path, long long limit, unsigned char out[32],
                     long long *size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  EVP_MD_CTX *ctx;
  unsigned char buf[65536];
  long long left;
  int rc = -1;
  if (fd < 0)
    return -1;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      st.st_size > (256LL << 20) || (ctx = EVP_MD_CTX_new()) == NULL) {
    close(fd);
    return -1;
  }
  *size = st.st_size;
  left = limit < 0 ? st.st_size : limit;
  if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1) {
    rc = 0;
    while (left > 0) {
      ssize_t got = read(
          fd, buf, left < (long long)sizeof buf ? (size_t)left : sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      if (EVP_DigestUpdate(ctx, buf, (size_t)got) != 1) {
        rc = -1;
        break;
      }
      left -= got;
    }
    if (rc == 0 && (left > 0 || EVP_DigestFinal_ex(ctx, out, NULL) != 1))
      rc = -1; /* shorter than limit: not the same prefix */
  }
  EVP_MD_CTX_free(ctx);
  close(fd);
  return rc;
}
