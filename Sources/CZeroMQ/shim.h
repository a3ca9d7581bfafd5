#ifndef SYNCLAB_CZEROMQ_SHIM_H
#define SYNCLAB_CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
/* EdgePoller waits on the sockets' ZMQ_FDs with epoll (Glibc's module does not export it). */
#include <sys/epoll.h>
#endif
