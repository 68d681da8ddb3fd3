import CPKCS11
import Foundation

/// A PKCS#11 module loaded by path (`module=PATH`): dlopen, C_GetFunctionList, C_Initialize.
/// One instance per library file in the process, shared and counted: PKCS#11 allows one
/// C_Initialize per process, so the last user's release calls C_Finalize. The library stays
/// mapped afterwards (modules such as OpenSC leave threads and atexit handlers behind, and a
/// later `load` simply initializes it again).
final class LoadedLibrary: @unchecked Sendable {
    let path: String
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    /// False when someone else in this process had initialized the module already: then it is
    /// theirs to finalize.
    private let initializedHere: Bool

    private init(path: String, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>, initializedHere: Bool) {
        self.path = path
        self.functions = functions
        self.initializedHere = initializedHere
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var open: [String: (library: LoadedLibrary, users: Int)] = [:]

    /// The initialized module at `path`. Errors name the path: dlerror's text when it does not
    /// load, "not a PKCS#11 module" when it has no C_GetFunctionList.
    static func acquire(_ path: String) throws(PKCS11Error) -> LoadedLibrary {
        lock.lock()
        defer { lock.unlock() }
        if let entry = open[path] {
            open[path] = (entry.library, entry.users + 1)
            return entry.library
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw PKCS11Error(code: nil, "cannot load the PKCS#11 module \(path): \(why)")
        }
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            dlclose(handle)
            throw PKCS11Error(code: nil, "\(path) is not a PKCS#11 module (it has no C_GetFunctionList)")
        }
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>? = nil
        let rv = cpkcs11_get_function_list(symbol, &list)
        guard rv == CK_RV(CKR_OK), let list, let initialize = list.pointee.C_Initialize else {
            dlclose(handle)
            throw PKCS11Error(code: nil, "\(path) is not a usable PKCS#11 module (C_GetFunctionList: \(PKCS11Error.name(of: UInt(rv))))")
        }
        var arguments = cpkcs11_initialize_args()
        let initialized = initialize(&arguments)
        guard initialized == CK_RV(CKR_OK) || initialized == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED) else {
            throw PKCS11Error(code: UInt(initialized), "the PKCS#11 module \(path) does not start: C_Initialize failed: \(PKCS11Error.name(of: UInt(initialized)))")
        }
        let library = LoadedLibrary(path: path, functions: list, initializedHere: initialized == CK_RV(CKR_OK))
        open[path] = (library, 1)
        return library
    }

    /// One user is done with the module; the last one finalizes it.
    func release() {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        guard let entry = Self.open[path] else { return }
        if entry.users > 1 {
            Self.open[path] = (entry.library, entry.users - 1)
            return
        }
        Self.open[path] = nil
        if initializedHere { _ = functions.pointee.C_Finalize?(nil) }
    }
}
