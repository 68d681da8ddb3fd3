import ASiC
import Foundation
import Signing

/// `asicfs umount`'s unmounting: fusermount3 -u, and what to do when the kernel says the mount is
/// busy. Unmounting cancels a running signing (as the docs promise), but readers blocked in
/// `status/wait` or `status/<method>` keep the mount busy until that signing ends, so a busy
/// mount whose only users are such readers has its signing cancelled (they then get the
/// "cancelled" outcome and close) and is unmounted again. Anything else that keeps it busy is
/// named instead, and nothing is cancelled for an unmount that cannot happen.
enum Unmount {
    /// How long to keep trying after a cancel: the signing stops within about a second.
    static let retryFor: TimeInterval = 5

    static func run(_ mountpoint: String) throws {
        var attempt = fusermount(mountpoint)
        if attempt.succeeded { return }
        guard attempt.busy else {
            if !isMounted(mountpoint) { throw MountFailure("nothing is mounted on \(mountpoint)") }
            // One line: fusermount3's own words, without its name and line end.
            let reason = attempt.message.split(separator: "\n").first.map {
                String($0).replacingOccurrences(of: "fusermount3: ", with: "")
            } ?? "fusermount3 failed"
            throw MountFailure("cannot unmount \(mountpoint): \(reason)")
        }
        let holders = MountUsers.find(under: mountpoint)
        if let other = holders.first(where: { !$0.isWaitingReader }) {
            throw MountFailure(busyMessage(mountpoint, other, count: holders.filter { !$0.isWaitingReader }.count))
        }
        if cancelSigning(in: mountpoint) {
            let deadline = Date().addingTimeInterval(retryFor)
            repeat {
                usleep(100_000)
                attempt = fusermount(mountpoint)
                if attempt.succeeded { return }
            } while attempt.busy && Date() < deadline
        }
        if let other = MountUsers.find(under: mountpoint).first {
            throw MountFailure(busyMessage(mountpoint, other, count: 1))
        }
        throw MountFailure("cannot unmount \(mountpoint): it is busy (a program has a file or its current folder in it)")
    }

    /// Whether the kernel has a mount on exactly this path (dead FUSE mounts included).
    static func isMounted(_ mountpoint: String) -> Bool { filesystemType(at: mountpoint) != nil }

    /// What asicfs mounts show as their type in /proc/self/mountinfo (fuse + subtype=asicfs).
    static let asicfsType = "fuse.asicfs"

    /// The type of the filesystem mounted on exactly this path (the topmost one, where mounts are
    /// stacked: the last line), or nil when nothing is.
    static func filesystemType(at mountpoint: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        var found: String?
        for line in table.split(separator: "\n") {
            guard line.split(separator: " ").dropFirst(4).first.map({ unescapeMountinfo(String($0)) }) == mountpoint,
                  let tail = line.range(of: " - ") else { continue }
            found = line[tail.upperBound...].split(separator: " ").first.map(String.init) ?? ""
        }
        return found
    }

