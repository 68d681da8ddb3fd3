import Foundation

/// National personal codes of the Baltic states, checked before anything is sent to a service.
public enum PersonalCode {
    /// nil when `code` is a well-formed personal code of `country` (EE, LV or LT), else why not.
    public static func problem(_ code: String, country: String) -> String? {
        switch country.uppercased() {
        case "EE", "LT": return estonianOrLithuanianProblem(code)
        case "LV": return latvianProblem(code)
        default: return "country must be EE, LV or LT, not '\(country)'"
        }
    }

    /// 11 digits: century/sex, YYMMDD, serial, check digit (weights 1..9,1 then 3..9,1,2,3).
    static func estonianOrLithuanianProblem(_ code: String) -> String? {
        let digits = code.compactMap(\.wholeNumberValue)
        guard code.count == 11, digits.count == 11 else { return "a personal code has 11 digits, '\(code)' does not" }
        guard (1...6).contains(digits[0]) else { return "'\(code)' does not start with a century digit 1-6" }
        let century = 1800 + (digits[0] - 1) / 2 * 100
        let year = century + digits[1] * 10 + digits[2]
        let month = digits[3] * 10 + digits[4], day = digits[5] * 10 + digits[6]
        guard isDate(year: year, month: month, day: day) else { return "'\(code)' does not hold a valid birth date" }
        guard digits[10] == checkDigit(Array(digits.prefix(10))) else { return "the check digit of '\(code)' is wrong" }
        return nil
    }

    static func checkDigit(_ digits: [Int]) -> Int {
        let first = zip(digits, [1, 2, 3, 4, 5, 6, 7, 8, 9, 1]).reduce(0) { $0 + $1.0 * $1.1 } % 11
        if first < 10 { return first }
        let second = zip(digits, [3, 4, 5, 6, 7, 8, 9, 1, 2, 3]).reduce(0) { $0 + $1.0 * $1.1 } % 11
        return second < 10 ? second : 0
    }

    /// DDMMYY-CNNNN (the hyphen optional). Codes since 2017 start with 32 and carry no date or check
    /// digit; older ones have a birth date and a check digit (weights 1,6,3,7,9,10,5,8,4,2).
    static func latvianProblem(_ code: String) -> String? {
        let plain = code.replacingOccurrences(of: "-", with: "")
        let digits = plain.compactMap(\.wholeNumberValue)
        guard plain.count == 11, digits.count == 11, code.filter({ $0 == "-" }).count <= 1 else {
            return "a Latvian personal code has 11 digits (DDMMYY-CNNNN), '\(code)' does not"
        }
        if digits[0] == 3 && digits[1] == 2 { return nil }
        let day = digits[0] * 10 + digits[1], month = digits[2] * 10 + digits[3]
        let century = [0: 1800, 1: 1900, 2: 2000][digits[6]]
        guard let century, isDate(year: century + digits[4] * 10 + digits[5], month: month, day: day) else {
            return "'\(code)' does not hold a valid birth date"
        }
        let sum = zip(digits.prefix(10), [1, 6, 3, 7, 9, 10, 5, 8, 4, 2]).reduce(0) { $0 + $1.0 * $1.1 }
        guard (1101 - sum) % 11 % 10 == digits[10] else { return "the check digit of '\(code)' is wrong" }
        return nil
    }

    static func isDate(year: Int, month: Int, day: Int) -> Bool {
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { return false }
        let back = calendar.dateComponents([.year, .month, .day], from: date)
        return back.year == year && back.month == month && back.day == day
    }
}
