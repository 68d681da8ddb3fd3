import Synchronization

/// A flag any thread may raise to stop the requests of an `HTTPClient` (checked by libcurl's
/// progress callback, so a transfer stops within about a second even when the server is silent).
public final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func cancel() { flag.store(true, ordering: .releasing) }

    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}
