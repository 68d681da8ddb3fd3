import CLibXML2
import Foundation

/// Parses a document fed in pieces into a `SafeXMLDocument`, except the text directly inside the
/// element at `divertedPath` (local names from the root), which goes to `text` as it arrives and
/// is left out of the tree: a CDOC 1.x payload is one base64 text node of any size. The same
/// safety as `SafeXMLDocument.parse`: no DTD (a DOCTYPE stops the parse), no entities, no
/// network, and libxml2 prints nothing. Documents in an encoding other than UTF-8/ASCII are
/// gathered whole and converted first (`XMLEncoding`), so only they are held in memory.
///
/// With `literalText`, the diverted text skips libxml2 where it can (gigabytes of base64 cost it
/// ~17× the cipher's time): whenever the parser stands inside the diverted element with all it
/// was fed parsed, the bytes that follow go to `literalText`, which takes the longest prefix it
/// accepts as text; the parser resumes at the first byte it did not take (`<` of the next tag,
/// or anything else, such as a character reference, which the parser then reads and hands to
/// `text` as usual). Pieces are given to libxml2 ending just after each `>`, so that after the
/// start tag it holds nothing back.
public final class SafeXMLStreamParser {
    public typealias TextHandler = (UnsafeRawBufferPointer) throws -> Void
    /// Takes a prefix of raw text and returns its length. It may take only bytes that XML text
    /// passes on unchanged (never `<` or `&`; a CR it must treat as the LF XML would make of it).
    public typealias LiteralTextHandler = (UnsafeRawBufferPointer) throws -> Int
    /// The diverted element starts (with its attributes; the element is valid only during the
    /// call) or ends (nil).
    public typealias EdgeHandler = (XMLElement?) throws -> Void

    private let name: String
    private let path: [String]
    private let largeText: Bool
    private let handler: TextHandler
    private let literalHandler: LiteralTextHandler?
    private let edgeHandler: EdgeHandler?
    private var push: OpaquePointer?
    private var cPath: [UnsafeMutablePointer<CChar>?] = []
    private var cPathArray: UnsafeMutablePointer<UnsafePointer<CChar>?>?
    private var cName: UnsafeMutablePointer<CChar>?
    private var handlerError: Error?
    /// The first bytes, held until the encoding is known; then `whole` gathers a non-UTF-8 document.
    private var head: [UInt8] = []
    private var whole: [UInt8]?
    private var decided = false

    /// How many bytes decide the encoding (the XML declaration is in them).
    static let headLength = 1024
    /// How large a document in another encoding may be (it is converted whole) without largeText.
    static let wholeLimit = 64 << 20

    public init(name: String, divertedPath: [String], largeText: Bool = false,
                literalText: LiteralTextHandler? = nil, edges: EdgeHandler? = nil, text: @escaping TextHandler) {
        self.name = name
        path = divertedPath
        self.largeText = largeText
        literalHandler = literalText
        edgeHandler = edges
        handler = text
    }

