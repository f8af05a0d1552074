/* everything: the server the official MCP conformance suite
 * (@modelcontextprotocol/conformance) expects to find. Each tool, resource
 * and prompt below has the name a conformance scenario asks for and does
 * what that scenario checks, in both protocol eras: 2025-11-25 sessions
 * (initialize) and 2026-07-28 stateless requests. It is also a tour of the
 * API: every kind of content, logging and progress from a deferred call,
 * asking the client for input (elicitation, sampling, roots) with state kept
 * between rounds, resources and templates, prompts with a completion, and
 * tools registered and removed while serving.
 *
 *   everything [--stdio | --http ADDR:PORT|systemd [--tls-cert FILE
 *              --tls-key FILE] [--node-id ID] [--jwks FILE --issuer URL
 *              --audience URL]] [--guard]
 *
 * With --tls-cert and --tls-key (PEM files) it speaks HTTPS at
 * https://ADDR:PORT/mcp instead. --http systemd serves the socket systemd
 * passed (socket activation).
 * With --http it serves Streamable HTTP at http://ADDR:PORT/mcp (port 0
 * picks a free one; the line "listening on URL" on stderr gives the real
 * one) until SIGINT or SIGTERM; without --jwks, --issuer and --audience it
 * asks for no token: bind it to a loopback address. libmcp reads those
 * flags and serves (mcp_http_serve_until_signal, mcp/http.h), as for notes
 * and dashboard. Without --http, it serves stdio until end of input,
 * SIGINT or SIGTERM.
 *
 * Every tool here reaches nothing outside this process: asking the client
 * (elicitation, sampling, roots) goes through the client the user runs, so
 * open_world is false throughout.
 *
 * With --guard (Linux, when libmcp was built with its guard) the kernel
 * holds each tool to its hints (mcp/guard.h): the read-only tools cannot
 * write any file, the triggers cannot remove one, and no tool can reach the
 * network. What the kernel cannot enforce is said on stderr at start, and
 * each call's audit line there names where its handler ran. One more tool
 * is offered then, try_write: it says it is read-only and tries to create a
 * file all the same, to show the kernel refusing. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <mcp/mcp.h>
#ifdef MCP_EVERYTHING_HTTP
#include <mcp/http.h>
#endif
#ifdef MCP_EXAMPLE_GUARD
#include <errno.h>
#include <fcntl.h>
#include <mcp/guard.h>
#include <unistd.h>
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- media ------------------------------------------------------------------
 * The library base64-encodes binary content itself: handlers pass bytes. */

/* A 1x1 PNG image. */
static const unsigned char png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
    0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
    0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

/* A WAV file: one silent 16-bit sample, mono, 8 kHz. */
static const unsigned char wav[] = {
    0x52, 0x49, 0x46, 0x46, 0x26, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45,
    0x66, 0x6d, 0x74, 0x20, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x40, 0x1f, 0x00, 0x00, 0x80, 0x3e, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00,
    0x64, 0x61, 0x74, 0x61, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};

/* The server's and test_simple_text's icon (MCP 2025-11-25: clients of
 * earlier versions are sent none): a green square as an SVG data: URI,
 * which a client shows without fetching anything. */
static const char *const icon_sizes[] = {"any", NULL};
static const mcp_icon icons[] = {
    {.src = "data:image/svg+xml;base64,"
            "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9Ij"
            "AgMCAxNiAxNiI+PHJlY3Qgd2lkdGg9IjE2IiBoZWlnaHQ9IjE2IiByeD0iMyIgZmls"
            "bD0iIzJhNyIvPjwvc3ZnPg==",
     .mime_type = "image/svg+xml",
     .sizes = icon_sizes},
    {.src = NULL}};

/* ---- helpers ------------------------------------------------------------- */

/* Appends a text block formatted like printf, however long it gets. The
 * compiler checks the format strings. */
#ifdef __GNUC__
#define PRINTF_LIKE(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define PRINTF_LIKE(fmt, first)
#endif
static int result_textf(mcp_call *call, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int result_textf(mcp_call *call, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *text = n < 0 ? NULL : malloc((size_t)n + 1);
  if (text == NULL)
    return MCP_ENOMEM;
  va_start(ap, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = mcp_result_text(call, text);
  free(text);
  return rc;
}

/* The client's answer under key; when there is none yet, asks for it and
 * returns NULL. *rc then tells the handler what to return: MCP_INPUT_REQUIRED
 * once something was asked, or the first error (MCP_ECAPABILITY when the
 * client cannot be asked this). Several questions asked in a row go to the
 * client together, in one round. */
static const cJSON *answer_or_ask(mcp_call *call, const char *key,
                                  mcp_input_kind kind, const char *params,
                                  int *rc) {
  const cJSON *answer = mcp_call_input(call, key);
  if (answer != NULL)
    return answer;
  int asked = mcp_call_request_input(call, key, kind, params);
  if (asked != 0 && *rc >= 0)
    *rc = asked;
  else if (asked == 0 && *rc == 0)
    *rc = MCP_INPUT_REQUIRED;
  return NULL;
}

/* Returns rc, first keeping state for the next round when rc says input is
 * still required. */
static int keep_state(mcp_call *call, const char *state, int rc) {
  if (rc == MCP_INPUT_REQUIRED) {
    int err = mcp_call_set_state(call, state);
    if (err != 0)
      return err;
  }
  return rc;
}

/* The string field of an accepted elicitation's content, or NULL when the
 * user declined or cancelled, or left the field out. */
static const char *accepted_field(const cJSON *answer, const char *field) {
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
  if (!cJSON_IsString(action) || strcmp(action->valuestring, "accept") != 0)
    return NULL;
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(answer, "content");
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(content, field));
}

/* The text a model sent back to sampling/createMessage, or NULL. */
static const char *sampled_text(const cJSON *answer) {
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(answer, "content");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(content, "type");
  if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") != 0)
    return NULL;
  return cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(content, "text"));
}

/* The params of sampling/createMessage asking the model one question, as
 * JSON text to free with cJSON_free (NULL when out of memory). */
static char *sampling_params(const char *question, int max_tokens) {
  cJSON *params = cJSON_CreateObject();
  cJSON *message = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(params, "messages"), message);
  cJSON_AddStringToObject(message, "role", "user");
  cJSON *content = cJSON_AddObjectToObject(message, "content");
  cJSON_AddStringToObject(content, "type", "text");
  cJSON_AddStringToObject(content, "text", question);
  cJSON_AddNumberToObject(params, "maxTokens", max_tokens);
  char *text = cJSON_PrintUnformatted(params);
  cJSON_Delete(params);
  return text;
}

/* ---- content tools ------------------------------------------------------- */

static int simple_text(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "This is a simple text response for testing.");
}

static int image_content(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_image(call, png, sizeof png, "image/png");
}

