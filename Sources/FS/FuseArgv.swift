import CFuse3
import Foundation

/// The C argv `fuse_new` parses (`asicfs -o …`), owned by Swift: its strings are freed when
/// this goes, so a caller keeps it alive (`withExtendedLifetime`) for as long as libfuse may
/// look at them.
final class FuseArgv {
    private let strings: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    init(_ arguments: [String]) {
        count = arguments.count
        strings = .allocate(capacity: arguments.count + 1)
        for (index, argument) in arguments.enumerated() { strings[index] = strdup(argument) }
        strings[arguments.count] = nil
    }

    deinit {
        for index in 0..<count { free(strings[index]) }
        strings.deallocate()
    }

    /// libfuse's view of them (not allocated by libfuse: fuse_opt_free_args frees only what
    /// parsing added).
    var args: fuse_args { fuse_args(argc: Int32(count), argv: strings, allocated: 0) }
}
