import Foundation

/// A new data file to put into a container: its bytes come from a file on disk.
public struct NewDataFile: Sendable {
    public var name: String
    public var sourcePath: String
    /// The bytes themselves, for small files held in memory (then `sourcePath` is only a label).
    public var bytes: [UInt8]?
    /// The file already open (a mount's spool): read through this descriptor, never by looking
    /// `sourcePath` up again, which another user may have swapped meanwhile (then `sourcePath`
    /// is only a label).
    public var openFile: PosixFile?
    public var mediaType: String
    public var modified: Date?
    /// Where the save can get the source's CRC-32 and SHA-256 without hashing it again (a file
    /// copied into a mount is hashed while it is written). Used only when its CRC-32 equals
    /// the one the save computes from the bytes it writes.
    public var digest: (any ContentDigestSource)?

    /// `name` defaults to the source's base name, `mediaType` to a guess from the name.
    /// A small data file whose bytes are in memory.
    public init(bytes: [UInt8], name: String, mediaType: String? = nil, modified: Date? = nil) {
        self.init(sourcePath: name, name: name, mediaType: mediaType, modified: modified)
        self.bytes = bytes
    }

    public init(sourcePath: String, name: String? = nil, mediaType: String? = nil, modified: Date? = nil) {
        let resolvedName = name ?? PathText.lastComponent(of: sourcePath)
        self.name = resolvedName
        self.sourcePath = sourcePath
        self.mediaType = mediaType ?? MediaType.guess(forName: resolvedName)
        self.modified = modified
    }
}

/// One data file of a planned layout: where its bytes come from and under which name.
public struct PlannedDataFile: Sendable {
    public enum Source: Sendable {
        /// A data file of the container being edited (copied as its compressed bytes).
        case existing(DataFile)
        /// New bytes from a file on disk.
        case file(NewDataFile)
    }

    public var name: String
    public var source: Source
    /// A new modification time, or nil to keep the file's own.
    public var modified: Date?

    public init(name: String, source: Source, modified: Date? = nil) {
        self.name = name
        self.source = source
        self.modified = modified
    }
}

/// Progress of a save, in bytes of data files written so far out of the total.
public typealias SaveProgress = (_ done: Int64, _ total: Int64) -> Void

/// A set of changes to an unsigned ASiC-E container, committed by one atomic `save()`.
/// Every change is checked when it is made, so a bad request fails before anything is written.
public struct ContainerEdit {
    enum Item {
        case existing(DataFile, name: String, modified: Date?)
        case new(NewDataFile)

        var name: String {
            switch self {
            case .existing(_, let name, _): return name
            case .new(let file): return file.name
            }
        }
        var mediaType: String {
            switch self {
            case .existing(let file, _, _): return file.mediaType
            case .new(let file): return file.mediaType
            }
        }
        /// True when this item is `file` of the base container, untouched (same name, same time).
        func keeps(_ file: DataFile) -> Bool {
            if case .existing(let existing, let name, let modified) = self {
                return existing == file && name == file.name && modified == nil
            }
            return false
        }
        /// The new file this item adds, if it is one.
        var newFile: NewDataFile? {
            if case .new(let file) = self { return file }
            return nil
        }
    }

    let base: Container?
    private(set) var items: [Item]
    /// The names of `items`, made when first needed (`ensureIndex`); add, remove and rename keep
    /// it in step, setLayout drops it.
    private var index: NameIndex?

    /// Deflate level for new data files, in zlib's numbers (1–9; ISA-L serves them, see
    /// `DeflateLevel`); nil is `automaticLevel`, zlib's 6 for every file.
    public var compressionLevel: Int32? = nil

    /// zlib's default level 6 for every size: ISA-L serves it (its level 3) about eight times
    /// faster than zlib -6 and twice as fast as zlib -1 was, within 3 % of zlib -6's size, so
    /// large files no longer need a faster, worse level.
    public static func automaticLevel(forSize size: Int64) -> Int32 {
        6
    }

    init(base: Container?) {
        self.base = base
        items = base?.dataFiles.map { .existing($0, name: $0.name, modified: nil) } ?? []
    }

    /// The names the container will hold after the changes made so far.
    public var names: [String] { items.map(\.name) }

    private func checkEditable() throws {
        guard let base, let freeze = DataFileFreeze.of(base) else { return }
        throw ContainerError.refused(freeze.reason)
    }

    /// Makes the index of `items` if there is none. (Read it in place, `index!`: a copy kept
    /// while it changes would copy every name.)
    private mutating func ensureIndex() {
        if index == nil { index = NameIndex(items.map(\.name)) }
    }