static int audio_content(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_audio(call, wav, sizeof wav, "audio/wav");
}

static int embedded_resource(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_resource_text(call, "test://embedded-resource",
                                  "text/plain",
                                  "This is an embedded resource content.");
}

static int multiple_content_types(mcp_call *call, void *user_data) {
  (void)user_data;
  /* Builders latch their first failure, so only the last result matters. */
  mcp_result_text(call, "Multiple content types test:");
  mcp_result_image(call, png, sizeof png, "image/png");
  return mcp_result_resource_text(call, "test://mixed-content-resource",
                                  "application/json",
                                  "{\"test\":\"data\",\"value\":123}");
}

static int error_handling(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_error(
      call, "This tool intentionally returns an error for testing.");
}

/* Shows the arguments it was given; what matters is its input schema. */
static int json_schema_tool(mcp_call *call, void *user_data) {
  (void)user_data;
  char *args = cJSON_PrintUnformatted(mcp_call_arguments(call));
  if (args == NULL)
    return MCP_ENOMEM;
  int rc = result_textf(call, "Received arguments: %s", args);
  cJSON_free(args);
  return rc;
}

/* ---- slow tools: logging and progress from a deferred call ------------------
 * The handler hands the call to a thread and returns MCP_DEFERRED, so no
 * server thread waits while the steps sleep. The thread reports, then
 * finishes the call. main frees the server (which cancels the calls and
 * tasks still working) and then waits for the last of these threads. */

typedef enum steps_kind { STEPS_LOG, STEPS_PROGRESS } steps_kind;

typedef struct steps_job {
  mcp_call *call;
  steps_kind kind;
} steps_job;

static pthread_mutex_t workers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t workers_idle = PTHREAD_COND_INITIALIZER;
static unsigned workers;

static void worker_done(void) {
  pthread_mutex_lock(&workers_lock);
  if (--workers == 0)
    pthread_cond_broadcast(&workers_idle);
  pthread_mutex_unlock(&workers_lock);
}

static void wait_for_workers(void) {
  pthread_mutex_lock(&workers_lock);
  while (workers > 0)
    pthread_cond_wait(&workers_idle, &workers_lock);
  pthread_mutex_unlock(&workers_lock);
}

/* Three steps 50 ms apart: a log message or a progress report each
 * (0, 50 and 100 of 100). A client that cancels stops it early. */
static void *run_steps(void *arg) {
  steps_job *job = arg;
  static const char *const said[] = {"Tool execution started",
                                     "Tool processing data",
                                     "Tool execution completed"};
  for (int i = 0; i < 3 && !mcp_call_cancelled(job->call); i++) {
    if (i > 0)
      nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    if (job->kind == STEPS_LOG)
      mcp_call_log(job->call, MCP_LOG_INFO, said[i]);
    else
      mcp_call_progress(job->call, i * 50.0, 100.0, NULL);
  }
  int rc = mcp_result_text(job->call, job->kind == STEPS_LOG
                                          ? "Logged three messages."
                                          : "Reported progress 0, 50 and "
                                            "100 of 100.");
  mcp_call_finish(job->call, rc);
  free(job);
  worker_done();
  return NULL;
}

/* Runs fn(job) on a detached worker thread that main waits for, and
 * returns MCP_DEFERRED (the thread finishes the call), or MCP_ENOMEM after
 * freeing job when no thread could start. */
static int defer_to_worker(void *(*fn)(void *), void *job) {
  pthread_mutex_lock(&workers_lock);
  workers++;
  pthread_mutex_unlock(&workers_lock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int err = pthread_create(&thread, &attr, fn, job);
  pthread_attr_destroy(&attr);
  if (err != 0) {
    free(job);
    worker_done();
    return MCP_ENOMEM;
  }
  return MCP_DEFERRED;
}

static int start_steps(mcp_call *call, steps_kind kind) {
  steps_job *job = malloc(sizeof *job);
  if (job == NULL)
    return MCP_ENOMEM;
  *job = (steps_job){.call = call, .kind = kind};
  return defer_to_worker(run_steps, job);
}

static int with_logging(mcp_call *call, void *user_data) {
  (void)user_data;
  return start_steps(call, STEPS_LOG);
}

static int with_progress(mcp_call *call, void *user_data) {
  (void)user_data;
  return start_steps(call, STEPS_PROGRESS);
}

/* ---- asking the client: elicitation and sampling ----------------------------
 * One handler serves both eras: it asks, returns MCP_INPUT_REQUIRED, and is
 * called again with the answer. A client without the capability gets an
 * error (MCP_ECAPABILITY). */

/* Asks the user with params (an elicitation/create params object) and
 * reports the answer. */
static int ask_user(mcp_call *call, const char *params) {
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "form", MCP_INPUT_ELICITATION, params, &rc);
  if (answer == NULL)
    return rc;
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(answer, "content");
  char *shown = content ? cJSON_PrintUnformatted(content) : NULL;
  rc = result_textf(call, "Elicitation completed: action=%s, content=%s",
                    cJSON_IsString(action) ? action->valuestring : "(none)",
                    shown ? shown : "{}");
  cJSON_free(shown);
  return rc;
}

static int elicitation(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *message;
  mcp_call_arg_string(call, "message", &message); /* required by the schema */
  cJSON *params = cJSON_Parse(
      "{\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
      "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
      "\"email\":{\"type\":\"string\",\"description\":\"User's email "
      "address\"}},\"required\":[\"username\",\"email\"]}}");
  cJSON_AddStringToObject(params, "message", message);
  char *text = cJSON_PrintUnformatted(params);
  cJSON_Delete(params);
  int rc = text ? ask_user(call, text) : MCP_ENOMEM;
  cJSON_free(text);
  return rc;
}

/* SEP-1034: a default for every primitive type. */
static int elicitation_defaults(mcp_call *call, void *user_data) {
  (void)user_data;
  return ask_user(
      call,
      "{\"message\":\"Please review and update the form fields with "
      "defaults\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
      "\"name\":{\"type\":\"string\",\"description\":\"User name\","
      "\"default\":\"John Doe\"},"
      "\"age\":{\"type\":\"integer\",\"description\":\"User age\","
      "\"default\":30},"
      "\"score\":{\"type\":\"number\",\"description\":\"User score\","
      "\"default\":95.5},"
      "\"status\":{\"type\":\"string\",\"description\":\"User status\","
      "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
      "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification "
      "status\",\"default\":true}}}}");
}

