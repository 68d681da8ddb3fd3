/// One PACEInfo from EF.CardAccess: `SEQUENCE { OID protocol, INTEGER version, INTEGER parameterId OPTIONAL }`.
public struct PACEInfo: Sendable, Equatable {
    /// The protocol OID's content bytes.
    public let protocolOID: [UInt8]
    public let version: Int
    public let parameterID: Int?
}

/// EF.CardAccess (file 011C): a DER `SET OF SecurityInfo`; the PACEInfos tell which PACE
/// variants and curves the card offers. Other SecurityInfos are skipped.
public struct CardAccess: Sendable, Equatable {
    public let paceInfos: [PACEInfo]

    /// id-PACE (0.4.0.127.0.7.2.2.4): every PACE protocol OID starts so.
    static let pacePrefix: [UInt8] = [0x04, 0x00, 0x7F, 0x00, 0x07, 0x02, 0x02, 0x04]

    /// Parses the file's bytes; anything that is not well-formed DER of that shape is an error.
    public init(der: [UInt8]) throws {
        do {
            var reader = TLV.Reader(bytes: der[...])
            let set = try reader.next()
            guard set.tag == 0x31 else { throw PACEError.malformed("EF.CardAccess is not a SET") }
            // A READ BINARY of the whole file may bring the file's unused tail (00 or FF bytes).
            guard der[reader.offset...].allSatisfy({ $0 == 0x00 || $0 == 0xFF }) else {
                throw PACEError.malformed("EF.CardAccess has bytes after its SET")
            }
            paceInfos = try TLV.sequence(set.value).compactMap(Self.paceInfo)
        } catch let error as CardError {
            throw PACEError.malformed("EF.CardAccess: \(error)")
        }
    }

    private static func paceInfo(_ securityInfo: TLV) throws -> PACEInfo? {
        guard securityInfo.tag == 0x30 else { throw PACEError.malformed("a SecurityInfo is not a SEQUENCE") }
        let fields = try TLV.sequence(securityInfo.value)
        guard let oid = fields.first, oid.tag == 0x06, !oid.value.isEmpty else {
            throw PACEError.malformed("a SecurityInfo does not start with an OID")
        }
        guard oid.value.starts(with: pacePrefix), oid.value.count > pacePrefix.count else { return nil }
        guard (2 ... 3).contains(fields.count) else { throw PACEError.malformed("a PACEInfo has \(fields.count) fields") }
        let version = try integer(fields[1])
        let parameterID = try fields.count == 3 ? integer(fields[2]) : nil
        return PACEInfo(protocolOID: oid.value, version: version, parameterID: parameterID)
    }

    /// A small non-negative DER INTEGER (versions and parameter IDs are single digits).
    private static func integer(_ field: TLV) throws -> Int {
        guard field.tag == 0x02, (1 ... 4).contains(field.value.count), field.value[0] & 0x80 == 0 else {
            throw PACEError.malformed("a PACEInfo field is not a small INTEGER")
        }
        return field.value.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The first PACEInfo (in the card's order) this client speaks: PACE version 2, ECDH generic
    /// mapping with AES, on a supported curve.
    public func parameters() throws -> PACEParameters {
        var offered: [String] = []
        for info in paceInfos {
            let name = Self.dotted(info.protocolOID) + (info.parameterID.map { " on parameters \($0)" } ?? "")
            guard info.version == 2, let algorithm = PACEAlgorithm(oid: info.protocolOID) else {
                offered.append(name)
                continue
            }
            do {
                return try PACEParameters(algorithm: algorithm, parameterID: info.parameterID)
            } catch PACEError.unsupported {
                offered.append(name)
            }
        }
        throw PACEError.unsupported(offered.isEmpty ? "EF.CardAccess names no PACE protocol" : offered.joined(separator: ", "))
    }

    /// Selects and reads EF.CardAccess in plain (it is readable before PACE):
    /// `00 A4 02 0C 02 01 1C`, then READ BINARY with Le 256.
    public static func read(from channel: CardChannel) throws -> [UInt8] {
        let select = try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x02, p2: 0x0C, data: [0x01, 0x1C]))
        guard select.isSuccess else { throw PACEError.card(select.sw) }
        let read = try channel.transmit(CommandAPDU(ins: 0xB0, p1: 0x00, p2: 0x00, le: 256))
        guard read.isSuccess || read.sw == 0x6282 else { throw PACEError.card(read.sw) }
        return read.data
    }

    /// An OID's content bytes in dotted form, for messages ("0.4.0.127.0.7.2.2.4.4.4").
    static func dotted(_ oid: [UInt8]) -> String {
        guard let first = oid.first else { return "(empty OID)" }
        var arcs = first < 80 ? [Int(first) / 40, Int(first) % 40] : [2, Int(first) - 80]
        var value = 0
        for byte in oid.dropFirst() {
            guard value < Int.max >> 8 else { return "(oversized OID)" }
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
            }
        }
        return arcs.map(String.init).joined(separator: ".")
    }
}
