/* How much validating tools/call arguments costs, against the ceiling of
 * parsing them: a 100-property argument object is parsed with the strict
 * parser and validated against its tool's schema (types, bounds, patterns,
 * enums, required, additionalProperties), both timed in the same run.
 *
 *   bench_schema [iterations]     default 20000
 *
 * Prints both costs and their ratio. With 1000 iterations or more it exits
 * non-zero unless validating costs less than parsing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "json.h"

#define PROPS 100
#define BATCH 500

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The schema and a conforming argument object with PROPS properties of
 * mixed kinds, as a real tool's might be. */
static void build(mcp__buf *schema, mcp__buf *args) {
  mcp__buf_puts(schema, "{\"type\":\"object\",\"properties\":{");
  mcp__buf_putc(args, '{');
  for (int i = 0; i < PROPS; i++) {
    const char *sep = i ? "," : "";
    switch (i % 6) {
    case 0:
      mcp__buf_printf(schema,
                      "%s\"name_%d\":{\"type\":\"string\",\"minLength\":1,"
                      "\"maxLength\":64}",
                      sep, i);
      mcp__buf_printf(args, "%s\"name_%d\":\"value number %d\"", sep, i, i);
      break;
    case 1:
      mcp__buf_printf(schema,
                      "%s\"count_%d\":{\"type\":\"integer\",\"minimum\":0,"
                      "\"maximum\":1000000}",
                      sep, i);
      mcp__buf_printf(args, "%s\"count_%d\":%d", sep, i, i * 37);
      break;
    case 2:
      mcp__buf_printf(schema,
                      "%s\"ratio_%d\":{\"type\":\"number\","
                      "\"exclusiveMinimum\":0}",
                      sep, i);
      mcp__buf_printf(args, "%s\"ratio_%d\":%d.25", sep, i, i);
      break;
    case 3:
      mcp__buf_printf(schema, "%s\"flag_%d\":{\"type\":\"boolean\"}", sep, i);
      mcp__buf_printf(args, "%s\"flag_%d\":%s", sep, i,
                      i % 2 ? "true" : "false");
      break;
    case 4:
      mcp__buf_printf(schema,
                      "%s\"mode_%d\":{\"enum\":[\"fast\",\"safe\","
                      "\"auto\"]}",
                      sep, i);
      mcp__buf_printf(args, "%s\"mode_%d\":\"safe\"", sep, i);
      break;
    default:
      mcp__buf_printf(schema,
                      "%s\"id_%d\":{\"type\":\"string\",\"pattern\":"
                      "\"^[a-z]+-[0-9]+$\"}",
                      sep, i);
      mcp__buf_printf(args, "%s\"id_%d\":\"item-%d\"", sep, i, i);
      break;
    }
  }
  mcp__buf_puts(schema, "},\"required\":[");
  for (int i = 0; i < PROPS; i += 6)
    mcp__buf_printf(schema, "%s\"name_%d\"", i ? "," : "", i);
  mcp__buf_puts(schema, "],\"additionalProperties\":false}");
  mcp__buf_putc(args, '}');
}

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 20000;
  if (iterations < 1)
    iterations = 1;
  mcp__buf schema_text = {0}, args_text = {0};
  build(&schema_text, &args_text);
  mcp__json_doc schema_doc, args_doc;
  char err[512];
  if (mcp__json_parse(schema_text.data, schema_text.len, NULL, &schema_doc, err,
                      sizeof err) ||
      mcp__json_parse(args_text.data, args_text.len, NULL, &args_doc, err,
                      sizeof err)) {
    fprintf(stderr, "bench_schema: %s\n", err);
    return 1;
  }
  mcp__schema *s;
  if (mcp__schema_compile(schema_doc.root, NULL, &s, err, sizeof err)) {
    fprintf(stderr, "bench_schema: %s\n", err);
    return 1;
  }
  if (mcp__schema_validate(s, args_doc.root, "args", err, sizeof err)) {
    fprintf(stderr, "bench_schema: the arguments do not conform: %s\n", err);
    return 1;
  }

  /* Parsing: documents are kept and freed outside the timed region, so
   * only the parse is measured. */
  static mcp__json_doc docs[BATCH];
  double parse_s = 0;
  for (long done = 0; done < iterations;) {
    long n = iterations - done < BATCH ? iterations - done : BATCH;
    double t0 = now();
    for (long i = 0; i < n; i++)
      if (mcp__json_parse(args_text.data, args_text.len, NULL, &docs[i], NULL,
                          0))
        return 1;
    parse_s += now() - t0;
    for (long i = 0; i < n; i++)
      mcp__json_doc_free(&docs[i]);
    done += n;
  }

  double t0 = now();
  int failures = 0;
  for (long i = 0; i < iterations; i++)
    failures +=
        mcp__schema_validate(s, args_doc.root, "args", err, sizeof err) != 0;
  double validate_s = now() - t0;
  if (failures) {
    fprintf(stderr, "bench_schema: %d validations failed\n", failures);
    return 1;
  }

  double parse_us = parse_s / (double)iterations * 1e6;
  double validate_us = validate_s / (double)iterations * 1e6;
  double ratio = validate_us / parse_us;
  printf("bench_schema: %d-property arguments (%zu bytes), %ld iterations\n",
         PROPS, args_text.len, iterations);
  printf("  parse (strict parser):  %8.2f us\n", parse_us);
  printf("  validate (inputSchema): %8.2f us\n", validate_us);
  printf("  validate / parse = %.3f (ceiling 1.0)\n", ratio);

  mcp__schema_free(s);
  mcp__json_doc_free(&schema_doc);
  mcp__json_doc_free(&args_doc);
  mcp__buf_free(&schema_text);
  mcp__buf_free(&args_text);
  if (iterations >= 1000 && ratio >= 1.0) {
    printf("bench_schema: FAIL: validating costs more than parsing\n");
    return 1;
  }
  return 0;
}
