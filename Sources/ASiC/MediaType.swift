/// Media types guessed from a file name, as file managers do. Only the extension counts.
public enum MediaType {
    public static let asicE = "application/vnd.etsi.asic-e+zip"
    public static let asicS = "application/vnd.etsi.asic-s+zip"
    public static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
        "css": "text/css", "xml": "application/xml", "json": "application/json", "rtf": "application/rtf",
        "pdf": "application/pdf", "ps": "application/postscript",
        "doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "odg": "application/vnd.oasis.opendocument.graphics",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "svg": "image/svg+xml", "webp": "image/webp",
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "mp4": "video/mp4", "mov": "video/quicktime",
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "bz2": "application/x-bzip2",
        "xz": "application/x-xz", "7z": "application/x-7z-compressed", "tar": "application/x-tar",
        "asice": asicE, "sce": asicE, "bdoc": asicE, "asics": asicS, "scs": asicS,
        "ddoc": "application/x-ddoc", "p7s": "application/pkcs7-signature", "cer": "application/pkix-cert",
        "crt": "application/x-x509-ca-cert", "pem": "application/x-pem-file",
        "eml": "message/rfc822", "ics": "text/calendar", "vcf": "text/vcard",
    ]

    /// Extensions whose content is already compressed: deflating it again only costs time.
    private static let compressedExtensions: Set<String> = [
        "zip", "gz", "tgz", "bz2", "xz", "7z", "jpg", "jpeg", "png", "gif", "webp", "mp3", "mp4", "mov", "ogg",
        "docx", "xlsx", "pptx", "odt", "ods", "odp", "odg", "asice", "sce", "bdoc", "asics", "scs",
    ]

    public static func guess(forName name: String) -> String {
        byExtension[fileExtension(name)] ?? fallback
    }

    static func isAlreadyCompressed(_ name: String) -> Bool {
        compressedExtensions.contains(fileExtension(name))
    }

    /// The last name's extension in ASCII lower case ("" for none, or for a name that starts
    /// with its only dot). Scans back over the UTF-8 bytes: a save asks for every file it writes.
    static func fileExtension(_ name: String) -> String {
        let bytes = name.utf8
        var index = bytes.endIndex
        while index > bytes.startIndex {
            let before = bytes.index(before: index)
            switch bytes[before] {
            case UInt8(ascii: "/"):
                return ""
            case UInt8(ascii: "."):
                if before == bytes.startIndex || bytes[bytes.index(before: before)] == UInt8(ascii: "/") { return "" }
                return String(decoding: bytes[index...].map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
            default:
                index = before
            }
        }
        return ""
    }
}
