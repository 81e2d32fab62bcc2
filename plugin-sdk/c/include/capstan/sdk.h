/* The Capstan plugin SDK for C: typed admission requests and responses
 * (kube's Forbidden/NotFound wording), JSON Patch built from old and new
 * objects, the host imports, and the export glue for every world of
 * plugin-sdk/wit/capstan.wit. Everything a call allocates lives in the
 * call's arena (capstan/json.h) and is freed after the call. */
#ifndef CAPSTAN_SDK_H
#define CAPSTAN_SDK_H

#include "capstan/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host imports (capstan:plugin/host@0.1.0) ----------------------- */

/* The WIT `level` enum, in its order. */
typedef enum {
  CAP_LOG_TRACE,
  CAP_LOG_DEBUG,
  CAP_LOG_INFO,
  CAP_LOG_WARN,
  CAP_LOG_ERROR
} cap_level;

/* A line in the server's log, tagged with the plugin's name (printf-style). */
void cap_log(cap_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The plugin's configuration as JSON text ("{}" when none). */
const char *cap_config_text(void);
/* The configuration parsed; NULL with `invalid plugin configuration: ...`
 * in err when it is not JSON. */
const cap_json *cap_config(cap_error *err);
/* One object from the server's store. Returns false with err set when the
 * store failed; true otherwise, with *out NULL when there is no such
 * object. `ns` NULL for cluster-scoped resources. */
bool cap_get_object(const char *api_version, const char *resource,
                    const char *ns, const char *name, const cap_json **out,
                    cap_error *err);
/* A List of objects (`items`); NULL with err set when the store failed.
 * ns, label_selector and field_selector may be NULL. */
const cap_json *cap_list_objects(const char *api_version, const char *resource,
                                 const char *ns, const char *label_selector,
                                 const char *field_selector, cap_error *err);
/* A token that changes whenever an object of the resource changes. */
const char *cap_watermark(const char *api_version, const char *resource,
                          cap_error *err);

/* ---- objects ------------------------------------------------------- */

const char *cap_object_name(const cap_json *obj);      /* "" when none */
const char *cap_object_namespace(const cap_json *obj); /* "" when none */
/* metadata.labels[key] / metadata.annotations[key] when a string, else NULL. */
const char *cap_object_label(const cap_json *obj, const char *key);
const char *cap_object_annotation(const cap_json *obj, const char *key);

/* ---- admission requests -------------------------------------------- */

typedef struct {
  const char *group, *version, *resource;
} cap_gvr;

typedef struct {
  const char *group, *version, *kind;
} cap_gvk;

/* `request` of an AdmissionReview (admission.k8s.io/v1). Strings are ""
 * when absent; objects NULL when absent. */
typedef struct {
  const char *uid;
  cap_gvk kind;
  cap_gvr resource;
  const char *sub_resource;
  const char *name;
  const char *ns;
  const char *operation; /* "CREATE", "UPDATE", "DELETE", "CONNECT" */
  const cap_json *user_info;
  const cap_json *object;
  const cap_json *old_object;
  const cap_json *options;
  bool dry_run;
  const cap_json *json; /* the whole request */
} cap_admission_request;

/* Reads `request` out of an AdmissionReview. */
cap_admission_request *cap_admission_request_from(const cap_json *review,
                                                  cap_error *err);
/* CREATE or UPDATE. */
bool cap_is_write(const cap_admission_request *req);
/* The request is about group/resource itself (not a subresource). */
bool cap_is_resource(const cap_admission_request *req, const char *group,
                     const char *resource);
/* The object being created or updated, when the request writes a resource
 * itself (not a subresource); NULL otherwise. */
const cap_json *cap_written_object(const cap_admission_request *req);
/* The same, only for group/resource. */
const cap_json *cap_written_object_of(const cap_admission_request *req,
                                      const char *group, const char *resource);
/* `<resource>.<group>`, or `<resource>` for the core group. */
const char *cap_group_resource(const char *group, const char *resource);
/* The name kube's admission errors use: the object's name, else its
 * generateName, else the request's name, else "Unknown". */
const char *cap_request_object_name(const cap_admission_request *req);

/* ---- admission responses ------------------------------------------- */

typedef struct {
  bool allowed;
  cap_json *status;            /* metav1.Status, NULL when allowed */
  cap_json *patch;             /* JSON Patch operations (array) */
  cap_json *warnings;          /* array of strings */
  cap_json *audit_annotations; /* object of strings */
} cap_admission_response;

cap_admission_response *cap_allow(void);
/* Rejects with a Failure status (code e.g. 403, reason e.g. "Forbidden"). */
cap_admission_response *cap_deny(int code, const char *reason,
                                 const char *message);
/* kube's admission.NewForbidden: 403 Forbidden,
 * `<resource>[.<group>] "<name>" is forbidden: <message>`, details
 * {name, group, kind = resource}. printf-style message. */
cap_admission_response *cap_forbidden(const cap_admission_request *req,
                                      const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* kube's apierrors.NewNotFound: 404 NotFound, `<resource> "<name>" not found`. */
cap_admission_response *cap_not_found(const char *group, const char *resource,
                                      const char *name);
/* Appends JSON Patch operations (an array, e.g. from cap_patch_* or cap_diff). */
cap_admission_response *cap_with_patch(cap_admission_response *r,
                                       const cap_json *ops);
/* Appends the operations that turn `before` into `after` (cap_diff). */
cap_admission_response *cap_with_changes(cap_admission_response *r,
                                         const cap_json *before,
                                         const cap_json *after);
cap_admission_response *cap_with_warning(cap_admission_response *r,
                                         const char *warning);
cap_admission_response *cap_with_audit_annotation(cap_admission_response *r,
                                                  const char *key,
                                                  const char *value);
/* Adds {reason: type, message, field} to status.details.causes (denials). */
cap_admission_response *cap_with_cause(cap_admission_response *r,
                                       const char *type, const char *field,
                                       const char *message);
/* status.message ("" when none) and status.code (0 when none). */
const char *cap_response_message(const cap_admission_response *r);
int cap_response_code(const cap_admission_response *r);
/* The wire form: {uid, allowed, status, patch (base64), patchType, ...}. */
cap_json *cap_response_json(const cap_admission_response *r, const char *uid);

/* ---- JSON Patch (RFC 6902) ------------------------------------------ */

/* A JSON pointer from unescaped segments, NULL-terminated:
 * cap_pointer("metadata", "labels", "a/b", NULL) → "/metadata/labels/a~1b". */
const char *cap_pointer(const char *first, ...) __attribute__((sentinel));
/* Appends an operation to `ops` (an array; cap_json_array() to start). */
cap_json *cap_patch_add(cap_json *ops, const char *pointer, const cap_json *value);
cap_json *cap_patch_replace(cap_json *ops, const char *pointer,
                            const cap_json *value);
cap_json *cap_patch_remove(cap_json *ops, const char *pointer);
/* The operations that turn `before` into `after`: objects key by key
 * (remove, add, replace), arrays of equal length element by element,
 * anything else that differs replaced whole. Mutate a cap_json_clone of
 * the request's object and diff it against the original. */
cap_json *cap_diff(const cap_json *before, const cap_json *after);
/* Applies operations (add, replace, remove) to a copy of `doc`; NULL with
 * err set when one does not apply. */
cap_json *cap_patch_apply(const cap_json *doc, const cap_json *ops,
                          cap_error *err);

/* ---- plugins --------------------------------------------------------- */

/* An admission policy: a response, or NULL with err set for "could not
 * decide" (the server applies the plugin's failurePolicy). */
typedef cap_admission_response *(*cap_admission_fn)(
    const cap_admission_request *req, cap_error *err);
/* The other worlds: the parsed input, the whole answer (e.g. the
 * TokenReview with status set), or NULL with err set. */
typedef cap_json *(*cap_json_fn)(const cap_json *input, cap_error *err);

/* The world's function, as the CAP_*_PLUGIN macros define it (tests call
 * it directly, or through cap_run_admission / cap_run_json). */
cap_admission_response *cap_plugin_review(const cap_admission_request *req,
                                          cap_error *err);
cap_json *cap_plugin_authenticate(const cap_json *in, cap_error *err);
cap_json *cap_plugin_authorize(const cap_json *in, cap_error *err);
cap_json *cap_plugin_call(const cap_json *in, cap_error *err);
cap_json *cap_plugin_convert(const cap_json *in, cap_error *err);

/* Declares the plugin's function for its world (one per plugin). */
#define CAP_ADMISSION_PLUGIN(fn)                                              \
  cap_admission_response *cap_plugin_review(const cap_admission_request *r,   \
                                            cap_error *e) {                   \
    return fn(r, e);                                                          \
  }
#define CAP_AUTHENTICATOR_PLUGIN(fn) CAP_JSON_PLUGIN_(cap_plugin_authenticate, fn)
#define CAP_AUTHORIZER_PLUGIN(fn) CAP_JSON_PLUGIN_(cap_plugin_authorize, fn)
#define CAP_STRATEGY_PLUGIN(fn) CAP_JSON_PLUGIN_(cap_plugin_call, fn)
#define CAP_CONVERTER_PLUGIN(fn) CAP_JSON_PLUGIN_(cap_plugin_convert, fn)
#define CAP_JSON_PLUGIN_(name, fn)                                            \
  cap_json *name(const cap_json *in, cap_error *e) { return fn(in, e); }

/* AdmissionReview JSON in, AdmissionReview JSON out: the dispatch the
 * component's `review` export runs (callable in tests). Sets
 * response.uid, echoes apiVersion. NULL with err set on failure. */
char *cap_run_admission(cap_admission_fn fn, const char *text, size_t len,
                        cap_error *err);
/* The same for the other worlds; `what` names the input in errors. */
char *cap_run_json(cap_json_fn fn, const char *what, const char *text,
                   size_t len, cap_error *err);

#ifdef __cplusplus
}
#endif
#endif
