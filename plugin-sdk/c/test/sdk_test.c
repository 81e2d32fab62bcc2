/* The SDK's own unit tests, natively against the fake host: `make test`. */
#include "capstan/check.h"
#include "capstan/testing.h"

#include <string.h>

static cap_json *parse(const char *text) {
  cap_error err = {0};
  cap_json *v = cap_json_parse_str(text, &err);
  if (v == NULL)
    fprintf(stderr, "parse(%s): %s\n", text, err.message);
  return v;
}

static const char *parse_error(const char *text) {
  cap_error err = {0};
  return cap_json_parse_str(text, &err) ? "(parsed)" : err.message;
}

static void json_round_trips_what_kube_sends(void) {
  cap_testing_reset();
  const char *text = "{\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{\"c\":{}},"
                     "\"d\":[],\"e\":\"q\\\"\\\\\\n\\u0001\"}";
  CHECK_STR(cap_json_write(parse(text)), text);
  CHECK_STR(cap_json_write(parse(" [ 1 , { \"k\" : [ ] } ] ")), "[1,{\"k\":[]}]");
  cap_json *v = parse("{\"s\":\"\\u00e9\\ud83d\\ude00\\/\",\"n\":9007199254740993}");
  CHECK_STR(cap_json_string(cap_json_get(v, "s")), "\xc3\xa9\xf0\x9f\x98\x80/");
  long long n = 0;
  CHECK(cap_json_int(cap_json_get(v, "n"), &n) && n == 9007199254740993LL);
  CHECK_STR(cap_json_write(cap_json_get(v, "n")), "9007199254740993");
}

static void json_errors_name_the_byte_and_the_problem(void) {
  cap_testing_reset();
  CHECK_STR(parse_error("{\"a\" 1}"),
            "invalid JSON at byte 5: expected ':' after an object key");
  CHECK_STR(parse_error("[1,]"), "invalid JSON at byte 3: expected a value");
  CHECK_STR(parse_error("[1 2]"),
            "invalid JSON at byte 3: expected ',' or ']' in an array");
  CHECK_STR(parse_error("\"abc"), "invalid JSON at byte 4: unterminated string");
  CHECK_STR(parse_error("01"),
            "invalid JSON at byte 1: unexpected data after the value");
  CHECK_STR(parse_error("{} x"),
            "invalid JSON at byte 3: unexpected data after the value");
  CHECK_STR(parse_error(""), "invalid JSON at byte 0: unexpected end of input");
  CHECK_STR(parse_error("\"a\tb\""),
            "invalid JSON at byte 2: control character in a string");
  CHECK_STR(parse_error("\"\\x\""), "invalid JSON at byte 2: invalid escape in a string");
  CHECK_STR(parse_error("tru"), "invalid JSON at byte 0: expected a value");
  CHECK_STR(parse_error("-"), "invalid JSON at byte 1: expected a digit");
}

static void json_nesting_is_bounded_without_recursion(void) {
  cap_testing_reset();
  char deep[2 * CAP_JSON_MAX_DEPTH + 3];
  memset(deep, '[', CAP_JSON_MAX_DEPTH + 1);
  deep[CAP_JSON_MAX_DEPTH + 1] = '\0';
  CHECK_STR(parse_error(deep), "invalid JSON at byte 513: nested too deeply");
  memset(deep, '[', CAP_JSON_MAX_DEPTH);
  memset(deep + CAP_JSON_MAX_DEPTH, ']', CAP_JSON_MAX_DEPTH);
  deep[2 * CAP_JSON_MAX_DEPTH] = '\0';
  CHECK(parse(deep) != NULL);
}

