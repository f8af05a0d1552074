/* dashboard: an MCP Apps server. Its tool, system_status, reads how this
 * machine is doing (host name, kernel, load averages, memory, uptime, from
 * Linux's /proc) and answers with structured data. Its resource,
 * ui://dashboard/status.html, is a small HTML page that shows that data: a
 * host that supports MCP Apps (the io.modelcontextprotocol/ui extension)
 * finds the page through the tool's _meta.ui.resourceUri, reads it,
 * renders it in a sandboxed frame and hands it each result of the tool. A
 * host without MCP Apps shows the result's text instead, so the tool is
 * useful either way.
 *
 *   dashboard [--stdio | --http ADDR:PORT|systemd [--tls-cert FILE
 *             --tls-key FILE] [--node-id ID] [--jwks FILE --issuer URL
 *             --audience URL]]
 *
 * Over stdio (the default) it serves until end of input, SIGINT or SIGTERM.
 * With --http it serves Streamable HTTP at http://ADDR:PORT/mcp (port 0
 * picks a free one; the line "listening on URL" on stderr gives the real
 * one) until SIGINT or SIGTERM; without --jwks, --issuer and --audience
 * it asks for no token: bind it to a loopback address. libmcp reads
 * those flags and serves (mcp_http_serve_until_signal, mcp/http.h), as
 * for notes and everything.
 *
 * The page is status.html beside this file. CMake compiles it into the
 * program (embed.cmake writes it into the header status_html.h), so the
 * server is one file to install. README.md here says how page and host
 * talk. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "status_html.h" /* status_html[]: status.html's bytes, NUL-ended */

/* The view's address. ui:// is MCP Apps' own scheme: a resource under it
 * must be served as "text/html;profile=mcp-app", and libmcp refuses the
 * registration otherwise. */
#define VIEW_URI "ui://dashboard/status.html"

/* ---- reading the machine's figures --------------------------------------- */

typedef struct figures {
  char hostname[256];
  char kernel[256];
  double load[3]; /* 1, 5 and 15 minutes */
  long cpus;
  unsigned long long mem_total_kib, mem_available_kib;
  double uptime_s;
  char sampled_at[32]; /* when, in UTC (RFC 3339) */
} figures;

/* Reads the first line of path into line. Returns 0, or -1. */
static int first_line(const char *path, char *line, size_t size) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return -1;
  char *got = fgets(line, (int)size, f);
  fclose(f);
  return got ? 0 : -1;
}

/* Finds MemTotal and MemAvailable (in KiB) in /proc/meminfo. */
static int read_meminfo(figures *fig) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f == NULL)
    return -1;
  char line[256];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemTotal: %llu kB", &fig->mem_total_kib) == 1)
      found |= 1;
    else if (sscanf(line, "MemAvailable: %llu kB", &fig->mem_available_kib) ==
             1)
      found |= 2;
  }
  fclose(f);
  return found == 3 ? 0 : -1;
}

/* Fills fig from /proc and the C library. Returns 0, or -1 when a figure
 * cannot be read (not Linux, or no /proc mounted). */
