/* The host imports as the SDK calls them, implemented twice: over the
 * generated bindings in a component (wasm_glue.c) and by the fake host
 * (testing.c). Strings in and out are NUL-terminated; out strings live in
 * the arena. The store calls return false with *err set on failure. */
#ifndef CAPSTAN_HOST_RAW_H
#define CAPSTAN_HOST_RAW_H

#include <stdbool.h>
#include <stddef.h>

void cap_raw_log(int level, const char *message);
char *cap_raw_config(void);
/* *out NULL when the object does not exist. */
bool cap_raw_get_object(const char *api_version, const char *resource,
                        const char *ns, const char *name, char **out,
                        size_t *out_len, char **err);
bool cap_raw_list_objects(const char *api_version, const char *resource,
                          const char *ns, const char *label_selector,
                          const char *field_selector, char **out,
                          size_t *out_len, char **err);
bool cap_raw_watermark(const char *api_version, const char *resource,
                       char **out, char **err);

#endif
