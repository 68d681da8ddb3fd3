import CPKCS11
import Crypto

/// How a key signs: asicfs always hashes itself (SoftHSM and cards offer no CKM_ECDSA_SHA384),
/// so every mechanism here takes a digest or a DigestInfo.
public enum SignMechanism: Sendable, Equatable {
    /// CKM_ECDSA over the digest; the module returns raw r||s.
    case ecdsa
    /// CKM_RSA_PKCS over a DER DigestInfo (the caller builds it).
    case rsaPKCS
    /// CKM_RSA_PKCS_PSS over the digest: MGF1 with the same hash, salt as long as the digest.
    case rsaPSS(DigestAlgorithm)
}

/// Object classes and attributes the signer reads, without C names outside this module.
public enum ObjectClass: Sendable {
    case certificate, privateKey, publicKey

    var raw: CK_OBJECT_CLASS {
        switch self {
        case .certificate: CK_OBJECT_CLASS(CKO_CERTIFICATE)
        case .privateKey: CK_OBJECT_CLASS(CKO_PRIVATE_KEY)
        case .publicKey: CK_OBJECT_CLASS(CKO_PUBLIC_KEY)
        }
    }
}

public enum ObjectAttribute: Sendable {
    case id, label, value, keyType, alwaysAuthenticate

    var raw: CK_ATTRIBUTE_TYPE {
        switch self {
        case .id: CK_ATTRIBUTE_TYPE(CKA_ID)
        case .label: CK_ATTRIBUTE_TYPE(CKA_LABEL)
        case .value: CK_ATTRIBUTE_TYPE(CKA_VALUE)
        case .keyType: CK_ATTRIBUTE_TYPE(CKA_KEY_TYPE)
        case .alwaysAuthenticate: CK_ATTRIBUTE_TYPE(CKA_ALWAYS_AUTHENTICATE)
        }
    }
}

/// One session on a token: finding objects, reading their attributes, logging in, signing.
/// Closed (and logged out, as PKCS#11 does when the last session of an application closes)
/// when released.
public final class PKCS11Session: @unchecked Sendable {
    // Internal, not private: the key-agreement and decryption calls live in their own file.
    let module: PKCS11Module
    let handle: CK_SESSION_HANDLE

    init(module: PKCS11Module, handle: CK_SESSION_HANDLE) {
        self.module = module
        self.handle = handle
    }

    deinit { _ = module.call("C_CloseSession") { $0.C_CloseSession?(handle) } }

