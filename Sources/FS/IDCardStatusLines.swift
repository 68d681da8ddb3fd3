import Foundation
import Signing

/// What `status/id-card` shows after its first line, in a container mount (signing) and an
/// encrypted one (decrypting) alike: the reader, the holder and the PIN counters, read from the
/// card now (or why they cannot be). Never a PIN: the counters are read without one.
enum IDCardStatusLines {
    static func read() -> [String] {
        TestHooks.holdCardStatus()
        do {
            let summary = try IDCardService().summary()
            return ["reader: \(summary.reader)",
                    "holder: \(summary.holder.surname), \(summary.holder.givenNames) (\(summary.holder.personalCode))"]
                + summary.counters.map { secret, counter in
                    "\(secret.name): \(counter.triesLeft) of \(counter.maxTries) tries left" + (counter.isBlocked ? " (blocked)" : "")
                }
        } catch {
            return ["no card information: \(error)"]
        }
    }
}
