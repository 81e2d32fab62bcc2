/* The JSON parser: one pass, no recursion (an explicit stack of open
 * containers, at most CAP_JSON_MAX_DEPTH deep), errors that name the byte
 * offset and what was expected. */
#include "capstan/json.h"

#include <string.h>

typedef struct {
  const char *s;
  size_t len, pos;
  cap_error *err;
} parser;

static void *fail(parser *p, const char *what) {
  return cap_errorf(p->err, "invalid JSON at byte %zu: %s", p->pos, what);
}

static void skip_ws(parser *p) {
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      return;
    p->pos++;
  }
}

static int peek(parser *p) {
  return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int hex4(parser *p) {
  if (p->len - p->pos < 4)
    return -1;
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p->s[p->pos + i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  p->pos += 4;
  return v;
}

static void put_utf8(cap_buf *b, unsigned cp) {
  char out[4];
  size_t n;
  if (cp < 0x80) {
    out[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  cap_buf_put(b, out, n);
}

/* \uXXXX (after the "\u"), with surrogate pairs; lone surrogates become
 * U+FFFD as Go's decoder does. */
static bool unicode_escape(parser *p, cap_buf *b) {
  int cp = hex4(p);
  if (cp < 0)
    return fail(p, "expected 4 hex digits after \\u"), false;
  if (cp >= 0xD800 && cp < 0xDC00 && p->len - p->pos >= 6 &&
      p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
    size_t back = p->pos;
    p->pos += 2;
    int lo = hex4(p);
    if (lo >= 0xDC00 && lo < 0xE000) {
      put_utf8(b, 0x10000 + (((unsigned)cp - 0xD800) << 10) +
                      ((unsigned)lo - 0xDC00));
      return true;
    }
    p->pos = back;
  }
  put_utf8(b, cp >= 0xD800 && cp < 0xE000 ? 0xFFFD : (unsigned)cp);
  return true;
}

static bool escape(parser *p, cap_buf *b) {
  char c = p->s[p->pos++];
  const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
  const char *at = c ? strchr(from, c) : NULL;
  if (at != NULL) {
    cap_buf_put(b, to + (at - from), 1);
    return true;
  }
  if (c == 'u')
    return unicode_escape(p, b);
  p->pos--;
  return fail(p, "invalid escape in a string"), false;
}

/* A string literal at p->pos (the opening quote); its decoded text. */
static char *string(parser *p, size_t *len) {
  p->pos++;
  size_t start = p->pos;
  while (p->pos < p->len && p->s[p->pos] != '"' && p->s[p->pos] != '\\' &&
         (unsigned char)p->s[p->pos] >= 0x20)
    p->pos++;
  if (p->pos < p->len && p->s[p->pos] == '"') { /* no escapes: one copy */
    *len = p->pos - start;
    p->pos++;
    return cap_strndup(p->s + start, *len);
  }
  cap_buf b = {0};
  cap_buf_put(&b, p->s + start, p->pos - start);
  while (p->pos < p->len) {
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '"') {
      p->pos++;
      *len = b.len;
      return cap_buf_finish(&b);
    }
    if (c < 0x20) {
      cap_buf_free(&b);
      return fail(p, "control character in a string");
    }
    p->pos++;
    if (c == '\\') {
      if (p->pos >= p->len)
        break;
      if (!escape(p, &b)) {
        cap_buf_free(&b);
        return NULL;
      }
    } else {
      cap_buf_put(&b, (const char *)&c, 1);
    }
  }
  cap_buf_free(&b);
  return fail(p, "unterminated string");
}

static size_t digits(parser *p) {
  size_t n = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
    p->pos++, n++;
  return n;
}

static cap_json *number(parser *p) {
  size_t start = p->pos;
  if (peek(p) == '-')
    p->pos++;
  if (peek(p) == '0')
    p->pos++;
  else if (digits(p) == 0)
    return fail(p, "expected a digit");
  if (peek(p) == '.') {
    p->pos++;
    if (digits(p) == 0)
      return fail(p, "expected a digit after '.'");
  }
  if (peek(p) == 'e' || peek(p) == 'E') {
    p->pos++;
    if (peek(p) == '+' || peek(p) == '-')
      p->pos++;
    if (digits(p) == 0)
      return fail(p, "expected a digit in the exponent");
  }
  cap_json *v = cap_alloc(sizeof *v);
  v->type = CAP_JSON_NUMBER;
  v->len = p->pos - start;
  v->text = cap_strndup(p->s + start, v->len);
  return v;
}

static cap_json *literal(parser *p, const char *word, cap_json_type type) {
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
    return fail(p, "expected a value");
  p->pos += n;
  cap_json *v = cap_alloc(sizeof *v);
  v->type = type;
  return v;
}

/* A value at p->pos; containers come back empty (the caller fills them). */
static cap_json *value(parser *p) {
  switch (peek(p)) {
  case '{':
  case '[': {
    cap_json *v = cap_alloc(sizeof *v);
    v->type = p->s[p->pos++] == '{' ? CAP_JSON_OBJECT : CAP_JSON_ARRAY;
    return v;
  }
  case '"': {
    cap_json *v = cap_alloc(sizeof *v);
    v->type = CAP_JSON_STRING;
    v->text = string(p, &v->len);
    return v->text ? v : NULL;
  }
  case 't':
    return literal(p, "true", CAP_JSON_TRUE);
  case 'f':
    return literal(p, "false", CAP_JSON_FALSE);
  case 'n':
    return literal(p, "null", CAP_JSON_NULL);
  case -1:
    return fail(p, "unexpected end of input");
  default:
    if (peek(p) == '-' || (peek(p) >= '0' && peek(p) <= '9'))
      return number(p);
    return fail(p, "expected a value");
  }
}

static void attach(cap_json *parent, cap_json *child) {
  if (parent->last)
    parent->last->next = child;
  else
    parent->first = child;
  parent->last = child;
  parent->count++;
}

/* `"key" :` inside an object; sets the key of the next value. */
static bool member_key(parser *p, const char **key, size_t *key_len) {
  skip_ws(p);
  if (peek(p) != '"')
    return fail(p, "expected a string key"), false;
  *key = string(p, key_len);
  if (*key == NULL)
    return false;
  skip_ws(p);
  if (peek(p) != ':')
    return fail(p, "expected ':' after an object key"), false;
  p->pos++;
  return true;
}

/* After a value inside `top`: ',' (then the next key) or the closing
 * bracket. Returns 1 for another member, 0 for closed, -1 for an error. */
static int after_member(parser *p, cap_json *top, const char **key,
                        size_t *key_len) {
  skip_ws(p);
  bool object = top->type == CAP_JSON_OBJECT;
  int c = peek(p);
  if (c == ',') {
    p->pos++;
    if (object && !member_key(p, key, key_len))
      return -1;
    return 1;
  }
  if (c == (object ? '}' : ']')) {
    p->pos++;
    return 0;
  }
  fail(p, object ? "expected ',' or '}' in an object"
                 : "expected ',' or ']' in an array");
  return -1;
}

cap_json *cap_json_parse(const char *text, size_t len, cap_error *err) {
  parser p = {text, len, 0, err};
  cap_json **stack = cap_alloc(sizeof(cap_json *) * CAP_JSON_MAX_DEPTH);
  size_t depth = 0;
  const char *key = NULL;
  size_t key_len = 0;
  cap_json *root = NULL;
  for (;;) {
    skip_ws(&p);
    cap_json *v = value(&p);
    if (v == NULL)
      return NULL;
    if (depth > 0) {
      v->key = key, v->key_len = key_len;
      attach(stack[depth - 1], v);
    } else {
      root = v;
    }
    bool open = v->type == CAP_JSON_OBJECT || v->type == CAP_JSON_ARRAY;
    if (open) {
      if (depth == CAP_JSON_MAX_DEPTH)
        return fail(&p, "nested too deeply");
      stack[depth++] = v;
      skip_ws(&p);
      int close = v->type == CAP_JSON_OBJECT ? '}' : ']';
      if (peek(&p) != close) {
        if (v->type == CAP_JSON_OBJECT && !member_key(&p, &key, &key_len))
          return NULL;
        continue;
      }
      p.pos++;
      depth--;
    }
    int next = 0;
    while (depth > 0 &&
           (next = after_member(&p, stack[depth - 1], &key, &key_len)) == 0)
      depth--;
    if (next < 0)
      return NULL;
    if (depth == 0)
      break;
  }
  skip_ws(&p);
  if (p.pos != p.len)
    return fail(&p, "unexpected data after the value");
  return root;
}

cap_json *cap_json_parse_str(const char *text, cap_error *err) {
  return cap_json_parse(text, strlen(text), err);
}