/* SEP-1330: the five ways to offer choices. */
static int elicitation_enums(mcp_call *call, void *user_data) {
  (void)user_data;
  return ask_user(
      call,
      "{\"message\":\"Please pick from each list\",\"requestedSchema\":{"
      "\"type\":\"object\",\"properties\":{"
      "\"untitledSingle\":{\"type\":\"string\","
      "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
      "\"titledSingle\":{\"type\":\"string\",\"oneOf\":["
      "{\"const\":\"value1\",\"title\":\"First Option\"},"
      "{\"const\":\"value2\",\"title\":\"Second Option\"},"
      "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
      "\"legacyEnum\":{\"type\":\"string\",\"enum\":[\"opt1\",\"opt2\","
      "\"opt3\"],\"enumNames\":[\"Option One\",\"Option Two\","
      "\"Option Three\"]},"
      "\"untitledMulti\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
      "\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
      "\"titledMulti\":{\"type\":\"array\",\"items\":{\"anyOf\":["
      "{\"const\":\"value1\",\"title\":\"First Choice\"},"
      "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
      "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}}");
}

/* Server-stateless probes that a request stream carries only the
 * input-required result, never a request of its own. */
static int streaming_elicitation(mcp_call *call, void *user_data) {
  (void)user_data;
  return ask_user(call, "{\"message\":\"Anything to add?\",\"requestedSchema\":"
                        "{\"type\":\"object\",\"properties\":{\"note\":{"
                        "\"type\":\"string\"}}}}");
}

/* Asks the client's model one question and reports the reply. */
static int ask_model(mcp_call *call, const char *question) {
  const cJSON *answer = mcp_call_input(call, "reply");
  if (answer == NULL) {
    char *params = sampling_params(question, 100);
    int rc = params ? mcp_call_request_input(call, "reply", MCP_INPUT_SAMPLING,
                                             params)
                    : MCP_ENOMEM;
    cJSON_free(params);
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  const char *text = sampled_text(answer);
  if (text == NULL)
    return mcp_result_error(call, "The model sent back no text.");
  return result_textf(call, "LLM response: %s", text);
}

static int sampling(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *prompt;
  mcp_call_arg_string(call, "prompt", &prompt); /* required by the schema */
  return ask_model(call, prompt);
}

/* Needs sampling: a client that did not declare it gets the protocol's
 * missing-capability error (2026-07-28) or an error result (2025). */
static int missing_capability(mcp_call *call, void *user_data) {
  (void)user_data;
  return ask_model(call, "What is 2 + 2?");
}

/* ---- input-required tools ---------------------------------------------------
 * The 2026-07-28 scenarios (input-required-result-*): a call answers with
 * the questions and a signed requestState, and the client retries with the
 * answers. Older clients get real requests instead, with the same code. */

#define ASK_NAME                                                               \
  "{\"message\":\"What is your name?\",\"requestedSchema\":{\"type\":"         \
  "\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"                \
  "\"required\":[\"name\"]}}"
#define ASK_CONFIRM                                                            \
  "{\"message\":\"Please confirm\",\"requestedSchema\":{\"type\":\"object\","  \
  "\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}"
#define ASK_CAPITAL                                                            \
  "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","          \
  "\"text\":\"What is the capital of France?\"}}],\"maxTokens\":100}"
#define ASK_GREETING                                                           \
  "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","          \
  "\"text\":\"Generate a greeting\"}}],\"maxTokens\":50}"
#define ASK_COLOR                                                              \
  "{\"message\":\"Step 2: What is your favorite color?\",\"requestedSchema\":" \
  "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},"     \
  "\"required\":[\"color\"]}}"
#define ASK_STEP1                                                              \
  "{\"message\":\"Step 1: What is your name?\",\"requestedSchema\":{"          \
  "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"       \
  "\"required\":[\"name\"]}}"

static int greet_user(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "user_name", MCP_INPUT_ELICITATION, ASK_NAME, &rc);
  if (answer == NULL)
    return rc;
  const char *name = accepted_field(answer, "name");
  if (name == NULL)
    return mcp_result_text(call, "No name was given.");
  return result_textf(call, "Hello, %s!", name);
}

static int capital(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer = answer_or_ask(call, "capital_question",
                                      MCP_INPUT_SAMPLING, ASK_CAPITAL, &rc);
  if (answer == NULL)
    return rc;
  const char *text = sampled_text(answer);
  if (text == NULL)
    return mcp_result_error(call, "The model sent back no text.");
  return result_textf(call, "The model says: %s", text);
}

/* Appends one line naming the client's roots (a ListRootsResult). */
static int describe_roots(mcp_call *call, const cJSON *answer) {
  const cJSON *roots = cJSON_GetObjectItemCaseSensitive(answer, "roots");
  int n = cJSON_GetArraySize(roots);
  const char *first =
      n > 0 ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                  cJSON_GetArrayItem(roots, 0), "uri"))
            : NULL;
  if (first == NULL)
    return result_textf(call, "The client has %d root(s).", n);
  return result_textf(call, "The client has %d root(s), the first %s.", n,
                      first);
}

static int list_roots(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "client_roots", MCP_INPUT_ROOTS, NULL, &rc);
  return answer ? describe_roots(call, answer) : rc;
}

/* State kept across a round trip must come back exactly as it was kept. The
 * library signs it, so a client cannot change it (tampered_state shows the
 * refusal). */
#define CONFIRM_STATE "awaiting-confirmation"

static int request_state(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "confirm", MCP_INPUT_ELICITATION, ASK_CONFIRM, &rc);
  if (answer == NULL)
    return keep_state(call, CONFIRM_STATE, rc);
  const char *state = mcp_call_state(call);
  if (state == NULL || strcmp(state, CONFIRM_STATE) != 0)
    return mcp_result_error(call, "The request state did not come back.");
  return mcp_result_text(call, "state-ok: the request state came back intact.");
}

static int tampered_state(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "confirm", MCP_INPUT_ELICITATION, ASK_CONFIRM, &rc);
  if (answer == NULL)
    return keep_state(call, "signed-by-the-server", rc);
  return mcp_result_text(call, "The request state passed the integrity check.");
}

/* Three questions of three kinds in one round. */
static int multiple_inputs(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *name =
      answer_or_ask(call, "user_name", MCP_INPUT_ELICITATION, ASK_NAME, &rc);
  const cJSON *greeting =
      answer_or_ask(call, "greeting", MCP_INPUT_SAMPLING, ASK_GREETING, &rc);
  const cJSON *roots =
      answer_or_ask(call, "client_roots", MCP_INPUT_ROOTS, NULL, &rc);
  if (name == NULL || greeting == NULL || roots == NULL)
    return keep_state(call, "asked-three-questions", rc);
  const char *who = accepted_field(name, "name");
  const char *said = sampled_text(greeting);
  result_textf(call, "%s, %s", said ? said : "Hello",
               who ? who : "whoever you are");
  return describe_roots(call, roots);
}

/* Two rounds of questions: the name, then the colour. The state says how
 * far it got and carries the name into the last round. */
