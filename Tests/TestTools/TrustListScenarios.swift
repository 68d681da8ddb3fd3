import Foundation

/// The times a trust-list scenario is set at, all relative to one "now" so that the tests do not
/// depend on the day they run. The order is that of libdigidocpp's tsl.asice and its lists: the
/// services listed (under supervision), the signer certificate issued (T0), the services granted
/// with the eIDAS qualifiers, then the signature time-stamped and OCSP-checked (T1).
public struct TrustScenarioTimes: Sendable {
    public static let day: TimeInterval = 86_400
    public let now: Date
    /// The CAs, OCSP responder and TSA are valid from here (`TestPKI.makeDated`).
    public let caNotBefore: Date
    /// Every service of the base list is under supervision from here.
    public let firstListed: Date
    /// T0: the signer certificate's notBefore.
    public let signerNotBefore: Date
    /// Every service of the base list is granted from here, the CA with QCWithQSCD.
    public let switchover: Date
    /// T1: the time-stamp's genTime and the OCSP response's producedAt.
    public let timeStamp: Date

    public init(now: Date = Date(), timeStamp: Date? = nil) {
        let now = TestTime.whole(now)
        self.now = now
        caNotBefore = now - 1000 * Self.day
        firstListed = now - 900 * Self.day
        signerNotBefore = now - 600 * Self.day
        switchover = now - 150 * Self.day
        self.timeStamp = TestTime.whole(timeStamp ?? now)
    }

    /// The same times with T1 where a real signature's time-stamp put it.
    public func with(timeStamp: Date) -> TrustScenarioTimes { TrustScenarioTimes(now: now, timeStamp: timeStamp) }

    /// When the scenarios say "one day before/after T0", "before/after T1".
    public var dayBeforeSigner: Date { signerNotBefore - Self.day }
    public var dayAfterSigner: Date { signerNotBefore + Self.day }
    public var hoursBeforeSigner: Date { signerNotBefore - 10 * 3600 }
    public var hoursAfterTimeStamp: Date { timeStamp + 11 * 3600 }
    public var hoursBeforeTimeStamp: Date { timeStamp - 12 * 3600 }
    public var eveningBeforeTimeStamp: Date { timeStamp - 17 * 3600 }
}

/// The 24 trust-list scenarios of libdigidocpp's TSL tests (its EE_T-*.xml files) and the list
/// they vary (EE_T.xml), recreated for a test PKI: each changes the status history of one service
/// (the signer's CA, the OCSP responder or the TSA) so that the signature is, or is not, trusted
/// at the times it is checked at. The names are the reference's; `referenceResult` is what the
/// reference's digidoc-tool prints for its container with that list.
public enum TrustListScenario: String, CaseIterable, Sendable {
    case base = "EE_T"
    case caNonQA = "EE_T-CA-non-qa"
    case caInvalidType = "EE_T-CA-invalid-type"
    case caWithdrawn = "EE_T-CA-withdrawn"
    case caGrantedLater = "EE_T-CA-granted-later"
    case caWithdrawnGrantedLater = "EE_T-CA-withdrawn-granted-later"
    case caNoQSCDGrantedLater = "EE_T-CA-noqscd-granted-later"
    case caWithdrawnGrantedBefore = "EE_T-CA-withdrawn-granted-before"
    case caNoQSCDGrantedBefore = "EE_T-CA-noqscd-granted-before"
    case noQCStatement = "EE_T-no_QCStatement"
    case noQSCD = "EE_T-no_QCSD"
    case ocspInvalidType = "EE_T-OCSP-invalid-type"
    case ocspWithdrawn = "EE_T-OCSP-withdrawn"
    case ocspGrantedLater = "EE_T-OCSP-granted-later"
    case ocspWithdrawnGrantedLater = "EE_T-OCSP-withdrawn-granted-later"
    case ocspNoQSCDGrantedLater = "EE_T-OCSP-noqscd-granted-later"
    case ocspWithdrawnGrantedBefore = "EE_T-OCSP-withdrawn-granted-before"
    case ocspNoQSCDGrantedBefore = "EE_T-OCSP-noqscd-granted-before"
    case tsaInvalidType = "EE_T-TSA-invalid-type"
    case tsaWithdrawn = "EE_T-TSA-withdrawn"
    case tsaGrantedLater = "EE_T-TSA-granted-later"
    case tsaWithdrawnGrantedLater = "EE_T-TSA-withdrawn-granted-later"
    case tsaNoQSCDGrantedLater = "EE_T-TSA-noqscd-granted-later"
    case tsaWithdrawnGrantedBefore = "EE_T-TSA-withdrawn-granted-before"
    case tsaNoQSCDGrantedBefore = "EE_T-TSA-noqscd-granted-before"

    public var fileName: String { rawValue + ".xml" }

