import CPKCS11
import Glibc

/// Every module registered with p11-kit (`/usr/share/p11-kit/modules/*.module`, `/etc/pkcs11/modules`),
/// loaded and initialized by p11-kit, which counts its users: released when the last
/// `PKCS11Module` taken from it goes. p11-kit's trust module (CA certificates, no keys) is left out.
final class RegisteredModules: @unchecked Sendable {
    private let list: UnsafeMutablePointer<UnsafeMutablePointer<CK_FUNCTION_LIST>?>

    /// The modules: (p11-kit's name, library path, function list).
    private(set) var entries: [(name: String, path: String, functions: UnsafeMutablePointer<CK_FUNCTION_LIST>)] = []

    static let trustModule = "p11-kit-trust"

    init() throws(PKCS11Error) {
        // p11-kit is loaded here, on first use (see Sources/CPKCS11/include/cpkcs11.h).
        guard cp11_load() == 0 else { throw PKCS11Error(code: nil, String(cString: cp11_load_error())) }
        // Messages of modules that fail go to p11_kit_message(), not to stderr: one-line errors.
        cp11_be_quiet()
        guard let list = cp11_modules_load_and_initialize(0) else {
            let why = cp11_message().map { String(cString: $0) } ?? "unknown error"
            throw PKCS11Error(code: nil, "p11-kit cannot load its registered PKCS#11 modules: \(why)")
        }
        self.list = list
        var index = 0
        while let functions = list[index] {
            index += 1
            let name = Self.owned(cp11_module_get_name(functions)) ?? "module \(index)"
            if name == Self.trustModule { continue }
            let path = Self.owned(cp11_module_get_filename(functions)) ?? name
            entries.append((name, path, functions))
        }
    }

    deinit { cp11_modules_finalize_and_release(list) }

    /// A string p11-kit allocated for us: copied, then freed.
    private static func owned(_ text: UnsafeMutablePointer<CChar>?) -> String? {
        guard let text else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
}