static int multi_round(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *state = mcp_call_state(call);
  int rc = 0;
  if (state == NULL || strncmp(state, "name:", 5) != 0) {
    const cJSON *answer =
        answer_or_ask(call, "step1", MCP_INPUT_ELICITATION, ASK_STEP1, &rc);
    if (answer == NULL)
      return keep_state(call, "asked-for-name", rc);
    const char *name = accepted_field(answer, "name");
    if (name == NULL)
      return mcp_result_text(call, "No name was given; stopping there.");
    if (strlen(name) > MCP_STATE_MAX - 8)
      return mcp_result_error(call, "That name is too long to keep.");
    char *next = malloc(strlen(name) + 6);
    if (next == NULL)
      return MCP_ENOMEM;
    sprintf(next, "name:%s", name);
    answer_or_ask(call, "step2", MCP_INPUT_ELICITATION, ASK_COLOR, &rc);
    rc = keep_state(call, next, rc);
    free(next);
    return rc;
  }
  const cJSON *answer =
      answer_or_ask(call, "step2", MCP_INPUT_ELICITATION, ASK_COLOR, &rc);
  if (answer == NULL)
    return keep_state(call, state, rc);
  const char *color = accepted_field(answer, "color");
  return result_textf(call, "%s's favorite color is %s.", state + 5,
                      color ? color : "a secret");
}

/* Asks only what the client declared it can answer: a question whose
 * capability is missing is skipped (MCP_ECAPABILITY), not sent. */
static int capabilities(mcp_call *call, void *user_data) {
  (void)user_data;
  static const struct {
    const char *key;
    mcp_input_kind kind;
    const char *params;
  } questions[] = {
      {"user_name", MCP_INPUT_ELICITATION, ASK_NAME},
      {"capital_question", MCP_INPUT_SAMPLING, ASK_CAPITAL},
      {"client_roots", MCP_INPUT_ROOTS, NULL},
  };
  int asked = 0, answered = 0;
  for (size_t i = 0; i < sizeof questions / sizeof questions[0]; i++) {
    if (mcp_call_input(call, questions[i].key) != NULL) {
      answered++;
      continue;
    }
    int rc = mcp_call_request_input(call, questions[i].key, questions[i].kind,
                                    questions[i].params);
    if (rc == 0)
      asked++;
    else if (rc != MCP_ECAPABILITY)
      return rc;
  }
  if (asked > 0)
    return MCP_INPUT_REQUIRED;
  if (answered == 0)
    return mcp_result_error(call, "The client declared none of elicitation, "
                                  "sampling and roots: nothing to ask.");
  return result_textf(call, "Got %d answer(s).", answered);
}

/* ---- tools registered while serving -----------------------------------------
 * Adding or removing a tool or prompt tells the clients that listen
 * (notifications/tools/list_changed and prompts/list_changed). */

static int dynamic_tool(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "This tool comes and goes.");
}

static int dynamic_prompt(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "This prompt comes and goes.");
}

static const mcp_tool dynamic_tool_def = {
    .name = "test_dynamic_tool",
    .description = "Exists between two calls of test_trigger_tool_change.",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = dynamic_tool,
};

static const mcp_prompt dynamic_prompt_def = {
    .name = "test_dynamic_prompt",
    .description = "Exists between two calls of test_trigger_prompt_change.",
    .handler = dynamic_prompt,
};

static int trigger_tool_change(mcp_call *call, void *user_data) {
  mcp_server *srv = user_data;
  if (mcp_server_remove_tool(srv, dynamic_tool_def.name) == 0)
    return mcp_result_text(call, "Removed test_dynamic_tool.");
  int rc = mcp_server_add_tool(srv, &dynamic_tool_def, NULL);
  return rc ? rc : mcp_result_text(call, "Added test_dynamic_tool.");
}

static int trigger_prompt_change(mcp_call *call, void *user_data) {
  mcp_server *srv = user_data;
  if (mcp_server_remove_prompt(srv, dynamic_prompt_def.name) == 0)
    return mcp_result_text(call, "Removed test_dynamic_prompt.");
  int rc = mcp_server_add_prompt(srv, &dynamic_prompt_def, NULL);
  return rc ? rc : mcp_result_text(call, "Added test_dynamic_prompt.");
}

/* ---- tasks: calls that outlive their request
 * --------------------------------- The fixtures of the conformance suite's
 * tasks scenarios. A tool flagged MCP_TOOL_TASK_OPTIONAL (or _REQUIRED) may run
 * as a task for a client that takes them; the library keeps the task
 * (tasks/get, tasks/update, tasks/cancel, and in 2025-11-25 tasks/result and
 * tasks/list). The handlers are ordinary ones: a slow one defers to a worker
 * thread, which makes the call a task, and one that asks the user first calls
 * mcp_call_start_task so the question is the task's, not the request's. */

typedef enum job_end { JOB_RESULT, JOB_TOOL_ERROR, JOB_PROTOCOL_ERROR } job_end;

typedef struct job {
  mcp_call *call;
  unsigned ms; /* how long it works */
  job_end end;
  char label[64];
} job;

/* Works for job->ms in 50 ms steps, stopping early when cancelled (a
 * tasks/cancel, or the client going away), then ends as job->end says. */
static void *run_job(void *arg) {
  job *j = arg;
  for (unsigned waited = 0; waited < j->ms && !mcp_call_cancelled(j->call);
       waited += 50)
    nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
  int rc = MCP_ECANCELED;
  if (!mcp_call_cancelled(j->call)) {
    if (j->end == JOB_RESULT)
      rc =
          result_textf(j->call, "Computed %s in %u s.", j->label, j->ms / 1000);
    else if (j->end == JOB_TOOL_ERROR)
      rc = mcp_result_error(j->call, "The job failed: its input was bad.");
    else
      rc = MCP_EINTERNAL; /* a fault of the server: a JSON-RPC error */
  }
  mcp_call_finish(j->call, rc);
  free(j);
  worker_done();
  return NULL;
}

static int start_job(mcp_call *call, unsigned ms, job_end end,
                     const char *label) {
  job *j = malloc(sizeof *j);
  if (j == NULL)
    return MCP_ENOMEM;
  *j = (job){.call = call, .ms = ms, .end = end};
  snprintf(j->label, sizeof j->label, "%s", label);
  return defer_to_worker(run_job, j);
}

static int greet(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *name = "world";
  mcp_call_arg_string(call, "name", &name);
  return result_textf(call, "Hello, %s!", name);
}

/* seconds 0 answers at once; longer, it becomes a task. */
static int slow_compute(mcp_call *call, void *user_data) {
  (void)user_data;
  int64_t seconds = 0;
  const char *label = "job";
  mcp_call_arg_int(call, "seconds", &seconds);
  mcp_call_arg_string(call, "label", &label);
  if (seconds <= 0)
    return result_textf(call, "Computed %s at once.", label);
  return start_job(call, (unsigned)seconds * 1000, JOB_RESULT, label);
}

