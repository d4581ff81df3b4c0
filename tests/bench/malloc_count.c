/* Counts heap allocations (malloc, calloc, realloc, aligned_alloc, memalign, posix_memalign;
 * C++'s operator new goes through malloc) over a whole process and appends the count to the file
 * named by $TRAINIO_MALLOC_COUNT_FILE at exit. Preloaded by tests/bench/bench.py, which runs a
 * workload twice with different numbers of epochs: the difference over the difference in samples
 * is the allocations per sample, set-up and results left out. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

static atomic_ullong allocations;

static void counted(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void* malloc(size_t n) {
  counted();
  return __libc_malloc(n);
}
void* calloc(size_t count, size_t n) {
  counted();
  return __libc_calloc(count, n);
}
void* realloc(void* p, size_t n) {
  counted();
  return __libc_realloc(p, n);
}
void* memalign(size_t alignment, size_t n) {
  counted();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  counted();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  counted();
  void* p = __libc_memalign(alignment, n);
  if (!p) return 12; /* ENOMEM */
  *out = p;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  const char* path = getenv("TRAINIO_MALLOC_COUNT_FILE");
  if (!path) return;
  FILE* f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%llu\n", (unsigned long long)atomic_load(&allocations));
  fclose(f);
}
