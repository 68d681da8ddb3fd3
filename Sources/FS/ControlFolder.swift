import ASiC
import Crypto
import Foundation
import XAdES

/// One file of the control folder and what it shows.
enum ControlFile: Equatable {
    case readme, container, current, lastError
    case signature(index: Int, part: SignaturePart)

    enum SignaturePart: String, CaseIterable {
        case signer, signingTime = "signing-time", method, status, certificate = "certificate.pem", signatureXML = "signature.xml"
    }
}

/// The hidden `.asicfs` folder inside every mount: help, a summary of the container, its
/// signatures and the status of the filesystem. Every file is generated when it is opened
/// (so the kernel is told not to cache it); nothing here is writable yet.
final class ControlFolder: @unchecked Sendable {
    static let name = ".asicfs"
    private unowned let fileSystem: ContainerFileSystem
    private let lock = NSLock()
    private var cachedFor: ObjectIdentifier?
    private var cachedSignatures: [SignatureSummary] = []

    init(fileSystem: ContainerFileSystem) { self.fileSystem = fileSystem }

    static func contains(_ name: String) -> Bool { name == Self.name || name.hasPrefix(Self.name + "/") }

    /// The signatures of the current snapshot, parsed once per snapshot.
    private var signatures: [SignatureSummary] {
        let snapshot = fileSystem.currentSnapshot
        return lock.withLock {
            if cachedFor != ObjectIdentifier(snapshot) {
                cachedSignatures = snapshot.signatureFiles.flatMap { file in
                    SignatureSummary.read(file: file.name, bytes: (try? snapshot.signatureBytes(file)) ?? [])
                }
                cachedFor = ObjectIdentifier(snapshot)
            }
            return cachedSignatures
        }
    }

    /// "<n>-<SIGNER NAME>" with '/' (impossible in a file name) replaced.
    private func folderName(_ index: Int, _ signature: SignatureSummary) -> String {
        "\(index)-" + signature.signerName.replacingOccurrences(of: "/", with: "∕")
    }

    private func resolve(_ name: String) throws -> (file: ControlFile?, isFolder: Bool) {
        let parts = name.split(separator: "/").map(String.init)
        switch parts.count {
        case 1: return (nil, true)
        case 2:
            switch parts[1] {
            case "README": return (.readme, false)
            case "container": return (.container, false)
            case "status", "signatures": return (nil, true)
            default: throw FileSystemError(ENOENT)
            }
        case 3:
            if parts[1] == "status" {
                if parts[2] == "current" { return (.current, false) }
                if parts[2] == "last-error" { return (.lastError, false) }
            }
            if parts[1] == "signatures", signatureIndex(parts[2]) != nil { return (nil, true) }
            throw FileSystemError(ENOENT)
        case 4:
            guard parts[1] == "signatures", let index = signatureIndex(parts[2]),
                  let part = ControlFile.SignaturePart(rawValue: parts[3]) else { throw FileSystemError(ENOENT) }
            return (.signature(index: index, part: part), false)
        default:
            throw FileSystemError(ENOENT)
        }
    }

    private func signatureIndex(_ folder: String) -> Int? {
        let all = signatures
        return all.indices.first { folderName($0, all[$0]) == folder }
    }

    func attributes(_ name: String) throws -> NodeAttributes {
        let (file, isFolder) = try resolve(name)
        if isFolder { return .directory(0o555, fileSystem.mountedAt) }
        let bytes = content(file!)
        return NodeAttributes(kind: .file, size: Int64(bytes.count), permissions: 0o444, modified: Date(), isDynamic: true)
    }

    func list(_ name: String) throws -> [String] {
        let (file, isFolder) = try resolve(name)
        guard isFolder, file == nil else { throw FileSystemError(ENOTDIR) }
        let parts = name.split(separator: "/")
        switch parts.count {
        case 1: return ["README", "container", "signatures", "status"]
        case 2 where parts[1] == "status": return ["current", "last-error"]
        case 2: return signatures.enumerated().map { folderName($0.offset, $0.element) }
        default: return ControlFile.SignaturePart.allCases.map(\.rawValue)
        }
    }

