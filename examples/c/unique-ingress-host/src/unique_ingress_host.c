/* Example admission plugin `unique-ingress-host`, context-aware: an
 * Ingress (networking.k8s.io/v1) may not claim a host that another Ingress
 * in the cluster already has in its rules. On create and update of
 * ingresses (not subresources) it lists every Ingress through the host's
 * `list-objects` and refuses the first host of the object's rules that
 * another Ingress (another namespace or name) uses. */
#include "capstan/sdk.h"

#include <string.h>

/* An Ingress `other` that is not (ns, name) and has `host` in its rules. */
static bool claims(const cap_json *other, const char *host, const char *ns,
                   const char *name) {
  if (strcmp(cap_object_namespace(other), ns) == 0 &&
      strcmp(cap_object_name(other), name) == 0)
    return false;
  CAP_JSON_EACH(rule, cap_json_find(other, "spec", "rules", NULL)) {
    if (strcmp(cap_json_string_or(cap_json_get(rule, "host"), ""), host) == 0)
      return true;
  }
  return false;
}

static cap_admission_response *review(const cap_admission_request *req,
                                      cap_error *err) {
  const cap_json *ingress =
      cap_written_object_of(req, "networking.k8s.io", "ingresses");
  if (ingress == NULL)
    return cap_allow();
  const char *name = cap_object_name(ingress);
  const cap_json *all = NULL; /* listed once, at the first host */
  CAP_JSON_EACH(rule, cap_json_find(ingress, "spec", "rules", NULL)) {
    const char *host = cap_json_string_or(cap_json_get(rule, "host"), "");
    if (host[0] == '\0')
      continue;
    if (all == NULL &&
        (all = cap_list_objects("networking.k8s.io/v1", "ingresses", NULL,
                                NULL, NULL, err)) == NULL)
      return NULL;
    CAP_JSON_EACH(other, cap_json_get(all, "items")) {
      if (claims(other, host, req->ns, name))
        return cap_forbidden(req, "host \"%s\" is already used by ingress %s/%s",
                             host, cap_object_namespace(other),
                             cap_object_name(other));
    }
  }
  return cap_allow();
}

CAP_ADMISSION_PLUGIN(review)
