import Crypto
import Foundation
import SafeXML

/// What a XAdES archive time-stamp (xades141:ArchiveTimeStamp, EN 319 132-1 5.5.2) covers, as
/// libdigidocpp computes it: for each ds:Reference in SignedInfo order the canonical
/// SignedProperties or the data file's raw bytes; then C14N(SignedInfo), C14N(SignatureValue)
/// and C14N(KeyInfo); then C14N of every child of UnsignedSignatureProperties before the
/// archive time-stamp (all of them for a new one). C14N is the archive time-stamp's method.
extension XAdESSignature {
    /// The digest of that input. `position` is the archive time-stamp's place among the
    /// UnsignedSignatureProperties' children (nil: a new one, after all of them); `dataFile`
    /// streams a data file's bytes into the hasher.
    public func archiveTimeStampDigest(before position: Int?, method: CanonicalizationMethod, algorithm: DigestAlgorithm,
                                       dataFile: (String, (UnsafeRawBufferPointer) -> Void) throws -> Void) throws -> [UInt8] {
        guard let signedInfo else { throw XAdESError("SignedInfo is missing") }
        guard let signatureValue = signatureValueElement else { throw XAdESError("SignatureValue is missing") }
        guard let keyInfo else { throw XAdESError("KeyInfo is missing, so no archive time-stamp can cover it") }
        guard let properties = unsignedSignatureProperties else { throw XAdESError("UnsignedSignatureProperties is missing") }
        let hasher = Hasher(algorithm)
        for reference in references {
            if reference.isSignedProperties {
                guard reference.uri.hasPrefix("#"), let target = element.element(withId: String(reference.uri.dropFirst())) else {
                    throw XAdESError("SignedProperties not found")
                }
                hasher.update(try target.canonicalized(method))
            } else {
                try dataFile(reference.dataFileName) { hasher.update($0) }
            }
        }
        for part in [signedInfo, signatureValue, keyInfo] { hasher.update(try part.canonicalized(method)) }
        for (index, child) in properties.children.enumerated() where position.map({ index < $0 }) ?? true {
            hasher.update(try child.canonicalized(method))
        }
        return hasher.finish()
    }
}
