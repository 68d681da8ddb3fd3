import Crypto
import Foundation
import TestTools
import XCTest
@testable import CDOC

/// CDOC 1.0 and 1.1 written by asicfs and read back, for every recipient kind and one or several files.
final class CDOC1RoundTripTests: CDOCTestCase {
    func testCDOC11RoundTripsForRSAAndBothCurvesWithOneAndSeveralFiles() throws {
        for kind in CDOCTestKey.Kind.allCases {
            let recipient = try key(kind, "recipient-\(kind.rawValue)")
            for files in [[("one.txt", randomBytes(1000))], [("a.bin", randomBytes(70_000)), ("b.txt", Array("b".utf8)), ("empty", [])]] {
                let file = try encrypt(files, for: [recipient], format: .cdoc11)
                let opened = try reader(file)
                XCTAssertEqual(opened.format, .cdoc11)
                XCTAssertEqual(opened.recipients.map(\.kind), [kind == .rsa ? .rsaCertificate : .ecCertificate])
                XCTAssertEqual(opened.listedFiles.map(\.name), files.map(\.0))
                XCTAssertEqual(opened.listedFiles.map(\.size), files.map { Int64($0.1.count) })
                let sink = try decrypt(file, with: recipient)
                XCTAssertEqual(sink.files.map(\.name), files.map(\.0), "\(kind)")
                XCTAssertEqual(sink.files.map(\.bytes), files.map(\.1), "\(kind)")
            }
        }
    }

    func testCDOC10RoundTripsForRSAWithOneAndSeveralFilesIncludingBlockAlignedOnes() throws {
        let recipient = try key(.rsa, "rsa10")
        for files in [[("sixteen", Array(repeating: UInt8(7), count: 16))], [("x", [0x00, 0x01]), ("empty.txt", []), ("y", randomBytes(4097))]] {
            let file = try encrypt(files, for: [recipient], format: .cdoc10)
            let opened = try reader(file)
            XCTAssertEqual(opened.format, .cdoc10)
            let sink = try decrypt(file, with: recipient)
            XCTAssertEqual(sink.files.map(\.name), files.map(\.0))
            XCTAssertEqual(sink.files.map(\.bytes), files.map(\.1))
        }
    }

    /// The payload is one base64 text node, here 16 MB (libxml2 limits single nodes to 10 MB without
    /// XML_PARSE_HUGE in some versions; SafeXML's largeText asks for it).
    func testATwelveMegabyteFileRoundTrips() throws {
        let recipient = try key(.p384, "large")
        let block = randomBytes(1 << 16)
        let bytes = (0..<192).flatMap { index in block.map { $0 ^ UInt8(truncatingIfNeeded: index) } }
        let file = try encrypt([("large.bin", bytes)], for: [recipient])
        XCTAssertEqual(try decrypt(file, with: recipient).files.first?.bytes == bytes, true)
    }

    func testCDOC10RefusesAnECRecipient() throws {
        let recipient = try key(.p384, "ec10")
        XCTAssertThrowsError(try encrypt([("a", [1])], for: [recipient], format: .cdoc10)) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .unsupported)
        }
    }

    func testEveryRecipientOfASeveralRecipientFileOpensIt() throws {
        let keys = [try key(.rsa, "first"), try key(.p256, "second"), try key(.p384, "third")]
        let file = try encrypt([("shared.txt", Array("for three".utf8))], for: keys)
        XCTAssertEqual(try reader(file).recipients.map(\.displayName).count, 3)
        for recipient in keys {
            XCTAssertEqual(try decrypt(file, with: recipient).files.map(\.bytes), [Array("for three".utf8)])
        }
    }

    func testAKeyWithoutItsCertificateMatchesByPublicKey() throws {
        let recipient = try key(.p384, "bare")
        let file = try encrypt([("a.txt", [1, 2, 3])], for: [recipient])
        let sink = MemorySink()
        try reader(file).decrypt(with: .key(try recipientKey(recipient, withCertificate: false)), into: sink)
        XCTAssertEqual(sink.files.map(\.bytes), [[1, 2, 3]])
    }

    func testTwoCertificatesOfTheSameKeyAreAClearErrorNamingThem() throws {
        let recipient = try key(.rsa, "first-certificate")
        let reissued = try recipient.reissued(name: "second-certificate", in: folder)
        let file = try encrypt([("a.txt", [1])], for: [recipient, reissued])
        let sink = MemorySink()
        // A bare key matches both by its public key; neither is chosen for the person.
        XCTAssertThrowsError(try reader(file).decrypt(with: .key(try recipientKey(recipient, withCertificate: false)), into: sink)) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .severalRecipients)
            XCTAssertTrue("\($0)".contains("CN=first-certificate") && "\($0)".contains("CN=second-certificate"), "\($0)")
        }
        XCTAssertTrue(sink.files.isEmpty)
    }

    func testOneCertificateListedTwiceIsOneRecipient() throws {
        let recipient = try key(.p256, "twice")
        let file = try encrypt([("a.txt", [9])], for: [recipient, recipient])
        XCTAssertEqual(try decrypt(file, with: recipient).files.map(\.bytes), [[9]])
    }

    func testASecretOrPasswordCannotOpenACDOC1File() throws {
        let file = try encrypt([("a.txt", [1])], for: [try key(.rsa, "r")])
        XCTAssertThrowsError(try reader(file).decrypt(with: .password(SecretBytes(Array("pw".utf8)), label: nil), into: MemorySink())) {
            XCTAssertEqual(($0 as? CDOCError)?.code, .noRecipient)
        }
    }
}
