// asicfs-bench: timing driver for the container core, run by Benchmarks/container-bench.sh
// (`make bench`), never by CI. Every result is one machine-readable line:
//
//     RESULT <what> key=value key=value ...
//
// on standard output, except for `extract`, whose standard output is the entry's bytes (as with
// `unzip -p`), so its RESULT line goes to standard error.

import ASiC
import Crypto
import Signing
import Foundation
#if canImport(Glibc)
import Glibc
#endif

@main
struct Bench {
    static let usage = """
        usage: asicfs-bench extract CONTAINER NAME [--via stream|content] [--bs BYTES]
               asicfs-bench random  CONTAINER NAME [--count 2000] [--size 4096] [--seed N] [--warm] [--verify PLAIN]
               asicfs-bench add     CONTAINER FILE [--name NAME] [--rewrite]
               asicfs-bench create  CONTAINER FILE... [--level N]
               asicfs-bench digest  CONTAINER NAME
               asicfs-bench digest-file FILE

          extract  stream one data file to stdout (like `unzip -p`). --via stream (default) uses
                   Container.read (sequential, CRC-checked); --via content reads it front to back
                   through EntryContent.read in --bs pieces (default 128 KiB), as a FUSE mount does.
          random   --count reads of --size bytes at uniformly random offsets through
                   EntryContent.read, on a freshly opened container (the seek index is built lazily
                   by these reads). --warm then completes the index and does a second pass.
                   --verify compares every read with the same range of a plain copy (not timed).
          add      one ContainerEdit.add + save of FILE; --rewrite forces the full-rewrite path
                   (added under a temporary name, then renamed) instead of the append path.
          create   Container.create with the files (for ad-hoc inputs; the script uses Python).
          digest   the SHA-256 a signing computes for one data file (DataFileDigest: streamed out
                   of the container, CRC-checked); digest-file the same hash of a plain file.
                   digest --after-add FILE: add FILE to CONTAINER (a copy of it is made first)
                   and save, as a mount does when a copied-in file closes, then time the
                   signing's digest of it on the saved snapshot (known from the save).
        """

    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        guard !args.isEmpty else { fail(usage) }
        let command = args.removeFirst()
        do {
            switch command {
            case "extract": try extract(Options(args))
            case "random": try random(Options(args))
            case "add": try add(Options(args))
            case "create": try create(Options(args))
            case "digest": try digest(Options(args))
            case "digest-file": try digestFile(Options(args))
            case "-h", "--help", "help": print(usage)
            default: fail("unknown command '\(command)'\n\(usage)")
            }
        } catch {
            fail("asicfs-bench: \(error)")
        }
    }

    // MARK: - extract

    static func extract(_ o: Options) throws {
        let (path, name) = (try o.positional(0, "CONTAINER"), try o.positional(1, "NAME"))
        let via = o.value("--via") ?? "stream"
        let start = now()
        let container = try Container.open(path)
        var total: Int64 = 0
        switch via {
        case "stream":
            try container.read(name) { piece in
                try writeAll(1, piece)
                total += Int64(piece.count)
            }
        case "content":
            let content = try container.content(of: name)
            let bs = o.int("--bs") ?? (128 << 10)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bs, alignment: 4096)
            defer { buffer.deallocate() }
            while true {
                let n = try content.read(into: buffer, at: total)
                if n == 0 { break }
                try writeAll(1, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                total += Int64(n)
            }
            guard total == content.size else { fail("short read: \(total) of \(content.size)") }
        default:
            fail("--via is 'stream' or 'content'")
        }
        let seconds = now() - start
        let line = "RESULT extract via=\(via) name=\(name) bytes=\(total) seconds=\(fmt(seconds, 4)) "
            + "mbps=\(fmt(Double(total) / 1e6 / seconds, 1)) peak_rss_kib=\(peakRSSKiB())\n"
        FileHandle.standardError.write(line.data(using: .utf8)!)
    }

    // MARK: - random

    static func random(_ o: Options) throws {
        let (path, name) = (try o.positional(0, "CONTAINER"), try o.positional(1, "NAME"))
        let count = o.int("--count") ?? 2000
        let size = o.int("--size") ?? 4096
        var rng = SplitMix64(seed: UInt64(o.int("--seed") ?? 1))
        let verify = try o.value("--verify").map { try PosixFile.openForReading($0) }

        let openStart = now()
        let container = try Container.open(path)
        let content = try container.content(of: name)
        let openMs = (now() - openStart) * 1000
        let entrySize = content.size
        guard entrySize >= Int64(size) else { fail("'\(name)' is smaller than one read") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        let expected = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { buffer.deallocate(); expected.deallocate() }

        func pass(_ label: String) throws {
            var latencies: [Double] = []
            var cpuTimes: [Double] = []   // this thread's CPU time per read: what other load on the machine cannot inflate
            latencies.reserveCapacity(count)
            cpuTimes.reserveCapacity(count)
            var maxOffset: Int64 = 0
            for _ in 0..<count {
                let offset = Int64(rng.next() % UInt64(entrySize - Int64(size) + 1))
                let c0 = threadCPU()
                let t0 = now()
                let n = try content.read(into: buffer, at: offset)
                latencies.append((now() - t0) * 1000)
                cpuTimes.append((threadCPU() - c0) * 1000)
                maxOffset = max(maxOffset, offset)
                guard n == size else { fail("short read at \(offset): \(n) bytes") }
                if let verify {
                    try verify.read(into: expected, at: offset)
                    guard memcmp(buffer.baseAddress!, expected.baseAddress!, size) == 0 else {
                        fail("read at \(offset) differs from the plain file")
                    }
                }
            }
            let sorted = latencies.sorted()
            let cpuSorted = cpuTimes.sorted()
            let slow = latencies.filter { $0 > 5 }.count
            print("RESULT random pass=\(label) name=\(name) entry_bytes=\(entrySize) count=\(count) size=\(size) "
                  + "first_ms=\(fmt(latencies[0], 3)) p50_ms=\(fmt(percentile(sorted, 0.50), 3)) "
                  + "p90_ms=\(fmt(percentile(sorted, 0.90), 3)) p99_ms=\(fmt(percentile(sorted, 0.99), 3)) "
                  + "max_ms=\(fmt(sorted.last!, 3)) mean_ms=\(fmt(latencies.reduce(0, +) / Double(count), 3)) "
                  + "over_5ms=\(slow) cpu_p50_ms=\(fmt(percentile(cpuSorted, 0.50), 3)) "
                  + "cpu_p99_ms=\(fmt(percentile(cpuSorted, 0.99), 3)) total_s=\(fmt(latencies.reduce(0, +) / 1000, 3)) "
                  + "verified=\(verify != nil) peak_rss_kib=\(peakRSSKiB())")
        }

        print("RESULT random-open name=\(name) open_ms=\(fmt(openMs, 3))")
        try pass("cold")
        if o.flag("--warm") {
            // Finish the index: one read of the last bytes inflates whatever the cold pass left.
            let t0 = now()
            _ = try content.read(into: buffer, at: entrySize - Int64(size))
            print("RESULT random-index name=\(name) complete_index_ms=\(fmt((now() - t0) * 1000, 3))")
            try pass("warm")
        }
    }

    // MARK: - add

    static func add(_ o: Options) throws {
        let (path, source) = (try o.positional(0, "CONTAINER"), try o.positional(1, "FILE"))
        let rewrite = o.flag("--rewrite")
        let name = o.value("--name") ?? (source as NSString).lastPathComponent
        let t0 = now()
        let container = try Container.open(path)
        let t1 = now()
        var edit = container.edit()
        if rewrite {
            // Renaming turns the edit into a full rewrite; the result holds the same files.
            let temporary = "bench-tmp-\(getpid())-" + name
            try edit.add(NewDataFile(sourcePath: source, name: temporary))
            try edit.rename(temporary, to: name)
        } else {
            try edit.add(NewDataFile(sourcePath: source, name: name))
        }
        let saved = try edit.save()
        let t2 = now()
        guard saved.dataFile(named: name) != nil else { fail("'\(name)' is missing after the save") }
        print("RESULT add mode=\(rewrite ? "rewrite" : "append") container_bytes=\(container.fileSize) "
              + "added_bytes=\(fileSize(source)) open_ms=\(fmt((t1 - t0) * 1000, 2)) "
              + "save_ms=\(fmt((t2 - t1) * 1000, 2)) total_ms=\(fmt((t2 - t0) * 1000, 2)) "
              + "new_container_bytes=\(saved.fileSize) peak_rss_kib=\(peakRSSKiB())")
    }

    // MARK: - create

    static func create(_ o: Options) throws {
        let path = try o.positional(0, "CONTAINER")
        let files = o.positionals.dropFirst().map { NewDataFile(sourcePath: $0) }
        guard !files.isEmpty else { fail("create needs at least one FILE") }
        let t0 = now()
        let container = try Container.create(at: path, files: Array(files), compressionLevel: Int32(o.int("--level") ?? 6))
        print("RESULT create container_bytes=\(container.fileSize) files=\(files.count) "
              + "seconds=\(fmt(now() - t0, 3)) peak_rss_kib=\(peakRSSKiB())")
    }
}

