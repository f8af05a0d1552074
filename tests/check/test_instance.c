/* mcp-check's minimal valid instance of an inputSchema
 * (mcp-check/instance.c). Every instance it returns is checked with
 * libmcp's own JSON Schema validator (lib/schema, formats asserted): a
 * table of schemas, one keyword family at a time; the inputSchemas of every
 * tool of the examples, read from the running servers; and those of the
 * pinned reference servers (tests/check/reference/<server>.tools.json).
 * Schemas it cannot satisfy give NULL and a reason naming the cause. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instance.h"
#include "json.h"
#include "schema.h"
#include "testutil.h"

/* Parses text with libmcp's strict parser, as a server reads a schema
 * and the arguments of a call (numbers keep their exact text). */
static void strict(const cJSON *tree, mcp__json_doc *doc, const char *label) {
  char *text = cJSON_PrintUnformatted(tree);
  ck_assert_ptr_nonnull(text);
  char err[256] = "";
  ck_assert_msg(
      mcp__json_parse(text, strlen(text), NULL, doc, err, sizeof err) == 0,
      "%s: not strict JSON: %s: %s", label, text, err);
  free(text);
}

/* Asserts that instance, as sent, validates against schema with libmcp's
 * validator. */
static void assert_valid(const cJSON *schema, const cJSON *instance,
                         const char *label) {
  /* libmcp validates 2020-12 only. The draft-07 schemas here (the
   * reference servers') use no keyword whose meaning changed (no array
   * "items", "additionalItems" or "dependencies"), so they are checked as
   * 2020-12 without their $schema. */
  cJSON *copy = cJSON_Duplicate(schema, 1);
  ck_assert_ptr_nonnull(copy);
  const cJSON *dialect = cJSON_GetObjectItemCaseSensitive(copy, "$schema");
  if (cJSON_IsString(dialect) && strstr(dialect->valuestring, "draft-07"))
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "$schema");
  mcp__json_doc sdoc = {0}, idoc = {0};
  strict(copy, &sdoc, label);
  cJSON_Delete(copy);
  strict(instance, &idoc, label);
  mcp__schema_options opt = {.flags = MCP__SCHEMA_ASSERT_FORMAT};
  mcp__schema *compiled = NULL;
  char err[256] = "";
  ck_assert_msg(
      mcp__schema_compile(sdoc.root, &opt, &compiled, err, sizeof err) == 0,
      "%s: schema refused: %s", label, err);
  char *text = cJSON_PrintUnformatted(instance);
  int rc =
      mcp__schema_validate(compiled, idoc.root, "arguments", err, sizeof err);
  ck_assert_msg(rc == 0, "%s: instance %s invalid: %s", label, text, err);
  free(text);
  mcp__schema_free(compiled);
  mcp__json_doc_free(&sdoc);
  mcp__json_doc_free(&idoc);
}

/* Builds the instance of schema (JSON text), checks it, and returns it as
 * compact JSON text (caller frees). */
static char *built(const char *schema_text) {
  cJSON *schema = cJSON_Parse(schema_text);
  ck_assert_msg(schema != NULL, "bad test schema %s", schema_text);
  char why[256] = "";
  cJSON *v = mcpc_instance(schema, why, sizeof why);
  ck_assert_msg(v != NULL, "%s: no instance: %s", schema_text, why);
  assert_valid(schema, v, schema_text);
  char *text = cJSON_PrintUnformatted(v);
  cJSON_Delete(v);
  cJSON_Delete(schema);
  return text;
}

/* A schema of each keyword family, and the instance expected where the
 * choice matters (NULL: any valid one). */
