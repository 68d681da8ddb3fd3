import CLibXML2
import Foundation

/// Why an XML document was refused, as one sentence.
public struct XMLError: Error, CustomStringConvertible, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A parsed XML document, read with every network and entity feature of libxml2 turned off.
/// ASiC documents never need a DTD, so any DOCTYPE is refused before parsing: that stops
/// entity-expansion bombs and external-entity (XXE) probes outright. The document may be in any
/// encoding its byte order mark or declaration names (as Xerces, which libdigidocpp uses, reads
/// them); it is turned into UTF-8 first (`XMLEncoding`), and that text is what is checked and parsed.
public final class SafeXMLDocument {
    public let document: xmlDocPtr

    private init(_ document: xmlDocPtr) { self.document = document }
    /// Takes ownership of a document parsed elsewhere in this module (`SafeXMLStreamParser`).
    init(adopting document: xmlDocPtr) { self.document = document }
    deinit { cxml_FreeDoc(document) }

    /// Parses `bytes`; `name` is used in error messages. `largeText` lifts libxml2's 10 MB limit on
    /// one text node (a CDOC 1.x payload is one base64 node); DTDs and entities stay refused.
    public static func parse(_ bytes: [UInt8], name: String, largeText: Bool = false) throws -> SafeXMLDocument {
        // libxml2 is loaded here, on first use (see Sources/CLibXML2/include/cxml.h).
        guard cxml_load() == 0 else { throw XMLError(String(cString: cxml_load_error())) }
        let text = try XMLEncoding.utf8(bytes)
        if containsDoctype(text.bytes) {
            throw XMLError("it declares a DTD or entities, which are not allowed")
        }
        guard let context = cxml_NewParserCtxt() else { throw XMLError("out of memory") }
        defer { cxml_FreeParserCtxt(context) }
        var options = XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
        // Converted text is UTF-8 whatever its declaration says.
        if text.converted { options |= XML_PARSE_IGNORE_ENC.rawValue }
        if largeText { options |= XML_PARSE_HUGE.rawValue }
        let doc = text.bytes.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buf.count, 1)) {
                cxml_CtxtReadMemory(context, $0, Int32(buf.count), name, text.converted ? "UTF-8" : nil, Int32(options))
            }
        }
        guard let doc else {
            var reason = "it is not well-formed XML"
            if let error = cxml_CtxtGetLastError(context), let message = error.pointee.message {
                reason += " (" + String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
                    + ", line \(error.pointee.line))"
            }
            throw XMLError(reason)
        }
        if doc.pointee.intSubset != nil || doc.pointee.extSubset != nil {
            cxml_FreeDoc(doc)
            throw XMLError("it declares a DTD or entities, which are not allowed")
        }
        return SafeXMLDocument(doc)
    }

    /// True when the (UTF-8 or ASCII-based) bytes contain `<!DOCTYPE` or `<!ENTITY` anywhere: XML
    /// allows them only in the prolog, and we refuse any appearance.
    private static func containsDoctype(_ bytes: [UInt8]) -> Bool {
        let needle = Array("<!DOCTYPE".utf8)
        let entity = Array("<!ENTITY".utf8)
        var i = 0
        while i + 8 <= bytes.count {
            if bytes[i] == 0x3C, bytes[i + 1] == 0x21 {
                if i + needle.count <= bytes.count, Array(bytes[i..<i + needle.count]) == needle { return true }
                if Array(bytes[i..<i + entity.count]) == entity { return true }
            }
            i += 1
        }
        return false
    }

    public var root: XMLElement? { cxml_DocGetRootElement(document).map(XMLElement.init) }
}

/// A read-only view of one element of a `SafeXMLDocument` (valid while the document lives).
public struct XMLElement {
    public let node: xmlNodePtr

    public init(_ node: xmlNodePtr) { self.node = node }

    public var localName: String { String(cString: node.pointee.name) }
    public var namespaceURI: String? { node.pointee.ns.flatMap { $0.pointee.href.map { String(cString: $0) } } }

    public var children: [XMLElement] {
        var result: [XMLElement] = []
        var child = node.pointee.children
        while let c = child {
            if c.pointee.type == XML_ELEMENT_NODE { result.append(XMLElement(c)) }
            child = c.pointee.next
        }
        return result
    }

    /// The text content of the element and its descendants.
    public var text: String {
        guard let content = cxml_NodeGetContent(node) else { return "" }
        defer { cxml_free(content) }
        return String(cString: content)
    }

    /// Every descendant element (depth first) with this local name and namespace.
    public func descendants(_ localName: String, namespace ns: String) -> [XMLElement] {
        var found: [XMLElement] = []
        for child in children {
            if child.localName == localName && child.namespaceURI == ns { found.append(child) }
            found += child.descendants(localName, namespace: ns)
        }
        return found
    }

    public func firstDescendant(_ localName: String, namespace ns: String) -> XMLElement? {
        for child in children {
            if child.localName == localName && child.namespaceURI == ns { return child }
            if let found = child.firstDescendant(localName, namespace: ns) { return found }
        }
        return nil
    }

    /// The value of an attribute in namespace `ns` (nil: no namespace), or nil when absent.
    public func attribute(_ name: String, namespace ns: String?) -> String? {
        let value = ns.map { cxml_GetNsProp(node, name, $0) } ?? cxml_GetNoNsProp(node, name)
        guard let value else { return nil }
        defer { cxml_free(value) }
        return String(cString: value)
    }
}
