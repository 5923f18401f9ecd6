/*
 * A fault-injecting layer under the process, loaded with LD_PRELOAD: while the file named by
 * FSYNC_FAULT_ARM exists, fsync and fdatasync of the file named by FSYNC_FAULT_PATH fail with EIO,
 * as a failing disk makes them; with FSYNC_FAULT_SLOW_MS set they succeed instead, that many milliseconds
 * late, as a slow or overloaded disk makes them. While the file named by FSYNC_FAULT_ENOSPC_ARM exists,
 * writes to that file fail with ENOSPC, as a full disk's do. Everything else passes through to libc. Node's libuv thread pool,
 * its *Sync calls and SQLite all reach the kernel through these two calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Sleeps FSYNC_FAULT_SLOW_MS and answers 0 when set (the call then goes on to the real one), else -1. */
static int slow(void) {
  const char *ms = getenv("FSYNC_FAULT_SLOW_MS");
  struct timespec delay;
  long n;
  if (!ms) return -1;
  n = atol(ms);
  delay.tv_sec = n / 1000;
  delay.tv_nsec = (n % 1000) * 1000000L;
  while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
  }
  return 0;
}

/* Whether the file named by the variable `arm_var` exists and `fd` is the file FSYNC_FAULT_PATH names. */
static int armed(const char *arm_var, int fd) {
  const char *arm = getenv(arm_var);
  const char *target = getenv("FSYNC_FAULT_PATH");
  struct stat st;
  char link[64], path[4096];
  ssize_t n;
  if (!arm || !target || stat(arm, &st) != 0) return 0;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = 0;
  return strcmp(path, target) == 0;
}

static int faulty(int fd) { return armed("FSYNC_FAULT_ARM", fd); }
static int full(int fd) { return armed("FSYNC_FAULT_ENOSPC_ARM", fd); }

int fdatasync(int fd) {
  static int (*real)(int);
  if (faulty(fd) && slow() != 0) {
    errno = EIO;
    return -1;
  }
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}

int fsync(int fd) {
  static int (*real)(int);
  if (faulty(fd) && slow() != 0) {
    errno = EIO;
    return -1;
  }
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}

#define FULL_OR_REAL(name, ret, params, args)                        \
  ret name params {                                                  \
    static ret(*real) params;                                        \
    if (full(fd)) {                                                  \
      errno = ENOSPC;                                                \
      return -1;                                                     \
    }                                                                \
    if (!real) real = (ret(*) params)dlsym(RTLD_NEXT, #name);        \
    return real args;                                                \
  }

FULL_OR_REAL(write, ssize_t, (int fd, const void *buf, size_t n), (fd, buf, n))
FULL_OR_REAL(pwrite, ssize_t, (int fd, const void *buf, size_t n, off_t at), (fd, buf, n, at))
FULL_OR_REAL(pwrite64, ssize_t, (int fd, const void *buf, size_t n, off64_t at), (fd, buf, n, at))
FULL_OR_REAL(writev, ssize_t, (int fd, const struct iovec *iov, int count), (fd, iov, count))
FULL_OR_REAL(pwritev, ssize_t, (int fd, const struct iovec *iov, int count, off_t at), (fd, iov, count, at))
