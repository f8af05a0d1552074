/* Serving until a signal (include/mcp/http.h): the command line's common
 * flags, the listening line, and the signal wait every daemon's main needs.
 * Built on the transport's public functions only; what it says goes to
 * standard error, in the words the examples have always used, since
 * scripts read the listening line. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_int.h"

/* Room for an IPv6 literal (INET6_ADDRSTRLEN) with a little to spare. */
#define ADDR_MAX 64
/* The longest host name taken from --audience for allowed_hosts. */
#define HOST_MAX 256

static const char *program(const mcp_http_serve_options *o) {
  return o->program ? o->program : "libmcp";
}

/* Reads "ADDR:PORT" ("[V6]:PORT" too) without writing to spec: the
 * address, brackets removed, to addr (ADDR_MAX bytes) and the port to
 * *port. ADDR is an IPv4 or IPv6 literal, as mcp_http_start takes, and
 * only an IPv6 one in brackets: a form mcp_http_start would refuse
 * ("[::1" read as "[:" and port 1, "a b:80") is refused here, when the
 * flag is read. Returns 0, or MCP_EINVAL when spec has another form. */
static int listen_parse(const char *spec, char *addr, unsigned *port) {
  const char *colon = strrchr(spec, ':');
  if (colon == NULL || colon == spec)
    return MCP_EINVAL;
  const char *digits = colon + 1;
  size_t ndigits = strspn(digits, "0123456789");
  if (ndigits == 0 || ndigits > 5 || digits[ndigits] != '\0')
    return MCP_EINVAL;
  unsigned long value = strtoul(digits, NULL, 10);
  if (value > 65535)
    return MCP_EINVAL;
  const char *start = spec;
  size_t len = (size_t)(colon - spec);
  bool bracketed = len >= 2 && start[0] == '[' && start[len - 1] == ']';
  if (bracketed) { /* [::1]:80 */
    start++;
    len -= 2;
  }
  if (len == 0 || len >= ADDR_MAX)
    return MCP_EINVAL;
  memcpy(addr, start, len);
  addr[len] = '\0';
  unsigned char ip[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET6, addr, ip) != 1 &&
      (bracketed || inet_pton(AF_INET, addr, ip) != 1))
    return MCP_EINVAL;
  *port = (unsigned)value;
  return 0;
}

/* The flags that take a value, and where each goes. */
static const char **flag_slot(mcp_http_serve_options *o, const char *flag) {
  static const char *const names[] = {"--http",   "--tls-cert", "--tls-key",
                                      "--jwks",   "--issuer",   "--audience",
                                      "--node-id"};
  const char **slots[] = {&o->listen,    &o->tls_cert_file, &o->tls_key_file,
                          &o->jwks_file, &o->issuer,        &o->audience,
                          &o->node_id};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(flag, names[i]) == 0)
      return slots[i];
  return NULL;
}

int mcp_http_serve_arg(mcp_http_serve_options *opts, int argc,
                       char *const argv[], int *index) {
  if (opts == NULL || argv == NULL || index == NULL || *index < 0 ||
      *index >= argc || argv[*index] == NULL)
    return MCP_EINVAL;
  const char *flag = argv[*index];
  const char **slot = flag_slot(opts, flag);
  if (slot == NULL)
    return 0;
  if (*index + 1 >= argc || argv[*index + 1] == NULL) {
    fprintf(stderr, "%s: %s needs a value\n", program(opts), flag);
    return MCP_EINVAL;
  }
  const char *value = argv[*index + 1];
  char addr[ADDR_MAX];
  unsigned port;
  if (slot == &opts->listen && strcmp(value, "systemd") != 0 &&
      listen_parse(value, addr, &port) != 0) {
    fprintf(stderr, "%s: --http wants ADDR:PORT, e.g. 127.0.0.1:8080\n",
            program(opts));
    return MCP_EINVAL;
  }
  *slot = value;
  *index += 1;
  return 1;
}

