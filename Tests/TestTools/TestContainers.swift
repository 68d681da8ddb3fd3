import Foundation

/// Containers of the shapes other producers write (and a few they must never write), made by the
/// tests themselves with Python's zipfile: nothing is copied from another project. Each shape is
/// named after what makes it special; the entries are written in the order given, `mimetype`
/// first and stored unless a shape says otherwise.
public enum TestContainers {
    public static let asicE = "application/vnd.etsi.asic-e+zip"
    public static let asicS = "application/vnd.etsi.asic-s+zip"
    /// The five bytes of the usual payload (`test1.txt`).
    public static let payload = Data("1234\n".utf8)

    /// One ZIP entry: a folder entry when `isFolder`, else a file, stored or deflated.
    public struct Entry {
        public let name: String
        public let data: Data
        public let deflated: Bool
        public let isFolder: Bool
        public init(_ name: String, _ data: Data, deflated: Bool = false, isFolder: Bool = false) {
            (self.name, self.data, self.deflated, self.isFolder) = (name, data, deflated, isFolder)
        }
        public init(_ name: String, _ text: String, deflated: Bool = false) { self.init(name, Data(text.utf8), deflated: deflated) }
        public static func folder(_ name: String) -> Entry { Entry(name, Data(), isFolder: true) }
        public static func mimetype(_ type: String) -> Entry { Entry("mimetype", type) }
    }

