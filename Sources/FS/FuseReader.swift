import CFuseReader

/// One reader of /dev/fuse at a time in a container mount, polling briefly before it sleeps
/// (`Sources/CFuseReader/include/cfuse_reader.h` says why). The thread that read a request
/// serves it and reads the next, so a program sending request after request never waits for
/// a sleeping thread to be woken: measured with `cp` of 1,000 small files into a mount, the
/// copy took a median 213 ms over seven runs instead of 228 and 273 ms before.
///
/// Whatever may wait calls `mayWait()` first, so that another worker reads the requests that
/// come meanwhile: the container check (`MountGate`), a signing's `status/wait`, a validation,
/// a save, and the tests' hold hooks.
enum FuseReader {
    /// How long the reader polls for the next request before it sleeps (in poll()). Long enough
    /// to cover a disk read between two requests: `cp` of 1,000 small files that are not in the
    /// page cache (it reads each from disk between its requests) took a median 409 ms into a
    /// mount polling 50 µs, 353 ms polling 200 µs and 340 ms polling 500 µs (six runs each, in
    /// turns); with the files cached, 267 ms and 239 ms for 50 and 200 µs.
    static let pollNanoseconds = 200_000

    /// Installs the reader on a mount's session (after fuse_mount, before the loop). When
    /// libfuse refuses, its own readers stay: slower, not wrong.
    static func install(_ fuse: OpaquePointer) {
        _ = cfuse_reader_install(UnsafeMutableRawPointer(fuse), pollNanoseconds, TestHooks.requestLog, TestHooks.readGate,
                                 TestHooks.releaseGate)
    }

    /// Gives the reader role away if this thread holds it (a no-op elsewhere).
    static func mayWait() { cfuse_reader_yield() }

    /// After the loop: whether the kernel had unmounted (then every file had been closed);
    /// otherwise serves the RELEASEs still queued (`cfuse_session_end.h`).
    static func endSession(_ fuse: OpaquePointer) -> Bool {
        cfuse_session_end(UnsafeMutableRawPointer(fuse)) == 1
    }
}
