// Fuzz target for META-INF/manifest.xml parsing (Manifest.parse, over libxml2 via SafeXML).
//
// Normal build: a corpus replayer (`fuzz-manifest FILE|DIR...`).
// With `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`: a libFuzzer target (libFuzzer owns main).
// See Fuzz/run.sh.
import ASiC
import Foundation

enum FuzzManifest {
    /// Runs one input. Parse errors are expected and ignored; a trap, a sanitizer report or a
    /// failed check is a bug.
    /// `log`, when given, hears the outcome (the replayer's -v).
    static func run(_ input: UnsafeRawBufferPointer, log: ((String) -> Void)? = nil) {
        let bytes = [UInt8](input)
        let manifest: Manifest
        do {
            manifest = try Manifest.parse(bytes)
        } catch {
            log?("rejected: \(error)")
            return
        }
        log?("parsed: '/' is \(manifest.containerMediaType), \(manifest.files.count) file(s)")
        // What parse promises on success.
        var seen = Set<String>()
        for file in manifest.files {
            check(!file.fullPath.isEmpty, "an accepted entry has an empty full-path")
            check(file.fullPath != "/" && !file.fullPath.hasSuffix("/"), "a directory entry '\(file.fullPath)' was kept")
            check(seen.insert(file.fullPath).inserted, "'\(file.fullPath)' accepted twice")
        }
        // Parsing is deterministic.
        let again = try? Manifest.parse(bytes)
        check(again == manifest, "a second parse of the same bytes gave a different result")
    }

    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        if !condition() {
            printError("fuzz-manifest: check failed: \(message())\n")
            abort()
        }
    }
}

/// Writes to standard error without touching the C `stderr` global (not concurrency-safe in Swift 6).
func printError(_ text: String) {
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

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzManifest.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

// libFuzzer's own main() is `return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput)`.
// SwiftPM links executable targets with `--defsym main=fuzz_manifest_main` (so tests can link them), which
// leaves libFuzzer's main unused and needs this symbol instead: it does exactly what that main does.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@_cdecl("fuzz_manifest_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        FuzzManifest.run(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
        return 0
    }
}
#else
@main
struct FuzzManifestReplayer {
    static func main() {
        let count = CorpusReplayer.run(arguments: Array(CommandLine.arguments.dropFirst()), tool: "fuzz-manifest") {
            FuzzManifest.run($0, log: $1)
        }
        print("fuzz-manifest: ran \(count) input(s) without a crash")
    }
}

enum CorpusReplayer {
    /// Runs `body` on every file named on the command line, recursing into directories.
    /// `-v` prints each file and what happened to it.
    static func run(arguments: [String], tool: String,
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
#endif
