/// The 4-digit code a Mobile-ID phone shows next to the signing request. It depends only on the
/// hash, so asicfs shows it before the request is sent; the user compares the two and confirms
/// only when they match (a different code means someone else's hash).
public enum MobileIDVerificationCode {
    /// The 6 high bits of the first hash byte and the 7 low bits of the last one, as a 13-bit
    /// number printed with 4 digits (0000-8191). nil for fewer than 20 bytes: no real hash.
    public static func compute(_ hash: [UInt8]) -> String? {
        guard hash.count >= 20, let first = hash.first, let last = hash.last else { return nil }
        let value = (Int(first >> 2) << 7) | Int(last & 0x7F)
        let digits = String(value)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