    /// Writes `entries` as a ZIP at `path`, in that order.
    public static func zip(_ path: String, _ entries: [Entry]) throws {
        let spec = entries.map { ["name": $0.name, "data": $0.data.base64EncodedString(), "deflated": $0.deflated, "folder": $0.isFolder] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        let result = try Shell.python("""
            import base64, json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                for e in json.loads(sys.argv[2]):
                    info = zipfile.ZipInfo(e['name'], (2016, 11, 2, 11, 7, 44))
                    info.compress_type = zipfile.ZIP_DEFLATED if e['deflated'] else zipfile.ZIP_STORED
                    if e['folder']:
                        info.external_attr = 0o40755 << 16 | 0x10
                    z.writestr(info, base64.b64decode(e['data']))
            """, [path, json])
        guard result.status == 0 else { throw ShellError("python3 zipfile failed: \(result.stderr)") }
    }

    /// An ASiC-S at `path`: its `mimetype`, then `entries` (name, bytes) deflated, in that
    /// order; a name ending in "/" is a folder entry.
    public static func asics(_ path: String, _ entries: [(String, [UInt8])]) throws {
        try zip(path, [.mimetype(asicS)] + entries.map { Entry($0.0, Data($0.1), deflated: true, isFolder: $0.0.hasSuffix("/")) })
    }

    /// A manifest listing the container itself ("/") and each (full-path, media type).
    public static func manifest(_ files: [(String, String)], root: String = asicE) -> String {
        let entries = ([("/", root)] + files).map {
            "<manifest:file-entry manifest:full-path=\"\(xmlEscaped($0.0))\" manifest:media-type=\"\(xmlEscaped($0.1))\"/>"
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<manifest:manifest xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\" manifest:version=\"1.2\">\n"
            + entries.joined(separator: "\n") + "\n</manifest:manifest>\n"
    }

    /// An unsigned ASiC-E of `files` (name, bytes), each listed in the manifest as text/plain.
    public static func unsigned(_ path: String, files: [(String, Data)]) throws {
        try zip(path, [.mimetype(asicE), Entry("META-INF/manifest.xml", manifest(files.map { ($0.0, "text/plain") }))]
                + files.map { Entry($0.0, $0.1) })
    }

    // MARK: - ASiC-E shapes

    /// Unsigned, its one data file in a subfolder: `folder/test1.txt`.
    public static func withSubfolderEntry(_ path: String) throws { try unsigned(path, files: [("folder/test1.txt", payload)]) }

    /// A data file whose name has a `..` segment: `folder/../test1.txt` (must be refused).
    public static func withDotDotSegment(_ path: String) throws { try unsigned(path, files: [("folder/../test1.txt", payload)]) }

    /// A data file named `.` (must be refused).
    public static func withDotName(_ path: String) throws { try unsigned(path, files: [(".", payload)]) }

    /// A manifest entry with an empty full-path beside the data file `empty.txt` (must be refused).
    public static func withEmptyManifestPath(_ path: String) throws {
        try zip(path, [.mimetype(asicE), Entry("META-INF/manifest.xml", manifest([("", "text/plain")])), Entry("empty.txt", payload)])
    }

    /// The shape of a signed ASiC-E: the data file and `META-INF/signatures0.xml` holding a
    /// XAdES signature document that references it. The signature is only a shape (its digest
    /// and value are not computed): for the container layer, which does not validate signatures.
    public static func signedShape(_ path: String, dataFile: String = "test.txt", data: Data = payload,
                                   mediaType: String = "text/plain") throws {
        let reference = dataFile.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? dataFile
        let signature = """
            <?xml version="1.0" encoding="UTF-8"?>
            <asic:XAdESSignatures xmlns:asic="http://uri.etsi.org/02918/v1.2.1#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:Signature Id="S0"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2006/12/xml-c14n11"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"/><ds:Reference Id="S0-RefId0" URI="\(xmlEscaped(reference))"><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature></asic:XAdESSignatures>
            """
        try zip(path, [.mimetype(asicE), Entry("META-INF/manifest.xml", manifest([(dataFile, mediaType)])),
                       Entry(dataFile, data), Entry("META-INF/signatures0.xml", signature, deflated: true)])
    }

    // MARK: - ASiC-S shapes

    /// An ASiC-S of one data file and its time-stamp token (`META-INF/timestamp.tst`), optionally
    /// with a `META-INF/` folder entry and a manifest (which ASiC-S may carry).
    public static func timeStamped(_ path: String, dataFile: String = "test1.txt", data: Data = payload, token: Data,
                                   withManifest: Bool = false) throws {
        var entries = [Entry.mimetype(asicS), Entry(dataFile, data)]
        if withManifest {
            entries += [.folder("META-INF/"), Entry("META-INF/manifest.xml", manifest([(dataFile, "application/octet-stream")], root: asicS), deflated: true)]
        }
        try zip(path, entries + [Entry("META-INF/timestamp.tst", token, deflated: true)])
    }

    /// A time-stamped `.asics` whose mimetype says ASiC-E and that has no manifest (must be refused).
    public static func asicsWithASiCEMimetype(_ path: String, token: Data) throws {
        try zip(path, [.mimetype(asicE), Entry("test1.txt", payload), .folder("META-INF/"),
                       Entry("META-INF/timestamp.tst", token, deflated: true)])
    }

    /// An ASiC-S whose data file is in a subfolder (must be refused).
    public static func asicsWithSubfolder(_ path: String, token: Data) throws {
        try zip(path, [.mimetype(asicS), Entry("folder/test1.txt", payload), Entry("META-INF/timestamp.tst", token)])
    }

    /// An RFC 3161 time-stamp token over `data` from the TSA at `tsaURL` (the loopback test TSA),
    /// as ASiC-S stores it: the token, not the whole response.
    public static func timeStampToken(over data: Data, tsaURL: String, in folder: String) throws -> Data {
        let base = folder + "/tst-\(UUID().uuidString.prefix(8))"
        try data.write(to: URL(fileURLWithPath: base + ".data"))
        let result = try Shell.run("/bin/sh", ["-c", """
            set -e
            openssl ts -query -data "$1.data" -sha256 -cert -out "$1.tsq"
            curl -sf -H 'Content-Type: application/timestamp-query' --data-binary @"$1.tsq" -o "$1.tsr" "$2"
            openssl ts -reply -in "$1.tsr" -token_out -out "$1.tst"
            """, "sh", base, tsaURL])
        guard result.status == 0 else { throw ShellError("time-stamp from \(tsaURL) failed: \(result.stderr)") }
        return try Data(contentsOf: URL(fileURLWithPath: base + ".tst"))
    }

    // MARK: - XML that must never be expanded or loaded

    /// Billion laughs in a manifest: entities `ent0`...`ent9`, each ten of the one before, the
    /// last expanded inside an attribute value.
    public static let xmlBombInAttribute = bomb(name: "ent", root: "manifest:manifest") {
        "<manifest:manifest xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\">"
            + "<manifest:file-entry manifest:full-path=\"/\" manifest:media-type=\"\(asicE)\"/>"
            + "<manifest:file-entry manifest:full-path=\"test.txt\" manifest:media-type=\"text/plain\" x=\"\($0)\"/></manifest:manifest>"
    }
    /// Billion laughs (`lol0`...`lol9`) expanded in element content.
    public static let xmlBombInContent = bomb(name: "lol", root: "lolz") { "<lolz>\($0)</lolz>" }

    private static func bomb(name: String, root: String, use: (String) -> String) -> String {
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<!DOCTYPE \(root) [", " <!ENTITY \(name)0 \"lol\">"]
        for level in 1...9 {
            lines.append(" <!ENTITY \(name)\(level) \"" + String(repeating: "&\(name)\(level - 1);", count: 10) + "\">")
        }
        lines.append("]>")
        lines.append(use("&\(name)9;"))
        return lines.joined(separator: "\n") + "\n"
    }

    /// The word an external entity would bring in if it were ever loaded.
    public static let xxeSentinel = "XXESENTINEL"

    /// Writes the two targets of external-entity probes into `folder`: a text file holding the
    /// sentinel and a DTD defining `&sentinel;` as it. Returns (text, dtd) paths.
    public static func writeXXETargets(in folder: String) throws -> (text: String, dtd: String) {
        let text = folder + "/xxe-sentinel.txt", dtd = folder + "/xxe-sentinel.dtd"
        try Data("\(xxeSentinel)\n".utf8).write(to: URL(fileURLWithPath: text))
        try Data("<!ENTITY sentinel \"\(xxeSentinel)\">\n".utf8).write(to: URL(fileURLWithPath: dtd))
        return (text, dtd)
    }

    /// The start of a DigiDoc 1.3 document (DDOC: XML, not a ZIP).
    public static let ddoc = """
        <?xml version="1.0" encoding="UTF-8"?>
        <SignedDoc format="DIGIDOC-XML" version="1.3" xmlns="http://www.sk.ee/DigiDoc/v1.3.0#">
        <DataFile ContentType="EMBEDDED_BASE64" Filename="test1.txt" Id="D0" MimeType="file" Size="5">MTIzNAo=
        </DataFile>
        </SignedDoc>

        """

    // MARK: - Names

    /// A file name full of URI-special characters, and one of non-ASCII letters.
    public static let awkwardName = "0123456789~#%&()=`@{[]}'.txt"
    public static let umlautName = "öäüõ.txt"

    private static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
