import Crypto
import Foundation

/// One trusted list (ETSI TS 119 612): either a list of lists (the EU LOTL), whose pointers lead
/// to national lists, or a national list of trust service providers and their services.
public struct TrustedList: Sendable {
    /// `SchemeTerritory`, e.g. `EE`; the conformance lists use `EE_T`.
    public let territory: String
    public let sequenceNumber: Int
    /// `TSLType`, e.g. `http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric`.
    public let type: String
    public let operatorName: String
    public let issueDate: Date?
    /// nil when the list says it will not be updated again (a closed list).
    public let nextUpdate: Date?
    public let pointers: [TrustedListPointer]
    public let services: [TrustService]
    /// The certificate whose signature on the list was verified (nil for a list parsed unverified).
    public internal(set) var signer: Certificate?
    /// Where it was read from (path or URL), for messages.
    public internal(set) var source: String

    static let listOfListsTypes: Set<String> = [
        "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists",
        "http://uri.etsi.org/TrstSvc/eSigDir-1999-93-EC-TrustedList/TSLType/schemes",
    ]

    /// A list of lists points to other lists instead of listing services itself.
    public var isListOfLists: Bool { Self.listOfListsTypes.contains(type) }

    /// True when NextUpdate has passed at `date`: the list is still used, with a warning.
    public func isExpired(at date: Date) -> Bool { nextUpdate.map { $0 < date } ?? false }

    /// A short name for messages: `EE_T (sequence 34)`.
    public var name: String { "\(territory) (sequence \(sequenceNumber))" }

    public init(territory: String, sequenceNumber: Int, type: String, operatorName: String, issueDate: Date?,
                nextUpdate: Date?, pointers: [TrustedListPointer], services: [TrustService],
                signer: Certificate? = nil, source: String) {
        self.territory = territory
        self.sequenceNumber = sequenceNumber
        self.type = type
        self.operatorName = operatorName
        self.issueDate = issueDate
        self.nextUpdate = nextUpdate
        self.pointers = pointers
        self.services = services
        self.signer = signer
        self.source = source
    }
}

/// An `OtherTSLPointer` of a list of lists: where a national list is and who may sign it.
public struct TrustedListPointer: Sendable {
    /// `TSLLocation`: the URL of the pointed list.
    public let location: String
    /// `tslx:MimeType`: `application/vnd.etsi.tsl+xml` for the machine-readable list.
    public let mimeType: String?
    public let territory: String?
    /// `TSLType` of the pointed list.
    public let type: String?
    /// `ServiceDigitalIdentities`: the certificates allowed to sign the pointed list.
    public let signers: [Certificate]

    public static let xmlMimeType = "application/vnd.etsi.tsl+xml"

    /// Only XML lists of services are followed: not the PDF twins, not other lists of lists.
    public var isFollowed: Bool {
        mimeType == Self.xmlMimeType && !signers.isEmpty
            && !(type.map(TrustedList.listOfListsTypes.contains) ?? false)
    }
}

/// One `TSPService` with its whole status history.
public struct TrustService: Sendable {
    public let providerName: String
    public let name: String
    /// The certificates of `ServiceDigitalIdentity` (current and historical).
    public let certificates: [Certificate]
    /// The current `ServiceInformation` followed by every `ServiceHistoryInstance`, newest first.
    public let periods: [ServicePeriod]

    public init(providerName: String, name: String, certificates: [Certificate], periods: [ServicePeriod]) {
        self.providerName = providerName
        self.name = name
        self.certificates = certificates
        self.periods = periods.sorted { $0.start > $1.start }
    }

    /// The current type, status and qualifiers.
    public var current: ServicePeriod? { periods.first }

    /// What the list said about the service at `time`: the entry with the latest
    /// StatusStartingTime at or before it; nil when the service was not listed yet.
    public func period(at time: Date) -> ServicePeriod? { periods.first { $0.start <= time } }
}

/// One entry of a service's history: from `start` on, the service had this type and status.
public struct ServicePeriod: Sendable {
    public let type: TrustServiceType
    public let status: TrustServiceStatus
    /// `StatusStartingTime`.
    public let start: Date
    /// `ServiceInformationExtensions/Extension/Qualifications/QualificationElement`.
    public let qualifications: [QualificationElement]
    /// `AdditionalServiceInformation/URI`, e.g. `…/SvcInfoExt/ForeSignatures`.
    public let additionalInformation: [String]

    public init(type: TrustServiceType, status: TrustServiceStatus, start: Date,
                qualifications: [QualificationElement] = [], additionalInformation: [String] = []) {
        self.type = type
        self.status = status
        self.start = start
        self.qualifications = qualifications
        self.additionalInformation = additionalInformation
    }
}

/// A `QualificationElement`: qualifiers that apply to the certificates its criteria select.
public struct QualificationElement: Sendable, Equatable {
    /// `Qualifier@uri` values, e.g. `http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCWithQSCD`.
    public let qualifiers: [String]
    public let criteria: QualificationCriteria

    public init(qualifiers: [String], criteria: QualificationCriteria) {
        self.qualifiers = qualifiers
        self.criteria = criteria
    }
}

/// A `CriteriaList`: key-usage and policy conditions joined by `assert` (all, atLeastOne, none).
public struct QualificationCriteria: Sendable, Equatable {
    public let assert: String
    /// Each `KeyUsage`: bit name (`nonRepudiation`) → required value.
    public let keyUsages: [[String: Bool]]
    /// Each `PolicySet`: policy OIDs that must all be present.
    public let policySets: [[String]]

    public init(assert: String, keyUsages: [[String: Bool]] = [], policySets: [[String]] = []) {
        self.assert = assert
        self.keyUsages = keyUsages
        self.policySets = policySets
    }
}
