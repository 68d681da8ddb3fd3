import CPKCS11

/// A PKCS#11 call that failed: which call, its `CKR_*` code, and a one-line sentence. Callers
/// that know the token (the signer) turn the codes people meet into their own words
/// (wrong PIN, locked, removed); this type only names them.
public struct PKCS11Error: Error, CustomStringConvertible, Equatable {
    /// The CK_RV, or nil when the failure is not a PKCS#11 return code (a module that does not load).
    public let code: UInt?
    public let description: String

    public init(code: UInt?, _ description: String) {
        self.code = code
        self.description = description
    }

    /// "C_Login failed: CKR_PIN_INCORRECT (0xa0)".
    init(_ rv: CK_RV, call: String) {
        code = UInt(rv)
        description = "\(call) failed: \(Self.name(of: UInt(rv)))"
    }

    /// Throws unless `rv` is CKR_OK.
    static func check(_ rv: CK_RV, _ call: String) throws(PKCS11Error) {
        if rv != CK_RV(CKR_OK) { throw PKCS11Error(rv, call: call) }
    }

    public static let pinIncorrect = UInt(CKR_PIN_INCORRECT)
    public static let pinLocked = UInt(CKR_PIN_LOCKED)
    public static let pinExpired = UInt(CKR_PIN_EXPIRED)
    public static let pinLenRange = UInt(CKR_PIN_LEN_RANGE)
    public static let tokenNotPresent = UInt(CKR_TOKEN_NOT_PRESENT)
    public static let deviceRemoved = UInt(CKR_DEVICE_REMOVED)
    public static let sessionClosed = UInt(CKR_SESSION_CLOSED)
    public static let sessionHandleInvalid = UInt(CKR_SESSION_HANDLE_INVALID)
    public static let functionCanceled = UInt(CKR_FUNCTION_CANCELED)
    public static let userAlreadyLoggedIn = UInt(CKR_USER_ALREADY_LOGGED_IN)
    public static let mechanismInvalid = UInt(CKR_MECHANISM_INVALID)
    public static let mechanismParamInvalid = UInt(CKR_MECHANISM_PARAM_INVALID)
    public static let argumentsBad = UInt(CKR_ARGUMENTS_BAD)
    public static let encryptedDataInvalid = UInt(CKR_ENCRYPTED_DATA_INVALID)
    public static let encryptedDataLenRange = UInt(CKR_ENCRYPTED_DATA_LEN_RANGE)
    public static let keyTypeInconsistent = UInt(CKR_KEY_TYPE_INCONSISTENT)
    public static let keyFunctionNotPermitted = UInt(CKR_KEY_FUNCTION_NOT_PERMITTED)
    public static let slotIdInvalid = UInt(CKR_SLOT_ID_INVALID)

    /// The token went away under the call (pulled out, or its reader with it).
    public var isRemoval: Bool {
        [Self.tokenNotPresent, Self.deviceRemoved, Self.sessionClosed, Self.sessionHandleInvalid, Self.slotIdInvalid]
            .contains(code ?? 0)
    }

    /// `CKR_NAME (0xNN)` for the codes a user may meet; the number alone for the rest.
    public static func name(of code: UInt) -> String {
        let hex = "0x" + String(code, radix: 16)
        return names[code].map { "\($0) (\(hex))" } ?? "error \(hex)"
    }

