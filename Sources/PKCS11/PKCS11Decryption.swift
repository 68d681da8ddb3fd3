import CPKCS11
import Crypto

/// How an RSA private key on a token unwraps a transported key.
public enum DecryptMechanism: Sendable, Equatable {
    /// CKM_RSA_PKCS (CDOC 1.x `xmlenc#rsa-1_5`).
    case rsaPKCS
    /// CKM_RSA_PKCS_OAEP with SHA-256, MGF1-SHA-256 and no label (CDOC2 RSA capsules).
    case rsaOAEPSHA256
}

/// The two operations a recipient's key does on the token: ECDH (C_DeriveKey) and RSA key
/// transport (C_Decrypt). Results come back as `SecretBytes`; every copy on the way is zeroed.
extension PKCS11Session {
    /// ECDH with CKM_ECDH1_DERIVE (CKD_NULL, no shared data, the peer's raw uncompressed point):
    /// the token makes a session-only generic secret that is not sensitive and is extractable,
    /// whose CKA_VALUE is Z (the X coordinate, as long as one coordinate). The object is
    /// destroyed after reading.
    public func deriveECDH(key: UInt, peerPoint: [UInt8]) throws(PKCS11Error) -> SecretBytes {
        guard peerPoint.count > 1, peerPoint.count % 2 == 1, peerPoint[0] == 0x04 else {
            throw PKCS11Error(code: nil, "the sender's key is not an uncompressed EC point")
        }
        let point = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: peerPoint.count)
        defer { point.deallocate() }
        _ = point.initialize(from: peerPoint)
        var parameters = CK_ECDH1_DERIVE_PARAMS()
        parameters.kdf = ck_ec_kdf_t(CKD_NULL)
        parameters.ulSharedDataLen = 0
        parameters.pSharedData = nil
        parameters.ulPublicDataLen = CK_ULONG(peerPoint.count)
        parameters.pPublicData = point.baseAddress

        let template = AttributeTemplate()
        template.add(CK_ATTRIBUTE_TYPE(CKA_CLASS), ulong: CK_ULONG(CKO_SECRET_KEY))
        template.add(CK_ATTRIBUTE_TYPE(CKA_KEY_TYPE), ulong: CK_ULONG(CKK_GENERIC_SECRET))
        template.add(CK_ATTRIBUTE_TYPE(CKA_TOKEN), bool: false)
        template.add(CK_ATTRIBUTE_TYPE(CKA_SENSITIVE), bool: false)
        template.add(CK_ATTRIBUTE_TYPE(CKA_EXTRACTABLE), bool: true)
        template.add(CK_ATTRIBUTE_TYPE(CKA_VALUE_LEN), ulong: CK_ULONG((peerPoint.count - 1) / 2))

        var derived: CK_OBJECT_HANDLE = 0
        let rv: CK_RV = withUnsafeMutableBytes(of: &parameters) { raw in
            var mechanism = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_ECDH1_DERIVE), pParameter: raw.baseAddress,
                                         ulParameterLen: CK_ULONG(raw.count))
            return template.withTemplate { attributes, count in
                module.call("C_DeriveKey") { $0.C_DeriveKey?(handle, &mechanism, CK_OBJECT_HANDLE(key), attributes, count, &derived) }
            }
        }
        try PKCS11Error.check(rv, "C_DeriveKey")
        defer { _ = module.call("C_DestroyObject") { $0.C_DestroyObject?(handle, derived) } }
        return try secretValue(of: derived)
    }

    /// C_Decrypt of a wrapped key with an RSA private key.
    public func decrypt(key: UInt, mechanism: DecryptMechanism, data: [UInt8]) throws(PKCS11Error) -> SecretBytes {
        var oaep = CK_RSA_PKCS_OAEP_PARAMS()
        oaep.hashAlg = CK_MECHANISM_TYPE(CKM_SHA256)
        oaep.mgf = CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256)
        oaep.source = CK_RSA_PKCS_OAEP_SOURCE_TYPE(CKZ_DATA_SPECIFIED)
        oaep.pSourceData = nil
        oaep.ulSourceDataLen = 0
        let initialized: CK_RV = withUnsafeMutableBytes(of: &oaep) { raw in
            var value = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS), pParameter: nil, ulParameterLen: 0)
            if mechanism == .rsaOAEPSHA256 {
                value = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP), pParameter: raw.baseAddress,
                                     ulParameterLen: CK_ULONG(raw.count))
            }
            return module.call("C_DecryptInit") { $0.C_DecryptInit?(handle, &value, CK_OBJECT_HANDLE(key)) }
        }
        try PKCS11Error.check(initialized, "C_DecryptInit")
        var input = data
        let inputCount = CK_ULONG(input.count)
        var length: CK_ULONG = 0
        // A failed C_Decrypt ends the operation; a size query leaves it active.
        try PKCS11Error.check(module.call("C_Decrypt") { $0.C_Decrypt?(handle, &input, inputCount, nil, &length) }, "C_Decrypt")
        var output = [UInt8](repeating: 0, count: Int(length))
        defer { SecretBytes.zero(&output) }
        try PKCS11Error.check(module.call("C_Decrypt") { $0.C_Decrypt?(handle, &input, inputCount, &output, &length) }, "C_Decrypt")
        return SecretBytes(Array(output.prefix(Int(length))))
    }

    /// CKA_VALUE of a secret key object, read into memory that is zeroed after the copy.
    func secretValue(of object: CK_OBJECT_HANDLE) throws(PKCS11Error) -> SecretBytes {
        var attribute = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(CKA_VALUE), pValue: nil, ulValueLen: 0)
        try PKCS11Error.check(module.call("C_GetAttributeValue") { $0.C_GetAttributeValue?(handle, object, &attribute, 1) },
                              "C_GetAttributeValue")
        guard attribute.ulValueLen != CK_ULONG.max, attribute.ulValueLen > 0 else {
            throw PKCS11Error(code: nil, "the token did not give the derived secret's value")
        }
        var bytes = [UInt8](repeating: 0, count: Int(attribute.ulValueLen))
        defer { SecretBytes.zero(&bytes) }
        let rv: CK_RV = bytes.withUnsafeMutableBytes { buffer in
            attribute.pValue = buffer.baseAddress
            return module.call("C_GetAttributeValue") { $0.C_GetAttributeValue?(handle, object, &attribute, 1) }
        }
        try PKCS11Error.check(rv, "C_GetAttributeValue")
        return SecretBytes(Array(bytes.prefix(Int(attribute.ulValueLen))))
    }
}
