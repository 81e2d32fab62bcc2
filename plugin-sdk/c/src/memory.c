/* The call's arena (every JSON value, string and response of a call) and
 * the malloc'd byte buffer the writer fills. */
#include "capstan/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
  struct chunk *prev;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} chunk;

static chunk *arena_top;

enum { CHUNK_SIZE = 64 * 1024 };

static void out_of_memory(void) {
  fputs("capstan plugin: out of memory\n", stderr);
  abort();
}

void *cap_alloc(size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (arena_top == NULL || arena_top->size - arena_top->used < size) {
    size_t want = size > CHUNK_SIZE ? size : CHUNK_SIZE;
    if (want > SIZE_MAX - sizeof(chunk))
      out_of_memory();
    chunk *c = malloc(sizeof(chunk) + want);
    if (c == NULL)
      out_of_memory();
    c->prev = arena_top;
    c->used = 0;
    c->size = want;
    arena_top = c;
  }
  void *p = arena_top->data + arena_top->used;
  arena_top->used += size;
  memset(p, 0, size);
  return p;
}

void cap_arena_reset(void) {
  while (arena_top != NULL) {
    chunk *prev = arena_top->prev;
    free(arena_top);
    arena_top = prev;
  }
}

char *cap_strndup(const char *s, size_t len) {
  char *p = cap_alloc(len + 1);
  if (len > 0)
    memcpy(p, s, len);
  return p;
}

char *cap_strdup(const char *s) { return cap_strndup(s, strlen(s)); }

char *cap_vsprintf(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) {
    va_end(again);
    return cap_strdup("");
  }
  char *p = cap_alloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, again);
  va_end(again);
  return p;
}

char *cap_sprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = cap_vsprintf(fmt, ap);
  va_end(ap);
  return p;
}

void *cap_errorf(cap_error *err, const char *fmt, ...) {
  if (err != NULL) {
    va_list ap;
    va_start(ap, fmt);
    err->message = cap_vsprintf(fmt, ap);
    va_end(ap);
  }
  return NULL;
}

void cap_buf_put(cap_buf *b, const char *bytes, size_t len) {
  if (b->cap - b->len < len + 1) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < len + 1) {
      if (cap > SIZE_MAX / 2)
        out_of_memory();
      cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (data == NULL)
      out_of_memory();
    b->data = data;
    b->cap = cap;
  }
  if (len > 0)
    memcpy(b->data + b->len, bytes, len);
  b->len += len;
  b->data[b->len] = '\0';
}

void cap_buf_puts(cap_buf *b, const char *s) { cap_buf_put(b, s, strlen(s)); }

void cap_buf_printf(cap_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = cap_vsprintf(fmt, ap);
  va_end(ap);
  cap_buf_puts(b, s);
}

char *cap_buf_finish(cap_buf *b) {
  char *s = cap_strndup(b->data ? b->data : "", b->len);
  cap_buf_free(b);
  return s;
}

void cap_buf_free(cap_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
