import Foundation

/// xsd:dateTime as trusted lists write it (`2016-06-30T22:00:00Z`, optionally with fractions or
/// an offset). Written by hand: Foundation's formatters are slow and not Sendable.
enum XMLDateTime {
    static func parse(_ text: String) -> Date? {
        let chars = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= chars.count else { return nil }
            var value = 0
            for c in chars[range] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        guard chars.count >= 19, chars[4] == 0x2D, chars[7] == 0x2D, chars[10] == 0x54 || chars[10] == 0x74,
              chars[13] == 0x3A, chars[16] == 0x3A,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var index = 19
        var fraction = 0.0
        if index < chars.count, chars[index] == 0x2E {
            var scale = 0.1
            index += 1
            while index < chars.count, chars[index] >= 0x30 && chars[index] <= 0x39 {
                fraction += Double(chars[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        var offset = 0
        if index < chars.count {
            switch chars[index] {
            case 0x5A, 0x7A: index += 1
            case 0x2B, 0x2D:
                guard let h = number(index + 1..<index + 3), index + 3 < chars.count, chars[index + 3] == 0x3A,
                      let m = number(index + 4..<index + 6) else { return nil }
                offset = (h * 3600 + m * 60) * (chars[index] == 0x2D ? -1 : 1)
                index += 6
            default: return nil
            }
        }
        guard index == chars.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: TimeInterval(seconds - offset) + fraction)
    }

    /// `2013-04-23T11:49:30Z`: the form every message of this module uses.
    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
