import Foundation

/// Adding and removing signature files (META-INF/signaturesN.xml). Data files and the manifest are
/// copied byte for byte, so existing signatures stay valid.
extension Container {
    /// The name for a new XAdES signature file: the lowest unused `META-INF/signaturesN.xml`.
    public var nextSignatureFileName: String {
        let taken = Set(signatureFiles.map(\.name))
        var n = 0
        while taken.contains("META-INF/signatures\(n).xml") { n += 1 }
        return "META-INF/signatures\(n).xml"
    }

    /// True when the file on disk is still the version this snapshot read: the same inode, and
    /// the size and modification time it had when it was opened (so a rewrite in place counts too).
    public var isCurrentOnDisk: Bool {
        var now = stat()
        guard stat(AtomicSave.resolvedTarget(path), &now) == 0 else { return false }
        let then = openedStatus
        return now.st_ino == then.st_ino && now.st_dev == then.st_dev && now.st_size == then.st_size
            && now.st_mtim.tv_sec == then.st_mtim.tv_sec && now.st_mtim.tv_nsec == then.st_mtim.tv_nsec
    }

    /// Writes the container again with `adding` signature files and without those named in
    /// `removing`, atomically, and returns the new snapshot. Refuses when the file changed on
    /// disk since this snapshot was read: a signature must cover what the signer saw.
    @discardableResult
    public func savingSignatures(adding: [(name: String, bytes: [UInt8])], removing: Set<String> = []) throws -> Container {
        guard kind == .asicE else {
            throw ContainerError.refused("this is an ASiC-S container: asicfs signs ASiC-E containers only")
        }
        for name in removing where !signatureFiles.contains(where: { $0.name == name }) {
            throw ContainerError.refused("there is no signature file \(name)")
        }
        for (name, _) in adding {
            try EntryName.validate(name, isDirectory: false)
            // A file of the same name may be replaced (removed and added: an extended signature).
            guard name.hasPrefix(EntryName.metaInfPrefix), removing.contains(name) || !signatureFiles.contains(where: { $0.name == name }) else {
                throw ContainerError.refused("cannot add the signature file \(name)")
            }
        }
        guard isCurrentOnDisk else {
            throw ContainerError.refused("the container was changed by another program meanwhile; nothing was written")
        }
        if removing.isEmpty {
            // Adding only: keep every byte where it is (a reflink clone where the filesystem has
            // them) and append the new entries and a new central directory.
            let saved = try AtomicSave.replace(path) { output in
                let keepEnd = Int64(directory.centralDirectoryOffset)
                if output.cloneContents(of: file) {
                    try output.truncate(to: keepEnd)
                } else {
                    try output.copy(from: file, sourceOffset: 0, length: keepEnd, to: 0)
                }
                let writer = ZipWriter(file: output, startingAt: keepEnd)
                var central = directory.entries
                for (name, bytes) in adding {
                    central.append(try writer.write(name: name, bytes: bytes, compress: true, modified: Date(),
                                                    timestampExtra: false, storeWhenNotSmaller: false))
                }
                try writer.finish(central)
            }
            return try carryingDigests(to: Container.open(path), savedAs: saved)
        }
        let saved = try AtomicSave.replace(path) { output in
            let writer = ZipWriter(file: output)
            var central: [ZipEntry] = []
            let kept = [mimetypeEntry] + dataFiles.map(\.entry) + (manifestEntry.map { [$0] } ?? [])
                + signatureFiles.filter { !removing.contains($0.name) }.map(\.entry) + otherEntries
            for entry in kept {
                central.append(try writer.copy(entry, at: try location(of: entry), from: file, renamedTo: nil, modified: nil))
            }
            for (name, bytes) in adding {
                central.append(try writer.write(name: name, bytes: bytes, compress: true, modified: Date(),
                                                timestampExtra: false, storeWhenNotSmaller: false))
            }
            try writer.finish(central)
        }
        return try carryingDigests(to: Container.open(path), savedAs: saved)
    }

    /// Signatures change no data file: what is known of their digests stays true.
    private func carryingDigests(to saved: Container, savedAs file: FileIdentity) -> Container {
        saved.takeDigests(savedAs: file, written: [:], carriedFrom: self,
                          names: Dictionary(uniqueKeysWithValues: dataFiles.map { ($0.name, $0.name) }))
        return saved
    }
}