    /// Adds a data file. With `replacing`, a data file of the same name is replaced.
    public mutating func add(_ file: NewDataFile, replacing: Bool = false) throws {
        try checkEditable()
        try EntryName.validateDataFileName(file.name)
        var st = stat()
        // In-memory files have no source on disk to check.
        if let open = file.openFile {
            st = try open.status()
            guard st.st_mode & S_IFMT == S_IFREG else { throw ContainerError.notRegularFile(file.sourcePath) }
        } else if file.bytes == nil {
            guard stat(file.sourcePath, &st) == 0 else {
                throw ContainerError.io(path: file.sourcePath, operation: "cannot read", errno: errno)
            }
            guard st.st_mode & S_IFMT == S_IFREG else {
                throw ContainerError.notRegularFile(file.sourcePath)
            }
            guard access(file.sourcePath, R_OK) == 0 else {
                throw ContainerError.io(path: file.sourcePath, operation: "cannot read", errno: errno)
            }
        }
        ensureIndex()
        if index!.contains(file.name), let position = items.firstIndex(where: { $0.name == file.name }) {
            guard replacing else { throw ContainerError.refused("a data file named '\(file.name)' already exists") }
            index?.remove(file.name)
            items.remove(at: position)
        }
        try checkNoFolderClash(file.name)
        var file = file
        if file.modified == nil {
            file.modified = file.bytes == nil ? Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec)) : Date()
        }
        index?.insert(file.name)
        items.append(.new(file))
    }

    public mutating func remove(_ name: String) throws {
        try checkEditable()
        guard let position = items.firstIndex(where: { $0.name == name }) else { throw ContainerError.noSuchFile(name) }
        index?.remove(name)
        items.remove(at: position)
    }

    public mutating func rename(_ name: String, to newName: String) throws {
        try checkEditable()
        guard let position = items.firstIndex(where: { $0.name == name }) else { throw ContainerError.noSuchFile(name) }
        if name == newName { return }
        try EntryName.validateDataFileName(newName)
        ensureIndex()
        if index!.contains(newName) {
            throw ContainerError.refused("a data file named '\(newName)' already exists")
        }
        index?.remove(name)
        let item = items.remove(at: position)
        try checkNoFolderClash(newName)
        index?.insert(newName)
        switch item {
        case .existing(let file, _, let modified): items.insert(.existing(file, name: newName, modified: modified), at: position)
        case .new(var file): file.name = newName; items.insert(.new(file), at: position)
        }
    }

    /// A name cannot be both a file and a folder (`a` and `a/b`): the mount could not show both.
    private mutating func checkNoFolderClash(_ name: String) throws {
        ensureIndex()
        if index!.isFolder(name) {
            throw ContainerError.refused("'\(name)' is already a folder in the container")
        }
        if let file = index!.fileAbove(name) {
            throw ContainerError.refused("'\(file)' is a file, so '\(name)' cannot be inside it")
        }
    }

    /// Sets the whole list of data files at once (what a filesystem needs after any mix of adds,
    /// replacements, renames, removals and time changes): the checks are the same as for the
    /// single steps. Existing files may be renamed or get a new modification time.
    public mutating func setLayout(_ layout: [PlannedDataFile]) throws {
        guard let base else { throw ContainerError.refused("nothing to change") }
        let unchanged = layout.count == base.dataFiles.count && zip(layout, base.dataFiles).allSatisfy { planned, file in
            if case .existing(let existing) = planned.source, existing == file, planned.name == file.name,
               planned.modified == nil { return true }
            return false
        }
        if unchanged { return }
        try checkEditable()
        var names = Set<String>()
        var newItems: [Item] = []
        for planned in layout {
            guard names.insert(planned.name).inserted else {
                throw ContainerError.refused("a data file named '\(planned.name)' already exists")
            }
            switch planned.source {
            case .existing(let file):
                if planned.name != file.name { try EntryName.validateDataFileName(planned.name) }
                newItems.append(.existing(file, name: planned.name, modified: planned.modified))
            case .file(var file):
                try EntryName.validateDataFileName(planned.name)
                file.name = planned.name
                if let modified = planned.modified { file.modified = modified }
                newItems.append(.new(file))
            }
        }
        // A name cannot be both a file and a folder: check every parent of every name (n × depth).
        for name in names {
            var parent = PathText.parent(of: name)
            while !parent.isEmpty {
                if names.contains(parent) {
                    throw ContainerError.refused("'\(parent)' is a file, so '\(name)' cannot be inside it")
                }
                parent = PathText.parent(of: parent)
            }
        }
        items = newItems
        index = nil
    }

    /// False while the planned data files are exactly the container's own, unchanged.
    public var hasChanges: Bool {
        guard let base else { return true }
        return items.count != base.dataFiles.count || !zip(items, base.dataFiles).allSatisfy { $0.keeps($1) }
    }

    /// The base's files come first, untouched and in order, and everything after them is new:
    /// the save can append instead of rewriting.
    private var isAppendOnly: Bool {
        guard let base, base.dataFiles.count <= items.count else { return false }
        return zip(items, base.dataFiles).allSatisfy { $0.keeps($1) } && items.dropFirst(base.dataFiles.count).allSatisfy { $0.newFile != nil }
    }

    /// Writes the changed container atomically and returns the new snapshot (the same one, without
    /// touching the file, when nothing changed).
    @discardableResult
    public func save(progress: SaveProgress? = nil) throws -> Container {
        guard let base else { throw ContainerError.refused("nothing to save") }
        if !hasChanges { return base }
        let written = isAppendOnly
            ? try ContainerWriter(edit: self, progress: progress).append(to: base)
            : try ContainerWriter(edit: self, progress: progress).rewrite(base.path, from: base)
        let saved = try Container.open(base.path)
        var kept: [String: String] = [:]
        for case .existing(let file, let name, _) in items { kept[name] = file.name }
        saved.takeDigests(savedAs: written.file, written: written.digests, carriedFrom: base, names: kept)
        return saved
    }
}

