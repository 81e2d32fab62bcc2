/* Read helpers for Kubernetes objects. */
#include "capstan/sdk.h"

const char *cap_object_name(const cap_json *obj) {
  return cap_json_string_or(cap_json_find(obj, "metadata", "name", NULL), "");
}

const char *cap_object_namespace(const cap_json *obj) {
  return cap_json_string_or(cap_json_find(obj, "metadata", "namespace", NULL),
                            "");
}

const char *cap_object_label(const cap_json *obj, const char *key) {
  return cap_json_string(cap_json_find(obj, "metadata", "labels", key, NULL));
}

const char *cap_object_annotation(const cap_json *obj, const char *key) {
  return cap_json_string(
      cap_json_find(obj, "metadata", "annotations", key, NULL));
}
