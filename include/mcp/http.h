/* libmcp Streamable HTTP transport, on libmicrohttpd.
 *
 * Serves one mcp_server at one MCP endpoint (default
 * http://127.0.0.1:<port>/mcp) in both protocol eras: 2026-07-28 requests
 * statelessly, and 2025-03-26 ... 2025-11-25 clients in sessions created by
 * initialize (Mcp-Session-Id). It is built on the public session API of
 * mcp/engine.h only (mcp_session_receive_to routes each request's messages
 * to its own HTTP response, and mcp_send_info says what each one is), like
 * any transport an embedder could write.
 *
 * Safe before it is configured: it binds 127.0.0.1; checks Host and Origin
 * against loopback names; accepts only application/json bodies up to a cap;
 * limits connections, header memory, sessions, calls in flight and time;
 * mints session ids from OpenSSL's CSPRNG and binds each to the principal
 * that created it. Link with mcp::http (pkg-config libmcp-http).
 *
 * Threads: by default the server runs its own polling thread(s); with
 * external_loop set it runs none, and the embedder drives it from its own
 * loop through mcp_http_backend_fd, mcp_http_backend_timeout and
 * mcp_http_run. Tool handlers run on whichever thread handles the request;
 * a handler that defers (MCP_DEFERRED) never holds a server thread.
 *
 * HTTPS, two ways. Built in: mcp_http_options.tls gives a certificate and
 * key (libmicrohttpd's GnuTLS; TLS 1.2 and 1.3 unless its priorities say
 * otherwise), and mcp_http_reload_tls replaces them while serving, without
 * dropping a connection. Or a reverse proxy on the same
 * machine terminates TLS and forwards to the loopback address, for
 * example nginx:
 *
 *     location /mcp {
 *       proxy_pass http://127.0.0.1:8080;
 *       proxy_http_version 1.1;
 *       proxy_set_header Connection "";
 *       proxy_buffering off;          # event streams go out as they come
 *       proxy_read_timeout 1h;        # long event streams
 *       client_header_timeout 10s;    # the header deadline (below)
 *     }
 *
 * and list the public name in allowed_hosts and allowed_origins (the proxy
 * passes Host and Origin through), with auth->resource the https URL
 * clients use. A proxy in front must enforce a deadline for the request
 * headers: libmicrohttpd holds a connection slot while a client trickles
 * its headers in, and a slow sender holds them all (measured here: nine
 * source addresses sending a byte at a time held all 512 slots), which the
 * per-address limit alone does not prevent. Behind a proxy every request
 * comes from its address, so raise per_ip_connections to max_connections.
 */
