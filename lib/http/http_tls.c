/* HTTPS: libmicrohttpd's GnuTLS, TLS 1.2 and 1.3 by default (the priority
 * string of mcp_http_tls, checked here before libmicrohttpd sees it), with
 * the certificate chosen at each handshake (MHD_OPTION_HTTPS_CERT_CALLBACK),
 * so that mcp_http_reload_tls can replace it while the server runs: new
 * handshakes get the new pair, connections already open keep theirs. A
 * replaced pair is kept until the server stops, since a session made with
 * it may still refer to it. */
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <string.h>

#include "http_int.h"

/* One certificate chain and its key. */
typedef struct tls_pair {
  gnutls_pcert_st pcerts[MCP__HTTP_TLS_CHAIN];
  unsigned npcerts;
  gnutls_privkey_t key;
  struct tls_pair *older;
} tls_pair;

struct mcp__http_tls {
  pthread_mutex_t lock; /* guards current */
  tls_pair *current;    /* the pair new handshakes get */
  char *cert_file, *key_file;
  char *priorities; /* the GnuTLS priority string, checked */
};

static void pair_free(tls_pair *p) {
  while (p) {
    tls_pair *older = p->older;
    for (unsigned i = 0; i < p->npcerts; i++)
      gnutls_pcert_deinit(&p->pcerts[i]);
    if (p->key)
      gnutls_privkey_deinit(p->key);
    mcp_free(p);
    p = older;
  }
}

/* Reads a whole file (at most 1 MiB) into a NUL-terminated buffer. */
static char *read_file(const char *path, size_t *len, char *why, size_t n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(why, n, "cannot open %s", path);
    return NULL;
  }
  size_t cap = 1u << 20;
  char *buf = mcp_malloc(cap + 1);
  size_t got = buf ? fread(buf, 1, cap + 1, f) : 0;
  bool err = ferror(f) != 0;
  fclose(f);
  if (buf == NULL || err || got > cap) {
    snprintf(why, n, "%s: %s", path,
             buf == NULL ? "out of memory"
             : err       ? "read error"
                         : "larger than 1 MiB");
    mcp_free(buf);
    return NULL;
  }
  buf[got] = '\0';
  *len = got;
  return buf;
}

/* Makes a pair from PEM text, checking that the key is the certificate's. */
static int pair_make(const char *cert, size_t cert_len, const char *key,
                     size_t key_len, tls_pair **out, char *why, size_t n) {
  gnutls_datum_t c = {(unsigned char *)(uintptr_t)cert, (unsigned)cert_len};
  gnutls_datum_t k = {(unsigned char *)(uintptr_t)key, (unsigned)key_len};
  /* A credentials structure only to learn whether the two belong
   * together: GnuTLS says so when it takes them. */
  gnutls_certificate_credentials_t check;
  if (gnutls_certificate_allocate_credentials(&check) < 0) {
    snprintf(why, n, "out of memory");
    return MCP_ENOMEM;
  }
  int g = gnutls_certificate_set_x509_key_mem2(check, &c, &k,
                                               GNUTLS_X509_FMT_PEM, NULL, 0);
  gnutls_certificate_free_credentials(check);
  if (g < 0) {
    snprintf(why, n, "the certificate and key are not usable together: %s",
             gnutls_strerror(g));
    return MCP_EINVAL;
  }
  tls_pair *p = mcp_calloc(1, sizeof *p);
  if (p == NULL) {
    snprintf(why, n, "out of memory");
    return MCP_ENOMEM;
  }
  p->npcerts = MCP__HTTP_TLS_CHAIN;
  g = gnutls_pcert_list_import_x509_raw(p->pcerts, &p->npcerts, &c,
                                        GNUTLS_X509_FMT_PEM, 0);
  if (g < 0) {
    p->npcerts = 0;
  } else if ((g = gnutls_privkey_init(&p->key)) >= 0) {
    g = gnutls_privkey_import_x509_raw(p->key, &k, GNUTLS_X509_FMT_PEM, NULL,
                                       0);
  }
  if (g < 0) {
    snprintf(why, n,
             "cannot load the certificate chain (at most %d) or key: "
             "%s",
             MCP__HTTP_TLS_CHAIN, gnutls_strerror(g));
    pair_free(p);
    return MCP_EINVAL;
  }
  *out = p;
  return 0;
}

