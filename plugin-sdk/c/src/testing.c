/* The fake host (see capstan/testing.h): the host imports answered from
 * memory, for unit tests compiled natively. */
#include "capstan/testing.h"
#include "host_raw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stored {
  struct stored *next;
  const char *api_version, *resource, *ns, *name;
  cap_json *object;
} stored;

typedef struct line {
  struct line *next;
  cap_level level;
  const char *message;
} line;

typedef struct mark {
  struct mark *next;
  const char *api_version, *resource;
  unsigned long changes;
} mark;

typedef struct {
  const char *config;
  stored *objects;
  line *logs, *last_log;
  size_t log_count;
  mark *marks;
  const char *read_error;
} fake_host;

static fake_host fake = {"{}", NULL, NULL, NULL, 0, NULL, NULL};

void cap_testing_reset(void) {
  cap_arena_reset();
  fake = (fake_host){"{}", NULL, NULL, NULL, 0, NULL, NULL};
}

void cap_testing_set_config(const char *json) { fake.config = cap_strdup(json); }

void cap_testing_fail_reads(const char *message) {
  fake.read_error = message ? cap_strdup(message) : NULL;
}

static void changed(const char *api_version, const char *resource) {
  for (mark *m = fake.marks; m; m = m->next) {
    if (!strcmp(m->api_version, api_version) && !strcmp(m->resource, resource)) {
      m->changes++;
      return;
    }
  }
  mark *m = cap_alloc(sizeof *m);
  *m = (mark){fake.marks, cap_strdup(api_version), cap_strdup(resource), 1};
  fake.marks = m;
}

static bool same_key(const stored *s, const char *api_version,
                     const char *resource, const char *ns, const char *name) {
  return !strcmp(s->api_version, api_version) &&
         !strcmp(s->resource, resource) && !strcmp(s->ns, ns) &&
         !strcmp(s->name, name);
}

void cap_testing_remove_object(const char *api_version, const char *resource,
                               const char *ns, const char *name) {
  for (stored **at = &fake.objects; *at; at = &(*at)->next) {
    if (same_key(*at, api_version, resource, ns, name)) {
      *at = (*at)->next;
      break;
    }
  }
  changed(api_version, resource);
}

void cap_testing_put_object(const char *api_version, const char *resource,
                            const char *json) {
  cap_error err = {0};
  cap_json *object = cap_json_parse_str(json, &err);
  if (object == NULL) {
    fprintf(stderr, "cap_testing_put_object: %s\n", err.message);
    abort();
  }
  const char *ns = cap_object_namespace(object), *name = cap_object_name(object);
  cap_testing_remove_object(api_version, resource, ns, name);
  stored *s = cap_alloc(sizeof *s);
  *s = (stored){NULL, cap_strdup(api_version), cap_strdup(resource), ns, name,
                object};
  stored **end = &fake.objects; /* kept in insertion order, as lists are */
  while (*end)
    end = &(*end)->next;
  *end = s;
}

size_t cap_testing_log_count(void) { return fake.log_count; }

static const line *log_at(size_t i) {
  const line *l = fake.logs;
  while (l && i--)
    l = l->next;
  return l;
}

cap_level cap_testing_log_level(size_t i) {
  const line *l = log_at(i);
  return l ? l->level : CAP_LOG_TRACE;
}

const char *cap_testing_log_message(size_t i) {
  const line *l = log_at(i);
  return l ? l->message : NULL;
}

/* ---- the imports ----------------------------------------------------- */

void cap_raw_log(int level, const char *message) {
  line *l = cap_alloc(sizeof *l);
  *l = (line){NULL, (cap_level)level, cap_strdup(message)};
  if (fake.last_log)
    fake.last_log->next = l;
  else
    fake.logs = l;
  fake.last_log = l;
  fake.log_count++;
}

char *cap_raw_config(void) { return cap_strdup(fake.config); }

static bool reads_fail(char **err) {
  if (fake.read_error == NULL)
    return false;
  *err = cap_strdup(fake.read_error);
  return true;
}

bool cap_raw_get_object(const char *api_version, const char *resource,
                        const char *ns, const char *name, char **out,
                        size_t *out_len, char **err) {
  if (reads_fail(err))
    return false;
  *out = NULL;
  for (stored *s = fake.objects; s; s = s->next) {
    if (same_key(s, api_version, resource, ns ? ns : "", name)) {
      *out = cap_json_write(s->object);
      *out_len = strlen(*out);
    }
  }
  return true;
}

/* One requirement of a selector: `k=v`, `k==v`, `k!=v`, `k`, `!k`. */
typedef struct {
  char op; /* '=', '!', 'e' (exists), 'a' (absent) */
  const char *key, *value;
} requirement;

static char *trim(char *s) {
  while (*s == ' ')
    s++;
  for (char *e = s + strlen(s); e > s && e[-1] == ' '; e--)
    e[-1] = '\0';
  return s;
}

static requirement parse_requirement(char *s) {
  char *at;
  if ((at = strstr(s, "!=")) != NULL) {
    *at = '\0';
    return (requirement){'!', trim(s), trim(at + 2)};
  }
  if ((at = strchr(s, '=')) != NULL) {
    *at = '\0';
    return (requirement){'=', trim(s), trim(at + (at[1] == '=' ? 2 : 1))};
  }
  s = trim(s);
  if (s[0] == '!')
    return (requirement){'a', trim(s + 1), NULL};
  return (requirement){'e', s, NULL};
}

