#include <gphoto2/gphoto2.h>
#include <stdlib.h>
