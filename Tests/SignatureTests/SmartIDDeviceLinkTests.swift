import Crypto
import Foundation
@testable import Signing
import TestTools
import XCTest

/// Smart-ID v3 device links: the authCode against the documented vectors (RP API 3.2.3
/// authcode.html, QR certificate-choice example, recomputed in the spec's §6), the link's fixed
/// shape, and its QR code drawn as a PNG that zbarimg reads back as the same link.
final class SmartIDDeviceLinkTests: XCTestCase {
    func documented(_ type: SmartIDDeviceLink.SessionType) throws -> SmartIDDeviceLink {
        var link = try SmartIDDeviceLink(base: "https://smart-id.com/device-link", sessionToken: "wGIrqveE6AuGDATZKmR1mtAZ",
                                         sessionSecret: "B98ODiVCebRedSwdTk51zFSaGYyHtY1H2A0ocAi3/Ps=", sessionType: type,
                                         schemeName: "smart-id", relyingPartyName: "DEMO")
        link.brokeredRelyingPartyName = "Example RP"
        return link
    }

    func testQRCertificateChoiceLinkMatchesTheDocumentedAuthCode() throws {
        let link = try documented(.cert).qrLink(elapsedSeconds: 22)
        XCTAssertEqual(link, "https://smart-id.com/device-link?deviceLinkType=QR&elapsedSeconds=22&sessionToken=wGIrqveE6AuGDATZKmR1mtAZ"
            + "&sessionType=cert&version=1.0&lang=eng&authCode=T5pDDPAjoMS0byqS-FoaWVjlubODXoCCF4XDB4HeYNo")
    }

    func testEachSecondGivesAnotherAuthCode() throws {
        let link = try documented(.cert)
        let codes = try (0..<5).map { try link.qrLink(elapsedSeconds: $0).components(separatedBy: "&authCode=")[1] }
        XCTAssertEqual(Set(codes).count, 5)
        XCTAssertTrue(codes.allSatisfy { !$0.contains("=") && !$0.contains("+") && !$0.contains("/") && $0.count == 43 })
    }

    func testMalformedServiceValuesAreRefused() {
        XCTAssertThrowsError(try SmartIDDeviceLink(base: "http://smart-id.com/device-link", sessionToken: "wGIrqveE6AuGDATZKmR1mtAZ",
                                                   sessionSecret: "B98ODiVCebRedSwdTk51zFSaGYyHtY1H2A0ocAi3/Ps=",
                                                   sessionType: .cert, schemeName: "smart-id", relyingPartyName: "DEMO"))
        XCTAssertThrowsError(try SmartIDDeviceLink(base: "https://smart-id.com/device-link", sessionToken: "wGIrqveE6AuG&x=1ATZKmR1mtAZ",
                                                   sessionSecret: "B98ODiVCebRedSwdTk51zFSaGYyHtY1H2A0ocAi3/Ps=",
                                                   sessionType: .cert, schemeName: "smart-id", relyingPartyName: "DEMO"))
    }

    func testThePNGOfTheQRCodeReadsBackAsTheLink() throws {
        let link = try documented(.sign).qrLink(elapsedSeconds: 7)
        let png = PNGImage.qrCode(try QRCode(link))
        let file = NSTemporaryDirectory() + "asicfs-qr-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(png).write(to: URL(fileURLWithPath: file))
        let output = try Shell.run("/usr/bin/zbarimg", ["--quiet", "--raw", file])
        XCTAssertEqual(output.status, 0, output.stderr)
        XCTAssertEqual(output.stdout.trimmingCharacters(in: .newlines), link)
    }

    func testTerminalTextIsHalfBlocksWithAQuietZone() throws {
        let code = try QRCode("https://smart-id.com/device-link?x")
        let lines = QRTerminalText.lines(code)
        XCTAssertEqual(lines.count, (code.size + 4 + 1) / 2)
        XCTAssertTrue(lines.allSatisfy { $0.count == code.size + 4 })
        XCTAssertTrue(lines.allSatisfy { $0.allSatisfy { "█▀▄ ".contains($0) } })
        // The quiet zone (light) is drawn: the first line is all full blocks.
        XCTAssertEqual(Set(lines[0]), ["█"])
    }
}
