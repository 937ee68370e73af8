#ifndef RIG_CLINUX_H
#define RIG_CLINUX_H
// Only what Swift cannot import from Glibc: variadic calls and ioctl request macros.
#include <stddef.h>
#include <stdint.h>

/// prctl(PR_SET_TIMERSLACK, ns): prctl is variadic, so Swift cannot call it directly.
int rig_set_timer_slack(unsigned long nanoseconds);

/// prctl(PR_SET_NAME, name): the calling thread's name (the kernel keeps 15 bytes).
int rig_set_thread_name(const char *name);

/// Writes to `bytes` of the calling thread's stack below the caller's frame, so that those
/// pages are faulted in (and, under mlockall, locked) now rather than mid-run. Swift has no
/// way to grow its own stack by a chosen amount.
void rig_prefault_stack(size_t bytes);

/// getrusage(RUSAGE_THREAD) page-fault counts: RUSAGE_THREAD needs _GNU_SOURCE, which
/// Swift's Glibc module does not define. Returns 0, or -1 with errno.
int rig_thread_page_faults(long *minor, long *major);

/// Whether the kernel's clock is synchronised (adjtimex: not TIME_ERROR, STA_UNSYNC clear):
/// 1 yes, 0 no, -1 with errno. `esterror_us`: the kernel's estimated error. <sys/timex.h> is
/// not in Swift's Glibc module.
int rig_clock_synchronised(long *esterror_us);

/// statfs(path)'s f_type, the filesystem's magic number (linux/magic.h): <sys/vfs.h> is not
/// in Swift's Glibc module. Returns -1 with errno.
long rig_filesystem_type(const char *path);

/// Catches `signo` with a handler that writes its number (one byte) to `fd`, a pipe's
/// non-blocking write end, and returns 0 (or -1 with errno). The handler does nothing else
/// (write(2) is async-signal-safe); a thread reads the pipe. Installed synchronously, so a
/// signal that comes the instant after is never lost (a dispatch signal source registers
/// later, and with the signal ignored until then, drops it). Writes to a closed pipe still
/// fail with EPIPE once SIGPIPE is caught.
int rig_signal_forward(int fd, int signo);

/// The package's version ("0.2.0+git20251126.120301.a409d93"), or NULL in a build that was
/// not made by scripts/package-deb, which links in a definition that overrides this weak one:
/// a version string cannot be passed to a Swift build any other way without recompiling.
const char *rig_build_version(void);

// evdev ioctl requests and struct sizes (RigGamepad).
#include "CLinuxInput.h"

#endif