extension Container {
    /// Creates a new ASiC-E container holding `files`. An existing non-empty file is never
    /// overwritten (a 0-byte placeholder, as `mktemp` leaves, may be).
    @discardableResult
    public static func create(at path: String, files: [NewDataFile], compressionLevel: Int32? = nil,
                              progress: SaveProgress? = nil) throws -> Container {
        var st = stat()
        if lstat(path, &st) == 0 {
            if st.st_mode & S_IFMT == S_IFDIR { throw ContainerError.io(path: path, operation: "cannot create", errno: EISDIR) }
            if st.st_size > 0 { throw ContainerError.refused("it already exists (create never overwrites a container)") }
        }
        var edit = ContainerEdit(base: nil)
        edit.compressionLevel = compressionLevel
        for file in files { try edit.add(file) }
        let written = try ContainerWriter(edit: edit, progress: progress).rewrite(path, from: nil)
        let created = try Container.open(path)
        created.takeDigests(savedAs: written.file, written: written.digests)
        return created
    }
}

/// Turns a `ContainerEdit` into bytes on disk.
private struct ContainerWriter {
    let edit: ContainerEdit
    let progress: SaveProgress?

    private var total: Int64 {
        edit.items.reduce(0) { sum, item in
            if case .new(let file) = item {
                var st = stat()
                if let bytes = file.bytes { return sum + Int64(bytes.count) }
                if let open = file.openFile { return sum + ((try? open.size()) ?? 0) }
                return sum + (stat(file.sourcePath, &st) == 0 ? Int64(st.st_size) : 0)
            }
            return sum
        }
    }

    private var manifest: Manifest {
        Manifest(containerMediaType: MediaType.asicE,
                 files: edit.items.map { Manifest.FileEntry(fullPath: $0.name, mediaType: $0.mediaType) })
    }

    /// Adding only: keep every existing byte where it is (a reflink clone where the filesystem
    /// offers one), drop the old manifest when it is the last entry, and append the new data
    /// files, a new manifest and a new central directory.
    /// The file a save made, and the data files it wrote itself: by name, entry and SHA-256.
    struct Written {
        var file: FileIdentity
        var digests: [String: (ZipEntry, [UInt8])]
    }

    func append(to base: Container) throws -> Written {
        let manifestIsLast = base.manifestEntry.map { manifest in
            !base.directory.entries.contains { $0.localHeaderOffset > manifest.localHeaderOffset }
        } ?? false
        let keepEnd = Int64(manifestIsLast ? base.manifestEntry!.localHeaderOffset : base.directory.centralDirectoryOffset)
        var digests: [String: (ZipEntry, [UInt8])] = [:]
        let identity = try AtomicSave.replace(base.path) { output in
            if output.cloneContents(of: base.file) {
                try output.truncate(to: keepEnd)
            } else {
                try output.copy(from: base.file, sourceOffset: 0, length: keepEnd, to: 0)
            }
            let writer = ZipWriter(file: output, startingAt: keepEnd)
            var central = [base.mimetypeEntry] + base.dataFiles.map(\.entry)
            var done: Int64 = 0
            central += try writeNew(edit.items.compactMap(\.newFile), writer, done: &done, total: total)
            central.append(try writeManifest(writer))
            // Where the old manifest was not last, its bytes stay behind as unreferenced space.
            central += base.otherEntries
            try writer.finish(central)
            digests = Self.digests(of: central, from: writer)
        }
        return Written(file: identity, digests: digests)
    }

