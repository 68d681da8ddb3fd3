import CPCSC

/// A PC/SC result code as one sentence a person can act on.
enum PCSCError {
    static func describe(_ code: Int, doing what: String) -> CardError {
        switch UInt32(truncatingIfNeeded: code) {
        case UInt32(truncatingIfNeeded: SCARD_E_NO_SERVICE), UInt32(truncatingIfNeeded: SCARD_E_SERVICE_STOPPED):
            return .transport("the PC/SC service pcscd is not running (start it: systemctl start pcscd.socket)")
        case UInt32(truncatingIfNeeded: SCARD_E_NO_READERS_AVAILABLE), UInt32(truncatingIfNeeded: SCARD_E_UNKNOWN_READER):
            return .transport("no smart-card reader is connected")
        case UInt32(truncatingIfNeeded: SCARD_E_NO_SMARTCARD), UInt32(truncatingIfNeeded: SCARD_W_REMOVED_CARD),
             UInt32(truncatingIfNeeded: SCARD_W_RESET_CARD), UInt32(truncatingIfNeeded: SCARD_W_UNPOWERED_CARD),
             UInt32(truncatingIfNeeded: SCARD_E_READER_UNAVAILABLE):
            return .removed
        case UInt32(truncatingIfNeeded: SCARD_W_UNRESPONSIVE_CARD), UInt32(truncatingIfNeeded: SCARD_E_PROTO_MISMATCH):
            return .transport("the card in the reader does not answer (insert it the right way round)")
        case UInt32(truncatingIfNeeded: SCARD_E_SHARING_VIOLATION):
            return .transport("another program holds the card exclusively")
        case UInt32(truncatingIfNeeded: SCARD_E_TIMEOUT):
            return .transport("the reader did not answer in time")
        default:
            let text = pcsc_stringify_error(Int(code)).map { String(cString: $0) } ?? "error"
            return .transport("PC/SC \(what) failed: \(text)")
        }
    }
}
