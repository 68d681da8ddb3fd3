import CPCSC
import Foundation

/// A reader as PC/SC sees it now: its name, and the card in it, if any.
public struct ReaderState: Sendable, Equatable {
    public let name: String
    /// The card's answer to reset, or nil when the reader is empty.
    public let atr: [UInt8]?
    public var hasCard: Bool { atr != nil }
}

/// One PC/SC context (a session with pcscd). pcsclite contexts are not shared between threads:
/// make one per operation.
public final class PCSCContext {
    private let context: SCARDCONTEXT

    public init() throws {
        var handle: SCARDCONTEXT = 0
        let rc = SCardEstablishContext(DWORD(SCARD_SCOPE_USER), nil, nil, &handle)
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "connecting to pcscd") }
        context = handle
    }

    deinit { SCardReleaseContext(context) }

    /// Every reader and whether it holds a card (with the card's ATR).
    public func readers() throws -> [ReaderState] {
        var length: DWORD = 0
        var rc = SCardListReaders(context, nil, nil, &length)
        if rc == SCARD_E_NO_READERS_AVAILABLE { return [] }
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "listing readers") }
        var buffer = [CChar](repeating: 0, count: Int(length))
        rc = SCardListReaders(context, nil, &buffer, &length)
        if rc == SCARD_E_NO_READERS_AVAILABLE { return [] }
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "listing readers") }
        let names = buffer.split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return try names.map { try state(of: $0) }
    }

    /// The reader's state right now (SCardGetStatusChange with no wait).
    func state(of name: String) throws -> ReaderState {
        try name.withCString { cName in
            var state = SCARD_READERSTATE()
            state.szReader = cName
            state.dwCurrentState = DWORD(SCARD_STATE_UNAWARE)
            let rc = SCardGetStatusChange(context, 0, &state, 1)
            guard rc == SCARD_S_SUCCESS || rc == SCARD_E_TIMEOUT else {
                throw PCSCError.describe(Int(rc), doing: "reading the state of \(name)")
            }
            let present = state.dwEventState & DWORD(SCARD_STATE_PRESENT) != 0
                && state.dwEventState & DWORD(SCARD_STATE_MUTE) == 0
            guard present else { return ReaderState(name: name, atr: nil) }
            let count = min(Int(state.cbAtr), Int(MAX_ATR_SIZE))
            let atr = withUnsafeBytes(of: state.rgbAtr) { Array($0.prefix(count)) }
            return ReaderState(name: name, atr: atr)
        }
    }

    /// Connects to the card in `reader`, shared (other programs may use the card between our
    /// transactions), T=0 or T=1 as the card offers.
    public func connect(reader: String) throws -> PCSCCard {
        var handle: SCARDHANDLE = 0
        var active: DWORD = 0
        let rc = SCardConnect(context, reader, DWORD(SCARD_SHARE_SHARED), DWORD(SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1),
                              &handle, &active)
        guard rc == SCARD_S_SUCCESS else { throw PCSCError.describe(Int(rc), doing: "connecting to the card in \(reader)") }
        return PCSCCard(handle: handle, reader: reader, isT0: active == DWORD(SCARD_PROTOCOL_T0), context: self)
    }
}
