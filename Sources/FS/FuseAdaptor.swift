// The FUSE adaptor: libfuse's operation table (mounting, libfuse's argv, the option check and
// the /dev/fuse reader live in Mount, FuseArgv, FuseOptionCheck and FuseReader). It turns
// kernel requests into calls on a `MountSource` (one container, or browse mode's folder tree)
// and every Swift error into an errno (`FileSystemError.from`).
//
// How the kernel caches, and what we tell it:
// - Attributes and directory entries are cached for one second (attr_timeout, entry_timeout);
//   every change to the tree comes through this mount, and the kernel updates its own cache for
//   changes it sends us (write, truncate, rename, unlink). Renames also invalidate the target
//   path (fuse_invalidate_path) because a rename can put other bytes under a cached name. One
//   second, not longer, because a commit or a signing changes what a name shows (times rounded
//   to the container's precision, modes 0444 once signed) without the kernel sending anything.
// - Names that do not exist are cached for one second too (negative_timeout): `cp` of a new file
//   looked its name up three times before creating it; the cache answers one of them (the open
//   with O_EXCL always asks again). A small file copied in then costs 6 requests, 5 of which
//   `cp` waits for: LOOKUP twice, CREATE, WRITE, RELEASE (sent without waiting) and GETATTR (the
//   write made the kernel drop the size it had). Two more are avoided: FLUSH, which close()
//   waits for (the mount has no flush, so the kernel stops sending it after the first ENOSYS;
//   that a writer has finished, its RELEASE tells, or, if that was never read, the unmount:
//   see cfuse_session_end.h), and GETXATTR security.capability before the first write, which
//   the kernel does not ask for a direct_io handle (a write-only file gets one, see below).
//   Names appear through this mount (create, mkdir, rename), which replaces the kernel's
//   negative entry at once; the only names that appear without the kernel seeing them are the
//   `.asicfs/signatures/<n>-<signer>` folders of a new signature, and a listing (readdir, which
//   is never cached) always shows them.
// - Right after the mount is made the container is still being checked (`MountGate`): the
//   root's attributes are then provisional, and the kernel is told to drop them when the check
//   ends; every other request waits for the check.
// - A data file opened read-only from the container gets keep_cache: its bytes can only change
//   by being rewritten through this mount, so repeat reads are served from the page cache.
//   Its bytes are cached once, as the mounted file's pages: read sequentially, a stored
//   entry's bytes (`StoredEntryReader`) and a deflated entry's compressed bytes
//   (`InflatePipeline`) come from the container with O_DIRECT, not through the container
//   file's pages as well.
// - Files being written (spools) are not kept: their bytes change under open handles. A
//   write-only handle that is its file's only one gets direct_io (its bytes are never cached),
//   and so does every handle opened on that file while it is open (`DataFiles.openSpool`).
// - Control files (.asicfs/...) use direct_io: they are generated on every open, their size is
//   only known then, and they must never be served stale. With direct_io every read reaches us,
//   whatever size getattr gave: `status/wait` and `status/<method>` report 0, the validation
//   files 0 until known, and `status/wait` can fail the read after its text (EIO after a
//   failed signing).
// - Browse mode (BrowseFileSystem): real files are opened without keep_cache, since other
//   programs change them; their attributes are the real ones, cached for the same second. A
//   container folder's child invalidates paths with the folder's place in the mount in front,
//   and a child opened again after another program changed its file drops the cached pages
//   of every data file (from another thread: the request that noticed may hold kernel locks).
//   A file whose kind changes (a container file that turns out not to open, a rename to a
//   container's name) is left to the one-second entry timeout: invalidating the inode instead
//   would make a stat of it fail (the kernel marks an inode whose type changed as bad).
//
// Big requests, explicitly: max_write 1 MiB (libfuse then asks for max_pages 256, so reads and
// writes travel in requests of up to 1 MiB), max_read 1 MiB (a mount option, see `Mounter`) and
// max_readahead 1 MiB, which the kernel lowers to the mount's read_ahead_kb (128 KiB by default:
// then a sequential reader's requests arrive as 128 KiB pieces, several at once and slightly out
// of order, which each open file's `EntryReader` window absorbs). The mount does not raise its
// read_ahead_kb (root could, in sysfs): measured on fsbench's 1 GiB deflated entry, 1 MiB requests
// read 3-15 % faster but the daemon's peak RSS rose from 38 to 46 MiB (glibc keeps a 1 MiB reply
// buffer per worker thread).
//
// Whose request it is: every callback runs with its caller (uid, gid, pid from
// fuse_get_context) recorded for its thread (`RequestCaller`), so that browse mode's
// pass-through can act on real files with that caller's rights (`CallerRights`); the rest of
// the mount runs with the daemon's own.
//
// libfuse runs callbacks on several threads at once (fuse_loop_mt, at most ten); the callbacks
// capture nothing and reach the Swift state through fuse_get_context()->private_data. In a
// container mount one of them at a time reads /dev/fuse and serves what it read itself
// (`FuseReader`); whatever may wait gives that role away first. A read of
// `status/wait` (or of `status/<method>`, waiting for the verification code) may block its
// thread for as long as a signing runs (the others go on serving);
// it gives up when the reader is interrupted (FUSE_INTERRUPT) or the session ends (a signal),
// because at the end libfuse joins every worker thread and would otherwise wait for it.

