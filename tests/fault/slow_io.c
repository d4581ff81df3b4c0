/* Fault injection for the stall watchdog's tests: preloaded (LD_PRELOAD), it makes every read of
 * a file whose path contains $TRAINIO_FAULT_SLOW_PATH sleep $TRAINIO_FAULT_SLOW_SECONDS first, as
 * a read from a hung mount would (fractions of a second too, for a merely slow one), and every
 * write too when $TRAINIO_FAULT_SLOW_WRITES is 1 (a slow rank in a checkpoint), and every rename,
 * unlink and mkdir of a path containing it when $TRAINIO_FAULT_SLOW_NAMES is 1 (a metadata server
 * that does not answer). With $TRAINIO_FAULT_SLOW_SERIAL=1 the delays are served one at a time, as
 * by a device with one queue: a call waits for those before it, so latency rises with the calls in
 * flight (a saturated storage); without it every call waits the same, however many run (latency
 * flat). With $TRAINIO_FAULT_SLOW_SHARED naming a file as well, the one queue is shared by every
 * process that names it (a lock on that file): ranks on one host then share one slow device, so
 * each rank added takes bandwidth from the others. Nothing else changes; without the variables it
 * only forwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int is_slow(int fd) {
  const char* want = getenv("TRAINIO_FAULT_SLOW_PATH");
  if (!want || !*want) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return strstr(path, want) != NULL;
}

static pthread_mutex_t device = PTHREAD_MUTEX_INITIALIZER;

static void sleep_as_told(void) {
  const char* text = getenv("TRAINIO_FAULT_SLOW_SECONDS");
  const double seconds = text ? strtod(text, NULL) : 3600.0;  /* fractions too: "0.1" */
  const char* serial_text = getenv("TRAINIO_FAULT_SLOW_SERIAL");
  const int serial = serial_text && strcmp(serial_text, "1") == 0;
  struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  /* The shared queue's lock file, opened once (the threads of this process take `device` first:
   * a lock on one open file does not exclude the threads that share it). */
  static int shared = -2;
  if (serial) pthread_mutex_lock(&device);
  if (serial && shared == -2) {
    const char* path = getenv("TRAINIO_FAULT_SLOW_SHARED");
    shared = path && *path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
  }
  if (serial && shared >= 0) flock(shared, LOCK_EX);
  while (nanosleep(&t, &t) != 0) {
  }
  if (serial && shared >= 0) flock(shared, LOCK_UN);
  if (serial) pthread_mutex_unlock(&device);
}

static void stall(int fd) {
  if (is_slow(fd)) sleep_as_told();
}

/* A call on a path name: stalled when names are slow and the path contains the slow path. */
static void stall_name(const char* path) {
  const char* on = getenv("TRAINIO_FAULT_SLOW_NAMES");
  const char* want = getenv("TRAINIO_FAULT_SLOW_PATH");
  if (on && strcmp(on, "1") == 0 && want && *want && path && strstr(path, want)) sleep_as_told();
}

ssize_t read(int fd, void* buf, size_t count) {
  static ssize_t (*real)(int, void*, size_t);
  if (!real) real = (ssize_t (*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
  stall(fd);
  return real(fd, buf, count);
}

ssize_t pread64(int fd, void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, void*, size_t, off_t);
  if (!real) real = (ssize_t (*)(int, void*, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
  stall(fd);
  return real(fd, buf, count, offset);
}

ssize_t pread(int fd, void* buf, size_t count, off_t offset) { return pread64(fd, buf, count, offset); }

static void stall_write(int fd) {
  const char* on = getenv("TRAINIO_FAULT_SLOW_WRITES");
  if (on && strcmp(on, "1") == 0) stall(fd);
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real)(int, const void*, size_t);
  if (!real) real = (ssize_t (*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  stall_write(fd);
  return real(fd, buf, count);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t (*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  stall_write(fd);
  return real(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) { return pwrite64(fd, buf, count, offset); }

int rename(const char* from, const char* to) {
  static int (*real)(const char*, const char*);
  if (!real) real = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  stall_name(from);
  return real(from, to);
}

int unlink(const char* path) {
  static int (*real)(const char*);
  if (!real) real = (int (*)(const char*))dlsym(RTLD_NEXT, "unlink");
  stall_name(path);
  return real(path);
}

int mkdir(const char* path, mode_t mode) {
  static int (*real)(const char*, mode_t);
  if (!real) real = (int (*)(const char*, mode_t))dlsym(RTLD_NEXT, "mkdir");
  stall_name(path);
  return real(path, mode);
}