    func open(_ name: String) throws -> (ControlFile, [UInt8]) {
        let (file, isFolder) = try resolve(name)
        guard let file, !isFolder else { throw FileSystemError(EISDIR) }
        return (file, content(file))
    }

    func content(_ file: ControlFile) -> [UInt8] {
        switch file {
        case .readme: return Array(Self.readme.utf8)
        case .container: return Array(containerSummary.utf8)
        case .current: return Array("idle\n".utf8)
        case .lastError:
            let error = fileSystem.lastError
            return error.isEmpty ? [] : Array((error + "\n").utf8)
        case .signature(let index, let part):
            let all = signatures
            guard index < all.count else { return [] }
            return signaturePart(all[index], part)
        }
    }

    private var containerSummary: String {
        let snapshot = fileSystem.currentSnapshot
        let state: String
        if fileSystem.readOnly { state = "read-only (mounted with -o ro)" }
        else if snapshot.kind == .asicS { state = "read-only (ASiC-S: the data file is time-stamped)" }
        else if snapshot.isSigned { state = "signed: data files cannot change" }
        else { state = "unsigned: data files can be added, changed, renamed and removed" }
        return """
        path: \(snapshot.path)
        format: \(snapshot.kind.rawValue)
        data files: \(fileSystem.dataFileCount)
        signatures: \(signatures.count)
        state: \(state)
        unsaved changes: \(fileSystem.hasPendingChanges ? "yes (saved within seconds, on fsync and at unmount)" : "no")

        """
    }

    private func signaturePart(_ signature: SignatureSummary, _ part: ControlFile.SignaturePart) -> [UInt8] {
        let certificate = signature.certificate
        switch part {
        case .signer:
            var lines = ["name: \(signature.signerName)"]
            if let given = certificate?.givenName, let surname = certificate?.surname { lines.append("given name: \(given)\nsurname: \(surname)") }
            if let code = certificate?.serialNumberAttribute { lines.append("personal code: \(code)") }
            if let country = certificate?.country { lines.append("country: \(country)") }
            if let issuer = certificate?.issuerCommonName { lines.append("certificate issuer: \(issuer)") }
            return Array((lines.joined(separator: "\n") + "\n").utf8)
        case .signingTime:
            var text = "claimed: \(signature.claimedSigningTime ?? "none")\n"
            if let time = signature.timeStampTime {
                let formatter = ISO8601DateFormatter()
                formatter.timeZone = TimeZone(identifier: "UTC")
                text += "time-stamp: \(formatter.string(from: time))\n"
            } else {
                text += "time-stamp: none\n"
            }
            return Array(text.utf8)
        case .method: return Array("unknown (made before this mount)\n".utf8)
        case .status: return Array("NOT_VALIDATED\nvalidation is not available in this version of asicfs\n".utf8)
        case .certificate: return Array((certificate?.pem ?? "").utf8)
        case .signatureXML: return signature.documentBytes
        }
    }

    static let readme = """
    asicfs control folder
    =====================

    This hidden folder belongs to asicfs, not to the container. Nothing in it is stored in
    the container.

    container            path, format, number of data files and signatures, state
    signatures/<n>-<SIGNER NAME>/
      signer             name, personal code, country, certificate issuer
      signing-time       claimed signing time and the time-stamp time (ISO 8601, UTC)
      method             how the signature was made, where known
      status             validation status (NOT_VALIDATED in this version)
      certificate.pem    the signer's certificate
      signature.xml      the raw XAdES signature document
    status/
      current            idle
      last-error         the last error, one line (why a change was refused, or a save failed)

    The data files of the container are the other files of the mount. While the container is
    unsigned, copy files in, edit, rename and remove them as in any folder: changes are saved
    to the container, atomically, a moment after the last change, on fsync and at unmount.
    Once the container is signed, its data files cannot change (EPERM).

    """
}