// MARK: - digest

extension Bench {
    static func digest(_ o: Options) throws {
        let (path, name) = (try o.positional(0, "CONTAINER"), try o.positional(1, "NAME"))
        var container = try Container.open(path)
        var addSeconds: Double? = nil
        if let source = o.value("--after-add") {
            let copy = path + ".after-add.asice"
            unlink(copy)
            guard FileManager.default.fileExists(atPath: path),
                  (try? FileManager.default.copyItem(atPath: path, toPath: copy)) != nil else { fail("cannot copy \(path)") }
            defer { unlink(copy) }
            var edit = try Container.open(copy).edit()
            try edit.add(NewDataFile(sourcePath: source, name: name))
            let t0 = now()
            container = try edit.save()
            addSeconds = now() - t0
        }
        let size = container.dataFile(named: name)?.size ?? 0
        let t0 = now()
        let cpu0 = cpuSeconds()
        let digest = try DataFileDigest.sha256(of: name, in: container)
        let seconds = now() - t0
        print("RESULT digest bytes=\(size) seconds=\(fmt(seconds, 3)) mib_per_s=\(fmt(Double(size) / 1_048_576 / seconds, 1)) "
              + "cpu_seconds=\(fmt(cpuSeconds() - cpu0, 3)) sha256=\(digest.hexString)"
              + (addSeconds.map { " add_seconds=\(fmt($0, 3))" } ?? ""))
    }

