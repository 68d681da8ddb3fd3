import Crypto
import Foundation
import SafeXML

/// `META-INF/ASiCArchiveManifest*.xml` of a long-term ASiC-S container (ETSI EN 319 162-1):
/// the files a later time-stamp token protects, each with its digest. The token it belongs to
/// is named by `SigReference`; the token's imprint is over this file's bytes as they are.
public struct ASiCArchiveManifest: Sendable {
    public struct Reference: Sendable {
        public let uri: String
        public let digestAlgorithmURI: String
        public let digestValue: [UInt8]
        /// The name in the container (the URI, %XX-decoded, without a leading '/').
        public var name: String { ReferenceURI.name(of: uri) }
    }

    public static let namespaces = ["http://uri.etsi.org/02918/v1.2.1#", "http://uri.etsi.org/2918/v1.2.1#"]

    public let file: String
    /// The time-stamp token that covers this manifest.
    public let timeStampFile: String?
    public let references: [Reference]

    public static func parse(file: String, bytes: [UInt8]) throws -> ASiCArchiveManifest {
        let document = try SafeXMLDocument.parse(bytes, name: file)
        guard let root = document.root, root.localName == "ASiCManifest",
              let namespace = root.namespaceURI, namespaces.contains(namespace) else {
            throw XAdESError("\(file) is not an ASiCManifest")
        }
        let sigReferences = root.children.filter { $0.localName == "SigReference" && $0.namespaceURI == namespace }
        guard sigReferences.count <= 1 else { throw XAdESError("\(file) names \(sigReferences.count) time-stamps, not one") }
        let sigURI = sigReferences.first?.attribute("URI", namespace: nil)
        let references = try root.children.filter { $0.localName == "DataObjectReference" && $0.namespaceURI == namespace }.map { element in
            guard let uri = element.attribute("URI", namespace: nil), !uri.isEmpty else {
                throw XAdESError("a reference in \(file) has no URI")
            }
            let method = element.children.first { $0.localName == "DigestMethod" && $0.namespaceURI == Namespace.ds }
            let value = element.children.first { $0.localName == "DigestValue" && $0.namespaceURI == Namespace.ds }
            guard let algorithm = method?.attribute("Algorithm", namespace: nil), let value,
                  let digest = Data(base64Encoded: value.text.filter { !$0.isWhitespace }) else {
                throw XAdESError("the reference to '\(uri)' in \(file) has no digest")
            }
            return Reference(uri: uri, digestAlgorithmURI: algorithm, digestValue: [UInt8](digest))
        }
        let token = sigURI.map(ReferenceURI.name(of:))
        return ASiCArchiveManifest(file: file, timeStampFile: token, references: references)
    }
}
