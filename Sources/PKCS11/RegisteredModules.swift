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
        // Messages of modules that fail go to p11_kit_message(), not to stderr: one-line errors.
        p11_kit_be_quiet()
        guard let list = p11_kit_modules_load_and_initialize(0) else {
            let why = p11_kit_message().map { String(cString: $0) } ?? "unknown error"
            throw PKCS11Error(code: nil, "p11-kit cannot load its registered PKCS#11 modules: \(why)")
        }
        self.list = list
        var index = 0
        while let functions = list[index] {
            index += 1
            let name = Self.owned(p11_kit_module_get_name(functions)) ?? "module \(index)"
            if name == Self.trustModule { continue }
            let path = Self.owned(p11_kit_module_get_filename(functions)) ?? name
            entries.append((name, path, functions))
        }
    }

    deinit { p11_kit_modules_finalize_and_release(list) }

    /// A string p11-kit allocated for us: copied, then freed.
    private static func owned(_ text: UnsafeMutablePointer<CChar>?) -> String? {
        guard let text else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
}
