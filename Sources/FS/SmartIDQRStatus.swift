import Signing
import Synchronization

/// `status/smart-id.png` and the device-link line of `status/smart-id` during a Smart-ID v3
/// QR signing (`qr=yes`): the current device link and its QR code as a PNG, replaced each second
/// as the signer makes a new link, and empty once the code is scanned or the signing ends.
final class SmartIDQRStatus: Sendable {
    private let current = Mutex<(link: String, png: [UInt8])?>(nil)

    func update(_ link: String) {
        // Made here, once per link, so readers only copy bytes.
        let png = (try? QRCode(link)).map { PNGImage.qrCode($0) } ?? []
        current.withLock { $0 = (link, png) }
    }

    func clear() { current.withLock { $0 = nil } }

    var link: String? { current.withLock { $0?.link } }
    /// The PNG of the current link; empty when no QR code is to be scanned.
    var png: [UInt8] { current.withLock { $0?.png ?? [] } }
}
