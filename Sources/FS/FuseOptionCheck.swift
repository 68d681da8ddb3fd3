import CFuse3
import Foundation

/// Which `-o` options libfuse would refuse, asked of libfuse itself before anything is mounted:
/// `fuse_new` parses the options without mounting. Its own message names its internal option
/// string; the command line names the one option and suggests the word meant instead.
public enum FuseOptionCheck {
    /// The options of `options` that libfuse does not take (none when it takes them all).
    public static func refused(_ options: [String]) -> [String] {
        if options.isEmpty || accepts(options) { return [] }
        return options.filter { !accepts([$0]) }
    }

    private static func accepts(_ options: [String]) -> Bool {
        cfuse_quiet_log(1)
        defer { cfuse_quiet_log(0) }
        let arguments = ["asicfs", "-o", (["subtype=asicfs"] + options).joined(separator: ",")]
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
        for (index, argument) in arguments.enumerated() { argv[index] = strdup(argument) }
        argv[arguments.count] = nil
        defer {
            for index in 0..<arguments.count { free(argv[index]) }
            argv.deallocate()
        }
        var args = fuse_args(argc: Int32(arguments.count), argv: argv, allocated: 0)
        var operations = fuse_operations()
        let fuse = fuse_new(&args, &operations, MemoryLayout<fuse_operations>.size, nil)
        fuse_opt_free_args(&args)
        guard let fuse else { return false }
        fuse_destroy(fuse)
        return true
    }
}