static void json_objects_are_built_in_order(void) {
  cap_testing_reset();
  cap_json *o = cap_json_object();
  cap_json_set(o, "b", cap_json_int_new(1));
  cap_json_set(o, "a", cap_json_str("x"));
  cap_json_set(o, "b", cap_json_bool(true));
  CHECK_STR(cap_json_write(o), "{\"b\":true,\"a\":\"x\"}");
  CHECK(cap_json_remove(o, "b") && o->count == 1);
  cap_json *a = cap_json_array();
  cap_json_append(a, cap_json_int_new(1));
  cap_json_insert(a, 0, cap_json_number(0.5));
  cap_json_replace_at(a, 1, cap_json_null());
  CHECK_STR(cap_json_write(a), "[0.5,null]");
  CHECK(cap_json_equal(parse("{\"x\":1,\"y\":[2]}"), parse("{\"y\":[2],\"x\":1}")));
  CHECK(!cap_json_equal(parse("{\"x\":1}"), parse("{\"x\":1,\"y\":2}")));
  CHECK(cap_json_equal(parse("{\"x\":1,\"x\":[]}"), parse("{\"x\":[]}")));
  CHECK(!cap_json_equal(parse("{\"x\":[],\"x\":1}"), parse("{\"x\":[]}")));
  CHECK_STR(cap_json_write(cap_json_get(parse("{\"x\":1,\"x\":2}"), "x")), "2");
}

static void forbidden_is_worded_as_kube(void) {
  cap_testing_reset();
  cap_admission_request *req = cap_testing_request(
      "CREATE", "apps/v1", "deployments", "Deployment", "ns",
      "{\"metadata\":{\"name\":\"web\"}}");
  cap_admission_response *r = cap_forbidden(req, "not %s", "here");
  CHECK(!r->allowed);
  CHECK(cap_response_code(r) == 403);
  CHECK_STR(cap_response_message(r),
            "deployments.apps \"web\" is forbidden: not here");
  CHECK_STR(cap_json_write(r->status),
            "{\"status\":\"Failure\",\"message\":\"deployments.apps \\\"web\\\" is "
            "forbidden: not here\",\"reason\":\"Forbidden\",\"code\":403,"
            "\"details\":{\"name\":\"web\",\"group\":\"apps\",\"kind\":\"deployments\"}}");
  req = cap_testing_request("CREATE", "v1", "pods", "Pod", "ns",
                            "{\"metadata\":{\"generateName\":\"web-\"}}");
  CHECK_STR(cap_response_message(cap_forbidden(req, "no")),
            "pods \"web-\" is forbidden: no");
  req = cap_testing_request("CREATE", "v1", "pods", "Pod", "ns", "{}");
  CHECK_STR(cap_response_message(cap_forbidden(req, "no")),
            "pods \"Unknown\" is forbidden: no");
  r = cap_not_found("apps", "deployments", "web");
  CHECK(cap_response_code(r) == 404);
  CHECK_STR(cap_response_message(r), "deployments.apps \"web\" not found");
}

static cap_admission_response *mutate(const cap_admission_request *req,
                                      cap_error *err) {
  (void)err;
  cap_json *after = cap_json_clone(req->object);
  cap_json_set(cap_json_get(after, "metadata"), "labels",
               cap_json_set(cap_json_object(), "a/b", cap_json_str("1")));
  cap_admission_response *r = cap_with_changes(cap_allow(), req->object, after);
  cap_with_warning(r, "labelled");
  return cap_with_audit_annotation(r, "example.com/seen", "yes");
}

static cap_admission_response *undecided(const cap_admission_request *req,
                                         cap_error *err) {
  (void)req;
  return cap_errorf(err, "store unavailable");
}

