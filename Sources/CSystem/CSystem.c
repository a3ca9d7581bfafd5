#include "CSystem.h"
#ifdef __linux__
#include <sys/prctl.h>
#endif

int synclab_set_parent_death_signal(int signal) {
#ifdef __linux__
    return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0);
#else
    (void)signal;
    return -1;
#endif
}

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#endif

int synclab_release_free_memory(void) {
#if defined(__linux__) && defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
