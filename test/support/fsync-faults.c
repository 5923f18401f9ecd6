/*
 * A fault-injecting layer under the process, loaded with LD_PRELOAD: while the file named by
 * FSYNC_FAULT_ARM exists, fsync and fdatasync of the file named by FSYNC_FAULT_PATH fail with EIO,
 * as a failing disk makes them. Everything else passes through to libc. Node's libuv thread pool,
 * its *Sync calls and SQLite all reach the kernel through these two calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int faulty(int fd) {
  const char *arm = getenv("FSYNC_FAULT_ARM");
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

int fdatasync(int fd) {
  static int (*real)(int);
  if (faulty(fd)) {
    errno = EIO;
    return -1;
  }
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}

int fsync(int fd) {
  static int (*real)(int);
  if (faulty(fd)) {
    errno = EIO;
    return -1;
  }
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}
