import Crypto
import SafeXML

/// The plaintext of a new CDOC 1.x payload, made in pieces as the files are read: one file as
/// it is, several in a DDOC 1.3 `SignedDoc` as libcdoc's DDocWriter writes it (each file's
/// content base64 in 64-character lines). Every file gives exactly the size it declared, which
/// the DDOC and the EncryptionProperties state before its content: one that changes size while
/// it is read is an error.
enum CDOC1PlainPayload {
    static let pieceSize = 1 << 20

    static func produce(_ files: [PlainFileSource], into consume: (UnsafeRawBufferPointer) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: pieceSize)
        defer { SecretBytes.zero(&buffer) }
        if files.count == 1 {
            try read(files[0], buffer: &buffer, into: consume)
            return
        }
        try withoutActuallyEscaping(consume) { consume in
            let text: (String) throws -> Void = { try Array($0.utf8).withUnsafeBytes(consume) }
            try text("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<SignedDoc xmlns=\"\(CDOC1Names.ddocNamespace)\" format=\"DIGIDOC-XML\" version=\"1.3\">\n")
            for (index, file) in files.enumerated() {
                try text("<DataFile ContentType=\"EMBEDDED_BASE64\" Filename=\"\(XMLText.escaped(file.name, inAttribute: true))\" Id=\"D\(index)\" "
                    + "MimeType=\"application/octet-stream\" Size=\"\(file.size)\">")
                let content = CDOC1Base64Lines(output: consume)
                try read(file, buffer: &buffer) { try content.add($0) }
                try content.finish()
                try text("</DataFile>\n")
            }
            try text("</SignedDoc>\n")
        }
    }

    /// Exactly `file.size` bytes of `file`, in pieces of `buffer`.
    private static func read(_ file: PlainFileSource, buffer: inout [UInt8], into consume: (UnsafeRawBufferPointer) throws -> Void) throws {
        var remaining = file.size
        while remaining > 0 {
            let want = Int(min(Int64(buffer.count), remaining))
            let got = try buffer.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
            guard got > 0 else { throw changed(file, "shorter") }
            try buffer.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            remaining -= Int64(got)
        }
        let more = try buffer.withUnsafeMutableBytes { try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<1])) }
        guard more == 0 else { throw changed(file, "longer") }
    }

    private static func changed(_ file: PlainFileSource, _ how: String) -> CDOCError {
        CDOCError(.io, "'\(SafeFileName.escaped(file.name))' became \(how) while it was encrypted")
    }
}