static void run_admission_answers_the_review(void) {
  cap_testing_reset();
  cap_admission_request *req = cap_testing_request(
      "CREATE", "v1", "configmaps", "ConfigMap", "ns", "{\"metadata\":{\"name\":\"cm\"}}");
  char *text = cap_testing_review_text(req);
  cap_error err = {0};
  cap_json *answer = parse(cap_run_admission(mutate, text, strlen(text), &err));
  CHECK_STR(cap_json_string(cap_json_get(answer, "apiVersion")), "admission.k8s.io/v1");
  CHECK_STR(cap_json_string(cap_json_get(answer, "kind")), "AdmissionReview");
  cap_json *resp = cap_json_get(answer, "response");
  CHECK_STR(cap_json_string(cap_json_get(resp, "uid")), "test-uid");
  CHECK(cap_json_true(cap_json_get(resp, "allowed")));
  /* [{"op":"add","path":"/metadata/labels","value":{"a/b":"1"}}] */
  CHECK_STR(cap_json_string(cap_json_get(resp, "patch")),
            "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscyIsInZhbHVlIjp7ImEvYiI6IjEifX1d");
  CHECK_STR(cap_json_string(cap_json_get(resp, "patchType")), "JSONPatch");
  CHECK_STR(cap_json_write(cap_json_get(resp, "warnings")), "[\"labelled\"]");
  CHECK_STR(cap_json_write(cap_json_get(resp, "auditAnnotations")),
            "{\"example.com/seen\":\"yes\"}");
  CHECK(cap_run_admission(undecided, text, strlen(text), &err) == NULL);
  CHECK_STR(err.message, "store unavailable");
  CHECK(cap_run_admission(mutate, "{}", 2, &err) == NULL);
  CHECK_STR(err.message, "AdmissionReview has no request");
  CHECK(cap_run_admission(mutate, "{", 1, &err) == NULL);
  CHECK_STR(err.message,
            "invalid AdmissionReview: invalid JSON at byte 1: expected a string key");
}

static void diff_and_apply_agree(void) {
  cap_testing_reset();
  cap_json *before = parse("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\",\"t~/\":\"2\"}},"
                           "\"spec\":{\"ports\":[1,2],\"list\":[1]}}");
  cap_json *after = parse("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"3\"}},"
                          "\"spec\":{\"ports\":[1,5],\"list\":[1,2],\"new\":true}}");
  cap_json *ops = cap_diff(before, after);
  CHECK_STR(cap_json_write(ops),
            "[{\"op\":\"remove\",\"path\":\"/metadata/labels/t~0~1\"},"
            "{\"op\":\"replace\",\"path\":\"/metadata/labels/x\",\"value\":\"3\"},"
            "{\"op\":\"replace\",\"path\":\"/spec/ports/1\",\"value\":5},"
            "{\"op\":\"replace\",\"path\":\"/spec/list\",\"value\":[1,2]},"
            "{\"op\":\"add\",\"path\":\"/spec/new\",\"value\":true}]");
  cap_error err = {0};
  CHECK(cap_json_equal(cap_patch_apply(before, ops, &err), after));
  CHECK(cap_diff(after, after)->count == 0);
  CHECK_STR(cap_pointer("metadata", "labels", "a/b~c", NULL),
            "/metadata/labels/a~1b~0c");
  cap_json *bad = cap_patch_remove(cap_json_array(), "/spec/missing");
  CHECK(cap_patch_apply(before, bad, &err) == NULL);
  CHECK_STR(err.message, "/spec/missing: cannot apply remove");
  cap_json *arr = cap_patch_add(cap_json_array(), "/spec/ports/-", cap_json_int_new(9));
  CHECK_STR(cap_json_write(cap_json_find(cap_patch_apply(before, arr, &err), "spec", "ports", NULL)),
            "[1,2,9]");
}

