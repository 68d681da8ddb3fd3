import ASiC
import Crypto
import Foundation
import SafeXML
import XAdES

/// LTA: each xades141:ArchiveTimeStamp, in order, over what EN 319 132-1 says it covers
/// (`XAdESSignature.archiveTimeStampDigest`: the data files, SignedProperties, SignedInfo,
/// SignatureValue, KeyInfo and everything before it in UnsignedSignatureProperties, so a later
/// one covers the earlier ones and their validation data), by a TSA trusted at its time.
extension Validator {
    func checkArchiveTimeStamps(_ signature: XAdESSignature, container: Container, others: [Certificate],
                                _ report: inout SignatureReport) {
        var previous: Date? = report.timeStampTime
        for (number, stamp) in signature.archiveTimeStamps.enumerated() {
            let label = "archive time-stamp \(number + 1)"
            guard stamp.tokenCount == 1 else {
                report.add(.invalid, .archiveTimestamp, "\(label) must hold exactly one time-stamp token, not \(stamp.tokenCount)")
                continue
            }
            guard let method = CanonicalizationMethod(uri: stamp.canonicalizationURI) else {
                report.add(.invalid, .archiveTimestamp, "\(label) uses the unsupported canonicalization \(stamp.canonicalizationURI)")
                continue
            }
            let token: TimeStampToken
            do { token = try TimeStampToken(der: stamp.token) } catch {
                report.add(.invalid, .archiveTimestamp, "\(label) cannot be read: \(error)")
                continue
            }
            do {
                let digest = try signature.archiveTimeStampDigest(before: stamp.position, method: method, algorithm: token.imprintAlgorithm) { name, feed in
                    try container.read(name) { feed($0) }
                }
                let tsa = try token.verify(imprint: digest)
                report.evidence.timeStamps.append(.init(role: .archive, token: stamp.token, time: token.genTime))
                checkTimeStampAuthority(tsa, token: token, others: others, &report)
            } catch {
                report.add(.invalid, .archiveTimestamp, "\(label) does not verify: \(error)")
                continue
            }
            if let previous, token.genTime < previous {
                report.add(.invalid, .archiveTimestamp, "\(label) (\(ISOTime.string(token.genTime))) is older than what it covers (\(ISOTime.string(previous)))")
            }
            previous = token.genTime
        }
    }
}
