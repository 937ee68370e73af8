#define _GNU_SOURCE
#include <sys/timex.h>
#include "CLinux.h"
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int rig_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

int rig_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

int rig_thread_page_faults(long *minor, long *major) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return -1;
    *minor = usage.ru_minflt;
    *major = usage.ru_majflt;
    return 0;
}

__attribute__((noinline)) void rig_prefault_stack(size_t bytes) {
    // A variable-length array, so the size is the caller's; volatile so the stores stay.
    if (bytes == 0) return;
    volatile unsigned char stack[bytes];
    for (size_t i = 0; i < bytes; i += 4096) stack[i] = 0;
    stack[bytes - 1] = 0;
}

int rig_clock_synchronised(long *esterror_us) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (state < 0) return -1;
    *esterror_us = tx.esterror;
    return (state == TIME_ERROR || (tx.status & STA_UNSYNC)) ? 0 : 1;
}

long rig_filesystem_type(const char *path) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return -1;
    return (long)fs.f_type;
}

static volatile int rig_signal_fd = -1;

static void rig_signal_handler(int signo) {
    int saved = errno;
    unsigned char byte = (unsigned char)signo;
    if (rig_signal_fd >= 0) {
        ssize_t written = write(rig_signal_fd, &byte, 1);
        (void)written;
    }
    errno = saved;
}

int rig_signal_forward(int fd, int signo) {
    rig_signal_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = rig_signal_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signo, &action, NULL);
}
