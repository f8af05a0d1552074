/* opts.c: the command line, read by hand (long options only, each with its
 * value as the next word), so that a server's own flags after "--" are
 * never touched. */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char mcpc_usage[] =
    "usage: mcp-check [options] -- CMD [ARGS...]   audit a stdio server\n"
    "       mcp-check [options] URL                audit a Streamable HTTP "
    "server\n"
    "\n"
    "Checks each tool's hints (readOnlyHint, destructiveHint, "
    "idempotentHint,\n"
    "openWorldHint): as advertised (hints), against the server's scopes "
    "with a\n"
    "token without write scopes (scopes), and against what the tool does "
    "when\n"
    "called under observation (behaviour, --observe). It calls tools: point "
    "it\n"
    "at a test instance, never at production data.\n"
    "\n"
    "It declares tool resolution: each call of a tool the server marks "
    "resolvable\n"
    "is first resolved (tools/resolve) and judged against the hints "
    "resolved for\n"
    "its arguments; a resolution that fails, or is looser than the static "
    "hints,\n"
    "is a finding (resolution). A call resolved read-only may run with a "
    "read-only\n"
    "token: the scopes check calls such a tool with arguments resolved "
    "writing.\n"
    "\n"
    "options:\n"
    "  --token T            bearer token for listing and calling (HTTP)\n"
    "  --read-token T       a token without write scopes: every tool that "
    "is\n"
    "                       not read-only must be refused on scope\n"
    "  --read-token-cmd CMD a command (sh -c) printing such a token\n"
    "  --launch CMD         start the HTTP server (sh -c CMD) first and "
    "wait\n"
    "                       until URL answers (--launch-timeout, default 30 "
    "s)\n"
    "  --launch-timeout S   seconds to wait for a launched server\n"
    "  --observe            run the server (CMD, or --launch) under "
    "observation\n"
    "                       and judge every effect of each call\n"
    "  --calls FILE         the calls to make: JSON lines "
    "{\"name\":...,\"arguments\":{...}};\n"
    "                       without it each tool gets a minimal valid "
    "instance\n"
    "                       of its input schema\n"
    "  --json               print the report as JSON (shape in "
    "mcp-check(1))\n"
    "  --junit FILE         also write JUnit XML to FILE\n"
    "  --timeout S          seconds to wait for each answer (default 10)\n"
    "  --protocol-version V the version to try first (default 2026-07-28, "
    "falling\n"
    "                       back to 2025-11-25 as the server answers)\n"
    "  --no-color           no colour, even on a terminal\n"
    "  --help, --version\n"
    "\n"
    "exit status:\n"
    "  0  nothing found\n"
    "  1  findings (each names the tool, the hint, the evidence and the "
    "fix)\n"
    "  2  usage error (bad option, unreadable --calls file, --read-token-cmd "
    "failed)\n"
    "  3  the server could not be reached, started or spoken to (the reason "
    "is\n"
    "     printed)\n";

static int seconds(const char *s, unsigned *out) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (*s < '0' || *s > '9' || *end != '\0' || v == 0 || v > 3600)
    return -1;
  *out = (unsigned)v;
  return 0;
}

/* The options that take a value, and where it goes. */
static const char **value_slot(mcpc_opts *o, const char *name) {
  static const struct {
    const char *name;
    size_t offset;
  } table[] = {
      {"--token", offsetof(mcpc_opts, token)},
      {"--read-token", offsetof(mcpc_opts, read_token)},
      {"--read-token-cmd", offsetof(mcpc_opts, read_token_cmd)},
      {"--launch", offsetof(mcpc_opts, launch)},
      {"--calls", offsetof(mcpc_opts, calls)},
      {"--junit", offsetof(mcpc_opts, junit)},
      {"--protocol-version", offsetof(mcpc_opts, protocol_version)},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(name, table[i].name) == 0)
      return (const char **)(void *)((char *)o + table[i].offset);
  return NULL;
}

static int *flag_slot(mcpc_opts *o, const char *name) {
  if (strcmp(name, "--observe") == 0)
    return &o->observe;
  if (strcmp(name, "--json") == 0)
    return &o->json;
  if (strcmp(name, "--no-color") == 0)
    return &o->no_color;
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    return &o->help;
  if (strcmp(name, "--version") == 0)
    return &o->version;
  return NULL;
}

/* The rules between options, once every word is read. */
static int consistent(const mcpc_opts *o, char *why, size_t size) {
  if (o->help || o->version)
    return 0;
  if (!o->command && !o->url) {
    snprintf(why, size,
             "give a URL, or -- and the command of a stdio "
             "server");
    return -1;
  }
  if (o->command && o->url) {
    snprintf(why, size, "give a URL or a command, not both");
    return -1;
  }
  if (o->command &&
      (o->token || o->read_token || o->read_token_cmd || o->launch)) {
    snprintf(why, size,
             "--token, --read-token, --read-token-cmd and "
             "--launch are for a URL");
    return -1;
  }
  if (o->read_token && o->read_token_cmd) {
    snprintf(why, size, "--read-token or --read-token-cmd, not both");
    return -1;
  }
  if (o->observe && o->url && !o->launch) {
    snprintf(why, size,
             "--observe needs a server mcp-check starts: -- CMD, "
             "or --launch CMD with a URL");
    return -1;
  }
  if (o->url && strncmp(o->url, "http://", 7) != 0 &&
      strncmp(o->url, "https://", 8) != 0) {
    snprintf(why, size, "%.200s is not an http:// or https:// URL", o->url);
    return -1;
  }
  return 0;
}

int mcpc_opts_parse(int argc, char **argv, mcpc_opts *o, char *why,
                    size_t size) {
  memset(o, 0, sizeof *o);
  o->timeout_s = 10;
  o->launch_timeout_s = 30;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char **slot;
    int *flag;
    if (strcmp(a, "--") == 0) {
      if (i + 1 >= argc) {
        snprintf(why, size, "-- needs the command of a stdio server");
        return -1;
      }
      o->command = &argv[i + 1];
      break;
    }
    if ((flag = flag_slot(o, a)) != NULL) {
      *flag = 1;
      continue;
    }
    if ((slot = value_slot(o, a)) != NULL || strcmp(a, "--timeout") == 0 ||
        strcmp(a, "--launch-timeout") == 0) {
      if (i + 1 >= argc) {
        snprintf(why, size, "%s needs a value", a);
        return -1;
      }
      if (slot) {
        *slot = argv[++i];
      } else if (seconds(argv[++i], strcmp(a, "--timeout") == 0
                                        ? &o->timeout_s
                                        : &o->launch_timeout_s) < 0) {
        snprintf(why, size, "%s takes whole seconds from 1 to 3600", a);
        return -1;
      }
      continue;
    }
    if (a[0] == '-') {
      snprintf(why, size, "unknown option %.100s", a);
      return -1;
    }
    if (o->url) {
      snprintf(why, size, "one URL only (%.100s?)", a);
      return -1;
    }
    o->url = a;
  }
  return consistent(o, why, size);
}
