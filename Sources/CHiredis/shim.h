#ifndef SYNCLAB_CHIREDIS_SHIM_H
#define SYNCLAB_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