/* The value a requirement reads: a label, or a dotted field path. */
static const char *selected(const cap_json *obj, const char *key, bool labels) {
  if (labels)
    return cap_object_label(obj, key);
  const cap_json *at = obj;
  for (char *part = cap_strdup(key), *dot; part && at; part = dot) {
    dot = strchr(part, '.');
    if (dot)
      *dot++ = '\0';
    at = cap_json_get(at, part);
  }
  return cap_json_string_or(at, "");
}

static bool matches(const cap_json *obj, const char *selector, bool labels) {
  if (selector == NULL)
    return true;
  char *rest = cap_strdup(selector);
  for (char *part = rest; part != NULL; part = rest) {
    char *comma = strchr(part, ',');
    rest = comma ? comma + 1 : NULL;
    if (comma)
      *comma = '\0';
    if (trim(part)[0] == '\0')
      continue;
    requirement r = parse_requirement(part);
    const char *v = selected(obj, r.key, labels);
    bool ok = r.op == '='   ? v && !strcmp(v, r.value)
              : r.op == '!' ? !v || strcmp(v, r.value)
              : r.op == 'e' ? v != NULL
                            : v == NULL;
    if (!ok)
      return false;
  }
  return true;
}

bool cap_raw_list_objects(const char *api_version, const char *resource,
                          const char *ns, const char *label_selector,
                          const char *field_selector, char **out,
                          size_t *out_len, char **err) {
  if (reads_fail(err))
    return false;
  cap_json *items = cap_json_array();
  for (stored *s = fake.objects; s; s = s->next) {
    if (!strcmp(s->api_version, api_version) &&
        !strcmp(s->resource, resource) && (!ns || !strcmp(ns, s->ns)) &&
        matches(s->object, label_selector, true) &&
        matches(s->object, field_selector, false))
      cap_json_append(items, cap_json_clone(s->object));
  }
  cap_json *list = cap_json_object();
  cap_json_set(list, "apiVersion", cap_json_str(api_version));
  cap_json_set(list, "kind", cap_json_str("List"));
  cap_json_set(list, "items", items);
  *out = cap_json_write(list);
  *out_len = strlen(*out);
  return true;
}

bool cap_raw_watermark(const char *api_version, const char *resource,
                       char **out, char **err) {
  if (reads_fail(err))
    return false;
  unsigned long changes = 0;
  for (mark *m = fake.marks; m; m = m->next) {
    if (!strcmp(m->api_version, api_version) && !strcmp(m->resource, resource))
      changes = m->changes;
  }
  *out = cap_sprintf("%lu", changes);
  return true;
}

/* ---- requests and patches ------------------------------------------ */

static cap_json *gv_pair(const char *api_version, const char *last_key,
                         const char *last) {
  const char *slash = strchr(api_version, '/');
  cap_json *v = cap_json_object();
  cap_json_set(v, "group", slash ? cap_json_strn(api_version, (size_t)(slash - api_version))
                                 : cap_json_str(""));
  cap_json_set(v, "version", cap_json_str(slash ? slash + 1 : api_version));
  cap_json_set(v, last_key, cap_json_str(last));
  return v;
}

cap_admission_request *cap_testing_request(const char *operation,
                                           const char *api_version,
                                           const char *resource,
                                           const char *kind, const char *ns,
                                           const char *object_json) {
  cap_error err = {0};
  cap_json *object = cap_json_parse_str(object_json, &err);
  if (object == NULL) {
    fprintf(stderr, "cap_testing_request: %s\n", err.message);
    abort();
  }
  cap_json *r = cap_json_object();
  cap_json_set(r, "uid", cap_json_str("test-uid"));
  cap_json_set(r, "kind", gv_pair(api_version, "kind", kind));
  cap_json_set(r, "resource", gv_pair(api_version, "resource", resource));
  cap_json_set(r, "name", cap_json_str(cap_object_name(object)));
  cap_json_set(r, "namespace", cap_json_str(ns));
  cap_json_set(r, "operation", cap_json_str(operation));
  cap_json *user = cap_json_object();
  cap_json_set(user, "username", cap_json_str("test"));
  cap_json_set(r, "userInfo", user);
  cap_json_set(r, strcmp(operation, "DELETE") ? "object" : "oldObject", object);
  cap_json *review = cap_json_object();
  cap_json_set(review, "request", r);
  return cap_admission_request_from(review, NULL);
}

char *cap_testing_review_text(const cap_admission_request *req) {
  cap_json *review = cap_json_object();
  cap_json_set(review, "apiVersion", cap_json_str("admission.k8s.io/v1"));
  cap_json_set(review, "kind", cap_json_str("AdmissionReview"));
  cap_json_set(review, "request", cap_json_clone(req->json));
  return cap_json_write(review);
}

cap_json *cap_testing_apply_patch(const cap_json *object,
                                  const cap_admission_response *resp,
                                  cap_error *err) {
  return cap_patch_apply(object, resp->patch, err);
}
