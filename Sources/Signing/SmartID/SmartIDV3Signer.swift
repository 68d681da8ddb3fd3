import Crypto
import Foundation
import Synchronization

/// Signs with Smart-ID's RP API v3 (RP API 3.2.3, the spec's §4 flows B, C and A):
/// - `country=`+`idcode=`: certificate choice by notification, then notification signing;
/// - `document=`: the account's certificate at once, then notification signing;
/// - `qr=yes`: a device-link certificate choice shown as a QR code (a new link each second),
///   then the signature linked to it, which the app shows without a code.
/// Notification signing shows the code the service returns (v3 makes it; it is not computed).
/// RSASSA-PSS unless `smart-id.signature-algorithm = pkcs1`.
final class SmartIDV3Signer: Signer {
    let method = "smart-id"
    let request: SmartIDRequest
    let client: SmartIDClient
    let scheme: SignatureAlgorithm.Scheme
    /// The account whose certificate was chosen, and for qr=yes the certificate choice to link to.
    private let chosen = Mutex<(document: String, linkedSessionID: String?)?>(nil)

    init(request: SmartIDRequest, context: SignerContext) throws {
        self.request = request
        client = try SmartIDClient(context: context)
        scheme = context.configuration["smart-id.signature-algorithm"] == "pkcs1" ? .rsaPKCS1 : .rsaPSS
    }

    /// SHA-256 with RSASSA-PSS (salt = 32, MGF1-SHA-256: the parameters Smart-ID uses and
    /// libdigidocpp writes as sha256-rsa-MGF1), or PKCS#1 v1.5.
    func algorithm(for certificate: Certificate) -> SignatureAlgorithm {
        SignatureAlgorithm(scheme, .sha256)
    }

    func certificate(events: (SigningEvent) -> Void) throws -> Certificate {
        switch request.account {
        case .person:
            events(.step("Smart-ID: asking for the certificate (the app asks which account to use if there are several)"))
            let status = try client.waitForSuccess(of: try client.startCertificateChoiceV3(person: request.account))
            let (certificate, document) = try SmartIDSigner.chosen(status.cert, document: status.result?.documentNumber)
            chosen.withLock { $0 = (document, nil) }
            return certificate
        case .document(let document):
            events(.step("Smart-ID: reading the account's certificate"))
            let (certificate, _) = try SmartIDSigner.chosen(try client.certificateV3(document: document), document: document)
            chosen.withLock { $0 = (document, nil) }
            return certificate
        case .scanner:
            let session = try client.startCertificateChoiceDeviceLink()
            events(.waitingForUser("Smart-ID: scan the QR code with the Smart-ID app"))
            var shown = -1
            // Polls of at most a second: the QR code gets a new link (elapsedSeconds, authCode) each second.
            let status = try client.waitForSuccess(of: session.sessionID, longestPoll: 1) {
                let elapsed = max(0, Int(Date().timeIntervalSince(session.received)))
                guard elapsed != shown else { return }
                shown = elapsed
                events(.deviceLink(try session.link.qrLink(elapsedSeconds: elapsed), elapsedSeconds: elapsed))
            }
            if let flow = status.signature?.flowType, flow != "QR" {
                throw SigningError("Smart-ID: the account was chosen by '\(SmartIDFailure.printable(flow))', not the QR code offered")
            }
            events(.step("Smart-ID: the QR code was scanned"))
            let (certificate, document) = try SmartIDSigner.chosen(status.cert, document: status.result?.documentNumber)
            chosen.withLock { $0 = (document, session.sessionID) }
            return certificate
        }
    }

    func sign(digest: [UInt8], algorithm: SignatureAlgorithm, events: (SigningEvent) -> Void) throws -> [UInt8] {
        guard algorithm.scheme == .rsaPSS || algorithm.scheme == .rsaPKCS1 else {
            throw SigningError("Smart-ID signs with RSA (PSS or PKCS#1 v1.5), not \(algorithm)")
        }
        guard let (document, linked) = chosen.withLock({ $0 }) else {
            throw SigningError("Smart-ID: the certificate must be chosen before signing")
        }
        let sessionID: String
        if let linked {
            sessionID = try client.startSignatureLinked(document: document, linkedSessionID: linked, digest: digest,
                                                        algorithm: algorithm, interactions: request.interactions)
            events(.waitingForUser("Smart-ID: confirm the signature in the Smart-ID app with PIN2"))
        } else {
            let (started, code) = try client.startSignatureNotification(document: document, digest: digest, algorithm: algorithm,
                                                                        interactions: request.interactions)
            sessionID = started
            events(.verificationCode(code))
            events(.waitingForUser("Smart-ID: if the app shows the code \(code), enter PIN2 to sign; otherwise cancel there"))
        }
        let status = try client.waitForSuccess(of: sessionID)
        try Self.check(status, algorithm: algorithm, flow: linked == nil ? "Notification" : "QR")
        guard let value = Data(base64Encoded: try SmartIDFailure.required(status.signature?.value, "signature.value")), !value.isEmpty else {
            throw SigningError("Smart-ID: the service's signature.value is not Base64")
        }
        return [UInt8](value)
    }

    /// What the service says it did must be what was asked (the spec's §9 client duties).
    static func check(_ status: SmartIDSessionStatus, algorithm: SignatureAlgorithm, flow: String) throws {
        let used = try SmartIDFailure.required(status.signature?.signatureAlgorithm, "signature.signatureAlgorithm")
        let protocolUsed = try SmartIDFailure.required(status.signatureProtocol, "signatureProtocol")
        guard protocolUsed == "RAW_DIGEST_SIGNATURE" else {
            throw SigningError("Smart-ID: the service used the signature protocol '\(SmartIDFailure.printable(protocolUsed))', not RAW_DIGEST_SIGNATURE")
        }
        if let flowType = status.signature?.flowType, flowType != flow {
            throw SigningError("Smart-ID: the signature came by '\(SmartIDFailure.printable(flowType))', not the \(flow) flow offered")
        }
        if algorithm.scheme == .rsaPKCS1 {
            let expected = try pkcs1Name(algorithm.digest)
            guard used == expected else {
                throw SigningError("Smart-ID: the service signed with '\(SmartIDFailure.printable(used))', not the \(expected) asked for")
            }
            return
        }
        let parameters = status.signature?.signatureAlgorithmParameters
        let hash = algorithm.digest.rawValue
        let mask = parameters?.maskGenAlgorithm
        guard used == "rsassa-pss", parameters?.hashAlgorithm == hash, parameters?.saltLength == algorithm.digest.length,
              mask?.algorithm == "id-mgf1", mask?.parameters?.hashAlgorithm == hash,
              (parameters?.trailerField ?? "0xbc") == "0xbc" else {
            throw SigningError("Smart-ID: the service signed with '\(SmartIDFailure.printable(used))' and parameters other "
                + "than the RSASSA-PSS with \(hash) (MGF1 \(hash), salt \(algorithm.digest.length)) asked for")
        }
    }

    static func pkcs1Name(_ digest: DigestAlgorithm) throws -> String {
        guard let name = SmartIDSigner.algorithmNames[digest] else {
            throw SigningError("Smart-ID signs PKCS#1 v1.5 with SHA-256, SHA-384 or SHA-512 only, not \(digest.rawValue)")
        }
        return name
    }
}