#ifndef MCP_HTTP_H
#define MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp/mcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A running Streamable HTTP server for one mcp_server. Created (and
 * started) by mcp_http_start, stopped and freed by mcp_http_stop. Its
 * functions may be called from any thread unless their comment says
 * otherwise; with external_loop set, mcp_http_run is called from one thread
 * (the loop's). */
typedef struct mcp_http mcp_http;

/* ---------------------------------------------------------------------------
 * Authorization: OAuth 2.1 resource server
 *
 * With mcp_http_options.auth set, every request to the MCP endpoint needs
 * "Authorization: Bearer <token>" (never a query parameter). A missing,
 * malformed, invalid or expired token gets 401 with
 * WWW-Authenticate: Bearer resource_metadata="..." (plus error="invalid_token"
 * when a token was presented, and scope). A valid token becomes the
 * request's principal (subject and scopes), and the same policy as on stdio
 * decides each tools/call: a missing scope gets 403 with
 * WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope
 * the call needs>", resource_metadata="..." before any stream opens; the
 * handler never runs. RFC 9728 metadata is served without authentication at
 * /.well-known/oauth-protected-resource and at its path-inserted form for
 * the endpoint. Sessions are bound to the token's subject.
 * ------------------------------------------------------------------------ */

/** What a token verifier says about a valid token. */
typedef struct mcp_token_info {
  char subject[256];    /**< "sub"; empty = none */
  char scopes[2048];    /**< granted scopes, space-separated */
  long long expires_at; /**< unix seconds; 0 = unknown */
  void *reserved[4];    /**< zero: room to grow (see the README, Versioning) */
} mcp_token_info;

/** A custom token verifier (introspection, opaque tokens...). Fills info
 * and returns 0 for a valid token for this resource; any other value means
 * invalid (401). Called on server threads; must be thread-safe. */
typedef int (*mcp_token_verify_fn)(const char *token, mcp_token_info *info,
                                   void *user_data);

/** Fetches a JWKS document when a token names a key id the server does
 * not know (the application does the HTTP; libmcp has no HTTP client).
 * Returns 0 and sets *json to a malloc'd buffer of *len bytes (freed by
 * libmcp with free), or nonzero on failure (the last good set is kept).
 * Called at most once at a time and at most once per refresh interval. */
typedef int (*mcp_jwks_fetch_fn)(char **json, size_t *len, void *user_data);

/** Authorization settings. Zero means the default in each comment. */
typedef struct mcp_auth_options {
  const char *resource; /**< canonical URI of this MCP endpoint, e.g.
                            "https://mcp.example.com/mcp": the audience
                            tokens must carry and PRM's "resource".
                            Required. */
  const char *const *authorization_servers; /**< issuer URLs for PRM;
                                                 NULL-terminated, non-empty.
                                                 Required. */
  const char *const *scopes_supported;      /**< PRM; NULL = the union of
                                                 every tool's scopes */
  bool hide_forbidden_tools; /**< tools/list shows only what the caller may
                                  call (see mcp_server_set_hide_forbidden) */

  /* Built-in JWT verification (used when verify is NULL). */
  const char *issuer;           /**< exact "iss"; required for JWT */
  const char *jwks;             /**< JWKS JSON text, or NULL */
  const char *jwks_file;        /**< or a file holding it (re-read by
                                     mcp_http_set_jwks(http, NULL)) */
  mcp_jwks_fetch_fn jwks_fetch; /**< refresh on an unknown kid; may be
                                     NULL */
  void *jwks_fetch_data;        /**< user_data handed to jwks_fetch */
  unsigned jwks_refresh_s;      /**< minimum seconds between fetches; 0 = 60 */
  const void *hs256_secret;     /**< HS256 only when set explicitly */
  size_t hs256_secret_len;      /**< bytes; at least 32 */
  const char *scope_claim;      /**< NULL = "scope" (space-delimited); e.g.
                                     "scp" (a string or an array of strings) */
  unsigned leeway_s;            /**< clock skew allowed for exp/nbf/iat;
                                     0 = 60 */
  bool require_at_jwt;          /**< typ must be "at+jwt" (RFC 9068) */

  /* A custom verifier instead of JWT. */
  mcp_token_verify_fn verify; /**< a custom verifier instead of JWT; NULL =
                                   the built-in JWT verification */
  void *verify_data;          /**< user_data handed to verify */
  void *reserved[4]; /**< zero: room to grow (see the README, Versioning) */
} mcp_auth_options;

/** The GnuTLS priority string of built-in HTTPS when
 * mcp_http_tls.priorities is NULL: GnuTLS's NORMAL set of algorithms, with
 * TLS 1.3 and TLS 1.2 the only protocol versions (RFC 8996 deprecates
 * TLS 1.0 and 1.1; a client that offers nothing newer fails its
 * handshake). */
#define MCP_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/** HTTPS for mcp_http_options.tls: the certificate chain (leaf first, at
 * most 8) and its private key, each as a PEM file or as PEM text (one of
 * the two for each), and the protocol versions and algorithms offered. The
 * key is checked against the certificate at start. Copied by
 * mcp_http_start (the text is read then; file names are kept for
 * mcp_http_reload_tls). */
typedef struct mcp_http_tls {
  const char *cert_file;  /**< PEM certificate chain file */
  const char *key_file;   /**< PEM private key file */
  const char *cert_pem;   /**< or the chain as PEM text */
  const char *key_pem;    /**< or the key as PEM text */
  const char *priorities; /**< the GnuTLS priority string (gnutls_priority_init
                               syntax) saying which TLS versions, ciphers and
                               groups handshakes may use; NULL =
                               MCP_HTTP_TLS_PRIORITIES (TLS 1.2 and 1.3).
                               For example "SECURE128:-VERS-ALL:+VERS-TLS1.3"
                               for TLS 1.3 only. A string GnuTLS refuses fails
                               mcp_http_start with MCP_EINVAL, naming where
                               it went wrong. Read at start only:
                               mcp_http_reload_tls ignores it */
  void *reserved[3]; /**< zero: room to grow (see the README, Versioning) */
} mcp_http_tls;

