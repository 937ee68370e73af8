#include "CLinux.h"

// The build's version, when a package build links in a strong definition (scripts/package-deb
// compiles one from the commit); a plain `swift build` has only this weak one.
__attribute__((weak)) const char *rig_build_version(void) { return 0; }
