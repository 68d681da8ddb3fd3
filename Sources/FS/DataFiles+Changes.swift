import ASiC
import Foundation

/// Changes to the tree of data files: removing, making and removing folders, renaming, times.
extension DataFiles {
    // MARK: - Changing the tree

    func unlink(_ name: String) throws {
        try lock.withLock {
            // The last close of a file removed while open (see `removedWhileOpen`).
            if removedWhileOpen.removeValue(forKey: name) != nil { return }
            guard view[name] != nil else { throw FileSystemError(isFolder(name) ? EISDIR : ENOENT) }
            try checkWritable("remove '\(name)'")
            removeFromView(name)
        }
        scheduler?.changed()
    }

    /// Removes a data file from the view (the caller holds `lock` and has checked it may).
    @discardableResult
    private func removeFromView(_ name: String) -> Entry? {
        guard let entry = view.removeValue(forKey: name) else { return nil }
        if case .spooled(let spool) = entry { spool.removed = true }
        order.remove(name)
        temporaries.remove(name)
        keepParentFolder(of: name)
        noteChange()
        return entry
    }

    /// libfuse's name for a file removed while open.
    static func isRemovedWhileOpenName(_ name: String) -> Bool {
        PathText.lastComponent(of: name).hasPrefix(".fuse_hidden")
    }

    /// `rm` of an open file, as libfuse sends it: a rename to `.fuse_hidden…`.
    private func removeWhileOpen(_ from: String, keepingAs hiddenName: String) throws {
        try lock.withLock {
            guard view[from] != nil else { throw FileSystemError(isFolder(from) ? EISDIR : ENOENT) }
            try checkWritable("remove '\(from)'")
            removedWhileOpen[hiddenName] = removeFromView(from)
        }
        scheduler?.changed()
    }

    /// Removing the last file of a folder leaves the folder, as on any filesystem.
    private func keepParentFolder(of name: String) {
        let parent = PathText.parent(of: name)
        if !parent.isEmpty && !isFolder(parent) { emptyFolders.insert(parent) }
    }

    func makeFolder(_ name: String) throws {
        // No trash inside a container: file managers then offer to delete permanently, as they
        // do on read-only media, instead of putting the file into the container under .Trash.
        if TransientNames.isTrashFolder(name) {
            throw failure(EPERM, "cannot create '\(name)': a container keeps no trash folder (delete permanently instead)")
        }
        try lock.withLock {
            if view[name] != nil || isFolder(name) { throw FileSystemError(EEXIST) }
            try checkWritable("create the folder '\(name)'")
            try checkNewName(name)
            emptyFolders.insert(name)
        }
    }

    func removeFolder(_ name: String) throws {
        try lock.withLock {
            if view[name] != nil { throw FileSystemError(ENOTDIR) }
            guard isFolder(name), !name.isEmpty else { throw FileSystemError(name.isEmpty ? EBUSY : ENOENT) }
            if order.hasFiles(below: name) || emptyFolders.contains(where: { $0.hasPrefix(name + "/") }) {
                throw FileSystemError(ENOTEMPTY)
            }
            try checkWritable("remove the folder '\(name)'")
            emptyFolders.remove(name)
            keepParentFolder(of: name)
        }
    }

    /// Renames a file or a whole folder. Renaming over an existing file replaces it, as rename(2) does.
    func rename(_ from: String, to: String, flags: RenameFlags) throws {
        if Self.isRemovedWhileOpenName(to), flags.isEmpty { return try removeWhileOpen(from, keepingAs: to) }
        if flags.contains(.exchange) { throw FileSystemError(EINVAL) }
        try lock.withLock {
            let fromIsFile = view[from] != nil
            guard fromIsFile || (isFolder(from) && !from.isEmpty) else { throw FileSystemError(ENOENT) }
            if from == to { return }
            try checkWritable("rename '\(from)'")
            if to.hasPrefix(from + "/") { throw FileSystemError(EINVAL) }
            let targetIsFile = view[to] != nil, targetIsFolder = !targetIsFile && isFolder(to)
            if (targetIsFile || targetIsFolder) && flags.contains(.noReplace) { throw FileSystemError(EEXIST) }
            if fromIsFile {
                if targetIsFolder { throw FileSystemError(EISDIR) }
                if !targetIsFile { try checkNewName(to) }
                if targetIsFile { order.remove(to) }
                // A temporary stays one under another transient name and becomes a data file
                // under a normal one (an editor saving through it); a data file stays data.
                temporaries.remove(to)
                if temporaries.remove(from) != nil, transient.matches(to) { temporaries.insert(to) }
                view[to] = view.removeValue(forKey: from)
                order.rename(from, to: to)
            } else {
                if targetIsFile { throw FileSystemError(ENOTDIR) }
                if targetIsFolder {
                    if order.hasFiles(below: to) { throw FileSystemError(ENOTEMPTY) }
                    emptyFolders.remove(to)
                } else {
                    try checkNewName(to)
                }
                let prefix = from + "/"
                // Every new name is checked before anything moves, so a refusal changes nothing.
                let moves = order.filter { $0.hasPrefix(prefix) }.map { ($0, to + "/" + $0.dropFirst(prefix.count)) }
                for (_, new) in moves {
                    do { try EntryName.validateDataFileName(new) } catch { throw failure(EINVAL, "\(error)") }
                }
                for (old, new) in moves {
                    view[new] = view.removeValue(forKey: old)
                    order.rename(old, to: new)
                    if temporaries.remove(old) != nil { temporaries.insert(new) }
                }
                emptyFolders = Set(emptyFolders.map { $0 == from ? to : $0.hasPrefix(prefix) ? to + "/" + $0.dropFirst(prefix.count) : $0 })
            }
            keepParentFolder(of: from)
            removeEmptyFolders(above: to)
            noteChange()
        }
        invalidate?("/" + to)
        scheduler?.changed()
    }

    /// Sets a data file's modification time (`touch`); folders accept and ignore it.
    func setModified(_ name: String, to date: Date?) throws {
        try lock.withLock {
            guard let entry = view[name] else {
                if isFolder(name) || removedWhileOpen[name] != nil { return }
                throw FileSystemError(ENOENT)
            }
            try checkWritable("change the time of '\(name)'")
            let when = date ?? Date()
            switch entry {
            case .stored(let file, _): view[name] = .stored(file, modified: when)
            case .spooled(let spool): spool.setModified(when)
            }
            noteChange()
        }
        scheduler?.changed()
    }
}
