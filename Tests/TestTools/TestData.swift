/// Deterministic text-like bytes that deflate compresses about 3:1, like office documents.
public func textLikeBytes(count: Int, seed: UInt64 = 42) -> [UInt8] {
    let words = ["signature", "container", "the", "of", "and", "digital", "document", "Tallinn", "2026",
                 "ASiC", "manifest", "data", "file", "time", "stamp", "OCSP", "response", "certificate"]
    var state = seed
    var out: [UInt8] = []
    out.reserveCapacity(count + 16)
    while out.count < count {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let word = words[Int(state >> 33) % words.count]
        out.append(contentsOf: word.utf8)
        out.append((state >> 20) & 15 == 0 ? 0x0A : 0x20)
        if (state >> 40) & 7 == 0 { out.append(UInt8(truncatingIfNeeded: state >> 50)) }
    }
    return Array(out.prefix(count))
}
