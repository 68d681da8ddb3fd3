import CPCSC
import Foundation

/// A connected card: APDUs in and out, GET RESPONSE (61xx) and wrong-Le (6Cxx) handled as T=0
/// cards require, the reader's extra features (PIN pad) through SCardControl.
public final class PCSCCard: CardChannel {
    private var handle: SCARDHANDLE
    public let reader: String
    /// T=0 cards take a case-4 command without Le, and answer 61xx: some commands differ.
    public let isT0: Bool
    /// Keeps the context alive as long as the card.
    private let context: PCSCContext
    private var inTransaction = false
    /// Reset the card when done instead of leaving it as it is: after PACE the card stays in
    /// its secure-messaging session, which the next program could not use.
    public var resetWhenDone = false

    init(handle: SCARDHANDLE, reader: String, isT0: Bool, context: PCSCContext) {
        self.handle = handle
        self.reader = reader
        self.isT0 = isT0
        self.context = context
    }

    deinit { disconnect() }

    /// Leaves the card as it is (other programs keep their state) unless `resetWhenDone`, and
    /// ends any transaction.
    public func disconnect() {
        guard handle != 0 else { return }
        if inTransaction { SCardEndTransaction(handle, DWORD(SCARD_LEAVE_CARD)) }
        SCardDisconnect(handle, DWORD(resetWhenDone ? SCARD_RESET_CARD : SCARD_LEAVE_CARD))
        handle = 0
    }

    /// Runs `body` as one PC/SC transaction: no other program's APDUs come in between (a
    /// VERIFY and the PSO it allows must not be split).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let rc = SCardBeginTransaction(handle)
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "reserving the card") }
        inTransaction = true
        defer {
            if handle != 0 { SCardEndTransaction(handle, DWORD(SCARD_LEAVE_CARD)) }
            inTransaction = false
        }
        return try body()
    }

    public func transmit(_ command: CommandAPDU) throws -> ResponseAPDU {
        // The command may hold a PIN: its encoded copy is wiped too.
        var bytes = command.bytes
        defer { bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
        var response = try transmitOnce(bytes)
        if response.sw1 == 0x6C {
            // Wrong Le: the card says how many bytes it has; ask again with that.
            var again = command
            again.le = response.sw2 == 0 ? 256 : Int(response.sw2)
            response = try transmitOnce(again.bytes)
        }
        var data = response.data
        var rounds = 0
        while response.sw1 == 0x61 {
            rounds += 1
            guard rounds < 64 else { throw CardError.malformed("endless GET RESPONSE chain") }
            let getResponse = CommandAPDU(cla: command.cla & 0x03, ins: 0xC0, p1: 0, p2: 0, le: response.sw2 == 0 ? 256 : Int(response.sw2))
            response = try transmitOnce(getResponse.bytes)
            data += response.data
        }
        return ResponseAPDU(data: data, sw1: response.sw1, sw2: response.sw2)
    }

    /// One exchange. A card pulled mid-command makes some readers (and vpcd) report success
    /// with no bytes: that is a removal, never a wait.
    public func transmitOnce(_ bytes: [UInt8]) throws -> ResponseAPDU {
        guard handle != 0 else { throw CardError.removed }
        var received = [UInt8](repeating: 0, count: 258 + 16)
        var length = DWORD(received.count)
        let pci = isT0 ? cpcsc_pci_t0() : cpcsc_pci_t1()
        let rc = SCardTransmit(handle, pci, bytes, DWORD(bytes.count), nil, &received, &length)
        defer { received.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "sending a command to the card") }
        return try ResponseAPDU(bytes: Array(received.prefix(Int(length))))
    }

    /// The reader's features (PC/SC part 10): feature tag → control code. Empty when the reader
    /// has none or does not answer the request.
    public func features() -> [UInt8: UInt32] {
        guard handle != 0 else { return [:] }
        var out = [UInt8](repeating: 0, count: 256)
        var length: DWORD = 0
        let rc = SCardControl(handle, DWORD(cpcsc_get_feature_request()), nil, 0, &out, DWORD(out.count), &length)
        guard rc == SCARD_S_SUCCESS else { return [:] }
        var features: [UInt8: UInt32] = [:]
        var index = 0
        let bytes = Array(out.prefix(Int(length)))
        while index + 6 <= bytes.count, bytes[index + 1] == 4 {
            let code = bytes[(index + 2)..<(index + 6)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            features[bytes[index]] = code
            index += 6
        }
        return features
    }

    /// SCardControl: sends `input` to the reader itself and returns its answer.
    public func control(_ code: UInt32, _ input: [UInt8]) throws -> [UInt8] {
        guard handle != 0 else { throw CardError.removed }
        var out = [UInt8](repeating: 0, count: 258)
        var length: DWORD = 0
        let rc = SCardControl(handle, DWORD(code), input, DWORD(input.count), &out, DWORD(out.count), &length)
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "asking the reader") }
        return Array(out.prefix(Int(length)))
    }
}
