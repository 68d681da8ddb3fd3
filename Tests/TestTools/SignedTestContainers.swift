import Foundation

/// Signed containers made by the `asicfs` binary under test with the project's test PKI and its
/// loopback TSA and OCSP: an LT signature (BES/time-stamp) by JÕEORG,JAAK-KRISTJAN,38001085718,
/// issued by "TEST of ESTEID-LIKE 2025".
public enum SignedTestContainers {
    public static let signer = "JÕEORG,JAAK-KRISTJAN,38001085718"
    public static let issuer = "TEST of ESTEID-LIKE 2025"

    /// The settings that make asicfs trust the test PKI alone (no trusted list to download).
    public static func settings(_ services: TestServices, cache: String) -> [String] {
        ["-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.root)", "-o", "cache-dir=\(cache)"]
    }

    /// Creates `path` holding `files` (name, bytes; written to a scratch folder beside it) and
    /// signs it with the test signer's PKCS#12. `extra` settings come after the usual ones.
    public static func make(_ path: String, files: [(String, Data)], binary: String, services: TestServices,
                            extra: [String] = []) throws {
        let scratch = path + ".parts"
        try FileManager.default.createDirectory(atPath: scratch + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var sources: [String] = []
        for (name, data) in files {
            let source = scratch + "/data/" + name
            try FileManager.default.createDirectory(atPath: (source as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: source))
            sources.append(source)
        }
        // Hermetic: no config file of the user or the machine.
        let environment = ["XDG_CONFIG_HOME": scratch + "/config", "ASICFS_SYSTEM_CONFIG": scratch + "/system-config"]
        let created = try Shell.run(binary, ["create", path] + sources, environment: environment)
        guard created.status == 0 else { throw ShellError("asicfs create failed: \(created.stderr)") }
        let passphrase = scratch + "/passphrase"
        try Data((TestPKI.passphrase + "\n").utf8).write(to: URL(fileURLWithPath: passphrase))
        let signed = try Shell.run(binary, ["sign", path, "--method", "pkcs12", "file=\(services.pki.signerP12)", "passphrase-file=\(passphrase)"]
                                   + settings(services, cache: scratch + "/cache") + extra, environment: environment)
        guard signed.status == 0 else { throw ShellError("asicfs sign failed: \(signed.stdout) \(signed.stderr)") }
    }
}
