import Crypto
import SmartCard

/// The card's half of AES secure messaging, written from ICAO 9303-11 §9.8 apart from
/// Sources/SmartCard/PACE/SecureMessaging.swift (its own padding, parsing and counter), so a
/// round trip checks the client against a second reading of the standard, not against itself.
final class CardSideSecureMessaging: CardChannel {
    private let encryptionKey: SecretBytes
    private let macKey: SecretBytes
    private(set) var ssc = [UInt8](repeating: 0, count: 16)
    /// What the card application does with an unwrapped command.
    var application: (CommandAPDU) -> ResponseAPDU
    /// Unwrapped commands, as the card application saw them.
    private(set) var received: [CommandAPDU] = []
    /// Damages the MAC (or drops secure messaging) of the next answer, to test the client's checks.
    enum Fault { case none, flipMAC, flipData, answerPlain(UInt16), dropStatusObject }
    var nextFault = Fault.none

    init(encryptionKey: SecretBytes, macKey: SecretBytes, application: @escaping (CommandAPDU) -> ResponseAPDU) {
        self.encryptionKey = encryptionKey
        self.macKey = macKey
        self.application = application
    }

    func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        step()
        guard let plain = try unwrap(command) else { return ResponseAPDU(sw: 0x6988) }
        received.append(plain)
        let fault = nextFault
        nextFault = .none
        if case .answerPlain(let sw) = fault { return ResponseAPDU(sw: sw) }
        return try wrap(application(plain), fault)
    }

    /// Checks and decrypts a protected command; nil when the card would refuse it (6988).
    private func unwrap(_ command: CommandAPDU) throws -> CommandAPDU? {
        guard command.cla & 0x0C == 0x0C, command.le == 256 else { return nil }
        var objects: [UInt8: [UInt8]] = [:]
        var raw: [UInt8] = []
        var index = 0
        let data = command.data
        while index < data.count {
            guard index + 2 < data.count else { return nil }
            let tag = data[index]
            var length = Int(data[index + 1]), start = index + 2
            if length == 0x81 { length = Int(data[index + 2]); start += 1 }
            guard start + length <= data.count else { return nil }
            objects[tag] = Array(data[start ..< start + length])
            if tag != 0x8E { raw += data[index ..< start + length] }
            index = start + length
        }
        let header = [command.cla, command.ins, command.p1, command.p2]
        guard let mac = objects[0x8E], mac == (try self.mac(ssc + pad(header) + raw)) else { return nil }
        var plainData: [UInt8] = []
        if let do87 = objects[0x87] {
            guard do87.first == 0x01, command.ins & 1 == 0 else { return nil }
            plainData = try unpad(AES.decryptCBC(key: encryptionKey, iv: iv(), Array(do87.dropFirst())))
        } else if let do85 = objects[0x85] {
            guard command.ins & 1 == 1 else { return nil }
            plainData = try unpad(AES.decryptCBC(key: encryptionKey, iv: iv(), do85))
        }
        let le = objects[0x97].map { $0 == [0] ? 256 : Int($0[0]) }
        return CommandAPDU(cla: command.cla & ~0x0C, ins: command.ins, p1: command.p1, p2: command.p2, data: plainData, le: le)
    }

    private func wrap(_ response: ResponseAPDU, _ fault: Fault) throws -> ResponseAPDU {
        step()
        var do87: [UInt8] = []
        if !response.data.isEmpty {
            do87 = tlv([0x87], [0x01] + (try AES.encryptCBC(key: encryptionKey, iv: iv(), pad(response.data))))
        }
        let do99 = tlv([0x99], [response.sw1, response.sw2])
        var mac = try self.mac(ssc + do87 + do99)
        if case .flipMAC = fault { mac[7] ^= 0x80 }
        if case .flipData = fault { do87[do87.count - 1] ^= 0x01 }
        if case .dropStatusObject = fault { return ResponseAPDU(data: do87 + tlv([0x8E], mac), sw1: 0x90, sw2: 0x00) }
        return ResponseAPDU(data: do87 + do99 + tlv([0x8E], mac), sw1: 0x90, sw2: 0x00)
    }

    private func step() {
        var index = 15
        while index >= 0 {
            ssc[index] &+= 1
            if ssc[index] != 0 { break }
            index -= 1
        }
    }

    private func iv() throws -> [UInt8] { try AES.encryptCBC(key: encryptionKey, ssc) }

    private func mac(_ input: [UInt8]) throws -> [UInt8] { Array(try CMAC.aes(key: macKey, pad(input))[0 ..< 8]) }

    private func pad(_ input: [UInt8]) -> [UInt8] {
        var out = input + [0x80]
        while out.count % 16 != 0 { out.append(0) }
        return out
    }

    private func unpad(_ input: [UInt8]) -> [UInt8] {
        var out = input
        while out.last == 0 { out.removeLast() }
        precondition(out.last == 0x80, "the client's padding is wrong")
        return Array(out.dropLast())
    }
}
