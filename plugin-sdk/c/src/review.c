/* The request half of an AdmissionReview, and the JSON-in/JSON-out
 * dispatch of every world. */
#include "capstan/sdk.h"

#include <string.h>

static const char *str_at(const cap_json *v, const char *key) {
  return cap_json_string_or(cap_json_get(v, key), "");
}

/* A member that is an object or array; null and absent read as NULL. */
static const cap_json *obj_at(const cap_json *v, const char *key) {
  const cap_json *m = cap_json_get(v, key);
  return m == NULL || m->type == CAP_JSON_NULL ? NULL : m;
}

cap_admission_request *cap_admission_request_from(const cap_json *review,
                                                  cap_error *err) {
  const cap_json *r = cap_json_get(review, "request");
  if (!cap_json_is(r, CAP_JSON_OBJECT))
    return cap_errorf(err, "AdmissionReview has no request");
  cap_admission_request *req = cap_alloc(sizeof *req);
  const cap_json *kind = cap_json_get(r, "kind");
  const cap_json *resource = cap_json_get(r, "resource");
  req->uid = str_at(r, "uid");
  req->kind = (cap_gvk){str_at(kind, "group"), str_at(kind, "version"),
                        str_at(kind, "kind")};
  req->resource = (cap_gvr){str_at(resource, "group"),
                            str_at(resource, "version"),
                            str_at(resource, "resource")};
  req->sub_resource = str_at(r, "subResource");
  req->name = str_at(r, "name");
  req->ns = str_at(r, "namespace");
  req->operation = str_at(r, "operation");
  req->user_info = obj_at(r, "userInfo");
  req->object = obj_at(r, "object");
  req->old_object = obj_at(r, "oldObject");
  req->options = obj_at(r, "options");
  req->dry_run = cap_json_true(cap_json_get(r, "dryRun"));
  req->json = r;
  return req;
}

bool cap_is_write(const cap_admission_request *req) {
  return strcmp(req->operation, "CREATE") == 0 ||
         strcmp(req->operation, "UPDATE") == 0;
}

bool cap_is_resource(const cap_admission_request *req, const char *group,
                     const char *resource) {
  return strcmp(req->resource.group, group) == 0 &&
         strcmp(req->resource.resource, resource) == 0 &&
         req->sub_resource[0] == '\0';
}

const cap_json *cap_written_object(const cap_admission_request *req) {
  if (!cap_is_write(req) || req->sub_resource[0] != '\0')
    return NULL;
  return req->object;
}

const cap_json *cap_written_object_of(const cap_admission_request *req,
                                      const char *group, const char *resource) {
  return cap_is_resource(req, group, resource) ? cap_written_object(req)
                                               : NULL;
}

const char *cap_group_resource(const char *group, const char *resource) {
  return group[0] ? cap_sprintf("%s.%s", resource, group) : resource;
}

const char *cap_request_object_name(const cap_admission_request *req) {
  const char *keys[] = {"name", "generateName"};
  for (size_t i = 0; req->object != NULL && i < 2; i++) {
    const char *s =
        cap_json_string(cap_json_find(req->object, "metadata", keys[i], NULL));
    if (s != NULL && s[0] != '\0')
      return s;
  }
  return req->name[0] ? req->name : "Unknown";
}

static cap_json *parse_input(const char *what, const char *text, size_t len,
                             cap_error *err) {
  cap_error parse = {0};
  cap_json *v = cap_json_parse(text, len, &parse);
  if (v == NULL)
    return cap_errorf(err, "invalid %s: %s", what, parse.message);
  return v;
}

char *cap_run_admission(cap_admission_fn fn, const char *text, size_t len,
                        cap_error *err) {
  cap_json *review = parse_input("AdmissionReview", text, len, err);
  if (review == NULL)
    return NULL;
  cap_admission_request *req = cap_admission_request_from(review, err);
  if (req == NULL)
    return NULL;
  cap_error failure = {0};
  cap_admission_response *resp = fn(req, &failure);
  if (resp == NULL)
    return cap_errorf(err, "%s",
                      failure.message ? failure.message
                                      : "the plugin returned no response");
  cap_json *out = cap_json_object();
  cap_json_set(out, "apiVersion",
               cap_json_str(cap_json_string_or(
                   cap_json_get(review, "apiVersion"), "admission.k8s.io/v1")));
  cap_json_set(out, "kind", cap_json_str("AdmissionReview"));
  cap_json_set(out, "response", cap_response_json(resp, req->uid));
  return cap_json_write(out);
}

char *cap_run_json(cap_json_fn fn, const char *what, const char *text,
                   size_t len, cap_error *err) {
  cap_json *input = parse_input(what, text, len, err);
  if (input == NULL)
    return NULL;
  cap_error failure = {0};
  cap_json *answer = fn(input, &failure);
  if (answer == NULL)
    return cap_errorf(err, "%s",
                      failure.message ? failure.message
                                      : "the plugin returned no answer");
  return cap_json_write(answer);
}
