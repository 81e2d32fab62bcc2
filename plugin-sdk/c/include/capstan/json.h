/* JSON for Capstan plugins in C: a parser (iterative, depth-bounded,
 * precise errors), a tree with insertion-ordered objects, builders and a
 * writer. Every value lives in the call's arena (see memory functions
 * below): nothing is freed by hand; the SDK empties the arena after each
 * call of the plugin (tests: cap_testing_reset). */
#ifndef CAPSTAN_JSON_H
#define CAPSTAN_JSON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest nesting the parser accepts (kube objects are far shallower). */
#define CAP_JSON_MAX_DEPTH 512

typedef enum {
  CAP_JSON_NULL,
  CAP_JSON_FALSE,
  CAP_JSON_TRUE,
  CAP_JSON_NUMBER,
  CAP_JSON_STRING,
  CAP_JSON_ARRAY,
  CAP_JSON_OBJECT
} cap_json_type;

typedef struct cap_json cap_json;

/* One value. Objects and arrays keep their members as a list in order
 * (`first`, then `next`); an object's member carries its `key`. */
struct cap_json {
  cap_json_type type;
  const char *text; /* STRING: the decoded text (NUL-terminated; `len` bytes,
                       may contain NUL); NUMBER: the number as written */
  size_t len;
  const char *key; /* the member's key inside an object, else NULL */
  size_t key_len;
  cap_json *first, *last, *next; /* ARRAY/OBJECT members */
  size_t count;                  /* ARRAY/OBJECT: number of members */
};

/* An error: `message` is NULL until something failed. */
typedef struct {
  const char *message;
} cap_error;

/* Sets err->message (formatted, in the arena) when err is not NULL and
 * returns NULL, so `return cap_errorf(err, "...")` works in any function
 * returning a pointer. */
void *cap_errorf(cap_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- memory: the call's arena -------------------------------------- */

/* Zeroed memory that lives until cap_arena_reset(); aborts (a trap in
 * Wasm, so the host applies the failurePolicy) when memory runs out. */
void *cap_alloc(size_t size);
char *cap_strdup(const char *s);
char *cap_strndup(const char *s, size_t len);
char *cap_sprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *cap_vsprintf(const char *fmt, va_list ap);
/* Frees everything allocated since the last reset. */
void cap_arena_reset(void);

/* ---- a growable byte buffer (malloc'd, not in the arena) ----------- */

typedef struct {
  char *data;
  size_t len, cap;
} cap_buf;

void cap_buf_put(cap_buf *b, const char *bytes, size_t len);
void cap_buf_puts(cap_buf *b, const char *s);
void cap_buf_printf(cap_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The contents as an arena string; frees the buffer. */
char *cap_buf_finish(cap_buf *b);
void cap_buf_free(cap_buf *b);

/* ---- parsing -------------------------------------------------------- */

/* Parses one JSON text (RFC 8259: one value, surrounded by whitespace
 * only). NULL on error, with err->message like
 * `invalid JSON at byte 12: expected ':' after an object key`. */
cap_json *cap_json_parse(const char *text, size_t len, cap_error *err);
/* cap_json_parse of a NUL-terminated text. */
cap_json *cap_json_parse_str(const char *text, cap_error *err);

/* ---- reading -------------------------------------------------------- */

bool cap_json_is(const cap_json *v, cap_json_type type);
/* The member `key` of an object (the last one, as Go reads duplicates);
 * NULL when v is not an object or has no such member. */
cap_json *cap_json_get(const cap_json *v, const char *key);
/* Follows keys through nested objects; the list ends with NULL:
 * cap_json_find(obj, "metadata", "labels", NULL). */
cap_json *cap_json_find(const cap_json *v, ...) __attribute__((sentinel));
/* The i-th element of an array (NULL when out of range). */
cap_json *cap_json_at(const cap_json *v, size_t i);
/* v's text when it is a string, else NULL. */
const char *cap_json_string(const cap_json *v);
/* v's text when it is a string, else `fallback`. */
const char *cap_json_string_or(const cap_json *v, const char *fallback);
/* true for JSON true, false for anything else. */
bool cap_json_true(const cap_json *v);
/* A number that is an integer in long long's range. */
bool cap_json_int(const cap_json *v, long long *out);
bool cap_json_double(const cap_json *v, double *out);
/* Structural equality (object members compared by key, in any order). */
bool cap_json_equal(const cap_json *a, const cap_json *b);

/* Iterates an array's elements or an object's members. */
#define CAP_JSON_EACH(item, container)                                        \
  for (cap_json *item = (container) ? (container)->first : NULL; item;        \
       item = item->next)

/* ---- building ------------------------------------------------------- */

cap_json *cap_json_null(void);
cap_json *cap_json_bool(bool b);
cap_json *cap_json_int_new(long long n);
cap_json *cap_json_number(double d); /* NaN and infinities become null */
cap_json *cap_json_str(const char *s);
cap_json *cap_json_strn(const char *s, size_t len);
cap_json *cap_json_array(void);
cap_json *cap_json_object(void);
/* A deep copy (no key, no siblings). */
cap_json *cap_json_clone(const cap_json *v);
/* Sets member `key` of an object, replacing an existing one in place;
 * `value` must not be in another container (clone it). Returns obj. */
cap_json *cap_json_set(cap_json *obj, const char *key, cap_json *value);
/* Removes member `key` (every occurrence); true when there was one. */
bool cap_json_remove(cap_json *obj, const char *key);
/* Appends to an array. Returns arr. */
cap_json *cap_json_append(cap_json *arr, cap_json *value);
/* Inserts into an array before index i (i == count appends); false when
 * out of range. */
bool cap_json_insert(cap_json *arr, size_t i, cap_json *value);
/* Replaces (value != NULL) or removes (value == NULL) element i. */
bool cap_json_replace_at(cap_json *arr, size_t i, cap_json *value);

/* ---- writing -------------------------------------------------------- */

/* Compact JSON text (in the arena). Object members in order. */
char *cap_json_write(const cap_json *v);
void cap_json_write_to(cap_buf *b, const cap_json *v);
/* Appends `s` (len bytes) as a JSON string literal. */
void cap_json_quote(cap_buf *b, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
