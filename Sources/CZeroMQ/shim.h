#ifndef SYNCLAB_CZEROMQ_SHIM_H
#define SYNCLAB_CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
#endif
