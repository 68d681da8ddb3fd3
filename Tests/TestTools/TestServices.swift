import Foundation

/// A throwaway PKI made by contrib/testpki/mkpki.sh: the paths of what it made.
public struct TestPKI: Sendable {
    /// The folder mkpki.sh filled.
    public let folder: String
    /// The OCSP URL written into the signers' AIA.
    public let ocspURL: String
    public static let passphrase = "test1234"

    public var root: String { path("root.pem") }
    public var issuing: String { path("issuing.pem") }
    public var signer: String { path("signer.pem") }
    public var signerP12: String { path("signer.p12") }
    public var revoked: String { path("revoked.pem") }
    public var revokedP12: String { path("revoked.p12") }
    /// An RSA-2048 signer (nonRepudiation; key signer-rsa.key), for tokens' RSA keys.
    public var signerRSA: String { path("signer-rsa.pem") }
    /// An authentication certificate (digitalSignature, keyAgreement, no nonRepudiation).
    public var auth: String { path("auth.pem") }
    /// The EC (P-256) OCSP responder; `ocspRSA` is the RSA one.
    public var ocsp: String { path("ocsp.pem") }
    public var ocspRSA: String { path("ocsp-rsa.pem") }
    /// The time-mark responder: its certificate names the BDOC time-mark policy.
    public var ocspTM: String { path("ocsp-tm.pem") }
    /// A time-mark responder naming SK's test time-mark policy 1.3.6.1.4.1.10015.3.1.1 instead.
    public var ocspTMTest: String { path("ocsp-tm-test.pem") }
    public var tsa: String { path("tsa.pem") }
    /// issuing.pem then root.pem.
    public var chain: String { path("chain.pem") }

    public func path(_ name: String) -> String { folder + "/" + name }

    /// Runs mkpki.sh into `folder` (created if missing) with `ocspURL` in the signers' AIA.
    public static func make(in folder: String, ocspURL: String) throws -> TestPKI {
        let made = try Shell.run(TestServices.contrib + "/mkpki.sh", [folder, ocspURL])
        guard made.status == 0 else { throw ShellError("mkpki.sh failed (\(made.status)): \(made.stderr)") }
        return TestPKI(folder: folder, ocspURL: ocspURL)
    }
}

/// The loopback TSA and OCSP responders of contrib/testpki/tsa_ocsp_server.py, serving one PKI.
/// Stopped by `stop()` or when released; the server also exits by itself if the test process dies.
public final class TestServices: Sendable {
    public let pki: TestPKI
    public let baseURL: String
    public var tsaURL: String { baseURL + "/tsa" }
    /// Answers signed by the EC responder (ocsp.pem).
    public var ocspURL: String { baseURL + "/ocsp" }
    /// Answers signed by the RSA responder (ocsp-rsa.pem).
    public var ocspRSAURL: String { baseURL + "/ocsp-rsa" }
    /// Answers signed by the time-mark responder (`TestPKI.ocspTM`).
    public var ocspTMURL: String { baseURL + "/ocsp-tm" }
    /// Answers signed by the responder with SK's test time-mark policy (`TestPKI.ocspTMTest`).
    public var ocspTMTestURL: String { baseURL + "/ocsp-tm-test" }
    private let server: LoopbackProcess

