/* The Redis store's private header: its URL, parsed (url.c), for the store
 * (redis.c) and its tests. The layer sees libmcp's public API and the base
 * layer only. */
#ifndef MCP_REDIS_INT_H
#define MCP_REDIS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "mcp/redis.h"

/* Where a store's Redis is and how to log in. */
typedef struct mcp__redis_url {
  bool is_unix;    /* a unix socket (path) rather than host and port */
  char host[256];  /* a name or an address, without IPv6's brackets */
  int port;        /* 1..65535 */
  char path[108];  /* the socket's path (sun_path's size) */
  char user[128];  /* "" when none (AUTH password alone) */
  char pass[256];  /* "" when none (no AUTH) */
  bool has_pass;   /* a password was given, even an empty one */
  long db;         /* 0..(1 << 20) */
  char shown[512]; /* the URL as logs may show it: never the password */
} mcp__redis_url;

/* Parses url into *u. Returns 0, or MCP_EINVAL and why (whylen bytes)
 * says what is wrong with it. */
int mcp__redis_url_parse(const char *url, mcp__redis_url *u, char *why,
                         size_t whylen);

#endif
