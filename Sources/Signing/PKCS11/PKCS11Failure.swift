import PKCS11

/// A failed PKCS#11 call in the words the person signing needs: one line naming the token,
/// never a PIN. `flags` are the token's flags read after the failure (the PIN counters).
enum PKCS11Failure {
    /// What the failed operation was: the sentences say what did not happen.
    enum Operation {
        case signing, decryption
        var nothingDone: String { self == .signing ? "nothing was signed" : "nothing was decrypted" }
    }

    static func describe(_ error: PKCS11Error, token: String, flags: TokenFlags?,
                         during operation: Operation = .signing) -> SigningError {
        let nothing = operation.nothingDone
        let name = "the token \"\(token)\""
        let flags = flags ?? []
        switch error.code {
        case PKCS11Error.pinIncorrect?:
            var text = "wrong PIN for \(name)"
            if flags.contains(.userPINLocked) {
                text += "; the PIN is now locked"
            } else if flags.contains(.userPINFinalTry) {
                text += "; final try: one more wrong PIN locks it"
            } else if flags.contains(.userPINCountLow) {
                text += "; few tries are left"
            }
            return SigningError(text + " (\(nothing))")
        case PKCS11Error.pinLocked?:
            return SigningError("the PIN of \(name) is locked (too many wrong PINs): unblock it with its PUK or SO PIN")
        case PKCS11Error.pinExpired?:
            return SigningError("the PIN of \(name) has expired: change it first")
        case PKCS11Error.pinLenRange?:
            return SigningError("\(name) does not accept a PIN of that length (\(nothing))")
        case PKCS11Error.functionCanceled?:
            return SigningError("PIN entry for \(name) was cancelled (\(nothing))")
        case PKCS11Error.mechanismInvalid?:
            return SigningError(operation == .signing ? "\(name) cannot make this kind of signature (\(error))"
                : "\(name) cannot do this with its key (\(error))")
        default:
            if error.isRemoval { return SigningError("\(name) was removed (\(nothing))") }
            return SigningError("\(name): \(error)")
        }
    }
}
