#ifndef SYNCLAB_CSYSTEM_H
#define SYNCLAB_CSYSTEM_H

/// Asks the kernel to send `signal` to this process when its parent dies (Linux); returns -1 elsewhere.
int synclab_set_parent_death_signal(int signal);

/// Gives the heap's free memory back to the kernel (glibc's malloc_trim), so the resident size counts what is in use;
/// returns 1 when memory was released, 0 otherwise (and elsewhere).
int synclab_release_free_memory(void);

/// Keeps up to `kept_bytes` free at the top of the heap before giving any back to the kernel, and grows it by
/// `pad_bytes` more than each growth needs (glibc's M_TRIM_THRESHOLD and M_TOP_PAD); 1 when both were set.
int synclab_keep_freed_memory(int kept_bytes, int pad_bytes);

#endif
