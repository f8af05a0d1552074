/* Tests for lib/schema*.c and lib/schema/regex.c: compiling (and refusing)
 * schemas, every keyword, the messages a model reads, the regex dialect,
 * formats, references, the cost limits, threads, and allocation failure.
 *
 * Schemas and instances are written with ' for ", which q() turns back,
 * so the JSON stays readable. The official JSON-Schema-Test-Suite runs
 * separately (tests/schema_suite); these tests need nothing installed. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"
#include "regex.h"
#include "schema_int.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------- */

static char msg[1024];

/* s with every ' turned into "; static storage, one at a time per slot. */
static const char *q(const char *s) {
  static char bufs[4][16384];
  static int slot;
  char *b = bufs[slot++ % 4];
  size_t n = strlen(s);
  ck_assert_uint_lt(n, sizeof bufs[0]);
  for (size_t i = 0; i <= n; i++)
    b[i] = s[i] == '\'' ? '"' : s[i];
  return b;
}

static mcp__json_doc parse(const char *text) {
  mcp__json_doc doc;
  char why[256];
  int rc = mcp__json_parse(text, strlen(text), NULL, &doc, why, sizeof why);
  ck_assert_msg(rc == 0, "cannot parse %s: %s", text, why);
  return doc;
}

/* Compiles schema (q-quoted) with flags; the error, if any, in msg. */
static int compile(const char *schema, unsigned flags, mcp__schema **out,
                   mcp__json_doc *doc) {
  *doc = parse(q(schema));
  mcp__schema_options opt = {.flags = flags};
  msg[0] = '\0';
  int rc = mcp__schema_compile(doc->root, &opt, out, msg, sizeof msg);
  if (rc != 0)
    mcp__json_doc_free(doc);
  return rc;
}

/* Validates instance against schema (both q-quoted); message in msg. */
static int check_flags(const char *schema, const char *instance,
                       unsigned flags) {
  mcp__schema *s = NULL;
  mcp__json_doc sd;
  int rc = compile(schema, flags, &s, &sd);
  ck_assert_msg(rc == 0, "schema %s refused: %s", schema, msg);
  mcp__json_doc id = parse(q(instance));
  rc = mcp__schema_validate(s, id.root, "Invalid arguments", msg, sizeof msg);
  ck_assert_msg(mcp__utf8_valid(msg, strlen(msg)), "message not UTF-8");
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  mcp__json_doc_free(&sd);
  return rc;
}

static int check(const char *schema, const char *instance) {
  return check_flags(schema, instance, 0);
}

typedef struct vcase {
  const char *schema, *instance;
  int valid;
} vcase;

static void run_cases(const vcase *cases, size_t n, unsigned flags) {
  for (size_t i = 0; i < n; i++) {
    int rc = check_flags(cases[i].schema, cases[i].instance, flags);
    ck_assert_msg((rc == 0) == cases[i].valid,
                  "case %zu: %s against %s: expected %s, got rc %d (%s)", i,
                  cases[i].instance, cases[i].schema,
                  cases[i].valid ? "valid" : "invalid", rc, msg);
    if (!cases[i].valid)
      ck_assert_int_eq(rc, MCP_EINVAL);
  }
}

/* ---- compiling ----------------------------------------------------------- */

START_TEST(compile_refuses_invalid_schemas) {
  static const struct {
    const char *schema, *error;
  } bad[] = {
      {"[]", "at the root: a schema must be an object or a boolean"},
      {"{'type':'strin'}", "at /type: \"strin\" is not a JSON Schema type"},
      {"{'type':[]}", "at /type: must be a type name or a non-empty array"},
      {"{'type':['string','string']}", "at /type/1: \"string\" is listed "
                                       "twice"},
      {"{'type':[1]}", "at /type/0: must be one of null, boolean"},
      {"{'properties':{'a':{'minimum':'1'}}}",
       "at /properties/a/minimum: must be a number"},
      {"{'properties':{'a/b~':{'maxLength':-1}}}",
       "at /properties/a~1b~0/maxLength: must be a non-negative integer"},
      {"{'minItems':1.5}", "at /minItems: must be a non-negative integer"},
      {"{'multipleOf':0}", "at /multipleOf: must be greater than 0"},
      {"{'multipleOf':-2}", "at /multipleOf: must be greater than 0"},
      {"{'required':'a'}", "at /required: must be an array of strings"},
      {"{'required':['a',1]}", "at /required/1: must be a string"},
      {"{'required':['a','a']}", "at /required/1: \"a\" is listed twice"},
      {"{'dependentRequired':{'a':'b'}}",
       "at /dependentRequired/a: must be an array of strings"},
      {"{'properties':[]}", "at /properties: must be an object"},
      {"{'properties':{'a':1}}",
       "at /properties/a: a schema must be an object or a boolean"},
      {"{'items':[{}]}", "at /items: must be a schema; JSON Schema 2020-12 "
                         "writes tuples as \"prefixItems\""},
      {"{'prefixItems':[]}", "at /prefixItems: must be a non-empty array"},
      {"{'allOf':{}}", "at /allOf: must be a non-empty array of schemas"},
      {"{'anyOf':[{},2]}", "at /anyOf/1: a schema must be an object"},
      {"{'not':null}", "at /not: a schema must be an object or a boolean"},
      {"{'uniqueItems':1}", "at /uniqueItems: must be true or false"},
      {"{'enum':{}}", "at /enum: must be an array"},
      {"{'format':1}", "at /format: must be a string"},
      {"{'pattern':'a('}", "at /pattern: the regular expression \"a(\" is "
                           "not supported: a group is not closed"},
      {"{'pattern':'(a)\\\\1'}", "backreferences"},
      {"{'patternProperties':{'(?=x)':{}}}",
       "at /patternProperties/(?=x): the regular expression"},
      {"{'$schema':'http://json-schema.org/draft-07/schema#'}",
       "at /$schema: only JSON Schema 2020-12"},
      {"{'$id':'http://x/y#frag'}", "at /$id: must not contain a fragment"},
      {"{'$defs':{'a':{'$id':7}}}", "at /$defs/a/$id: must be a string"},
      {"{'$anchor':'1abc'}", "at /$anchor: must be a name of letters"},
      {"{'$defs':{'a':{'$anchor':'x'},'b':{'$anchor':'x'}}}",
       "at /$defs/b/$anchor: the identifier \"mcp://schema/root#x\" is "
       "defined twice"},
      {"{'$ref':5}", "at /$ref: must be a string"},
      {"{'$ref':'#/$defs/missing'}",
       "at /$ref: \"mcp://schema/root#/$defs/missing\" does not name a "
       "subschema of this document"},
      {"{'$ref':'https://example.com/s.json'}", "never fetches one"},
      {"{'$ref':'#nope'}", "does not name a subschema"},
      {"{'$defs':{'a':{'$ref':'#/$defs/b'},'b':{'allOf':[{'$ref':'#/$defs/"
       "a'}]}},'$ref':'#/$defs/a'}",
       "this reference leads back to itself without descending into the "
       "instance"},
      {"{'$ref':'#'}", "at /$ref: this reference leads back to itself"},
      {"{'definitions':{'x':{'type':'nope'}},'$ref':'#/definitions/x'}",
       "at /definitions/x/type: \"nope\" is not a JSON Schema type"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp__schema *s = (mcp__schema *)&s; /* must stay untouched */
    mcp__schema *before = s;
    mcp__json_doc doc;
    int rc = compile(bad[i].schema, 0, &s, &doc);
    ck_assert_msg(rc == MCP_EINVAL, "case %zu (%s) accepted", i, bad[i].schema);
    ck_assert_ptr_eq(s, before);
    ck_assert_msg(strstr(msg, bad[i].error) != NULL,
                  "case %zu: \"%s\" lacks \"%s\"", i, msg, bad[i].error);
    ck_assert(mcp__utf8_valid(msg, strlen(msg)));
  }
  /* A quoted pattern or name cut to length is cut between characters, and
   * so is a long pointer. */
  char schema[2048];
  size_t n = (size_t)snprintf(schema, sizeof schema, "{'properties':{'");
  for (int i = 0; i < 300; i++)
    n += (size_t)snprintf(schema + n, sizeof schema - n, "\xe0\xa7\xaa");
  snprintf(schema + n, sizeof schema - n, "':{'pattern':'\xe0\xa7\xaa(('}}}");
  mcp__schema *s;
  mcp__json_doc doc;
  ck_assert_int_eq(compile(schema, 0, &s, &doc), MCP_EINVAL);
  ck_assert_msg(mcp__utf8_valid(msg, strlen(msg)), "%s", msg);
  ck_assert_ptr_nonnull(strstr(msg, "..."));
  char small[300];
  n = (size_t)snprintf(schema, sizeof schema, "{'pattern':'");
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(schema + n, sizeof schema - n, "\xe0\xa7\xaa");
  snprintf(schema + n, sizeof schema - n, "('}");
  mcp__json_doc d2 = parse(q(schema));
  for (size_t len = 1; len < sizeof small; len += 7) {
    ck_assert_int_eq(mcp__schema_compile(d2.root, NULL, &s, small, len),
                     MCP_EINVAL);
    ck_assert(mcp__utf8_valid(small, strlen(small)));
  }
  mcp__json_doc_free(&d2);
}
END_TEST

START_TEST(compile_accepts) {
  static const char *const good[] = {
      "true",
      "false",
      "{}",
      "{'$schema':'https://json-schema.org/draft/2020-12/schema'}",
      "{'$schema':'https://json-schema.org/draft/2020-12/schema#'}",
      "{'$id':'https://example.com/root.json#'}",
      ("{'title':'t','description':'d','default':1,'examples':[],"
       "'deprecated':false,'readOnly':true,'writeOnly':false,'$comment':'c',"
       "'contentMediaType':'application/json','x-vendor':{'type':7}}"),
      "{'format':'no-such-format'}",
      "{'then':{},'else':{}}",
      "{'maxLength':1e3,'minItems':2.0,'maxProperties':1e400}",
      ("{'$defs':{'a':{'$ref':'#/$defs/b'},'b':{'type':'object',"
       "'properties':{'next':{'$ref':'#/$defs/a'}}}},'$ref':'#/$defs/a'}"),
  };
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    mcp__schema *s = NULL;
    mcp__json_doc doc;
    int rc = compile(good[i], 0, &s, &doc);
    ck_assert_msg(rc == 0, "case %zu (%s): %s", i, good[i], msg);
    mcp__schema_free(s);
    mcp__json_doc_free(&doc);
  }
  mcp__schema_free(NULL);
}
END_TEST

