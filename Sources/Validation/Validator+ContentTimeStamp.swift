import ASiC
import Crypto
import Foundation
import XAdES

/// Content time-stamps (EN 319 132-1 5.2.8): the token's imprint is the hash of the referenced
/// data objects' octets, concatenated in SignedInfo order (AllDataObjectsTimeStamp) or in the
/// Include elements' order (IndividualDataObjectsTimeStamp). asicfs's data references are whole
/// files without transforms, so a data object's octets are the file's bytes. What cannot be
/// computed that way is INDETERMINATE: a content time-stamp is never INVALID for being there.
extension Validator {
    /// `signedBy` is the time the signature is proven to exist at (its time-stamp or time-mark):
    /// the data must have been time-stamped before that (EN 319 102-1, time-stamp order).
    func checkContentTimeStamps(_ signature: XAdESSignature, container: Container, others: [Certificate],
                                signedBy: Date?, _ report: inout SignatureReport) {
        for stamp in signature.dataObjectTimeStamps {
            let name = stamp.elementName
            guard stamp.tokenCount == 1 else {
                report.add(.invalid, .contentTimestamp, "the \(name) must hold exactly one time-stamp token, not \(stamp.tokenCount)")
                continue
            }
            let token: TimeStampToken
            do { token = try TimeStampToken(der: stamp.token) } catch {
                report.add(.invalid, .contentTimestamp, "the \(name) cannot be read: \(error)")
                continue
            }
            let covered: [SignatureReference]
            switch coveredReferences(stamp, of: signature) {
            case .failure(let problem):
                report.add(.indeterminate, .contentTimestamp, "the \(name) cannot be checked: \(problem.description)")
                continue
            case .success(let references): covered = references
            }
            let files = covered.compactMap { container.dataFile(named: $0.dataFileName) }
            guard files.count == covered.count else {
                report.add(.indeterminate, .contentTimestamp, "the \(name) covers a reference that is not a data file of the container")
                continue
            }
            let imprint: [UInt8]
            do { imprint = try concatenatedDigest(of: files.map(\.name), container: container, token.imprintAlgorithm) } catch {
                report.add(.indeterminate, .contentTimestamp, "the data the \(name) covers cannot be read: \(error)")
                continue
            }
            do {
                let tsa = try token.verify(imprint: imprint)
                report.evidence.timeStamps.append(.init(role: stamp.coverage == .allDataObjects ? .allDataObjects : .individualDataObjects,
                                                       token: stamp.token, time: token.genTime))
                checkTimeStampAuthority(tsa, token: token, others: others, &report)
                if let signedBy, token.genTime > signedBy {
                    report.add(.indeterminate, .timestampOrder,
                               "the \(name) (\(ISOTime.string(token.genTime))) is after the signature time-stamp (\(ISOTime.string(signedBy))): the data cannot have been time-stamped before it was signed")
                }
            } catch {
                report.add(.invalid, .contentTimestamp,
                           "the \(name) does not verify over \(files.map { "'\($0.name)'" }.joined(separator: " + ")): \(error)")
            }
        }
    }

    struct ContentTimeStampProblem: Error, CustomStringConvertible {
        let description: String
    }

    /// The data references a content time-stamp covers, in the order their octets are concatenated.
    private func coveredReferences(_ stamp: DataObjectTimeStamp, of signature: XAdESSignature)
        -> Result<[SignatureReference], ContentTimeStampProblem> {
        let references: [SignatureReference]
        switch stamp.coverage {
        case .allDataObjects: references = signature.dataReferences
        case .included(let uris):
            guard !uris.isEmpty else { return .failure(ContentTimeStampProblem(description: "it has no Include")) }
            var found: [SignatureReference] = []
            for uri in uris {
                guard uri.hasPrefix("#"), let reference = signature.dataReferences.first(where: { $0.id == String(uri.dropFirst()) }) else {
                    return .failure(ContentTimeStampProblem(description: "its Include '\(uri)' names no data reference of the signature"))
                }
                found.append(reference)
            }
            references = found
        }
        if let transformed = references.first(where: { !$0.transformURIs.isEmpty }) {
            return .failure(ContentTimeStampProblem(description: "the reference to '\(transformed.uri)' has transforms, which asicfs does not apply"))
        }
        return .success(references)
    }

    /// The hash of the named data files' bytes one after another.
    private func concatenatedDigest(of names: [String], container: Container, _ algorithm: DigestAlgorithm) throws -> [UInt8] {
        let hasher = Hasher(algorithm)
        for name in names { try container.read(name) { hasher.update($0) } }
        return hasher.finish()
    }
}
