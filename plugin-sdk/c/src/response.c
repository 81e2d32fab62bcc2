/* Admission responses: allow, deny with a metav1.Status worded as
 * kube-apiserver's admission.NewForbidden / apierrors.NewNotFound,
 * patches, warnings, audit annotations, and the wire form. */
#include "capstan/sdk.h"

#include <string.h>

static cap_admission_response *response(bool allowed) {
  cap_admission_response *r = cap_alloc(sizeof *r);
  r->allowed = allowed;
  r->patch = cap_json_array();
  r->warnings = cap_json_array();
  r->audit_annotations = cap_json_object();
  return r;
}

cap_admission_response *cap_allow(void) { return response(true); }

cap_admission_response *cap_deny(int code, const char *reason,
                                 const char *message) {
  cap_admission_response *r = response(false);
  r->status = cap_json_object();
  cap_json_set(r->status, "status", cap_json_str("Failure"));
  cap_json_set(r->status, "message", cap_json_str(message));
  cap_json_set(r->status, "reason", cap_json_str(reason));
  cap_json_set(r->status, "code", cap_json_int_new(code));
  return r;
}

static cap_admission_response *with_details(cap_admission_response *r,
                                            const char *name, const char *group,
                                            const char *kind) {
  cap_json *details = cap_json_object();
  cap_json_set(details, "name", cap_json_str(name));
  cap_json_set(details, "group", cap_json_str(group));
  cap_json_set(details, "kind", cap_json_str(kind));
  cap_json_set(r->status, "details", details);
  return r;
}

cap_admission_response *cap_forbidden(const cap_admission_request *req,
                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *message = cap_vsprintf(fmt, ap);
  va_end(ap);
  const char *name = cap_request_object_name(req);
  const char *text = cap_sprintf(
      "%s \"%s\" is forbidden: %s",
      cap_group_resource(req->resource.group, req->resource.resource), name,
      message);
  return with_details(cap_deny(403, "Forbidden", text), name,
                      req->resource.group, req->resource.resource);
}

cap_admission_response *cap_not_found(const char *group, const char *resource,
                                      const char *name) {
  const char *text = cap_sprintf(
      "%s \"%s\" not found", cap_group_resource(group, resource), name);
  return with_details(cap_deny(404, "NotFound", text), name, group, resource);
}

cap_admission_response *cap_with_patch(cap_admission_response *r,
                                       const cap_json *ops) {
  CAP_JSON_EACH(op, ops) { cap_json_append(r->patch, cap_json_clone(op)); }
  return r;
}

cap_admission_response *cap_with_changes(cap_admission_response *r,
                                         const cap_json *before,
                                         const cap_json *after) {
  return cap_with_patch(r, cap_diff(before, after));
}

cap_admission_response *cap_with_warning(cap_admission_response *r,
                                         const char *warning) {
  cap_json_append(r->warnings, cap_json_str(warning));
  return r;
}

cap_admission_response *cap_with_audit_annotation(cap_admission_response *r,
                                                  const char *key,
                                                  const char *value) {
  cap_json_set(r->audit_annotations, key, cap_json_str(value));
  return r;
}

cap_admission_response *cap_with_cause(cap_admission_response *r,
                                       const char *type, const char *field,
                                       const char *message) {
  if (r->status == NULL)
    return r;
  cap_json *details = cap_json_get(r->status, "details");
  if (details == NULL) {
    details = cap_json_object();
    cap_json_set(r->status, "details", details);
  }
  cap_json *causes = cap_json_get(details, "causes");
  if (causes == NULL) {
    causes = cap_json_array();
    cap_json_set(details, "causes", causes);
  }
  cap_json *cause = cap_json_object();
  cap_json_set(cause, "reason", cap_json_str(type));
  cap_json_set(cause, "message", cap_json_str(message));
  cap_json_set(cause, "field", cap_json_str(field));
  cap_json_append(causes, cause);
  return r;
}

const char *cap_response_message(const cap_admission_response *r) {
  return cap_json_string_or(cap_json_get(r->status, "message"), "");
}

int cap_response_code(const cap_admission_response *r) {
  long long code = 0;
  return cap_json_int(cap_json_get(r->status, "code"), &code) ? (int)code : 0;
}

static char *base64(const char *s, size_t len) {
  static const char abc[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = cap_alloc((len + 2) / 3 * 4 + 1), *o = out;
  for (size_t i = 0; i < len; i += 3) {
    unsigned n = (unsigned char)s[i] << 16;
    if (i + 1 < len)
      n |= (unsigned char)s[i + 1] << 8;
    if (i + 2 < len)
      n |= (unsigned char)s[i + 2];
    *o++ = abc[n >> 18];
    *o++ = abc[(n >> 12) & 63];
    *o++ = i + 1 < len ? abc[(n >> 6) & 63] : '=';
    *o++ = i + 2 < len ? abc[n & 63] : '=';
  }
  return out;
}

cap_json *cap_response_json(const cap_admission_response *r, const char *uid) {
  cap_json *out = cap_json_object();
  cap_json_set(out, "uid", cap_json_str(uid));
  cap_json_set(out, "allowed", cap_json_bool(r->allowed));
  if (r->status != NULL)
    cap_json_set(out, "status", cap_json_clone(r->status));
  if (r->patch->count > 0) {
    const char *ops = cap_json_write(r->patch);
    cap_json_set(out, "patch", cap_json_str(base64(ops, strlen(ops))));
    cap_json_set(out, "patchType", cap_json_str("JSONPatch"));
  }
  if (r->audit_annotations->count > 0)
    cap_json_set(out, "auditAnnotations", cap_json_clone(r->audit_annotations));
  if (r->warnings->count > 0)
    cap_json_set(out, "warnings", cap_json_clone(r->warnings));
  return out;
}
