import Foundation

/// contrib/simulators/smart_id_simulator.py on loopback HTTPS: Smart-ID RP API v2 and v3 with accounts
/// whose certificates the test PKI issues. Stopped by `stop()` or when released; the simulator
/// also quits by itself if the test process dies.
public final class SmartIDSimulator: Sendable {
    public let port: Int
    /// The simulator's self-signed TLS certificate (PEM): what clients pin.
    public let tlsCertificate: String
    /// One JSON line per request the simulator answered (method, kind, status, and for signature
    /// requests the verification code of the hash received and the interactions asked for).
    public let logFile: String
    private let server: LoopbackProcess

    /// The API base, as `smart-id.url` takes it.
    public var url: String { "https://127.0.0.1:\(port)/smart-id-rp/v2" }
    /// The RP API v3 base.
    public var urlV3: String { "https://127.0.0.1:\(port)/smart-id-rp/v3" }

    /// The phone of `document` scans `link` (the simulator's POST /mock/device-link): nil when
    /// accepted, else the simulator's refusal.
    public func scan(link: String, document: String) throws -> String? {
        let output = try Shell.run("/usr/bin/python3", [Self.script, "scan", "--port", String(port), "--cert", tlsCertificate,
                                                        "--document", document, link])
        return output.status == 0 ? nil : output.stderr
    }

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/contrib/simulators/smart_id_simulator.py"
    }()

    private init(server: LoopbackProcess, folder: String) {
        self.server = server
        port = server.port
        tlsCertificate = folder + "/tls.pem"
        logFile = folder + "/requests.log"
    }

    /// Starts the simulator with its keys, certificates and log in `folder`; the simulated user
    /// answers `confirmAfter` seconds after a signature request.
    public static func start(pki: TestPKI, folder: String, confirmAfter: Double = 0.2) throws -> SmartIDSimulator {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let server = try LoopbackProcess.start("/usr/bin/python3", [
            script, "--pki", pki.folder, "--port", "0", "--folder", folder, "--confirm-after", String(confirmAfter),
            "--log", folder + "/requests.log", "--exit-with-parent",
        ])
        let simulator = SmartIDSimulator(server: server, folder: folder)
        // simcommon.serve makes the certificate before it listens, so it is there once PORT is printed.
        guard FileManager.default.fileExists(atPath: simulator.tlsCertificate) else {
            throw ShellError("the Smart-ID simulator printed its port but \(simulator.tlsCertificate) is missing")
        }
        return simulator
    }

    public func stop() { server.stop() }

    /// The requests answered so far, oldest first.
    public func requests() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}

/// A test PKI, its loopback TSA and OCSP, and a Smart-ID simulator serving that PKI's accounts,
/// shared by the tests of one class: made in `override class func setUp()`, stopped and removed
/// in `tearDown()`.
public final class SharedSmartIDServices: @unchecked Sendable {
    public let base: SharedTestServices
    public let simulator: SmartIDSimulator?
    /// Why the services could not start (tests then fail with it), or nil.
    public let failure: String?

    public var folder: String { base.folder }
    public var services: TestServices? { base.services }

    public init(label: String, confirmAfter: Double = 0.2) {
        base = SharedTestServices(label: label)
        guard let services = base.services else {
            simulator = nil
            failure = base.failure ?? "the loopback TSA and OCSP did not start"
            return
        }
        do {
            simulator = try SmartIDSimulator.start(pki: services.pki, folder: base.folder + "/smart-id",
                                                   confirmAfter: confirmAfter)
            failure = nil
        } catch {
            simulator = nil
            failure = "the Smart-ID simulator did not start: \(error)"
        }
    }

    public func stop() {
        simulator?.stop()
        base.stop()
    }
}
