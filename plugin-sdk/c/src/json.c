/* JSON values: reading, building, comparing and writing. */
#include "capstan/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool cap_json_is(const cap_json *v, cap_json_type type) {
  return v != NULL && v->type == type;
}

static bool key_is(const cap_json *m, const char *key, size_t len) {
  return m->key_len == len && memcmp(m->key, key, len) == 0;
}

cap_json *cap_json_get(const cap_json *v, const char *key) {
  if (!cap_json_is(v, CAP_JSON_OBJECT))
    return NULL;
  size_t len = strlen(key);
  cap_json *found = NULL;
  CAP_JSON_EACH(m, v) {
    if (key_is(m, key, len))
      found = m;
  }
  return found;
}

cap_json *cap_json_find(const cap_json *v, ...) {
  va_list ap;
  va_start(ap, v);
  cap_json *at = (cap_json *)v;
  for (const char *key; at != NULL && (key = va_arg(ap, const char *));)
    at = cap_json_get(at, key);
  va_end(ap);
  return at;
}

cap_json *cap_json_at(const cap_json *v, size_t i) {
  if (!cap_json_is(v, CAP_JSON_ARRAY))
    return NULL;
  CAP_JSON_EACH(item, v) {
    if (i-- == 0)
      return item;
  }
  return NULL;
}

const char *cap_json_string(const cap_json *v) {
  return cap_json_is(v, CAP_JSON_STRING) ? v->text : NULL;
}

const char *cap_json_string_or(const cap_json *v, const char *fallback) {
  const char *s = cap_json_string(v);
  return s ? s : fallback;
}

bool cap_json_true(const cap_json *v) { return cap_json_is(v, CAP_JSON_TRUE); }

