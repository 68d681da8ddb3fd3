import Crypto

/// The AES secure-messaging transform of ICAO 9303-11 §9.8 (the state of one session): wraps
/// plain commands and unwraps protected responses. The send sequence counter (SSC) is 16 bytes,
/// big-endian, 0 after PACE, and stepped before each command and again before each response.
struct SecureMessaging {
    private let encryptionKey: SecretBytes
    private let macKey: SecretBytes
    private(set) var counter: [UInt8]

    init(encryptionKey: SecretBytes, macKey: SecretBytes, counter: [UInt8] = AES.zeroBlock) {
        self.encryptionKey = encryptionKey
        self.macKey = macKey
        self.counter = counter
    }

    /// `CLA|0C INS P1 P2 Lc [87 L 01 c | 85 L c] [97 01 Le] 8E 08 MAC 00`: the data encrypted
    /// (DO87 for even INS, DO85 for odd), Le in DO97 (256 as 00), and a MAC over
    /// pad(SSC ‖ pad(header) ‖ DOs).
    mutating func protect(_ command: CommandAPDU) throws -> CommandAPDU {
        var next = counter
        Self.increment(&next)
        let header = [command.cla | 0x0C, command.ins, command.p1, command.p2]
        var objects: [UInt8] = []
        if !command.data.isEmpty {
            let cipher = try encrypt(command.data, counter: next)
            objects += command.ins & 1 == 0 ? TLV(tag: 0x87, value: [0x01] + cipher).encoded : TLV(tag: 0x85, value: cipher).encoded
        }
        if let le = command.le { objects += [0x97, 0x01, le == 256 ? 0x00 : UInt8(le)] }
        let mac = try self.mac(next + ISOPadding.pad(header) + objects)
        let data = objects + [0x8E, 0x08] + mac
        guard data.count <= 255 else { throw SecureMessagingError.commandTooLong(command.data.count) }
        counter = next
        return CommandAPDU(cla: header[0], ins: header[1], p1: header[2], p2: header[3], data: data, le: 256)
    }

    /// Checks `[87|85] 99 8E` (in that order, nothing else), the MAC over
    /// pad(SSC ‖ DO87/85 ‖ DO99), and returns the decrypted data with DO99's status word.
    mutating func unprotect(_ response: ResponseAPDU) throws -> ResponseAPDU {
        Self.increment(&counter)
        guard !response.data.isEmpty else { throw SecureMessagingError.ended(response.sw) }
        var reader = TLV.Reader(bytes: response.data[...])
        var authenticated: [UInt8] = []
        var encrypted: TLV?
        var object = try next(&reader, into: &authenticated)
        if object.tag == 0x87 || object.tag == 0x85 {
            encrypted = object
            object = try next(&reader, into: &authenticated)
        }
        guard object.tag == 0x99, object.value.count == 2 else { throw SecureMessagingError.malformed("no status word object (99)") }
        let status = object.value
        var unused: [UInt8] = []
        let mac = try next(&reader, into: &unused)
        guard mac.tag == 0x8E, mac.value.count == 8, reader.atEnd else { throw SecureMessagingError.malformed("no MAC object (8E) at the end") }
        guard CMAC.equal(try self.mac(counter + authenticated), mac.value) else { throw SecureMessagingError.badMAC }
        let data = try encrypted.map(decrypt) ?? []
        return ResponseAPDU(data: data, sw1: status[0], sw2: status[1])
    }

    /// The next data object, whose bytes as received are appended to `raw` (the MAC covers
    /// what the card sent, not a re-encoding of it).
    private func next(_ reader: inout TLV.Reader, into raw: inout [UInt8]) throws -> TLV {
        let start = reader.offset
        do {
            let object = try reader.next()
            raw += reader.bytes[start ..< reader.offset]
            return object
        } catch {
            throw SecureMessagingError.malformed(reader.atEnd ? "a data object is missing" : "\(error)")
        }
    }

    private func encrypt(_ plain: [UInt8], counter: [UInt8]) throws -> [UInt8] {
        var padded = ISOPadding.pad(plain)
        defer { SecretBytes.zero(&padded) }
        return try AES.encryptCBC(key: encryptionKey, iv: AES.encryptBlock(key: encryptionKey, counter), padded)
    }

    private func decrypt(_ object: TLV) throws -> [UInt8] {
        var cipher = object.value[...]
        if object.tag == 0x87 {
            guard cipher.first == 0x01 else { throw SecureMessagingError.malformed("DO87 without the padding indicator 01") }
            cipher = cipher.dropFirst()
        }
        guard !cipher.isEmpty, cipher.count % AES.blockSize == 0 else {
            throw SecureMessagingError.malformed("encrypted data of \(cipher.count) bytes is not whole AES blocks")
        }
        var padded = try AES.decryptCBC(key: encryptionKey, iv: AES.encryptBlock(key: encryptionKey, counter), Array(cipher))
        defer { SecretBytes.zero(&padded) }
        guard let plain = ISOPadding.unpad(padded) else { throw SecureMessagingError.malformed("the decrypted data is not padded") }
        return plain
    }

    /// The first 8 bytes of AES-CMAC(KSmac, pad(input)).
    private func mac(_ input: [UInt8]) throws -> [UInt8] {
        Array(try CMAC.aes(key: macKey, ISOPadding.pad(input)).prefix(8))
    }

    static func increment(_ counter: inout [UInt8]) {
        for index in counter.indices.reversed() {
            counter[index] &+= 1
            if counter[index] != 0 { return }
        }
    }
}