static const struct {
  const char *schema, *want;
} valid[] = {
    /* Types. */
    {"{\"type\":\"object\"}", "{}"},
    {"{}", "{}"},
    {"true", "{}"},
    {"{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"boolean\"}},"
     "\"required\":[\"p\"]}",
     "{\"p\":false}"},
    {"{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"null\"}},"
     "\"required\":[\"p\"]}",
     "{\"p\":null}"},
    {"{\"type\":[\"null\",\"string\"]}", "\"a\""},
    {"{\"type\":[\"null\"]}", "null"},
    {"{\"type\":\"object\",\"properties\":{\"any\":{}},\"required\":[\"any\"]}",
     NULL},
    {"{\"type\":\"object\",\"properties\":{\"any\":true},"
     "\"required\":[\"any\"]}",
     NULL},
    /* Numbers. */
    {"{\"type\":\"integer\"}", "0"},
    {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":10}", "5"},
    {"{\"type\":\"integer\",\"maximum\":-5}", "-5"},
    {"{\"type\":\"integer\",\"exclusiveMinimum\":3}", "4"},
    {"{\"type\":\"integer\",\"exclusiveMaximum\":-3}", "-4"},
    {"{\"type\":\"number\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":1}",
     NULL},
    {"{\"type\":\"number\",\"exclusiveMinimum\":0.5}", NULL},
    {"{\"type\":\"number\",\"minimum\":0.055,\"multipleOf\":0.01}", NULL},
    {"{\"type\":\"integer\",\"minimum\":20,\"multipleOf\":7}", "21"},
    {"{\"type\":\"integer\",\"minimum\":1,\"multipleOf\":0.5}", "1"},
    {"{\"type\":\"number\",\"maximum\":-0.25,\"multipleOf\":0.1}", NULL},
    {"{\"type\":\"integer\",\"minimum\":1e3}", "1000"},
    {"{\"minimum\":3}", "3"},
    /* Strings. */
    {"{\"type\":\"string\"}", "\"a\""},
    {"{\"type\":\"string\",\"minLength\":3,\"maxLength\":5}", "\"aaa\""},
    {"{\"type\":\"string\",\"maxLength\":0}", "\"\""},
    {"{\"type\":\"string\",\"format\":\"email\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"uri\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"date-time\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"date\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"uuid\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"ipv4\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"ipv6\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"hostname\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"unknown-format\"}", NULL},
    {"{\"type\":\"string\",\"format\":\"uri\",\"minLength\":40}", NULL},
    {"{\"type\":\"string\",\"format\":\"email\",\"minLength\":30}", NULL},
    {"{\"type\":\"string\",\"pattern\":\"^[a-z]{3}-\\\\d{2}$\"}", "\"aaa-00\""},
    {"{\"type\":\"string\",\"pattern\":\"^(foo|bar)+$\"}", "\"foo\""},
    {"{\"type\":\"string\",\"pattern\":\"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$\"}",
     "\"Aa\""},
    {"{\"type\":\"string\",\"pattern\":\"^[^/]+\\\\.txt$\"}", "\"a.txt\""},
    {"{\"type\":\"string\",\"pattern\":\"^\\\\w+@\\\\w+\\\\.com$\"}",
     "\"a@a.com\""},
    {"{\"type\":\"string\",\"pattern\":\"x\",\"minLength\":4}", "\"xaaa\""},
    {"{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{8}$\",\"maxLength\":8}",
     "\"00000000\""},
    {"{\"type\":\"string\",\"pattern\":\"^x+$\",\"examples\":[\"xxx\"]}",
     "\"xxx\""},
    {"{\"type\":\"string\",\"pattern\":\"^a*?b??c$\"}", "\"c\""},
    {"{\"type\":\"string\",\"pattern\":\"^[\\\\d.-]+$\"}", "\"0\""},
    {"{\"type\":\"string\",\"pattern\":\"^[\\\\w\\\\-.]+$\"}", "\"a\""},
    {"{\"type\":\"string\",\"pattern\":\"^[\\\\-x]+$\"}", "\"-\""},
    {"{\"type\":\"string\",\"pattern\":\"^[\\\\]a]$\"}", "\"]\""},
    {"{\"type\":\"string\",\"pattern\":\"^[\\\\^]$\"}", "\"^\""},
    {"{\"type\":\"string\",\"pattern\":\"^[^\\\\^]$\"}", "\"a\""},
    {"{\"type\":\"string\",\"pattern\":\"^[^\\\\s/]+$\"}", "\"a\""},
    /* What the author offered: default, then examples, when valid. */
    {"{\"type\":\"integer\",\"default\":42}", "42"},
    {"{\"type\":\"integer\",\"minimum\":0,\"default\":-1}", "0"},
    {"{\"type\":\"string\",\"examples\":[7,\"ex\"]}", "\"ex\""},
    {"{\"type\":\"string\",\"format\":\"email\",\"default\":\"nope\","
     "\"examples\":[\"a@b.example\"]}",
     "\"a@b.example\""},
    {"{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"string\","
     "\"default\":\"fast\"}},\"required\":[\"mode\"]}",
     "{\"mode\":\"fast\"}"},
    /* enum and const. */
    {"{\"enum\":[\"b\",\"c\"]}", "\"b\""},
    {"{\"type\":\"string\",\"enum\":[1,\"x\"]}", "\"x\""},
    {"{\"const\":{\"k\":[1,2]}}", "{\"k\":[1,2]}"},
    {"{\"type\":\"integer\",\"enum\":[1,5,9],\"minimum\":4}", "5"},
    /* Arrays. */
    {"{\"type\":\"array\"}", "[]"},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":2,"
     "\"uniqueItems\":true}",
     "[\"a\",\"b\"]"},
    {"{\"type\":\"array\",\"items\":{\"enum\":[1,2,3]},\"minItems\":3,"
     "\"uniqueItems\":true}",
     NULL},
    {"{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":1},"
     "\"minItems\":3,\"uniqueItems\":true}",
     NULL},
    {"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"integer\"},{\"type\":"
     "\"string\"}],\"minItems\":2}",
     "[0,\"a\"]"},
    {"{\"type\":\"array\",\"contains\":{\"const\":5}}", "[5]"},
    {"{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
     "\"k\":{\"type\":\"string\"}},\"required\":[\"k\"]},\"minItems\":1}",
     "[{\"k\":\"a\"}]"},
    {"{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"maximum\":0},"
     "\"minItems\":3,\"uniqueItems\":true}",
     "[0,-1,-2]"},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":"
     "\"email\"},\"minItems\":2,\"uniqueItems\":true}",
     NULL},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":"
     "\"uuid\"},\"minItems\":3,\"uniqueItems\":true}",
     NULL},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":"
     "\"date-time\"},\"minItems\":3,\"uniqueItems\":true}",
     NULL},
    {"{\"type\":\"array\",\"items\":{\"type\":\"string\",\"format\":"
     "\"ipv6\"},\"minItems\":3,\"uniqueItems\":true}",
     NULL},
    /* Objects. */
    {"{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
     "\"n\":{\"type\":\"integer\"}},\"required\":[\"path\"],"
     "\"additionalProperties\":false}",
     "{\"path\":\"a\"}"},
    {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\","
     "\"properties\":{\"b\":{\"type\":\"integer\",\"minimum\":2}},"
     "\"required\":[\"b\"]}},\"required\":[\"a\"]}",
     "{\"a\":{\"b\":2}}"},
    {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":"
     "{\"type\":\"string\"}},\"required\":[\"a\"],\"dependentRequired\":{"
     "\"a\":[\"b\"]}}",
     "{\"a\":\"a\",\"b\":\"a\"}"},
    {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":"
     "{\"type\":\"string\"}},\"minProperties\":2}",
     "{\"a\":\"a\",\"b\":\"a\"}"},
    {"{\"type\":\"object\",\"minProperties\":1,\"additionalProperties\":{"
     "\"type\":\"integer\"}}",
     "{\"p0\":0}"},
    {"{\"required\":[\"x\"],\"additionalProperties\":{\"type\":\"integer\"}}",
     "{\"x\":0}"},
    {"{\"type\":\"object\",\"patternProperties\":{\"^n_\":{\"type\":"
     "\"integer\"}},\"required\":[\"n_1\"],\"additionalProperties\":false}",
     "{\"n_1\":0}"},
    /* Combinators and references. */
    {"{\"anyOf\":[{\"type\":\"string\",\"minLength\":2},{\"type\":"
     "\"integer\"}]}",
     "\"aa\""},
    {"{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "\"a\""},
    {"{\"type\":\"object\",\"oneOf\":[{\"required\":[\"a\"]},{\"required\":"
     "[\"b\"]}]}",
     "{\"a\":\"a\"}"},
    {"{\"type\":\"string\",\"not\":{\"const\":\"a\"}}", "\"b\""},
    {"{\"$defs\":{\"base\":{\"type\":\"object\",\"properties\":{\"a\":{"
     "\"type\":\"string\"}},\"required\":[\"a\"]}},\"allOf\":[{\"$ref\":\"#/"
     "$defs/base\"},{\"properties\":{\"b\":{\"type\":\"integer\"}},"
     "\"required\":[\"b\"]}]}",
     "{\"a\":\"a\",\"b\":0}"},
    {"{\"definitions\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"}},"
     "\"type\":\"object\",\"properties\":{\"id\":{\"$ref\":\"#/definitions/"
     "id\"}},\"required\":[\"id\"]}",
     NULL},
    {"{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"next\":{"
     "\"$ref\":\"#/$defs/node\"}}}},\"$ref\":\"#/$defs/node\"}",
     "{}"},
    {"{\"$defs\":{\"a~b\":{\"type\":\"integer\"}},\"$ref\":\"#/$defs/a~0b\"}",
     "0"},
    {"{\"$defs\":{\"a\":{\"$anchor\":\"addr\",\"type\":\"object\",\"required\":"
     "[\"city\"]}},\"type\":\"object\",\"properties\":{\"home\":{\"$ref\":"
     "\"#addr\"}},\"required\":[\"home\"]}",
     "{\"home\":{\"city\":\"a\"}}"},
    {"{\"$ref\":\"#/$defs/n\",\"$defs\":{\"n\":{\"type\":\"integer\"}},"
     "\"minimum\":3}",
     "3"},
    {"{\"type\":\"object\",\"properties\":{\"k\":{\"anyOf\":[{\"type\":"
     "\"null\"},{\"type\":\"string\",\"format\":\"date\"}]}},"
     "\"required\":[\"k\"]}",
     "{\"k\":null}"},
};

