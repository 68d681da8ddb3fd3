import Foundation

/// contrib/simulators/csc_simulator.py on loopback HTTPS: a CSC API v1 remote signing service
/// whose credentials' certificates the test PKI issues. Stopped by `stop()` or when released;
/// the simulator also quits by itself if the test process dies.
public final class CSCSimulator: Sendable {
    public let port: Int
    /// Where its keys, certificates and client identities are (shared by simulators of one PKI).
    public let folder: String
    /// One JSON line per request (method, user, how it authenticated, credential, status,
    /// error_description), and per failed TLS handshake.
    public let logFile: String
    private let server: LoopbackProcess

    /// Users and secrets of the simulator (see contrib/simulators/README.md).
    public static let alicePassword = "alice-password"
    public static let bobPassword = "bob-password"
    public static let alicePIN = "918273645"
    public static let bobPIN = "55501234"
    public static let clientPassphrase = "client-secret"
    /// alice's credentials in the order credentials/list gives them.
    public static let aliceCredentials = ["alice-rsa", "alice-ec", "alice-ec-plain", "alice-wrong-key", "alice-empty",
                                          "alice-hang", "alice-expired-sad", "alice-bad-request"]

    /// The API base, as `remote.url` takes it.
    public var url: String { "https://127.0.0.1:\(port)/csc/v1" }
    /// Its self-signed TLS certificate (PEM): what clients pin.
    public var tlsCertificate: String { folder + "/tls.pem" }
    /// `<name>-client.p12` (alice, bob: issued by the simulator's client CA; stranger: not).
    public func clientIdentity(_ name: String) -> String { folder + "/\(name)-client.p12" }

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/contrib/simulators/csc_simulator.py"
    }()

    private init(server: LoopbackProcess, folder: String, log: String) {
        self.server = server
        port = server.port
        self.folder = folder
        logFile = log
    }

    /// Starts a simulator keeping its keys in `folder` (made on the first start, reused after);
    /// `options` are further command-line options (`--client-certificates required`, ...).
    public static func start(pki: TestPKI, folder: String, log: String, options: [String] = []) throws -> CSCSimulator {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let server = try LoopbackProcess.start("/usr/bin/python3", [
            script, "--pki", pki.folder, "--port", "0", "--folder", folder, "--log", log, "--exit-with-parent",
        ] + options, timeout: 60)
        return CSCSimulator(server: server, folder: folder, log: log)
    }

    public func stop() { server.stop() }

    /// The requests answered so far (and failed handshakes), oldest first.
    public func requests() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The CSC methods called so far, in order (failed handshakes left out).
    public func methods() -> [String] { requests().compactMap { $0["method"] as? String } }
}

/// A test PKI, its loopback TSA and OCSP, and two CSC simulators on it, shared by the tests of
/// one class: `simulator` asks for a client certificate but does not need one (logins work),
/// `mutualTLS` requires one (authType TLS).
public final class SharedCSCServices: @unchecked Sendable {
    public let base: SharedTestServices
    public let simulator: CSCSimulator?
    public let mutualTLS: CSCSimulator?
    public let failure: String?

    public var folder: String { base.folder }
    public var services: TestServices? { base.services }
    public var cscFolder: String { base.folder + "/csc" }

    public init(label: String) {
        base = SharedTestServices(label: label)
        guard let services = base.services else {
            (simulator, mutualTLS, failure) = (nil, nil, base.failure ?? "the loopback TSA and OCSP did not start")
            return
        }
        do {
            // One after the other: the first makes the keys and certificates, the second reuses them.
            let first = try CSCSimulator.start(pki: services.pki, folder: base.folder + "/csc", log: base.folder + "/csc.log",
                                               options: ["--client-certificates", "optional", "--page-size", "3"])
            let second = try CSCSimulator.start(pki: services.pki, folder: base.folder + "/csc", log: base.folder + "/csc-mtls.log",
                                                options: ["--client-certificates", "required", "--page-size", "3"])
            (simulator, mutualTLS, failure) = (first, second, nil)
        } catch {
            (simulator, mutualTLS, failure) = (nil, nil, "the CSC simulator did not start: \(error)")
        }
    }

    /// Another simulator on the same keys (for its own options), stopped by the caller.
    public func extra(_ name: String, options: [String]) throws -> CSCSimulator {
        guard let pki = services?.pki else { throw ShellError(failure ?? "no PKI") }
        return try CSCSimulator.start(pki: pki, folder: cscFolder, log: folder + "/csc-\(name).log", options: options)
    }

    public func stop() {
        simulator?.stop()
        mutualTLS?.stop()
        base.stop()
    }
}
