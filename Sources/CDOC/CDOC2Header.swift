import Crypto

/// The CDOC2 FlatBuffers header (spec §2.2): its recipient records, read with every offset
/// checked, and written back in the same schema.
struct CDOC2Header {
    enum Capsule {
        case ecc(curve: EllipticCurve?, recipientKey: [UInt8], senderKey: [UInt8])
        case rsa(recipientKey: [UInt8], encryptedKEK: [UInt8])
        case keyServer(recipientKey: [UInt8], rsa: Bool, serverID: String, transactionID: String)
        case symmetricKey(salt: [UInt8])
        case pbkdf2(salt: [UInt8], passwordSalt: [UInt8], algorithm: Int, iterations: Int)
        case keyShares
        /// An unknown capsule type: listed, never usable.
        case unknown(type: Int)
    }

    struct Record {
        var capsule: Capsule
        var keyLabel: String
        var encryptedFMK: [UInt8]
        /// 1 = XOR, the only method defined.
        var fmkMethod: Int
    }

    static let chacha20Poly1305 = 1
    var records: [Record]
    var payloadMethod: Int = chacha20Poly1305

    // Curve numbers of the schema (libcdoc adds 2 and 3).
    static func curve(_ number: Int) -> EllipticCurve? {
        switch number { case 1: .p384; case 2: .p256; case 3: .p521; default: nil }
    }

    static func number(of curve: EllipticCurve) -> UInt8? {
        switch curve { case .p384: 1; case .p256: 2; case .p521: 3; default: nil }
    }

    /// Parses the header bytes; anything out of bounds or missing is `.malformed`.
    static func parse(_ bytes: [UInt8]) throws -> CDOC2Header {
        do {
            let root = try FlatBuffersReader(bytes).root()
            let method = Int(try root.u8(1))
            guard let tables = try root.tables(0) else { throw FlatBuffersReader.Invalid() }
            let records = try tables.map { record -> Record in
                guard let label = try record.string(2), let fmk = try record.bytes(3) else { throw FlatBuffersReader.Invalid() }
                let type = Int(try record.u8(0))
                let capsule = try record.table(1)
                return Record(capsule: try Self.capsule(type: type, capsule), keyLabel: label, encryptedFMK: fmk,
                              fmkMethod: Int(Int8(bitPattern: try record.u8(4))))
            }
            return CDOC2Header(records: records, payloadMethod: method)
        } catch is FlatBuffersReader.Invalid {
            throw CDOCError(.malformed, "the CDOC2 header is damaged")
        }
    }

    private static func capsule(type: Int, _ table: FlatBuffersTable?) throws -> Capsule {
        guard let table else {
            if type == 0 { return .unknown(type: 0) }
            throw FlatBuffersReader.Invalid()
        }
        switch type {
        case 1:
            return .ecc(curve: curve(Int(try table.u8(0))), recipientKey: try table.bytes(1) ?? [], senderKey: try table.bytes(2) ?? [])
        case 2:
            return .rsa(recipientKey: try table.bytes(0) ?? [], encryptedKEK: try table.bytes(1) ?? [])
        case 3:
            let detailsType = try table.u8(0)
            let details = try table.table(1)
            let key = try details?.bytes(detailsType == 1 ? 1 : 0) ?? []
            return .keyServer(recipientKey: key, rsa: detailsType == 2, serverID: try table.string(2) ?? "",
                              transactionID: try table.string(3) ?? "")
        case 4:
            return .symmetricKey(salt: try table.bytes(0) ?? [])
        case 5:
            return .pbkdf2(salt: try table.bytes(0) ?? [], passwordSalt: try table.bytes(1) ?? [],
                           algorithm: Int(try table.u8(2)), iterations: try table.i32(3))
        case 6:
            return .keyShares
        default:
            return .unknown(type: type)
        }
    }

    /// The header bytes as asicfs writes them.
    func serialized() -> [UInt8] {
        typealias V = FlatBuffersBuilder.Value
        let recordTables: [[V?]] = records.map { record in
            let (type, capsule): (UInt8, [V?]) = switch record.capsule {
            case .ecc(let curve, let recipientKey, let senderKey):
                (1, [.u8(curve.flatMap(Self.number) ?? 0), .bytes(recipientKey), .bytes(senderKey)])
            case .rsa(let recipientKey, let encryptedKEK):
                (2, [.bytes(recipientKey), .bytes(encryptedKEK)])
            case .symmetricKey(let salt):
                (4, [.bytes(salt)])
            case .pbkdf2(let salt, let passwordSalt, let algorithm, let iterations):
                (5, [.bytes(salt), .bytes(passwordSalt), .u8(UInt8(algorithm)), .i32(Int32(iterations))])
            case .keyServer, .keyShares, .unknown:
                preconditionFailure("asicfs does not write this capsule")
            }
            return [.u8(type), .table(capsule), .string(record.keyLabel), .bytes(record.encryptedFMK),
                    .u8(UInt8(record.fmkMethod))]
        }
        return FlatBuffersBuilder.build(root: [.tables(recordTables), .u8(UInt8(payloadMethod))])
    }
}
