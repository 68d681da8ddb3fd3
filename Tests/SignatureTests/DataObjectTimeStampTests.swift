import ASiC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import Validation
import XCTest

/// Content time-stamps (EN 319 132-1 5.2.8): an AllDataObjectsTimeStamp covers the data objects
/// of every data reference, in SignedInfo order; an IndividualDataObjectsTimeStamp those its
/// Include elements name, in their order. The token's imprint is the hash of the concatenated
/// octets. Their presence made a signature INVALID ("not supported"); now they are verified.
/// Each token here comes from the loopback TSA over the bytes the test concatenates itself.
final class DataObjectTimeStampTests: LoopbackServicesTestCase {
    override class var label: String { "content-ts" }

    let first = Array("first file\n".utf8)
    let second = Array("second file, a little longer\n".utf8)

    func stamp(_ bytes: [UInt8], tsaURL: String? = nil) throws -> String {
        let http = try environment().httpClient()
        let token = try TimeStampClient(url: try tsaURL ?? services.tsaURL, post: http.post).stamp(digest: Digest.hash(bytes, .sha256)).der
        return Data(token).base64EncodedString()
    }

    /// A signature over `a.txt` and `b.txt` whose SignedDataObjectProperties end with `properties`.
    func sign(adding properties: String) throws -> SignatureReport {
        let services = try services
        let forge = SignatureForge(environment: try environment(), tsaURL: services.tsaURL, p12: services.pki.signerP12)
        let container = try Container.create(at: Self.folder + "/c-\(UUID().uuidString.prefix(8)).asice",
                                             files: [NewDataFile(bytes: first, name: "a.txt"), NewDataFile(bytes: second, name: "b.txt")])
        var shaping = SignatureForge.Shaping()
        shaping.signedProperties = {
            $0.replacingOccurrences(of: "</xades:SignedDataObjectProperties>", with: properties + "</xades:SignedDataObjectProperties>")
        }
        let signed = try forge.sign(container, shaping)
        let report = try environment().validator().validate(try Container.open(signed.path))
        return try XCTUnwrap(report.signatures.first, report.text)
    }

    func all(_ token: String) -> String {
        "<xades:AllDataObjectsTimeStamp Id=\"S0-ALL-TS\"><xades:EncapsulatedTimeStamp>\(token)</xades:EncapsulatedTimeStamp></xades:AllDataObjectsTimeStamp>"
    }

    func individual(_ includes: [String], _ token: String) -> String {
        "<xades:IndividualDataObjectsTimeStamp Id=\"S0-IND-TS\">"
            + includes.map { "<xades:Include URI=\"#\($0)\"></xades:Include>" }.joined()
            + "<xades:EncapsulatedTimeStamp>\(token)</xades:EncapsulatedTimeStamp></xades:IndividualDataObjectsTimeStamp>"
    }

    /// A sound AllDataObjectsTimeStamp over a.txt then b.txt: VALID (it was INVALID, "structure").
    func testASoundAllDataObjectsTimeStampIsValid() throws {
        let report = try sign(adding: all(try stamp(first + second)))
        XCTAssertEqual(report.verdict, .valid, report.text)
        XCTAssertFalse(report.findings.contains { $0.code == "structure" }, report.text)
    }

    /// The concatenation follows SignedInfo's order: a token over b.txt then a.txt does not verify.
    func testAnAllDataObjectsTimeStampOverOtherBytesIsInvalid() throws {
        let report = try sign(adding: all(try stamp(second + first)))
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.findings.contains { $0.code == "content-timestamp" && $0.message.contains("AllDataObjectsTimeStamp") }, report.text)
    }

    /// An IndividualDataObjectsTimeStamp covers what its Include elements name, in their order.
    func testAnIndividualDataObjectsTimeStampCoversItsIncludes() throws {
        var report = try sign(adding: individual(["S0-RefId1"], try stamp(second)))
        XCTAssertEqual(report.verdict, .valid, report.text)
        report = try sign(adding: individual(["S0-RefId1", "S0-RefId0"], try stamp(second + first)))
        XCTAssertEqual(report.verdict, .valid, report.text)
        report = try sign(adding: individual(["S0-RefId0"], try stamp(second)))
        XCTAssertEqual(report.verdict, .invalid, report.text)
        XCTAssertTrue(report.findings.contains { $0.code == "content-timestamp" }, report.text)
    }

    /// An Include that names no data reference cannot be checked: INDETERMINATE, never INVALID
    /// for being present.
    func testAnIncludeOfNoDataReferenceIsIndeterminate() throws {
        let report = try sign(adding: individual(["S0-nothing"], try stamp(second)))
        XCTAssertEqual(report.verdict, .indeterminate, report.text)
        XCTAssertTrue(report.findings.contains { $0.code == "content-timestamp" && $0.message.contains("S0-nothing") }, report.text)
    }

    /// A content time-stamp must come before the signature time-stamp (EN 319 102-1's
    /// time-stamp order check): one from a TSA whose clock runs an hour ahead is INDETERMINATE,
    /// with the order named, though its imprint is right.
    func testAContentTimeStampAfterTheSignatureTimeStampIsIndeterminate() throws {
        let ahead = try TestServices.start(pki: try services.pki, clockOffset: "+1h")
        defer { ahead.stop() }
        let report = try sign(adding: all(try stamp(first + second, tsaURL: ahead.tsaURL)))
        XCTAssertEqual(report.verdict, .indeterminate, report.text)
        XCTAssertEqual(report.findings.map(\.code), ["timestamp-order"], report.text)
        XCTAssertTrue(report.findings.contains { $0.message.contains("after the signature time-stamp") }, report.text)
    }
}
