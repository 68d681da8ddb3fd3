import CPKCS11

/// What C_GetTokenInfo says of a token, in Swift types (the blank-padded fields trimmed).
public struct TokenInfo: Sendable, Equatable {
    public var label: String
    public var manufacturer: String
    public var model: String
    public var serial: String
    public var flags: TokenFlags
    /// The PIN lengths the token accepts (nil when it gives none that make sense).
    public var pinLengths: ClosedRange<Int>?

    public init(label: String, manufacturer: String, model: String, serial: String, flags: TokenFlags,
                pinLengths: ClosedRange<Int>? = nil) {
        self.label = label
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.flags = flags
        self.pinLengths = pinLengths
    }

    /// A fixed-size, blank-padded PKCS#11 text field as a string (UTF-8, invalid bytes replaced).
    static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0x20 || bytes[end - 1] == 0 { end -= 1 }
            return String(decoding: bytes[..<end], as: UTF8.self)
        }
    }
}

/// The CKF_* token flags asicfs looks at.
public struct TokenFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let tokenInitialized = TokenFlags(rawValue: UInt(CKF_TOKEN_INITIALIZED))
    public static let loginRequired = TokenFlags(rawValue: UInt(CKF_LOGIN_REQUIRED))
    public static let userPINInitialized = TokenFlags(rawValue: UInt(CKF_USER_PIN_INITIALIZED))
    /// A PIN pad on the reader: the PIN is typed there, never seen by asicfs.
    public static let protectedAuthenticationPath = TokenFlags(rawValue: UInt(CKF_PROTECTED_AUTHENTICATION_PATH))
    public static let writeProtected = TokenFlags(rawValue: UInt(CKF_WRITE_PROTECTED))
    public static let userPINCountLow = TokenFlags(rawValue: UInt(CKF_USER_PIN_COUNT_LOW))
    public static let userPINFinalTry = TokenFlags(rawValue: UInt(CKF_USER_PIN_FINAL_TRY))
    public static let userPINLocked = TokenFlags(rawValue: UInt(CKF_USER_PIN_LOCKED))
    public static let userPINToBeChanged = TokenFlags(rawValue: UInt(CKF_USER_PIN_TO_BE_CHANGED))

    /// The flags as `asicfs tokens` names them, in a fixed order.
    public var names: [String] {
        let all: [(TokenFlags, String)] = [
            (.loginRequired, "login-required"), (.protectedAuthenticationPath, "pin-pad"),
            (.userPINInitialized, "pin-initialized"), (.userPINCountLow, "pin-count-low"),
            (.userPINFinalTry, "pin-final-try"), (.userPINLocked, "pin-locked"),
            (.userPINToBeChanged, "pin-to-be-changed"), (.writeProtected, "write-protected"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

/// What C_GetInfo says of a module.
public struct ModuleInfo: Sendable, Equatable {
    public var description: String
    public var manufacturer: String
    public var version: String
}