    /// What digidoc-tool prints for the reference's container with this list: "OK",
    /// "OK (NonQSCD)" (valid with a warning) or "FAILED (Unknown)" (indeterminate).
    public var referenceResult: String {
        switch self {
        case .base, .caWithdrawnGrantedBefore, .caNoQSCDGrantedBefore, .ocspWithdrawnGrantedBefore,
             .ocspNoQSCDGrantedBefore, .tsaWithdrawnGrantedBefore, .tsaNoQSCDGrantedBefore: "OK"
        case .noQCStatement, .noQSCD: "OK (NonQSCD)"
        default: "FAILED (Unknown)"
        }
    }

    /// Whether the reference's Signature::validate() accepts the signature (a NonQSCD one it does not).
    public var referenceValid: Bool { referenceResult == "OK" }
}

/// Writes the scenario lists for one PKI made by `TestPKI.makeDated` at `times`: a national list
/// (territory EE_T, signed by tl-signer) and a list of lists pointing to it (signed by lotl-signer).
public struct TrustScenarioLists: Sendable {
    public static let caName = "TEST of ESTEID-LIKE 2025"
    public static let ocspName = "TEST of asicfs OCSP RESPONDER 2025"
    public static let tsaName = "TEST of asicfs TSA 2025"
    public static let sequence = 22

    public let pki: TestPKI
    public let times: TrustScenarioTimes

    public init(pki: TestPKI, times: TrustScenarioTimes) {
        self.pki = pki
        self.times = times
    }

    typealias Period = TestTrustedList.Period
    private static func type(_ name: String) -> String { TrustListURI.type(name) }
    private static func status(_ name: String) -> String { TrustListURI.status(name) }
    private static let caQC = type("CA/QC"), caPKC = type("CA/PKC"), ocspQC = type("Certstatus/OCSP/QC")
    private static let ocsp = type("Certstatus/OCSP"), qtst = type("TSA/QTST"), tsa = type("TSA")
    private static let granted = status("granted"), supervised = status("undersupervision")
    private static let revoked = status("supervisionrevoked"), withdrawn = status("withdrawn")

    /// The CA's qualifiers for signing certificates (digitalSignature or nonRepudiation).
    private static func qualifiers(_ names: String...) -> [TestTrustedList.Qualification] {
        [TestTrustedList.Qualification(qualifiers: names.map(TrustListURI.qualifier), assert: "atLeastOne",
                                       keyUsages: [["digitalSignature": true], ["nonRepudiation": true]])]
    }

    /// Since the switchover the CA says QCWithQSCD; before it QCWithSSCD (the directive's word).
    private static let newQualifiers = qualifiers("QCWithQSCD", "QCStatement")
    private static let oldQualifiers = qualifiers("QCWithSSCD", "QCStatement")

