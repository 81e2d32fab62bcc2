/* Admission policy `require-labels`: rejects creates and updates of
 * objects that lack any of the labels listed in its configuration,
 * `{"labels": ["team"]}`. Subresources (status, scale...) and deletes are
 * not checked. */
#include "capstan/sdk.h"

#include <string.h>

/* The configured labels (an array of strings, maybe empty); NULL with err
 * set when the configuration is not `{labels: string[]}`. */
static const cap_json *configured_labels(cap_error *err) {
  const cap_json *cfg = cap_config(err);
  if (cfg == NULL)
    return NULL;
  if (!cap_json_is(cfg, CAP_JSON_OBJECT))
    return cap_errorf(err, "invalid plugin configuration: expected an object");
  CAP_JSON_EACH(field, cfg) {
    if (strcmp(field->key, "labels") != 0)
      return cap_errorf(err,
                        "invalid plugin configuration: unknown field \"%s\", "
                        "expected `labels`",
                        field->key);
  }
  const cap_json *labels = cap_json_get(cfg, "labels");
  if (labels == NULL)
    return cap_json_array();
  bool strings = cap_json_is(labels, CAP_JSON_ARRAY);
  CAP_JSON_EACH(label, strings ? labels : NULL) {
    strings = strings && cap_json_is(label, CAP_JSON_STRING);
  }
  if (!strings)
    return cap_errorf(err, "invalid plugin configuration: `labels` must be a "
                           "list of strings");
  return labels;
}

static cap_admission_response *review(const cap_admission_request *req,
                                      cap_error *err) {
  const cap_json *obj = cap_written_object(req);
  if (obj == NULL)
    return cap_allow();
  const cap_json *labels = configured_labels(err);
  if (labels == NULL)
    return NULL;
  cap_json *missing = cap_json_array();
  cap_buf joined = {0};
  CAP_JSON_EACH(label, labels) {
    if (cap_object_label(obj, label->text) != NULL)
      continue;
    cap_buf_puts(&joined, missing->count ? ", " : "");
    cap_buf_puts(&joined, label->text);
    cap_json_append(missing, cap_json_str(label->text));
  }
  const char *list = cap_buf_finish(&joined);
  if (missing->count == 0)
    return cap_allow();
  cap_log(CAP_LOG_INFO, "rejecting %s: missing %s", cap_object_name(obj),
          cap_json_write(missing));
  return cap_forbidden(req, "missing required label(s): %s", list);
}

CAP_ADMISSION_PLUGIN(review)