/** Options of mcp_http_start. Zero (or NULL) means the default given in each
 * member's comment; the struct may grow, so zero-initialize it. */
typedef struct mcp_http_options {
  const char *bind_addr; /**< IPv4 or IPv6 literal; NULL = "127.0.0.1".
                              Anything but a loopback address is logged as a
                              warning: protect it with a token verifier. */
  uint16_t port;         /**< 0 = any free port (read it with
                              mcp_http_port) */
  const char *path;      /**< the MCP endpoint; NULL = "/mcp" */
  unsigned threads;      /**< polling threads; 0 = 1 (ignored with
                              external_loop) */
  bool external_loop;    /**< no threads: the embedder calls mcp_http_run */

  /* DNS-rebinding protection. */
  const char *const *allowed_hosts;   /**< a request whose Host is not
                                           allowed gets 403 before its body
                                           is read. Entries are host names or
                                           literals, compared
                                           case-insensitively and with any
                                           port ("localhost" allows
                                           "localhost:8080"). NULL-terminated;
                                           NULL = localhost, 127.0.0.1 and
                                           [::1]. An empty list denies every
                                           request (fail closed). */
  const char *const *allowed_origins; /**< a request whose Origin is present
                                           and not allowed gets 403 before
                                           its body is read. Entries as in
                                           allowed_hosts, or a full origin
                                           ("https://app.example");
                                           NULL-terminated; NULL = localhost,
                                           127.0.0.1 and [::1]. An empty list
                                           denies every request that has an
                                           Origin (fail closed). A request
                                           without Origin whose
                                           Sec-Fetch-Site says a browser sent
                                           it from another site (anything but
                                           same-origin or none: a navigation,
                                           an image, a form) gets 403 too:
                                           the allowlist cannot judge it, and
                                           refusing is the safe answer */

  size_t max_body;               /**< bytes of one POST body; 0 = 4 MiB */
  size_t header_memory;          /**< bytes per connection for the request
                                      line and headers; 0 = 32 KiB */
  size_t thread_stack_size;      /**< bytes of stack for each polling
                                      thread, where handlers run; 0 = the
                                      system's default (often 8 MiB of
                                      address space). A daemon running many
                                      threads may lower it to what its
                                      handlers need; a size the system
                                      cannot provide makes mcp_http_start
                                      fail with MCP_EIO */
  unsigned connection_timeout_s; /**< idle connection closed after;
                                      0 = 30 */
  unsigned max_connections;      /**< open at once; 0 = 512 */
  unsigned per_ip_connections;   /**< from one address; 0 = 64 */
  unsigned max_sessions;         /**< legacy sessions; 0 = 1024 (503
                                      above) */
  unsigned session_idle_s;       /**< a session unused this long ends;
                                      0 = 600 */
  unsigned max_inflight;         /**< unfinished calls (tools/call,
                                      prompts/get, resources/read, deferred
                                      or waiting for the client's input)
                                      per session, or per stateless request;
                                      0 = 64. A POST whose calls would pass
                                      it gets 429 with Retry-After: 1.
                                      Answers to the server's own requests,
                                      notifications and ping are never
                                      refused for it. The same number bounds
                                      a session's live event streams, kept
                                      for Last-Event-ID with up to 16
                                      finished ones (the oldest finished
                                      makes room first) */
  unsigned keepalive_s;          /**< SSE comment interval on quiet streams;
                                      0 = a third of connection_timeout_s */
  size_t replay_events;          /**< events kept per SSE stream for
                                      Last-Event-ID resumption; 0 = 64 */
  bool prefer_sse;               /**< answer requests as text/event-stream
                                      even when one JSON reply would do */
  bool disable_get;              /**< GET on the endpoint answers 405 */

  const mcp_principal *principal; /**< who calls, when no token verifier is
                                       configured ([auth] adds one): NULL =
                                       an anonymous caller holding every
                                       scope, suitable only for a loopback
                                       server (said once through the
                                       server's log) */
  const mcp_auth_options *auth;   /**< OAuth 2.1 resource server (see
                                       above); NULL = no authentication */
  int listen_fd;                  /**< a bound, listening TCP socket to
                                       serve instead of binding bind_addr
                                       and port (one systemd passed:
                                       mcp_http_systemd_socket); 0 = none.
                                       The server closes it at stop (when
                                       mcp_http_start fails, it stays the
                                       caller's) */
  const char *node_id;            /**< this process's name in a deployment
                                       of several (1-32 characters of
                                       [A-Za-z0-9_-]): every legacy session
                                       id it mints is "NODE_ID." and 32
                                       random base64url characters, so a
                                       reverse proxy routes a session (its
                                       POSTs, GET streams and Last-Event-ID
                                       resumptions alike) to the process
                                       that owns it by the Mcp-Session-Id
                                       header's prefix, without shared
                                       state (an nginx map). NULL = the 32
                                       random characters alone */
  const mcp_http_tls *tls;        /**< HTTPS, by libmicrohttpd's GnuTLS:
                                       the server speaks TLS only; NULL =
                                       plain HTTP. The default Host and
                                       Origin allowlists accept the https
                                       forms as the http ones */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
} mcp_http_options;

