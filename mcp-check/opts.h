/* opts.h: mcp-check's command line. */
#ifndef MCPC_OPTS_H
#define MCPC_OPTS_H

#include <stddef.h>

typedef struct mcpc_opts {
  char **command; /* after "--": the stdio server to start, NULL-ended */
  const char *url;
  const char *token, *read_token, *read_token_cmd, *launch;
  const char *calls, *junit, *protocol_version;
  unsigned timeout_s;        /* per request; default 10 */
  unsigned launch_timeout_s; /* --launch: until the URL answers; 30 */
  int observe, json, no_color, help, version;
} mcpc_opts;

/* Reads argv into o (pointers into argv). Returns 0, or -1 with why (a
 * usage error: exit 2). --help and --version need nothing else. */
int mcpc_opts_parse(int argc, char **argv, mcpc_opts *o, char *why,
                    size_t size);

/* The text of --help. */
extern const char mcpc_usage[];

#endif