bool cap_json_int(const cap_json *v, long long *out) {
  if (!cap_json_is(v, CAP_JSON_NUMBER) || strpbrk(v->text, ".eE"))
    return false;
  errno = 0;
  char *end;
  long long n = strtoll(v->text, &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  *out = n;
  return true;
}

bool cap_json_double(const cap_json *v, double *out) {
  if (!cap_json_is(v, CAP_JSON_NUMBER))
    return false;
  *out = strtod(v->text, NULL);
  return true;
}

static bool same_number(const cap_json *a, const cap_json *b) {
  if (a->len == b->len && memcmp(a->text, b->text, a->len) == 0)
    return true;
  long long x, y;
  if (cap_json_int(a, &x) && cap_json_int(b, &y))
    return x == y;
  return strtod(a->text, NULL) == strtod(b->text, NULL);
}

/* The member of `obj` that counts for `m`'s key: the last one, as Go
 * decodes duplicate keys. */
static const cap_json *effective(const cap_json *obj, const cap_json *m) {
  const cap_json *found = NULL;
  CAP_JSON_EACH(n, obj) {
    if (key_is(n, m->key, m->key_len))
      found = n;
  }
  return found;
}

/* Every key of a is in b with an equal value. */
static bool same_members(const cap_json *a, const cap_json *b) {
  CAP_JSON_EACH(m, a) {
    const cap_json *other = effective(b, m);
    if (other == NULL || !cap_json_equal(effective(a, m), other))
      return false;
  }
  return true;
}

bool cap_json_equal(const cap_json *a, const cap_json *b) {
  if (a == NULL || b == NULL || a->type != b->type)
    return a == b;
  switch (a->type) {
  case CAP_JSON_NUMBER:
    return same_number(a, b);
  case CAP_JSON_STRING:
    return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
  case CAP_JSON_ARRAY: {
    if (a->count != b->count)
      return false;
    const cap_json *y = b->first;
    CAP_JSON_EACH(x, a) {
      if (!cap_json_equal(x, y))
        return false;
      y = y->next;
    }
    return true;
  }
  case CAP_JSON_OBJECT:
    return same_members(a, b) && same_members(b, a);
  default:
    return true;
  }
}

/* ---- building ------------------------------------------------------- */

static cap_json *new_value(cap_json_type type) {
  cap_json *v = cap_alloc(sizeof *v);
  v->type = type;
  return v;
}

cap_json *cap_json_null(void) { return new_value(CAP_JSON_NULL); }

cap_json *cap_json_bool(bool b) {
  return new_value(b ? CAP_JSON_TRUE : CAP_JSON_FALSE);
}

static cap_json *number_text(char *text) {
  cap_json *v = new_value(CAP_JSON_NUMBER);
  v->text = text;
  v->len = strlen(text);
  return v;
}

cap_json *cap_json_int_new(long long n) {
  return number_text(cap_sprintf("%lld", n));
}

cap_json *cap_json_number(double d) {
  if (!isfinite(d))
    return cap_json_null();
  return number_text(cap_sprintf("%.17g", d));
}

cap_json *cap_json_strn(const char *s, size_t len) {
  cap_json *v = new_value(CAP_JSON_STRING);
  v->text = cap_strndup(s, len);
  v->len = len;
  return v;
}

cap_json *cap_json_str(const char *s) { return cap_json_strn(s, strlen(s)); }

cap_json *cap_json_array(void) { return new_value(CAP_JSON_ARRAY); }

cap_json *cap_json_object(void) { return new_value(CAP_JSON_OBJECT); }

cap_json *cap_json_clone(const cap_json *v) {
  if (v == NULL)
    return NULL;
  cap_json *c = new_value(v->type);
  c->text = v->text ? cap_strndup(v->text, v->len) : NULL;
  c->len = v->len;
  CAP_JSON_EACH(m, v) {
    cap_json *copy = cap_json_clone(m);
    copy->key = m->key ? cap_strndup(m->key, m->key_len) : NULL;
    copy->key_len = m->key_len;
    if (c->last)
      c->last->next = copy;
    else
      c->first = copy;
    c->last = copy;
    c->count++;
  }
  return c;
}

static void link_after(cap_json *parent, cap_json *prev, cap_json *value) {
  value->next = prev ? prev->next : parent->first;
  if (prev)
    prev->next = value;
  else
    parent->first = value;
  if (value->next == NULL)
    parent->last = value;
  parent->count++;
}

static void unlink_after(cap_json *parent, cap_json *prev, cap_json *m) {
  if (prev)
    prev->next = m->next;
  else
    parent->first = m->next;
  if (parent->last == m)
    parent->last = prev;
  m->next = NULL;
  parent->count--;
}

cap_json *cap_json_set(cap_json *obj, const char *key, cap_json *value) {
  if (!cap_json_is(obj, CAP_JSON_OBJECT) || value == NULL)
    return obj;
  size_t len = strlen(key);
  value->key = cap_strndup(key, len);
  value->key_len = len;
  cap_json *prev = NULL;
  for (cap_json *m = obj->first; m; prev = m, m = m->next) {
    if (key_is(m, key, len)) {
      unlink_after(obj, prev, m);
      link_after(obj, prev, value);
      return obj;
    }
  }
  link_after(obj, obj->last, value);
  return obj;
}

bool cap_json_remove(cap_json *obj, const char *key) {
  if (!cap_json_is(obj, CAP_JSON_OBJECT))
    return false;
  size_t len = strlen(key);
  bool removed = false;
  cap_json *prev = NULL;
  for (cap_json *m = obj->first, *next; m; m = next) {
    next = m->next;
    if (key_is(m, key, len)) {
      unlink_after(obj, prev, m);
      removed = true;
    } else {
      prev = m;
    }
  }
  return removed;
}

cap_json *cap_json_append(cap_json *arr, cap_json *value) {
  if (cap_json_is(arr, CAP_JSON_ARRAY) && value != NULL) {
    value->key = NULL;
    value->key_len = 0;
    link_after(arr, arr->last, value);
  }
  return arr;
}

/* The element before index i (NULL for 0), or false when i > count. */
static bool before_index(cap_json *arr, size_t i, cap_json **prev) {
  if (!cap_json_is(arr, CAP_JSON_ARRAY) || i > arr->count)
    return false;
  *prev = NULL;
  for (cap_json *m = arr->first; i > 0; m = m->next, i--)
    *prev = m;
  return true;
}

bool cap_json_insert(cap_json *arr, size_t i, cap_json *value) {
  cap_json *prev;
  if (value == NULL || !before_index(arr, i, &prev))
    return false;
  value->key = NULL;
  value->key_len = 0;
  link_after(arr, prev, value);
  return true;
}

bool cap_json_replace_at(cap_json *arr, size_t i, cap_json *value) {
  cap_json *prev;
  if (!cap_json_is(arr, CAP_JSON_ARRAY) || i >= arr->count ||
      !before_index(arr, i, &prev))
    return false;
  unlink_after(arr, prev, prev ? prev->next : arr->first);
  if (value != NULL)
    return cap_json_insert(arr, i, value);
  return true;
}

/* ---- writing -------------------------------------------------------- */

void cap_json_quote(cap_buf *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  cap_buf_put(b, "\"", 1);
  size_t run = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = c == '"'    ? "\\\""
                      : c == '\\' ? "\\\\"
                      : c == '\n' ? "\\n"
                      : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t"
                                  : NULL;
    if (esc == NULL && c >= 0x20)
      continue;
    cap_buf_put(b, s + run, i - run);
    run = i + 1;
    if (esc != NULL) {
      cap_buf_puts(b, esc);
    } else {
      char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
      cap_buf_put(b, u, 6);
    }
  }
  cap_buf_put(b, s + run, len - run);
  cap_buf_put(b, "\"", 1);
}

void cap_json_write_to(cap_buf *b, const cap_json *v) {
  if (v == NULL) {
    cap_buf_puts(b, "null");
    return;
  }
  switch (v->type) {
  case CAP_JSON_NULL:
    cap_buf_puts(b, "null");
    return;
  case CAP_JSON_TRUE:
    cap_buf_puts(b, "true");
    return;
  case CAP_JSON_FALSE:
    cap_buf_puts(b, "false");
    return;
  case CAP_JSON_NUMBER:
    cap_buf_put(b, v->text, v->len);
    return;
  case CAP_JSON_STRING:
    cap_json_quote(b, v->text, v->len);
    return;
  case CAP_JSON_ARRAY:
  case CAP_JSON_OBJECT: {
    bool object = v->type == CAP_JSON_OBJECT;
    cap_buf_put(b, object ? "{" : "[", 1);
    CAP_JSON_EACH(m, v) {
      if (m != v->first)
        cap_buf_put(b, ",", 1);
      if (object) {
        cap_json_quote(b, m->key, m->key_len);
        cap_buf_put(b, ":", 1);
      }
      cap_json_write_to(b, m);
    }
    cap_buf_put(b, object ? "}" : "]", 1);
    return;
  }
  }
}

char *cap_json_write(const cap_json *v) {
  cap_buf b = {0};
  cap_json_write_to(&b, v);
  return cap_buf_finish(&b);
}