/** The listening socket systemd passed by socket activation (its
 * LISTEN_PID and LISTEN_FDS protocol; a .socket unit with one
 * ListenStream), for mcp_http_options.listen_fd: returns the descriptor
 * (3), marked close-on-exec, after unsetting LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES so that children do not take it for theirs. Returns
 * MCP_ENOENT when this process was not given one, MCP_EINVAL when it was
 * given more than one, or one that is not a listening TCP socket. Call it
 * once, early, before other threads start (it changes the environment). */
MCP_API int mcp_http_systemd_socket(void);

/** Starts serving srv over HTTP. srv must outlive the mcp_http. opts may be
 * NULL; it is copied. Returns 0 and sets *out; MCP_EINVAL for bad options;
 * MCP_EIO when the address cannot be bound or threads cannot start
 * (nothing is left running); MCP_ENOMEM. On failure mcp_server_errmsg(srv)
 * says why ("mcp_http_start: cannot start serving on 127.0.0.1 port
 * 8080: ..."), and the same sentence goes to the server's log. Any
 * thread. */
MCP_API int mcp_http_start(mcp_server *srv, const mcp_http_options *opts,
                           mcp_http **out);

/** Stops accepting, closes every connection and session, waits for the
 * server's threads, and frees http. Calls still deferred are cancelled;
 * their later mcp_call_finish is harmless. NULL does nothing. Not from a
 * handler or a callback of this server. */
MCP_API void mcp_http_stop(mcp_http *http);

/** Replaces the JWT key set with a JWKS document (JSON text), or re-reads
 * auth->jwks_file when jwks is NULL. The last good set stays in use when
 * the new one is unusable. Returns 0, MCP_EINVAL (nothing usable; the
 * server's log says why), MCP_EIO (file unreadable) or MCP_ESTATE (no JWT
 * verification configured). Any thread. */
MCP_API int mcp_http_set_jwks(mcp_http *http, const char *jwks);

/** Replaces the TLS certificate and key of a server started with tls:
 * with tls NULL, re-reads the files it was started with (after a
 * certificate's renewal, say); else loads tls (copied). New handshakes
 * get the new pair at once; connections already open keep theirs, and
 * none is dropped. The pair replaced stays in memory until mcp_http_stop.
 * Returns 0; MCP_EINVAL (unusable: not PEM, the key not the
 * certificate's; or NULL tls for a pair given as text); MCP_EIO (a file
 * unreadable); MCP_ESTATE (started without tls); MCP_ENOMEM. On failure
 * the server's log says why and the old pair stays. Any thread. */
MCP_API int mcp_http_reload_tls(mcp_http *http, const mcp_http_tls *tls);

/** The port the server listens on (useful with port 0). */
MCP_API uint16_t mcp_http_port(const mcp_http *http);

/** External loop: the descriptor to watch for readability (epoll-based;
 * one descriptor covers every connection), or -1 when the server runs its
 * own threads. It also becomes readable when another thread has something
 * for a connection: a deferred call finished (mcp_call_finish), a progress
 * notification or a list change for a waiting stream. The loop then calls
 * mcp_http_run, which delivers it; no other wake-up is needed. */
