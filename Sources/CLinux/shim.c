#define _GNU_SOURCE
#include <sys/timex.h>
#include "CLinux.h"
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>

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
