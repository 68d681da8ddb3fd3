import Crypto
import Foundation

/// The two container forms asicfs reads. ASiC-E holds many data files and XAdES signatures;
/// ASiC-S holds one data file and a time-stamp or signature over it (listing and extraction only).
public enum ContainerKind: String, Sendable {
    case asicE = "ASiC-E"
    case asicS = "ASiC-S"

    public var mediaType: String { self == .asicE ? MediaType.asicE : MediaType.asicS }
}

/// A data file of a container, as its central directory and manifest describe it.
public struct DataFile: Sendable, Equatable {
    public let name: String
    public let mediaType: String
    /// The media type a manifest declares; nil when there is none to declare it (an ASiC-S
    /// without `META-INF/manifest.xml`), and `mediaType` is only a guess from the name.
    public let declaredMediaType: String?
    public let size: Int64
    public let compressedSize: Int64
    public let isCompressed: Bool
    public let modified: Date
    let entry: ZipEntry
}

/// A signature (or time-stamp) file under META-INF.
public struct SignatureFile: Sendable, Equatable {
    public let name: String
    public let size: Int64
    let entry: ZipEntry
}

/// An opened container: an immutable snapshot of one version of the file on disk.
/// It keeps that version open, so reads stay consistent even after a save replaces the file.
/// Changes go through `edit()`, whose `save()` writes a new file and returns its snapshot.
public final class Container: @unchecked Sendable {
    public let path: String
    public let kind: ContainerKind
    public let dataFiles: [DataFile]
    public let signatureFiles: [SignatureFile]
    /// Size of the container file in bytes.
    public let fileSize: Int64
    /// The file's status when this snapshot was read: a later change made in place (same inode)
    /// shows as a different size or modification time.
    let openedStatus: stat

    /// Which file this snapshot read (device and inode): the one a path led to when it was opened.
    public var openedFile: (device: UInt64, inode: UInt64) { (UInt64(openedStatus.st_dev), UInt64(openedStatus.st_ino)) }
    /// Who owned that file when this snapshot read it.
    public var openedOwner: (user: uid_t, group: gid_t) { (openedStatus.st_uid, openedStatus.st_gid) }

    let file: PosixFile
    let directory: ZipDirectory
    let mimetypeEntry: ZipEntry
    let manifestEntry: ZipEntry?
    /// Entries that are neither data, manifest nor signatures (other META-INF files, folders): kept on save.
    let otherEntries: [ZipEntry]

    private let indexByName: [String: Int]
    private let cacheLock = NSLock()
    private var contentCache: [String: EntryContent] = [:]
    /// Read-ahead streams for every entry's content: whether the file takes O_DIRECT is the
    /// file's to know, not each entry's.
    private let directReads: DirectReads
    /// SHA-256 of data files, by name: written by this process's own save (from the bytes it
    /// compressed) or read once already. Trusted only for the entry it was recorded for.
    private var knownSHA256: [String: KnownDigest] = [:]

    struct KnownDigest {
        var crc32: UInt32
        var size: UInt64
        var sha256: [UInt8]
    }

    public var isSigned: Bool { !signatureFiles.isEmpty }

    public static let maximumMetadataSize: Int64 = 64 << 20

    private init(path: String, kind: ContainerKind, dataFiles: [DataFile], signatureFiles: [SignatureFile],
                 file: PosixFile, directory: ZipDirectory, mimetypeEntry: ZipEntry, manifestEntry: ZipEntry?,
                 otherEntries: [ZipEntry], status: stat) {
        self.path = path
        self.kind = kind
        self.dataFiles = dataFiles
        self.signatureFiles = signatureFiles
        self.file = file
        directReads = DirectReads(file: file)
        self.directory = directory
        self.mimetypeEntry = mimetypeEntry
        self.manifestEntry = manifestEntry
        self.otherEntries = otherEntries
        fileSize = Int64(status.st_size)
        openedStatus = status
        indexByName = Dictionary(dataFiles.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { a, _ in a })
    }

