/* A tiny test runner for plugins' unit tests (C has none built in):
 *   static void rejects_bare(void) { CHECK(x); CHECK_STR(a, b); }
 *   int main(void) { RUN(rejects_bare); return cap_check_done(); }
 * prints `ok - name` / `FAIL - name` per test and a last line
 * `N passed, N failed`; the exit status is 1 when a test failed.
 * Include it in one file of a test program. */
#ifndef CAPSTAN_CHECK_H
#define CAPSTAN_CHECK_H

#include <stdio.h>
#include <string.h>

static int cap_check_passed, cap_check_failed, cap_check_current;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,        \
              #cond);                                                         \
      cap_check_current = 1;                                                  \
    }                                                                         \
  } while (0)

#define CHECK_STR(actual, expected)                                           \
  do {                                                                        \
    const char *a_ = (actual), *e_ = (expected);                              \
    if (a_ == NULL || e_ == NULL ? a_ != e_ : strcmp(a_, e_) != 0) {          \
      fprintf(stderr, "%s:%d: %s\n  is: %s\n  expected: %s\n", __FILE__,      \
              __LINE__, #actual, a_ ? a_ : "(null)", e_ ? e_ : "(null)");     \
      cap_check_current = 1;                                                  \
    }                                                                         \
  } while (0)

#define RUN(test) cap_check_run(#test, test)

static inline void cap_check_run(const char *name, void (*test)(void)) {
  cap_check_current = 0;
  test();
  if (cap_check_current)
    cap_check_failed++;
  else
    cap_check_passed++;
  printf("%s - %s\n", cap_check_current ? "FAIL" : "ok", name);
}

static inline int cap_check_done(void) {
  printf("%d passed, %d failed\n", cap_check_passed, cap_check_failed);
  return cap_check_failed ? 1 : 0;
}

#endif