START_TEST(table_instances_validate) {
  const char *schema = valid[_i].schema;
  char *text = built(schema);
  if (valid[_i].want)
    ck_assert_msg(strcmp(text, valid[_i].want) == 0, "%s: got %s, want %s",
                  schema, text, valid[_i].want);
  free(text);
}
END_TEST

/* Schemas no instance can be built for, and the words of the reason. */
static const struct {
  const char *schema, *why;
} invalid[] = {
    {"false", "schema false accepts nothing"},
    {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}",
     "no integer satisfies"},
    {"{\"type\":\"number\",\"exclusiveMinimum\":1,\"exclusiveMaximum\":1}",
     "no number satisfies"},
    {"{\"required\":[\"x\"],\"additionalProperties\":false}",
     "\"x\" is required but no property schema allows it"},
    {"{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/no\"}},"
     "\"required\":[\"a\"]}",
     "at /a: cannot resolve $ref \"#/$defs/no\""},
    {"{\"$ref\":\"#nowhere\",\"enum\":[{\"$anchor\":\"nowhere\"}]}",
     "no const or enum value"},
    {"{\"$ref\":\"#nowhere\"}", "cannot resolve $ref \"#nowhere\""},
    {"{\"type\":\"string\",\"pattern\":\"^[]$\"}",
     "cannot build a string for pattern"},
    {"{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":1,"
     "\"maximum\":2},\"minItems\":3,\"uniqueItems\":true}",
     "at /2: no integer satisfies"},
    {"{\"$ref\":\"other.json#/x\"}", "cannot resolve $ref"},
    {"{\"type\":\"string\",\"pattern\":\"^(?=a)b\"}",
     "cannot build a string for pattern"},
    {"{\"type\":\"string\",\"pattern\":\"\\\\bword\\\\b\"}",
     "give the schema a default or examples"},
    {"{\"type\":\"string\",\"minLength\":5000}", "minLength 5000"},
    {"{\"type\":\"array\",\"minItems\":1000}", "minItems 1000"},
    {"{\"type\":\"string\",\"format\":\"email\",\"maxLength\":3}",
     "no string satisfies"},
    {"{\"type\":\"string\",\"enum\":[1,2]}", "no const or enum value"},
    {"{\"type\":\"string\",\"const\":1}", "no const or enum value"},
    {"{\"$ref\":\"#\"}", "nested more than 32 deep"},
    {"{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"strin\"}},"
     "\"required\":[\"x\"]}",
     "unknown type \"strin\""},
    {"{\"type\":\"object\",\"properties\":{\"x\":3},\"required\":[\"x\"]}",
     "neither an object nor a boolean"},
    {"{\"anyOf\":[{\"type\":\"integer\",\"minimum\":5,\"maximum\":4},false]}",
     "no integer satisfies"},
    {"{\"type\":\"string\",\"not\":{\"type\":\"string\"}}",
     "does not satisfy every keyword"},
};