    static func digestFile(_ o: Options) throws {
        let path = try o.positional(0, "FILE")
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { fail("cannot open \(path)") }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        let hasher = Hasher(.sha256)
        var total = 0
        let t0 = now()
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n <= 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            total += n
        }
        let digest = hasher.finish()
        let seconds = now() - t0
        print("RESULT digest-file bytes=\(total) seconds=\(fmt(seconds, 3)) mib_per_s=\(fmt(Double(total) / 1_048_576 / seconds, 1)) sha256=\(digest.hexString)")
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

// MARK: - Helpers

struct Options {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []
    static let valued: Set<String> = ["--via", "--bs", "--count", "--size", "--seed", "--verify", "--name", "--level", "--after-add"]

    init(_ args: [String]) {
        var i = 0
        while i < args.count {
            let a = args[i]
            if Self.valued.contains(a) {
                guard i + 1 < args.count else { Bench.fail("\(a) needs a value") }
                values[a] = args[i + 1]
                i += 2
            } else if a.hasPrefix("--") {
                flags.insert(a)
                i += 1
            } else {
                positionals.append(a)
                i += 1
            }
        }
    }

    func positional(_ i: Int, _ what: String) throws -> String {
        guard i < positionals.count else { Bench.fail("missing \(what)\n\(Bench.usage)") }
        return positionals[i]
    }
    func value(_ key: String) -> String? { values[key] }
    func int(_ key: String) -> Int? {
        guard let v = values[key] else { return nil }
        guard let n = Int(v) else { Bench.fail("\(key) wants a number, not '\(v)'") }
        return n
    }
    func flag(_ key: String) -> Bool { flags.contains(key) }
}

/// Deterministic PRNG so a seed reproduces the same offsets on every machine.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Bench {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// CPU time this thread has used, in seconds.
    static func threadCPU() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Nearest-rank percentile of an ascending array.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }

    static func fmt(_ x: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", x) }

    static func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : -1
    }

    /// Peak resident set size of this process so far (VmHWM), in KiB.
    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss)
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            let n = write(fd, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            done += n
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write((message + "\n").data(using: .utf8)!)
        exit(2)
    }
}
