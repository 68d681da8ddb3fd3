import Crypto
import Foundation

/// Reads trust anchors (configuration key `trust-anchors`) and tsl-cert files.
public enum TrustAnchorFiles {
    static let certificateExtensions: Set<String> = ["pem", "crt", "cer", "der"]

    /// Every certificate in a PEM file (several blocks allowed) or DER file, or, for a folder, in
    /// its `.pem`, `.crt`, `.cer` and `.der` files (sorted by name; other files are ignored).
    public static func load(_ path: String) throws(TrustedListError) -> [Certificate] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw TrustedListError("\(path): no such file or folder")
        }
        guard isFolder.boolValue else { return try certificates(inFile: path) }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            throw TrustedListError("\(path): the folder cannot be read")
        }
        var found: [Certificate] = []
        for name in names.sorted()
        where certificateExtensions.contains((name as NSString).pathExtension.lowercased()) {
            found += try certificates(inFile: (path as NSString).appendingPathComponent(name))
        }
        guard !found.isEmpty else { throw TrustedListError("\(path): the folder holds no .pem, .crt or .cer certificate") }
        return found
    }

    /// The certificates of one file: PEM blocks, else a single DER certificate.
    public static func certificates(inFile path: String) throws(TrustedListError) -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustedListError("\(path): the file cannot be read")
        }
        let bytes = Array(data)
        let fromPEM = Certificate.all(pem: bytes)
        if !fromPEM.isEmpty { return fromPEM }
        if let single = try? Certificate(der: bytes) { return [single] }
        throw TrustedListError("\(path): no certificate in it (neither PEM nor DER)")
    }
}
