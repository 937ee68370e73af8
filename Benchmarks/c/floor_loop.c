// The floor under any loop on this machine: a C loop that does nothing but sleep to
// absolute CLOCK_MONOTONIC deadlines, measured as `rig bench loop` measures rig (lateness
// in 1 µs buckets, p50/p99/p99.9/max; missed = a whole period late). Run it as rig's loop
// runs (SCHED_FIFO 50, locked memory) to see what the kernel and the machine allow:
//
//   gcc -O2 -o /tmp/floor_loop Benchmarks/c/floor_loop.c && chrt -f 50 /tmp/floor_loop 200 60
//
// Not part of rig's build; a yardstick for docs/performance.md.
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#define BUCKETS 100000

static unsigned buckets[BUCKETS];

static double percentile(long count, double fraction, long long max_ns) {
    long target = (long)(count * fraction + 0.999999);
    if (target < 1) target = 1;
    long seen = 0;
    for (int us = 0; us < BUCKETS; us++) {
        seen += buckets[us];
        if (seen >= target) { double v = us + 1; return v < max_ns / 1e3 ? v : max_ns / 1e3; }
    }
    return max_ns / 1e3;
}

static long long ns(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

int main(int argc, char **argv) {
    double rate = argc > 1 ? atof(argv[1]) : 200, seconds = argc > 2 ? atof(argv[2]) : 10;
    long period = (long)(1e9 / rate + 0.5), ticks = (long)(rate * seconds + 0.5), missed = 0;
    long long max_ns = 0;
    if (argc > 3 && strcmp(argv[3], "realtime") == 0) {
        struct sched_param param = { .sched_priority = 50 };
        sched_setscheduler(0, SCHED_FIFO, &param);  // as rig: best effort, measured either way
        mlockall(MCL_CURRENT | MCL_FUTURE);
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    }
    struct timespec start, now, deadline, c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long tick = 1; tick <= ticks; tick++) {
        long long d = ns(&start) + tick * period;
        deadline.tv_sec = d / 1000000000LL;
        deadline.tv_nsec = d % 1000000000LL;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) {}
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long late = ns(&now) > d ? ns(&now) - d : 0;
        long us = late / 1000;
        buckets[us < BUCKETS ? us : BUCKETS - 1]++;
        if (late > max_ns) max_ns = late;
        if (late >= period) missed++;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    printf("{\"ticks\": %ld, \"missed\": %ld, \"lateness_us\": {\"p50\": %.0f, \"p99\": %.0f, \"p999\": %.0f, \"max\": %.1f}, "
           "\"cpu_us_per_tick\": %.1f}\n", ticks, missed, percentile(ticks, 0.5, max_ns), percentile(ticks, 0.99, max_ns),
           percentile(ticks, 0.999, max_ns), max_ns / 1e3, (ns(&c1) - ns(&c0)) / 1e3 / ticks);
    return 0;
}
