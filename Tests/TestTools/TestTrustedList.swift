import Foundation

/// A trusted list (or list of lists) for tests, written and signed by contrib/testpki/mktrustlist.py
/// (xmlsec1): the test says which services, certificates and status histories it holds.
public struct TestTrustedList: Encodable, Sendable {
    public static let genericType = "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric"
    public static let listOfListsType = "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists"

    public struct Signer: Encodable, Sendable {
        public var certificate: String
        public var key: String
        /// A signer made by mkpki.sh or mkpki_dated.py: `NAME.pem` with `NAME.key` beside it.
        public init(pem: String) {
            certificate = pem
            key = String(pem.dropLast(".pem".count)) + ".key"
        }
    }

    public struct Pointer: Encodable, Sendable {
        public var location: String
        public var signers: [String]
        public var territory: String?
        public var mimeType: String? = "application/vnd.etsi.tsl+xml"
        public var type: String? = TestTrustedList.genericType
        public init(location: String, signers: [String], territory: String?) {
            self.location = location
            self.signers = signers
            self.territory = territory
        }
    }

    public struct Qualification: Encodable, Sendable {
        public var qualifiers: [String]
        public var assert: String
        public var keyUsages: [[String: Bool]]
        public var policySets: [[String]]
        public init(qualifiers: [String], assert: String = "all", keyUsages: [[String: Bool]] = [], policySets: [[String]] = []) {
            self.qualifiers = qualifiers
            self.assert = assert
            self.keyUsages = keyUsages
            self.policySets = policySets
        }
    }

    /// One status of a service from `start` on.
    public struct Period: Encodable, Sendable {
        public var type: String
        public var status: String
        public var start: String
        public var qualifications: [Qualification]
        public init(type: String, status: String, start: Date, qualifications: [Qualification] = []) {
            self.type = type
            self.status = status
            self.start = TestTime.string(start)
            self.qualifications = qualifications
        }
    }

    public struct Service: Encodable, Sendable {
        public var name: String
        public var certificates: [String]
        /// Newest first: the first is the current status (ServiceInformation).
        public var history: [Period]
        public init(name: String, certificates: [String], history: [Period]) {
            self.name = name
            self.certificates = certificates
            self.history = history
        }
    }

    public struct Provider: Encodable, Sendable {
        public var name: String
        public var services: [Service]
        public init(name: String, services: [Service]) {
            self.name = name
            self.services = services
        }
    }

    public var territory: String
    public var sequence: Int
    public var type: String
    public var `operator` = "asicfs test scheme operator"
    public var issued: String
    public var nextUpdate: String
    public var signer: Signer
    public var pointers: [Pointer] = []
    public var providers: [Provider] = []

    public init(territory: String, sequence: Int, type: String = TestTrustedList.genericType, issued: Date, nextUpdate: Date,
                signer: Signer, pointers: [Pointer] = [], providers: [Provider] = []) {
        self.territory = territory
        self.sequence = sequence
        self.type = type
        self.issued = TestTime.string(issued)
        self.nextUpdate = TestTime.string(nextUpdate)
        self.signer = signer
        self.pointers = pointers
        self.providers = providers
    }

    /// Writes the signed list to `path`.
    public func write(to path: String) throws {
        let spec = path + ".spec.json"
        try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: spec))
        defer { unlink(spec) }
        let made = try Shell.run("/usr/bin/python3", [TestServices.contrib + "/mktrustlist.py", spec, path])
        guard made.status == 0 else { throw ShellError("mktrustlist.py failed (\(made.status)): \(made.stderr)") }
    }
}

/// The URIs of TS 119 612 the test lists use.
public enum TrustListURI {
    public static let svctype = "http://uri.etsi.org/TrstSvc/Svctype/"
    public static let svcstatus = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/"
    public static let qualifier = "http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/"
    public static func type(_ name: String) -> String { svctype + name }
    public static func status(_ name: String) -> String { svcstatus + name }
    public static func qualifier(_ name: String) -> String { qualifier + name }
}
