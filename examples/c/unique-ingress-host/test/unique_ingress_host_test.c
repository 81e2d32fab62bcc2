/* Unit tests against the SDK's fake host holding ingresses (`make test`). */
#include "capstan/check.h"
#include "capstan/testing.h"

static const char *ingress(const char *ns, const char *name, const char *host1,
                           const char *host2) {
  return cap_sprintf("{\"apiVersion\": \"networking.k8s.io/v1\", \"kind\": \"Ingress\","
                     " \"metadata\": {\"namespace\": \"%s\", \"name\": \"%s\"},"
                     " \"spec\": {\"rules\": [{\"host\": \"%s\"}, {\"host\": \"%s\"}, {}]}}",
                     ns, name, host1, host2);
}

static void store(const char *ns, const char *name, const char *host1, const char *host2) {
  cap_testing_put_object("networking.k8s.io/v1", "ingresses", ingress(ns, name, host1, host2));
}

static cap_admission_response *admit(const char *op, const char *ns, const char *name,
                                     const char *host1, const char *host2, cap_error *err) {
  cap_admission_request *req = cap_testing_request(
      op, "networking.k8s.io/v1", "ingresses", "Ingress", ns, ingress(ns, name, host1, host2));
  return cap_plugin_review(req, err);
}

static void refuses_a_host_another_ingress_uses(void) {
  cap_testing_reset();
  store("a", "shop", "www.example.com", "shop.example.com");
  store("c", "blog", "blog.example.com", "");
  cap_error err = {0};
  cap_admission_response *r =
      admit("CREATE", "b", "shop", "new.example.com", "shop.example.com", &err);
  CHECK(r != NULL && !r->allowed && cap_response_code(r) == 403);
  CHECK_STR(cap_response_message(r),
            "ingresses.networking.k8s.io \"shop\" is forbidden: host "
            "\"shop.example.com\" is already used by ingress a/shop");
  r = admit("UPDATE", "a", "other", "blog.example.com", "www.example.com", &err);
  CHECK_STR(cap_response_message(r),
            "ingresses.networking.k8s.io \"other\" is forbidden: host "
            "\"blog.example.com\" is already used by ingress c/blog");
}

static void allows_new_hosts_and_the_ingress_itself(void) {
  cap_testing_reset();
  store("a", "shop", "shop.example.com", "");
  cap_error err = {0};
  CHECK(admit("CREATE", "b", "web", "web.example.com", "", &err)->allowed);
  CHECK(admit("UPDATE", "a", "shop", "shop.example.com", "", &err)->allowed);
  CHECK(admit("CREATE", "b", "empty", "", "", &err)->allowed);
}

static void other_resources_subresources_and_deletes_are_not_checked(void) {
  cap_testing_reset();
  store("a", "shop", "shop.example.com", "");
  cap_testing_fail_reads("must not be read");
  cap_error err = {0};
  CHECK(admit("DELETE", "b", "shop", "shop.example.com", "", &err)->allowed);
  cap_admission_request *status = cap_testing_request(
      "UPDATE", "networking.k8s.io/v1", "ingresses", "Ingress", "b",
      ingress("b", "shop", "shop.example.com", ""));
  status->sub_resource = "status";
  CHECK(cap_plugin_review(status, &err)->allowed);
  cap_admission_request *cm = cap_testing_request(
      "CREATE", "v1", "configmaps", "ConfigMap", "b", ingress("b", "x", "shop.example.com", ""));
  CHECK(cap_plugin_review(cm, &err)->allowed);
}

static void a_failing_store_fails_the_call(void) {
  cap_testing_reset();
  cap_testing_fail_reads("the watch cache is not ready");
  cap_error err = {0};
  CHECK(admit("CREATE", "b", "shop", "shop.example.com", "", &err) == NULL);
  CHECK_STR(err.message, "the watch cache is not ready");
}

int main(void) {
  RUN(refuses_a_host_another_ingress_uses);
  RUN(allows_new_hosts_and_the_ingress_itself);
  RUN(other_resources_subresources_and_deletes_are_not_checked);
  RUN(a_failing_store_fails_the_call);
  cap_testing_reset();
  return cap_check_done();
}
