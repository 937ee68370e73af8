#include "CLinuxInput.h"
#include <sys/ioctl.h>

unsigned long rig_eviocgabs(unsigned int abs) { return EVIOCGABS(abs); }
unsigned long rig_eviocgkey(unsigned int len) { return EVIOCGKEY(len); }
unsigned long rig_eviocgbit(unsigned int ev, unsigned int len) { return EVIOCGBIT(ev, len); }
unsigned long rig_eviocgname(unsigned int len) { return EVIOCGNAME(len); }
size_t rig_input_event_size(void) { return sizeof(struct input_event); }
size_t rig_input_absinfo_size(void) { return sizeof(struct input_absinfo); }
int rig_ioctl_pointer(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