    /// The status histories (newest first) of the CA, OCSP and TSA services in `scenario`.
    public func histories(_ scenario: TrustListScenario) -> (ca: [TestTrustedList.Period], ocsp: [TestTrustedList.Period],
                                                              tsa: [TestTrustedList.Period]) {
        typealias S = TrustScenarioLists
        let t = times
        func P(_ type: String, _ status: String, _ start: Date, _ q: [TestTrustedList.Qualification] = []) -> Period {
            Period(type: type, status: status, start: start, qualifications: q)
        }
        var ca = [P(S.caQC, S.granted, t.switchover, S.newQualifiers), P(S.caQC, S.supervised, t.firstListed, S.oldQualifiers)]
        var ocsp = [P(S.ocspQC, S.granted, t.switchover), P(S.ocspQC, S.supervised, t.firstListed)]
        var tsa = [P(S.qtst, S.granted, t.switchover), P(S.qtst, S.supervised, t.firstListed)]
        let later = t.hoursAfterTimeStamp, before = t.hoursBeforeTimeStamp
        switch scenario {
        case .base: break
        case .caNonQA:
            ca = [P(S.caPKC, S.granted, t.switchover, S.newQualifiers), P(S.caPKC, S.supervised, t.firstListed, S.oldQualifiers)]
        case .caInvalidType: ca = [P(S.qtst, S.granted, t.switchover), P(S.qtst, S.supervised, t.firstListed)]
        case .caWithdrawn: ca = [P(S.caQC, S.revoked, t.dayBeforeSigner), P(S.caQC, S.supervised, t.firstListed, S.oldQualifiers)]
        case .caGrantedLater:
            ca = [P(S.caQC, S.granted, t.switchover, S.newQualifiers), P(S.caQC, S.supervised, t.dayAfterSigner, S.oldQualifiers)]
        case .caWithdrawnGrantedLater:
            ca = [ca[0], P(S.caQC, S.supervised, t.dayAfterSigner, S.oldQualifiers), P(S.caQC, S.revoked, t.dayBeforeSigner), ca[1]]
        case .caNoQSCDGrantedLater:
            ca = [ca[0], P(S.caQC, S.supervised, t.dayAfterSigner, S.oldQualifiers), P(S.caPKC, S.supervised, t.firstListed)]
        case .caWithdrawnGrantedBefore:
            ca = [ca[0], P(S.caQC, S.supervised, t.hoursBeforeSigner, S.oldQualifiers), P(S.caQC, S.revoked, t.dayBeforeSigner), ca[1]]
        case .caNoQSCDGrantedBefore:
            ca = [ca[0], P(S.caQC, S.supervised, t.hoursBeforeSigner, S.oldQualifiers), P(S.caPKC, S.supervised, t.firstListed)]
        case .noQCStatement:
            ca[0] = P(S.caQC, S.granted, t.switchover, Self.qualifiers("QCWithQSCD", "NotQualified"))
        case .noQSCD:
            ca = [P(S.caQC, S.granted, t.switchover, Self.qualifiers("QCNoQSCD", "QCStatement")),
                  P(S.caQC, S.supervised, t.firstListed, Self.qualifiers("QCNoQSCD", "QCStatement"))]
        case .ocspInvalidType: ocsp = [P(S.qtst, S.granted, t.switchover), P(S.qtst, S.supervised, t.firstListed)]
        case .ocspWithdrawn: ocsp = [P(S.ocspQC, S.withdrawn, t.switchover), ocsp[1]]
        case .ocspGrantedLater: ocsp = [P(S.ocspQC, S.granted, later)]
        case .ocspWithdrawnGrantedLater: ocsp = [P(S.ocspQC, S.granted, later), P(S.ocspQC, S.withdrawn, t.switchover), ocsp[1]]
        case .ocspNoQSCDGrantedLater:
            ocsp = [P(S.ocspQC, S.granted, later), P(S.ocsp, S.granted, t.switchover), P(S.ocsp, S.supervised, t.firstListed)]
        case .ocspWithdrawnGrantedBefore: ocsp = [P(S.ocspQC, S.granted, before), P(S.ocspQC, S.withdrawn, t.switchover), ocsp[1]]
        case .ocspNoQSCDGrantedBefore:
            ocsp = [P(S.ocspQC, S.granted, before), P(S.ocsp, S.granted, t.switchover), P(S.ocsp, S.supervised, t.firstListed)]
        case .tsaInvalidType: tsa = [P(S.caQC, S.granted, t.switchover), P(S.caQC, S.supervised, t.firstListed)]
        case .tsaWithdrawn: tsa = [P(S.qtst, S.withdrawn, t.eveningBeforeTimeStamp)] + tsa
        case .tsaGrantedLater: tsa = [P(S.qtst, S.granted, later)]
        case .tsaWithdrawnGrantedLater: tsa = [P(S.qtst, S.granted, later), P(S.qtst, S.withdrawn, t.switchover), tsa[1]]
        case .tsaNoQSCDGrantedLater:
            tsa = [P(S.qtst, S.granted, later), P(S.tsa, S.granted, t.switchover), P(S.tsa, S.supervised, t.firstListed)]
        case .tsaWithdrawnGrantedBefore: tsa = [P(S.qtst, S.granted, before), P(S.qtst, S.withdrawn, t.switchover), tsa[1]]
        case .tsaNoQSCDGrantedBefore:
            tsa = [P(S.qtst, S.granted, before), P(S.tsa, S.granted, t.switchover), P(S.tsa, S.supervised, t.firstListed)]
        }
        return (ca, ocsp, tsa)
    }

    /// The national list of `scenario`: the PKI's CA, OCSP responder and TSA with the scenario's
    /// histories, and a second provider whose service concerns none of them.
    public func list(_ scenario: TrustListScenario) -> TestTrustedList {
        let (ca, ocsp, tsa) = histories(scenario)
        let provider = TestTrustedList.Provider(name: "asicfs test services", services: [
            .init(name: Self.caName, certificates: [pki.issuing], history: ca),
            .init(name: Self.ocspName, certificates: [pki.ocsp], history: ocsp),
            .init(name: Self.tsaName, certificates: [pki.tsa], history: tsa),
        ])
        let other = TestTrustedList.Provider(name: "asicfs test other provider", services: [
            .init(name: "TEST of an unrelated CA", certificates: [pki.lotlSigner],
                  history: [Period(type: Self.caPKC, status: Self.granted, start: times.firstListed)]),
        ])
        return TestTrustedList(territory: "EE_T", sequence: Self.sequence, issued: times.now - TrustScenarioTimes.day,
                               nextUpdate: times.now + 365 * TrustScenarioTimes.day, signer: .init(pem: pki.tlSigner),
                               providers: [provider, other])
    }

    /// A list of lists (territory EE) pointing to the national list at `location`.
    public func listOfLists(pointingTo location: String) -> TestTrustedList {
        TestTrustedList(territory: "EE", sequence: 4, type: TestTrustedList.listOfListsType, issued: times.now - TrustScenarioTimes.day,
                        nextUpdate: times.now + 365 * TrustScenarioTimes.day, signer: .init(pem: pki.lotlSigner),
                        pointers: [.init(location: location, signers: [pki.tlSigner], territory: "EE_T")])
    }

    /// Writes `scenario`'s list as `folder/<name>.xml` and returns its path.
    @discardableResult
    public func write(_ scenario: TrustListScenario, in folder: String) throws -> String {
        let path = folder + "/" + scenario.fileName
        try list(scenario).write(to: path)
        return path
    }
}
