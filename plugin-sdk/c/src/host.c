/* The host imports with C's idioms: printf-style logging, parsed JSON,
 * errors through cap_error. */
#include "capstan/sdk.h"
#include "host_raw.h"

void cap_log(cap_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *message = cap_vsprintf(fmt, ap);
  va_end(ap);
  cap_raw_log((int)level, message);
}

const char *cap_config_text(void) { return cap_raw_config(); }

const cap_json *cap_config(cap_error *err) {
  cap_error parse = {0};
  cap_json *cfg = cap_json_parse_str(cap_raw_config(), &parse);
  if (cfg == NULL)
    return cap_errorf(err, "invalid plugin configuration: %s", parse.message);
  return cfg;
}

/* The store's JSON answer parsed; an answer that is not JSON is an error. */
static cap_json *store_json(const char *what, const char *text, size_t len,
                            cap_error *err) {
  cap_error parse = {0};
  cap_json *v = cap_json_parse(text, len, &parse);
  if (v == NULL)
    return cap_errorf(err, "%s: %s", what, parse.message);
  return v;
}

bool cap_get_object(const char *api_version, const char *resource,
                    const char *ns, const char *name, const cap_json **out,
                    cap_error *err) {
  char *text = NULL, *failure = NULL;
  size_t len = 0;
  *out = NULL;
  if (!cap_raw_get_object(api_version, resource, ns, name, &text, &len,
                          &failure)) {
    cap_errorf(err, "%s", failure);
    return false;
  }
  if (text == NULL)
    return true;
  *out = store_json("get-object", text, len, err);
  return *out != NULL;
}

const cap_json *cap_list_objects(const char *api_version, const char *resource,
                                 const char *ns, const char *label_selector,
                                 const char *field_selector, cap_error *err) {
  char *text = NULL, *failure = NULL;
  size_t len = 0;
  if (!cap_raw_list_objects(api_version, resource, ns, label_selector,
                            field_selector, &text, &len, &failure))
    return cap_errorf(err, "%s", failure);
  return store_json("list-objects", text, len, err);
}

const char *cap_watermark(const char *api_version, const char *resource,
                          cap_error *err) {
  char *text = NULL, *failure = NULL;
  if (!cap_raw_watermark(api_version, resource, &text, &failure))
    return cap_errorf(err, "%s", failure);
  return text;
}