static int failing_job(mcp_call *call, void *user_data) {
  (void)user_data;
  return start_job(call, 1000, JOB_TOOL_ERROR, "failing_job");
}

static int protocol_error_job(mcp_call *call, void *user_data) {
  (void)user_data;
  return start_job(call, 200, JOB_PROTOCOL_ERROR, "protocol_error_job");
}

/* Asks the user under key with message (a yes/no form), as the task's
 * question when the client takes tasks. Returns MCP_INPUT_REQUIRED or an
 * error. */
static int ask_yes_no(mcp_call *call, const char *key, const char *message) {
  cJSON *params = cJSON_Parse(
      "{\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
      "\"confirm\":{\"type\":\"boolean\"},\"name\":{\"type\":\"string\"}},"
      "\"required\":[\"confirm\"]}}");
  if (params == NULL || !cJSON_AddStringToObject(params, "message", message)) {
    cJSON_Delete(params);
    return MCP_ENOMEM;
  }
  char *text = cJSON_PrintUnformatted(params);
  cJSON_Delete(params);
  int rc = text ? mcp_call_request_input(call, key, MCP_INPUT_ELICITATION, text)
                : MCP_ENOMEM;
  cJSON_free(text);
  return rc == 0 ? MCP_INPUT_REQUIRED : rc;
}

static bool confirmed(const cJSON *answer) {
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(answer, "content");
  return cJSON_IsString(action) && strcmp(action->valuestring, "accept") == 0 &&
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(content, "confirm"));
}

/* Asks before it (pretends to) delete: nothing is deleted. */
static int confirm_delete(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *file = "the file";
  mcp_call_arg_string(call, "filename", &file);
  const cJSON *answer = mcp_call_input(call, "confirm");
  if (answer == NULL) {
    mcp_call_start_task(call); /* MCP_ECAPABILITY: an ordinary call, fine */
    char message[200];
    snprintf(message, sizeof message, "Delete %s?", file);
    return ask_yes_no(call, "confirm", message);
  }
  return result_textf(call, confirmed(answer) ? "Deleted %s." : "Kept %s.",
                      file);
}

/* Two questions pending at once, answered in any order. */
static int multi_input(mcp_call *call, void *user_data) {
  (void)user_data;
  const cJSON *first = mcp_call_input(call, "first");
  const cJSON *second = mcp_call_input(call, "second");
  if (first == NULL && second == NULL) {
    mcp_call_start_task(call);
    int rc = ask_yes_no(call, "first", "First question: go on?");
    return rc == MCP_INPUT_REQUIRED
               ? ask_yes_no(call, "second", "Second question: sure?")
               : rc;
  }
  const char *a = accepted_field(first, "name");
  const char *b = accepted_field(second, "name");
  return result_textf(call, "Both answered: %s and %s.", a ? a : "(none)",
                      b ? b : "(none)");
}

/* The input a task needs before it starts comes first (in 2026-07-28 an
 * InputRequiredResult of the request); then it is a task. */
static int tool_with_task(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer =
      answer_or_ask(call, "user_name", MCP_INPUT_ELICITATION, ASK_NAME, &rc);
  if (answer == NULL)
    return rc;
  mcp_call_start_task(call);
  const char *name = accepted_field(answer, "name");
  return result_textf(call, "Hello, %s! The task is done.",
                      name ? name : "stranger");
}

/* archive_notes, a long job as a daemon would have: it asks the user first,
 * then works on a thread, saying how far it got (the task's statusMessage,
 * and progress for a 2025-11-25 client that asked for it), and stops when
 * the task is cancelled. */
typedef struct archive_job {
  mcp_call *call;
  int notes;
  unsigned ms;
} archive_job;

static void *run_archive(void *arg) {
  archive_job *a = arg;
  unsigned steps = a->ms / 50 ? a->ms / 50 : 1;
  for (unsigned i = 1; i <= steps && !mcp_call_cancelled(a->call); i++) {
    nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    char said[64];
    snprintf(said, sizeof said, "archived %u of %u parts", i, steps);
    mcp_call_set_status(a->call, said); /* MCP_ESTATE when not a task */
    mcp_call_progress(a->call, i, steps, said);
  }
  int rc = MCP_ECANCELED;
  if (!mcp_call_cancelled(a->call)) {
    char json[64];
    snprintf(json, sizeof json, "{\"archived\":%d}", a->notes);
    rc = mcp_result_structured(a->call, json);
  }
  mcp_call_finish(a->call, rc);
  free(a);
  worker_done();
  return NULL;
}

static int archive_notes(mcp_call *call, void *user_data) {
  (void)user_data;
  const cJSON *notes =
      cJSON_GetObjectItemCaseSensitive(mcp_call_arguments(call), "notes");
  int n = cJSON_GetArraySize(notes);
  int64_t seconds = 1;
  mcp_call_arg_int(call, "seconds", &seconds);
  const cJSON *answer = mcp_call_input(call, "confirm");
  if (answer == NULL) {
    mcp_call_start_task(call); /* the question is the task's */
    char message[96];
    snprintf(message, sizeof message, "Archive %d note%s?", n,
             n == 1 ? "" : "s");
    return ask_yes_no(call, "confirm", message);
  }
  if (!confirmed(answer))
    return mcp_result_structured(call, "{\"archived\":0}");
  archive_job *a = malloc(sizeof *a);
  if (a == NULL)
    return MCP_ENOMEM;
  *a = (archive_job){.call = call, .notes = n, .ms = (unsigned)seconds * 1000};
  return defer_to_worker(run_archive, a);
}

/* ---- the tool table ------------------------------------------------------ */

/* Hints of a tool that changes nothing and reaches nothing outside. */
#define READ_ONLY                                                              \
  { .read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE }

/* Hints of the triggers: they change the server's lists, each call
 * undoing the last, and destroy nothing. */
#define TOGGLES                                                                \
  {                                                                            \
    .read_only = MCP_HINT_FALSE, .destructive = MCP_HINT_FALSE,                \
    .idempotent = MCP_HINT_FALSE, .open_world = MCP_HINT_FALSE                 \
  }

/* The json-schema-2020-12 scenario checks that the listing keeps these
 * keywords as written. */
#define JSON_SCHEMA_2020_12                                                    \
  "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","             \
  "\"type\":\"object\","                                                       \
  "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","    \
  "\"properties\":{\"street\":{\"type\":\"string\"},"                          \
  "\"city\":{\"type\":\"string\"}}}},"                                         \
  "\"properties\":{\"name\":{\"type\":\"string\"},"                            \
  "\"address\":{\"$ref\":\"#/$defs/address\"},"                                \
  "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"    \
  "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"          \
  "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},"                         \
  "{\"required\":[\"email\"]}]}],"                                             \
  "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"          \
  "\"required\":[\"contactMethod\"]},"                                         \
  "\"then\":{\"required\":[\"phone\"]},"                                       \
  "\"else\":{\"required\":[\"email\"]},"                                       \
  "\"additionalProperties\":false}"

