import Foundation

// The CSC API v1 (1.0.4.0) answers asicfs reads, decoded with the service's own member names
// (spec/csc-remote-signing.md §3-§8). Members asicfs needs are required; unknown ones are
// ignored (services add their own). A few members are strings in the spec but numbers or
// booleans at some services (SCAL, PIN.presence): `LenientText` takes either.

/// `auth/login`: the bearer token for the next calls.
struct CSCLogin: Decodable {
    let accessToken: String
    let expiresIn: Int?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", expiresIn = "expires_in"
    }
}

/// `credentials/list`: one page of credential IDs, and the token of the next page if any.
struct CSCCredentialList: Decodable {
    let credentialIDs: [String]
    let nextPageToken: String?
}

/// `credentials/info`: the key, the certificate (and chain), and how signing is authorised.
struct CSCCredentialInfo: Decodable {
    struct Key: Decodable {
        /// `enabled` or `disabled`.
        let status: String
        /// Signature-algorithm OIDs the key can make.
        let algo: [String]
        let len: Int?
        let curve: String?
    }

    struct Cert: Decodable {
        /// `valid`, `expired`, `revoked`, `suspended` (optional).
        let status: String?
        /// Base64 DER, the end-entity certificate first.
        let certificates: [String]?
        let subjectDN: String?
        let issuerDN: String?
        let validFrom: String?
        let validTo: String?
    }

    /// The PIN (or OTP) of an explicit credential: presence `true`, `false` or `optional`;
    /// format `A` (alphanumeric) or `N` (numeric).
    struct Factor: Decodable {
        let presence: LenientText?
        let format: String?
        let label: String?
        let description: String?
        let type: String?
    }

    let description: String?
    let key: Key
    let cert: Cert
    /// `implicit`, `explicit` or `oauth2code`.
    let authMode: String
    /// `1` (default) or `2`: the SAD is bound to the hashes.
    let scal: LenientText?
    let pin: Factor?
    let otp: Factor?
    let multisign: Int?

    enum CodingKeys: String, CodingKey {
        case description, key, cert, authMode, scal = "SCAL", pin = "PIN", otp = "OTP", multisign
    }

    var bindsHashes: Bool { scal?.text == "2" }
    var isExplicit: Bool { authMode == "explicit" }
    /// Explicit mode asks for this factor unless its presence is `false`.
    static func needed(_ factor: Factor?) -> Bool {
        guard let factor else { return false }
        return factor.presence?.text != "false"
    }
}

/// `credentials/authorize`: the Signature Activation Data and how long it lasts.
struct CSCAuthorization: Decodable {
    let sad: String
    let expiresIn: Int?

    enum CodingKeys: String, CodingKey { case sad = "SAD", expiresIn }
}

/// `signatures/signHash`: one Base64 value per hash, in the order sent.
struct CSCSignatures: Decodable {
    let signatures: [String]
}

/// An error answer: `{"error": "invalid_request", "error_description": "..."}`.
struct CSCError: Decodable {
    let error: String
    let description: String?

    enum CodingKeys: String, CodingKey { case error, description = "error_description" }
}

/// A member that is a string by the spec and a number or boolean at some services.
struct LenientText: Decodable {
    let text: String

    init(from decoder: Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let text = try? value.decode(String.self) {
            self.text = text
        } else if let number = try? value.decode(Int.self) {
            text = String(number)
        } else {
            text = try value.decode(Bool.self) ? "true" : "false"
        }
    }
}
