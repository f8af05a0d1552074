/* Argument checking against a tool's inputSchema.
 *
 * This is the single entry point the engine calls before a handler runs.
 * It covers "required", the "type" of each top-level property and
 * "additionalProperties": false, which is what a handler most needs to trust
 * its input; full JSON Schema 2020-12 replaces the inside of this file. */
#include <cjson/cJSON.h>
#include <string.h>

#include "internal.h"

static const char *type_of(const cJSON *v) {
  if (cJSON_IsString(v))
    return "string";
  if (cJSON_IsNumber(v))
    return mcp__json_integral(v, NULL, NULL) ? "integer" : "number";
  if (cJSON_IsBool(v))
    return "boolean";
  if (cJSON_IsObject(v))
    return "object";
  if (cJSON_IsArray(v))
    return "array";
  return "null";
}

/* Does instance v have JSON Schema type t? An integer is also a number. */
static int type_matches(const char *t, const cJSON *v) {
  const char *actual = type_of(v);
  if (strcmp(t, actual) == 0)
    return 1;
  return strcmp(t, "number") == 0 && strcmp(actual, "integer") == 0;
}

static int types_match(const cJSON *type, const cJSON *v) {
  if (cJSON_IsString(type))
    return type_matches(type->valuestring, v);
  if (cJSON_IsArray(type)) {
    for (const cJSON *t = type->child; t; t = t->next)
      if (cJSON_IsString(t) && type_matches(t->valuestring, v))
        return 1;
    return 0;
  }
  return 1; /* no usable "type": nothing to check */
}

int mcp__schema_check_args(const cJSON *schema, const cJSON *args, char *msg,
                           size_t msglen) {
  if (!cJSON_IsObject(args)) {
    mcp__fmt(msg, msglen, "Invalid arguments: expected an object.");
    return MCP_EINVAL;
  }
  const cJSON *required = cJSON_GetObjectItemCaseSensitive(schema, "required");
  for (const cJSON *r = cJSON_IsArray(required) ? required->child : NULL; r;
       r = r->next) {
    if (cJSON_IsString(r) &&
        !cJSON_GetObjectItemCaseSensitive(args, r->valuestring)) {
      mcp__fmt(msg, msglen,
               "Invalid arguments: missing required property \"%.100s\".",
               r->valuestring);
      return MCP_EINVAL;
    }
  }
  const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
  const cJSON *additional =
      cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
  for (const cJSON *a = args->child; a; a = a->next) {
    const cJSON *p = cJSON_IsObject(props)
                         ? cJSON_GetObjectItemCaseSensitive(props, a->string)
                         : NULL;
    if (p == NULL) {
      if (cJSON_IsFalse(additional)) {
        mcp__fmt(msg, msglen,
                 "Invalid arguments: unexpected property \"%.100s\"; this "
                 "tool accepts no other properties.",
                 a->string);
        return MCP_EINVAL;
      }
      continue;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
    if (!types_match(type, a)) {
      /* Name the accepted types, so the model can correct the call: "a
       * string", or for a type array "one of string, null". */
      char want[96] = "";
      if (cJSON_IsString(type)) {
        mcp__fmt(want, sizeof want, "%s %.64s",
                 type->valuestring[0] && strchr("aeiou", type->valuestring[0])
                     ? "an"
                     : "a",
                 type->valuestring);
      } else {
        static const char lead[] = "one of";
        mcp__fmt(want, sizeof want, "%s", lead);
        for (const cJSON *t = type->child; t; t = t->next) {
          size_t len = strlen(want);
          if (cJSON_IsString(t))
            mcp__fmt(want + len, sizeof want - len, "%s %.20s",
                     len > sizeof lead - 1 ? "," : "", t->valuestring);
        }
        if (strlen(want) == sizeof lead - 1)
          mcp__fmt(want, sizeof want, "one of the listed types");
      }
      mcp__fmt(msg, msglen,
               "Invalid arguments: property \"%.100s\" must be %s, not %s.",
               a->string, want, type_of(a));
      return MCP_EINVAL;
    }
  }
  return 0;
}
