import Crypto
import SafeXML

extension TrustedList {
    /// Reads a list and checks its signature: it must verify and be made by one of
    /// `allowedSigners` (the configured tsl-cert for the top list, the pointer's
    /// ServiceDigitalIdentities for a national list). Otherwise the list is refused.
    public static func verified(_ bytes: [UInt8], source: String,
                                allowedSigners: [Certificate]) throws(TrustedListError) -> TrustedList {
        try verified(bytes, source: source, allowedSigners: ListSigners(certificates: allowedSigners))
    }

    /// Reads a list and checks its signature against certificates or fingerprints (the built-in
    /// LOTL signers, `tsl-signer-sha256`) of the certificate in its KeyInfo.
    public static func verified(_ bytes: [UInt8], source: String,
                                allowedSigners: ListSigners) throws(TrustedListError) -> TrustedList {
        let document: SafeXMLDocument
        do { document = try SafeXMLDocument.parse(bytes, name: source) } catch {
            throw TrustedListError("trusted list \(source) cannot be read: \(error)")
        }
        guard let root = document.root else { throw TrustedListError("trusted list \(source) is empty") }
        var list = try parse(root: root, source: source)
        do {
            list.signer = try ListSignature.verify(root: root, allowedSigners: allowedSigners)
        } catch {
            throw TrustedListError("trusted list \(source) is refused: \(error.description)")
        }
        return list
    }
}