    /// Opens and checks a container. Any broken rule is an error with a one-line reason.
    public static func open(_ path: String) throws -> Container {
        let file = try PosixFile.openForReading(path)
        // Reads of data files are mostly sequential: let the kernel read ahead further.
        _ = posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        let status = try file.status()
        try refuseDigiDocXML(file)
        let directory = try ZipDirectory.read(from: file)
        let entries = directory.entries
        if entries.isEmpty { throw ContainerError.notASiC("the ZIP has no entries") }
        try checkEntries(entries, dataLimit: directory.centralDirectoryOffset)

        guard let mimetypeEntry = entries.first(where: { $0.name == EntryName.mimetype }) else {
            throw ContainerError.notASiC("it has no 'mimetype' entry")
        }
        let mimetype = try readMimetype(mimetypeEntry, file: file, limit: directory.centralDirectoryOffset)
        let kind: ContainerKind
        switch mimetype {
        case MediaType.asicE: kind = .asicE
        case MediaType.asicS: kind = .asicS
        default: throw ContainerError.notASiC("its 'mimetype' entry has the wrong content: '\(mimetype)', not an ASiC-E or ASiC-S type")
        }
        // ASiC-E's mimetype must be the first entry in the file (ETSI EN 319 162-1, A.1); the
        // reference accepts an ASiC-S whose mimetype comes later, and so does asicfs.
        if kind == .asicE && mimetypeEntry.localHeaderOffset != 0 {
            throw ContainerError.notASiC("its 'mimetype' entry is not the first entry")
        }

        var dataEntries: [ZipEntry] = []
        var signatureEntries: [ZipEntry] = []
        var otherEntries: [ZipEntry] = []
        var manifestEntry: ZipEntry? = nil
        for entry in entries where entry.name != EntryName.mimetype {
            if entry.name == Manifest.path {
                manifestEntry = entry
            } else if entry.name.hasPrefix(EntryName.metaInfPrefix) {
                if isSignatureFile(entry.name, kind: kind) { signatureEntries.append(entry) } else { otherEntries.append(entry) }
            } else if entry.isDirectory {
                otherEntries.append(entry)
            } else {
                dataEntries.append(entry)
            }
        }

        var manifest: Manifest? = nil
        if let manifestEntry {
            let location = try EntryLocation.resolve(manifestEntry, in: file, dataLimit: directory.centralDirectoryOffset)
            manifest = try Manifest.parse(EntryStream.readAll(location, in: file, limit: Manifest.sizeLimit),
                                          demandingMediaTypes: kind == .asicE)
        }

        var mediaTypes: [String: String] = [:]
        switch kind {
        case .asicE:
            guard let manifest else { throw ContainerError.notASiC("META-INF/manifest.xml is missing") }
            guard manifest.containerMediaType == mimetype else {
                throw ContainerError.notASiC(
                    "the manifest's '/' media type '\(manifest.containerMediaType)' differs from the mimetype")
            }
            let zipNames = Set(dataEntries.map(\.name))
            for file in manifest.files where !file.fullPath.hasPrefix(EntryName.metaInfPrefix) {
                // Every ZIP name passed checkEntries, so a listed path found in the ZIP is safe too.
                guard zipNames.contains(file.fullPath) else {
                    throw ContainerError.notASiC("the manifest lists '\(file.fullPath)', which is not in the ZIP")
                }
                mediaTypes[file.fullPath] = file.mediaType
            }
            for entry in dataEntries where mediaTypes[entry.name] == nil {
                throw ContainerError.notASiC("'\(entry.name)' is in the ZIP but not in the manifest")
            }
        case .asicS:
            guard dataEntries.count == 1 else {
                throw ContainerError.notASiC("an ASiC-S container must hold exactly one data file, not \(dataEntries.count)")
            }
            if dataEntries[0].name.contains("/") {
                throw ContainerError.notASiC("the ASiC-S data file '\(dataEntries[0].name)' is inside a subfolder")
            }
            // One signature or one time-stamp (with its archive time-stamps), as the reference
            // takes it; none is an unsigned ASiC-S, which lists like an unsigned ASiC-E.
            let timeStamps = signatureEntries.filter { $0.name.hasSuffix(".tst") }
            let archiveManifests = signatureEntries.filter { isArchiveManifest($0.name) }
            let signatures = signatureEntries.filter { !$0.name.hasSuffix(".tst") && !isArchiveManifest($0.name) }
            // The first token has one name (ETSI EN 319 162-1 4.3.2); later ones are only
            // renewals, each named by an archive manifest, and say nothing on their own.
            if !timeStamps.isEmpty && !timeStamps.contains(where: { $0.name == Self.asicSTimeStamp }) {
                throw ContainerError.notASiC("an ASiC-S time-stamp must be \(Self.asicSTimeStamp), not \(timeStamps.map(\.name).joined(separator: ", "))")
            }
            if !archiveManifests.isEmpty && timeStamps.isEmpty {
                throw ContainerError.notASiC("the ASiC-S container has an archive manifest but no time-stamp")
            }
            if signatures.count > 1 {
                throw ContainerError.notASiC("an ASiC-S container holds one signature, not \(signatures.count) (\(signatures.map(\.name).joined(separator: ", ")))")
            }
            if !signatures.isEmpty && !timeStamps.isEmpty {
                throw ContainerError.notASiC("an ASiC-S container holds a signature or a time-stamp, not both (\(signatures[0].name) and \(timeStamps[0].name))")
            }
            for file in manifest?.files ?? [] { mediaTypes[file.fullPath] = file.mediaType }
        }

        // A DOS time needs mktime (which checks the time zone file each call); the entries of
        // a container mostly share a few times.
        var localTimes: [UInt32: Date] = [:]
        let dataFiles = dataEntries.map { entry in
            let dos = entry.dosDateTime
            let modified = entry.unixModified ?? {
                let key = UInt32(dos.date) << 16 | UInt32(dos.time)
                if let known = localTimes[key] { return known }
                let date = dos.asDate
                localTimes[key] = date
                return date
            }()
            return DataFile(name: entry.name, mediaType: mediaTypes[entry.name] ?? MediaType.guess(forName: entry.name),
                            declaredMediaType: mediaTypes[entry.name],
                            size: Int64(entry.uncompressedSize), compressedSize: Int64(entry.compressedSize),
                            isCompressed: entry.isDeflated, modified: modified, entry: entry)
        }
        let signatureFiles = signatureEntries.map {
            SignatureFile(name: $0.name, size: Int64($0.uncompressedSize), entry: $0)
        }
        return Container(path: path, kind: kind, dataFiles: dataFiles, signatureFiles: signatureFiles, file: file,
                         directory: directory, mimetypeEntry: mimetypeEntry, manifestEntry: manifestEntry,
                         otherEntries: otherEntries, status: status)
    }

