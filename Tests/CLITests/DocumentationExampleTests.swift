import Foundation
import TestTools
import XCTest

/// Runs every marked shell example of README.md and docs/usage.md (the marking is described on
/// `DocumentationExample`) against the built `asicfs`, the loopback
/// TSA/OCSP of contrib/testpki and the Mobile-ID/Smart-ID simulators, each in a fresh folder
/// with its own HOME and configuration, and fails on a non-zero exit or on output that differs
/// from what the example shows.
final class DocumentationExampleTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedTestServices!
    nonisolated(unsafe) static var mobileID: MobileIDSimulator?
    nonisolated(unsafe) static var smartID: SmartIDSimulator?

    override class func setUp() {
        shared = SharedTestServices(label: "cli-doc-examples")
        guard let pki = shared.services?.pki else { return }
        mobileID = try? MobileIDSimulator.start(pki: pki, folder: shared.folder + "/mobile-id", confirmAfter: 0.1)
        smartID = try? SmartIDSimulator.start(pki: pki, folder: shared.folder + "/smart-id", confirmAfter: 0.1)
    }

    override class func tearDown() {
        mobileID?.stop()
        smartID?.stop()
        shared.stop()
    }

    func testTheExamplesOfTheREADME() throws {
        try runExamples(of: "README.md", atLeast: 3)
    }

    func testTheExamplesOfTheUsageGuide() throws {
        try runExamples(of: "docs/usage.md", atLeast: 10)
    }

    /// The runner itself: an example whose output or exit status is not the shown one fails,
    /// and one that is passes (so a runner that compares nothing cannot pass the real ones).
    func testAnExampleThatDoesNotDoWhatItShowsFails() throws {
        let page = """
            <!-- example: files -->
            ```
            $ asicfs create c.asice contract.txt
            created c.asice with 1 data file
            $ asicfs ls c.asice
            c.asice: ASiC-E, 1 data file, not signed
              …  contract.txt
            $ asicfs ls missing.asice
            asicfs: …missing.asice…
            ```

            <!-- example: files -->
            ```
            $ asicfs create c.asice contract.txt
            created c.asice with 2 data files
            ```

            <!-- example -->
            ```
            $ false
            ```

            <!-- example -->
            ```sh
            true
            false
            true
            ```
            """
        let examples = try DocumentationExample.parse(page, file: "page.md")
        XCTAssertEqual(examples.map(\.kind), [.transcript, .transcript, .transcript, .script])
        XCTAssertEqual(examples.first?.commands.count, 3)
        XCTAssertEqual(try run(examples[0]), [])
        XCTAssertEqual(try run(examples[1]).count, 1, "a differing line must fail")
        XCTAssertEqual(try run(examples[2]).count, 1, "a non-zero exit must fail")
        XCTAssertEqual(try run(examples[3]).count, 1, "a failing script must fail")
        XCTAssertThrowsError(try DocumentationExample.parse("<!-- example -->\ntext\n", file: "x.md"))
        XCTAssertEqual(DocumentationExample.difference(expected: ["a … b"], actual: ["a xyz b"]), nil)
        XCTAssertNotNil(DocumentationExample.difference(expected: ["a"], actual: ["a", "b"]))
    }

    // MARK: - Running

    func runExamples(of file: String, atLeast minimum: Int) throws {
        let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(file), encoding: .utf8)
        let examples = try DocumentationExample.parse(text, file: file)
        XCTAssertGreaterThanOrEqual(examples.count, minimum, "\(file): fewer marked examples than expected")
        for example in examples {
            for failure in try run(example) {
                XCTFail("\(example.file):\(example.line): \(failure)")
            }
        }
    }

    /// Runs one example in a folder of its own; returns what went wrong (empty when nothing).
    func run(_ example: DocumentationExample) throws -> [String] {
        let folder = root.appendingPathComponent("example-\(example.line)-\(UUID().uuidString.prefix(6))")
        let home = folder.appendingPathComponent("home"), workFolder = folder.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { unmountEverything(below: folder.path) }
        let environment = [
            "HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config", "XDG_CACHE_HOME": home.path + "/.cache",
            "XDG_RUNTIME_DIR": folder.path + "/run", "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "PATH": URL(fileURLWithPath: Self.binary).deletingLastPathComponent().path + ":/usr/sbin:/usr/bin:/sbin:/bin",
        ]
        try FileManager.default.createDirectory(atPath: folder.path + "/run", withIntermediateDirectories: true)
        try prepare(example.setups, home: home.path, work: workFolder.path, environment: environment)
        switch example.kind {
        case .script:
            let script = try write("script.sh", "set -e\ncd \(Self.quoted(workFolder.path))\n" + example.body.joined(separator: "\n") + "\n", in: folder)
            let result = try bash(script, environment: environment, timeout: 120)
            return result.status == 0 ? [] : ["the script exited with \(result.status): \(result.stdout)\(result.stderr)"]
        case .transcript:
            let commands = example.commands
            var script = "cd \(Self.quoted(workFolder.path)) || exit 97\n"
            for (index, command) in commands.enumerated() {
                // The status is kept for the next command's `$?` (an example may show `echo $?`).
                script += "{ \(command.line)\n} >'\(folder.path)/\(index).out' 2>&1 </dev/null; "
                    + "status_=$?; echo $status_ >'\(folder.path)/\(index).status'; (exit $status_)\n"
            }
            let path = try write("transcript.sh", script, in: folder)
            let result = try bash(path, environment: environment, timeout: 180)
            var failures: [String] = []
            for (index, command) in commands.enumerated() {
                guard let statusText = try? String(contentsOfFile: "\(folder.path)/\(index).status", encoding: .utf8),
                      let status = Int(statusText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    failures.append("'\(command.line)' did not run (bash: \(result.stderr))")
                    break
                }
                let output = (try? String(contentsOfFile: "\(folder.path)/\(index).out", encoding: .utf8)) ?? ""
                var lines = output.components(separatedBy: "\n")
                if lines.last == "" { lines.removeLast() }
                if command.expectsFailure ? status == 0 : status != 0 {
                    failures.append("'\(command.line)' exited with \(status)\(command.expectsFailure ? ", but the example shows an error" : ""): \(output)")
                } else if let difference = DocumentationExample.difference(expected: command.expected, actual: lines) {
                    failures.append("'\(command.line)' printed what the example does not show (\(difference)); it printed:\n\(output)")
                }
            }
            return failures
        }
    }

    // MARK: - Setups

    /// Always: `~/.config/asicfs/config` pointing at the loopback TSA/OCSP (`tsl = none`, the test
    /// PKI's chain as trust anchors) and at the simulators, `~/testpki` (the PKI, with its
    /// `passphrase` file) and the signer's `me.p12`/`me.pass` in HOME (`.me.pass` there) and in
    /// the folder. Named setups add:
    /// - `files`: the documents the examples use (contract.txt, annex.csv, contract.pdf,
    ///   annex.xlsx, scan.png, minutes.txt, price-list.csv, offer.pdf, c2.conf);
    /// - `contract`: `files`, and contract.asice made of contract.txt and annex.csv;
    /// - `scanned`: the same with scan.png as its third file;
    /// - `pdf`: `files`, and contract.asice made of contract.pdf and annex.xlsx;
    /// - `signed`: `contract`, signed with the test signer (role Chair, Tartu, EE), also copied
    ///   to signed.asice and twice.asice;
    /// - `changed`: `signed`, and changed.asice, its copy with annex.csv changed;
    /// - `phone-signed`: `contract`, signed with Mobile-ID (role Chair) and then Smart-ID;
    /// - `drafts`: unsigned draft.asice, c2.asice, x.asice and unsigned.asice of contract.txt;
    /// - `mounted`: `contract` (or `pdf`), mounted on mnt;
    /// - `root-anchor`: trust-anchors names the test root only, not its issuing CA;
    /// - `no-phones`: the configuration names no Mobile-ID or Smart-ID service.
    func prepare(_ setups: [String], home: String, work: String, environment: [String: String]) throws {
        let shared = try XCTUnwrap(Self.shared, "the shared services")
        let services = try XCTUnwrap(shared.services, shared.failure ?? "the loopback TSA and OCSP did not start")
        let mid = try XCTUnwrap(Self.mobileID, "the Mobile-ID simulator did not start")
        let sid = try XCTUnwrap(Self.smartID, "the Smart-ID simulator did not start")
        let pki = services.pki
        let phones = setups.contains("no-phones") ? "" : """
            mobile-id.url = \(mid.url)
            mobile-id.tls-cert = \(mid.tlsCertificate)
            mobile-id.timeout = 5
            smart-id.url = \(sid.url)
            smart-id.tls-cert = \(sid.tlsCertificate)
            smart-id.timeout = 5

            """
        try write("asicfs/config", """
            tsa-url = \(services.tsaURL)
            tsl = none
            trust-anchors = \(setups.contains("root-anchor") ? pki.root : pki.chain)
            notify = no

            """ + phones, in: URL(fileURLWithPath: home + "/.config"))
        try FileManager.default.createSymbolicLink(atPath: home + "/testpki", withDestinationPath: pki.folder)
        try write("passphrase", TestPKI.passphrase + "\n", in: URL(fileURLWithPath: pki.folder))
        for folder in [home, work] {
            try FileManager.default.copyItem(atPath: pki.signerP12, toPath: folder + "/me.p12")
        }
        try write(".me.pass", TestPKI.passphrase + "\n", in: URL(fileURLWithPath: home))
        try write("me.pass", TestPKI.passphrase + "\n", in: URL(fileURLWithPath: work))
        let workURL = URL(fileURLWithPath: work)
        let wanted = Set(setups)
        let known: Set<String> = ["files", "contract", "scanned", "pdf", "signed", "changed", "phone-signed", "drafts", "mounted", "root-anchor", "no-phones"]
        for unknown in wanted.subtracting(known) { throw ExampleError("unknown setup '\(unknown)'") }
        /// Runs asicfs as the example would: its HOME, its configuration, its folder.
        func asicfsAsExample(_ arguments: [String]) throws {
            let line = "cd \(Self.quoted(work)) && exec \(([Self.binary] + arguments).map(Self.quoted).joined(separator: " "))\n"
            let result = try bash(try write("setup-\(UUID().uuidString.prefix(8)).sh", line, in: URL(fileURLWithPath: home)),
                                  environment: environment, timeout: 120)
            guard result.status == 0 else { throw ExampleError("setup: asicfs \(arguments) failed: \(result.stderr)") }
        }
        if !wanted.isDisjoint(with: known.subtracting(["root-anchor", "no-phones"])) {
            // The sizes the examples show: contract.txt 7951 bytes, annex.csv 57, scan.png 28953, minutes.txt 40.
            let clause = "The parties agree that the goods are delivered within thirty days of the order.\n"
            try write("contract.txt", String(String(repeating: clause, count: 100).prefix(7950)) + "\n", in: workURL)
            try write("annex.csv", "item,quantity,price\nconsulting,14,950.00\ntravel,1,310.50\n", in: workURL)
            try write("contract.pdf", "%PDF-1.4\n% a contract\n", in: workURL)
            try write("annex.xlsx", Data(repeating: 0x50, count: 300), in: workURL)
            try write("scan.png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + compressibleBytes(count: 28953 - 8), in: workURL)
            try write("minutes.txt", "Minutes of the board meeting, 2 May 26.\n", in: workURL)
            try write("price-list.csv", "item,price\npen,1\n", in: workURL)
            try write("offer.pdf", "%PDF-1.4\n% an offer\n", in: workURL)
            try write("c2.conf", "profile = LT # the default\n", in: workURL)
        }
        if wanted.contains("pdf") {
            try asicfsAsExample(["create", "contract.asice", "contract.pdf", "annex.xlsx"])
        } else if !wanted.isDisjoint(with: ["contract", "scanned", "signed", "changed", "phone-signed", "mounted"]) {
            try asicfsAsExample(["create", "contract.asice", "contract.txt", "annex.csv"] + (wanted.contains("scanned") ? ["scan.png"] : []))
        }
        if wanted.contains("drafts") {
            for name in ["draft.asice", "c2.asice", "x.asice", "unsigned.asice"] { try asicfsAsExample(["create", name, "contract.txt"]) }
        }
        if !wanted.isDisjoint(with: ["signed", "changed"]) {
            try asicfsAsExample(["sign", "contract.asice", "--method", "pkcs12", "file=me.p12", "passphrase-file=me.pass",
                                 "role=Chair", "city=Tartu", "country=EE"])
            for copy in ["signed.asice", "twice.asice"] { try FileManager.default.copyItem(atPath: work + "/contract.asice", toPath: work + "/" + copy) }
        }
        if wanted.contains("changed") {
            // annex.csv changed inside the signed container, as a ZIP tool would (Python's zipfile).
            let changed = try Shell.python("""
                import sys, zipfile
                with zipfile.ZipFile(sys.argv[1]) as old, zipfile.ZipFile(sys.argv[2], "w") as new:
                    for info in old.infolist():
                        data = old.read(info)
                        if info.filename == "annex.csv":
                            data = data.replace(b"950.00", b"995.00")
                        new.writestr(info, data)
                """, [work + "/contract.asice", work + "/changed.asice"])
            guard changed.status == 0 else { throw ExampleError("setup: changed.asice: \(changed.stderr)") }
        }
        if wanted.contains("phone-signed") {
            try asicfsAsExample(["sign", "contract.asice", "--method", "mobile-id", "phone=+37200000766", "idcode=60001019906", "role=Chair"])
            try asicfsAsExample(["sign", "contract.asice", "--method", "smart-id", "country=EE", "idcode=30303039914"])
        }
        if wanted.contains("mounted") {
            try FileManager.default.createDirectory(atPath: work + "/mnt", withIntermediateDirectories: true)
            try asicfsAsExample(["mount", "contract.asice", "mnt"])
        }
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// Runs a bash script with posix_spawn and waitpid (Foundation's Process can miss the exit
    /// of a child that forks a daemon, as `asicfs mount` does); killed after `timeout` seconds.
    func bash(_ script: String, environment: [String: String], timeout: Double) throws -> (status: Int32, stdout: String, stderr: String) {
        let base = script + ".run"
        let pid = try Shell.spawn("/bin/bash", [script], stdout: base + ".out", stderr: base + ".err", environment: environment)
        let timedOut = Locked(false)
        let watchdog = DispatchWorkItem {
            timedOut.set(true)
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let status = Shell.wait(pid)
        watchdog.cancel()
        if timedOut.get() { XCTFail("\(script) did not finish within \(timeout) s") }
        return (status, (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
    }

    /// An example that failed half-way may leave mounts behind: take them away.
    func unmountEverything(below folder: String) {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return }
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2 else { continue }
            let point = String(fields[1]).replacingOccurrences(of: "\\040", with: " ")
            if point.hasPrefix(folder + "/") { _ = try? Shell.run("/bin/fusermount3", ["-u", "-z", point]) }
        }
    }
}
