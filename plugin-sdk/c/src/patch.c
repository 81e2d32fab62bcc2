/* JSON Patch (RFC 6902) with RFC 6901 pointers: a builder, the diff of
 * two objects, and applying operations (for tests). */
#include "capstan/sdk.h"

#include <stdlib.h>
#include <string.h>

static void put_token(cap_buf *b, const char *s, size_t len) {
  cap_buf_put(b, "/", 1);
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '~')
      cap_buf_put(b, "~0", 2);
    else if (s[i] == '/')
      cap_buf_put(b, "~1", 2);
    else
      cap_buf_put(b, s + i, 1);
  }
}

const char *cap_pointer(const char *first, ...) {
  cap_buf b = {0};
  va_list ap;
  va_start(ap, first);
  for (const char *s = first; s != NULL; s = va_arg(ap, const char *))
    put_token(&b, s, strlen(s));
  va_end(ap);
  return cap_buf_finish(&b);
}

static cap_json *op(cap_json *ops, const char *name, const char *pointer,
                    const cap_json *value) {
  cap_json *o = cap_json_object();
  cap_json_set(o, "op", cap_json_str(name));
  cap_json_set(o, "path", cap_json_str(pointer));
  if (value != NULL)
    cap_json_set(o, "value", cap_json_clone(value));
  return cap_json_append(ops, o);
}

cap_json *cap_patch_add(cap_json *ops, const char *pointer,
                        const cap_json *value) {
  return op(ops, "add", pointer, value ? value : cap_json_null());
}

cap_json *cap_patch_replace(cap_json *ops, const char *pointer,
                            const cap_json *value) {
  return op(ops, "replace", pointer, value ? value : cap_json_null());
}

cap_json *cap_patch_remove(cap_json *ops, const char *pointer) {
  return op(ops, "remove", pointer, NULL);
}

static const char *child_pointer(const char *path, const char *key,
                                 size_t len) {
  cap_buf b = {0};
  cap_buf_puts(&b, path);
  put_token(&b, key, len);
  return cap_buf_finish(&b);
}

static void diff_into(cap_json *ops, const char *path, const cap_json *before,
                      const cap_json *after);

static void diff_objects(cap_json *ops, const char *path,
                         const cap_json *before, const cap_json *after) {
  CAP_JSON_EACH(m, before) {
    if (cap_json_get(after, m->key) == NULL)
      cap_patch_remove(ops, child_pointer(path, m->key, m->key_len));
  }
  CAP_JSON_EACH(m, after) {
    const char *at = child_pointer(path, m->key, m->key_len);
    const cap_json *old = cap_json_get(before, m->key);
    if (old == NULL)
      cap_patch_add(ops, at, m);
    else
      diff_into(ops, at, old, m);
  }
}

static void diff_into(cap_json *ops, const char *path, const cap_json *before,
                      const cap_json *after) {
  if (cap_json_equal(before, after))
    return;
  if (cap_json_is(before, CAP_JSON_OBJECT) &&
      cap_json_is(after, CAP_JSON_OBJECT)) {
    diff_objects(ops, path, before, after);
    return;
  }
  if (cap_json_is(before, CAP_JSON_ARRAY) &&
      cap_json_is(after, CAP_JSON_ARRAY) && before->count == after->count) {
    size_t i = 0;
    const cap_json *y = after->first;
    CAP_JSON_EACH(x, before) {
      const char *index = cap_sprintf("%zu", i++);
      diff_into(ops, child_pointer(path, index, strlen(index)), x, y);
      y = y->next;
    }
    return;
  }
  cap_patch_replace(ops, path, after);
}

cap_json *cap_diff(const cap_json *before, const cap_json *after) {
  cap_json *ops = cap_json_array();
  diff_into(ops, "", before, after);
  return ops;
}

/* ---- applying (RFC 6902 add / replace / remove) ---------------------- */

/* The next unescaped token of a pointer at *p (after its '/'). */
static char *next_token(const char **p) {
  cap_buf b = {0};
  const char *s = *p + 1;
  for (; *s && *s != '/'; s++) {
    if (s[0] == '~' && (s[1] == '0' || s[1] == '1')) {
      cap_buf_put(&b, s[1] == '0' ? "~" : "/", 1);
      s++;
    } else {
      cap_buf_put(&b, s, 1);
    }
  }
  *p = s;
  return cap_buf_finish(&b);
}

static bool array_index(const cap_json *arr, const char *token, bool add,
                        size_t *out) {
  if (add && strcmp(token, "-") == 0) {
    *out = arr->count;
    return true;
  }
  char *end;
  unsigned long long i = strtoull(token, &end, 10);
  if (token[0] < '0' || token[0] > '9' || *end != '\0')
    return false;
  *out = (size_t)i;
  return add ? *out <= arr->count : *out < arr->count;
}

static bool apply_at(cap_json *parent, const char *token, const char *name,
                     const cap_json *value) {
  bool add = strcmp(name, "add") == 0, remove = strcmp(name, "remove") == 0;
  if (cap_json_is(parent, CAP_JSON_ARRAY)) {
    size_t i;
    if (!array_index(parent, token, add, &i))
      return false;
    if (add)
      return cap_json_insert(parent, i, cap_json_clone(value));
    return cap_json_replace_at(parent, i,
                               remove ? NULL : cap_json_clone(value));
  }
  if (!cap_json_is(parent, CAP_JSON_OBJECT))
    return false;
  if (!add && cap_json_get(parent, token) == NULL)
    return false;
  if (remove)
    return cap_json_remove(parent, token);
  cap_json_set(parent, token, cap_json_clone(value));
  return true;
}

static cap_json *apply_op(cap_json *doc, const cap_json *o, cap_error *err) {
  const char *name = cap_json_string_or(cap_json_get(o, "op"), "");
  const char *path = cap_json_string(cap_json_get(o, "path"));
  const cap_json *value = cap_json_get(o, "value");
  bool remove = strcmp(name, "remove") == 0;
  if (path == NULL || (!remove && value == NULL) ||
      (!remove && strcmp(name, "add") && strcmp(name, "replace")))
    return cap_errorf(err, "unsupported patch operation %s", cap_json_write(o));
  if (path[0] == '\0')
    return remove ? cap_errorf(err, "cannot remove the root")
                  : cap_json_clone(value);
  cap_json *parent = doc;
  const char *p = path;
  char *token = next_token(&p);
  while (*p == '/' && parent != NULL) {
    parent = cap_json_is(parent, CAP_JSON_ARRAY)
                 ? cap_json_at(parent, (size_t)strtoull(token, NULL, 10))
                 : cap_json_get(parent, token);
    token = next_token(&p);
  }
  if (path[0] != '/' || parent == NULL ||
      !apply_at(parent, token, name, value))
    return cap_errorf(err, "%s: cannot apply %s", path, name);
  return doc;
}

cap_json *cap_patch_apply(const cap_json *doc, const cap_json *ops,
                          cap_error *err) {
  cap_json *out = cap_json_clone(doc);
  CAP_JSON_EACH(o, ops) {
    out = apply_op(out, o, err);
    if (out == NULL)
      return NULL;
  }
  return out;
}
