import Crypto

/// Which CDOC2 recipient record an unlocker opens: the one with the key's own public key, or
/// the symmetric-key / password record (chosen by label when there are several).
enum CDOC2RecipientChoice {
    static func record(in records: [CDOC2Header.Record], for unlocker: Unlocker) throws -> CDOC2Header.Record {
        do {
            return try usableRecord(in: records, for: unlocker)
        } catch let error as CDOCError where error.code == .noRecipient {
            // Key shares (Smart-ID/Mobile-ID with the shares servers) are listed but not supported.
            if !records.isEmpty, records.allSatisfy({ if case .keyShares = $0.capsule { true } else { false } }) {
                throw CDOCError(.unsupported, "this container opens only with CDOC2 key shares (Smart-ID/Mobile-ID), which asicfs does not support")
            }
            throw error
        }
    }

    private static func usableRecord(in records: [CDOC2Header.Record], for unlocker: Unlocker) throws -> CDOC2Header.Record {
        switch unlocker {
        case .key(let key):
            let own: [UInt8]
            do { own = try key.publicKey.rawKeyBytes() } catch { throw CDOCError(.unsupported, "cannot use the key of \(key.name): \(error)") }
            let matching = records.filter {
                switch $0.capsule {
                case .ecc(_, let recipientKey, _), .rsa(let recipientKey, _): recipientKey == own
                default: false
                }
            }
            if matching.isEmpty, let server = records.first(where: {
                if case .keyServer(let recipientKey, _, _, _) = $0.capsule { return recipientKey == own }
                return false
            }) {
                throw needsKeyServer(server)
            }
            return try one(of: matching, none: "no recipient of this container is \(key.name)")
        case .symmetricKey(_, let label):
            let candidates = records.filter { if case .symmetricKey = $0.capsule { true } else { false } }
            return try one(of: chosen(candidates, label), none: "this container has no symmetric-key recipient" + named(label))
        case .password(_, let label):
            let candidates = records.filter { if case .pbkdf2 = $0.capsule { true } else { false } }
            return try one(of: chosen(candidates, label), none: "this container has no password recipient" + named(label))
        }
    }

    /// Decrypting through a key-server capsule needs the server: one sentence saying so.
    static func needsKeyServer(_ record: CDOC2Header.Record) -> CDOCError {
        var server = ""
        if case .keyServer(_, _, let id, _) = record.capsule { server = id }
        return CDOCError(.needsKeyServer, "this recipient's key is kept on the CDOC2 key server '\(SafeFileName.escaped(server))', which asicfs does not contact")
    }

    private static func chosen(_ records: [CDOC2Header.Record], _ label: String?) -> [CDOC2Header.Record] {
        guard let label else { return records }
        return records.filter {
            $0.keyLabel == label || CDOC2KeyLabel.displayName($0.keyLabel) == label || CDOC2KeyLabel.fields($0.keyLabel)?["label"] == label
        }
    }

    private static func named(_ label: String?) -> String { label.map { " labelled '\(SafeFileName.escaped($0))'" } ?? "" }

    private static func one(of records: [CDOC2Header.Record], none: String) throws -> CDOC2Header.Record {
        guard let first = records.first else { throw CDOCError(.noRecipient, none) }
        guard records.count == 1 else {
            let names = records.map { "'\(SafeFileName.escaped(CDOC2KeyLabel.displayName($0.keyLabel)))'" }.joined(separator: ", ")
            throw CDOCError(.severalRecipients, "several recipients fit (\(names)); choose one by its label")
        }
        return first
    }
}