/* Loads the pair tls names (files or PEM text). */
static int pair_load(const mcp_http_tls *tls, tls_pair **out, char *why,
                     size_t n) {
  const char *cert = tls->cert_pem, *key = tls->key_pem;
  char *cert_buf = NULL, *key_buf = NULL;
  size_t cert_len = cert ? strlen(cert) : 0, key_len = key ? strlen(key) : 0;
  int rc = 0;
  if ((cert == NULL) == (tls->cert_file == NULL) ||
      (key == NULL) == (tls->key_file == NULL)) {
    snprintf(why, n,
             "tls needs the certificate and the key, each as a file "
             "or as PEM text (not both)");
    return MCP_EINVAL;
  }
  if (cert == NULL &&
      (cert = cert_buf = read_file(tls->cert_file, &cert_len, why, n)) == NULL)
    rc = MCP_EIO;
  if (rc == 0 && key == NULL &&
      (key = key_buf = read_file(tls->key_file, &key_len, why, n)) == NULL)
    rc = MCP_EIO;
  if (rc == 0)
    rc = pair_make(cert, cert_len, key, key_len, out, why, n);
  mcp_free(cert_buf);
  if (key_buf) {
    memset(key_buf, 0, key_len); /* the private key leaves no copy */
    mcp_free(key_buf);
  }
  return rc;
}

/* Checks a priority string as libmicrohttpd will use it (it hands the
 * string to gnutls_priority_init when the daemon starts, and says only
 * that starting failed), so that the error names the string and the place
 * GnuTLS stopped reading it. */
static int priorities_check(const char *prio, char *why, size_t n) {
  gnutls_priority_t cache;
  const char *at = NULL;
  int g = gnutls_priority_init(&cache, prio, &at);
  if (g == GNUTLS_E_MEMORY_ERROR) {
    snprintf(why, n, "out of memory");
    return MCP_ENOMEM;
  }
  if (g < 0) {
    snprintf(why, n,
             "the priority string \"%.80s\" is refused by GnuTLS at "
             "\"%.40s\" (%s)",
             prio, at ? at : prio, gnutls_strerror(g));
    return MCP_EINVAL;
  }
  gnutls_priority_deinit(cache);
  return 0;
}

int mcp__http_tls_open(mcp_http *h, const mcp_http_tls *tls, char *why,
                       size_t n) {
  mcp__http_tls *t = mcp_calloc(1, sizeof *t);
  if (t == NULL || pthread_mutex_init(&t->lock, NULL) != 0) {
    mcp_free(t);
    snprintf(why, n, "out of memory");
    return MCP_ENOMEM;
  }
  const char *prio =
      tls->priorities ? tls->priorities : MCP_HTTP_TLS_PRIORITIES;
  int rc = priorities_check(prio, why, n);
  if (rc == 0)
    rc = pair_load(tls, &t->current, why, n);
  if (rc == 0 && (t->priorities = mcp__strdup(prio)) == NULL)
    rc = MCP_ENOMEM;
  if (rc == 0 && tls->cert_file &&
      (t->cert_file = mcp__strdup(tls->cert_file)) == NULL)
    rc = MCP_ENOMEM;
  if (rc == 0 && tls->key_file &&
      (t->key_file = mcp__strdup(tls->key_file)) == NULL)
    rc = MCP_ENOMEM;
  if (rc == MCP_ENOMEM)
    snprintf(why, n, "out of memory");
  h->tls = t;
  if (rc)
    mcp__http_tls_free(h);
  return rc;
}