    /// mountinfo writes space, tab, newline and backslash in paths as octal escapes.
    private static func unescapeMountinfo(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3, let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func busyMessage(_ mountpoint: String, _ user: MountUsers.User, count: Int) -> String {
        let more = count > 1 ? " (and \(count - 1) more)" : ""
        return "cannot unmount \(mountpoint): it is in use: process \(user.pid) (\(user.command)) \(user.what)\(more); "
            + "close it or leave the folder, then try again"
    }

    /// Cancels the signing that runs in the mount, if one does: `echo cancel > sign/<method>`
    /// for its method. The phone methods' status files say whether they run (opened with
    /// O_NONBLOCK, so they do not wait for a verification code); any other running signing is
    /// of an available method without a status file. Returns whether a cancel was accepted.
    static func cancelSigning(in mountpoint: String) -> Bool {
        let control = mountpoint + "/.asicfs/"
        guard let current = firstLine(control + "status/current"), isRunning(current) else { return false }
        let withStatus: [SigningMethod] = [.mobileID, .smartID]
        let running = withStatus.first { firstLine(control + "status/" + $0.rawValue).map(isRunning) ?? false }
        let candidates = running.map { [$0] } ?? SigningMethod.allCases.filter { !withStatus.contains($0) }
        return candidates.contains { write("cancel\n", to: control + "sign/" + $0.rawValue) }
    }

    private static func isRunning(_ state: String) -> Bool {
        state.hasPrefix("signing: ") || state.hasPrefix("waiting-for-user: ")
    }

    private static func firstLine(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

    private static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return Foundation.write(fd, bytes, bytes.count) == bytes.count
    }

    private struct Attempt {
        let succeeded: Bool
        let message: String
        var busy: Bool { message.contains("Device or resource busy") }
    }

    /// fusermount3 -u, spawned directly (posix_spawnp) with its standard error in a pipe.
    /// Not Foundation's Process: its spawn and waitUntilExit's run loop added about 50 ms to
    /// every unmount (measured with strace on `asicfs umount`).
    private static func fusermount(_ mountpoint: String) -> Attempt {
        func cannotRun(_ code: Int32) -> Attempt {
            Attempt(succeeded: false, message: "cannot run fusermount3: \(String(cString: strerror(code)))\n")
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return cannotRun(errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        posix_spawn_file_actions_addclose(&actions, ends[1])
        let words: [String] = ["fusermount3", "-u", mountpoint]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, "fusermount3", &actions, nil, argv, environ)
        close(ends[1])
        defer { close(ends[0]) }
        guard spawned == 0 else { return cannotRun(spawned) }
        var message: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = read(ends[0], &buffer, buffer.count)
            if count > 0 { message += buffer[..<count]; continue }
            if count < 0 && errno == EINTR { continue }
            break
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        // Zero: it exited, with status 0 (not killed by a signal).
        return Attempt(succeeded: status == 0, message: String(decoding: message, as: UTF8.self))
    }
}

/// The processes that keep a mount busy, as /proc shows them (only those this user may inspect).
enum MountUsers {
    struct User {
        let pid: Int32
        let command: String
        /// "has its current folder in it", "has .asicfs/status/wait open", ...
        let what: String
        /// Its only hold is a control file a reader blocks in while a signing runs.
        let isWaitingReader: Bool
    }

    /// Control files whose readers block until the running signing ends (or its code is known).
    static let waitingFiles = Set([".asicfs/status/wait"] + SigningMethod.allCases.map { ".asicfs/status/" + $0.rawValue })

    static func find(under mountpoint: String) -> [User] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        let me = getpid()
        return entries.compactMap(Int32.init).filter { $0 != me }.sorted().compactMap { pid in
            user(pid, mountpoint)
        }
    }

    private static func user(_ pid: Int32, _ mountpoint: String) -> User? {
        let base = "/proc/\(pid)"
        let command = ((try? String(contentsOfFile: base + "/comm", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        func inside(_ link: String) -> String? {
            // readlink only: nothing inside the mount is touched, so a hung mount cannot hang us.
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link) else { return nil }
            if target == mountpoint { return "" }
            return target.hasPrefix(mountpoint + "/") ? String(target.dropFirst(mountpoint.count + 1)) : nil
        }
        if inside(base + "/cwd") != nil {
            return User(pid: pid, command: command, what: "has its current folder in it", isWaitingReader: false)
        }
        if inside(base + "/root") != nil {
            return User(pid: pid, command: command, what: "has its root folder in it", isWaitingReader: false)
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: base + "/fd")) ?? []
        let open = descriptors.compactMap { inside(base + "/fd/" + $0) }
        guard let first = open.first(where: { !waitingFiles.contains($0) }) ?? open.first else { return nil }
        return User(pid: pid, command: command, what: "has \(first.isEmpty ? "the folder" : first) open",
                    isWaitingReader: open.allSatisfy(waitingFiles.contains))
    }
}