static void the_fake_host_answers_reads(void) {
  cap_testing_reset();
  cap_error err = {0};
  CHECK_STR(cap_json_write(cap_config(&err)), "{}");
  cap_testing_set_config("{\"labels\":");
  CHECK(cap_config(&err) == NULL);
  CHECK_STR(err.message,
            "invalid plugin configuration: invalid JSON at byte 10: unexpected end of input");
  CHECK_STR(cap_watermark("v1", "pods", &err), "0");
  cap_testing_put_object("v1", "pods",
                         "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"labels\":{\"app\":\"web\"}},"
                         "\"spec\":{\"nodeName\":\"n1\"}}");
  cap_testing_put_object("v1", "pods", "{\"metadata\":{\"name\":\"b\",\"namespace\":\"y\"}}");
  CHECK_STR(cap_watermark("v1", "pods", &err), "2");
  const cap_json *found = NULL;
  CHECK(cap_get_object("v1", "pods", "x", "a", &found, &err) && found != NULL);
  CHECK(cap_get_object("v1", "pods", "y", "a", &found, &err) && found == NULL);
  const char *selectors[][3] = {
      {NULL, NULL, "2"},        {"x", NULL, "1"},         {NULL, "app=web", "1"},
      {NULL, "app!=web", "1"},  {NULL, "!app", "1"},      {NULL, "app", "1"},
  };
  for (size_t i = 0; i < sizeof selectors / sizeof selectors[0]; i++) {
    const cap_json *list =
        cap_list_objects("v1", "pods", selectors[i][0], selectors[i][1], NULL, &err);
    CHECK_STR(cap_sprintf("%zu", cap_json_get(list, "items")->count), selectors[i][2]);
  }
  const cap_json *by_field = cap_list_objects("v1", "pods", NULL, NULL, "spec.nodeName=n1", &err);
  CHECK(cap_json_get(by_field, "items")->count == 1);
  cap_testing_fail_reads("etcd is down");
  CHECK(!cap_get_object("v1", "pods", "x", "a", &found, &err));
  CHECK_STR(err.message, "etcd is down");
  CHECK(cap_list_objects("v1", "pods", NULL, NULL, NULL, &err) == NULL);
  cap_log(CAP_LOG_WARN, "n=%d", 3);
  CHECK(cap_testing_log_count() == 1 && cap_testing_log_level(0) == CAP_LOG_WARN);
  CHECK_STR(cap_testing_log_message(0), "n=3");
}

static void written_object_skips_subresources_and_deletes(void) {
  cap_testing_reset();
  cap_admission_request *req =
      cap_testing_request("UPDATE", "v1", "pods", "Pod", "ns", "{\"metadata\":{}}");
  CHECK(cap_written_object(req) != NULL);
  CHECK(cap_written_object_of(req, "", "pods") != NULL);
  CHECK(cap_written_object_of(req, "apps", "pods") == NULL);
  req->sub_resource = "status";
  CHECK(cap_written_object(req) == NULL);
  req = cap_testing_request("DELETE", "v1", "pods", "Pod", "ns", "{\"metadata\":{}}");
  CHECK(cap_written_object(req) == NULL && req->old_object != NULL);
}

static cap_json *authenticate(const cap_json *review, cap_error *err) {
  (void)err;
  cap_json *out = cap_json_clone(review);
  cap_json *status = cap_json_object();
  cap_json_set(status, "authenticated", cap_json_bool(true));
  cap_json_set(out, "status", status);
  return out;
}

static void other_worlds_answer_json(void) {
  cap_testing_reset();
  cap_error err = {0};
  const char *in = "{\"kind\":\"TokenReview\",\"spec\":{\"token\":\"t\"}}";
  CHECK_STR(cap_run_json(authenticate, "TokenReview", in, strlen(in), &err),
            "{\"kind\":\"TokenReview\",\"spec\":{\"token\":\"t\"},\"status\":{\"authenticated\":true}}");
  CHECK(cap_run_json(authenticate, "TokenReview", "[", 1, &err) == NULL);
  CHECK_STR(err.message, "invalid TokenReview: invalid JSON at byte 1: unexpected end of input");
}

int main(void) {
  RUN(json_round_trips_what_kube_sends);
  RUN(json_errors_name_the_byte_and_the_problem);
  RUN(json_nesting_is_bounded_without_recursion);
  RUN(json_objects_are_built_in_order);
  RUN(forbidden_is_worded_as_kube);
  RUN(run_admission_answers_the_review);
  RUN(diff_and_apply_agree);
  RUN(the_fake_host_answers_reads);
  RUN(written_object_skips_subresources_and_deletes);
  RUN(other_worlds_answer_json);
  cap_testing_reset();
  return cap_check_done();
}
