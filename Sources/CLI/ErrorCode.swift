import ASiC
import CDOC
import Configuration
import Foundation
import HTTP
import PKCS11
import Signing
import SmartCard
import Trust
import Validation

/// The stable `error.code` of a failed command's JSON (listed in asicfs(1) JSON OUTPUT): a
/// script branches on it, the `message` is for people and may change.
enum ErrorCode: String, CaseIterable {
    case usage, configuration, notFound = "not-found", notAContainer = "not-a-container", refused, busy, io
    case signingFailed = "signing-failed", cancelled, trustUnavailable = "trust-unavailable", network
    case card, token, notValid = "not-valid", failed
    case notARecipient = "not-a-recipient", wrongKey = "wrong-key", tampered, unsupported

    /// The code of an error a command threw.
    static func of(_ error: Error) -> ErrorCode {
        switch error {
        case is UsageError: return .usage
        case is ConfigurationError: return .configuration
        case let error as ContainerError: return of(error)
        case is ContainerBusy: return .busy
        case let error as SigningError: return error.description.contains("cancelled") ? .cancelled : .signingFailed
        case let error as SecretEntryError:
            if case .cancelled = error { return .cancelled }
            return .signingFailed
        case let error as HTTPError:
            if case .cancelled = error { return .cancelled }
            return .network
        case let error as IDCardError:
            if case .cancelled = error { return .cancelled }
            return .card
        case is CardError, is PACEError, is SecureMessagingError: return .card
        case is PKCS11Error: return .token
        case is TrustedListError: return .trustUnavailable
        case let error as CDOCError: return of(error)
        default: return .failed
        }
    }

    private static func of(_ error: CDOCError) -> ErrorCode {
        switch error.code {
        case .notEncrypted, .malformed: return .notAContainer
        case .noRecipient, .severalRecipients: return .notARecipient
        case .wrongKey: return .wrongKey
        case .tampered: return .tampered
        case .unsafeName, .limit: return .refused
        case .unsupported, .needsKeyServer: return .unsupported
        case .io: return .io
        }
    }

    private static func of(_ error: ContainerError) -> ErrorCode {
        switch error {
        case .corruptZip, .notASiC, .invalidName, .invalidXML, .dataMismatch, .unsupported, .notRegularFile: return .notAContainer
        case .refused: return .refused
        case .noSuchFile: return .notFound
        case .io(_, _, let code): return code == ENOENT || code == ENOTDIR ? .notFound : .io
        }
    }
}
