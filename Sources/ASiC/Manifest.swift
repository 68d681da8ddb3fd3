import Foundation
import SafeXML

/// `META-INF/manifest.xml`: the OpenDocument manifest listing every data file and its media type.
public struct Manifest: Equatable, Sendable {
    public static let namespace = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
    public static let path = "META-INF/manifest.xml"
    static let sizeLimit: Int64 = 16 << 20

    public struct FileEntry: Equatable, Sendable {
        public var fullPath: String
        public var mediaType: String
    }

    /// The media type the `/` entry declares (must equal the mimetype).
    public var containerMediaType: String
    /// Data-file entries, in document order (directory entries ending in `/` are dropped).
    public var files: [FileEntry]

    public init(containerMediaType: String, files: [FileEntry]) {
        self.containerMediaType = containerMediaType
        self.files = files
    }

    /// Parses and checks a manifest: one `/` entry, no duplicates, every entry with a path and type.
    /// `demandingMediaTypes: false` (ASiC-S, whose manifest is optional and informative) takes a
    /// manifest without a `/` entry or without media types.
    public static func parse(_ bytes: [UInt8], demandingMediaTypes: Bool = true) throws -> Manifest {
        let doc: SafeXMLDocument
        do {
            doc = try SafeXMLDocument.parse(bytes, name: path)
        } catch let error as XMLError {
            throw ContainerError.invalidXML(path, reason: error.reason)
        }
        guard let root = doc.root, root.localName == "manifest", root.namespaceURI == namespace else {
            throw ContainerError.notASiC("\(path) is not an OpenDocument manifest")
        }
        var rootType: String? = nil
        var files: [FileEntry] = []
        var seen = Set<String>()
        for element in root.children where element.localName == "file-entry" && element.namespaceURI == namespace {
            guard let fullPath = element.attribute("full-path", namespace: namespace) else {
                throw ContainerError.notASiC("a manifest entry has no full-path")
            }
            if fullPath.isEmpty { throw ContainerError.notASiC("a manifest entry has an empty full-path") }
            let mediaType = element.attribute("media-type", namespace: namespace)
            if fullPath == "/" {
                if rootType != nil { throw ContainerError.notASiC("the manifest has more than one '/' entry") }
                guard let mediaType = mediaType ?? (demandingMediaTypes ? nil : "") else {
                    throw ContainerError.notASiC("the manifest's '/' entry has no media-type")
                }
                rootType = mediaType
                continue
            }
            if fullPath.hasSuffix("/") { continue }
            guard seen.insert(fullPath).inserted else {
                throw ContainerError.notASiC("the manifest lists '\(fullPath)' twice")
            }
            guard let mediaType = mediaType ?? (demandingMediaTypes ? nil : MediaType.guess(forName: fullPath)) else {
                throw ContainerError.notASiC("the manifest entry '\(fullPath)' has no media-type")
            }
            files.append(FileEntry(fullPath: fullPath, mediaType: mediaType))
        }
        guard let rootType = rootType ?? (demandingMediaTypes ? nil : "") else {
            throw ContainerError.notASiC("the manifest has no '/' entry")
        }
        return Manifest(containerMediaType: rootType, files: files)
    }

    /// The manifest as the reference implementation writes it.
    public func serialized() -> [UInt8] {
        var xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="no" ?>
        <manifest:manifest xmlns:manifest="\(Self.namespace)" manifest:version="1.2">
          <manifest:file-entry manifest:full-path="/" manifest:media-type="\(XMLText.escaped(containerMediaType, inAttribute: true))"/>

        """
        for file in files {
            xml += "  <manifest:file-entry manifest:full-path=\"\(XMLText.escaped(file.fullPath, inAttribute: true))\" manifest:media-type=\"\(XMLText.escaped(file.mediaType, inAttribute: true))\"/>\n"
        }
        xml += "</manifest:manifest>\n"
        return Array(xml.utf8)
    }
}
