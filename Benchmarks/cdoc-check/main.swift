// cdoc-check: opens encrypted containers through the CDOC module alone, for the CI corpus check
// (.ci/cdoc2-corpus.sh) and the benchmark (Benchmarks/cdoc-bench.sh). Secrets come from files.
//
//   cdoc-check list FILE
//   cdoc-check decrypt FILE (--key PEM | --secret-file F | --password-file F) [--discard]
//       prints "NAME<TAB>SIZE<TAB>SHA-256" per file; --discard only counts (benchmark)
//   cdoc-check encrypt OUT --secret-file F [--label L] FILE...
//       a CDOC2 for one symmetric key (the file holds the raw 32 bytes)
import CDOC
import Crypto
import Foundation
import Glibc

/// Hashes every file it is given (or only counts the bytes).
final class HashingSink: PlainFileSink {
    let discard: Bool
    private var hasher: Hasher?
    private var name = "", size: Int64 = 0
    private(set) var lines: [String] = []
    init(discard: Bool) { self.discard = discard }
    func begin(name: String, size: Int64?) throws {
        self.name = name
        self.size = 0
        hasher = discard ? nil : Hasher(.sha256)
    }
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        size += Int64(bytes.count)
        hasher?.update(bytes)
    }
    func end() throws {
        let digest = hasher.map { $0.finish().map { String(format: "%02x", $0) }.joined() } ?? "-"
        lines.append("\(name)\t\(size)\t\(digest)")
    }
    func abandon() { lines = [] }
}

final class FileSource: PlainFileSource {
    let name: String
    let size: Int64
    private let descriptor: Int32
    init(path: String) throws {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CDOCError(.io, "cannot open \(path)") }
        var status = stat()
        fstat(descriptor, &status)
        size = Int64(status.st_size)
        name = (path as NSString).lastPathComponent
    }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        guard n >= 0 else { throw CDOCError(.io, "cannot read \(name)") }
        return n
    }
}

func fail(_ message: String, _ status: Int32 = 1) -> Never {
    FileHandle.standardError.write(("cdoc-check: " + message + "\n").data(using: .utf8)!)
    exit(status)
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fileBytes(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)", 2) }
    return Array(data)
}

func openContainer(_ path: String) -> (EncryptedContainerReader, Int32) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { fail("cannot open \(path)", 2) }
    do { return (try EncryptedContainer.open(descriptor: descriptor), descriptor) } catch { fail("\(error)") }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: cdoc-check list|decrypt|encrypt FILE …", 2) }
switch arguments[0] {
case "list":
    let (reader, _) = openContainer(arguments[1])
    print(reader.format.rawValue)
    for recipient in reader.recipients { print("\(recipient.kind.rawValue)\t\(recipient.displayName)") }
case "decrypt":
    let (reader, _) = openContainer(arguments[1])
    let unlocker: Unlocker
    if let key = option("--key", in: arguments) {
        do { unlocker = .key(SoftwareRecipientKey(name: key, privateKey: try PrivateKey.read(fileBytes(key)))) } catch { fail("\(error)", 2) }
    } else if let file = option("--secret-file", in: arguments) {
        unlocker = .symmetricKey(SecretBytes(fileBytes(file)), label: nil)
    } else if let file = option("--password-file", in: arguments) {
        do { unlocker = .password(try SecretBytes.read(file: file), label: nil) } catch { fail("\(error)", 2) }
    } else {
        fail("decrypt needs --key, --secret-file or --password-file", 2)
    }
    let sink = HashingSink(discard: arguments.contains("--discard"))
    do { try reader.decrypt(with: unlocker, into: sink) } catch { fail("\(error)") }
    for line in sink.lines { print(line) }
case "encrypt":
    guard let file = option("--secret-file", in: arguments) else { fail("encrypt needs --secret-file", 2) }
    let label = option("--label", in: arguments) ?? "cdoc-check"
    var inputs: [String] = []
    var index = 2
    while index < arguments.count {
        if ["--secret-file", "--label"].contains(arguments[index]) { index += 2 } else { inputs.append(arguments[index]); index += 1 }
    }
    let out = arguments[1]
    let descriptor = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { fail("cannot create \(out)", 2) }
    do {
        let sources = try inputs.map { try FileSource(path: $0) }
        try EncryptedContainer.writer(for: .cdoc2).write(files: sources, for: [.symmetricKey(SecretBytes(fileBytes(file)), label: label)],
                                                         to: descriptor)
    } catch { unlink(out); fail("\(error)") }
    close(descriptor)
default:
    fail("unknown command \(arguments[0])", 2)
}
