/* frt_version: the library's version at run time (declared in flatrt.h). */
#include "flatrt.h"

const char *frt_version(void) { return FRT_VERSION_STRING; }