START_TEST(impossible_schemas_say_why) {
  cJSON *schema = cJSON_Parse(invalid[_i].schema);
  ck_assert_ptr_nonnull(schema);
  char why[256] = "";
  cJSON *v = mcpc_instance(schema, why, sizeof why);
  char *text = v ? cJSON_PrintUnformatted(v) : NULL;
  ck_assert_msg(v == NULL, "%s: built %s", invalid[_i].schema, text);
  ck_assert_msg(strstr(why, invalid[_i].why) != NULL, "%s: why \"%s\"",
                invalid[_i].schema, why);
  cJSON_Delete(schema);
}
END_TEST

/* A why of size 0 is never written; a short one is cut and terminated. */
START_TEST(why_buffer_bounds) {
  cJSON *schema = cJSON_CreateFalse();
  char why[8] = "keep";
  ck_assert_ptr_null(mcpc_instance(schema, why, 0));
  ck_assert_str_eq(why, "keep");
  ck_assert_ptr_null(mcpc_instance(schema, why, sizeof why));
  ck_assert_uint_eq(strlen(why), sizeof why - 1);
  cJSON_Delete(schema);
}
END_TEST

/* Builds and validates the instance of every inputSchema in the array of
 * tools; returns how many. */
static int check_tools(const cJSON *tools, const char *origin) {
  int n = 0;
  ck_assert_msg(cJSON_IsArray(tools), "%s: no tools array", origin);
  for (const cJSON *t = tools->child; t; t = t->next, n++) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
    char label[160];
    snprintf(label, sizeof label, "%s: %s", origin,
             cJSON_IsString(name) ? name->valuestring : "?");
    ck_assert_msg(cJSON_IsObject(schema), "%s: no inputSchema", label);
    char why[256] = "";
    cJSON *v = mcpc_instance(schema, why, sizeof why);
    ck_assert_msg(v != NULL, "%s: no instance: %s", label, why);
    ck_assert_msg(cJSON_IsObject(v), "%s: arguments not an object", label);
    assert_valid(schema, v, label);
    cJSON_Delete(v);
  }
  return n;
}

