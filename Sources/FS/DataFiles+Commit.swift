import ASiC
import Foundation

/// Saving: the view written into the container (`commit`), and at unmount everything saved or
/// rescued (`close`).
extension DataFiles {
    // MARK: - Committing

    /// Writes the view into the container now (fsync, unmount, and the scheduler call this).
    /// Files still open for writing keep their old (or no) content in this commit.
    func commit() throws {
        FuseReader.mayWait()
        commitLock.lock(); defer { commitLock.unlock() }
        // Nothing to save (an unmount of a mount nobody changed): no plan over every file.
        guard lock.withLock({ pendingChanges }) else { return }
        // What this save writes: the layout, and for each part of it where its bytes came from
        // (a snapshot entry by its name there, or a spool at a generation), so that afterwards
        // the view can point at the saved entries even if names changed meanwhile.
        struct Captured { let name: String; let generation: UInt64 }
        struct Plan {
            var layout: [PlannedDataFile] = []
            var spools: [ObjectIdentifier: Captured] = [:]
            /// Name in the snapshot -> (name in the layout, modification time asked for).
            var kept: [String: (name: String, modified: Date?)] = [:]
            var changes: UInt64 = 0
            /// A file still open for writing (or broken) was left out: it is saved later.
            var unfinished = false
        }
        let (base, plan, changed) = lock.withLock { () -> (Container, Plan, Bool) in
            var plan = Plan()
            for name in order where !temporaries.contains(name) {
                switch view[name]! {
                case .stored(let file, let modified):
                    plan.layout.append(PlannedDataFile(name: name, source: .existing(file), modified: modified))
                    plan.kept[file.name] = (name, modified)
                case .spooled(let spool):
                    if spool.writers > 0 || spool.failed != nil {
                        plan.unfinished = plan.unfinished || spool.failed == nil
                        // Not finished (or broken): keep what the container had under this name, if anything.
                        if let old = snapshot.dataFile(named: name) { plan.layout.append(PlannedDataFile(name: name, source: .existing(old))) }
                        continue
                    }
                    var source = spool.source
                    source.name = name
                    source.mediaType = MediaType.guess(forName: name)
                    source.modified = spool.modified
                    plan.layout.append(PlannedDataFile(name: name, source: .file(source)))
                    plan.spools[ObjectIdentifier(spool)] = Captured(name: name, generation: spool.generation)
                }
            }
            plan.changes = changeCount
            return (snapshot, plan, pendingChanges)
        }
        guard changed else { return }
        // Only editor temporaries changed: the container is left as it is, not rewritten. (A
        // file still being written is no reason to save now, but one to save once it is closed.)
        let unchanged = !plan.unfinished && plan.spools.isEmpty && plan.layout.map(\.name) == base.dataFiles.map(\.name)
            && plan.layout.allSatisfy { planned in
                if case .existing(let file) = planned.source { return file.name == planned.name && planned.modified == nil }
                return false
            }
        if unchanged {
            lock.withLock { if changeCount == plan.changes { pendingChanges = false } }
            return
        }
        TestHooks.holdSave()
        let saved: Container
        do {
            // Another program replaced or changed the container: saving would silently undo that.
            guard base.isCurrentOnDisk else {
                throw FileSystemError(EIO, "\(containerPath) was changed by another program while mounted; not saving over that change")
            }
            var edit = base.edit()
            try edit.setLayout(plan.layout)
            saved = try edit.save()
        } catch {
            let reason = shown(FileSystemError.from(error))
            recordError("saving \(containerPath) failed: \(reason); the changes are kept in the mount and saving is retried")
            SystemLog.error("saving \(containerPath) failed: \(reason); the changes are kept in the mount and saving is retried")
            throw reason
        }
        pinnedFolder.reportIfMoved(container: PathText.lastComponent(of: containerPath))
        lock.withLock {
            snapshot = saved
            generation &+= 1
            // Every entry of the view must now point into the saved container: entries of the old
            // one have offsets in a file that no longer exists (after a rewrite).
            var stillPending = false
            for name in order where !temporaries.contains(name) {
                guard let entry = view[name] else { continue }
                switch entry {
                case .stored(let file, let modified):
                    guard let kept = plan.kept[file.name], let now = saved.dataFile(named: kept.name) else {
                        stillPending = true
                        continue
                    }
                    // A time set during the save (touch) is still to be saved (the change count says
                    // so, as it does for a rename during the save).
                    let unsavedTime = modified != nil && modified != kept.modified
                    view[name] = .stored(now, modified: unsavedTime ? modified : nil)
                case .spooled(let spool):
                    // Saved as it is now and nobody can change it: the container has it. A reader
                    // still holding it (`sync FILE`, a thumbnailer) reads the same bytes from the
                    // spool; saving it a second time would deflate it all again.
                    if let done = plan.spools[ObjectIdentifier(spool)], done.generation == spool.generation,
                       spool.writers == 0, let now = saved.dataFile(named: done.name) {
                        view[name] = .stored(now, modified: nil)
                    } else {
                        // Still open for writing when the save began: saved once it is closed.
                        stillPending = stillPending || spool.failed == nil
                    }
                }
            }
            // A change made while the save ran (a removal, a rename, a write) is not in it.
            pendingChanges = stillPending || changeCount != plan.changes
            if !pendingChanges { errors.clearSaveFailure() }
        }
    }

