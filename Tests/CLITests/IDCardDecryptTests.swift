import Foundation
import TestTools
import XCTest

/// `asicfs decrypt --method id-card` end to end: the real binary, pcscd with vpcd's virtual
/// readers and the card emulator, files encrypted by `asicfs encrypt` for the card's
/// authentication certificate (the test PKI's), in CDOC 1.1 and CDOC2.
final class IDCardDecryptTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    override class func setUp() { shared = SharedCardReaders(label: "cli-cdoc-idcard") }
    override class func tearDown() { shared.stop() }

    var readers: VirtualCardReaders { Self.shared.readers! }
    var pki: String { Self.shared.services.services!.pki.folder }
    var log: String { path("apdu.log") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        if let failure = Self.shared.failure { throw TestSetupError("the virtual card readers did not start: \(failure)") }
    }

    override func tearDownWithError() throws {
        try? readers.remove(reader: 0)
        try super.tearDownWithError()
    }

    /// asicfs with PIN1 on descriptor 3, read from a file by the shell: never in argv or the environment.
    func decrypt(_ arguments: [String], pin: String) throws -> RunResult {
        let file = try write("pin-\(UUID().uuidString.prefix(8))", pin + "\n")
        return try runTool("/bin/bash", ["-c", "exec \"$@\" 3<'\(file)'", "bash", Self.binary, "decrypt"] + arguments
            + ["--method", "id-card", "pin-fd=3", "-o", "pinentry=none"])
    }

    func encryptedForTheCard() throws -> (files: [String], containers: [String]) {
        let files = [try write("kiri.txt", "Tere, Jaak-Kristjan!\n"), path("leping.bin")]
        try writeRandomFile(files[1], size: 150_000)
        var containers: [String] = []
        for format in ["cdoc", "cdoc2"] {
            let out = path("for-card.\(format)")
            assertSuccess(try asicfs(["encrypt", out] + files + ["--recipient", pki + "/card-auth.pem", "--format", format]))
            containers.append(out)
        }
        return (files, containers)
    }

    func assertDecrypted(_ folder: String, _ files: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let names = files.map { URL(fileURLWithPath: $0).lastPathComponent }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), names.sorted(), file: file, line: line)
        for (name, original) in zip(names, files) {
            XCTAssertEqual(try read(folder + "/" + name), try read(original), name, file: file, line: line)
        }
    }

    func commands(ins: String, p1p2: String) -> Int {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ")
            return line.hasPrefix(">") && fields.count > 4 && fields[2] == Substring(ins) && "\(fields[3]) \(fields[4])" == p1p2
        }.count
    }

    /// Contact: PIN1 from a descriptor; the card does one key agreement per file, byte-exact
    /// results, and the PIN is in no output.
    func testContactCardDecryptsCDOC11AndCDOC2EncryptedForItsAuthenticationCertificate() throws {
        let (files, containers) = try encryptedForTheCard()
        for (index, container) in containers.enumerated() {
            try readers.insert(VirtualCard(pki: pki, state: path("card-\(index).json")), reader: 0, log: log)
            let folder = path("plain-\(index)")
            let result = try decrypt([container, "-d", folder], pin: "1234")
            assertSuccess(result)
            XCTAssertFalse((result.stdout + result.stderr).contains("1234"))
            try assertDecrypted(folder, files)
            // One VERIFY of PIN1, one MSE:SET and one PSO:DECIPHER (the key agreement).
            XCTAssertEqual(commands(ins: "20", p1p2: "00 01"), 1, container)
            XCTAssertEqual(commands(ins: "2A", p1p2: "80 86"), 1, container)
            try readers.remove(reader: 0)
            try? FileManager.default.removeItem(atPath: log)
        }
    }

    /// A wrong PIN1 is one line, and nothing is written.
    func testWrongPINWritesNothing() throws {
        let (_, containers) = try encryptedForTheCard()
        try readers.insert(VirtualCard(pki: pki, state: path("card.json")), reader: 0)
        let folder = path("plain")
        assertFailure(try decrypt([containers[1], "-d", folder], pin: "9999"), mentions: ["PIN1"])
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [], [])
    }

    /// Contactless: the CAN opens the card (PACE), for both formats.
    func testContactlessWithTheCAN() throws {
        let (files, containers) = try encryptedForTheCard()
        var card = VirtualCard(pki: pki, state: path("card.json"))
        card.can = "123456"
        try readers.insert(card, reader: 0)
        assertFailure(try decrypt([containers[0], "-d", path("none")], pin: "1234"), mentions: ["can=DIGITS"])
        for (index, container) in containers.enumerated() {
            let folder = path("plain-\(index)")
            assertSuccess(try decrypt([container, "-d", folder, "can=123456"], pin: "1234"))
            try assertDecrypted(folder, files)
        }
    }
}