MCP_API int mcp_http_backend_fd(const mcp_http *http);

/** External loop: how long the embedder may wait before calling
 * mcp_http_run even if the descriptor stays quiet, in milliseconds; -1 when
 * there is no deadline. It accounts for the nearest call deadline
 * (mcp_server_set_call_timeout), which mcp_http_run then answers. */
MCP_API long mcp_http_backend_timeout(const mcp_http *http);

/** External loop: does whatever work is ready without blocking (accepts,
 * reads, dispatches, writes, expires idle sessions, answers calls whose
 * deadline passed with mcp_server_expire). Returns 0 or MCP_EIO.
 * Call it from one thread (the loop's). */
MCP_API int mcp_http_run(mcp_http *http);

/* ---------------------------------------------------------------------------
 * Serving until a signal: a daemon's main in a few calls
 *
 * A program that serves HTTP until SIGINT or SIGTERM, as a daemon under
 * systemd or behind a proxy does, takes the common flags of its command
 * line with mcp_http_serve_arg, checks them with mcp_http_serve_check and
 * serves with mcp_http_serve_until_signal. notes, everything and dashboard
 * (examples/) are served this way, so their flags and their listening line
 * are these:
 *
 *   --http ADDR:PORT     serve http://ADDR:PORT/mcp; ADDR an IPv4 or IPv6
 *                        literal, the IPv6 one in brackets or not
 *                        ([::1]:8080), port 0 picking a free port
 *   --http systemd       serve the listening socket systemd passed
 *                        (socket activation, mcp_http_systemd_socket)
 *   --tls-cert FILE --tls-key FILE
 *                        HTTPS with this PEM certificate chain and key
 *   --node-id ID         this process's name behind a proxy
 *                        (mcp_http_options.node_id)
 *   --jwks FILE --issuer URL --audience URL
 *                        an OAuth 2.1 resource server: tokens signed by a
 *                        key of the JWKS in FILE, issued by URL for the
 *                        audience URL (the endpoint's canonical URI)
 *
 * Once serving, one line goes to standard error, which scripts and tests
 * read for the address (with port 0, the port picked):
 *
 *   listening on http://127.0.0.1:8080/mcp
 *
 * (https with a certificate; an IPv6 address in brackets). SIGHUP re-reads
 * the JWKS file and the certificate files; SIGINT or SIGTERM stops
 * serving. For example:
 *
 *     mcp_http_serve_options serve = {.program = "mydaemon"};
 *     for (int i = 1; i < argc; i++) {
 *       int took = mcp_http_serve_arg(&serve, argc, argv, &i);
 *       if (took < 0)
 *         return 2;            // its line on stderr said why
 *       if (took == 0)
 *         ...                  // the program's own flags
 *     }
 *     if (mcp_http_serve_check(&serve) != 0)
 *       return 2;
 *     ... mcp_server_new, tools ...
 *     int rc = mcp_http_serve_until_signal(srv, &serve);
 *     mcp_server_free(srv);    // cancels the tasks still working
 *     ... join the threads that run calls ...
 * ------------------------------------------------------------------------ */

/** The common flags, as a usage line shows them. */
#define MCP_HTTP_SERVE_USAGE                                                   \
  "--http ADDR:PORT|systemd [--tls-cert FILE --tls-key FILE] "                 \
  "[--node-id ID] [--jwks FILE --issuer URL --audience URL]"

/** How mcp_http_serve_until_signal serves: what the common flags said
 * (mcp_http_serve_arg fills those members, or the program sets them), and
 * the rest of mcp_http_start's options. Zero means the default given in
 * each member's comment; the struct may grow, so zero-initialize it. The
 * strings are not copied: they must outlive the serving (the command
 * line's do). */