    deinit {
        if let push { cxml_push_free(push) }
        cPath.forEach { free($0) }
        cPathArray?.deallocate()
        free(cName)
    }

    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        if !decided {
            head += bytes
            if head.count >= Self.headLength { try decide() }
            return
        }
        if whole != nil {
            whole! += bytes
            // Only a document in another encoding is held whole; without largeText it stays small.
            if !largeText && whole!.count > Self.wholeLimit {
                throw XMLError("a document in an encoding other than UTF-8 larger than \(Self.wholeLimit >> 20) MiB is not read")
            }
            return
        }
        try parseStreaming(bytes)
    }

    /// Ends the input: the document, or why it was refused.
    public func finish() throws -> SafeXMLDocument {
        if !decided { try decide() }
        if let bytes = whole {
            whole = nil
            let text = try XMLEncoding.utf8(bytes)
            try start(converted: text.converted)
            try text.bytes.withUnsafeBytes { try parse($0, terminate: true) }
        } else {
            try parse(UnsafeRawBufferPointer(start: nil, count: 0), terminate: true)
        }
        guard let push, let document = cxml_push_take_document(push) else { throw XMLError("it is not well-formed XML") }
        if document.pointee.intSubset != nil || document.pointee.extSubset != nil {
            cxml_FreeDoc(document)
            throw XMLError("it declares a DTD or entities, which are not allowed")
        }
        return SafeXMLDocument(adopting: document)
    }

    private func decide() throws {
        decided = true
        let bytes = head
        head = []
        if XMLEncoding.needsConversion(head: bytes) {
            whole = bytes
            return
        }
        try start(converted: false)
        try bytes.withUnsafeBytes { try parseStreaming($0) }
    }

    /// Feeds `bytes`, the diverted element's plain text straight to `literalHandler` where it can.
    private func parseStreaming(_ bytes: UnsafeRawBufferPointer) throws {
        guard let literalHandler else { return try parse(bytes, terminate: false) }
        var rest = bytes
        while !rest.isEmpty {
            if let push, cxml_push_idle_in_diverted(push) != 0 {
                let taken = try literalHandler(rest)
                precondition(taken >= 0 && taken <= rest.count, "a literal text handler took more than it was given")
                rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
                if rest.isEmpty { return }
            }
            // Up to and including the next '>': after a start tag, libxml2 then holds nothing back.
            let end = memchr(rest.baseAddress!, 0x3E, rest.count).map { rest.baseAddress!.distance(to: UnsafeRawPointer($0)) + 1 }
                ?? rest.count
            try parse(UnsafeRawBufferPointer(rebasing: rest[..<end]), terminate: false)
            rest = UnsafeRawBufferPointer(rebasing: rest[end...])
        }
    }

    private func start(converted: Bool) throws {
        guard cxml_load() == 0 else { throw XMLError(String(cString: cxml_load_error())) }
        cPath = path.map { strdup($0) }
        cPathArray = .allocate(capacity: max(cPath.count, 1))
        for (index, element) in cPath.enumerated() { cPathArray![index] = UnsafePointer(element) }
        cName = strdup(name)
        var options = XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
        if converted { options |= XML_PARSE_IGNORE_ENC.rawValue }
        if largeText { options |= XML_PARSE_HUGE.rawValue }
        let callback: cxml_text_fn = { info, text, length in
            let parser = Unmanaged<SafeXMLStreamParser>.fromOpaque(info!).takeUnretainedValue()
            do {
                try parser.handler(UnsafeRawBufferPointer(start: text, count: Int(length)))
                return 0
            } catch {
                parser.handlerError = error
                return 1
            }
        }
        push = cxml_push_new(cPathArray, Int32(cPath.count), callback, Unmanaged.passUnretained(self).toOpaque(),
                             Int32(options), cName)
        guard push != nil else { throw XMLError("out of memory") }
        if edgeHandler != nil {
            cxml_push_set_edges(push, { info, element, entering in
                let parser = Unmanaged<SafeXMLStreamParser>.fromOpaque(info!).takeUnretainedValue()
                do {
                    try parser.edgeHandler?(entering != 0 ? element.map(XMLElement.init) : nil)
                    return 0
                } catch {
                    parser.handlerError = error
                    return 1
                }
            })
        }
    }

    private func parse(_ bytes: UnsafeRawBufferPointer, terminate: Bool) throws {
        guard let push else { return }
        // libxml2 takes at most 2 GiB at once; a piece here is far smaller.
        let status = cxml_push_feed(push, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                                    terminate ? 1 : 0)
        if let handlerError { throw handlerError }
        if cxml_push_saw_doctype(push) != 0 { throw XMLError("it declares a DTD or entities, which are not allowed") }
        guard status == 0 else {
            var reason = "it is not well-formed XML"
            if let error = cxml_push_last_error(push), let message = error.pointee.message {
                reason += " (" + Self.oneLine(String(cString: message)) + ", line \(error.pointee.line))"
            }
            throw XMLError(reason)
        }
    }

    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
            .trimmingCharacters(in: .whitespaces)
    }
}