/* The pairs of mcp_http_serve_check; with_listen: and only with --http. */
static int pairs_check(const mcp_http_serve_options *o, bool with_listen) {
  bool need = with_listen && o->listen == NULL;
  if ((o->tls_cert_file == NULL) != (o->tls_key_file == NULL) ||
      (o->tls_cert_file && need)) {
    fprintf(stderr, "%s: --tls-cert and --tls-key go together, with --http\n",
            program(o));
    return MCP_EINVAL;
  }
  bool any = o->jwks_file || o->issuer || o->audience;
  bool all = o->jwks_file && o->issuer && o->audience;
  if (any && (!all || need)) {
    fprintf(stderr,
            "%s: --jwks, --issuer and --audience go together, with "
            "--http\n",
            program(o));
    return MCP_EINVAL;
  }
  return 0;
}

int mcp_http_serve_check(const mcp_http_serve_options *opts) {
  if (opts == NULL)
    return MCP_EINVAL;
  return pairs_check(opts, true);
}

/* ---- serving ------------------------------------------------------------- */

/* What assemble makes of the options: mcp_http_start's, and what they
 * point to. */
typedef struct serving {
  mcp_http_options http;
  mcp_http_tls tls;
  mcp_auth_options auth;
  const char *servers[2];
  const char *hosts[5];
  char host[HOST_MAX];
  char addr[ADDR_MAX]; /* for the listening line */
  bool from_systemd;   /* http.listen_fd is the socket systemd passed */
} serving;

/* The address a listening descriptor is bound to, as text in addr. */
static int bound_addr(int fd, char *addr) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
      (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
    return MCP_EINVAL;
  const void *ip = ss.ss_family == AF_INET6
                       ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                       : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
  return inet_ntop(ss.ss_family, ip, addr, ADDR_MAX) ? 0 : MCP_EINVAL;
}

/* --http systemd: the socket systemd passed, into s. */
static int from_systemd(const mcp_http_serve_options *o, serving *s) {
  int fd = mcp_http_systemd_socket();
  int rc = fd < 0 ? fd : bound_addr(fd, s->addr);
  if (rc != 0 && fd >= 0)
    close(fd);
  if (rc != 0) {
    fprintf(stderr, "%s: --http systemd: %s\n", program(o),
            rc == MCP_ENOENT ? "no socket from systemd (LISTEN_FDS is not "
                               "set for this process)"
                             : "systemd must pass one listening TCP socket");
    return rc;
  }
  s->http.listen_fd = fd;
  s->http.bind_addr = NULL;
  s->from_systemd = true;
  return 0;
}

/* Where to listen: --http's address and port, the socket systemd passed,
 * or what the options already say. */
static int where(const mcp_http_serve_options *o, serving *s) {
  if (o->listen && strcmp(o->listen, "systemd") == 0)
    return from_systemd(o, s);
  if (o->listen) {
    unsigned port;
    if (listen_parse(o->listen, s->addr, &port) != 0) {
      fprintf(stderr, "%s: --http wants ADDR:PORT, e.g. 127.0.0.1:8080\n",
              program(o));
      return MCP_EINVAL;
    }
    s->http.bind_addr = s->addr;
    s->http.port = (uint16_t)port;
    s->http.listen_fd = 0;
    return 0;
  }
  if (s->http.listen_fd > 0 && bound_addr(s->http.listen_fd, s->addr) != 0) {
    fprintf(stderr, "%s: listen_fd %d is not a bound TCP socket\n", program(o),
            s->http.listen_fd);
    return MCP_EINVAL;
  }
  if (s->http.listen_fd > 0)
    return 0;
  snprintf(s->addr, sizeof s->addr, "%s",
           s->http.bind_addr ? s->http.bind_addr : "127.0.0.1");
  return 0;
}

/* --jwks, --issuer and --audience: a resource server, the audience's host
 * allowed beside the loopback names unless the options list the hosts. */
