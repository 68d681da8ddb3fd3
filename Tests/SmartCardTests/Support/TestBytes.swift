import Crypto
import SmartCard

/// Hex as the specifications print it (spaces allowed); a typo in a test vector traps.
func bytes(_ hex: String) -> [UInt8] {
    guard let out = Hex.bytes(hex) else { preconditionFailure("not hex: \(hex)") }
    return out
}

func secret(_ hex: String) -> SecretBytes { SecretBytes(bytes(hex)) }

func plain(_ secret: SecretBytes) -> [UInt8] { secret.withBytes { Array($0) } }

/// A BER-TLV with a one- or two-byte tag, written by hand so the card side below shares no
/// code with the implementation it checks.
func tlv(_ tag: [UInt8], _ value: [UInt8]) -> [UInt8] {
    let length: [UInt8] = value.count < 0x80 ? [UInt8(value.count)] : value.count < 0x100 ? [0x81, UInt8(value.count)] : [0x82, UInt8(value.count >> 8), UInt8(value.count & 0xFF)]
    return tag + length + value
}