static const mcp_tool tools[] = {
    /* Content of every kind. */
    {.name = "test_simple_text",
     .description = "Returns one text block.",
     .annotations = READ_ONLY,
     .handler = simple_text,
     .icons = icons},
    {.name = "test_image_content",
     .description = "Returns a 1x1 PNG image.",
     .annotations = READ_ONLY,
     .handler = image_content},
    {.name = "test_audio_content",
     .description = "Returns a tiny WAV sound (audio/wav).",
     .annotations = READ_ONLY,
     .handler = audio_content},
    {.name = "test_embedded_resource",
     .description = "Returns an embedded text resource.",
     .annotations = READ_ONLY,
     .handler = embedded_resource},
    {.name = "test_multiple_content_types",
     .description = "Returns text, an image and an embedded resource.",
     .annotations = READ_ONLY,
     .handler = multiple_content_types},
    {.name = "test_error_handling",
     .description = "Always fails, as a tool error (isError) the model reads.",
     .annotations = READ_ONLY,
     .handler = error_handling},
    {.name = "json_schema_2020_12_tool",
     .description = "Takes arguments described with JSON Schema 2020-12 "
                    "($defs, $ref, allOf/anyOf, if/then/else).",
     .input_schema = JSON_SCHEMA_2020_12,
     .annotations = READ_ONLY,
     .handler = json_schema_tool},
    /* x-mcp-header (SEP-2243): over Streamable HTTP a 2026-07-28 client
     * mirrors region in the header Mcp-Param-Region, which proxies may
     * route on; the transport refuses a call whose header disagrees. */
    {.name = "test_custom_header",
     .description = "Echoes its arguments; region travels in a header too.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"region\":{"
                     "\"type\":\"string\",\"x-mcp-header\":\"Region\"}},"
                     "\"required\":[\"region\"]}",
     .annotations = READ_ONLY,
     .handler = json_schema_tool},

    /* Notifications from a deferred call. */
    {.name = "test_tool_with_logging",
     .description = "Sends three log messages 50 ms apart.",
     .annotations = READ_ONLY,
     .handler = with_logging},
    {.name = "test_logging_tool",
     .description = "Sends three log messages, only to a client that asked "
                    "for them.",
     .annotations = READ_ONLY,
     .handler = with_logging},
    {.name = "test_tool_with_progress",
     .description = "Reports progress 0, 50 and 100 of 100, 50 ms apart.",
     .annotations = READ_ONLY,
     .handler = with_progress},

    /* Asking the user or the model. */
    {.name = "test_sampling",
     .description = "Asks the client's model the prompt and returns its reply.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"prompt\":{"
                     "\"type\":\"string\",\"description\":\"The prompt to "
                     "send to the model\"}},\"required\":[\"prompt\"]}",
     .annotations = READ_ONLY,
     .handler = sampling},
    {.name = "test_elicitation",
     .description = "Asks the user for a username and an email address.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"message\":{"
                     "\"type\":\"string\",\"description\":\"The message to "
                     "show the user\"}},\"required\":[\"message\"]}",
     .annotations = READ_ONLY,
     .handler = elicitation},
    {.name = "test_elicitation_sep1034_defaults",
     .description = "Asks the user to fill a form whose fields have defaults.",
     .annotations = READ_ONLY,
     .handler = elicitation_defaults},
    {.name = "test_elicitation_sep1330_enums",
     .description = "Asks the user to pick from single- and multi-select "
                    "lists, titled and untitled.",
     .annotations = READ_ONLY,
     .handler = elicitation_enums},
    {.name = "test_streaming_elicitation",
     .description = "Asks the user an optional question.",
     .annotations = READ_ONLY,
     .handler = streaming_elicitation},
    {.name = "test_missing_capability",
     .description = "Asks the client's model a question; needs sampling.",
     .annotations = READ_ONLY,
     .handler = missing_capability},

    /* Input required, answered over one or more rounds. */
    {.name = "test_input_required_result_elicitation",
     .description = "Asks the user's name and greets them.",
     .annotations = READ_ONLY,
     .handler = greet_user},
    {.name = "test_input_required_result_sampling",
     .description = "Asks the client's model for the capital of France.",
     .annotations = READ_ONLY,
     .handler = capital},
    {.name = "test_input_required_result_list_roots",
     .description = "Asks the client for its roots and names them.",
     .annotations = READ_ONLY,
     .handler = list_roots},
    {.name = "test_input_required_result_request_state",
     .description = "Asks for a confirmation and checks its own state came "
                    "back with the answer.",
     .annotations = READ_ONLY,
     .handler = request_state},
    {.name = "test_input_required_result_multiple_inputs",
     .description = "Asks the user, the model and the client at once.",
     .annotations = READ_ONLY,
     .handler = multiple_inputs},
    {.name = "test_input_required_result_multi_round",
     .description = "Asks two questions, one round after the other.",
     .annotations = READ_ONLY,
     .handler = multi_round},
    {.name = "test_input_required_result_tampered_state",
     .description = "Asks for a confirmation; a changed state is refused.",
     .annotations = READ_ONLY,
     .handler = tampered_state},
    {.name = "test_input_required_result_capabilities",
     .description = "Asks only what the client declared it can answer.",
     .annotations = READ_ONLY,
     .handler = capabilities},

    /* Changing the lists while serving (user_data: the server). */
    {.name = "test_trigger_tool_change",
     .description = "Adds test_dynamic_tool, or removes it when present.",
     .annotations = TOGGLES,
     .handler = trigger_tool_change},
    {.name = "test_trigger_prompt_change",
     .description = "Adds test_dynamic_prompt, or removes it when present.",
     .annotations = TOGGLES,
     .handler = trigger_prompt_change},

    /* Tasks: optional ones are tasks when the client takes them; required
     * ones only run as tasks. */
    {.name = "greet",
     .description = "Says hello at once (never a task).",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{"
                     "\"type\":\"string\"}}}",
     .annotations = READ_ONLY,
     .handler = greet},
    {.name = "slow_compute",
     .description = "Works for the given seconds, then reports; as a task "
                    "when the client takes them (seconds 0 answers at once).",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"seconds\":{"
                     "\"type\":\"integer\",\"minimum\":0,\"maximum\":3600},"
                     "\"label\":{\"type\":\"string\"}}}",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = slow_compute},
    {.name = "failing_job",
     .description = "Runs only as a task; after a second it reports that it "
                    "failed (a tool error).",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_REQUIRED,
     .handler = failing_job},
    {.name = "protocol_error_job",
     .description = "Fails inside the server after a moment (a JSON-RPC "
                    "error: the task fails).",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = protocol_error_job},
    {.name = "confirm_delete",
     .description = "Asks the user before it pretends to delete a file "
                    "(nothing is deleted).",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":{"
                     "\"type\":\"string\"}},\"required\":[\"filename\"]}",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = confirm_delete},
    {.name = "multi_input",
     .description = "Asks the user two questions at once.",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = multi_input},
    {.name = "test_tool_with_task",
     .description = "Asks the user's name, then runs as a task that greets "
                    "them.",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_REQUIRED,
     .handler = tool_with_task},
    {.name = "archive_notes",
     .title = "Archive notes",
     .description = "Asks the user, then archives the named notes over the "
                    "given seconds (a task for a client that takes them; it "
                    "can be cancelled). Nothing is really archived.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"notes\":{"
                     "\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
                     "\"seconds\":{\"type\":\"integer\",\"minimum\":0,"
                     "\"maximum\":3600}},\"required\":[\"notes\"]}",
     .output_schema = "{\"type\":\"object\",\"properties\":{\"archived\":{"
                      "\"type\":\"integer\"}},\"required\":[\"archived\"]}",
     .annotations = READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = archive_notes},
};

/* ---- resources ----------------------------------------------------------- */

static int static_text(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call,
                         "This is the content of the static text resource.");
}

