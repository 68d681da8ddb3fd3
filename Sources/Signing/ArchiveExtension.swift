import ASiC
import Crypto
import Foundation
import HTTP
import SafeXML
import Validation
import XAdES

/// `asicfs extend`: an archive time-stamp (XAdES LTA, EN 319 132-1 5.5.2) for LT signatures,
/// so that they stay verifiable after their certificates and the first time-stamp's expire.
/// The new xades141:ArchiveTimeStamp goes at the end of UnsignedSignatureProperties and covers
/// everything there before it; nothing signed changes. The container is rewritten atomically
/// and only when every extended signature still validates; any failure leaves it as it was.
public struct ArchiveExtension {
    public struct Extended: Sendable {
        public let index: Int
        public let id: String?
        public let file: String
        public let report: SignatureReport
    }

    let container: Container
    let environment: SignatureEnvironment

    public init(container: Container, environment: SignatureEnvironment) {
        self.container = container
        self.environment = environment
    }

    /// Extends signature `index` (numbered as `verify` numbers them), or every LT signature.
    public func run(index: Int?, cancellation: Cancellation = Cancellation()) throws -> (Container, [Extended]) {
        guard container.kind == .asicE else {
            throw SigningError("this is an ASiC-S container; asicfs extends the XAdES signatures of ASiC-E containers")
        }
        var signatures: [(file: String, bytes: [UInt8], signature: XAdESSignature, count: Int)] = []
        for file in container.signatureFiles where file.name.hasSuffix(".xml") {
            let bytes = try container.signatureBytes(file)
            let parsed = try XAdESSignature.parse(file: file.name, bytes: bytes)
            signatures += parsed.map { (file.name, bytes, $0, parsed.count) }
        }
        if let index, index >= signatures.count {
            throw SigningError("there is no signature \(index): the container has \(signatures.count) (numbered from 0, as asicfs verify shows them)")
        }
        let chosen = index.map { [$0] } ?? signatures.indices.filter { isLongTerm(signatures[$0].signature) }
        guard !chosen.isEmpty else {
            throw SigningError("the container has no LT signature (time-stamp and OCSP) to extend")
        }
        let http = try environment.httpClient(cancellation: cancellation)
        var replaced: [(name: String, bytes: [UInt8])] = []
        var extended: [Extended] = []
        for number in chosen {
            let (file, bytes, signature, count) = signatures[number]
            guard isLongTerm(signature) else {
                throw SigningError("signature \(number) is \(signature.profile); only LT signatures (time-stamp and OCSP) get an archive time-stamp")
            }
            if count > 1 {
                throw SigningError("signature \(number) shares \(file) with \(count - 1) other signature\(count == 2 ? "" : "s"); asicfs extends signature files that hold one signature")
            }
            let digest = try signature.archiveTimeStampDigest(before: nil, method: .c14n11, algorithm: .sha256) { name, feed in
                try container.read(name) { feed($0) }
            }
            let token: TimeStampToken
            do { token = try TimeStampClient(url: environment.tsaURL, post: http.post).stamp(digest: digest, algorithm: .sha256) } catch {
                if cancellation.isCancelled { throw SigningError("the extension was cancelled; the container is unchanged") }
                throw SigningError("time-stamp: \(error)")
            }
            let document = try Self.inserting(archiveTimeStamp(token.der, id: "\(signature.id ?? "S\(number)")-A\(signature.archiveTimeStamps.count)"),
                                              into: bytes, file: file)
            let report = environment.validator().validateNew(signatureFile: file, bytes: document, in: container)
            if report.verdict == .invalid {
                throw SigningError("signature \(number) does not validate with its archive time-stamp, nothing was written: "
                    + report.errors.map(\.message).joined(separator: "; "))
            }
            replaced.append((file, document))
            extended.append(Extended(index: number, id: signature.id, file: file, report: report))
        }
        let saved = try container.savingSignatures(adding: replaced, removing: Set(replaced.map(\.name)))
        return (saved, extended)
    }

    private func isLongTerm(_ signature: XAdESSignature) -> Bool {
        !signature.signatureTimeStamps.isEmpty && !signature.ocspValues.isEmpty
    }

    /// The element, with its own namespace declarations so it fits any document's prefixes.
    private func archiveTimeStamp(_ token: [UInt8], id: String) -> String {
        "<xades141:ArchiveTimeStamp xmlns:xades141=\"\(Namespace.xades141)\" Id=\"\(id)\">"
            + "<ds:CanonicalizationMethod xmlns:ds=\"\(Namespace.ds)\" Algorithm=\"\(CanonicalizationMethod.c14n11.uri)\"></ds:CanonicalizationMethod>"
            + "<xades:EncapsulatedTimeStamp xmlns:xades=\"\(Namespace.xades)\">\(Data(token).base64EncodedString())</xades:EncapsulatedTimeStamp>"
            + "</xades141:ArchiveTimeStamp>"
    }

    /// The document with `element` just before the end tag of its UnsignedSignatureProperties
    /// (whatever prefix the producer gave it); every other byte stays as it was.
    static func inserting(_ element: String, into bytes: [UInt8], file: String) throws -> [UInt8] {
        guard let text = String(validating: bytes, as: UTF8.self),
              let end = text.range(of: #"</([A-Za-z_][A-Za-z0-9_.-]*:)?UnsignedSignatureProperties\s*>"#,
                                   options: [.regularExpression, .backwards]) else {
            throw SigningError("\(file) has no UnsignedSignatureProperties in UTF-8 to add an archive time-stamp to")
        }
        var result = text
        result.insert(contentsOf: element, at: end.lowerBound)
        return Array(result.utf8)
    }
}