    static let contrib: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/contrib/testpki"
    }()

    private init(pki: TestPKI, server: LoopbackProcess) {
        self.pki = pki
        self.server = server
        baseURL = "http://127.0.0.1:\(server.port)"
    }

    /// Serves an existing PKI. Its signers' AIA names whatever URL it was made with, not this server.
    public static func start(pki: TestPKI) throws -> TestServices {
        TestServices(pki: pki, server: try launch(serving: pki.folder))
    }

    /// Starts the server first, then makes the PKI in `folder` with this server's `/ocsp` in the
    /// signers' AIA (the server reads the folder per request, so it may start while it is empty).
    /// Use this when the code under test finds the responder through the certificate.
    public static func start(makingPKIIn folder: String) throws -> TestServices {
        let server = try launch(serving: folder)
        let pki = try TestPKI.make(in: folder, ocspURL: "http://127.0.0.1:\(server.port)/ocsp")
        return TestServices(pki: pki, server: server)
    }

    /// Serves an existing PKI with its clock set off by `offset` (faketime's syntax, e.g. "+1h"):
    /// its time-stamps and OCSP answers carry that time, for cases that need one service's
    /// time after another's.
    public static func start(pki: TestPKI, clockOffset offset: String) throws -> TestServices {
        TestServices(pki: pki, server: try launch(serving: pki.folder, clockOffset: offset))
    }

    public func stop() { server.stop() }

    private static func launch(serving folder: String, clockOffset: String? = nil) throws -> LoopbackProcess {
        // libfaketime preloaded into the server itself (and so into the openssl it runs), not the
        // faketime program, which would stand between the server and its parent.
        var environment: [String: String] = [:]
        if let clockOffset {
            guard let library = ["x86_64", "aarch64"].map({ "/usr/lib/\($0)-linux-gnu/faketime/libfaketime.so.1" })
                .first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw ShellError("libfaketime is not installed (scripts/install-deps.sh installs faketime)")
            }
            environment = ["LD_PRELOAD": library, "FAKETIME": clockOffset]
        }
        return try LoopbackProcess.start("/usr/bin/python3", [contrib + "/tsa_ocsp_server.py", "--pki", folder,
                                                             "--port", "0", "--exit-with-parent"], environment: environment)
    }
}

/// A program that listens on 127.0.0.1 and prints "PORT n" once it does (the loopback servers
/// the tests spawn). Stopped by `stop()` or when released.
public final class LoopbackProcess: @unchecked Sendable {
    public let port: Int

    /// A service that accepts connections on 127.0.0.1 and never answers: for timeouts,
    /// cancellation and "one signing at a time" tests.
    public static func silentServer() throws -> LoopbackProcess {
        try start("/usr/bin/python3", ["-c", """
            import socket
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
            print("PORT", s.getsockname()[1], flush=True)
            held = []
            while True: held.append(s.accept())
            """])
    }
    private let lock = NSLock()
    private var pid: pid_t?

    private init(pid: pid_t, port: Int) {
        self.pid = pid
        self.port = port
    }

    deinit { stop() }

    public func stop() {
        lock.lock()
        let running = pid
        pid = nil
        lock.unlock()
        guard let running else { return }
        kill(running, SIGTERM)
        _ = Shell.wait(running)
    }

    /// Spawns the program and waits (at most `timeout` s) for its "PORT n" line.
    public static func start(_ program: String, _ arguments: [String], environment: [String: String] = [:],
                             timeout: Double = 10) throws -> LoopbackProcess {
        let base = NSTemporaryDirectory() + "asicfs-loopback-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(base + ".out"); unlink(base + ".err") }
        let pid = try Shell.spawn(program, arguments, stdout: base + ".out", stderr: base + ".err", environment: environment)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: base + ".out", encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }),
               let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespaces)) {
                return LoopbackProcess(pid: pid, port: port)
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let why = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
                throw ShellError("\(program) exited before listening: \(why)")
            }
            usleep(20_000)
        }
        kill(pid, SIGTERM)
        _ = Shell.wait(pid)
        throw ShellError("\(program) did not print its port within \(Int(timeout)) s")
    }
}

/// A test PKI and its loopback services shared by all tests of one class, in a private folder:
/// made in `override class func setUp()`, stopped and removed in `tearDown()`.
public final class SharedTestServices: @unchecked Sendable {
    public let folder: String
    /// nil when the services could not start (tests then fail with that reason).
    public let services: TestServices?
    public let failure: String?

    public init(label: String) {
        folder = NSTemporaryDirectory() + "asicfs-\(label)-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        do {
            services = try TestServices.start(makingPKIIn: folder + "/pki")
            failure = nil
        } catch {
            services = nil
            failure = "\(error)"
        }
    }

    public func stop() {
        services?.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