    static let names: [UInt: String] = [
        UInt(CKR_CANCEL): "CKR_CANCEL",
        UInt(CKR_HOST_MEMORY): "CKR_HOST_MEMORY",
        UInt(CKR_SLOT_ID_INVALID): "CKR_SLOT_ID_INVALID",
        UInt(CKR_GENERAL_ERROR): "CKR_GENERAL_ERROR",
        UInt(CKR_FUNCTION_FAILED): "CKR_FUNCTION_FAILED",
        UInt(CKR_ARGUMENTS_BAD): "CKR_ARGUMENTS_BAD",
        UInt(CKR_ATTRIBUTE_SENSITIVE): "CKR_ATTRIBUTE_SENSITIVE",
        UInt(CKR_ATTRIBUTE_TYPE_INVALID): "CKR_ATTRIBUTE_TYPE_INVALID",
        UInt(CKR_DATA_INVALID): "CKR_DATA_INVALID",
        UInt(CKR_DATA_LEN_RANGE): "CKR_DATA_LEN_RANGE",
        UInt(CKR_ENCRYPTED_DATA_INVALID): "CKR_ENCRYPTED_DATA_INVALID",
        UInt(CKR_ENCRYPTED_DATA_LEN_RANGE): "CKR_ENCRYPTED_DATA_LEN_RANGE",
        UInt(CKR_TEMPLATE_INCONSISTENT): "CKR_TEMPLATE_INCONSISTENT",
        UInt(CKR_TEMPLATE_INCOMPLETE): "CKR_TEMPLATE_INCOMPLETE",
        UInt(CKR_DEVICE_ERROR): "CKR_DEVICE_ERROR",
        UInt(CKR_DEVICE_MEMORY): "CKR_DEVICE_MEMORY",
        UInt(CKR_DEVICE_REMOVED): "CKR_DEVICE_REMOVED",
        UInt(CKR_FUNCTION_CANCELED): "CKR_FUNCTION_CANCELED",
        UInt(CKR_FUNCTION_NOT_SUPPORTED): "CKR_FUNCTION_NOT_SUPPORTED",
        UInt(CKR_KEY_HANDLE_INVALID): "CKR_KEY_HANDLE_INVALID",
        UInt(CKR_KEY_TYPE_INCONSISTENT): "CKR_KEY_TYPE_INCONSISTENT",
        UInt(CKR_KEY_FUNCTION_NOT_PERMITTED): "CKR_KEY_FUNCTION_NOT_PERMITTED",
        UInt(CKR_MECHANISM_INVALID): "CKR_MECHANISM_INVALID",
        UInt(CKR_MECHANISM_PARAM_INVALID): "CKR_MECHANISM_PARAM_INVALID",
        UInt(CKR_OBJECT_HANDLE_INVALID): "CKR_OBJECT_HANDLE_INVALID",
        UInt(CKR_OPERATION_ACTIVE): "CKR_OPERATION_ACTIVE",
        UInt(CKR_OPERATION_NOT_INITIALIZED): "CKR_OPERATION_NOT_INITIALIZED",
        UInt(CKR_PIN_INCORRECT): "CKR_PIN_INCORRECT",
        UInt(CKR_PIN_INVALID): "CKR_PIN_INVALID",
        UInt(CKR_PIN_LEN_RANGE): "CKR_PIN_LEN_RANGE",
        UInt(CKR_PIN_EXPIRED): "CKR_PIN_EXPIRED",
        UInt(CKR_PIN_LOCKED): "CKR_PIN_LOCKED",
        UInt(CKR_SESSION_CLOSED): "CKR_SESSION_CLOSED",
        UInt(CKR_SESSION_COUNT): "CKR_SESSION_COUNT",
        UInt(CKR_SESSION_HANDLE_INVALID): "CKR_SESSION_HANDLE_INVALID",
        UInt(CKR_TOKEN_NOT_PRESENT): "CKR_TOKEN_NOT_PRESENT",
        UInt(CKR_TOKEN_NOT_RECOGNIZED): "CKR_TOKEN_NOT_RECOGNIZED",
        UInt(CKR_USER_ALREADY_LOGGED_IN): "CKR_USER_ALREADY_LOGGED_IN",
        UInt(CKR_USER_NOT_LOGGED_IN): "CKR_USER_NOT_LOGGED_IN",
        UInt(CKR_USER_PIN_NOT_INITIALIZED): "CKR_USER_PIN_NOT_INITIALIZED",
        UInt(CKR_USER_TYPE_INVALID): "CKR_USER_TYPE_INVALID",
        UInt(CKR_BUFFER_TOO_SMALL): "CKR_BUFFER_TOO_SMALL",
        UInt(CKR_CRYPTOKI_NOT_INITIALIZED): "CKR_CRYPTOKI_NOT_INITIALIZED",
        UInt(CKR_CRYPTOKI_ALREADY_INITIALIZED): "CKR_CRYPTOKI_ALREADY_INITIALIZED",
    ]
}