static void with_auth(const mcp_http_serve_options *o, serving *s) {
  s->servers[0] = o->issuer;
  s->auth = (mcp_auth_options){.resource = o->audience,
                               .authorization_servers = s->servers,
                               .scopes_supported = o->scopes_supported,
                               .issuer = o->issuer,
                               .jwks_file = o->jwks_file};
  s->http.auth = &s->auth;
  if (s->http.allowed_hosts)
    return;
  const char *authority = strstr(o->audience, "://");
  if (authority == NULL)
    return;
  authority += 3;
  size_t len = strcspn(authority, "/?#");
  if (len == 0 || len >= sizeof s->host)
    return;
  memcpy(s->host, authority, len);
  s->host[len] = '\0';
  const char *hosts[] = {"localhost", "127.0.0.1", "[::1]", s->host, NULL};
  memcpy(s->hosts, hosts, sizeof hosts);
  s->http.allowed_hosts = s->hosts;
}

/* Assembles mcp_http_start's options from opts into s. */
static int assemble(const mcp_http_serve_options *o, serving *s) {
  if (o->http)
    s->http = *o->http;
  if (o->principal)
    s->http.principal = o->principal;
  if (o->node_id) {
    s->http.node_id = o->node_id;
    if (s->http.per_ip_connections == 0)
      s->http.per_ip_connections =
          s->http.max_connections ? s->http.max_connections : 512;
  }
  if (o->tls_cert_file) {
    s->tls = (mcp_http_tls){.cert_file = o->tls_cert_file,
                            .key_file = o->tls_key_file};
    s->http.tls = &s->tls;
  }
  if (o->jwks_file)
    with_auth(o, s);
  return where(o, s);
}

/* SIGHUP: the JWKS file and the certificate files read again. */
static void reload(const mcp_http_serve_options *o, mcp_http *http,
                   const serving *s) {
  const mcp_auth_options *auth = s->http.auth;
  if (auth && auth->jwks_file) {
    int rc = mcp_http_set_jwks(http, NULL);
    fprintf(stderr, "%s: %s %s\n", program(o), auth->jwks_file,
            rc == 0 ? "re-read" : "not used (the last good keys stay)");
  }
  const mcp_http_tls *tls = s->http.tls;
  if (tls && tls->cert_file) {
    int rc = mcp_http_reload_tls(http, NULL);
    fprintf(stderr, "%s: %s %s\n", program(o), tls->cert_file,
            rc == 0 ? "re-read" : "not used (the last good pair stays)");
  }
}

/* Takes the signals of set that arrived while serving ended, so that
 * restoring the caller's mask does not deliver them: they asked for what
 * has been done. Never waits; one of each is all that can be pending. */
static void drain(const sigset_t *set) {
  const struct timespec now = {0, 0};
  for (int i = 0; i < 3 && sigtimedwait(set, NULL, &now) > 0; i++)
    ;
}

int mcp_http_serve_until_signal(mcp_server *srv,
                                const mcp_http_serve_options *opts) {
  const mcp_http_serve_options none = {0};
  const mcp_http_serve_options *o = opts ? opts : &none;
  serving s = {0};
  int rc = srv ? pairs_check(o, false) : MCP_EINVAL;
  if (rc == 0)
    rc = assemble(o, &s);
  if (rc != 0)
    return rc;

  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  mcp_http *http;
  rc = mcp_http_start(srv, &s.http, &http);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot serve HTTP on %s port %u: %s\n", program(o),
            s.addr, (unsigned)s.http.port, mcp_server_errmsg(srv));
    if (s.from_systemd)
      close(s.http.listen_fd); /* ours, not started: nothing else has it */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
  }
  bool v6 = strchr(s.addr, ':') != NULL;
  fprintf(stderr, "listening on %s://%s%s%s:%u%s\n",
          s.http.tls ? "https" : "http", v6 ? "[" : "", s.addr, v6 ? "]" : "",
          (unsigned)mcp_http_port(http), s.http.path ? s.http.path : "/mcp");
  int sig;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
    reload(o, http, &s);
  mcp_http_stop(http);
  drain(&set);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return 0;
}
