import CSQLiveSupport

/// The process's memory, as glibc's allocator holds it.
public enum ProcessMemory {
    /// Gives the pages the allocator holds free back to the system: glibc
    /// keeps what a large document's analysis freed in its arenas, so the
    /// process's resident size would stay at its peak after the document
    /// closed. Costs a walk of the free lists (about a millisecond for
    /// hundreds of MB): for rare events, such as closing a document.
    public static func giveBackFreed() {
        _ = sqlive_release_free_memory()
    }

    /// Makes blocks of 128 KiB or more go back to the system as soon as
    /// they are freed, for a process that lives long and sees inputs of
    /// any size (a server whose editor opens and closes large documents).
    ///
    /// By default glibc raises its mmap threshold to the size of the
    /// largest block freed (up to 32 MiB): after one large document, the
    /// next large arrays come from the heap, where a few small blocks left
    /// among them keep the pages resident after the document closes.
    /// Measured on a 50,000-statement document with its code lenses and
    /// inlay hints: 130 MB resident after `didClose` by default, 35 MB
    /// with this (34.5 MB before it opened); each large block then costs a
    /// `mmap` and a `munmap`.
    public static func mapLargeBlocks() {
        sqlive_map_large_blocks(128 << 10)
    }

    /// The bytes of the heap in use (`mallinfo2`: allocated blocks and
    /// mapped ones), not the pages the process holds: what a measurement
    /// of growth compares, unaffected by what earlier work freed.
    public static var heapInUse: Int {
        Int(sqlive_heap_in_use())
    }
}
