// Fuzz target for META-INF/manifest.xml parsing (Manifest.parse, over libxml2 via SafeXML).
//
// Normal build: a corpus replayer (`fuzz-manifest FILE|DIR...`).
// With `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`: a libFuzzer target (libFuzzer owns main).
// See Fuzz/run.sh.
import ASiC
import Foundation
import FuzzSupport

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
        fuzzCheck("fuzz-manifest", condition(), message())
    }
}


#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzManifest.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_cdecl("fuzz_manifest_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzerDriver(argc, argv) { data, size in
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

#endif