import CFuse3
import Foundation

private func mountBox() -> MountSourceBox {
    Unmanaged<MountSourceBox>.fromOpaque(fuse_get_context()!.pointee.private_data).takeUnretainedValue()
}

/// The checked source: a request waits here while the container is checked (`MountGate`).
private func fileSystem() throws -> any MountSource { try mountBox().source }

/// Runs a callback body for the request's caller (see `CallerRights`) and maps a thrown error to -errno.
private func reply(_ body: () throws -> Int32) -> Int32 {
    let context = fuse_get_context()!.pointee
    return RequestCaller.serving(Caller(user: context.uid, group: context.gid, process: context.pid)) {
        do { return try body() } catch { return -FileSystemError.from(error).code }
    }
}

private func path(_ raw: UnsafePointer<CChar>?) -> String { raw.map { String(cString: $0) } ?? "/" }

/// Why a blocked read should give up now, if it should: EINTR when the kernel interrupted the
/// request (the reader got a signal), EIO when the session is ending (unmount, SIGTERM).
private func stopReason() -> Int32? {
    if fuse_interrupted() != 0 { return EINTR }
    if let fuse = fuse_get_context()?.pointee.fuse, cfuse_session_exited(fuse) != 0 { return EIO }
    return nil
}

private func timespec(_ date: Date) -> timespec {
    let seconds = date.timeIntervalSince1970.rounded(.down)
    return timespec(tv_sec: time_t(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
}

/// `-o umask=NNN` (fstab lines carry it): the bits it names are taken away from every mode we
/// report, real files' and folders' in browse mode too (with default_permissions the kernel
/// then checks those). Set once before the mount starts. libfuse's own umask= would set the
/// modes to 0777 & ~umask, which makes data files executable, so it is not handed to libfuse.
nonisolated(unsafe) var reportedModeMask: mode_t = 0

private func fill(_ st: UnsafeMutablePointer<stat>, _ attributes: NodeAttributes) {
    if let native = attributes.native {
        st.pointee = native
        // A link's mode means nothing (always 0777 on Linux): shown as it is.
        if native.st_mode & S_IFMT != S_IFLNK { st.pointee.st_mode &= ~reportedModeMask }
        return
    }
    st.pointee = stat()
    switch attributes.kind {
    case .file:
        st.pointee.st_mode = S_IFREG | (mode_t(attributes.permissions) & ~reportedModeMask)
        st.pointee.st_nlink = 1
    case .directory:
        st.pointee.st_mode = S_IFDIR | (mode_t(attributes.permissions) & ~reportedModeMask)
        st.pointee.st_nlink = 2
    case .symlink:
        st.pointee.st_mode = S_IFLNK | mode_t(attributes.permissions)
        st.pointee.st_nlink = 1
    }
    st.pointee.st_size = off_t(attributes.size)
    st.pointee.st_blocks = blkcnt_t((attributes.size + 511) / 512)
    st.pointee.st_blksize = 65536
    st.pointee.st_uid = attributes.owner?.user ?? getuid()
    st.pointee.st_gid = attributes.owner?.group ?? getgid()
    let time = timespec(attributes.modified)
    st.pointee.st_mtim = time
    st.pointee.st_ctim = time
    st.pointee.st_atim = time
}

/// An open file's handle and how the kernel is to cache it (see the comment at the top).
private func record(_ opened: MountOpenResult, in info: UnsafeMutablePointer<fuse_file_info>) {
    info.pointee.fh = opened.handle
    info.pointee.keep_cache = opened.keepCache ? 1 : 0
    info.pointee.direct_io = opened.directIO ? 1 : 0
}

/// The request sizes the mount asks for (see the comment at the top).
enum FuseLimits {
    static let largestRequest: UInt32 = 1 << 20
}

/// The operation table handed to fuse_new.
func fuseOperations() -> fuse_operations {
    var ops = fuse_operations()
    ops.`init` = { conn, config in
        conn?.pointee.max_write = FuseLimits.largestRequest
        conn?.pointee.max_readahead = FuseLimits.largestRequest
        conn?.pointee.max_read = FuseLimits.largestRequest  // must equal the max_read mount option
        config?.pointee.entry_timeout = 1
        config?.pointee.attr_timeout = 1
        config?.pointee.negative_timeout = 1
        config?.pointee.use_ino = 0
        config?.pointee.nullpath_ok = 0
        // Not hard_remove: then fstat of a file removed while open fails (ESTALE; the kernel
        // sends no handle with GETATTR). libfuse's `.fuse_hidden…` rename keeps a name for it,
        // and DataFiles takes that rename as the removal (never listed or saved).
        config?.pointee.hard_remove = 0
        return fuse_get_context()!.pointee.private_data
    }
    ops.getattr = { rawPath, st, info in
        reply {
            if rawPath == nil, let info {
                fill(st!, try fileSystem().attributes(handle: info.pointee.fh))
            } else if rawPath.map({ strcmp($0, "/") == 0 }) ?? true, mountBox().gate.isChecking {
                // The mount answers at once; everything else waits for the check.
                fill(st!, mountBox().provisionalRoot)
            } else {
                fill(st!, try fileSystem().attributes(path(rawPath)))
            }
            return 0
        }
    }
    ops.opendir = { _, info in
        info!.pointee.fh = mountBox().openListing()
        return 0
    }
    ops.releasedir = { _, info in
        mountBox().closeListing(info!.pointee.fh)
        return 0
    }
    ops.readdir = { rawPath, buffer, filler, offset, info, flags in
        reply {
            // With READDIRPLUS the attributes travel with the names, so `ls -l` of a big folder
            // costs a few requests instead of one lookup per file. Each entry is filled with its
            // offset (index + 1): only then does libfuse pass its attributes to the kernel.
            let plus = flags.rawValue & FUSE_READDIR_PLUS.rawValue != 0
            let entries = try mountBox().listing(info!.pointee.fh, path: path(rawPath), offset: Int(offset), withAttributes: plus)
            var st = stat()
            for index in Int(offset)..<max(Int(offset), entries.count) {
                let (name, attributes) = entries[index]
                let full: Int32
                if let attributes {
                    fill(&st, attributes)
                    full = filler!(buffer, name, &st, off_t(index + 1), FUSE_FILL_DIR_PLUS)
                } else {
                    full = filler!(buffer, name, nil, off_t(index + 1), fuse_fill_dir_flags(0))
                }
                if full != 0 { break }
            }
            return 0
        }
    }
    ops.open = { rawPath, info in
        reply {
            record(try fileSystem().open(path(rawPath), flags: info!.pointee.flags), in: info!)
            return 0
        }
    }
    ops.create = { rawPath, mode, info in
        reply {
            record(try fileSystem().create(path(rawPath), flags: info!.pointee.flags, mode: mode), in: info!)
            return 0
        }
    }
    ops.read = { _, buffer, size, offset, info in
        reply {
            let target = UnsafeMutableRawBufferPointer(start: buffer, count: size)
            return Int32(try fileSystem().read(info!.pointee.fh, into: target, at: Int64(offset), stop: stopReason))
        }
    }
    ops.write = { _, buffer, size, offset, info in
        reply {
            let source = UnsafeRawBufferPointer(start: buffer, count: size)
            return Int32(try fileSystem().write(info!.pointee.fh, source, at: Int64(offset)))
        }
    }
    ops.truncate = { rawPath, length, info in
        reply {
            try fileSystem().truncate(rawPath.map { String(cString: $0) }, to: Int64(length), handle: info?.pointee.fh)
            return 0
        }
    }
    // No flush: libfuse then answers FLUSH with ENOSYS and the kernel stops sending it, which
    // spares every close() a round trip (see the comment at the top).
    // Handles exist only once the check has passed.
    ops.release = { _, info in
        try? fileSystem().release(info!.pointee.fh)
        return 0
    }
    ops.fsync = { rawPath, _, info in
        reply {
            try fileSystem().sync(rawPath.map { String(cString: $0) }, handle: info?.pointee.fh)
            return 0
        }
    }
    ops.unlink = { rawPath in
        reply {
            try fileSystem().unlink(path(rawPath))
            return 0
        }
    }
    ops.mkdir = { rawPath, mode in
        reply {
            try fileSystem().makeFolder(path(rawPath), mode: mode)
            return 0
        }
    }
    ops.rmdir = { rawPath in
        reply {
            try fileSystem().removeFolder(path(rawPath))
            return 0
        }
    }
    ops.rename = { from, to, flags in
        reply {
            try fileSystem().rename(path(from), to: path(to), flags: RenameFlags(rawValue: flags))
            return 0
        }
    }
    ops.utimens = { rawPath, times, _ in
        reply {
            // A file removed while open has no time to keep.
            guard rawPath != nil else { return 0 }
            // times[0] is the access time, times[1] the modification time; no times means now.
            let now = timespec(tv_sec: 0, tv_nsec: cfuse_utime_now())
            try fileSystem().setTimes(path(rawPath), accessed: times?[0] ?? now, modified: times?[1] ?? now)
            return 0
        }
    }
    ops.getxattr = { rawPath, name, value, size in
        reply {
            let bytes = try fileSystem().extendedAttribute(path(rawPath), name: String(cString: name!))
            return try copyAttribute(bytes, into: value, size: size)
        }
    }
    ops.listxattr = { rawPath, list, size in
        reply {
            let names = try fileSystem().extendedAttributeNames(path(rawPath))
            return try copyAttribute(names.flatMap { Array($0.utf8) + [0] }, into: list, size: size)
        }
    }
    ops.setxattr = { rawPath, name, value, size, flags in
        reply {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            try fileSystem().setExtendedAttribute(path(rawPath), name: String(cString: name!), value: bytes, flags: flags)
            return 0
        }
    }
    ops.removexattr = { rawPath, name in
        reply {
            try fileSystem().removeExtendedAttribute(path(rawPath), name: String(cString: name!))
            return 0
        }
    }
    ops.link = { from, to in
        reply {
            try fileSystem().link(path(from), to: path(to))
            return 0
        }
    }
    ops.chmod = { rawPath, mode, _ in
        reply {
            try fileSystem().setMode(path(rawPath), mode)
            return 0
        }
    }
    ops.chown = { rawPath, user, group, _ in
        reply {
            try fileSystem().setOwner(path(rawPath), user: user, group: group)
            return 0
        }
    }
    ops.symlink = { target, rawPath in
        reply {
            try fileSystem().makeSymlink(path(rawPath), target: String(cString: target!))
            return 0
        }
    }
    ops.readlink = { rawPath, buffer, size in
        reply {
            // NUL-terminated, cut to the buffer (readlink(2) itself would not terminate it).
            let target = Array(try fileSystem().readSymlink(path(rawPath)).utf8.prefix(size - 1))
            buffer!.withMemoryRebound(to: UInt8.self, capacity: size) { out in
                out.update(from: target, count: target.count)
                out[target.count] = 0
            }
            return 0
        }
    }
    ops.statfs = { rawPath, stats in
        reply {
            stats!.pointee = try fileSystem().fileSystemStatistics(path(rawPath))
            return 0
        }
    }
    return ops
}

/// getxattr/listxattr's convention: size 0 asks for the length; a smaller buffer is ERANGE.
private func copyAttribute(_ bytes: [UInt8], into buffer: UnsafeMutablePointer<CChar>?, size: Int) throws -> Int32 {
    if size == 0 { return Int32(bytes.count) }
    guard size >= bytes.count, let buffer else { throw FileSystemError(ERANGE) }
    bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    return Int32(bytes.count)
}

/// Invalidates the kernel's cache of `path` (data and attributes) after a change it did not see.
func invalidateKernelCache(_ fuse: OpaquePointer, _ path: String) {
    _ = fuse_invalidate_path(fuse, path)
}