void mcp__http_tls_free(mcp_http *h) {
  mcp__http_tls *t = h->tls;
  if (t == NULL)
    return;
  pair_free(t->current);
  mcp_free(t->cert_file);
  mcp_free(t->key_file);
  mcp_free(t->priorities);
  pthread_mutex_destroy(&t->lock);
  mcp_free(t);
  h->tls = NULL;
}

static void tls_notify(void *cls, struct MHD_Connection *connection,
                       void **socket_context,
                       enum MHD_ConnectionNotificationCode code) {
  (void)connection;
  if (code == MHD_CONNECTION_NOTIFY_STARTED)
    *socket_context = cls; /* the mcp_http, for the handshake below */
}

static int tls_retrieve(gnutls_session_t session,
                        const gnutls_datum_t *req_ca_dn, int nreqs,
                        const gnutls_pk_algorithm_t *pk_algos,
                        int pk_algos_length, gnutls_pcert_st **pcert,
                        unsigned int *pcert_length, gnutls_privkey_t *pkey) {
  (void)req_ca_dn;
  (void)nreqs;
  (void)pk_algos;
  (void)pk_algos_length;
  /* libmicrohttpd makes the connection the session's pointer. */
  struct MHD_Connection *c = gnutls_session_get_ptr(session);
  const union MHD_ConnectionInfo *ci =
      c ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
  mcp_http *h = ci ? ci->socket_context : NULL;
  if (h == NULL || h->tls == NULL)
    return -1;
  mcp__http_tls *t = h->tls;
  pthread_mutex_lock(&t->lock);
  *pcert = t->current->pcerts;
  *pcert_length = t->current->npcerts;
  *pkey = t->current->key;
  pthread_mutex_unlock(&t->lock);
  return 0;
}

struct MHD_Daemon *mcp__http_tls_daemon(mcp_http *h, unsigned flags,
                                        uint16_t port,
                                        MHD_AccessHandlerCallback on_request,
                                        MHD_RequestCompletedCallback done,
                                        MHD_LogCallback log,
                                        struct MHD_OptionItem *items) {
  return MHD_start_daemon(flags | MHD_USE_TLS, port, NULL, NULL, on_request, h,
                          MHD_OPTION_HTTPS_PRIORITIES, h->tls->priorities,
                          MHD_OPTION_HTTPS_CERT_CALLBACK, tls_retrieve,
                          MHD_OPTION_NOTIFY_CONNECTION, tls_notify, h,
                          MHD_OPTION_NOTIFY_COMPLETED, done, h,
                          MHD_OPTION_EXTERNAL_LOGGER, log, h, MHD_OPTION_ARRAY,
                          items, MHD_OPTION_END);
}

int mcp_http_reload_tls(mcp_http *http, const mcp_http_tls *tls) {
  if (http == NULL)
    return MCP_EINVAL;
  mcp__http_tls *t = http->tls;
  if (t == NULL) {
    mcp__http_log(http, MCP_LOG_ERROR,
                  "mcp_http_reload_tls: the server was started without tls");
    return MCP_ESTATE;
  }
  mcp_http_tls again = {.cert_file = t->cert_file, .key_file = t->key_file};
  if (tls == NULL && (t->cert_file == NULL || t->key_file == NULL)) {
    mcp__http_log(http, MCP_LOG_ERROR,
                  "mcp_http_reload_tls: no files to re-read (the pair was "
                  "given as PEM text)");
    return MCP_EINVAL;
  }
  char why[300] = "";
  tls_pair *p = NULL;
  int rc = pair_load(tls ? tls : &again, &p, why, sizeof why);
  if (rc) {
    mcp__http_log(http, MCP_LOG_ERROR,
                  "mcp_http_reload_tls: %s; the current certificate stays",
                  why);
    return rc;
  }
  pthread_mutex_lock(&t->lock);
  p->older = t->current;
  t->current = p;
  pthread_mutex_unlock(&t->lock);
  mcp__http_log(http, MCP_LOG_INFO,
                "tls: new handshakes use the reloaded certificate");
  return 0;
}
