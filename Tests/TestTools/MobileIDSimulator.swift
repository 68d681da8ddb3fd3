import Foundation

/// contrib/simulators/mobile_id_simulator.py on a loopback port, serving one test PKI: its URL,
/// the TLS certificate to pin, and the log of the requests it received. Stopped by `stop()` or
/// when released; it also exits by itself if the test process dies.
public final class MobileIDSimulator: Sendable {
    /// The demo numbers of spec/mobile-id.md §11 and the simulator's test-only ones: (phone, code).
    public enum Number {
        public static let ecOK = ("+37200000766", "60001019906")          // MARY ÄNN, P-256
        public static let rsaOK = ("+37200001566", "39901019992")         // RSA 2048
        public static let lithuanianOK = ("+37060000666", "50001018865")  // P-384
        public static let notMIDClient = ("+37200000266", "60001019939")
        public static let deliveryError = ("+37207110066", "60001019947")
        public static let userCancelled = ("+37201100266", "60001019950")
        public static let hashMismatch = ("+37200000666", "60001019961")
        public static let simError = ("+37201200266", "60001019972")
        public static let phoneAbsent = ("+37213100266", "60001019983")
        public static let timeout = ("+37066000266", "50001018908")
        // Test-only behaviours (not in the real service).
        public static let hangs = ("+37200009901", "38001019015")
        public static let malformedJSON = ("+37200009902", "38001019026")
        public static let internalError = ("+37200009903", "38001019037")
        public static let runsForever = ("+37200009904", "38001019048")
        public static let wrongSignature = ("+37200009905", "38001019059")
        public static let wrongAlgorithm = ("+37200009906", "38001019067")
    }

    public let port: Int
    /// Holds the simulator's TLS certificate (`tls.pem`) and the identities it issued.
    public let folder: String
    public let requestLog: String
    private let process: LoopbackProcess

    public var url: String { "https://127.0.0.1:\(port)/mid-api" }
    /// The self-signed certificate the simulator serves: the one clients pin.
    public var tlsCertificate: String { folder + "/tls.pem" }

    private init(process: LoopbackProcess, folder: String, requestLog: String) {
        self.process = process
        self.port = process.port
        self.folder = folder
        self.requestLog = requestLog
    }

    deinit { process.stop() }

    public func stop() { process.stop() }

    /// Starts the simulator for `pki` with its files in `folder` (kept between runs: the identities
    /// are issued once). `confirmAfter`: seconds the simulated user takes to answer.
    public static func start(pki: TestPKI, folder: String, confirmAfter: Double = 0.3, userTimeout: Double = 0.5,
                             extra: [String] = []) throws -> MobileIDSimulator {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let log = folder + "/requests-\(UUID().uuidString.prefix(8)).jsonl"
        let process = try LoopbackProcess.start("/usr/bin/python3", [
            script, "--pki", pki.folder, "--folder", folder, "--port", "0", "--exit-with-parent",
            "--confirm-after", String(confirmAfter), "--user-timeout", String(userTimeout), "--request-log", log,
        ] + extra)
        return MobileIDSimulator(process: process, folder: folder, requestLog: log)
    }

    /// The requests received so far, oldest first: method, path and the members the simulator logs.
    public func requests() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: requestLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The paths of the requests received so far ("POST /certificate", "GET /signature/session/…").
    public func requestLines() -> [String] {
        requests().map { "\($0["method"] as? String ?? "?") \($0["path"] as? String ?? "?")" }
    }

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/contrib/simulators/mobile_id_simulator.py"
    }()
}
