import CPKCS11

/// PKCS#11 from Swift. A `PKCS11Module` is one module's function list: its slots and tokens, and
/// sessions on them (`PKCS11Session`). Modules come from a path (`load(path:)`, dlopen) or from
/// p11-kit's registry (`registered()`, the way GnuTLS and Firefox find tokens on Debian).
/// Every C pointer stays in the file of the C object it belongs to; callers see Swift types
/// and `PKCS11Error`.
public final class PKCS11Module: @unchecked Sendable {
    /// p11-kit's name of the module ("softhsm2", "opensc-pkcs11"), or its path when loaded by path.
    public let name: String
    /// The library file.
    public let path: String
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// Keeps the library initialized while this module is in use.
    private let owner: AnyObject
    private let release: () -> Void

    private init(name: String, path: String, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>, owner: AnyObject,
                 release: @escaping () -> Void = {}) {
        self.name = name
        self.path = path
        self.functions = functions
        self.owner = owner
        self.release = release
    }

    deinit { release() }

    /// The module in the library at `path`, initialized.
    public static func load(path: String) throws(PKCS11Error) -> PKCS11Module {
        let library = try LoadedLibrary.acquire(path)
        return PKCS11Module(name: path, path: path, functions: library.functions, owner: library, release: library.release)
    }

    /// Every module p11-kit has registered, except its trust module, initialized.
    public static func registered() throws(PKCS11Error) -> [PKCS11Module] {
        let list = try RegisteredModules()
        return list.entries.map { PKCS11Module(name: $0.name, path: $0.path, functions: $0.functions, owner: list) }
    }

    public func info() throws(PKCS11Error) -> ModuleInfo {
        var info = CK_INFO()
        try PKCS11Error.check(call("C_GetInfo") { $0.C_GetInfo?(&info) }, "C_GetInfo")
        return ModuleInfo(description: TokenInfo.text(info.libraryDescription), manufacturer: TokenInfo.text(info.manufacturerID),
                          version: "\(info.libraryVersion.major).\(info.libraryVersion.minor)")
    }

    /// The slots that hold a token (initialized or not: see `TokenInfo.flags`).
    public func slots() throws(PKCS11Error) -> [UInt] {
        var count: CK_ULONG = 0
        try PKCS11Error.check(call("C_GetSlotList") { $0.C_GetSlotList?(CK_BBOOL(CK_TRUE), nil, &count) }, "C_GetSlotList")
        guard count > 0 else { return [] }
        // A reader may appear between the two calls: ask again with room to spare.
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count) + 4)
        count = CK_ULONG(slots.count)
        try PKCS11Error.check(call("C_GetSlotList") { $0.C_GetSlotList?(CK_BBOOL(CK_TRUE), &slots, &count) }, "C_GetSlotList")
        return slots.prefix(Int(count)).map { UInt($0) }
    }

    public func tokenInfo(slot: UInt) throws(PKCS11Error) -> TokenInfo {
        var info = CK_TOKEN_INFO()
        try PKCS11Error.check(call("C_GetTokenInfo") { $0.C_GetTokenInfo?(CK_SLOT_ID(slot), &info) }, "C_GetTokenInfo")
        let minimum = Int(info.ulMinPinLen), maximum = Int(info.ulMaxPinLen)
        // CK_UNAVAILABLE_INFORMATION (~0) and zero mean "no limit given".
        let lengths: ClosedRange<Int>? = minimum >= 0 && maximum > 0 && minimum <= maximum && maximum < 1 << 16 ? minimum...maximum : nil
        return TokenInfo(label: TokenInfo.text(info.label), manufacturer: TokenInfo.text(info.manufacturerID),
                         model: TokenInfo.text(info.model), serial: TokenInfo.text(info.serialNumber),
                         flags: TokenFlags(rawValue: UInt(info.flags)), pinLengths: lengths)
    }

    /// A read-only session on the token in `slot` (signing needs no write access).
    public func openSession(slot: UInt) throws(PKCS11Error) -> PKCS11Session {
        var handle: CK_SESSION_HANDLE = 0
        try PKCS11Error.check(call("C_OpenSession") {
            $0.C_OpenSession?(CK_SLOT_ID(slot), CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &handle)
        }, "C_OpenSession")
        return PKCS11Session(module: self, handle: handle)
    }

    /// Calls a function of the list; a module that lacks it answers CKR_FUNCTION_NOT_SUPPORTED.
    func call(_ name: String, _ body: (CK_FUNCTION_LIST) -> CK_RV?) -> CK_RV {
        body(functions.pointee) ?? CK_RV(CKR_FUNCTION_NOT_SUPPORTED)
    }
}
