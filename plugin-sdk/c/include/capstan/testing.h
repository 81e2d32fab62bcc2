/* The fake host for unit tests, compiled natively (no Wasm): a
 * configuration, an object store, captured logs and failing reads, and
 * helpers to build requests and apply a response's patch. Link
 * src/testing.c instead of the component glue. */
#ifndef CAPSTAN_TESTING_H
#define CAPSTAN_TESTING_H

#include "capstan/sdk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Empties the store, the logs, the failure and the arena; config "{}". */
void cap_testing_reset(void);
/* The configuration text the plugin reads (need not be valid JSON). */
void cap_testing_set_config(const char *json);
/* Stores an object (JSON text) under its metadata.namespace/name; moves
 * the resource's watermark. Aborts on invalid JSON (a test bug). */
void cap_testing_put_object(const char *api_version, const char *resource,
                            const char *json);
/* Removes an object (ns "" for cluster-scoped ones). */
void cap_testing_remove_object(const char *api_version, const char *resource,
                               const char *ns, const char *name);
/* Makes every get/list/watermark fail with `message` (NULL: normal reads). */
void cap_testing_fail_reads(const char *message);
/* The lines logged so far. */
size_t cap_testing_log_count(void);
cap_level cap_testing_log_level(size_t i);
const char *cap_testing_log_message(size_t i);
/* A request for `object_json` at api_version ("v1", "apps/v1") /
 * resource, with kind and namespace; name from the object's metadata.
 * DELETE requests carry the object as oldObject. */
cap_admission_request *cap_testing_request(const char *operation,
                                           const char *api_version,
                                           const char *resource,
                                           const char *kind, const char *ns,
                                           const char *object_json);
/* The AdmissionReview text the host would send for `req`. */
char *cap_testing_review_text(const cap_admission_request *req);
/* `object` with the response's patch applied (NULL + err when it does not apply). */
cap_json *cap_testing_apply_patch(const cap_json *object,
                                  const cap_admission_response *resp,
                                  cap_error *err);

#ifdef __cplusplus
}
#endif
#endif
