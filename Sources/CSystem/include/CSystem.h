#ifndef SYNCLAB_CSYSTEM_H
#define SYNCLAB_CSYSTEM_H

/// Asks the kernel to send `signal` to this process when its parent dies (Linux); returns -1 elsewhere.
int synclab_set_parent_death_signal(int signal);

#endif
