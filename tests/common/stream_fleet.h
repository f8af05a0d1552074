/* A fleet of long-lived event streams held open against one MCP server on
 * loopback by one thread: non-blocking sockets and one epoll set, no
 * thread per stream (the load test of issue 20 and the bench's streams
 * scenario). Each stream is a real HTTP/1.1 connection of its own:
 *
 *   SF_LEGACY  initialize (2025-11-25), notifications/initialized and
 *              resources/subscribe on the connection, then the session's
 *              standalone GET stream on it; open once the priming event
 *              has come
 *   SF_MODERN  a 2026-07-28 subscriptions/listen POST naming the URI in
 *              resourceSubscriptions; open once the acknowledgement has
 *              come
 *   SF_BARE    a plain GET of /mcp (a bare libmicrohttpd server holding
 *              the connection the same way); open once its first event
 *              has come
 *
 * Connections come from 127.0.0.1 to 127.0.0.4 in turn, so that a few
 * runs of ten thousand do not use up one address's ephemeral ports. Every
 * wait is bounded by a deadline. Test code only: it aborts when this
 * process runs out of memory. */
#ifndef MCP_TEST_STREAM_FLEET_H
#define MCP_TEST_STREAM_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sf_kind { SF_LEGACY, SF_MODERN, SF_BARE } sf_kind;

typedef struct sf_fleet sf_fleet;

/* A fleet for the server on 127.0.0.1:port whose streams watch uri (at
 * most 200 characters, nothing JSON would escape). */
sf_fleet *sf_new(uint16_t port, const char *uri);
/* Closes every socket still open and frees f. NULL does nothing. */
void sf_free(sf_fleet *f);
/* Why the last call that failed failed ("" when none did). */
const char *sf_error(const sf_fleet *f);

/* Opens n more streams of kind, with at most parallel of them being set
 * up at a time, and waits until every one is open or timeout_ms passed;
 * streams opened before are read meanwhile. Returns 0, or -1 with
 * sf_error naming the stream and what went wrong. */
int sf_open(sf_fleet *f, sf_kind kind, size_t n, size_t parallel,
            long timeout_ms);

/* Streams made so far, and of those the ones still open (neither side has
 * closed them). */
size_t sf_count(const sf_fleet *f);
size_t sf_open_count(const sf_fleet *f);

/* Reads the open streams until each has received needle since it opened,
 * or timeout_ms passed. Returns how many have; a stream the server ended
 * meanwhile is an error (sf_error), and so is one past 64 KiB. */
size_t sf_wait(sf_fleet *f, const char *needle, long timeout_ms);

/* Stream i: its kind, the id it goes by (a legacy stream's session id, a
 * modern stream's listen request id as JSON text; "" for a bare one), and
 * the event-stream text it received after it opened (de-chunked,
 * NUL-terminated). */
sf_kind sf_kind_of(const sf_fleet *f, size_t i);
const char *sf_id(const sf_fleet *f, size_t i);
const char *sf_received(const sf_fleet *f, size_t i);

/* Closes every open stream from the client's side (an orderly close),
 * then ends each legacy session with DELETE over parallel keep-alive
 * connections. Returns 0, or -1 when a DELETE was not answered 204 within
 * timeout_ms (sf_error says which). */
int sf_close(sf_fleet *f, size_t parallel, long timeout_ms);

/* Milliseconds of CLOCK_MONOTONIC. */
long sf_now_ms(void);

#endif
