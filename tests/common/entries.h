/* The fixture of the suites of lib/methods' prompts, resources and
 * subscriptions (unit/test_prompts_resources.c, unit/test_subscriptions.c),
 * shared so that neither keeps a copy: a server (srv) with the tool "run",
 * the prompts greet, plain and secret (secret needs the scope "admin"), the
 * resources file:///readme, file:///logo.png and file:///private (admin),
 * and the templates file:///notes/{name}, file:///docs/{+path} and
 * file:///vault/{key} (admin), every prompt and resource served by h_entry,
 * which records what it saw in the g_ variables below; and the peer P on
 * it, as ALICE (scope "read"), whose every message is checked to be JSON.
 * Only the public API is used. Not thread-safe: one test at a time. */
#ifndef MCP_TEST_ENTRIES_H
#define MCP_TEST_ENTRIES_H

#include <check.h>
#include <mcp/mcp.h>
#include <stddef.h>

#include "testutil.h"
#include "tools.h"

extern mcp_server *srv;
extern tu_peer P;

/* What handlers do (NULL: a default text result), and what they saw. */
extern int (*g_fn)(mcp_call *call);
extern int g_runs;           /* prompt and resource handler runs */
extern int g_tool_runs;      /* tool handler runs */
extern mcp_call_kind g_kind; /* of the last call */
extern char g_tool[256];     /* mcp_call_name of the last call */
extern char g_uri[256];      /* mcp_call_uri, "(null)" for NULL */
extern char g_name[256];     /* argument or variable "name" */
extern int g_name_rc;        /* mcp_call_arg_string's result */
extern char g_state[64];     /* mcp_call_state, "(null)" for NULL */
extern int g_req_rc;         /* mcp_call_request_input's result */

/* The completion callback c_suggest: its runs, what it returns (0: the
 * values), how many values it adds (0: the names alice, albert and bob
 * that begin with the value), the total it sets (0: none), its last
 * mcp_completion_add result, and what it saw. */
extern int g_c_runs;
extern int g_c_rc;
extern int g_c_count;
extern unsigned long g_c_total;
extern int g_c_last_add;
extern char g_c_arg[64], g_c_value[64], g_c_context[64], g_c_subject[64];

/* The server's log lines, one a line. */
extern char g_log[8192];

extern const mcp_principal ALICE; /* scope "read" */
extern const mcp_principal ROOT;  /* scopes "read" and "admin" */

/* The check behind every peer of these suites: each message is JSON, an
 * object (or a batch's array). */
void inspect(const char *msg, size_t len);
/* Every prompt and resource runs this (user_data: &g_runs). */
int h_entry(mcp_call *call, void *user_data);
/* The tool "run"'s handler. */
int h_tool(mcp_call *call, void *user_data);
/* The completion callback of greet, notes and vault (user_data: &g_runs). */
int c_suggest(mcp_completion *c, void *user_data);

extern const mcp_tool TOOL_RUN;
extern const mcp_prompt PROMPT_GREET, PROMPT_PLAIN, PROMPT_SECRET;
extern const mcp_resource RES_README, TMPL_NOTES;
extern const mcp_server_info INFO;

/* Adds the three prompts, three resources and three templates to s (a
 * second server of a test, say). */
void add_surface(mcp_server *s);
/* A server with the tool and nothing else. */
void setup_bare(void);
/* The tool, three prompts, three resources and three templates. */
void setup(void);
void teardown(void);
/* A tcase of s run with set as its setup and teardown after. */
TCase *tcase(Suite *s, const char *name, void (*set)(void));

#endif
