import Foundation

/// `status/last-error` of one mount: the last refused request or change, failed signing or
/// save. Written by the data files, the control folder and the signings; a leaf lock.
final class LastError: @unchecked Sendable {
    private let lock = NSLock()
    private var message = ""

    var text: String { lock.withLock { message } }

    func record(_ text: String) { lock.withLock { message = text } }

    /// An error whose message is recorded too.
    func failure(_ code: Int32, _ text: String) -> FileSystemError {
        record(text)
        return FileSystemError(code, text)
    }

    /// Everything is saved now: a save's earlier failure is no longer the news.
    func clearSaveFailure() {
        lock.withLock { if message.hasPrefix("saving ") { message = "" } }
    }
}