    private static func digests(of central: [ZipEntry], from writer: ZipWriter) -> [String: (ZipEntry, [UInt8])] {
        var digests: [String: (ZipEntry, [UInt8])] = [:]
        for entry in central {
            if let digest = writer.sha256ByName[entry.name] { digests[entry.name] = (entry, digest) }
        }
        return digests
    }

    /// Everything else: write a fresh file, copying unchanged entries' compressed bytes as they are.
    func rewrite(_ path: String, from base: Container?) throws -> Written {
        var digests: [String: (ZipEntry, [UInt8])] = [:]
        let identity = try AtomicSave.replace(path) { output in
            let writer = ZipWriter(file: output)
            var central: [ZipEntry] = []
            central.append(try writer.write(
                name: EntryName.mimetype, bytes: Array(MediaType.asicE.utf8), compress: false,
                modified: base?.mimetypeEntry.modified ?? Date(), timestampExtra: false))
            var done: Int64 = 0
            let total = self.total
            var newRun: [NewDataFile] = []
            for item in edit.items {
                switch item {
                case .existing(let file, let name, let modified):
                    central += try writeNew(newRun, writer, done: &done, total: total)
                    newRun = []
                    let location = try base!.location(of: file.entry)
                    central.append(try writer.copy(file.entry, at: location, from: base!.file,
                                                   renamedTo: name == file.name ? nil : name, modified: modified))
                case .new(let file):
                    newRun.append(file)
                }
            }
            central += try writeNew(newRun, writer, done: &done, total: total)
            central.append(try writeManifest(writer))
            if let base {
                for entry in base.signatureFiles.map(\.entry) + base.otherEntries {
                    central.append(try writer.copy(entry, at: try base.location(of: entry), from: base.file,
                                                   renamedTo: nil, modified: nil))
                }
            }
            try writer.finish(central)
            digests = Self.digests(of: central, from: writer)
        }
        return Written(file: identity, digests: digests)
    }

    /// New data files, in order: runs of small ones held in memory are prepared together
    /// (`SmallFileBatch`, two threads), the others streamed one by one. `done` counts the bytes
    /// written so far, for the progress.
    private func writeNew(_ files: [NewDataFile], _ writer: ZipWriter, done: inout Int64, total: Int64) throws -> [ZipEntry] {
        var written: [ZipEntry] = []
        var smallRun: [NewDataFile] = []
        func writeSmallRun() throws {
            guard !smallRun.isEmpty else { return }
            let entries = try writer.write(try SmallFileBatch.prepare(smallRun))
            done += entries.reduce(0) { $0 + Int64($1.uncompressedSize) }
            written += entries
            smallRun.removeAll()
        }
        for file in files {
            if file.bytes != nil {
                smallRun.append(file)
                continue
            }
            try writeSmallRun()
            written.append(try writeNew(streamedFrom: file, writer, doneBefore: done, total: total))
            done += Int64(written.last!.uncompressedSize)
        }
        try writeSmallRun()
        return written
    }

    private func writeNew(streamedFrom file: NewDataFile, _ writer: ZipWriter, doneBefore: Int64, total: Int64) throws -> ZipEntry {
        let source = try file.openFile ?? PosixFile.openForReading(file.sourcePath)
        let size = try source.size()
        TestGate.hold(TestGate.dataWriteGate)
        return try writer.write(
            name: file.name, from: source, compress: !MediaType.isAlreadyCompressed(file.name),
            level: DeflateLevel(zlib: edit.compressionLevel ?? ContainerEdit.automaticLevel(forSize: size)),
            modified: file.modified ?? Date(), known: file.digest?.digest(ofSize: size)) { done in
                progress?(doneBefore + done, total)
            }
    }

    private func writeManifest(_ writer: ZipWriter) throws -> ZipEntry {
        // The manifest is always deflated, as the reference implementation writes it.
        try writer.write(name: Manifest.path, bytes: manifest.serialized(), compress: true,
                         modified: Date(), timestampExtra: false, storeWhenNotSmaller: false)
    }
}