static int static_binary(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_resource_blob(call, mcp_call_uri(call), "image/png", png,
                                  sizeof png);
}

static int watched(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "This resource can be subscribed to.");
}

/* test://template/{id}/data: the id comes as a variable, percent-decoded
 * and never empty. Only numeric ids have data; for any other the client gets
 * the protocol's not-found error. */
static int template_data(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *id;
  mcp_call_arg_string(call, "id", &id);
  if (strspn(id, "0123456789") != strlen(id))
    return MCP_ENOENT;
  cJSON *data = cJSON_CreateObject();
  cJSON_AddStringToObject(data, "id", id);
  cJSON_AddTrueToObject(data, "templateTest");
  char *text = NULL;
  int n = snprintf(NULL, 0, "Data for ID: %s", id);
  char *line = malloc((size_t)n + 1);
  if (line != NULL) {
    sprintf(line, "Data for ID: %s", id);
    cJSON_AddStringToObject(data, "data", line);
    text = cJSON_PrintUnformatted(data);
  }
  free(line);
  cJSON_Delete(data);
  int rc = text ? mcp_result_text(call, text) : MCP_ENOMEM;
  cJSON_free(text);
  return rc;
}

static const mcp_resource resources[] = {
    {.uri = "test://static-text",
     .name = "static-text",
     .description = "A text resource that never changes.",
     .mime_type = "text/plain",
     .handler = static_text},
    {.uri = "test://static-binary",
     .name = "static-binary",
     .description = "A binary resource: a 1x1 PNG image.",
     .mime_type = "image/png",
     .handler = static_binary},
    {.uri = "test://watched-resource",
     .name = "watched-resource",
     .description = "A resource clients may subscribe to.",
     .mime_type = "text/plain",
     .handler = watched},
    {.uri_template = "test://template/{id}/data",
     .name = "template-data",
     .description = "JSON data for any numeric id.",
     .mime_type = "application/json",
     .handler = template_data},
};

/* ---- prompts ----------------------------------------------------------------
 * Each content builder appends one message, spoken by the user unless
 * mcp_result_role says otherwise. */

static int simple_prompt(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "This is a simple prompt for testing.");
}

static int prompt_with_arguments(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *arg1, *arg2; /* both required: checked before the handler */
  mcp_call_arg_string(call, "arg1", &arg1);
  mcp_call_arg_string(call, "arg2", &arg2);
  return result_textf(call, "Prompt with arguments: arg1='%s', arg2='%s'", arg1,
                      arg2);
}

