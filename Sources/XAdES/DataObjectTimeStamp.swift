import SafeXML

/// A content time-stamp of SignedDataObjectProperties (EN 319 132-1 5.2.8): an
/// AllDataObjectsTimeStamp covers every data reference, an IndividualDataObjectsTimeStamp the
/// references its Include elements name. Made before the signature, it proves the data existed then.
public struct DataObjectTimeStamp: Sendable {
    public enum Coverage: Sendable, Equatable {
        /// Every ds:Reference of SignedInfo but the SignedProperties one, in SignedInfo order.
        case allDataObjects
        /// The Include URIs (`#` and a ds:Reference Id), in document order.
        case included([String])
    }

    public let coverage: Coverage
    public let canonicalizationURI: String?
    public let token: [UInt8]
    public let tokenCount: Int

    /// The element's name, for messages.
    public var elementName: String {
        coverage == .allDataObjects ? "AllDataObjectsTimeStamp" : "IndividualDataObjectsTimeStamp"
    }

    /// The content time-stamps of a SignedDataObjectProperties, in document order.
    static func parse(_ properties: XMLElement?) -> [DataObjectTimeStamp] {
        (properties?.children ?? []).compactMap { element in
            guard element.namespaceURI == Namespace.xades else { return nil }
            let coverage: Coverage
            switch element.localName {
            case "AllDataObjectsTimeStamp": coverage = .allDataObjects
            case "IndividualDataObjectsTimeStamp":
                coverage = .included(element.children("Include", namespace: Namespace.xades)
                    .map { $0.attribute("URI", namespace: nil) ?? "" })
            default: return nil
            }
            let tokens = element.children("EncapsulatedTimeStamp", namespace: Namespace.xades)
            return DataObjectTimeStamp(
                coverage: coverage,
                canonicalizationURI: element.child("CanonicalizationMethod", namespace: Namespace.ds)?.attribute("Algorithm", namespace: nil),
                token: XAdESSignature.base64(tokens.first), tokenCount: tokens.count)
        }
    }
}