/* ---- keywords ------------------------------------------------------------ */

START_TEST(keyword_type) {
  static const vcase cases[] = {
      {"{'type':'integer'}", "1", 1},
      {"{'type':'integer'}", "1.0", 1},
      {"{'type':'integer'}", "1e2", 1},
      {"{'type':'integer'}", "-9007199254740993", 1},
      {"{'type':'integer'}", "1.5", 0},
      {"{'type':'integer'}", "1.0000000000000000001", 0},
      {"{'type':'number'}", "1", 1},
      {"{'type':'number'}", "'1'", 0},
      {"{'type':'string'}", "''", 1},
      {"{'type':'null'}", "null", 1},
      {"{'type':'null'}", "false", 0},
      {"{'type':'boolean'}", "true", 1},
      {"{'type':'boolean'}", "0", 0},
      {"{'type':'object'}", "{}", 1},
      {"{'type':'object'}", "[]", 0},
      {"{'type':'array'}", "[]", 1},
      {"{'type':['integer','string']}", "'a'", 1},
      {"{'type':['integer','string']}", "2", 1},
      {"{'type':['integer','string']}", "2.5", 0},
      {"true", "{'anything':[1]}", 1},
      {"false", "null", 0},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_numbers_exact) {
  static const vcase cases[] = {
      {"{'multipleOf':0.0001}", "0.0075", 1},
      {"{'multipleOf':0.0001}", "0.00751", 0},
      {"{'multipleOf':0.1}", "0.3", 1},
      {"{'multipleOf':1.5}", "4.5", 1},
      {"{'multipleOf':1.5}", "35", 0},
      {"{'multipleOf':1e-8}", "12391239123", 1},
      {"{'multipleOf':0.123456789}", "1e308", 0},
      {"{'multipleOf':3}", "1e400", 0},
      {"{'multipleOf':2}", "1e400", 1},
      {"{'multipleOf':7}", "-14", 1},
      {"{'multipleOf':7}", "0", 1},
      {"{'multipleOf':1234567890123456789012345}", "0.5", 0},
      {"{'multipleOf':1234567890123456789012345}", "2469135780246913578024690",
       1},
      {"{'maximum':9007199254740992}", "9007199254740993", 0},
      {"{'maximum':9007199254740992}", "9007199254740992.0", 1},
      {"{'minimum':-1e-400}", "0", 1},
      {"{'minimum':1e-400}", "0", 0},
      {"{'exclusiveMinimum':0}", "0", 0},
      {"{'exclusiveMinimum':0}", "1e-300", 1},
      {"{'exclusiveMaximum':10}", "10.0", 0},
      {"{'exclusiveMaximum':10}", "9.999999999999999999", 1},
      {"{'maximum':-5}", "-5.0e0", 1},
      {"{'maximum':-5}", "-4.9", 0},
      {"{'minimum':5}", "'4'", 1}, /* only numbers are constrained */
      {"{'const':1}", "1.0", 1},
      {"{'const':1}", "true", 0},
      {"{'const':100}", "1e2", 1},
      {"{'const':[1,{'a':0.5}]}", "[1.0,{'a':5e-1}]", 1},
      {"{'const':{'a':1,'b':2}}", "{'b':2,'a':1}", 1},
      {"{'const':{'a':1,'b':2}}", "{'b':2}", 0},
      {"{'const':0}", "false", 0},
      {"{'const':null}", "null", 1},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_strings) {
  static const vcase cases[] = {
      {"{'maxLength':2}", "'\xc3\xa9\xc3\xa9'", 1}, /* two code points */
      {"{'maxLength':2}", "'\xf0\x9f\x92\xa9\xf0\x9f\x92\xa9x'", 0},
      {"{'minLength':2}", "'\xf0\x9f\x92\xa9'", 0},
      {"{'minLength':1}", "''", 0},
      {"{'maxLength':0}", "''", 1},
      {"{'pattern':'^[a-z]+$'}", "'abc'", 1},
      {"{'pattern':'^[a-z]+$'}", "'abC'", 0},
      {"{'pattern':'b'}", "'abc'", 1}, /* a search, not anchored */
      {"{'pattern':'^\\\\d{3}-\\\\d{4}$'}", "'555-1234'", 1},
      {"{'pattern':'^\\\\d{3}-\\\\d{4}$'}", "'555-12345'", 0},
      {"{'pattern':'^\xc3\xa1'}", "'\xc3\xa1x'", 1},
      {"{'pattern':'^.$'}", "'\xf0\x9f\x92\xa9'", 1}, /* one code point */
      {"{'pattern':'^[^a]$'}", "'\xe2\x82\xac'", 1},
      {"{'enum':['a','b',1,null]}", "'b'", 1},
      {"{'enum':['a','b',1,null]}", "1.0", 1},
      {"{'enum':['a','b',1,null]}", "'c'", 0},
      {"{'enum':[]}", "'c'", 0},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_large_enum) {
  /* More than eight values are looked up by hash. */
  const char *schema = "{'enum':['a','b','c','d','e','f','g','h','i',1.5,"
                       "[1,2],{'k':'v','w':[true]},null]}";
  static const char *const in[] = {
      "'i'", "'a'", "1.50", "15e-1", "[1.0,2]", "{'w':[true],'k':'v'}", "null"};
  static const char *const out[] = {"'j'",       "1",     "[2,1]",
                                    "{'k':'v'}", "false", "{}"};
  for (size_t i = 0; i < TU_COUNT(in); i++)
    ck_assert_msg(check(schema, in[i]) == 0, "%s: %s", in[i], msg);
  for (size_t i = 0; i < TU_COUNT(out); i++)
    ck_assert_msg(check(schema, out[i]) == MCP_EINVAL, "%s accepted", out[i]);
}
END_TEST

START_TEST(keyword_arrays) {
  static const vcase cases[] = {
      {"{'items':{'type':'integer'}}", "[1,2,3]", 1},
      {"{'items':{'type':'integer'}}", "[1,'2']", 0},
      {"{'prefixItems':[{'type':'string'}],'items':false}", "['a']", 1},
      {"{'prefixItems':[{'type':'string'}],'items':false}", "['a',1]", 0},
      {"{'prefixItems':[{'type':'string'}]}", "['a',1]", 1},
      {"{'prefixItems':[{'type':'string'},{'type':'integer'}]}", "['a']", 1},
      {"{'contains':{'const':2}}", "[1,2]", 1},
      {"{'contains':{'const':2}}", "[1,3]", 0},
      {"{'contains':{'const':2}}", "[]", 0},
      {"{'contains':{'const':2},'minContains':0}", "[]", 1},
      {"{'contains':{'const':2},'minContains':2}", "[2,1,2]", 1},
      {"{'contains':{'const':2},'maxContains':1}", "[2,1,2]", 0},
      {"{'maxContains':0}", "[2]", 1}, /* without contains: ignored */
      {"{'minItems':2}", "[1]", 0},
      {"{'maxItems':2}", "[1,2,3]", 0},
      {"{'uniqueItems':true}", "[1,'1',[1],{'a':1}]", 1},
      {"{'uniqueItems':true}", "[1,2,1.0]", 0},
      {"{'uniqueItems':true}", "[{'a':1,'b':2},{'b':2,'a':1}]", 0},
      {"{'uniqueItems':true}", "[[1,2],[2,1]]", 1},
      {"{'uniqueItems':false}", "[1,1]", 1},
      {"{'items':{'type':'integer'}}", "{'not':'an array'}", 1},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_unique_large) {
  /* Past sixteen items duplicates are found by hashing. */
  char inst[16384];
  size_t n = 0;
  n += (size_t)snprintf(inst + n, sizeof inst - n, "[");
  for (int i = 0; i < 1000; i++)
    n += (size_t)snprintf(inst + n, sizeof inst - n, "%s{'k':%d}", i ? "," : "",
                          i);
  snprintf(inst + n, sizeof inst - n, "]");
  ck_assert_int_eq(check("{'uniqueItems':true}", inst), 0);
  inst[n] = '\0';
  snprintf(inst + n, sizeof inst - n, ",{'k':17.0}]");
  ck_assert_int_eq(check("{'uniqueItems':true}", inst), MCP_EINVAL);
  ck_assert_str_eq(msg, "Invalid arguments: uniqueItems: must not repeat "
                        "items; items 17 and 1000 are equal.");
}
END_TEST

START_TEST(keyword_objects) {
  static const vcase cases[] = {
      {"{'properties':{'a':{'type':'string'}}}", "{'a':'x','b':1}", 1},
      {"{'properties':{'a':{'type':'string'}}}", "{'a':1}", 0},
      {"{'properties':{'a':false}}", "{'a':1}", 0},
      {"{'properties':{'a':false}}", "{}", 1},
      {"{'patternProperties':{'^x-':{'type':'integer'}}}", "{'x-a':1}", 1},
      {"{'patternProperties':{'^x-':{'type':'integer'}}}", "{'x-a':'1'}", 0},
      {"{'properties':{'a':{}},'patternProperties':{'^b':{}},"
       "'additionalProperties':false}",
       "{'a':1,'bb':2}", 1},
      {"{'properties':{'a':{}},'patternProperties':{'^b':{}},"
       "'additionalProperties':false}",
       "{'a':1,'c':2}", 0},
      {"{'additionalProperties':{'type':'integer'}}", "{'a':1,'b':2}", 1},
      {"{'additionalProperties':{'type':'integer'}}", "{'a':1,'b':'2'}", 0},
      {"{'required':['a','b']}", "{'a':null,'b':0}", 1},
      {"{'required':['a','b']}", "{'a':null}", 0},
      {"{'required':['a']}", "[]", 1},
      {"{'dependentRequired':{'card':['billing']}}", "{'card':1}", 0},
      {"{'dependentRequired':{'card':['billing']}}", "{'card':1,'billing':2}",
       1},
      {"{'dependentRequired':{'card':['billing']}}", "{'billing':2}", 1},
      {"{'dependentSchemas':{'a':{'required':['b']}}}", "{'a':1}", 0},
      {"{'dependentSchemas':{'a':{'required':['b']}}}", "{'c':1}", 1},
      {"{'propertyNames':{'pattern':'^[a-z]+$'}}", "{'abc':1}", 1},
      {"{'propertyNames':{'pattern':'^[a-z]+$'}}", "{'aBc':1}", 0},
      {"{'propertyNames':{'maxLength':2}}", "{'abc':1}", 0},
      {"{'propertyNames':false}", "{}", 1},
      {"{'minProperties':1}", "{}", 0},
      {"{'maxProperties':1}", "{'a':1,'b':2}", 0},
      {"{'properties':{'constructor':{'type':'number'}}}",
       "{'constructor':'x'}", 0},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_large_object) {
  /* More members than one 64-bit word of bookkeeping. */
  char schema[16384], inst[16384];
  size_t s = 0, n = 0;
  s += (size_t)snprintf(schema, sizeof schema,
                        "{'type':'object',"
                        "'properties':{");
  n += (size_t)snprintf(inst, sizeof inst, "{");
  for (int i = 0; i < 200; i++) {
    s += (size_t)snprintf(schema + s, sizeof schema - s,
                          "%s'p%d':{'type':'integer'}", i ? "," : "", i);
    n += (size_t)snprintf(inst + n, sizeof inst - n, "%s'p%d':%d", i ? "," : "",
                          i, i);
  }
  snprintf(schema + s, sizeof schema - s,
           "},'required':['p0','p199'],'unevaluatedProperties':false}");
  snprintf(inst + n, sizeof inst - n, "}");
  ck_assert_msg(check(schema, inst) == 0, "%s", msg);
  snprintf(inst + n, sizeof inst - n, ",'extra':1}");
  ck_assert_int_eq(check(schema, inst), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "at /extra: unevaluatedProperties: "
                                    "unexpected property \"extra\"; the "
                                    "accepted properties are \"p0\""));
  ck_assert_ptr_nonnull(strstr(msg, " and 188 more."));
}
END_TEST

START_TEST(keyword_combinators) {
  static const vcase cases[] = {
      {"{'allOf':[{'type':'integer'},{'minimum':2}]}", "3", 1},
      {"{'allOf':[{'type':'integer'},{'minimum':2}]}", "1", 0},
      {"{'anyOf':[{'type':'integer'},{'minimum':2}]}", "1", 1},
      {"{'anyOf':[{'type':'integer'},{'minimum':2}]}", "1.5", 0},
      {"{'oneOf':[{'type':'integer'},{'minimum':2}]}", "1", 1},
      {"{'oneOf':[{'type':'integer'},{'minimum':2}]}", "3", 0},
      {"{'oneOf':[{'type':'integer'},{'minimum':2}]}", "1.5", 0},
      {"{'not':{'type':'string'}}", "1", 1},
      {"{'not':{'type':'string'}}", "'1'", 0},
      {"{'if':{'minimum':10},'then':{'multipleOf':10},'else':{'maximum':5}}",
       "20", 1},
      {"{'if':{'minimum':10},'then':{'multipleOf':10},'else':{'maximum':5}}",
       "15", 0},
      {"{'if':{'minimum':10},'then':{'multipleOf':10},'else':{'maximum':5}}",
       "4", 1},
      {"{'if':{'minimum':10},'then':{'multipleOf':10},'else':{'maximum':5}}",
       "7", 0},
      {"{'then':false}", "1", 1},
      {"{'if':false,'then':false}", "1", 1},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_unevaluated) {
  static const vcase cases[] = {
      {"{'allOf':[{'properties':{'a':{}}}],'unevaluatedProperties':false}",
       "{'a':1}", 1},
      {"{'allOf':[{'properties':{'a':{}}}],'unevaluatedProperties':false}",
       "{'a':1,'b':1}", 0},
      {"{'anyOf':[{'properties':{'a':{}},'required':['a']},{'properties':{"
       "'b':{}},'required':['b']}],'unevaluatedProperties':false}",
       "{'a':1,'b':1}", 1},
      {"{'anyOf':[{'properties':{'a':{}},'required':['a']},{'properties':{"
       "'b':{}},'required':['b'],'type':'string'}],"
       "'unevaluatedProperties':false}",
       "{'a':1,'b':1}", 0},
      {"{'if':{'properties':{'a':{'const':1}}},'then':{'properties':{'b':{}}"
       "},'unevaluatedProperties':false}",
       "{'a':1,'b':2}", 1},
      {"{'if':{'properties':{'a':{'const':1}}},'then':{'properties':{'b':{}}"
       "},'unevaluatedProperties':false}",
       "{'a':2}", 0},
      {"{'not':{'not':{'properties':{'a':{}}}},'unevaluatedProperties':false}",
       "{'a':1}", 0},
      {"{'$defs':{'d':{'properties':{'a':{}}}},'$ref':'#/$defs/d',"
       "'unevaluatedProperties':false}",
       "{'a':1}", 1},
      {"{'prefixItems':[{}],'unevaluatedItems':false}", "[1]", 1},
      {"{'prefixItems':[{}],'unevaluatedItems':false}", "[1,2]", 0},
      {"{'allOf':[{'prefixItems':[{},{}]}],'unevaluatedItems':false}", "[1,2]",
       1},
      {"{'contains':{'type':'string'},'unevaluatedItems':{'type':'integer'}}",
       "['a',1,'b',2]", 1},
      {"{'contains':{'type':'string'},'unevaluatedItems':{'type':'integer'}}",
       "['a',1,true]", 0},
      {"{'unevaluatedItems':false}", "{}", 1},
      {"{'unevaluatedProperties':false}", "[1]", 1},
      {"{'properties':{'x':{'$ref':'#'}},'unevaluatedProperties':false}",
       "{'x':{'x':{}}}", 1},
      {"{'properties':{'x':{'$ref':'#'}},'unevaluatedProperties':false}",
       "{'x':{'y':{}}}", 0},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_refs) {
  static const vcase cases[] = {
      {"{'$defs':{'pos':{'type':'integer','minimum':1}},'properties':{'n':{"
       "'$ref':'#/$defs/pos'}}}",
       "{'n':1}", 1},
      {"{'$defs':{'pos':{'type':'integer','minimum':1}},'properties':{'n':{"
       "'$ref':'#/$defs/pos'}}}",
       "{'n':0}", 0},
      {"{'$defs':{'a~b/c%d':{'type':'string'}},'$ref':'#/$defs/a~0b~1c%25d'}",
       "'x'", 1},
      {"{'$defs':{'a~b/c%d':{'type':'string'}},'$ref':'#/$defs/a~0b~1c%25d'}",
       "1", 0},
      {"{'$defs':{'s':{'$anchor':'str','type':'string'}},'$ref':'#str'}", "1",
       0},
      {"{'$id':'https://example.com/root','$defs':{'s':{'$id':'s.json',"
       "'type':'string'}},'$ref':'s.json'}",
       "1", 0},
      {"{'$id':'https://example.com/root','$defs':{'s':{'$id':'s.json',"
       "'type':'string'}},'$ref':'https://example.com/s.json'}",
       "'a'", 1},
      {"{'definitions':{'x':{'type':'string'}},'$ref':'#/definitions/x'}", "1",
       0},
      {"{'prefixItems':[{'type':'string'},{'$ref':'#/prefixItems/0'}]}",
       "['a',2]", 0},
      {"{'$ref':'#/$defs/t','$defs':{'t':true}}", "1", 1},
      {"{'$ref':'#/$defs/f','$defs':{'f':false}}", "1", 0},
      {"{'$id':'urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed','$defs':{"
       "'bar':{'type':'string'}},'$ref':'#/$defs/bar'}",
       "1", 0},
      /* Recursion that descends into the instance is fine. */
      {"{'type':'object','properties':{'kids':{'type':'array','items':{"
       "'$ref':'#'}}},'additionalProperties':false}",
       "{'kids':[{'kids':[]},{'kids':[{}]}]}", 1},
      {"{'type':'object','properties':{'kids':{'type':'array','items':{"
       "'$ref':'#'}}},'additionalProperties':false}",
       "{'kids':[{'kids':[]},{'kids':[{'x':1}]}]}", 0},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

START_TEST(keyword_dynamic_refs) {
  /* A list whose items are whatever the outermost resource says. */
  static const vcase cases[] = {
      {"{'$id':'https://example.com/root','$ref':'list','$defs':{'foo':{"
       "'$dynamicAnchor':'items','type':'string'},'list':{'$id':'list',"
       "'type':'array','items':{'$dynamicRef':'#items'},'$defs':{'items':{"
       "'$dynamicAnchor':'items'}}}}}",
       "['a','b']", 1},
      {"{'$id':'https://example.com/root','$ref':'list','$defs':{'foo':{"
       "'$dynamicAnchor':'items','type':'string'},'list':{'$id':'list',"
       "'type':'array','items':{'$dynamicRef':'#items'},'$defs':{'items':{"
       "'$dynamicAnchor':'items'}}}}}",
       "['a',1]", 0},
      /* Entered directly, the list accepts anything. */
      {"{'$id':'https://example.com/list','type':'array','items':{"
       "'$dynamicRef':'#items'},'$defs':{'items':{'$dynamicAnchor':'items'}}}",
       "['a',1]", 1},
  };
  run_cases(cases, TU_COUNT(cases), 0);
}
END_TEST

/* ---- formats ------------------------------------------------------------- */

START_TEST(formats) {
  static const struct {
    const char *format, *value;
    int valid;
  } cases[] = {
      {"date-time", "2025-01-31T09:30:00Z", 1},
      {"date-time", "2025-01-31t09:30:00.123+05:30", 1},
      {"date-time", "1998-12-31T23:59:60Z", 1},
      {"date-time", "1998-12-31T15:59:60-08:00", 1},
      {"date-time", "1998-12-31T22:59:60Z", 0},
      {"date-time", "2025-02-29T00:00:00Z", 0},
      {"date-time", "2025-01-31 09:30:00Z", 0},
      {"date-time", "2025-01-31T09:30:00", 0},
      {"date", "2024-02-29", 1},
      {"date", "2100-02-29", 0},
      {"date", "2025-1-01", 0},
      {"email", "name@example.com", 1},
      {"email", "\"a b\"@example.com", 1},
      {"email", "a@[127.0.0.1]", 1},
      {"email", "a@[IPv6:::1]", 1},
      {"email", "a..b@example.com", 0},
      {"email", ".a@example.com", 0},
      {"email", "example.com", 0},
      {"email", "a@-bad.com", 0},
      {"uri", "https://example.com/a?b=c#d", 1},
      {"uri", "urn:isbn:0451450523", 1},
      {"uri", "http://[2001:db8::1]:8080/", 1},
      {"uri", "/relative/path", 0},
      {"uri", "http://exa mple.com", 0},
      {"uri", "http://example.com/%zz", 0},
      {"uuid", "123e4567-e89b-12d3-a456-426614174000", 1},
      {"uuid", "123E4567-E89B-12D3-A456-426614174000", 1},
      {"uuid", "123e4567e89b12d3a456426614174000", 0},
      {"uuid", "123e4567-e89b-12d3-a456-42661417400g", 0},
      {"ipv4", "192.0.2.1", 1},
      {"ipv4", "255.255.255.255", 1},
      {"ipv4", "256.1.1.1", 0},
      {"ipv4", "01.1.1.1", 0},
      {"ipv4", "1.1.1", 0},
      {"ipv6", "2001:db8::1", 1},
      {"ipv6", "::", 1},
      {"ipv6", "::ffff:192.0.2.1", 1},
      {"ipv6", "1:2:3:4:5:6:7:8", 1},
      {"ipv6", "1:2:3:4:5:6:7:8:9", 0},
      {"ipv6", "1::2::3", 0},
      {"ipv6", "fe80::1%eth0", 0},
      {"ipv6", "12345::", 0},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char schema[128], inst[256];
    snprintf(schema, sizeof schema, "{'format':'%s'}", cases[i].format);
    mcp__buf b = {0};
    mcp__json_quote(&b, cases[i].value, strlen(cases[i].value));
    snprintf(inst, sizeof inst, "%s", mcp__buf_str(&b));
    mcp__buf_free(&b);
    /* q() would turn the quotes inside the value; validate directly. */
    mcp__schema *s;
    mcp__json_doc sd, id;
    ck_assert_int_eq(compile(schema, MCP__SCHEMA_ASSERT_FORMAT, &s, &sd), 0);
    id = parse(inst);
    int rc = mcp__schema_validate(s, id.root, "v", msg, sizeof msg);
    ck_assert_msg((rc == 0) == cases[i].valid, "%s %s: rc %d %s",
                  cases[i].format, cases[i].value, rc, msg);
    /* Without the option, format is an annotation. */
    mcp__schema *plain;
    mcp__json_doc pd;
    ck_assert_int_eq(compile(schema, 0, &plain, &pd), 0);
    ck_assert_int_eq(mcp__schema_validate(plain, id.root, "v", msg, sizeof msg),
                     0);
    mcp__schema_free(plain);
    mcp__json_doc_free(&pd);
    mcp__json_doc_free(&id);
    mcp__schema_free(s);
    mcp__json_doc_free(&sd);
  }
  ck_assert_int_eq(
      check_flags("{'format':'uuid'}", "'nope'", MCP__SCHEMA_ASSERT_FORMAT),
      MCP_EINVAL);
  ck_assert_str_eq(msg, "Invalid arguments: format: must be a valid uuid: an "
                        "RFC 4122 UUID such as "
                        "123e4567-e89b-12d3-a456-426614174000.");
  /* Formats that are not asserted stay annotations even with the option. */
  ck_assert_int_eq(
      check_flags("{'format':'hostname'}", "'-'", MCP__SCHEMA_ASSERT_FORMAT),
      0);
  /* Non-strings are not constrained. */
  ck_assert_int_eq(
      check_flags("{'format':'ipv4'}", "12", MCP__SCHEMA_ASSERT_FORMAT), 0);
}
END_TEST

/* ---- messages ------------------------------------------------------------ */

START_TEST(messages) {
  static const struct {
    const char *schema, *instance, *message;
  } cases[] = {
      {"{'type':'object','properties':{'text':{'type':'string'}},"
       "'required':['text']}",
       "{}",
       "Invalid arguments: required: missing required property "
       "\"text\"."},
      {"{'properties':{'text':{'type':'string'}}}", "{'text':5}",
       "Invalid arguments at /text: type: must be a string, not integer."},
      {"{'properties':{'n':{'type':'integer'}}}", "{'n':0.5}",
       "Invalid arguments at /n: type: must be an integer, not number."},
      {"{'type':['string','null']}", "{}",
       "Invalid arguments: type: must be one of string, null, not object."},
      {"{'additionalProperties':false}", "{'x':1}",
       "Invalid arguments at /x: additionalProperties: unexpected property "
       "\"x\"; no properties are accepted here."},
      {"{'properties':{'a':{},'b':{}},'additionalProperties':false}",
       "{'a':1,'c':2}",
       "Invalid arguments at /c: additionalProperties: unexpected property "
       "\"c\"; the accepted properties are \"a\", \"b\"."},
      {"{'properties':{'a':{}},'patternProperties':{'^x-':{}},"
       "'additionalProperties':false}",
       "{'c':2}",
       "Invalid arguments at /c: additionalProperties: unexpected property "
       "\"c\"; the accepted property is \"a\", and names matching ^x-."},
      {"{'properties':{'list':{'items':{'properties':{'id':{'minimum':1}}}}}}",
       "{'list':[{'id':1},{'id':0}]}",
       "Invalid arguments at /list/1/id: minimum: must be at least 1."},
      {"{'properties':{'a/b':{'maximum':1.50}}}", "{'a/b':2}",
       "Invalid arguments at /a~1b: maximum: must be at most 1.50."},
      {"{'exclusiveMinimum':0}", "0",
       "Invalid arguments: exclusiveMinimum: must be greater than 0."},
      {"{'exclusiveMaximum':0}", "0",
       "Invalid arguments: exclusiveMaximum: must be less than 0."},
      {"{'multipleOf':0.5}", "0.7",
       "Invalid arguments: multipleOf: must be a multiple of 0.5."},
      {"{'maxLength':3}", "'abcd'",
       "Invalid arguments: maxLength: must be at most 3 characters long, not "
       "4."},
      {"{'minLength':1}", "''",
       "Invalid arguments: minLength: must be at least 1 character long, not "
       "0."},
      {"{'pattern':'^[a-z]+$'}", "'A'",
       "Invalid arguments: pattern: must match the regular expression "
       "^[a-z]+$."},
      {"{'enum':['red','green',3,null]}", "'blue'",
       "Invalid arguments: enum: must be one of \"red\", \"green\", 3, null."},
      {"{'const':{'a':1}}", "{}",
       "Invalid arguments: const: must be exactly {...}."},
      {"{'prefixItems':[{}],'items':false}", "[1,2]",
       "Invalid arguments at /1: items: unexpected item; this array accepts "
       "at most 1 item."},
      {"{'contains':{'type':'string'}}", "[1]",
       "Invalid arguments: contains: must contain at least one item that "
       "matches \"contains\"."},
      {"{'contains':{'type':'string'},'minContains':2}", "['a',1]",
       "Invalid arguments: contains: must contain at least 2 items that "
       "match \"contains\", not 1."},
      {"{'contains':{'type':'string'},'maxContains':1}", "['a','b']",
       "Invalid arguments: maxContains: must contain at most 1 item that "
       "matches \"contains\", not 2."},
      {"{'minItems':2}", "[1]",
       "Invalid arguments: minItems: must have at least 2 items, not 1."},
      {"{'maxItems':1}", "[1,2]",
       "Invalid arguments: maxItems: must have at most 1 item, not 2."},
      {"{'uniqueItems':true}", "[1,2,1]",
       "Invalid arguments: uniqueItems: must not repeat items; items 0 and 2 "
       "are equal."},
      {"{'prefixItems':[{}],'unevaluatedItems':false}", "[1,2]",
       "Invalid arguments at /1: unevaluatedItems: unexpected item; no part "
       "of the schema accepts it."},
      {"{'allOf':[{'properties':{'a':{}}}],'unevaluatedProperties':false}",
       "{'a':1,'b':2}",
       "Invalid arguments at /b: unevaluatedProperties: unexpected property "
       "\"b\"; no part of the schema accepts it."},
      {"{'dependentRequired':{'card':['billing']}}", "{'card':1}",
       "Invalid arguments: dependentRequired: missing property \"billing\", "
       "which is required when \"card\" is present."},
      {"{'minProperties':2}", "{'a':1}",
       "Invalid arguments: minProperties: must have at least 2 properties, "
       "not 1."},
      {"{'maxProperties':1}", "{'a':1,'b':2}",
       "Invalid arguments: maxProperties: must have at most 1 property, not "
       "2."},
      {"{'propertyNames':{'pattern':'^[a-z]+$'}}", "{'Bad':1}",
       "Invalid arguments at /Bad: propertyNames: the property name \"Bad\" "
       "must match the regular expression ^[a-z]+$."},
      {"{'propertyNames':false}", "{'a':1}",
       "Invalid arguments at /a: propertyNames: the property name \"a\" is "
       "not allowed here."},
      {"{'properties':{'a':false}}", "{'a':1}",
       "Invalid arguments at /a: false: is not allowed here."},
      {"{'not':{'type':'string'}}", "'s'",
       "Invalid arguments: not: must not match the schema in \"not\"."},
      {"{'oneOf':[{'type':'integer'},{'minimum':0}]}", "1",
       "Invalid arguments: oneOf: matches alternatives 1 and 2 of \"oneOf\", "
       "but must match exactly one."},
      /* Optional values: the alternatives' types, as one type error. */
      {"{'properties':{'v':{'anyOf':[{'type':'string'},{'type':'null'}]}}}",
       "{'v':1}",
       "Invalid arguments at /v: type: must be one of string, null, not "
       "integer."},
      /* Otherwise the alternative that got furthest explains. */
      {"{'anyOf':[{'type':'object','properties':{'kind':{'const':'a'}}},{"
       "'type':'object','properties':{'kind':{'const':'b'},'n':{'type':"
       "'object','properties':{'m':{'type':'integer'}}}}}]}",
       "{'kind':'b','n':{'m':'x'}}",
       "Invalid arguments: anyOf: matches none of the 2 alternatives; "
       "alternative 2 fails at /n/m: type: must be an integer, not string."},
      {"{'oneOf':[{'type':'string','minLength':5},{'type':'integer'}]}",
       "'abc'",
       "Invalid arguments: oneOf: matches none of the 2 alternatives; "
       "alternative 1 fails: minLength: must be at least 5 characters long, "
       "not 3."},
      {"{'if':{'properties':{'t':{'const':'x'}}},'then':{'required':['y']}}",
       "{'t':'x'}",
       "Invalid arguments: required: missing required property \"y\"."},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    int rc = check(cases[i].schema, cases[i].instance);
    ck_assert_msg(rc == MCP_EINVAL, "case %zu accepted", i);
    ck_assert_msg(strcmp(msg, cases[i].message) == 0,
                  "case %zu:\n  got  %s\n  want %s", i, msg, cases[i].message);
  }
}
END_TEST

START_TEST(messages_are_bounded_utf8) {
  /* Long names with multi-byte characters are cut between characters, and
   * a short buffer still gets a valid, terminated sentence. */
  char name[600], schema[1400], inst[1400];
  size_t n = 0;
  for (int i = 0; i < 150; i++)
    n += (size_t)snprintf(name + n, sizeof name - n, "\xc3\xa9");
  snprintf(schema, sizeof schema, "{'required':['%s']}", name);
  snprintf(inst, sizeof inst, "{'%s%s':1}", name, name);
  ck_assert_int_eq(check(schema, "{}"), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "...\"."));
  snprintf(schema, sizeof schema, "{'additionalProperties':false}");
  ck_assert_int_eq(check(schema, inst), MCP_EINVAL);
  mcp__schema *s;
  mcp__json_doc sd;
  ck_assert_int_eq(compile("{'type':'string'}", 0, &s, &sd), 0);
  mcp__json_doc id = parse("[1]");
  for (size_t len = 0; len < 40; len++) {
    char small[40];
    memset(small, 'x', sizeof small);
    ck_assert_int_eq(mcp__schema_validate(s, id.root, "Bad \xc3\xa9\xc3\xa9",
                                          len ? small : NULL, len),
                     MCP_EINVAL);
    if (len) {
      ck_assert_uint_lt(strlen(small), len);
      ck_assert(mcp__utf8_valid(small, strlen(small)));
    }
  }
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  mcp__json_doc_free(&sd);
}
END_TEST

/* ---- regular expressions --------------------------------------------------
 */

static int re_match(const char *pattern, const char *subject) {
  mcp__regex *re;
  char why[160];
  int rc =
      mcp__regex_compile(pattern, strlen(pattern), 0, &re, why, sizeof why);
  ck_assert_msg(rc == 0, "%s refused: %s", pattern, why);
  void *scratch = malloc(mcp__regex_scratch_size(re));
  unsigned long steps = 0;
  int hit = mcp__regex_search(re, subject, strlen(subject), scratch, &steps);
  free(scratch);
  mcp__regex_free(re);
  return hit;
}

START_TEST(regex_dialect) {
  static const struct {
    const char *pattern, *subject;
    int match;
  } cases[] = {
      {"", "", 1},
      {"", "abc", 1},
      {"abc", "xabcx", 1},
      {"^abc$", "xabc", 0},
      {"^a|b$", "xb", 1},
      {"^(a|b)$", "xb", 0},
      {"a.c", "a\nc", 0},
      {"a.c",
       "a\xe2\x82\xac"
       "c",
       1},
      {"^a*$", "", 1},
      {"^a+$", "", 0},
      {"^a?b$", "b", 1},
      {"^a{2}$", "aa", 1},
      {"^a{2}$", "aaa", 0},
      {"^a{2,}$", "aaaa", 1},
      {"^a{2,3}$", "aaaa", 0},
      {"^a{0,1}$", "a", 1},
      {"^a+?b$", "aab", 1},
      {"^(?:ab)+$", "abab", 1},
      {"^(?<word>\\w+)$", "hi_9", 1},
      {"^\\d+$", "123", 1},
      {"^\\d+$", "\xd9\xa3", 0}, /* ASCII digits only, as ECMA-262 says */
      {"^\\D$", "a", 1},
      {"^\\w+$", "a_Z9", 1},
      {"^\\W$", "-", 1},
      {"^\\s$", "\xe2\x80\x83", 1}, /* U+2003 EM SPACE */
      {"^\\s$", "\xef\xbb\xbf", 1}, /* U+FEFF */
      {"^\\S$", " ", 0},
      {"\\bfoo\\b", "a foo b", 1},
      {"\\bfoo\\b", "afoob", 0},
      {"\\Boo", "foo", 1},
      {"^[a-c]+$", "abcab", 1},
      {"^[^a-c]+$", "xyz", 1},
      {"^[^a-c]+$", "xaz", 0},
      {"^[-a]+$", "-a-", 1},
      {"^[a-]+$", "-a-", 1},
      {"^[\\d.]+$", "1.2", 1},
      {"^[\\D]$", "x", 1},
      {"^[\\b]$", "\b", 1},
      {"^[\\]]$", "]", 1},
      {"^\\u00e9$", "\xc3\xa9", 1},
      {"^\\u{1F600}$", "\xf0\x9f\x98\x80", 1},
      {"^\\uD83D\\uDE00$", "\xf0\x9f\x98\x80", 1},
      {"^\\x41$", "A", 1},
      {"^\\cJ$", "\n", 1},
      {"^\\t\\n\\r\\f\\v$", "\t\n\r\f\v", 1},
      {"^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\\\/$", ".*+?()[]{}|^$\\/",
       1},
      {"^[\xc3\xa0-\xc3\xbf]$", "\xc3\xa9", 1},
      {"a]", "a]", 1},
      {"^[]$", "", 0}, /* an empty class matches nothing */
      {"^[]", "a", 0},
      {"^[^]$", "\n", 1}, /* its complement, anything */
      {"a}", "a}", 1},
      {"^(a|ab)(c|bcd)(d*)$", "abcd", 1},
      {"^(a*)*$", "aaaa", 1},
      {"^(a*)+b$", "aaaa", 0},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    ck_assert_msg(
        re_match(cases[i].pattern, cases[i].subject) == cases[i].match,
        "case %zu: /%s/ on \"%s\"", i, cases[i].pattern, cases[i].subject);
}
END_TEST

START_TEST(regex_refused) {
  static const struct {
    const char *pattern, *why;
  } bad[] = {
      {"(a)\\1", "backreferences (\\1 to \\9) are not supported"},
      {"(?<n>a)\\k<n>", "backreferences (\\k<name>)"},
      {"a(?=b)", "lookahead and lookbehind are not supported"},
      {"a(?!b)", "lookahead"},
      {"(?<=a)b", "lookahead"},
      {"(?<!a)b", "lookahead"},
      {"(?i)a", "inline flags"},
      {"\\p{L}", "Unicode property escapes"},
      {"\\P{L}", "Unicode property escapes"},
      {"\\a", "unknown escape sequence"},
      {"\\z", "unknown escape sequence"},
      {"\\012", "octal escapes"},
      {"a{", "a '{' that does not start a quantifier"},
      {"{1}", "a '{' that does not start a quantifier"},
      {"a{1,2", "a '{'"},
      {"a{3,2}", "m < n"},
      {"a{1001}", "above 1000"},
      {"*a", "nothing to repeat"},
      {"a**", "nothing to repeat"},
      {"^*", "an assertion cannot be repeated"},
      {"(a", "a group is not closed"},
      {"a)", "unbalanced ')'"},
      {"[a", "a character class is not closed"},
      {"[z-a]", "out of order"},
      {"[\\d-z]", "a class escape cannot bound a range"},
      {"[[:alpha:]]", "POSIX bracket expressions"},
      {"\\", "lone backslash"},
      {"\\x4", "\\x must be followed by two hex digits"},
      {"\\u12", "\\u must be followed"},
      {"\\c1", "\\c must be followed by a letter"},
      {"(a{1000}){1000}", "the pattern is too complex"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp__regex *re = NULL;
    char why[200];
    int rc = mcp__regex_compile(bad[i].pattern, strlen(bad[i].pattern), 0, &re,
                                why, sizeof why);
    ck_assert_msg(rc == MCP_EINVAL, "case %zu: /%s/ accepted", i,
                  bad[i].pattern);
    ck_assert_ptr_null(re);
    ck_assert_msg(strstr(why, bad[i].why) != NULL, "case %zu: \"%s\" lacks %s",
                  i, why, bad[i].why);
  }
  /* Nesting has a limit too. */
  char deep[400];
  memset(deep, '(', 200);
  memset(deep + 200, ')', 199);
  deep[399] = '\0';
  mcp__regex *re = NULL;
  char why[200];
  ck_assert_int_eq(
      mcp__regex_compile(deep, strlen(deep), 0, &re, why, sizeof why),
      MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(why, "nested too deeply"));
}
END_TEST

START_TEST(regex_linear_time) {
  /* Patterns that take exponential time in backtracking engines take a
   * number of steps proportional to the subject here. */
  static const char *const evil[] = {"^(a+)+$", "^(a|a)*$", "^(a|aa)*c$",
                                     "(x+x+)+y", "^(\\w+\\s?)*$"};
  size_t n = 20000;
  char *subject = malloc(n + 2);
  memset(subject, 'a', n);
  subject[n] = '!';
  subject[n + 1] = '\0';
  for (size_t i = 0; i < TU_COUNT(evil); i++) {
    mcp__regex *re;
    char why[160];
    ck_assert_int_eq(
        mcp__regex_compile(evil[i], strlen(evil[i]), 0, &re, why, sizeof why),
        0);
    void *scratch = malloc(mcp__regex_scratch_size(re));
    unsigned long steps = 0;
    int hit = mcp__regex_search(re, subject, n + 1, scratch, &steps);
    ck_assert_int_eq(hit, 0);
    /* Linear: the cost is counted in steps, not timed (tests/bench). */
    ck_assert_msg(steps < 100 * (n + 1), "/%s/: %lu steps", evil[i], steps);
    free(scratch);
    mcp__regex_free(re);
  }
  free(subject);
}
END_TEST

/* ---- limits -------------------------------------------------------------- */

START_TEST(limit_subschemas) {
  mcp__json_doc doc = parse("{\"properties\":{\"a\":{},\"b\":{},\"c\":{}}}");
  mcp__schema *s = NULL;
  mcp__schema_options opt = {.max_subschemas = 3};
  ck_assert_int_eq(mcp__schema_compile(doc.root, &opt, &s, msg, sizeof msg),
                   MCP_EINVAL);
  ck_assert_str_eq(msg, "at /properties/c: the schema has more than 3 "
                        "subschemas");
  opt.max_subschemas = 4;
  ck_assert_int_eq(mcp__schema_compile(doc.root, &opt, &s, msg, sizeof msg), 0);
  mcp__schema_free(s);
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(limit_schema_depth) {
  /* Built with cJSON directly: the strict parser stops at 64 levels. */
  cJSON *root = cJSON_CreateObject(), *cur = root;
  for (int i = 0; i < 200; i++) {
    cJSON *next = cJSON_CreateObject();
    cJSON_AddItemToObject(cur, "not", next);
    cur = next;
  }
  mcp__schema *s = NULL;
  ck_assert_int_eq(mcp__schema_compile(root, NULL, &s, msg, sizeof msg),
                   MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "subschemas are nested more than 128"));
  cJSON_Delete(root);
}
END_TEST

START_TEST(limit_steps) {
  mcp__json_doc doc = parse("{\"items\":{\"type\":\"integer\"}}");
  mcp__schema *s;
  mcp__schema_options opt = {.max_steps = 100};
  ck_assert_int_eq(mcp__schema_compile(doc.root, &opt, &s, msg, sizeof msg), 0);
  char inst[2048];
  size_t n = 0;
  n += (size_t)snprintf(inst, sizeof inst, "[0");
  for (int i = 1; i < 200; i++)
    n += (size_t)snprintf(inst + n, sizeof inst - n, ",%d", i);
  snprintf(inst + n, sizeof inst - n, "]");
  mcp__json_doc id = parse(inst);
  ck_assert_int_eq(
      mcp__schema_validate(s, id.root, "Invalid arguments", msg, sizeof msg),
      MCP_ELIMIT);
  ck_assert_str_eq(msg, "Invalid arguments: the value is too large to check "
                        "against the schema (more than 100 validation "
                        "steps).");
  mcp__json_doc_free(&id);
  id = parse("[1,2,3]");
  ck_assert_int_eq(mcp__schema_validate(s, id.root, "x", msg, sizeof msg), 0);
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(limit_instance_depth) {
  /* A recursive schema and an instance nested deeper than any parser here
   * would allow: validation stops, it does not overflow the stack. */
  mcp__json_doc doc = parse("{\"items\":{\"$ref\":\"#\"}}");
  mcp__schema *s;
  ck_assert_int_eq(mcp__schema_compile(doc.root, NULL, &s, msg, sizeof msg), 0);
  cJSON *root = cJSON_CreateArray(), *cur = root;
  for (int i = 0; i < 100000; i++) {
    cJSON *next = cJSON_CreateArray();
    cJSON_AddItemToArray(cur, next);
    cur = next;
  }
  ck_assert_int_eq(mcp__schema_validate(s, root, "v", msg, sizeof msg),
                   MCP_ELIMIT);
  ck_assert_ptr_nonnull(strstr(msg, "nested too deeply"));
  /* Deep equality (const, enum, uniqueItems) is bounded the same way. */
  mcp__json_doc cd = parse("{\"uniqueItems\":true}");
  mcp__schema *u;
  ck_assert_int_eq(mcp__schema_compile(cd.root, NULL, &u, msg, sizeof msg), 0);
  cJSON *pair = cJSON_CreateArray();
  cJSON_AddItemReferenceToArray(pair, root);
  cJSON_AddItemReferenceToArray(pair, root);
  ck_assert_int_eq(mcp__schema_validate(u, pair, "v", msg, sizeof msg),
                   MCP_ELIMIT);
  cJSON_Delete(pair);
  mcp__schema_free(u);
  mcp__json_doc_free(&cd);
  /* Iterative delete: cJSON_Delete recurses. */
  while (root->child) {
    cJSON *c = root->child;
    cJSON *inner = c->child;
    c->child = NULL;
    cJSON_Delete(cJSON_DetachItemFromArray(root, 0));
    if (inner)
      cJSON_AddItemToArray(root, inner);
  }
  cJSON_Delete(root);
  mcp__schema_free(s);
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(limit_pathological_schema) {
  /* Alternatives at every level over a wide instance: the matching branch
   * comes last, so every cell costs three tries. Bounded by steps. */
  const char *schema = "{'items':{'items':{'anyOf':[{'items':{'type':'null'}},"
                       "{'items':{'type':'boolean'}},{'items':{'type':"
                       "'integer'}}]}}}";
  cJSON *root = cJSON_CreateArray();
  for (int i = 0; i < 100; i++) {
    cJSON *row = cJSON_CreateArray();
    for (int j = 0; j < 100; j++) {
      cJSON *cell = cJSON_CreateArray();
      for (int k = 0; k < 20; k++)
        cJSON_AddItemToArray(cell, cJSON_CreateNumber(k));
      cJSON_AddItemToArray(row, cell);
    }
    cJSON_AddItemToArray(root, row);
  }
  mcp__json_doc sd = parse(q(schema));
  const unsigned long limits[] = {0, 20000};
  for (int i = 0; i < 2; i++) {
    mcp__schema_options opt = {.max_steps = limits[i]};
    mcp__schema *s;
    ck_assert_int_eq(mcp__schema_compile(sd.root, &opt, &s, msg, sizeof msg),
                     0);
    int rc = mcp__schema_validate(s, root, "v", msg, sizeof msg);
    ck_assert_msg(rc == (i == 0 ? 0 : MCP_ELIMIT), "rc %d: %s", rc, msg);
    mcp__schema_free(s);
  }
  cJSON_Delete(root);
  mcp__json_doc_free(&sd);
}
END_TEST

/* ---- caller-supplied documents ------------------------------------------- */

START_TEST(documents) {
  mcp__json_doc shared = parse(q("{'$defs':{'id':{'type':'string',"
                                 "'pattern':'^[a-z]+$'}},'type':'object'}"));
  mcp__json_doc schema =
      parse(q("{'properties':{'id':{'$ref':'https://example.com/"
              "common.json#/$defs/id'}}}"));
  mcp__schema_doc docs[] = {{"https://example.com/common.json", shared.root}};
  mcp__schema_options opt = {.docs = docs, .ndocs = 1};
  mcp__schema *s;
  ck_assert_int_eq(mcp__schema_compile(schema.root, &opt, &s, msg, sizeof msg),
                   0);
  mcp__json_doc id = parse(q("{'id':'Abc'}"));
  ck_assert_int_eq(mcp__schema_validate(s, id.root, "v", msg, sizeof msg),
                   MCP_EINVAL);
  ck_assert_str_eq(msg, "v at /id: pattern: must match the regular "
                        "expression ^[a-z]+$.");
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  /* Without the document the reference is refused: nothing is fetched. */
  ck_assert_int_eq(mcp__schema_compile(schema.root, NULL, &s, msg, sizeof msg),
                   MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "never fetches one"));
  /* Errors inside a supplied document say where. */
  mcp__json_doc bad = parse(q("{'$defs':{'id':{'type':'nope'}}}"));
  docs[0].json = bad.root;
  ck_assert_int_eq(mcp__schema_compile(schema.root, &opt, &s, msg, sizeof msg),
                   MCP_EINVAL);
  ck_assert_str_eq(msg, "at https://example.com/common.json#/$defs/id/type: "
                        "\"nope\" is not a JSON Schema type (null, boolean, "
                        "object, array, number, string, integer)");
  mcp__json_doc_free(&bad);
  mcp__json_doc_free(&schema);
  mcp__json_doc_free(&shared);
}
END_TEST

/* ---- threads ------------------------------------------------------------- */

typedef struct worker {
  const mcp__schema *s;
  const cJSON *good, *bad;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  char m[256];
  for (int i = 0; i < 2000; i++) {
    if (mcp__schema_validate(w->s, w->good, "v", m, sizeof m) != 0)
      w->failures++;
    if (mcp__schema_validate(w->s, w->bad, "v", m, sizeof m) != MCP_EINVAL ||
        strcmp(m, "v at /tags/1: pattern: must match the regular expression "
                  "^[a-z]+$.") != 0)
      w->failures++;
  }
  return NULL;
}

START_TEST(threads_share_a_schema) {
  mcp__schema *s;
  mcp__json_doc sd;
  ck_assert_int_eq(
      compile("{'properties':{'tags':{'items':{'pattern':'^[a-z]+$'}}},"
              "'unevaluatedProperties':false}",
              0, &s, &sd),
      0);
  mcp__json_doc good = parse(q("{'tags':['a','b']}"));
  mcp__json_doc bad = parse(q("{'tags':['a','B']}"));
  pthread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){s, good.root, bad.root, 0};
    ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].failures, 0);
  }
  mcp__json_doc_free(&good);
  mcp__json_doc_free(&bad);
  mcp__schema_free(s);
  mcp__json_doc_free(&sd);
}
END_TEST

/* ---- allocation failure -------------------------------------------------- */

/* A schema that exercises every allocation of the compiler. */
static const char *const rich_schema =
    "{'$id':'https://example.com/rich','$schema':"
    "'https://json-schema.org/draft/2020-12/schema','type':'object',"
    "'$defs':{'pos':{'$anchor':'pos','type':'integer','minimum':1},"
    "'node':{'$id':'node','$dynamicAnchor':'n','properties':{'kids':{"
    "'items':{'$dynamicRef':'#n'}}}}},"
    "'properties':{'a':{'$ref':'#pos'},'b':{'pattern':'^[a-z]{2,5}$'},"
    "'c':{'enum':[1,2,3,4,5,6,7,8,9,10]},'d':{'$ref':'node'},"
    "'e':{'prefixItems':[{},{}],'contains':{'const':1},'uniqueItems':true},"
    "'f':{'anyOf':[{'type':'string'},{'type':'null'}]}},"
    "'patternProperties':{'^x-':{'type':'string'}},"
    "'required':['a'],'dependentRequired':{'a':['b']},"
    "'dependentSchemas':{'c':{'required':['d']}},"
    "'propertyNames':{'maxLength':20},'unevaluatedProperties':false}";

START_TEST(allocation_failure_compile) {
  mcp__json_doc doc = parse(q(rich_schema));
  mcp__schema *s = NULL;
  int rc = -1;
  long n;
  for (n = 1; n < 10000; n++) {
    tu_alloc_install(n);
    mcp__schema *before = (mcp__schema *)&before;
    s = before;
    rc = mcp__schema_compile(doc.root, NULL, &s, msg, sizeof msg);
    if (rc == 0)
      break;
    ck_assert_msg(rc == MCP_ENOMEM, "allocation %ld: rc %d (%s)", n, rc, msg);
    ck_assert_ptr_eq(s, before);
    ck_assert_str_eq(msg, "out of memory");
    tu_assert_no_leak(n);
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(n > 20, "only %ld allocations", n);
  mcp__schema_free(s);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(allocation_failure_validate) {
  /* Validation allocates only past its stack scratch: large objects with
   * unevaluatedProperties, long uniqueItems arrays, big patterns. */
  char schema[8192], inst[32768];
  size_t sn = (size_t)snprintf(schema, sizeof schema,
                               "{'properties':{'p':{'pattern':'");
  for (int i = 0; i < 200; i++)
    sn += (size_t)snprintf(schema + sn, sizeof schema - sn, "a?");
  snprintf(schema + sn, sizeof schema - sn,
           "b'},'u':{'uniqueItems':true}},'unevaluatedProperties':false,"
           "'allOf':[{'additionalProperties':true}]}");
  size_t n = (size_t)snprintf(inst, sizeof inst, "{'p':'aab','u':[");
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(inst + n, sizeof inst - n, "%s%d", i ? "," : "", i);
  n += (size_t)snprintf(inst + n, sizeof inst - n, "]");
  for (int i = 0; i < 300; i++)
    n += (size_t)snprintf(inst + n, sizeof inst - n, ",'k%d':%d", i, i);
  snprintf(inst + n, sizeof inst - n, "}");
  mcp__schema *s;
  mcp__json_doc sd;
  ck_assert_int_eq(compile(schema, 0, &s, &sd), 0);
  mcp__json_doc id = parse(q(inst));
  int rc = -1;
  long k;
  for (k = 1; k < 1000; k++) {
    tu_alloc_install(k);
    rc = mcp__schema_validate(s, id.root, "v", msg, sizeof msg);
    if (tu_alloc.failures == 0)
      break;
    ck_assert_msg(rc == MCP_ENOMEM, "allocation %ld: rc %d (%s)", k, rc, msg);
    ck_assert_str_eq(msg, "v: out of memory while validating");
    tu_assert_no_leak(k);
  }
  tu_alloc_remove();
  ck_assert_msg(k > 1, "validation never allocated");
  ck_assert_msg(rc == 0, "%s", msg);
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  mcp__json_doc_free(&sd);
}
END_TEST

START_TEST(small_validation_allocates_nothing) {
  mcp__schema *s;
  mcp__json_doc sd;
  ck_assert_int_eq(compile(rich_schema, 0, &s, &sd), 0);
  mcp__json_doc id = parse(q("{'a':3,'b':'abc','c':4,'d':{'kids':[{}]},"
                             "'e':[1,2,3],'f':null,'x-y':'z'}"));
  tu_alloc_install(1); /* the first allocation would fail */
  ck_assert_msg(mcp__schema_validate(s, id.root, "v", msg, sizeof msg) == 0,
                "%s", msg);
  ck_assert_int_eq(tu_alloc.failures, 0);
  tu_alloc_remove();
  mcp__json_doc_free(&id);
  mcp__schema_free(s);
  mcp__json_doc_free(&sd);
}
END_TEST

/* ---- flat schemas --------------------------------------------------------
 * An object of typed members is settled by one walk (s->flat) unless the
 * instance may fail; eval decides and explains the rest. Both must give
 * every instance the same answer and the same message. */

/* Validates inst against s with and without the walk; both must agree. */
static int flat_and_eval_agree(mcp__schema *s, const cJSON *inst) {
  char walk[1024], full[1024];
  ck_assert(s->flat);
  int rw =
      mcp__schema_validate(s, inst, "Invalid arguments", walk, sizeof walk);
  s->flat = 0;
  int rf =
      mcp__schema_validate(s, inst, "Invalid arguments", full, sizeof full);
  s->flat = 1;
  char *text = cJSON_PrintUnformatted(inst);
  ck_assert_msg(rw == rf && strcmp(walk, full) == 0,
                "%s: %d (%s) with the walk, %d (%s) without", text, rw, walk,
                rf, full);
  cJSON_free(text);
  return rw;
}

START_TEST(flat_schemas) {
  static const char *const flat[] = {
      "{'type':'object','properties':{'text':{'type':'string'}},"
      "'required':['text']}",
      "{'type':'object','properties':{'a':{'type':'integer'},"
      "'b':{'type':['string','null']},'c':{'type':'number'},"
      "'d':{'type':'boolean','description':'an annotation'}},"
      "'required':['a','d'],'additionalProperties':false}",
      "{'properties':{'a':true,'b':false,'c':{}},"
      "'additionalProperties':{'type':'array'},'minProperties':1,"
      "'maxProperties':3}",
      "{'type':['object','string'],'required':['b','c']}",
  };
  static const char *const values[] = {"null", "true", "1",  "1.0",
                                       "1.5",  "'s'",  "[]", "{}"};
  static const char *const keys[] = {"a", "b", "c", "d", "text"};
  int valid = 0, invalid = 0;
  for (size_t i = 0; i < TU_COUNT(flat); i++) {
    mcp__schema *s;
    mcp__json_doc sd;
    ck_assert_int_eq(compile(flat[i], 0, &s, &sd), 0);
    ck_assert_msg(s->flat, "%s is not flat", flat[i]);
    /* Every subset of the keys, each with a value of each kind in turn. */
    for (unsigned set = 0; set < 1u << TU_COUNT(keys); set++) {
      for (size_t v = 0; v < TU_COUNT(values); v++) {
        char inst[256] = "{";
        size_t n = 1, k = 0;
        for (size_t j = 0; j < TU_COUNT(keys); j++)
          if (set & (1u << j))
            n += (size_t)snprintf(inst + n, sizeof inst - n, "%s'%s':%s",
                                  k++ ? "," : "", keys[j],
                                  values[(v + j) % TU_COUNT(values)]);
        snprintf(inst + n, sizeof inst - n, "}");
        mcp__json_doc id = parse(q(inst));
        if (flat_and_eval_agree(s, id.root) == 0)
          valid++;
        else
          invalid++;
        mcp__json_doc_free(&id);
      }
    }
    /* Not an object at all. */
    mcp__json_doc id = parse("[1]");
    flat_and_eval_agree(s, id.root);
    mcp__json_doc_free(&id);
    mcp__schema_free(s);
    mcp__json_doc_free(&sd);
  }
  ck_assert_int_gt(valid, 50);
  ck_assert_int_gt(invalid, 50);

  /* Anything more than types per member is for eval alone. */
  static const char *const not_flat[] = {
      "{'properties':{'a':{'type':'string','minLength':1}}}",
      "{'properties':{'a':{'enum':[1]}}}",
      "{'properties':{'a':{'$ref':'#'}}}",
      "{'patternProperties':{'^a':{}}}",
      "{'properties':{'a':{'type':'object','required':['b']}}}",
      "{'type':'string'}",
      "{'required':['a'],'allOf':[{}]}",
      "{'dependentRequired':{'a':['b']}}",
      "{'propertyNames':{'maxLength':3}}",
      "{'unevaluatedProperties':false}",
      "true",
  };
  for (size_t i = 0; i < TU_COUNT(not_flat); i++) {
    mcp__schema *s;
    mcp__json_doc sd;
    ck_assert_int_eq(compile(not_flat[i], 0, &s, &sd), 0);
    ck_assert_msg(!s->flat, "%s is flat", not_flat[i]);
    mcp__schema_free(s);
    mcp__json_doc_free(&sd);
  }
}
END_TEST

/* The walk counts steps as eval does: a schema's limit ends both at the
 * same member. */
START_TEST(flat_schemas_count_steps) {
  static const struct {
    const char *schema;
    unsigned long steps; /* the root, each member, each member's type */
  } cases[] = {
      {"{'properties':{'a':{'type':'integer'}},"
       "'additionalProperties':{'type':'integer'}}",
       2},
      {"{'properties':{'a':{'type':'integer'}}}", 1},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    for (int members = 1; members <= 6; members++) {
      mcp__json_doc sd = parse(q(cases[i].schema));
      mcp__schema *s;
      /* Exactly enough steps for 4 members. */
      mcp__schema_options opt = {.max_steps = 1 + 4 * cases[i].steps};
      ck_assert_int_eq(mcp__schema_compile(sd.root, &opt, &s, msg, sizeof msg),
                       0);
      char inst[256] = "{";
      size_t n = 1;
      for (int m = 0; m < members; m++)
        n += (size_t)snprintf(inst + n, sizeof inst - n, "%s\"m%d\":%d",
                              m ? "," : "", m, m);
      snprintf(inst + n, sizeof inst - n, "}");
      mcp__json_doc id = parse(inst);
      int rc = flat_and_eval_agree(s, id.root);
      ck_assert_int_eq(rc, members <= 4 ? 0 : MCP_ELIMIT);
      mcp__json_doc_free(&id);
      mcp__schema_free(s);
      mcp__json_doc_free(&sd);
    }
  }
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static Suite *schema_suite(void) {
  Suite *s = suite_create("schema");
  TCase *t = tcase_create("compile");
  tcase_add_test(t, compile_refuses_invalid_schemas);
  tcase_add_test(t, compile_accepts);
  tcase_add_test(t, documents);
  suite_add_tcase(s, t);

  t = tcase_create("keywords");
  tcase_add_test(t, keyword_type);
  tcase_add_test(t, keyword_numbers_exact);
  tcase_add_test(t, keyword_strings);
  tcase_add_test(t, keyword_large_enum);
  tcase_add_test(t, keyword_arrays);
  tcase_add_test(t, keyword_unique_large);
  tcase_add_test(t, keyword_objects);
  tcase_add_test(t, keyword_large_object);
  tcase_add_test(t, keyword_combinators);
  tcase_add_test(t, keyword_unevaluated);
  tcase_add_test(t, keyword_refs);
  tcase_add_test(t, keyword_dynamic_refs);
  tcase_add_test(t, formats);
  suite_add_tcase(s, t);

  t = tcase_create("messages");
  tcase_add_test(t, messages);
  tcase_add_test(t, messages_are_bounded_utf8);
  suite_add_tcase(s, t);

  t = tcase_create("regex");
  tcase_add_test(t, regex_dialect);
  tcase_add_test(t, regex_refused);
  suite_add_tcase(s, t);

  /* Large inputs and every allocation failed in turn run long under
   * valgrind. */
  t = tcase_create("heavy");
  tcase_set_timeout(t, 240);
  tcase_add_test(t, regex_linear_time);
  tcase_add_test(t, limit_subschemas);
  tcase_add_test(t, limit_schema_depth);
  tcase_add_test(t, limit_steps);
  tcase_add_test(t, limit_instance_depth);
  tcase_add_test(t, limit_pathological_schema);
  tcase_add_test(t, threads_share_a_schema);
  tcase_add_test(t, allocation_failure_compile);
  tcase_add_test(t, allocation_failure_validate);
  tcase_add_test(t, small_validation_allocates_nothing);
  tcase_add_test(t, flat_schemas);
  tcase_add_test(t, flat_schemas_count_steps);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(schema_suite()); }
