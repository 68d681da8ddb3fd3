import Crypto

/// The 4-digit code Smart-ID shows on the phone for a signature (RP API v2): SHA-256 of the raw
/// hash being signed, its last two bytes as a big-endian number, modulo 10000. Computed here, not
/// received, so the user can compare what asicfs shows with what the app shows.
public enum SmartIDVerificationCode {
    /// "0000" to "9999" for `hash`, the raw digest sent to Smart-ID (whatever its hash type).
    public static func code(for hash: [UInt8]) -> String {
        let check = Digest.hash(hash, .sha256)
        let number = (Int(check[check.count - 2]) << 8 | Int(check[check.count - 1])) % 10000
        let digits = String(number)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
