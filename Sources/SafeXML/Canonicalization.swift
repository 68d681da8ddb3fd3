import CLibXML2

/// The canonicalization methods XML-DSig documents name, mapped to libxml2's C14N modes.
public struct CanonicalizationMethod: Sendable, Equatable {
    public enum Mode: Sendable { case c14n10, c14n11, exclusive }
    public let mode: Mode
    public let withComments: Bool
    public let uri: String

    public static let c14n11 = CanonicalizationMethod(uri: "http://www.w3.org/2006/12/xml-c14n11")!
    public static let c14n10 = CanonicalizationMethod(uri: "http://www.w3.org/TR/2001/REC-xml-c14n-20010315")!
    public static let exclusive = CanonicalizationMethod(uri: "http://www.w3.org/2001/10/xml-exc-c14n#")!

    /// nil for a URI that is not one of the six XML-DSig canonicalization methods.
    public init?(uri: String) {
        let base = uri.hasSuffix("#WithComments") ? String(uri.dropLast("#WithComments".count)) : uri
        withComments = base != uri
        switch base {
        case "http://www.w3.org/2006/12/xml-c14n11": mode = .c14n11
        case "http://www.w3.org/TR/2001/REC-xml-c14n-20010315": mode = .c14n10
        case "http://www.w3.org/2001/10/xml-exc-c14n", "http://www.w3.org/2001/10/xml-exc-c14n#": mode = .exclusive
        default: return nil
        }
        self.uri = uri
    }
}

extension XMLElement {
    /// The canonical bytes of this element's subtree, with the namespaces in scope that the method
    /// keeps (inclusive C14N keeps every ancestor's declarations on the apex). `excluding` drops
    /// one descendant subtree, which is what the enveloped-signature transform needs.
    public func canonicalized(_ method: CanonicalizationMethod, excluding excluded: XMLElement? = nil,
                              inclusivePrefixes: [String] = []) throws -> [UInt8] {
        guard let document = node.pointee.doc else { throw XMLError("the element has no document") }
        var visibility = Visibility(apex: node, excluded: excluded?.node)
        guard let buffer = cxml_AllocOutputBuffer(nil) else { throw XMLError("out of memory") }
        defer { cxml_OutputBufferClose(buffer) }
        let mode: Int32 = switch method.mode {
        case .c14n10: Int32(XML_C14N_1_0.rawValue)
        case .c14n11: Int32(XML_C14N_1_1.rawValue)
        case .exclusive: Int32(XML_C14N_EXCLUSIVE_1_0.rawValue)
        }
        // libxml2 wants a NULL-terminated array of C strings for the InclusiveNamespaces list.
        var prefixes: [UnsafeMutablePointer<xmlChar>?] = inclusivePrefixes.map { cxml_Strdup($0) } + [nil]
        defer { prefixes.forEach { if let p = $0 { cxml_free(p) } } }
        let result = withUnsafeMutablePointer(to: &visibility) { context in
            prefixes.withUnsafeMutableBufferPointer { list in
                cxml_C14NExecute(document, { userData, candidate, parent in
                    guard let userData else { return 0 }
                    let rule = userData.assumingMemoryBound(to: Visibility.self).pointee
                    // Namespace and attribute nodes are visible when their element is.
                    var node = candidate
                    if let n = node, n.pointee.type == XML_NAMESPACE_DECL { node = parent }
                    var inside = false
                    while let current = node {
                        if current == rule.excluded { return 0 }
                        if current == rule.apex { inside = true; break }
                        node = current.pointee.parent
                    }
                    return inside ? 1 : 0
                }, context, mode, method.mode == .exclusive && inclusivePrefixes.count > 0 ? list.baseAddress : nil,
                               method.withComments ? 1 : 0, buffer)
            }
        }
        guard result >= 0 else { throw XMLError("canonicalization failed") }
        let size = Int(cxml_OutputBufferGetSize(buffer))
        guard size > 0, let content = cxml_OutputBufferGetContent(buffer) else { return [] }
        return Array(UnsafeBufferPointer(start: content, count: size))
    }
}

private struct Visibility {
    let apex: xmlNodePtr
    let excluded: xmlNodePtr?
}

extension XMLElement {
    public var parent: XMLElement? {
        guard let parent = node.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE else { return nil }
        return XMLElement(parent)
    }

    /// Direct children with this local name and namespace.
    public func children(_ localName: String, namespace ns: String) -> [XMLElement] {
        children.filter { $0.localName == localName && $0.namespaceURI == ns }
    }

    public func child(_ localName: String, namespace ns: String) -> XMLElement? {
        children.first { $0.localName == localName && $0.namespaceURI == ns }
    }

    /// The element in this subtree (itself included) whose `Id` (or `ID`/`id`) attribute is `id`.
    public func element(withId id: String) -> XMLElement? {
        for name in ["Id", "ID", "id"] where attribute(name, namespace: nil) == id { return self }
        for child in children { if let found = child.element(withId: id) { return found } }
        return nil
    }

    public static func == (a: XMLElement, b: XMLElement) -> Bool { a.node == b.node }
}
