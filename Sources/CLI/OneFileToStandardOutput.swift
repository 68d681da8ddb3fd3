import ASiC
import CDOC
import Crypto
import Glibc

/// `asicfs decrypt --stdout NAME`: keeps only that file, and prints it once everything
/// authenticated (nothing unauthenticated is ever printed). Until then the file waits in a spool
/// that has no name (O_TMPFILE in $TMPDIR, else a memfd), encrypted with AES-256-CTR under a key
/// that exists only in this process's memory: memory stays bounded whatever the file's size, and
/// its plaintext never reaches persistent storage.
final class OneFileToStandardOutput: PlainFileSink {
    let wanted: String
    private(set) var found = false
    private var taking = false
    private var spool: Int32 = -1
    private var size: Int64 = 0
    private let cipher: CounterModeCipher
    private let nonce: [UInt8]

    /// `ASICFS_TEST_HOLD_STDOUT_SPOOL=PATH`: while PATH exists, the decryption waits after the
    /// whole file is in the spool and before it is printed, with `PATH.held` present (a test
    /// searches the disk for the plaintext meanwhile).
    static let spoolGate = TestGate.path("ASICFS_TEST_HOLD_STDOUT_SPOOL")

    init(wanted: String) throws {
        self.wanted = wanted
        cipher = try CounterModeCipher(key: try SecureRandom.secret(CounterModeCipher.keySize))
        nonce = try SecureRandom.bytes(CounterModeCipher.nonceSize)
    }

    deinit { if spool >= 0 { close(spool) } }

    func begin(name: String, size: Int64?) throws {
        taking = name == wanted
        guard taking else { return }
        found = true
        if spool < 0 { spool = try Self.unnamedFile() }
    }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard taking, chunk.count > 0 else { return }
        try cipher.sealedCopy(of: chunk, nonce: nonce, at: size) { sealed in
            var done = 0
            while done < sealed.count {
                let count = pwrite(spool, sealed.baseAddress! + done, sealed.count - done, off_t(size) + off_t(done))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw CDOCError(.io, "cannot write the spool for standard output: \(String(cString: strerror(errno)))") }
                done += count
            }
        }
        size += Int64(chunk.count)
    }

    func end() throws { taking = false }

    func abandon() {
        if spool >= 0 { close(spool) }
        spool = -1
        size = 0
        found = false
    }

    /// Prints the file, decrypted from the spool a piece at a time.
    func print() throws {
        defer { abandon() }
        TestGate.hold(Self.spoolGate)
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer {
            memset(piece.baseAddress!, 0, piece.count)
            piece.deallocate()
        }
        var offset: Int64 = 0
        while offset < size {
            let wanted = Int(min(Int64(piece.count), size - offset))
            let count = pread(spool, piece.baseAddress, wanted, off_t(offset))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw CDOCError(.io, "cannot read the spool for standard output: \(String(cString: strerror(errno)))") }
            let part = UnsafeMutableRawBufferPointer(rebasing: piece[..<count])
            try cipher.apply(part, nonce: nonce, at: offset)
            try writeAll(STDOUT_FILENO, UnsafeRawBufferPointer(part), what: "standard output")
            offset += Int64(count)
        }
    }

    /// A file without a name in $TMPDIR (or /tmp), gone when closed; in /dev/shm (memory)
    /// where that folder cannot hold one (O_TMPFILE unsupported there).
    private static func unnamedFile() throws -> Int32 {
        for folder in [TestGate.path("TMPDIR") ?? "/tmp", "/dev/shm"] {
            let descriptor = open(folder, O_RDWR | O_CLOEXEC | temporaryFile, 0o600)
            if descriptor >= 0 { return descriptor }
        }
        throw CDOCError(.io, "cannot make a spool for standard output: \(String(cString: strerror(errno)))")
    }

    /// Linux's O_TMPFILE (__O_TMPFILE | O_DIRECTORY), which Swift does not import as a macro.
    private static let temporaryFile: Int32 = 0o20000000 | O_DIRECTORY
}
