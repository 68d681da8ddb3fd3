import Crypto
import SmartCard

/// What is in one reader, as `asicfs card status` lists it.
public enum ReaderContent: Sendable, Equatable {
    case empty
    /// An Estonian ID-card (its kind; contactless ones are known only after PACE).
    case idCard(CardKind, contactless: Bool)
    /// A contactless card that may be an ID-card: PACE with the CAN tells.
    case contactlessCard
    case otherCard(atr: [UInt8])

    init(atr: [UInt8]?) {
        guard let atr else { self = .empty; return }
        if let kind = CardKind.contact(atr: atr) {
            self = .idCard(kind, contactless: false)
        } else if CardKind.looksContactless(atr: atr) {
            self = .contactlessCard
        } else {
            self = .otherCard(atr: atr)
        }
    }

    var mayBeIDCard: Bool {
        switch self {
        case .idCard, .contactlessCard: true
        case .empty, .otherCard: false
        }
    }
}

/// An ID-card found, connected to and identified: contact cards by their ATR, contactless ones
/// through PACE with the CAN (every command after it goes through secure messaging).
final class IDCardConnection {
    let card: PCSCCard
    let channel: CardChannel
    let application: EstEIDApplication
    let contactless: Bool
    var reader: String { card.reader }

    private init(card: PCSCCard, channel: CardChannel, application: EstEIDApplication, contactless: Bool) {
        self.card = card
        self.channel = channel
        self.application = application
        self.contactless = contactless
    }

    /// The readers (all, or those whose PC/SC name contains `selector`) with what each holds.
    static func readers(_ context: PCSCContext, matching selector: String?) throws -> [(name: String, content: ReaderContent)] {
        let all = try context.readers()
        guard !all.isEmpty else { throw IDCardError.noReader }
        let chosen = selector.map { wanted in all.filter { $0.name.range(of: wanted, options: .caseInsensitive) != nil } } ?? all
        guard !chosen.isEmpty else { throw IDCardError.noMatchingReader(selector ?? "", readers: all.map(\.name)) }
        return chosen.map { ($0.name, ReaderContent(atr: $0.atr)) }
    }

    /// The one ID-card among the readers `selector` matches: none, or several, is an error that
    /// names the readers.
    static func open(_ context: PCSCContext, reader selector: String?, can: String?) throws -> IDCardConnection {
        let readers = try readers(context, matching: selector)
        let candidates = readers.filter { $0.content.mayBeIDCard }
        if candidates.count > 1 { throw IDCardError.severalCards(readers: candidates.map(\.name)) }
        guard let chosen = candidates.first else {
            if let other = readers.first(where: { if case .otherCard = $0.content { true } else { false } }),
               case .otherCard(let atr) = other.content {
                throw IDCardError.unknownCard(reader: other.name, atr: atr)
            }
            throw IDCardError.noCard(readers: readers.map(\.name))
        }
        return try open(context, reader: chosen.name, content: chosen.content, can: can)
    }

    static func open(_ context: PCSCContext, reader: String, content: ReaderContent, can: String?) throws -> IDCardConnection {
        do {
            let card = try context.connect(reader: reader)
            switch content {
            case .idCard(let kind, _):
                let application: EstEIDApplication = kind == .idemia ? IDEMIAApplication(channel: card)
                    : ThalesApplication(channel: card, isT0: card.isT0)
                return IDCardConnection(card: card, channel: card, application: application, contactless: false)
            case .contactlessCard:
                guard let can else { throw IDCardError.needCAN(reader: reader) }
                let secure = try establishPACE(card, reader: reader, can: can)
                return IDCardConnection(card: card, channel: secure, application: try identify(secure, card: card, reader: reader),
                                        contactless: true)
            case .empty:
                throw IDCardError.noCard(readers: [reader])
            case .otherCard(let atr):
                throw IDCardError.unknownCard(reader: reader, atr: atr)
            }
        } catch {
            throw IDCardError.from(error)
        }
    }

    /// PACE with the CAN over the plain channel: EF.CardAccess says which protocol and curve.
    static func establishPACE(_ card: PCSCCard, reader: String, can: String) throws -> CardChannel {
        let access: [UInt8]
        do {
            access = try CardAccess.read(from: card)
        } catch PACEError.card(let sw) where [0x6987, 0x6988, 0x6982].contains(sw) {
            // A secure-messaging session another program left open ends at the first plain
            // command; the card answers plainly from then on.
            do { access = try CardAccess.read(from: card) } catch is PACEError {
                throw IDCardError.unsupported("the contactless card in \(reader) offers no PACE (no EF.CardAccess): it is not an Estonian ID-card")
            }
        } catch is PACEError {
            throw IDCardError.unsupported("the contactless card in \(reader) offers no PACE (no EF.CardAccess): it is not an Estonian ID-card")
        }
        card.resetWhenDone = true
        do {
            return try PACE.establish(over: card, can: SecretBytes(Array(can.utf8)), cardAccess: access)
        } catch PACEError.wrongCAN, PACEError.invalidCAN {
            throw IDCardError.wrongCAN(reader: reader)
        } catch let error as PACEError {
            throw IDCardError.other("PACE with the card in \(reader) failed: \(error)")
        }
    }

    /// After PACE the card says what it is by which application it selects.
    static func identify(_ channel: CardChannel, card: PCSCCard, reader: String) throws -> EstEIDApplication {
        if try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: IDEMIAApplication.mainAID)).isSuccess {
            return IDEMIAApplication(channel: channel)
        }
        if try channel.transmit(CommandAPDU(ins: 0xA4, p1: 0x04, p2: 0x0C, data: ThalesApplication.aid)).isSuccess {
            return ThalesApplication(channel: channel, isT0: card.isT0, readChunk: ThalesApplication.secureMessagingReadChunk)
        }
        throw IDCardError.unsupported("the contactless card in \(reader) has neither ID-card application")
    }
}
