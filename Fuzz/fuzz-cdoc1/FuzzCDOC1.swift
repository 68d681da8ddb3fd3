// Fuzz target for the CDOC 1.x stream reader (libxml2's push parser with the payload's base64
// taken straight from the bytes where it can) and the streamed DDOC reader: each input is read
// whole, in 1-byte pieces and in odd-sized pieces, and the results must be the same.
//
// Normal build: a corpus replayer (`fuzz-cdoc1 FILE|DIR...`).
// With `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`: a libFuzzer target (libFuzzer owns main).
// See Fuzz/run.sh.
@_spi(Fuzzing) import CDOC
import Foundation
import FuzzSupport

enum FuzzCDOC1 {
    static func run(_ input: UnsafeRawBufferPointer, log: ((String) -> Void)? = nil) {
        for decode in [false, true] {
            let whole = CDOC1Fuzzing.cdoc1(input, piece: max(input.count, 1), decode: decode)
            log?("cdoc1 (\(decode ? "decoded" : "skipped")): \(whole.prefix(200))")
            for piece in [1, 7, 4093] {
                let cut = CDOC1Fuzzing.cdoc1(input, piece: piece, decode: decode)
                check(cut == whole, "CDOC 1.x read in pieces of \(piece) gave '\(cut.prefix(300))', whole '\(whole.prefix(300))'")
            }
        }
        let whole = CDOC1Fuzzing.ddoc(input, piece: max(input.count, 1))
        log?("ddoc: \(whole.prefix(200))")
        for piece in [1, 5] {
            let cut = CDOC1Fuzzing.ddoc(input, piece: piece)
            check(cut == whole, "DDOC read in pieces of \(piece) gave '\(cut.prefix(300))', whole '\(whole.prefix(300))'")
        }
    }

    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        fuzzCheck("fuzz-cdoc1", condition(), message())
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzCDOC1.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_cdecl("fuzz_cdoc1_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzerDriver(argc, argv) { data, size in
        FuzzCDOC1.run(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
        return 0
    }
}
#else
@main
struct FuzzCDOC1Replayer {
    static func main() {
        let count = CorpusReplayer.run(arguments: Array(CommandLine.arguments.dropFirst()), tool: "fuzz-cdoc1") {
            FuzzCDOC1.run($0, log: $1)
        }
        print("fuzz-cdoc1: ran \(count) input(s) without a crash")
    }
}
#endif
