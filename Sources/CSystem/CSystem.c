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

int synclab_keep_freed_memory(int kept_bytes, int pad_bytes) {
#if defined(__linux__) && defined(__GLIBC__)
    return mallopt(M_TRIM_THRESHOLD, kept_bytes) && mallopt(M_TOP_PAD, pad_bytes);
#else
    (void)kept_bytes;
    (void)pad_bytes;
    return 0;
#endif
}
