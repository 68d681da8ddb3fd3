import ASiC
import Foundation

/// Browse mode: changing the tree. Real paths change the real folder; paths inside a container
/// go to its child; a container's folder itself is its file (mkdir makes one, rmdir removes an
/// empty unsigned one, rename renames the file after saving it).
extension BrowseFileSystem {
    /// The descriptor kept for a real file removed while open, when `relative` is libfuse's
    /// `.fuse_hidden…` name for it.
    func hiddenDescriptor(_ relative: String) -> Int32? {
        guard DataFiles.isRemovedWhileOpenName(relative) else { return nil }
        return lock.withLock { removedWhileOpen[relative] }
    }

    public func truncate(_ path: String?, to length: Int64, handle id: UInt64?) throws {
        if let id, case .plain(let file) = try handle(id) {
            return try onDescriptor { ftruncate(file.fd, off_t(length)) }
        }
        if let id, case .child(let child, let inner) = try handle(id), path == nil {
            return try child.router.truncate(nil, to: length, handle: inner)
        }
        guard let path else { throw FileSystemError(EBADF) }
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return try onDescriptor { ftruncate(fd, off_t(length)) } }
                try folder.truncate(relative, to: length)
            case .child(let child, let inner):
                var innerHandle: UInt64?
                if let id, case .child(_, let handle) = try handle(id) { innerHandle = handle }
                try child.router.truncate(inner, to: length, handle: innerHandle)
            case .container, .newContainer:
                throw FileSystemError(EISDIR)
            }
        }
    }

    /// A call on a real file's descriptor, with the caller's rights.
    private func onDescriptor(_ call: () -> Int32) throws {
        try CallerRights.run { try folder.check(call()) }
    }

    public func unlink(_ path: String) throws {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                // The last close of a file removed while open: it is gone from the folder already.
                if DataFiles.isRemovedWhileOpenName(relative),
                   let fd = lock.withLock({ removedWhileOpen.removeValue(forKey: relative) }) {
                    Glibc.close(fd)
                    return
                }
                try folder.unlink(relative)
            case .child(let child, let inner):
                if inner == "/" { throw FileSystemError(EISDIR) }
                try child.router.unlink(inner)
            case .container, .newContainer(_, "/"):
                throw FileSystemError(EISDIR)
            case .newContainer:
                throw FileSystemError(ENOENT)
            }
        }
    }

    public func makeFolder(_ path: String, mode: mode_t) throws {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                let sealable = Self.isSealableName(relative)
                guard sealable || Self.isCreatableName(relative) else { return try folder.makeFolder(relative, mode: mode) }
                // A new container: shown at once, on disk with its first file (an encrypted
                // one: when sealed).
                if folder.statusIfAny(relative) != nil { throw FileSystemError(EEXIST) }
                let parent = PathText.folder(of: relative)
                let parentStatus = try folder.status(parent)
                if parentStatus.st_mode & S_IFMT != S_IFDIR { throw FileSystemError(ENOTDIR) }
                if readOnly { throw FileSystemError(EROFS) }
                try folder.access(parent, W_OK | X_OK)
                if sealable { return try startSealing(relative) }
                lock.withLock { newContainers[relative] = NewContainer() }
            case .child(let child, let inner):
                if inner == "/" { throw FileSystemError(EEXIST) }
                try child.router.makeFolder(inner, mode: 0o755)
            case .newContainer(let relative, let inner):
                if inner == "/" { throw FileSystemError(EEXIST) }
                try withMadeContainer(relative) { try $0.router.makeFolder(inner, mode: 0o755) }
            case .container:
                throw FileSystemError(EEXIST)
            }
        }
    }

    public func removeFolder(_ path: String) throws {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative):
                let prefix = relative + "/"
                if lock.withLock({ newContainers.keys.contains { $0.hasPrefix(prefix) } }) { throw FileSystemError(ENOTEMPTY) }
                if !children.awaitingSeal(below: relative).isEmpty { throw FileSystemError(ENOTEMPTY) }
                try folder.removeFolder(relative)
            case .child(let child, "/"):
                try removeContainer(child)
            case .child(let child, let inner):
                try child.router.removeFolder(inner)
            case .newContainer(let relative, "/"):
                lock.withLock { newContainers[relative] = nil }
            case .newContainer:
                throw FileSystemError(ENOENT)
            case .container:
                throw FileSystemError(EIO)  // resolve enters the folder for us
            }
        }
    }

    /// rmdir of a container's folder: an unsigned container with no data files goes (its file).
    private func removeContainer(_ child: BrowseChild) throws {
        if child.router.awaitsSeal { return try removeUnsealed(child) }
        let fileSystem = child.router
        if fileSystem.readOnly { throw FileSystemError(EROFS) }
        if !fileSystem.isEmptyAndUnsigned { throw FileSystemError(ENOTEMPTY) }
        try folder.access(PathText.folder(of: child.relative), W_OK | X_OK)
        try children.close(child.relative, pinnedByCaller: 1)
        try folder.unlink(child.relative)
        children.forget(below: child.relative)
    }

    func rename(_ fromPath: String, to toPath: String, flags: RenameFlags) throws {
        try withPlace(fromPath) { from in
            if case .plain(let relative) = from, flags.isEmpty,
               DataFiles.isRemovedWhileOpenName(toPath) {
                return try removeWhileOpen(relative, keepingAs: String(toPath.drop { $0 == "/" }))
            }
            if case .child(let child, "/") = from, child.router.awaitsSeal { throw Self.notSealedYet(child) }
            try withPlace(toPath, enter: false) { to in
                switch (from, to) {
                case (.child(let a, let innerFrom), .child(let b, let innerTo)) where a === b && innerFrom != "/" && innerTo != "/":
                    try a.router.rename(innerFrom, to: innerTo, flags: flags)
                case (.child(let child, "/"), .plain(let target)), (.child(let child, "/"), .container(let target, _)):
                    // The container itself: save, close, rename its file (it opens again on use).
                    try replaceTarget(target)
                    try children.close(child.relative, pinnedByCaller: 1)
                    try renamePlain(child.relative, to: target, flags: flags)
                case (.child(let child, "/"), .child(let other, "/")) where child !== other:
                    try children.close(other.relative, pinnedByCaller: 1)
                    try children.close(child.relative, pinnedByCaller: 1)
                    try renamePlain(child.relative, to: other.relative, flags: flags)
                case (.newContainer(let relative, "/"), .plain(let target)):
                    if folder.statusIfAny(target) != nil { throw FileSystemError(EEXIST) }
                    lock.withLock { newContainers[target] = newContainers.removeValue(forKey: relative) }
                case (.plain(let source), .plain(let target)), (.plain(let source), .container(let target, _)):
                    try replaceTarget(target)
                    // A real folder: the containers open below it are closed first (their paths change).
                    for open in children.open(below: source) { try children.close(open) }
                    try renamePlain(source, to: target, flags: flags)
                case (.plain(let source), .child(let other, "/")):
                    try children.close(other.relative, pinnedByCaller: 1)
                    try renamePlain(source, to: other.relative, flags: flags)
                default:
                    // Between two containers, or a container and a real folder: mv copies and removes.
                    throw FileSystemError(EXDEV)
                }
            }
        }
    }

    /// A rename over a container's folder replaces that container: it must not be open.
    private func replaceTarget(_ target: String) throws {
        if children.peek(target) != nil { try children.close(target) }
    }

    private func renamePlain(_ source: String, to target: String, flags: RenameFlags) throws {
        try folder.rename(source, to: target, flags: flags.rawValue)
        lock.withLock {
            for case .plain(let file) in handles.values {
                if file.relative == source { file.relative = target }
                else if file.relative.hasPrefix(source + "/") { file.relative = target + file.relative.dropFirst(source.count) }
            }
        }
        children.forget(below: source)
        children.forget(below: target)
        // New containers (mkdir, not on disk yet) in a renamed folder move with it.
        lock.withLock {
            for (made, created) in newContainers where made.hasPrefix(source + "/") {
                newContainers[made] = nil
                newContainers[target + made.dropFirst(source.count)] = created
            }
        }
    }

    /// `rm` of an open real file, as libfuse sends it (a rename to `.fuse_hidden…`): unlink it
    /// now and keep a descriptor for what the open handles still do through that name.
    private func removeWhileOpen(_ relative: String, keepingAs hidden: String) throws {
        let fd = lock.withLock { () -> Int32? in
            for case .plain(let file) in handles.values where file.relative == relative { return dup(file.fd) }
            return nil
        }
        do { try folder.unlink(relative) } catch {
            if let fd { Glibc.close(fd) }
            throw error
        }
        guard let fd, fd >= 0 else { return }
        lock.withLock {
            removedWhileOpen[hidden] = fd
            for case .plain(let file) in handles.values where file.relative == relative { file.relative = hidden }
        }
    }

    public func setTimes(_ path: String, accessed: timespec, modified: timespec) throws {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return try onDescriptor { futimens(fd, [accessed, modified]) } }
                try folder.setTimes(relative, [accessed, modified])
            case .container(let relative, _):
                try folder.setTimes(relative, [accessed, modified])
            case .child(let child, "/") where child.router.awaitsSeal:
                return  // no file yet
            case .child(let child, "/"):
                try folder.setTimes(child.relative, [accessed, modified])
            case .child(let child, let inner):
                try child.router.setTimes(inner, accessed: accessed, modified: modified)
            case .newContainer:
                return
            }
        }
    }

    /// chmod of a container's folder sets its file's mode (without the x bits).
    public func setMode(_ path: String, _ mode: mode_t) throws {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return try onDescriptor { fchmod(fd, mode) } }
                try folder.setMode(relative, mode)
            case .container(let relative, _):
                try folder.setMode(relative, mode & 0o7666)
            case .child(let child, "/") where child.router.awaitsSeal:
                return  // no file yet
            case .child(let child, "/"):
                try folder.setMode(child.relative, mode & 0o7666)
            case .child, .newContainer:
                return  // containers store no modes
            }
        }
    }

    public func setOwner(_ path: String, user: uid_t, group: gid_t) throws {
        try withPlace(path, enter: false) { place in
            switch place {
            case .plain(let relative):
                if let fd = hiddenDescriptor(relative) { return try onDescriptor { fchown(fd, user, group) } }
                try folder.setOwner(relative, user: user, group: group)
            case .container(let relative, _):
                try folder.setOwner(relative, user: user, group: group)
            case .child(let child, "/") where child.router.awaitsSeal:
                return  // no file yet
            case .child(let child, "/"):
                try folder.setOwner(child.relative, user: user, group: group)
            case .child, .newContainer:
                return  // containers store no owners
            }
        }
    }

    public func makeSymlink(_ path: String, target: String) throws {
        try withPlace(path) { place in
            switch place {
            case .plain(let relative): try folder.makeSymlink(relative, target: target)
            case .child(let child, let inner): try child.router.makeSymlink(inner, target: target)
            case .container, .newContainer: throw FileSystemError(EEXIST)
            }
        }
    }

    /// A hard link between real files; a container's entries have one name each (its answer),
    /// and a link between a container and a real folder is EXDEV, as between filesystems.
    public func link(_ fromPath: String, to toPath: String) throws {
        try withPlace(fromPath, enter: false) { from in
            try withPlace(toPath, enter: false) { to in
                switch (from, to) {
                case (.plain(let source), .plain(let target)):
                    if readOnly { throw FileSystemError(EROFS) }
                    try folder.link(source, to: target)
                case (.child(let a, let inner), .child(let b, let innerTarget)) where a === b && inner != "/":
                    try a.router.link(inner, to: innerTarget)
                default:
                    throw FileSystemError(EXDEV)
                }
            }
        }
    }

    public func readSymlink(_ path: String) throws -> String {
        try withPlace(path, enter: false) { place in
            guard case .plain(let relative) = place else { throw FileSystemError(EINVAL) }
            return try folder.readSymlink(relative)
        }
    }
}
