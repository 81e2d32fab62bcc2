/* Unit tests against the SDK's fake host: offline, no Wasm (`make test`). */
#include "capstan/check.h"
#include "capstan/testing.h"

#include <string.h>

static cap_admission_response *create(const char *object) {
  cap_error err = {0};
  cap_admission_request *req = cap_testing_request(
      "CREATE", "apps/v1", "deployments", "Deployment", "ns", object);
  return cap_plugin_review(req, &err);
}

static void rejects_objects_missing_a_listed_label_in_kubes_wording(void) {
  cap_testing_reset();
  cap_testing_set_config("{\"labels\": [\"team\", \"tier\", \"owner\"]}");
  cap_admission_response *r =
      create("{\"metadata\": {\"name\": \"web\", \"labels\": {\"tier\": \"front\"}}}");
  CHECK(r != NULL && !r->allowed);
  CHECK(cap_response_code(r) == 403);
  CHECK_STR(cap_response_message(r), "deployments.apps \"web\" is forbidden: "
                                     "missing required label(s): team, owner");
  CHECK(cap_testing_log_count() == 1);
  CHECK(cap_testing_log_level(0) == CAP_LOG_INFO);
  CHECK_STR(cap_testing_log_message(0),
            "rejecting web: missing [\"team\",\"owner\"]");
}

static void allows_labelled_objects_and_everything_without_configuration(void) {
  cap_testing_reset();
  cap_testing_set_config("{\"labels\": [\"team\"]}");
  CHECK(create("{\"metadata\": {\"name\": \"web\", \"labels\": {\"team\": \"a\"}}}")->allowed);
  CHECK(cap_testing_log_count() == 0);
  cap_testing_reset();
  CHECK(create("{\"metadata\": {\"name\": \"web\"}}")->allowed);
}

static void deletes_and_subresources_are_not_checked(void) {
  cap_testing_reset();
  cap_testing_set_config("{\"labels\": [\"team\"]}");
  cap_error err = {0};
  cap_admission_request *status = cap_testing_request(
      "UPDATE", "v1", "pods", "Pod", "ns", "{\"metadata\": {\"name\": \"p\"}}");
  status->sub_resource = "status";
  CHECK(cap_plugin_review(status, &err)->allowed);
  cap_admission_request *del = cap_testing_request(
      "DELETE", "v1", "pods", "Pod", "ns", "{\"metadata\": {\"name\": \"p\"}}");
  CHECK(cap_plugin_review(del, &err)->allowed);
}

static void a_bad_configuration_fails_the_call(void) {
  const char *configs[][2] = {
      {"{\"label\": \"team\"}",
       "invalid plugin configuration: unknown field \"label\", expected `labels`"},
      {"{\"labels\": [1]}",
       "invalid plugin configuration: `labels` must be a list of strings"},
      {"{\"labels\": ", "invalid plugin configuration: invalid JSON at byte 11: "
                        "unexpected end of input"},
  };
  for (size_t i = 0; i < 3; i++) {
    cap_testing_reset();
    cap_testing_set_config(configs[i][0]);
    cap_error err = {0};
    cap_admission_request *req = cap_testing_request(
        "CREATE", "v1", "configmaps", "ConfigMap", "ns", "{\"metadata\": {}}");
    CHECK(cap_plugin_review(req, &err) == NULL);
    CHECK_STR(err.message, configs[i][1]);
  }
}

static void answers_the_admission_review_the_host_sends(void) {
  cap_testing_reset();
  cap_testing_set_config("{\"labels\": [\"team\"]}");
  char *text = cap_testing_review_text(cap_testing_request(
      "CREATE", "v1", "configmaps", "ConfigMap", "ns", "{\"metadata\": {\"name\": \"cm\"}}"));
  cap_error err = {0};
  char *out = cap_run_admission(cap_plugin_review, text, strlen(text), &err);
  cap_json *answer = cap_json_parse_str(out ? out : "", &err);
  cap_json *response = cap_json_get(answer, "response");
  CHECK_STR(cap_json_string(cap_json_get(answer, "kind")), "AdmissionReview");
  CHECK_STR(cap_json_string(cap_json_get(response, "uid")), "test-uid");
  CHECK_STR(cap_json_string(cap_json_find(response, "status", "message", NULL)),
            "configmaps \"cm\" is forbidden: missing required label(s): team");
  CHECK_STR(cap_json_string(cap_json_find(response, "status", "reason", NULL)),
            "Forbidden");
}

int main(void) {
  RUN(rejects_objects_missing_a_listed_label_in_kubes_wording);
  RUN(allows_labelled_objects_and_everything_without_configuration);
  RUN(deletes_and_subresources_are_not_checked);
  RUN(a_bad_configuration_fails_the_call);
  RUN(answers_the_admission_review_the_host_sends);
  cap_testing_reset();
  return cap_check_done();
}
