import Crypto
import Foundation
import TestTools
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

    func testQualifiersApplyOnlyToCertificatesTheirCriteriaSelect() throws {
        let s = try Scenario.shared()
        // The scenario signer has keyUsage nonRepudiation only.
        let digitalSignatureOnly = element([Q.notQualified], keyUsages: [["digitalSignature": true]])
        XCTAssertTrue(Qualification.of(s.signer, qualifications: [digitalSignatureOnly]).isQCCompliant)
        let nonRepudiation = element([Q.notQualified], keyUsages: [["nonRepudiation": true]])
        XCTAssertFalse(Qualification.of(s.signer, qualifications: [nonRepudiation]).isQCCompliant)
        let either = element([Q.qcNoQSCD], assert: "atLeastOne", keyUsages: [["digitalSignature": true], ["nonRepudiation": true]])
        XCTAssertFalse(Qualification.of(s.signer, qualifications: [either]).isQSCD)
        let neither = element([Q.qcNoQSCD], assert: "none", keyUsages: [["nonRepudiation": true]])
        XCTAssertTrue(Qualification.of(s.signer, qualifications: [neither]).isQSCD)
    }

    func testPolicySetsMustMatchEveryPolicy() throws {
        let s = try Scenario.shared()
        // The signer's only policy is the test PKI's 1.3.6.1.4.1.51361.1.1.1.
        XCTAssertEqual(s.signer.policies, ["1.3.6.1.4.1.51361.1.1.1"])
        let matching = element([Q.qcNoQSCD], policySets: [["1.3.6.1.4.1.51361.1.1.1"]])
        XCTAssertFalse(Qualification.of(s.signer, qualifications: [matching]).isQSCD)
        let partly = element([Q.qcNoQSCD], policySets: [["1.3.6.1.4.1.51361.1.1.1", "0.4.0.194112.1.2"]])
        XCTAssertTrue(Qualification.of(s.signer, qualifications: [partly]).isQSCD)
    }

    func testUnknownAssertIsIgnoredAndLaterQualifiersWin() throws {
        let s = try Scenario.shared()
        XCTAssertTrue(Qualification.of(s.signer, qualifications: [element([Q.notQualified], assert: "someday")]).isQCCompliant)
        let both = Qualification.of(s.signer, qualifications: [element([Q.notQualified]), element([Q.qcForESig])])
        XCTAssertTrue(both.isQCCompliant)
        XCTAssertEqual(both.reasons.suffix(2), ["the trusted list says NotQualified", "the trusted list says QCForESig"])
    }

    func testESealsMeetTheRequirementsWithoutQSCD() throws {
        let s = try Scenario.shared()
        let seal = Qualification.of(s.signer, qualifications: [element([Q.qcNoQSCD, Q.qcForESeal])])
        XCTAssertFalse(seal.isQSCD)
        XCTAssertTrue(seal.isESeal)
        XCTAssertTrue(seal.meetsRequirements)
    }

    func testACertificateWithoutStatementsIsNotQualifiedUnlessTheListSaysSo() throws {
        let s = try Scenario.shared()
        let plain = Qualification.of(s.ocspResponder, qualifications: [])
        XCTAssertFalse(plain.isQCCompliant || plain.isQSCD || plain.meetsRequirements)
        XCTAssertEqual(plain.reasons, ["the certificate does not state QcCompliance", "the certificate states no QSCD"])
        let listed = Qualification.of(s.ocspResponder, qualifications: [element([Q.qcStatement, Q.qcWithQSCD])])
        XCTAssertTrue(listed.meetsRequirements)
    }
}
