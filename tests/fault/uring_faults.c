/* Fault injection for io_uring's tests: preloaded (LD_PRELOAD), it stands between trainio and
 * liburing.
 *  - $TRAINIO_FAULT_URING_REFUSE = N makes the first N calls of io_uring_submit_and_get_events
 *    return -$TRAINIO_FAULT_URING_ERRNO (EAGAIN when unset) without submitting anything, as a
 *    kernel short of memory does; "all" refuses every call.
 *  - $TRAINIO_FAULT_URING_FREEZE = S makes every submission and every wait for a completion
 *    (__io_uring_get_cqe) sleep S seconds first, as calls into a hung device would (a read served
 *    from the page cache completes inside the submission, so both are frozen).
 * Without the variables it only forwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct io_uring;
struct io_uring_cqe;

static void freeze(void) {
  const char* text = getenv("TRAINIO_FAULT_URING_FREEZE");
  if (!text || !*text) return;
  const double seconds = strtod(text, NULL);
  struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
}

int io_uring_submit_and_get_events(struct io_uring* ring) {
  static int (*real)(struct io_uring*);
  static long refused;
  if (!real) real = (int (*)(struct io_uring*))dlsym(RTLD_NEXT, "io_uring_submit_and_get_events");
  freeze();
  const char* limit = getenv("TRAINIO_FAULT_URING_REFUSE");
  if (limit && *limit) {
    const int always = strcmp(limit, "all") == 0;
    if (always || __atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED) < strtol(limit, NULL, 10)) {
      const char* err = getenv("TRAINIO_FAULT_URING_ERRNO");
      return -(err && *err ? atoi(err) : EAGAIN);
    }
  }
  return real(ring);
}

int __io_uring_get_cqe(struct io_uring* ring, struct io_uring_cqe** cqe_ptr, unsigned submit, unsigned wait_nr,
                       void* sigmask) {
  static int (*real)(struct io_uring*, struct io_uring_cqe**, unsigned, unsigned, void*);
  if (!real)
    real = (int (*)(struct io_uring*, struct io_uring_cqe**, unsigned, unsigned, void*))dlsym(RTLD_NEXT,
                                                                                           "__io_uring_get_cqe");
  if (wait_nr > 0) freeze();
  return real(ring, cqe_ptr, submit, wait_nr, sigmask);
}
