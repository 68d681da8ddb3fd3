import Foundation
import TestTools
import XCTest

/// The Estonian ID-card end to end: the real binary, pcscd with vpcd's virtual readers, the card
/// emulator of contrib/card (IDEMIA T=1 and T=0, Thales, contactless with PACE), the loopback
/// test PKI, TSA and OCSP.
final class IDCardTests: CLITestCase {
    nonisolated(unsafe) static var shared: SharedCardReaders!
    static var readers: VirtualCardReaders? { shared.readers }
    static var setUpFailure: String? { shared.failure }

    override class func setUp() { shared = SharedCardReaders(label: "cli-idcard") }
    override class func tearDown() { shared.stop() }

    var services: TestServices { Self.shared.services.services! }
    var readers: VirtualCardReaders { Self.readers! }
    var pki: String { services.pki.folder }
    var settings: [String] {
        // The card has no CA certificates (a PKCS#12 file may): the issuing CA comes from the
        // trust anchors here, as it comes from the trusted list in real use.
        ["-o", "tsa-url=\(services.tsaURL)", "-o", "tsl=none", "-o", "trust-anchors=\(services.pki.chain)",
         "-o", "cache-dir=\(Self.shared.folder)/cache", "-o", "pinentry=none"]
    }
    /// The APDU log of the card in reader 0 (headers and status words, never data).
    var log: String { path("apdu.log") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        if let failure = Self.setUpFailure { throw TestSetupError("the virtual card readers did not start: \(failure)") }
    }

    override func tearDownWithError() throws {
        try? readers.remove(reader: 0)
        try? readers.remove(reader: 1)
        try super.tearDownWithError()
    }

    func card(_ configure: (inout VirtualCard) -> Void = { _ in }) -> VirtualCard {
        var card = VirtualCard(pki: pki, state: path("card-\(UUID().uuidString.prefix(6)).json"))
        configure(&card)
        return card
    }

    func unsignedContainer() throws -> String {
        let files = [try write("contract.txt", "the contract\n"), try write(Self.umlautName, "umlauts\n")]
        assertSuccess(try asicfs(["create", "doc.asice"] + files))
        return path("doc.asice")
    }

    /// asicfs with secrets on descriptors (3, 4, ...): each text is one line on its own descriptor,
    /// read from a file by the shell, so no secret is on the command line or in the environment.
    func asicfs(_ arguments: [String], secrets: [String]) throws -> RunResult {
        var redirections = ""
        for (index, secret) in secrets.enumerated() {
            redirections += " \(index + 3)<'\(try write("secret-\(UUID().uuidString.prefix(8))", secret + "\n"))'"
        }
        return try runTool("/bin/bash", ["-c", "exec \"$@\"" + redirections, "bash", Self.binary] + arguments)
    }

