#ifndef RIG_CLINUX_H
#define RIG_CLINUX_H
// Only what Swift cannot import from Glibc: variadic calls and ioctl request macros.
#include <stdint.h>

/// prctl(PR_SET_TIMERSLACK, ns): prctl is variadic, so Swift cannot call it directly.
int rig_set_timer_slack(unsigned long nanoseconds);

// evdev ioctl requests and struct sizes (RigGamepad).
#include "CLinuxInput.h"

#endif
