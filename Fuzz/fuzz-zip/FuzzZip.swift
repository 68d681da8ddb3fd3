// Fuzz target for the ZIP/ASiC reader: Container.open, then every way of reading data files.
//
// Normal build: a corpus replayer (`fuzz-zip FILE|DIR...`), so `swift build` and CI can run the
// committed corpus and any crash artifact through the exact same check.
// With `-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`: a libFuzzer target (libFuzzer owns main).
// See Fuzz/run.sh.
import ASiC
import Foundation
import FuzzSupport

enum FuzzZip {
    /// Inputs are written to one file per process (libFuzzer's -jobs/-fork run several), created
    /// under $ASICFS_FUZZ_TMPDIR (else /dev/shm, else /tmp) and unlinked at once, so nothing is left
    /// behind even when an input crashes. Container.open gets it by path, as asicfs opens real
    /// containers: /proc/self/fd/N opens the same (unlinked) file anew.
    static let scratchFD: Int32 = {
        var dir = ProcessInfo.processInfo.environment["ASICFS_FUZZ_TMPDIR"] ?? "/dev/shm"
        if access(dir, W_OK) != 0 { dir = "/tmp" }
        let path = "\(dir)/asicfs-fuzz-zip-\(getpid()).asice"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            printError("fuzz-zip: cannot create \(path): \(String(cString: strerror(errno)))\n")
            abort() // not an input problem: stop instead of silently testing nothing
        }
        unlink(path)
        return fd
    }()
    static let scratchPath = "/proc/self/fd/\(scratchFD)"

    /// Data files larger than this are not kept in memory for the stream/random-access comparison.
    static let compareLimit: Int64 = 4 << 20

    /// Runs one input. Errors are the expected outcome for most inputs and are ignored; a trap,
    /// a sanitizer report or a failed `check` below is a bug.
    /// `log`, when given, hears how far the input got (the replayer's -v).
    static func run(_ input: UnsafeRawBufferPointer, log: ((String) -> Void)? = nil) {
        writeInput(input)
        let container: Container
        do {
            container = try Container.open(scratchPath)
        } catch {
            log?("rejected: \(error)")
            return
        }
        log?("opened \(container.kind.rawValue): \(container.dataFiles.count) data file(s), \(container.signatureFiles.count) signature(s)")

        var rng = SplitMix64(seed: fnv1a(input))
        var streamResults: [String: Bool] = [:]
        check(container.fileSize == Int64(input.count), "fileSize \(container.fileSize) != input size \(input.count)")
        for file in container.dataFiles {
            check(file.size >= 0 && file.compressedSize >= 0, "negative size for \(file.name)")

            // 1. Sequential read with size and CRC checks; keep small files to compare with 2.
            var streamed: [UInt8]? = file.size <= compareLimit ? [] : nil
            var total: Int64 = 0
            let streamOK: Bool
            do {
                try container.read(file.name) { chunk in
                    total += Int64(chunk.count)
                    if total > file.size { streamed = nil }
                    streamed?.append(contentsOf: chunk)
                }
                streamOK = true
                check(total == file.size, "read(\(file.name)) succeeded with \(total) bytes, declared \(file.size)")
                // A stored entry's data is exactly its compressed bytes: reading more means reading
                // bytes that belong to the next record.
                check(file.isCompressed || file.compressedSize == file.size,
                      "read(\(file.name)) accepted a stored entry of \(file.compressedSize) bytes declaring \(file.size)")
                log?("  \(file.name): read \(total) bytes")
            } catch {
                streamOK = false
                log?("  \(file.name): read failed: \(error)")
            }
            streamResults[file.name] = streamOK

            // 2. Random access through the seek index / stored reads.
            guard let content = try? container.content(of: file.name) else { continue }
            check(content.size == file.size, "content.size \(content.size) != declared \(file.size) for \(file.name)")
            let size = content.size
            var offsets: [Int64] = [0, size / 2, max(0, size - 1), size, size + 1, -1]
            for _ in 0..<4 { offsets.append(size > 0 ? Int64(rng.next() % UInt64(size)) : 0) }
            offsets.shuffle(using: &rng)
            var buffer = [UInt8](repeating: 0, count: 4096)
            for offset in offsets {
                let want = Int(rng.next() % UInt64(buffer.count)) + 1
                let got: Int
                do {
                    got = try buffer.withUnsafeMutableBytes {
                        try content.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: offset)
                    }
                } catch {
                    continue
                }
                let expected = offset < 0 ? 0 : Int(max(0, min(Int64(want), size - offset)))
                check(got == expected, "content.read(\(want) at \(offset)) of \(file.name) returned \(got), expected \(expected)")
                if streamOK, let streamed, got > 0 {
                    let start = Int(offset)
                    check(buffer[0..<got].elementsEqual(streamed[start..<start + got]),
                          "random read at \(offset) of \(file.name) differs from the streamed bytes")
                }
            }
        }
        // 3. Every read path agrees on whether an entry is intact: reading all of a (small) entry
        //    at random offsets, pieces out of order, succeeds exactly when the stream did.
        for file in container.dataFiles where file.size <= compareLimit {
            guard let streamOK = streamResults[file.name], let content = try? container.content(of: file.name) else { continue }
            let piece: Int64 = 4096
            var starts = Array(stride(from: Int64(0), to: max(content.size, 1), by: Int(piece)))
            starts.shuffle(using: &rng)
            var buffer = [UInt8](repeating: 0, count: Int(piece))
            var whole = true
            for start in starts {
                do {
                    _ = try buffer.withUnsafeMutableBytes { try content.read(into: $0, at: start) }
                } catch {
                    whole = false
                    break
                }
            }
            check(whole == streamOK, "\(file.name): the stream \(streamOK ? "succeeded" : "failed") but reading all of it in pieces \(whole ? "succeeded" : "failed")")
        }
        // 4. An open file's reader (its own decoder and window) on a fresh snapshot, fed the
        //    pieces in the order the kernel's readahead may send them (pairs swapped): the same
        //    verdict and the same bytes as the stream.
        if let fresh = try? Container.open(container.path) {
            for file in fresh.dataFiles where file.size <= compareLimit {
                guard let streamOK = streamResults[file.name], let content = try? fresh.content(of: file.name) else { continue }
                let reader = content.makeReader()
                defer { reader.close() }
                var starts = Array(stride(from: Int64(0), to: max(content.size, 1), by: 4096))
                for index in stride(from: 0, to: starts.count - 1, by: 2) { starts.swapAt(index, index + 1) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                var whole = true
                for start in starts {
                    do {
                        _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: start) }
                    } catch {
                        whole = false
                        break
                    }
                }
                check(whole == streamOK, "\(file.name): the stream \(streamOK ? "succeeded" : "failed") but its reader \(whole ? "succeeded" : "failed")")
            }
        }
        for signature in container.signatureFiles {
            if let bytes = try? container.signatureBytes(signature) {
                check(Int64(bytes.count) == signature.size, "signature \(signature.name): \(bytes.count) bytes, declared \(signature.size)")
            }
        }
    }

    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
        fuzzCheck("fuzz-zip", condition(), message())
    }

    static func writeInput(_ input: UnsafeRawBufferPointer) {
        guard ftruncate(scratchFD, 0) == 0 else {
            printError("fuzz-zip: cannot truncate the scratch file: \(String(cString: strerror(errno)))\n")
            abort()
        }
        var done = 0
        while done < input.count {
            let n = pwrite(scratchFD, input.baseAddress! + done, input.count - done, off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                printError("fuzz-zip: cannot write the scratch file: \(String(cString: strerror(errno)))\n")
                abort()
            }
            done += n
        }
    }

    static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}


/// Deterministic per input, so a crash reproduces from its artifact.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzZip.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_cdecl("fuzz_zip_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzerDriver(argc, argv) { data, size in
        FuzzZip.run(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
        return 0
    }
}
#else
@main
struct FuzzZipReplayer {
    static func main() {
        let count = CorpusReplayer.run(arguments: Array(CommandLine.arguments.dropFirst()), tool: "fuzz-zip") {
            FuzzZip.run($0, log: $1)
        }
        print("fuzz-zip: ran \(count) input(s) without a crash")
    }
}

#endif
