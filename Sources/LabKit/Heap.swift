import CSystem

/// glibc's allocator hands the top of its heap back to the kernel (`brk`) whenever more than 128 KiB there is free,
/// and takes it back on the next allocation that needs it, with a page fault for every page. A device pool's loop
/// frees and allocates about that much per pass, so it made ≈ 1,400 `brk` calls a second, and the kernel's unmapping
/// and page clearing behind them were ≈ 8 % of the pool's CPU samples (docs/PERFORMANCE.md). Each role keeps up to
/// `keptBytes` free at the top of its heap instead: resident memory stays at the run's high-water mark, which is
/// what a long-running service's allocator settles at anyway.
public enum Heap {
    /// Free memory at the heap's top kept before any of it is returned.
    public static let keptBytes: Int32 = 16 << 20
    /// What each growth of the heap adds beyond what it needs.
    public static let padBytes: Int32 = 1 << 20

    /// Call first thing in `main` of a role (server, broker, device, pool). Does nothing where glibc is not the
    /// allocator.
    public static func keepFreedMemory() {
        _ = synclab_keep_freed_memory(keptBytes, padBytes)
    }
}