static int read_figures(figures *fig) {
  char line[256];
  if (first_line("/proc/loadavg", line, sizeof line) != 0 ||
      sscanf(line, "%lf %lf %lf", &fig->load[0], &fig->load[1],
             &fig->load[2]) != 3)
    return -1;
  if (first_line("/proc/uptime", line, sizeof line) != 0 ||
      sscanf(line, "%lf", &fig->uptime_s) != 1)
    return -1;
  if (read_meminfo(fig) != 0)
    return -1;
  if (gethostname(fig->hostname, sizeof fig->hostname) != 0)
    return -1;
  fig->hostname[sizeof fig->hostname - 1] = '\0';
  struct utsname uts;
  if (uname(&uts) != 0)
    return -1;
  snprintf(fig->kernel, sizeof fig->kernel, "%s %s", uts.sysname, uts.release);
  if ((fig->cpus = sysconf(_SC_NPROCESSORS_ONLN)) < 1)
    return -1;
  time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  strftime(fig->sampled_at, sizeof fig->sampled_at, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return 0;
}

/* ---- the tool --------------------------------------------------------------
 * The result carries the figures twice: as structuredContent, which the
 * view renders (and which outputSchema describes, so a client can check
 * it), and as a sentence, for the model and for hosts that show no view. */

#define STATUS_SCHEMA                                                          \
  "{\"type\":\"object\",\"properties\":{"                                      \
  "\"hostname\":{\"type\":\"string\"},"                                        \
  "\"kernel\":{\"type\":\"string\"},"                                          \
  "\"cpus\":{\"type\":\"integer\",\"minimum\":1},"                             \
  "\"load\":{\"type\":\"array\",\"items\":{\"type\":\"number\","               \
  "\"minimum\":0},\"minItems\":3,\"maxItems\":3,\"description\":"              \
  "\"Load averages over 1, 5 and 15 minutes.\"},"                              \
  "\"memory\":{\"type\":\"object\",\"properties\":{"                           \
  "\"total_bytes\":{\"type\":\"integer\",\"minimum\":0},"                      \
  "\"available_bytes\":{\"type\":\"integer\",\"minimum\":0}},"                 \
  "\"required\":[\"total_bytes\",\"available_bytes\"]},"                       \
  "\"uptime_seconds\":{\"type\":\"integer\",\"minimum\":0},"                   \
  "\"sampled_at\":{\"type\":\"string\",\"format\":\"date-time\"}},"            \
  "\"required\":[\"hostname\",\"kernel\",\"cpus\",\"load\",\"memory\","        \
  "\"uptime_seconds\",\"sampled_at\"]}"

static int system_status(mcp_call *call, void *user_data) {
  (void)user_data;
  figures fig;
  if (read_figures(&fig) != 0)
    return mcp_result_error(call, "The machine's figures could not be read: "
                                  "this server reads Linux's /proc.");

  char text[1024];
  bool days = fig.uptime_s >= 86400;
  snprintf(text, sizeof text,
           "%s (%s): load %.2f %.2f %.2f on %ld CPUs; %.1f GiB of %.1f GiB "
           "memory available; up %.1f %s.",
           fig.hostname, fig.kernel, fig.load[0], fig.load[1], fig.load[2],
           fig.cpus, (double)fig.mem_available_kib / 1048576,
           (double)fig.mem_total_kib / 1048576,
           fig.uptime_s / (days ? 86400 : 3600), days ? "days" : "hours");
  /* No need to test each builder: the first failure is latched, and the
   * last builder's return value below reports it. */
  mcp_result_text(call, text);

  /* cJSON builds the object, escaping the strings as JSON needs. */
  cJSON *out = cJSON_CreateObject();
  cJSON_AddStringToObject(out, "hostname", fig.hostname);
  cJSON_AddStringToObject(out, "kernel", fig.kernel);
  cJSON_AddNumberToObject(out, "cpus", (double)fig.cpus);
  cJSON_AddItemToObject(out, "load", cJSON_CreateDoubleArray(fig.load, 3));
  cJSON *memory = cJSON_AddObjectToObject(out, "memory");
  cJSON_AddNumberToObject(memory, "total_bytes",
                          (double)fig.mem_total_kib * 1024);
  cJSON_AddNumberToObject(memory, "available_bytes",
                          (double)fig.mem_available_kib * 1024);
  cJSON_AddNumberToObject(out, "uptime_seconds", (double)(long)fig.uptime_s);
  cJSON_AddStringToObject(out, "sampled_at", fig.sampled_at);
  int rc = out ? mcp_result_structured_cjson(call, out) : MCP_ENOMEM;
  cJSON_Delete(out);
  return rc;
}

static const mcp_tool status_tool = {
    .name = "system_status",
    .title = "System status",
    .description = "Reports how this machine is doing: host name, kernel, "
                   "load averages, memory and uptime.",
    .output_schema = STATUS_SCHEMA,
    /* It only reads, and only this machine. */
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = system_status,
    /* The MCP Apps link: the view a host renders for this tool's results.
     * visibility is the default, written out: the model may call the tool,
     * and so may the view (its Refresh button). */
    .meta = "{\"ui\":{\"resourceUri\":\"" VIEW_URI "\","
            "\"visibility\":[\"model\",\"app\"]}}",
};

/* ---- the view ------------------------------------------------------------ */

static int read_view(mcp_call *call, void *user_data) {
  (void)user_data;
  /* One contents item: the page, with the resource's MIME type and its
   * _meta, where hosts look for ui.csp first. */
  return mcp_result_text(call, (const char *)status_html);
}

static const mcp_resource view = {
    .uri = VIEW_URI,
    .name = "status",
    .title = "System status view",
    .description = "The page that shows system_status's results.",
    .mime_type = "text/html;profile=mcp-app",
    .handler = read_view,
    /* No csp member: the page fetches nothing, so the host's strictest
     * policy (no network at all) suits it. It asks for a border. */
    .meta = "{\"ui\":{\"prefersBorder\":true}}",
};

int main(int argc, char **argv) {
  /* --http and the flags that go with it (mcp/http.h): libmcp reads them,
   * without writing to argv. */
  mcp_http_serve_options serve = {.program = "dashboard"};
  for (int i = 1; i < argc; i++) {
    int took = mcp_http_serve_arg(&serve, argc, argv, &i);
    if (took < 0)
      return 2;
    if (took)
      continue;
    if (strcmp(argv[i], "--stdio") == 0) {
      serve.listen = NULL;
    } else {
      fprintf(stderr,
              "usage: dashboard [--stdio | " MCP_HTTP_SERVE_USAGE "]\n");
      return 2;
    }
  }
  if (mcp_http_serve_check(&serve) != 0)
    return 2; /* its line on stderr said which flags do not go together */

  mcp_server *srv;
  const mcp_server_info info = {
      .name = "dashboard",
      .version = mcp_version(),
      .title = "Dashboard",
      .instructions = "system_status reports this machine's load, memory "
                      "and uptime; hosts with MCP Apps show it as a page.",
  };
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (mcp_server_add_tool(srv, &status_tool, NULL) != 0 ||
      mcp_server_add_resource(srv, &view, NULL) != 0) {
    fprintf(stderr, "dashboard: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  /* The author's check: among other things, that the view the tool names
   * is served (a typo in either URI would be logged here). */
  mcp_server_lint(srv, NULL);

  int rc;
  if (serve.listen) {
    /* Until SIGINT or SIGTERM, saying "listening on URL" on stderr. */
    rc = mcp_http_serve_until_signal(srv, &serve) == 0 ? 0 : 1;
  } else {
    /* SIGTERM or Ctrl-C ends serving cleanly, like the end of input. */
    const mcp_stdio_options opts = {.stop_on_signal = true};
    rc = mcp_serve_stdio(srv, &opts) == 0 ? 0 : 1;
  }
  mcp_server_free(srv);
  return rc;
}
