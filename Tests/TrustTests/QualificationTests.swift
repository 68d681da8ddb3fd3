import Crypto
import Foundation
import Trust
import XCTest

/// How trusted-list qualifiers and their criteria change a certificate's own qualification.
final class QualificationTests: XCTestCase {
    typealias Q = Qualification.Qualifier

    func element(_ qualifiers: [String], assert: String = "all", keyUsages: [[String: Bool]] = [],
                 policySets: [[String]] = []) -> QualificationElement {
        QualificationElement(qualifiers: qualifiers,
                             criteria: QualificationCriteria(assert: assert, keyUsages: keyUsages, policySets: policySets))
    }

    func testQualifiersApplyOnlyToCertificatesTheirCriteriaSelect() {
        // tsl.asice's signer has keyUsage nonRepudiation only.
        let digitalSignatureOnly = element([Q.notQualified], keyUsages: [["digitalSignature": true]])
        XCTAssertTrue(Qualification.of(TslAsice.signer, qualifications: [digitalSignatureOnly]).isQCCompliant)
        let nonRepudiation = element([Q.notQualified], keyUsages: [["nonRepudiation": true]])
        XCTAssertFalse(Qualification.of(TslAsice.signer, qualifications: [nonRepudiation]).isQCCompliant)
        let either = element([Q.qcNoQSCD], assert: "atLeastOne", keyUsages: [["digitalSignature": true], ["nonRepudiation": true]])
        XCTAssertFalse(Qualification.of(TslAsice.signer, qualifications: [either]).isQSCD)
        let neither = element([Q.qcNoQSCD], assert: "none", keyUsages: [["nonRepudiation": true]])
        XCTAssertTrue(Qualification.of(TslAsice.signer, qualifications: [neither]).isQSCD)
    }

    func testPolicySetsMustMatchEveryPolicy() {
        // The signer's only policy is SK's 1.3.6.1.4.1.10015.3.1.1.
        let matching = element([Q.qcNoQSCD], policySets: [["1.3.6.1.4.1.10015.3.1.1"]])
        XCTAssertFalse(Qualification.of(TslAsice.signer, qualifications: [matching]).isQSCD)
        let partly = element([Q.qcNoQSCD], policySets: [["1.3.6.1.4.1.10015.3.1.1", "0.4.0.194112.1.2"]])
        XCTAssertTrue(Qualification.of(TslAsice.signer, qualifications: [partly]).isQSCD)
    }

    func testUnknownAssertIsIgnoredAndLaterQualifiersWin() {
        XCTAssertTrue(Qualification.of(TslAsice.signer, qualifications: [element([Q.notQualified], assert: "someday")]).isQCCompliant)
        let both = Qualification.of(TslAsice.signer, qualifications: [element([Q.notQualified]), element([Q.qcForESig])])
        XCTAssertTrue(both.isQCCompliant)
        XCTAssertEqual(both.reasons.suffix(2), ["the trusted list says NotQualified", "the trusted list says QCForESig"])
    }

    func testESealsMeetTheRequirementsWithoutQSCD() {
        let seal = Qualification.of(TslAsice.signer, qualifications: [element([Q.qcNoQSCD, Q.qcForESeal])])
        XCTAssertFalse(seal.isQSCD)
        XCTAssertTrue(seal.isESeal)
        XCTAssertTrue(seal.meetsRequirements)
    }

    func testACertificateWithoutStatementsIsNotQualifiedUnlessTheListSaysSo() {
        let plain = Qualification.of(TslAsice.ocspResponder, qualifications: [])
        XCTAssertFalse(plain.isQCCompliant || plain.isQSCD || plain.meetsRequirements)
        XCTAssertEqual(plain.reasons, ["the certificate does not state QcCompliance", "the certificate states no QSCD"])
        let listed = Qualification.of(TslAsice.ocspResponder, qualifications: [element([Q.qcStatement, Q.qcWithQSCD])])
        XCTAssertTrue(listed.meetsRequirements)
    }
}