/* Suggests values for arg1 and arg2 that start with what was typed. */
static int complete_arguments(mcp_completion *completion, void *user_data) {
  (void)user_data;
  static const char *const arg1[] = {"testValue1", "test", "hello", NULL};
  static const char *const arg2[] = {"testValue2", "world", NULL};
  const char *name = mcp_completion_argument(completion);
  const char *typed = mcp_completion_value(completion);
  const char *const *values = strcmp(name, "arg1") == 0   ? arg1
                              : strcmp(name, "arg2") == 0 ? arg2
                                                          : NULL;
  for (size_t i = 0; values && values[i]; i++) {
    if (strncmp(values[i], typed, strlen(typed)) != 0)
      continue;
    int rc = mcp_completion_add(completion, values[i]);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int prompt_with_embedded_resource(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *uri;
  mcp_call_arg_string(call, "resourceUri", &uri);
  mcp_result_resource_text(call, uri, "text/plain",
                           "Embedded resource content for testing.");
  return mcp_result_text(call, "Please process the embedded resource above.");
}

static int prompt_with_image(mcp_call *call, void *user_data) {
  (void)user_data;
  mcp_result_image(call, png, sizeof png, "image/png");
  return mcp_result_text(call, "Please analyze the image above.");
}

/* A prompt can ask for input too, exactly as a tool does. */
static int input_required_prompt(mcp_call *call, void *user_data) {
  (void)user_data;
  int rc = 0;
  const cJSON *answer = answer_or_ask(
      call, "user_context", MCP_INPUT_ELICITATION,
      "{\"message\":\"What context should the prompt use?\","
      "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"context\":"
      "{\"type\":\"string\"}},\"required\":[\"context\"]}}",
      &rc);
  if (answer == NULL)
    return rc;
  const char *context = accepted_field(answer, "context");
  mcp_result_description(call, "A prompt written with the user's context.");
  return result_textf(call, "Answer with this context in mind: %s",
                      context ? context : "(none given)");
}

static const mcp_prompt_argument two_arguments[] = {
    {.name = "arg1", .description = "First test argument", .required = true},
    {.name = "arg2", .description = "Second test argument", .required = true},
    {0},
};

static const mcp_prompt_argument resource_argument[] = {
    {.name = "resourceUri",
     .description = "URI of the resource to embed",
     .required = true},
    {0},
};

static const mcp_prompt prompts[] = {
    {.name = "test_simple_prompt",
     .description = "A prompt without arguments.",
     .handler = simple_prompt},
    {.name = "test_prompt_with_arguments",
     .description = "A prompt with two required arguments, which the server "
                    "helps complete.",
     .arguments = two_arguments,
     .handler = prompt_with_arguments,
     .complete = complete_arguments},
    {.name = "test_prompt_with_embedded_resource",
     .description = "A prompt embedding the resource it is given.",
     .arguments = resource_argument,
     .handler = prompt_with_embedded_resource},
    {.name = "test_prompt_with_image",
     .description = "A prompt with an image.",
     .handler = prompt_with_image},
    {.name = "test_input_required_result_prompt",
     .description = "A prompt that first asks the user for context.",
     .handler = input_required_prompt},
};

/* ---- the guard (--guard) ----------------------------------------------------
 * The kernel holds each tool to its hints (mcp/guard.h). try_write is the
 * one tool here whose handler does not keep its own hint. */

#ifdef MCP_EXAMPLE_GUARD
/* Claims to change nothing, then tries to create a file in the temporary
 * folder. Without the guard nothing stops it; with it, open() fails and the
 * caller reads why. */
static int try_write(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *tmp = getenv("TMPDIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/everything-try-write",
           tmp && tmp[0] ? tmp : "/tmp");
  int fd = open(path, O_WRONLY | O_CREAT, 0600);
  if (fd < 0) {
    int err = errno;
    char msg[1200];
    snprintf(msg, sizeof msg, "Cannot create %s: %s%s", path, strerror(err),
             err == EACCES ? " (EACCES)" : "");
    return mcp_result_error(call, msg);
  }
  close(fd);
  unlink(path);
  return result_textf(call,
                      "Created %s, and removed it: nothing kept this "
                      "read-only tool from writing.",
                      path);
}

static const mcp_tool try_write_tool = {
    .name = "try_write",
    .description = "Says it is read-only, then tries to create a file in the "
                   "temporary folder; under --guard the kernel refuses.",
    .annotations = {.read_only = MCP_HINT_TRUE, /* what it claims */
                    .open_world = MCP_HINT_FALSE},
    .handler = try_write,
};

/* Shows the library's log lines on stderr as its default does, the
 * informational ones too (the guard's line is one when all is well). */
static void log_everything(mcp_log_level level, const char *message,
                           void *user_data) {
  (void)level;
  (void)user_data;
  fprintf(stderr, "libmcp: %s\n", message);
}

/* One audit line per tool call: where its handler ran. */
static void audit_where(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  if (r->ran_under)
    fprintf(stderr, "everything: audit: %s ran under \"%s\"\n", r->tool,
            r->ran_under);
  else
    fprintf(stderr, "everything: audit: %s did not run under the guard\n",
            r->tool);
}

/* Turns the guard on, as far as this kernel can (best effort: what it
 * cannot enforce is logged), and adds try_write. Returns 0, or 1 after
 * saying why not. */
static int guard(mcp_server *srv) {
  mcp_server_set_log(srv, log_everything, NULL); /* its line, shown */
  const mcp_guard_options opts = {.flags = MCP_GUARD_BEST_EFFORT};
  int rc = mcp_guard_enable(srv, &opts);
  mcp_server_set_log(srv, NULL, NULL); /* the default again: warnings */
  if (rc != 0) {
    fprintf(stderr, "everything: %s\n", mcp_server_errmsg(srv));
    return 1;
  }
  mcp_server_set_audit(srv, audit_where, NULL);
  if (mcp_server_add_tool(srv, &try_write_tool, NULL) != 0) {
    fprintf(stderr, "everything: %s\n", mcp_server_errmsg(srv));
    return 1;
  }
  return 0;
}
#define GUARD_USAGE " [--guard]"
#else
#define GUARD_USAGE ""
#endif

/* ---- main ---------------------------------------------------------------- */

/* Every tool gets the server as user_data; only the triggers use it. */
static int add_everything(mcp_server *srv) {
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
    if (mcp_server_add_tool(srv, &tools[i], srv) != 0)
      return -1;
  for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++)
    if (mcp_server_add_resource(srv, &resources[i], NULL) != 0)
      return -1;
  for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++)
    if (mcp_server_add_prompt(srv, &prompts[i], NULL) != 0)
      return -1;
  return 0;
}

static void usage(void) {
#ifdef MCP_EVERYTHING_HTTP
  fprintf(stderr, "usage: everything [--stdio | " MCP_HTTP_SERVE_USAGE
                  "]" GUARD_USAGE "\n");
#else
  fprintf(stderr, "usage: everything [--stdio]" GUARD_USAGE "\n");
#endif
}

int main(int argc, char **argv) {
#ifdef MCP_EVERYTHING_HTTP
  /* --http and the flags that go with it (mcp/http.h): libmcp reads them,
   * without writing to argv. */
  mcp_http_serve_options serve = {.program = "everything"};
#endif
  bool guarded = false;
  for (int i = 1; i < argc; i++) {
#ifdef MCP_EVERYTHING_HTTP
    int took = mcp_http_serve_arg(&serve, argc, argv, &i);
    if (took < 0)
      return 2;
    if (took)
      continue;
#endif
    if (strcmp(argv[i], "--stdio") == 0) {
#ifdef MCP_EVERYTHING_HTTP
      serve.listen = NULL;
#endif
    } else if (strcmp(argv[i], "--guard") == 0) {
#ifndef MCP_EXAMPLE_GUARD
      fprintf(stderr, "everything: --guard: libmcp's guard was not built "
                      "here (it needs Linux and CMake's MCP_GUARD)\n");
      return 2;
#endif
      guarded = true;
    } else {
      usage();
      return 2;
    }
  }
#ifdef MCP_EVERYTHING_HTTP
  if (mcp_http_serve_check(&serve) != 0) {
    usage();
    return 2;
  }
#endif

  mcp_server *srv;
  const mcp_server_info info = {
      .name = "everything",
      .version = mcp_version(),
      .title = "Everything",
      .instructions = "A test server: each tool, resource and prompt is the "
                      "one a conformance scenario asks for.",
      .icons = icons,
  };
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  if (add_everything(srv) != 0) {
    fprintf(stderr, "everything: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
#ifdef MCP_EXAMPLE_GUARD
  if (guarded && guard(srv) != 0) {
    mcp_server_free(srv);
    return 1;
  }
#else
  (void)guarded;
#endif

  int rc;
#ifdef MCP_EVERYTHING_HTTP
  if (serve.listen) /* until SIGINT or SIGTERM, saying "listening on URL" */
    rc = mcp_http_serve_until_signal(srv, &serve) == 0 ? 0 : 1;
  else
#endif
  {
    /* Over stdio, SIGTERM or Ctrl-C ends serving cleanly, like the end of
     * input. */
    const mcp_stdio_options stdio = {.stop_on_signal = true};
    rc = mcp_serve_stdio(srv, &stdio) == 0 ? 0 : 1;
  }
  /* Freeing the server cancels the tasks still working, so that the
   * deferred calls' threads, joined next, end early instead of finishing
   * their work first: a stop takes as long as a cancellation. A call
   * finished after the free is harmless. */
  mcp_server_free(srv);
  wait_for_workers();
  return rc;
}