/* The examples' tools, as their servers list them over stdio. */
static const char *const examples[] = {
#ifdef MCPC_EXAMPLE_HELLO
    MCPC_EXAMPLE_HELLO,
#endif
#ifdef MCPC_EXAMPLE_NOTES
    MCPC_EXAMPLE_NOTES,
#endif
#ifdef MCPC_EXAMPLE_EVERYTHING
    MCPC_EXAMPLE_EVERYTHING,
#endif
    NULL,
};

/* Runs bin in a scratch folder with initialize, initialized and
 * tools/list on its standard input; returns the tools/list result. */
static cJSON *list_tools(const char *bin) {
  char dir[] = "/tmp/mcpc-instance-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *in = tu_text("%s/in", dir);
  FILE *f = fopen(in, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
        "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n",
        f);
  ck_assert_int_eq(fclose(f), 0);
  char *cmd = tu_text("cd '%s' && exec '%s' <in 2>/dev/null", dir, bin);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  static char line[1 << 20];
  cJSON *result = NULL;
  for (int lines = 0; lines < 100 && fgets(line, sizeof line, p); lines++) {
    cJSON *msg = cJSON_Parse(line);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    if (cJSON_IsNumber(id) && id->valueint == 2 && !result)
      result = cJSON_DetachItemFromObjectCaseSensitive(msg, "result");
    cJSON_Delete(msg);
  }
  ck_assert_int_eq(pclose(p), 0);
  ck_assert_msg(result != NULL, "%s: no tools/list result", bin);
  ck_assert_msg(!cJSON_GetObjectItemCaseSensitive(result, "nextCursor"),
                "%s: tools/list has more pages; follow them here", bin);
  unlink(in);
  ck_assert_int_eq(rmdir(dir), 0);
  free(in);
  free(cmd);
  return result;
}

START_TEST(examples_tools) {
  const char *bin = examples[_i];
  cJSON *result = list_tools(bin);
  int n = check_tools(cJSON_GetObjectItemCaseSensitive(result, "tools"), bin);
  ck_assert_int_gt(n, 0);
  cJSON_Delete(result);
}
END_TEST

/* The reference servers' tools, as their pinned versions list them
 * (tests/check/reference/<server>.tools.json). */
static const char *const references[] = {"server-filesystem", "server-memory"};

START_TEST(reference_tools) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.tools.json", MCPC_REFERENCE_DIR,
           references[_i]);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s: cannot open", path);
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  ck_assert_uint_lt(n, sizeof text - 1);
  text[n] = '\0';
  cJSON *doc = cJSON_Parse(text);
  ck_assert_msg(doc != NULL, "%s: not JSON", path);
  int count = check_tools(cJSON_GetObjectItemCaseSensitive(doc, "tools"), path);
  ck_assert_int_gt(count, 0);
  cJSON_Delete(doc);
}
END_TEST

int main(void) {
  Suite *s = suite_create("instance");
  TCase *t = tu_tcase(s, "table", NULL, NULL, 0);
  tcase_add_loop_test(t, table_instances_validate, 0, (int)TU_COUNT(valid));
  tcase_add_loop_test(t, impossible_schemas_say_why, 0, (int)TU_COUNT(invalid));
  tcase_add_test(t, why_buffer_bounds);
  t = tu_tcase(s, "servers", NULL, NULL, 120);
  tcase_add_loop_test(t, examples_tools, 0, (int)TU_COUNT(examples) - 1);
  tcase_add_loop_test(t, reference_tools, 0, (int)TU_COUNT(references));
  return tu_run(s);
}