    /// Object handles of one class, optionally with one CKA_ID.
    public func objects(_ objectClass: ObjectClass, id: [UInt8]? = nil) throws(PKCS11Error) -> [UInt] {
        var classValue = objectClass.raw
        var idBytes = id ?? []
        let rv: CK_RV = withUnsafeMutableBytes(of: &classValue) { classPointer in
            idBytes.withUnsafeMutableBytes { idPointer in
                var template = [CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: classPointer.baseAddress,
                                             ulValueLen: CK_ULONG(classPointer.count))]
                if id != nil {
                    template.append(CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(CKA_ID), pValue: idPointer.baseAddress,
                                                 ulValueLen: CK_ULONG(idPointer.count)))
                }
                let count = CK_ULONG(template.count)
                return module.call("C_FindObjectsInit") { $0.C_FindObjectsInit?(handle, &template, count) }
            }
        }
        try PKCS11Error.check(rv, "C_FindObjectsInit")
        defer { _ = module.call("C_FindObjectsFinal") { $0.C_FindObjectsFinal?(handle) } }
        var found: [UInt] = []
        var batch = [CK_OBJECT_HANDLE](repeating: 0, count: 32)
        while true {
            var count: CK_ULONG = 0
            let capacity = CK_ULONG(batch.count)
            try PKCS11Error.check(module.call("C_FindObjects") { $0.C_FindObjects?(handle, &batch, capacity, &count) }, "C_FindObjects")
            found += batch.prefix(Int(count)).map { UInt($0) }
            if count < capacity { return found }
        }
    }

    /// An attribute's bytes, or nil when the object has none (or keeps it secret).
    public func attribute(_ attribute: ObjectAttribute, of object: UInt) throws(PKCS11Error) -> [UInt8]? {
        var template = CK_ATTRIBUTE(type: attribute.raw, pValue: nil, ulValueLen: 0)
        let first = module.call("C_GetAttributeValue") { $0.C_GetAttributeValue?(handle, CK_OBJECT_HANDLE(object), &template, 1) }
        if first == CK_RV(CKR_ATTRIBUTE_TYPE_INVALID) || first == CK_RV(CKR_ATTRIBUTE_SENSITIVE) { return nil }
        try PKCS11Error.check(first, "C_GetAttributeValue")
        // CK_UNAVAILABLE_INFORMATION is ~0.
        guard template.ulValueLen != CK_ULONG.max else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(template.ulValueLen))
        let rv: CK_RV = bytes.withUnsafeMutableBytes { buffer in
            template.pValue = buffer.baseAddress
            return module.call("C_GetAttributeValue") { $0.C_GetAttributeValue?(handle, CK_OBJECT_HANDLE(object), &template, 1) }
        }
        try PKCS11Error.check(rv, "C_GetAttributeValue")
        return Array(bytes.prefix(Int(template.ulValueLen)))
    }

    /// The key type of a key object: "EC", "RSA" or the CKK number.
    public func keyType(of object: UInt) throws(PKCS11Error) -> String? {
        guard let bytes = try attribute(.keyType, of: object), bytes.count == MemoryLayout<CK_KEY_TYPE>.size else { return nil }
        let type = bytes.withUnsafeBytes { $0.loadUnaligned(as: CK_KEY_TYPE.self) }
        switch type {
        case CK_KEY_TYPE(CKK_EC): return "EC"
        case CK_KEY_TYPE(CKK_RSA): return "RSA"
        default: return "CKK \(type)"
        }
    }

    /// True when the key wants the PIN again right before each signature (CKA_ALWAYS_AUTHENTICATE).
    public func alwaysAuthenticates(_ key: UInt) throws(PKCS11Error) -> Bool {
        (try attribute(.alwaysAuthenticate, of: key)).map { $0.contains { $0 != 0 } } ?? false
    }

    /// C_Login as the user. `pin` nil: the token has a PIN pad (protected authentication path)
    /// and the person types the PIN there. Already logged in counts as success.
    public func login(pin: SecretBytes?, contextSpecific: Bool = false) throws(PKCS11Error) {
        let user = CK_USER_TYPE(contextSpecific ? CKU_CONTEXT_SPECIFIC : CKU_USER)
        let rv: CK_RV
        if let pin {
            rv = pin.withBytes { bytes in
                let base = UnsafeMutablePointer(mutating: bytes.bindMemory(to: CK_UTF8CHAR.self).baseAddress)
                let length = CK_ULONG(bytes.count)
                return module.call("C_Login") { $0.C_Login?(handle, user, base, length) }
            }
        } else {
            rv = module.call("C_Login") { $0.C_Login?(handle, user, nil, 0) }
        }
        if rv == CK_RV(CKR_USER_ALREADY_LOGGED_IN) { return }
        try PKCS11Error.check(rv, "C_Login")
    }

    public func logout() {
        _ = module.call("C_Logout") { $0.C_Logout?(handle) }
    }

    /// Signs `data` (a digest, or a DigestInfo for `.rsaPKCS`) with `key`. `beforeSign` runs
    /// between C_SignInit and C_Sign: the place for a CKU_CONTEXT_SPECIFIC login.
    public func sign(key: UInt, mechanism: SignMechanism, data: [UInt8],
                     beforeSign: () throws -> Void = {}) throws -> [UInt8] {
        var pss = CK_RSA_PKCS_PSS_PARAMS()
        var mechanismValue = CK_MECHANISM(mechanism: 0, pParameter: nil, ulParameterLen: 0)
        switch mechanism {
        case .ecdsa: mechanismValue.mechanism = CK_MECHANISM_TYPE(CKM_ECDSA)
        case .rsaPKCS: mechanismValue.mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS)
        case .rsaPSS(let digest):
            guard let (hash, mgf) = Self.pssParameters(digest) else {
                throw PKCS11Error(code: nil, "RSA-PSS with \(digest.rawValue) is not supported")
            }
            pss.hashAlg = hash
            pss.mgf = mgf
            pss.sLen = CK_ULONG(digest.length)
            mechanismValue.mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS)
        }
        let initialized: CK_RV = withUnsafeMutableBytes(of: &pss) { parameters in
            if case .rsaPSS = mechanism {
                mechanismValue.pParameter = parameters.baseAddress
                mechanismValue.ulParameterLen = CK_ULONG(parameters.count)
            }
            return module.call("C_SignInit") { $0.C_SignInit?(handle, &mechanismValue, CK_OBJECT_HANDLE(key)) }
        }
        try PKCS11Error.check(initialized, "C_SignInit")
        try beforeSign()
        var input = data
        var length: CK_ULONG = 0
        let inputCount = CK_ULONG(input.count)
        try PKCS11Error.check(module.call("C_Sign") { $0.C_Sign?(handle, &input, inputCount, nil, &length) }, "C_Sign")
        var signature = [UInt8](repeating: 0, count: Int(length))
        try PKCS11Error.check(module.call("C_Sign") { $0.C_Sign?(handle, &input, inputCount, &signature, &length) }, "C_Sign")
        return Array(signature.prefix(Int(length)))
    }

    static func pssParameters(_ digest: DigestAlgorithm) -> (CK_MECHANISM_TYPE, CK_RSA_PKCS_MGF_TYPE)? {
        switch digest {
        case .sha256: (CK_MECHANISM_TYPE(CKM_SHA256), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256))
        case .sha384: (CK_MECHANISM_TYPE(CKM_SHA384), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384))
        case .sha512: (CK_MECHANISM_TYPE(CKM_SHA512), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512))
        default: nil
        }
    }
}
