/* The component's side of the SDK: the world's export and the host
 * imports over the bindings that `wit-bindgen c` generates from
 * plugin-sdk/wit/capstan.wit at build time. Compiled once per plugin with
 *   -DCAP_WORLD=<world> -DCAP_EXPORT=<export> -DCAP_BINDINGS='"<world>.h"'
 * (plugin.mk sets them); the generated names carry the world's name. */
#include "capstan/sdk.h"
#include "host_raw.h"

#include <stdlib.h>
#include <string.h>

#include CAP_BINDINGS

#define CAP_CAT_(a, b) a##b
#define CAP_CAT(a, b) CAP_CAT_(a, b)
#define CAP_CAT4(a, b, c, d) CAP_CAT(CAP_CAT(a, b), CAP_CAT(c, d))

typedef CAP_CAT(CAP_WORLD, _string_t) wit_string;
typedef CAP_CAT(CAP_WORLD, _option_string_t) wit_option_string;
#define wit_string_free CAP_CAT(CAP_WORLD, _string_free)
#define wit_export CAP_CAT4(exports_, CAP_WORLD, _, CAP_EXPORT)

/* A borrowed view of a C string (the callee copies what it keeps). */
static wit_string view(const char *s) {
  return (wit_string){(uint8_t *)s, strlen(s)};
}

/* A host-owned string moved into the arena (NUL-terminated). */
static char *take(wit_string *s, size_t *len) {
  char *out = cap_strndup((const char *)s->ptr, s->len);
  if (len != NULL)
    *len = s->len;
  wit_string_free(s);
  return out;
}

/* A malloc'd copy for the export's answer (freed by cabi_post_*). */
static wit_string give(const char *s) {
  size_t len = strlen(s);
  if (len == 0)
    return (wit_string){NULL, 0};
  uint8_t *p = malloc(len);
  if (p == NULL)
    abort();
  memcpy(p, s, len);
  return (wit_string){p, len};
}

void cap_raw_log(int level, const char *message) {
  wit_string m = view(message);
  capstan_plugin_host_log((capstan_plugin_host_level_t)level, &m);
}

char *cap_raw_config(void) {
  wit_string out;
  capstan_plugin_host_config(&out);
  return take(&out, NULL);
}

bool cap_raw_get_object(const char *api_version, const char *resource,
                        const char *ns, const char *name, char **out,
                        size_t *out_len, char **err) {
  wit_string av = view(api_version), r = view(resource), n = view(name);
  wit_string nsv = ns ? view(ns) : (wit_string){0};
  wit_option_string found;
  wit_string failure;
  if (!capstan_plugin_host_get_object(&av, &r, ns ? &nsv : NULL, &n, &found,
                                      &failure)) {
    *err = take(&failure, NULL);
    return false;
  }
  *out = found.is_some ? take(&found.val, out_len) : NULL;
  return true;
}

bool cap_raw_list_objects(const char *api_version, const char *resource,
                          const char *ns, const char *label_selector,
                          const char *field_selector, char **out,
                          size_t *out_len, char **err) {
  wit_string av = view(api_version), r = view(resource);
  wit_string nsv = ns ? view(ns) : (wit_string){0};
  wit_string lv = label_selector ? view(label_selector) : (wit_string){0};
  wit_string fv = field_selector ? view(field_selector) : (wit_string){0};
  wit_string list, failure;
  if (!capstan_plugin_host_list_objects(&av, &r, ns ? &nsv : NULL,
                                        label_selector ? &lv : NULL,
                                        field_selector ? &fv : NULL, &list,
                                        &failure)) {
    *err = take(&failure, NULL);
    return false;
  }
  *out = take(&list, out_len);
  return true;
}

bool cap_raw_watermark(const char *api_version, const char *resource,
                       char **out, char **err) {
  wit_string av = view(api_version), r = view(resource), mark, failure;
  if (!capstan_plugin_host_watermark(&av, &r, &mark, &failure)) {
    *err = take(&failure, NULL);
    return false;
  }
  *out = take(&mark, NULL);
  return true;
}

/* The world's function, declared by the plugin's CAP_*_PLUGIN macro. */
#define CAP_WORLD_IS_admission 1
#if CAP_CAT(CAP_WORLD_IS_, CAP_WORLD)
static char *dispatch(const char *text, size_t len, cap_error *err) {
  return cap_run_admission(cap_plugin_review, text, len, err);
}
#else
static char *dispatch(const char *text, size_t len, cap_error *err) {
  return cap_run_json(CAP_CAT(cap_plugin_, CAP_EXPORT), CAP_INPUT, text, len,
                      err);
}
#endif

bool wit_export(wit_string *input, wit_string *ret, wit_string *err) {
  cap_error failure = {0};
  char *answer = dispatch((const char *)input->ptr, input->len, &failure);
  wit_string_free(input);
  bool ok = answer != NULL;
  if (ok)
    *ret = give(answer);
  else
    *err = give(failure.message ? failure.message : "the plugin failed");
  cap_arena_reset();
  return ok;
}
