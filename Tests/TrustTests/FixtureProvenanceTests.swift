import Crypto
import Foundation
import TestTools
import XCTest

/// The certificates in TslAsiceCertificates.swift are tsl.asice's own.
final class FixtureProvenanceTests: XCTestCase {
    func testEmbeddedCertificatesComeFromTslAsice() throws {
        let read = try Shell.python("""
            import sys, zipfile
            sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('META-INF/signatures0.xml').decode())
            """, [Corpus.path("tsl.asice")])
        XCTAssertEqual(read.status, 0, read.stderr)
        let xml = read.stdout.filter { !$0.isWhitespace }
        for certificate in [TslAsice.signer, TslAsice.issuingCA, TslAsice.ocspResponder] {
            XCTAssertTrue(xml.contains(Data(certificate.der).base64EncodedString()), certificate.commonName ?? "")
        }
        // The TSA certificate is inside the time-stamp token.
        let token = try XCTUnwrap(xml.range(of: "EncapsulatedTimeStamp").flatMap { start -> Data? in
            let after = xml[start.upperBound...]
            guard let open = after.firstIndex(of: ">"), let close = after.firstIndex(of: "<") else { return nil }
            return Data(base64Encoded: String(after[after.index(after: open)..<close]))
        })
        XCTAssertNotNil(token.range(of: Data(TslAsice.timeStampAuthority.der)))
    }
}
