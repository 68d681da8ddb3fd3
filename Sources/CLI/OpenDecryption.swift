import ASiC
import Foundation

/// `asicfs open` of an encrypted container (CDOC 1.x, CDOC2): the desktop's double-click. Once
/// the mount is there and one of its recipients is an EC key (a CDOC 1.x certificate or a CDOC2
/// public key: what an ID-card holds), the inserted ID-card decrypts it — a request to the
/// mount's `.asicfs/decrypt/id-card`, so the daemon asks PIN1 through pinentry (or the reader's
/// PIN pad) exactly as a request written by hand would — and open waits for how that ends. A failure (no card, a wrong PIN1, a cancelled
/// dialog) unmounts again: a failed open leaves nothing. A container for keys or passwords only
/// stays mounted undecrypted, for `.asicfs/decrypt/<method>`.
enum OpenDecryption {
    /// Whether the mount's `status/recipients` names an EC key (an ID-card could hold it).
    static func hasCardRecipient(at mountpoint: String) -> Bool {
        let text = (try? String(contentsOfFile: mountpoint + "/.asicfs/status/recipients", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").contains { $0.hasPrefix("ec-certificate: ") || $0.hasPrefix("ec-public-key: ") }
    }

    /// How often open looks at `status/current` while the person types PIN1.
    static let pollInterval: useconds_t = 100_000

    /// Decrypts the mount at `mountpoint` with the ID-card; throws the mount's one-line reason.
    static func decryptWithIDCard(_ container: String, at mountpoint: String) throws {
        do {
            try request(in: mountpoint)
            try waitForOutcome(in: mountpoint)
        } catch {
            _ = try? UnmountCommand.run(mountpoint)
            throw MountFailure("cannot decrypt \(PrintableText.escaped(PathText.lastComponent(of: container))) with the ID-card: \(error)")
        }
    }

    /// Writes the empty request (reader and CAN as the defaults choose them).
    private static func request(in mountpoint: String) throws {
        let descriptor = open(mountpoint + "/.asicfs/decrypt/id-card", O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard descriptor >= 0 else { throw MountFailure(String(cString: strerror(errno))) }
        let written = write(descriptor, "\n", 1)
        let code = errno
        close(descriptor)
        if written != 1 { throw MountFailure(lastError(in: mountpoint) ?? String(cString: strerror(code))) }
    }

    /// Waits while the daemon decrypts (pinentry may wait for the person as long as it likes).
    private static func waitForOutcome(in mountpoint: String) throws {
        let failedPrefix = "failed: decrypting with id-card failed: "
        while true {
            guard let text = try? String(contentsOfFile: mountpoint + "/.asicfs/status/current", encoding: .utf8) else {
                throw MountFailure("the mount went away while decrypting")
            }
            if text.hasPrefix("done:") { return }
            // Still idle with an error recorded: the request was refused when it was taken.
            if text.hasPrefix("idle"), let refused = lastError(in: mountpoint), !refused.isEmpty {
                throw MountFailure(refused)
            }
            if text.hasPrefix("failed: ") {
                let prefix = text.hasPrefix(failedPrefix) ? failedPrefix : "failed: "
                throw MountFailure(text.dropFirst(prefix.count).trimmingCharacters(in: .newlines))
            }
            usleep(pollInterval)
        }
    }

    private static func lastError(in mountpoint: String) -> String? {
        (try? String(contentsOfFile: mountpoint + "/.asicfs/status/last-error", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }
}
