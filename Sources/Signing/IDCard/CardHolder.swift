import Foundation

/// The personal data file of an Estonian ID-card (EF 5001…5008), as printed on the card.
public struct CardHolder: Sendable, Equatable {
    public var surname: String
    public var givenNames: String
    public var personalCode: String
    public var documentNumber: String
    /// `YYYY-MM-DD`, from the card's `DD MM YYYY`; the card is valid through that day.
    public var expiry: String?

    /// "GIVEN NAMES SURNAME", for prompts.
    public var displayName: String { [givenNames, surname].filter { !$0.isEmpty }.joined(separator: " ") }

    /// The card's fields by record number (1-based), decoded.
    init(records: [Int: [UInt8]]) {
        func text(_ number: Int) -> String {
            guard let bytes = records[number], bytes != [0] else { return "" }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
        }
        surname = text(1)
        givenNames = text(2)
        personalCode = text(6)
        documentNumber = text(7)
        expiry = Self.isoDate(text(8))
    }

    /// `DD MM YYYY` → `YYYY-MM-DD` (nil for anything else).
    static func isoDate(_ text: String) -> String? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "." })
        guard parts.count == 3, parts[0].count == 2, parts[1].count == 2, parts[2].count == 4,
              parts.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
        return "\(parts[2])-\(parts[1])-\(parts[0])"
    }
}