    /// Saves what is pending and removes the spool folder (unmount). If that fails, the unsaved
    /// files are moved, under their own names, into a folder beside the container (nothing is
    /// lost) and the reason is returned. `everyFileClosed`: the kernel ended the session by
    /// unmounting, which it does only once no file of the mount is open any more.
    @discardableResult
    func close(everyFileClosed: Bool = false) -> String? {
        // The container is free for others once this mount is done with it (a browse mount
        // may open it again at once, and the lock is per open file, not per process).
        defer { containerLock.release() }
        // The kernel sends RELEASE after close() returns, without waiting, and drops what is
        // still queued when the mount goes: after an unmount a writer whose RELEASE never came
        // had finished all the same. After a signal the queued RELEASEs have been served
        // (cfuse_session_end.h), so a file still with a writer is still being written: it is
        // rescued below.
        lock.withLock {
            if everyFileClosed {
                for case .spooled(let spool) in view.values { spool.writers = 0 }
            }
        }
        do { try commit() } catch {
            let message = "\(error); \(rescueUnsavedFiles())"
            FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(message))\n".utf8))
            return message
        }
        // (A spool whose write failed is not rescued: its writer was told, and its bytes are partial.)
        let stillOpen = lock.withLock {
            view.contains { name, entry in
                guard case .spooled(let spool) = entry else { return false }
                return spool.failed == nil && !temporaries.contains(name)
            }
        }
        if stillOpen {
            let message = "the mount stopped while files were still open for writing; \(rescueUnsavedFiles())"
            FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(message))\n".utf8))
            return message
        }
        lock.withLock {
            for (name, entry) in view { if case .spooled = entry { view[name] = nil } }
            spools?.removeAll()
        }
        return nil
    }

    /// Moves every file that is not in the container yet into a new private folder
    /// `<container>.asicfs-unsaved-<time>-XXXXXX/` (`SpoolFolder.makeRescueFolder`): spool files
    /// are renamed there (no space needed), small in-memory ones are written.
    /// Returns a sentence saying where they are and what, if anything, could not be kept.
    private func rescueUnsavedFiles() -> String {
        let folder: String
        pinnedFolder.reportIfMoved(container: PathText.lastComponent(of: containerPath))
        do { folder = try SpoolFolder.makeRescueFolder(forContainer: openPath) } catch {
            let kept = lock.withLock { spools?.keepForRescue(forContainer: openPath) }
            return pinnedFolder.shown("the unsaved files could not be kept (\(error))"
                + (kept.map { " (the raw spool files, for files over 64 KiB, are in \($0))" } ?? ""))
        }
        // Editor temporaries are not kept: they were never going to be saved. A spool whose
        // write failed holds partial bytes; the writer was told already.
        let unsaved = lock.withLock {
            order.filter { !temporaries.contains($0) }.compactMap { name -> (name: String, spool: Spool)? in
                guard case .spooled(let spool) = view[name], spool.failed == nil else { return nil }
                return (name, spool)
            }
        }
        let lost = SpoolFolder.rescue(unsaved, into: folder)
        if lost.isEmpty {
            lock.withLock { spools?.removeAll() }
            return pinnedFolder.shown("the unsaved files are in \(folder)")
        }
        // Keep whatever is still in the spool folder: renamed, so no later mount cleans it away.
        let kept = lock.withLock { spools?.keep(as: "\(folder)-spool") == true }
        return pinnedFolder.shown("the unsaved files are in \(folder), except \(lost.joined(separator: ", ")), which could not be written there"
            + (kept ? " (the raw spool files, for files over 64 KiB, are in \(folder)-spool)" : ""))
    }

    /// A message (or an error's) that names the container through its held folder, as the user knows it.
    func shown(_ text: String) -> String { pinnedFolder.shown(text) }

    func shown(_ error: FileSystemError) -> FileSystemError {
        FileSystemError(error.code, error.message.map(pinnedFolder.shown))
    }

    // MARK: - Filesystem

    func fileSystemStatistics() -> statvfs {
        var stats = statvfs()
        statvfs(pinnedFolder.pinnedPath, &stats)
        return stats
    }
}
