#ifndef SYNCLAB_CNATS_SHIM_H
#define SYNCLAB_CNATS_SHIM_H
#include <nats/nats.h>
#endif
