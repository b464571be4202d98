#ifndef ANNOUNCE_CSONIC_SHIM_H
#define ANNOUNCE_CSONIC_SHIM_H
#include <sonic.h>
#endif
