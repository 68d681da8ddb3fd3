// Shared by the fuzz targets: the libFuzzer driver entry and the corpus replayer of normal builds.
import Foundation

/// Writes to standard error without touching the C `stderr` global (not concurrency-safe in Swift 6).
public func printError(_ text: String) {
    var text = text
    text.withUTF8 { buf in
        var done = 0
        while done < buf.count {
            let n = Foundation.write(2, buf.baseAddress! + done, buf.count - done)
            if n <= 0 { return }
            done += n
        }
    }
}

/// Stops the run with "TOOL: check failed: MESSAGE" when `condition` is false: an abort is a
/// crash to libFuzzer, which keeps the input that caused it.
public func fuzzCheck(_ tool: String, _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        printError("\(tool): check failed: \(message())\n")
        abort()
    }
}

#if FUZZING
// libFuzzer's own main() is `return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput)`.
// SwiftPM links executable targets with `--defsym main=<target>_main` (so tests can link them), which
// leaves libFuzzer's main unused; each target's `<target>_main` calls this instead.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// Runs libFuzzer with `callback` as the test function, exactly as libFuzzer's main would.
public func runFuzzerDriver(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}
#endif

public enum CorpusReplayer {
    /// Runs `body` on every file named on the command line, recursing into directories.
    /// `-v` prints each file and what happened to it.
    public static func run(arguments: [String], tool: String,
                    _ body: (UnsafeRawBufferPointer, ((String) -> Void)?) -> Void) -> Int {
        let verbose = arguments.contains("-v")
        let paths = arguments.filter { $0 != "-v" }
        if paths.isEmpty {
            printError("usage: \(tool) [-v] FILE|DIR... (replays a corpus; build with -DFUZZING for libFuzzer)\n")
        }
        var count = 0
        let fm = FileManager.default
        for argument in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                printError("\(tool): no such file: \(argument)\n")
                continue
            }
            var files: [String] = []
            if isDirectory.boolValue {
                let walker = fm.enumerator(atPath: argument)
                while let relative = walker?.nextObject() as? String {
                    let full = argument + "/" + relative
                    var sub: ObjCBool = false
                    if fm.fileExists(atPath: full, isDirectory: &sub), !sub.boolValue { files.append(full) }
                }
                files.sort()
            } else {
                files = [argument]
            }
            for file in files {
                guard let data = fm.contents(atPath: file) else {
                    printError("\(tool): cannot read \(file)\n")
                    continue
                }
                if verbose { print("\(file) (\(data.count) bytes)") }
                data.withUnsafeBytes { body($0, verbose ? { print("  " + $0) } : nil) }
                count += 1
            }
        }
        return count
    }
}
