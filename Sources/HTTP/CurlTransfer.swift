import CCurl

/// The state libcurl's callbacks share during one transfer: the body so far, the size limit,
/// and the cancellation flag. Reached from C through an unretained pointer that `send` keeps alive.
final class CurlTransfer {
    private(set) var body: [UInt8] = []
    private(set) var exceededLimit = false
    private let limit: Int
    private let cancellation: Cancellation?
    private let identity: (any TLSClientIdentity)?
    /// OpenSSL did not take the client identity (the transfer then fails with curl's 58).
    private(set) var identityRefused = false
    /// The key pins for the C check, at a fixed address for the whole transfer (nil: none).
    private let pins: UnsafeMutablePointer<ccurl_spki_pins>?
    /// The server's verified chain held none of the pinned keys.
    var pinsRefused: Bool { (pins?.pointee.refused ?? 0) != 0 }

    init(limit: Int, cancellation: Cancellation?, identity: (any TLSClientIdentity)? = nil, spkiDigests: [UInt8] = []) {
        self.limit = limit
        self.cancellation = cancellation
        self.identity = identity
        if spkiDigests.isEmpty {
            pins = nil
        } else {
            let digests = UnsafeMutablePointer<UInt8>.allocate(capacity: spkiDigests.count)
            digests.initialize(from: spkiDigests, count: spkiDigests.count)
            pins = .allocate(capacity: 1)
            pins!.initialize(to: ccurl_spki_pins(sha256: digests, count: spkiDigests.count / 32, refused: 0))
        }
    }

    deinit {
        guard let pins else { return }
        UnsafeMutablePointer(mutating: pins.pointee.sha256)?.deallocate()
        pins.deallocate()
    }

    /// CURLOPT_SSL_CTX_FUNCTION: curl's OpenSSL context, before the handshake. The identity
    /// installs its key and certificate there itself; the key pins hook the chain check.
    static let prepareTLS: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLcode = {
        _, sslContext, context in
        guard let sslContext, let context else { return CURLE_SSL_CERTPROBLEM }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        if let identity = transfer.identity, !identity.install(into: sslContext) {
            transfer.identityRefused = true
            return CURLE_SSL_CERTPROBLEM
        }
        if let pins = transfer.pins { ccurl_require_spki_pins(sslContext, pins) }
        return CURLE_OK
    }

    /// CURLOPT_WRITEFUNCTION: keep the bytes, or return 0 (curl then fails the transfer) past the limit.
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        guard transfer.body.count + length <= transfer.limit else {
            transfer.exceededLimit = true
            return 0
        }
        if let data, length > 0 { transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
        return length
    }

    /// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
    static let progress: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = {
        context, _, _, _, _ in
        guard let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        return transfer.cancellation?.isCancelled == true ? 1 : 0
    }
}
