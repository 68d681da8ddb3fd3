import Foundation

/// SoftHSM tokens made for one test, in a private token folder: `environment` points SoftHSM at
/// it (SOFTHSM2_CONF). p11-kit finds SoftHSM through Debian's
/// /usr/share/p11-kit/modules/softhsm2.module, so programs with this environment see exactly
/// these tokens through p11-kit, with no module path. The environment also points pcsc-lite at
/// a socket that does not exist: OpenSC (also registered with p11-kit) then sees no reader, so a
/// card in this machine's pcscd (the ID-card tests' virtual card) cannot join the tokens.
public final class SoftHSMTokens: @unchecked Sendable {
    public static let module = "/usr/lib/softhsm/libsofthsm2.so"
    public static let soPIN = "12345678"
    public let folder: String

    public init(folder: String) throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/tokens", withIntermediateDirectories: true)
        try "directories.tokendir = \(folder)/tokens\nobjectstore.backend = file\nlog.level = ERROR\n"
            .write(toFile: folder + "/softhsm2.conf", atomically: true, encoding: .utf8)
    }

    public var environment: [String: String] {
        ["SOFTHSM2_CONF": folder + "/softhsm2.conf", "PCSCLITE_CSOCK_NAME": folder + "/no-pcscd.socket"]
    }

    /// One key pair and its certificate for a token.
    public struct Identity {
        public let key: String
        public let certificate: String
        public let id: String
        public let label: String
        /// The private key may derive (CKA_DERIVE, for ECDH): softhsm2-util imports without it,
        /// so such a key is written with pkcs11-tool --usage-derive.
        public let derive: Bool
        public init(key: String, certificate: String, id: String, label: String, derive: Bool = false) {
            self.key = key
            self.certificate = certificate
            self.id = id
            self.label = label
            self.derive = derive
        }
    }

    /// A new token with these key pairs (keys imported with softhsm2-util, certificates written
    /// with pkcs11-tool) and extra certificates without keys (a CA, as cards carry).
    public func makeToken(label: String, pin: String, identities: [Identity], caCertificates: [String] = []) throws {
        var script = "set -e\n" + exports
        script += "softhsm2-util --init-token --free --label \(quote(label)) --so-pin \(Self.soPIN) --pin \(quote(pin)) >/dev/null\n"
        for (index, identity) in identities.enumerated() {
            let p8 = "\(folder)/\(label)-\(index).p8", der = "\(folder)/\(label)-\(index).der"
            script += "openssl pkcs8 -topk8 -nocrypt -in \(quote(identity.key)) -out \(quote(p8))\n"
            script += "openssl x509 -in \(quote(identity.certificate)) -outform der -out \(quote(der))\n"
            if identity.derive {
                script += "openssl pkcs8 -topk8 -nocrypt -in \(quote(identity.key)) -outform der -out \(quote(p8)).der\n"
                script += "pkcs11-tool --module \(Self.module) --token-label \(quote(label)) --login --pin \(quote(pin)) "
                    + "--write-object \(quote(p8)).der --type privkey --usage-derive --id \(identity.id) --label \(quote(identity.label)) >/dev/null\n"
                // Without login only public objects show: the public half says the key is there.
                script += "openssl pkey -in \(quote(identity.key)) -pubout -outform der -out \(quote(p8)).pub\n"
                script += "pkcs11-tool --module \(Self.module) --token-label \(quote(label)) --login --pin \(quote(pin)) "
                    + "--write-object \(quote(p8)).pub --type pubkey --usage-derive --id \(identity.id) --label \(quote(identity.label)) >/dev/null\n"
                script += "rm -f \(quote(p8)).der \(quote(p8)).pub\n"
            } else {
                script += "softhsm2-util --import \(quote(p8)) --token \(quote(label)) --label \(quote(identity.label)) --id \(identity.id) --pin \(quote(pin)) >/dev/null\n"
            }
            script += "pkcs11-tool --module \(Self.module) --token-label \(quote(label)) --login --pin \(quote(pin)) "
                + "--write-object \(quote(der)) --type cert --id \(identity.id) --label \(quote(identity.label)) >/dev/null\n"
            script += "rm -f \(quote(p8))\n"
        }
        for (index, certificate) in caCertificates.enumerated() {
            let der = "\(folder)/\(label)-ca\(index).der"
            script += "openssl x509 -in \(quote(certificate)) -outform der -out \(quote(der))\n"
            script += "pkcs11-tool --module \(Self.module) --token-label \(quote(label)) --login --pin \(quote(pin)) "
                + "--write-object \(quote(der)) --type cert --id \(String(format: "%02x", 0xc0 + index)) --label CA\(index) >/dev/null\n"
        }
        let result = try Shell.sh(script)
        guard result.status == 0 else { throw ShellError("making the SoftHSM token \(label) failed: \(result.stderr)") }
    }

    /// The token's flags as pkcs11-tool prints them ("login required, ..., user PIN count low").
    public func flags(of label: String) throws -> String {
        let result = try Shell.sh(exports + "pkcs11-tool --module \(Self.module) --list-token-slots")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.contains("token label") && $0.hasSuffix(": \(label)") }),
              let flags = lines[start...].first(where: { $0.contains("token flags") }) else {
            throw ShellError("no token \(label) in: \(result.stdout) \(result.stderr)")
        }
        return flags
    }

    private var exports: String {
        environment.map { "export \($0.key)=\(quote($0.value))\n" }.sorted().joined()
    }

    private func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