typedef struct mcp_http_serve_options {
  const char *listen;             /**< --http: "ADDR:PORT" or "systemd"; NULL =
                                       http->bind_addr, port and listen_fd */
  const char *tls_cert_file;      /**< --tls-cert: HTTPS with this PEM chain;
                                       NULL = http->tls */
  const char *tls_key_file;       /**< --tls-key: and this PEM key */
  const char *jwks_file;          /**< --jwks: the keys tokens are signed with;
                                       NULL = http->auth */
  const char *issuer;             /**< --issuer: the tokens' "iss", and the
                                       authorization server the metadata names */
  const char *audience;           /**< --audience: the tokens' "aud", the
                                       endpoint's canonical URI; its host is
                                       allowed as Host beside the loopback names
                                       (for a proxy that passes it on) when
                                       http->allowed_hosts is NULL */
  const char *node_id;            /**< --node-id: http->node_id, and the
                                       per-address connection limit raised to
                                       the whole limit (behind a proxy every
                                       connection comes from its address) when
                                       http->per_ip_connections is 0; NULL =
                                       http->node_id */
  const mcp_principal *principal; /**< who calls without auth; NULL =
                                       http->principal */
  const mcp_http_options *http;   /**< every other option of
                                       mcp_http_start; NULL = the
                                       defaults */
  const char *program;            /**< the name that starts each line this
                                       API writes, e.g. "notes"; NULL =
                                       "libmcp" */
  const char *const *scopes_supported; /**< with --jwks, the protected
                                            resource metadata's
                                            scopes_supported,
                                            NULL-terminated; NULL = the
                                            union of every tool's scopes.
                                            List here too the scopes a
                                            handler asks for by step-up
                                            (mcp_call_require_scopes),
                                            which no tool names */
  void *reserved[3]; /**< zero: room to grow (see the README, Versioning) */
} mcp_http_serve_options;

/** Takes the common flag at argv[*index] (see above), if it is one, into
 * opts: its value is checked (--http's form) and kept as a pointer into
 * argv, which is never written to, so `ps` shows the command line as it
 * was given. Returns 1 when it took a flag, with *index moved to the
 * flag's value (the last element it used, so that a for loop's i++ goes on
 * with the next flag); 0 when argv[*index] is not one of them (nothing
 * changes); MCP_EINVAL when it is one but its value is missing or
 * malformed, after a line on standard error that says why ("notes: --http
 * wants ADDR:PORT, e.g. 127.0.0.1:8080"). A flag given twice keeps its
 * last value. Any thread; opts is the caller's to guard. */
MCP_API int mcp_http_serve_arg(mcp_http_serve_options *opts, int argc,
                               char *const argv[], int *index);

/** Checks that the flags taken go together: --tls-cert and --tls-key both
 * or neither, --jwks, --issuer and --audience all three or none, and
 * those only with --http. Returns 0, or MCP_EINVAL after a line on
 * standard error that says which ("notes: --tls-cert and --tls-key go
 * together, with --http"). Any thread. */
MCP_API int mcp_http_serve_check(const mcp_http_serve_options *opts);

/** Serves srv over HTTP as opts says until SIGINT or SIGTERM: blocks
 * SIGINT, SIGTERM and SIGHUP in the calling thread before the server's
 * threads start (they inherit the mask), starts the server, writes the
 * listening line to standard error, and takes the signals with sigwait,
 * so that no handler runs in the middle of anything. SIGHUP re-reads the
 * JWKS file (mcp_http_set_jwks) and the certificate files
 * (mcp_http_reload_tls), saying so in a line on standard error; the last
 * good ones stay when the new ones are unusable. SIGINT or SIGTERM stops
 * the server (mcp_http_stop: connections closed, calls still deferred
 * cancelled, handlers running on its threads waited for) and returns;
 * the caller's signal mask is restored first, signals of the three that
 * arrived meanwhile taken. Call it from the main thread, or block the three
 * signals in every other thread, so that none of them takes a signal
 * meant to stop serving.
 *
 * Returns 0 after a signal stopped the server; MCP_EINVAL for options
 * that do not go together or a malformed listen; for "systemd",
 * mcp_http_systemd_socket's error (MCP_ENOENT when systemd passed no
 * socket); mcp_http_start's error when the server cannot start. On
 * failure a line on standard error says why, and nothing is left
 * running. srv stays the caller's: free it after this returns (that
 * cancels the tasks still working), and only then join the threads that
 * run calls, which then end early. Not from a handler or a callback. */
MCP_API int mcp_http_serve_until_signal(mcp_server *srv,
                                        const mcp_http_serve_options *opts);

#ifdef __cplusplus
}
#endif

#endif
