#ifndef RIG_CLINUX_INPUT_H
#define RIG_CLINUX_INPUT_H
// evdev (linux/input.h): the event codes (EV_*, ABS_*, BTN_*, SYN_*) import into Swift as
// constants; the ioctl request macros (_IOR/_IOC with a length argument) and the
// variadic ioctl(2) do not, so these helpers only hand them over. No logic here.
#include <linux/input.h>
#include <stddef.h>

/// EVIOCGABS(abs): read a struct input_absinfo (value, minimum, maximum, fuzz, flat, resolution).
unsigned long rig_eviocgabs(unsigned int abs);
/// EVIOCGKEY(len): the current state of every key/button as a bitmap of `len` bytes.
unsigned long rig_eviocgkey(unsigned int len);
/// EVIOCGBIT(ev, len): the codes of event type `ev` (0 = the event types) the device reports.
unsigned long rig_eviocgbit(unsigned int ev, unsigned int len);
/// EVIOCGNAME(len): the device's name, up to `len` bytes.
unsigned long rig_eviocgname(unsigned int len);
/// sizeof(struct input_event): 24 on 64-bit Linux, pinned by a test.
size_t rig_input_event_size(void);
/// sizeof(struct input_absinfo): 24, pinned by a test.
size_t rig_input_absinfo_size(void);
/// ioctl(2) with a pointer argument: ioctl is variadic, so Swift cannot call it directly.
int rig_ioctl_pointer(int fd, unsigned long request, void *argument);

#endif