    func commands(_ ins: String) throws -> Int {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix(">") && $0.split(separator: " ").dropFirst(2).first == Substring(ins) }.count
    }

    func pins() throws -> [String: [String: Any]] {
        let result = try asicfs(["card", "pins", "--json"] + settings)
        assertSuccess(result)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any])
        XCTAssertEqual(object["command"] as? String, "card pins")
        return try XCTUnwrap(object["pins"] as? [String: Any]).compactMapValues { $0 as? [String: Any] }
    }

    func triesLeft(_ secret: String) throws -> Int? { try pins()[secret]?["tries_left"] as? Int }

    // MARK: - Reading the card

    func testStatusListsEveryReaderAndBothCardKinds() throws {
        try readers.insert(card(), reader: 0)
        try readers.insert(card {
            $0.kind = .thales
            $0.signCertificate = pki + "/signer2.pem"; $0.signKey = pki + "/signer2.key"
            $0.authCertificate = pki + "/card-auth2.pem"; $0.authKey = pki + "/card-auth2.key"
            $0.surname = "MÄNNIK"; $0.givenNames = "MARI-LIIS"; $0.personalCode = "49002124277"; $0.documentNumber = "ET0000001"
        }, reader: 1)
        let text = try asicfs(["card", "status"] + settings)
        assertSuccess(text)
        XCTAssertTrue(text.stdout.contains("Virtual PCD 00 00: Estonian ID-card (IDEMIA)\n  holder           JÕEORG, JAAK-KRISTJAN\n  personal code    38001085718\n  document         AB0123456\n"), text.stdout)
        XCTAssertTrue(text.stdout.contains("Virtual PCD 00 01: Estonian ID-card (Thales)\n  holder           MÄNNIK, MARI-LIIS\n  personal code    49002124277\n"), text.stdout)

        let json = try asicfs(["card", "status", "--json"] + settings)
        assertSuccess(json)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        let listed = try XCTUnwrap(object["readers"] as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["name"] as? String }, VirtualCardReaders.names)
        let first = try XCTUnwrap(listed[0]["card"] as? [String: Any])
        XCTAssertEqual(first["kind"] as? String, "IDEMIA")
        XCTAssertEqual(first["surname"] as? String, "JÕEORG")
        XCTAssertEqual(first["given_names"] as? String, "JAAK-KRISTJAN")
        XCTAssertEqual(first["personal_code"] as? String, "38001085718")
        XCTAssertEqual(first["document_number"] as? String, "AB0123456")
        let expiry = try XCTUnwrap(first["expiry"] as? String)
        XCTAssertNotNil(expiry.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression), expiry)
        XCTAssertEqual((listed[1]["card"] as? [String: Any])?["kind"] as? String, "Thales")

        // reader= picks by a part of the name; an empty reader is listed with no card.
        try readers.remove(reader: 1)
        let one = try asicfs(["card", "status", "reader=00 01"] + settings)
        assertSuccess(one)
        XCTAssertEqual(one.stdout, "Virtual PCD 00 01: no card\n")
        let emptyJSON = try asicfs(["card", "status", "--json", "reader=00 01"] + settings)
        XCTAssertTrue(emptyJSON.stdout.contains("\"card\" : null"), emptyJSON.stdout)
    }

    func testCertificatesArePrintedExactlyAsOnTheCard() throws {
        try readers.insert(card(), reader: 0)
        let pem = try asicfs(["card", "certs", "--pem"] + settings)
        assertSuccess(pem)
        let expected = try String(contentsOfFile: pki + "/card-auth.pem", encoding: .utf8) + String(contentsOfFile: pki + "/signer.pem", encoding: .utf8)
        XCTAssertEqual(pem.stdout, expected)
        let text = try asicfs(["card", "certs"] + settings)
        assertSuccess(text)
        XCTAssertTrue(text.stdout.hasPrefix("authentication certificate\n  subject          CN=JÕEORG"), text.stdout)
        XCTAssertTrue(text.stdout.contains("signing certificate\n"), text.stdout)
        let json = try asicfs(["card", "certs", "--json"] + settings)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        XCTAssertEqual(((object["certificates"] as? [String: Any])?["signing"] as? [String: Any])?["pem"] as? String,
                       try String(contentsOfFile: pki + "/signer.pem", encoding: .utf8))
        XCTAssertEqual(try asicfs(["card", "certs", "--json", "--pem"] + settings).status, 2)
    }

    // MARK: - Signing

    func testSigningWithTheIDEMIACardIsValidWithOneVerifyAndOnePSO() throws {
        try readers.insert(card(), reader: 0, log: log)
        let container = try unsignedContainer()
        let signed = try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"])
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID\n")
        XCTAssertEqual(try commands("20"), 1, "one VERIFY")
        XCTAssertEqual(try commands("2A"), 1, "one PSO")
        let verified = try asicfs(["verify", container] + settings)
        assertSuccess(verified)
        XCTAssertTrue(verified.stdout.contains("method           ECDSA with SHA-384"), verified.stdout)
        XCTAssertTrue(verified.stdout.hasSuffix("Result: VALID\n"), verified.stdout)
        XCTAssertFalse(try String(contentsOfFile: log, encoding: .utf8).contains("3132333435"), "the log holds no PIN")
    }

    func testSigningWithAT0CardAndWithTheThalesCard() throws {
        try readers.insert(card { $0.t0 = true }, reader: 0)
        let first = try unsignedContainer()
        assertSuccess(try asicfs(["sign", first, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]))
        assertSuccess(try asicfs(["verify", first] + settings))
        try readers.remove(reader: 0)

        try readers.insert(card { $0.kind = .thales }, reader: 0, log: log)
        let second = path("thales.asice")
        assertSuccess(try asicfs(["create", second, try write("t.txt", "thales\n")]))
        let signed = try asicfs(["sign", second, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"])
        assertSuccess(signed)
        XCTAssertTrue(signed.stdout.hasSuffix(", VALID\n"), signed.stdout)
        XCTAssertEqual(try commands("20"), 1, "one VERIFY")
        XCTAssertEqual(try commands("2A"), 2, "PSO:HASH and PSO:COMPUTE DIGITAL SIGNATURE")
        assertSuccess(try asicfs(["verify", second] + settings))
    }

    func testPyasiceAcceptsAnIDCardSignature() throws {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["ASICFS_PYASICE_VENV"]
            ?? ((environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")) + "/asicfs/pyasice-venv")
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else {
            return XCTFail("pyasice is not installed at \(venv): run scripts/setup-pyasice.sh (make test does)")
        }
        try readers.insert(card(), reader: 0)
        let container = try unsignedContainer()
        // pyasice verifies only RSA-signed OCSP responses: the test PKI's RSA responder.
        assertSuccess(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3", "-o", "ocsp-url=\(services.ocspRSAURL)"] + settings,
                                 secrets: ["12345"]))
        let checker = Self.packageRoot.path + "/Tests/SignatureTests/Interop/pyasice_check.py"
        let result = try runTool(venv + "/bin/python", [checker, container])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("ALL OK\n"), result.stdout)
    }

    // MARK: - PINs

    func testWrongPINsCountDownBlockAndTheContainerStaysAsItWas() throws {
        try readers.insert(card(), reader: 0, log: log)
        let container = try unsignedContainer()
        let before = try read(container)
        let sign = ["sign", container, "--method", "id-card", "pin-fd=3"] + settings
        assertFailure(try asicfs(sign, secrets: ["99999"]), mentions: ["wrong PIN2, 2 tries left"])
        XCTAssertEqual(try triesLeft("pin2"), 2)
        assertFailure(try asicfs(sign, secrets: ["99998"]), mentions: ["wrong PIN2, 1 try left"])
        assertFailure(try asicfs(sign, secrets: ["99997"]), mentions: ["PIN2 is blocked; unblock it with the PUK"])
        XCTAssertEqual(try pins()["pin2"]?["blocked"] as? Bool, true)
        let verifies = try commands("20")
        // Blocked: refused before any PIN is asked or sent.
        let started = Date()
        assertFailure(try asicfs(sign, secrets: ["12345"]), mentions: ["PIN2 is blocked; unblock it with the PUK"])
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        XCTAssertEqual(try commands("20"), verifies, "no VERIFY for a blocked PIN")
        XCTAssertEqual(try read(container), before, "the container is byte-identical")

        // The PUK sets a new PIN2; the old one no longer works, the new one signs.
        assertSuccess(try asicfs(["card", "unblock", "pin2", "puk-fd=3", "new-fd=4"] + settings, secrets: ["17258403", "54321"]))
        XCTAssertEqual(try triesLeft("pin2"), 3)
        assertFailure(try asicfs(sign, secrets: ["12345"]), mentions: ["wrong PIN2, 2 tries left"])
        assertSuccess(try asicfs(sign, secrets: ["54321"]))
        XCTAssertEqual(try triesLeft("pin2"), 3, "a right PIN resets the counter")
    }

    func testChangingPINsAndThePUK() throws {
        try readers.insert(card(), reader: 0)
        let wrong = try asicfs(["card", "change-pin", "pin1", "old-fd=3", "new-fd=4"] + settings, secrets: ["0000", "4321"])
        assertFailure(wrong, mentions: ["wrong PIN1, 2 tries left"])
        assertSuccess(try asicfs(["card", "change-pin", "pin1", "old-fd=3", "new-fd=4"] + settings, secrets: ["1234", "4321"]))
        XCTAssertEqual(try triesLeft("pin1"), 3)
        assertSuccess(try asicfs(["card", "change-pin", "puk", "old-fd=3", "new-fd=4"] + settings, secrets: ["17258403", "87654321"]))
        // Unblocking a PIN that is not blocked works too and leaves its tries alone.
        assertFailure(try asicfs(["card", "change-pin", "pin2", "old-fd=3", "new-fd=4"] + settings, secrets: ["11111", "22222"]),
                      mentions: ["wrong PIN2, 2 tries left"])
        assertSuccess(try asicfs(["card", "unblock", "pin1", "puk-fd=3", "new-fd=4"] + settings, secrets: ["87654321", "1234"]))
        XCTAssertEqual(try triesLeft("pin2"), 2, "unblocking PIN1 does not touch PIN2")
        // Form checks happen before the card sees anything.
        assertFailure(try asicfs(["card", "change-pin", "pin2", "old-fd=3", "new-fd=4"] + settings, secrets: ["12345", "12"]),
                      mentions: ["new PIN2 must be 5 to 12 digits long"])
        XCTAssertEqual(try triesLeft("pin2"), 2)
        assertFailure(try asicfs(["card", "unblock", "puk"] + settings), status: 2, mentions: ["pin1, pin2"])

        try readers.remove(reader: 0)
        try readers.insert(card { $0.kind = .thales }, reader: 0)
        assertFailure(try asicfs(["card", "change-pin", "puk", "old-fd=3", "new-fd=4"] + settings, secrets: ["17258403", "87654321"]),
                      mentions: ["the PUK of a Thales ID-card cannot be changed"])
        assertSuccess(try asicfs(["card", "change-pin", "pin2", "old-fd=3", "new-fd=4"] + settings, secrets: ["12345", "24680"]))
        assertSuccess(try asicfs(["card", "unblock", "pin2", "puk-fd=3", "new-fd=4"] + settings, secrets: ["17258403", "13579"]))
        let pins = try self.pins()
        XCTAssertEqual(pins["pin2"]?["tries_left"] as? Int, 3)
        XCTAssertEqual(pins["pin2"]?["max_tries"] as? Int, 3)
    }

    /// OpenSC's PKCS#11 module (its EstEID 2018 driver) reads the virtual card like a real one:
    /// a fidelity check of the emulator, and the pkcs11 method signing with an ID-card.
    func testOpenSCsPKCS11ModuleReadsAndSignsWithTheVirtualCard() throws {
        try readers.insert(card(), reader: 0, log: log)
        let module = "module=/usr/lib/x86_64-linux-gnu/opensc-pkcs11.so"
        let listed = try asicfs(["tokens", module, "--json"] + settings)
        assertSuccess(listed)
        XCTAssertTrue(listed.stdout.contains("serialNumber=PNOEE-38001085718"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("\"label\" : \"JÕEORG,JAAK-KRISTJAN,... (PIN2)\""), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("\"can_sign\" : true"), listed.stdout)
        let container = try unsignedContainer()
        let signed = try asicfs(["sign", container, "--method", "pkcs11", module, "pin-fd=3"] + settings, secrets: ["12345"])
        assertSuccess(signed)
        XCTAssertEqual(signed.stdout, "signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0 in META-INF/signatures0.xml, VALID\n")
        XCTAssertEqual(try commands("2A"), 1, "one PSO through OpenSC")
        assertSuccess(try asicfs(["verify", container] + settings))
    }

    // MARK: - Errors

    func testCardPulledAtVerifyOrAtThePSOAndSignsAgainOnceBack() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        for ins in ["20", "2A"] {
            let state = path("pulled-\(ins).json")
            try readers.insert(card { $0.state = state; $0.pullOn = ins }, reader: 0)
            let started = Date()
            let pulled = try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"])
            assertFailure(pulled, mentions: ["the card was removed"])
            XCTAssertLessThan(Date().timeIntervalSince(started), 30)
            XCTAssertEqual(try read(container), before)
            try readers.remove(reader: 0)
            try readers.insert(card { $0.state = state }, reader: 0)
            XCTAssertEqual(try triesLeft("pin2"), 3, "the card answers again once re-inserted")
            try readers.remove(reader: 0)
        }
        try readers.insert(card(), reader: 0)
        assertSuccess(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]))
    }

    func testNoCardTwoCardsAndTheReaderSelection() throws {
        let container = try unsignedContainer()
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["insert the ID-card", "Virtual PCD 00 00", "Virtual PCD 00 01"])
        assertFailure(try asicfs(["card", "pins", "reader=nosuch"] + settings), mentions: ["no reader matches 'nosuch'"])
        try readers.insert(card(), reader: 0)
        try readers.insert(card {
            $0.signCertificate = pki + "/signer2.pem"; $0.signKey = pki + "/signer2.key"
            $0.authCertificate = pki + "/card-auth2.pem"; $0.authKey = pki + "/card-auth2.key"
        }, reader: 1)
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["several readers", "Virtual PCD 00 00", "Virtual PCD 00 01", "reader=NAME"])
        let signed = try asicfs(["sign", container, "--method", "id-card", "reader=00 01", "pin-fd=3"] + settings, secrets: ["12345"])
        assertSuccess(signed)
        XCTAssertFalse(signed.stdout.contains("JÕEORG"), "the card in reader 00 01 signed: \(signed.stdout)")
    }

    func testACardThatIsNoIDCardIsNamedByItsATR() throws {
        // A Latvian eID card (IDEMIA too, but "12 42 8F" where Estonian cards have "12 23 3F").
        try readers.insert(card { $0.atr = "3BDB960080B1FE451F830012428F536549440F900020" }, reader: 0, log: log)
        let container = try unsignedContainer()
        let before = try read(container)
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["the card in Virtual PCD 00 00 is not an Estonian ID-card (ATR 3B DB 96 00 80 B1 FE 45 1F 83 00 12 42 8F"])
        XCTAssertEqual(try read(container), before)
        let status = try asicfs(["card", "status"] + settings)
        assertSuccess(status)
        XCTAssertTrue(status.stdout.hasPrefix("Virtual PCD 00 00: a card that is not an Estonian ID-card (ATR 3B DB 96 00"), status.stdout)
        XCTAssertFalse(try String(contentsOfFile: log, encoding: .utf8).contains("\n>"), "nothing was sent to that card")
    }

    func testExpiredAndRevokedSigningCertificatesAreRefusedBeforeThePIN() throws {
        let container = try unsignedContainer()
        let before = try read(container)
        try readers.insert(card { $0.signCertificate = pki + "/expired.pem"; $0.signKey = pki + "/expired.key" }, reader: 0, log: log)
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["expired on 2023-01-01"])
        XCTAssertEqual(try commands("20"), 0, "no PIN was sent")
        try readers.remove(reader: 0)
        try readers.insert(card { $0.signCertificate = pki + "/revoked.pem"; $0.signKey = pki + "/revoked.key" }, reader: 0)
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["revoked"])
        XCTAssertEqual(try read(container), before)
    }

    func fakePinentry(pin: String?) throws -> (program: String, log: String) {
        let program = path("fake-pinentry-\(UUID().uuidString.prefix(6))")
        try FakePinentry.write(to: program, pin: pin, log: path("pinentry.log"))
        return (program, path("pinentry.log"))
    }

    func testPinentryAsksWithTheHolderAndCancellingSendsNoVerify() throws {
        try readers.insert(card(), reader: 0, log: log)
        let container = try unsignedContainer()
        let before = try read(container)
        let cancelling = try fakePinentry(pin: nil)
        let cancelled = try asicfs(["sign", container, "--method", "id-card"] + settings + ["-o", "pinentry=\(cancelling.program)"])
        assertFailure(cancelled, mentions: ["PIN2 entry was cancelled"])
        XCTAssertEqual(try commands("20"), 0, "no VERIFY after a cancel")
        XCTAssertEqual(try read(container), before)

        try FileManager.default.removeItem(atPath: cancelling.log)
        let answering = try fakePinentry(pin: "12345")
        let signed = try asicfs(["sign", container, "--method", "id-card"] + settings + ["-o", "pinentry=\(answering.program)"])
        assertSuccess(signed)
        let transcript = try String(contentsOfFile: answering.log, encoding: .utf8)
        XCTAssertTrue(transcript.contains("SETDESC Sign with the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718)"), transcript)
        XCTAssertTrue(transcript.contains("SETPROMPT PIN2:"), transcript)
        XCTAssertTrue(transcript.contains("GETPIN"), transcript)
        XCTAssertFalse(transcript.contains("12345"), "the PIN is in neither environment nor command line: \(transcript)")
        XCTAssertEqual(try commands("20"), 1)
    }

    /// No pinentry, no PIN pad: PIN2 is asked on the terminal with echo off.
    func testPIN2OnTheTerminalWithEchoOff() throws {
        try readers.insert(card(), reader: 0, log: log)
        let container = try unsignedContainer()
        let output = try onTerminal(["sign", container, "--method", "id-card"] + settings, script: [("PIN2: ", "12345\n")])
        XCTAssertTrue(output.contains("Sign with the ID-card of JAAK-KRISTJAN JÕEORG (PNOEE-38001085718)"), output)
        XCTAssertTrue(output.contains("ECHO-AT-PROMPT 0"), output)
        XCTAssertTrue(output.contains("signed: JÕEORG,JAAK-KRISTJAN,38001085718 S0"), output)
        XCTAssertFalse(output.contains("12345"), "the PIN was echoed: \(output)")
        XCTAssertTrue(output.contains("ECHO-AFTER 1"), output)
        XCTAssertTrue(output.hasSuffix("EXIT 0\n"), output)
        XCTAssertEqual(try commands("20"), 1)
    }

    func testContactlessCardNeedsTheRightCAN() throws {
        try readers.insert(card { $0.can = "123456" }, reader: 0, log: log)
        let status = try asicfs(["card", "status"] + settings)
        assertSuccess(status)
        XCTAssertTrue(status.stdout.contains("Virtual PCD 00 00: a contactless card (give can=DIGITS to read it)"), status.stdout)
        XCTAssertTrue(status.stdout.contains("CAN"), status.stdout)
        let container = try unsignedContainer()
        let before = try read(container)
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["CAN"])
        assertFailure(try asicfs(["sign", container, "--method", "id-card", "can=654321", "pin-fd=3"] + settings, secrets: ["12345"]),
                      mentions: ["CAN"])
        XCTAssertEqual(try commands("20"), 0, "no PIN is tried with a wrong CAN")
        XCTAssertEqual(try read(container), before)

        let read = try asicfs(["card", "status", "can=123456"] + settings)
        assertSuccess(read)
        XCTAssertTrue(read.stdout.contains("Estonian ID-card (IDEMIA, contactless)\n  holder           JÕEORG, JAAK-KRISTJAN"), read.stdout)
        assertFailure(try asicfs(["card", "pins"] + settings), mentions: ["CAN"])
        let signed = try asicfs(["sign", container, "--method", "id-card", "can=123456", "pin-fd=3"] + settings, secrets: ["12345"])
        assertSuccess(signed)
        XCTAssertTrue(signed.stdout.hasSuffix(", VALID\n"), signed.stdout)
        assertSuccess(try asicfs(["verify", container] + settings))
    }
}
