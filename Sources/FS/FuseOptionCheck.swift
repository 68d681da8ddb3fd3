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
        let argv = FuseArgv(["asicfs", "-o", (["subtype=asicfs"] + options).joined(separator: ",")])
        var args = argv.args
        var operations = fuse_operations()
        let fuse = withExtendedLifetime(argv) { fuse_new(&args, &operations, MemoryLayout<fuse_operations>.size, nil) }
        fuse_opt_free_args(&args)
        guard let fuse else { return false }
        fuse_destroy(fuse)
        return true
    }
}
