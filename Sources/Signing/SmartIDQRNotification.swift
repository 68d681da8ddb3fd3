import Configuration

extension DesktopNotification {
    /// Smart-ID v3 `qr=yes`: where the QR code to scan is (a terminal, or a mount's
    /// status/smart-id.png). Once per signing; the QR code itself changes each second.
    public static func smartIDQRCode(where place: String, configuration: Configuration) {
        show("asicfs: scan the Smart-ID QR code", "Scan the QR code in \(place) with the Smart-ID app",
             urgent: true, configuration: configuration)
    }
}