    /// A DigiDoc 1.x (DDOC) file is XML, not a ZIP: say what it is instead of "not a ZIP".
    private static func refuseDigiDocXML(_ file: PosixFile) throws {
        let head = try file.read(count: 1024, at: 0)
        let text = String(decoding: head, as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        if trimmed.hasPrefix("<"), text.contains("SignedDoc") {
            throw ContainerError.refused("this is a DDOC (DigiDoc 1.x XML file), not an ASiC container: DDOC is not supported; its content can be validated with SiVa")
        }
    }

    /// Structural checks on every entry: safe names, no duplicates, supported methods, no overlap
    /// (overlapping entries are how the densest zip bombs reuse one compressed stream).
    private static func checkEntries(_ entries: [ZipEntry], dataLimit: UInt64) throws {
        var names = Set<String>()
        for entry in entries {
            try EntryName.validate(entry.name, isDirectory: entry.isDirectory)
            guard names.insert(entry.name).inserted else {
                throw ContainerError.notASiC("the ZIP holds '\(entry.name)' twice")
            }
            if entry.flags & (ZipFlag.encrypted | ZipFlag.strongEncryption) != 0 {
                throw ContainerError.unsupported("'\(entry.name)' is encrypted")
            }
            if entry.method != ZipMethod.stored && entry.method != ZipMethod.deflated {
                throw ContainerError.unsupported("compression method \(entry.method) of '\(entry.name)'")
            }
        }
        let byOffset = entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (index, entry) in byOffset.enumerated() {
            let header = entry.localHeaderOffset.addingReportingOverflow(30 + UInt64(entry.rawName.count))
            let end = header.partialValue.addingReportingOverflow(entry.compressedSize)
            let limit = index + 1 < byOffset.count ? byOffset[index + 1].localHeaderOffset : dataLimit
            if header.overflow || end.overflow || end.partialValue > limit {
                throw ContainerError.corruptZip("the data of '\(entry.name)' overlaps the next entry or the directory")
            }
        }
    }

    private static func readMimetype(_ entry: ZipEntry, file: PosixFile, limit: UInt64) throws -> String {
        let location = try EntryLocation.resolve(entry, in: file, dataLimit: limit)
        var bytes = try EntryStream.readAll(location, in: file, limit: 256)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw ContainerError.notASiC("the mimetype is UTF-16")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ContainerError.notASiC("the mimetype is not text")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The name of an ASiC-S container's (first) time-stamp token.
    public static let asicSTimeStamp = "META-INF/timestamp.tst"

    /// `META-INF/ASiCArchiveManifest*.xml`: an archive manifest of a long-term ASiC-S.
    public static func isArchiveManifest(_ name: String) -> Bool {
        guard name.hasPrefix(EntryName.metaInfPrefix) else { return false }
        let base = name.dropFirst(EntryName.metaInfPrefix.count)
        return base.hasPrefix("ASiCArchiveManifest") && base.hasSuffix(".xml") && !base.contains("/")
    }

    private static func isSignatureFile(_ name: String, kind: ContainerKind) -> Bool {
        let base = String(name.dropFirst(EntryName.metaInfPrefix.count))
        if base.contains("/") { return false }
        switch kind {
        case .asicE:
            // XAdES (libdigidocpp's rule), and CAdES or time-stamp tokens, which also cover the data files.
            return (base.contains("signatures") && base.hasSuffix(".xml")) || base.hasSuffix(".p7s")
                || (base.contains("timestamp") && base.hasSuffix(".tst"))
        case .asicS:
            // timestamp.tst, and the later tokens and archive manifests of a long-term ASiC-S
            // (timestamp002.tst, ASiCArchiveManifest.xml, ...: ETSI EN 319 162-1).
            return (base.hasPrefix("timestamp") && base.hasSuffix(".tst")) || isArchiveManifest(name)
                || base.hasSuffix(".p7s") || (base.contains("signature") && base.hasSuffix(".xml"))
        }
    }

    // MARK: - Reading

    /// The status of the file this snapshot was read from (to notice changes by other programs).
    public func fileStatus() throws -> stat { try file.status() }

    /// The file this snapshot reads (device and inode when it was opened).
    var identity: FileIdentity { FileIdentity(openedStatus) }

    public func dataFile(named name: String) -> DataFile? {
        indexByName[name].map { dataFiles[$0] }
    }

    /// Random access to a data file's bytes (cached: one seek index per entry and snapshot).
    public func content(of name: String) throws -> EntryContent {
        guard let dataFile = dataFile(named: name) else { throw ContainerError.noSuchFile(name) }
        cacheLock.lock(); defer { cacheLock.unlock() }
        if let cached = contentCache[name] { return cached }
        let location = try EntryLocation.resolve(dataFile.entry, in: file, dataLimit: directory.centralDirectoryOffset)
        let content: EntryContent = dataFile.entry.isDeflated
            ? DeflatedEntryContent(file: file, location: location, directReads: directReads)
            : StoredEntryContent(file: file, location: location, directReads: directReads)
        contentCache[name] = content
        return content
    }

    /// The SHA-256 of a data file, as a signature's reference needs it. A file this process
    /// wrote into the container, or hashed before, is not read again; any other is streamed
    /// (and CRC-checked) once.
    public func sha256(of name: String) throws -> [UInt8] {
        guard let dataFile = dataFile(named: name) else { throw ContainerError.noSuchFile(name) }
        if let known = knownDigest(of: dataFile) { return known }
        let hasher = Hasher(.sha256)
        try read(name) { hasher.update($0) }
        let digest = hasher.finish()
        remember(sha256: digest, of: dataFile.entry, as: name)
        return digest
    }

    /// Whether the SHA-256 of `name` is known without reading it (for tests and benchmarks).
    public func knowsSHA256(of name: String) -> Bool {
        dataFile(named: name).flatMap(knownDigest(of:)) != nil
    }

    func knownDigest(of dataFile: DataFile) -> [UInt8]? {
        cacheLock.withLock {
            guard let known = knownSHA256[dataFile.name], known.crc32 == dataFile.entry.crc32,
                  known.size == dataFile.entry.uncompressedSize else { return nil }
            return known.sha256
        }
    }

    /// Records a digest for the data file `name` whose entry is `entry` (ignored when `name` is
    /// not that data file of this snapshot).
    func remember(sha256: [UInt8], of entry: ZipEntry, as name: String) {
        guard let current = dataFile(named: name)?.entry, current.crc32 == entry.crc32,
              current.uncompressedSize == entry.uncompressedSize else { return }
        cacheLock.withLock { knownSHA256[name] = KnownDigest(crc32: entry.crc32, size: entry.uncompressedSize, sha256: sha256) }
    }

    /// Takes the digests a save knows for this snapshot, which it made as `file`: `written` holds
    /// what the save wrote itself, and `names` maps names here to the names the same bytes had in
    /// `base` (kept or renamed files, whose digests carry over).
    func takeDigests(savedAs file: FileIdentity, written: [String: (ZipEntry, [UInt8])],
                     carriedFrom base: Container? = nil, names: [String: String] = [:]) {
        // Another program may have put a different file at the path since: then nothing carries.
        guard identity == file else { return }
        for (newName, oldName) in names {
            guard let old = base?.dataFile(named: oldName), let digest = base?.knownDigest(of: old) else { continue }
            remember(sha256: digest, of: old.entry, as: newName)
        }
        for (name, (entry, digest)) in written { remember(sha256: digest, of: entry, as: name) }
    }

    /// Streams a data file from start to end, checking its size and CRC-32 (see `EntryStream`).
    public func read(_ name: String, chunk: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let dataFile = dataFile(named: name) else { throw ContainerError.noSuchFile(name) }
        try EntryStream.forEachChunk(of: location(of: dataFile.entry), in: file, chunk)
    }

    /// The bytes of a signature file (for the signature layer and `signatures/`).
    public func signatureBytes(_ signature: SignatureFile) throws -> [UInt8] {
        try EntryStream.readAll(location(of: signature.entry), in: file, limit: Self.maximumMetadataSize)
    }

    func location(of entry: ZipEntry) throws -> EntryLocation {
        try EntryLocation.resolve(entry, in: file, dataLimit: directory.centralDirectoryOffset)
    }

    /// Starts a set of changes to this container; nothing happens on disk until `save()`.
    public func edit() -> ContainerEdit { ContainerEdit(base: self) }
}
