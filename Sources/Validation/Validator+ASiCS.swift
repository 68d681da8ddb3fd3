import ASiC
import Crypto
import Foundation
import XAdES

/// ASiC-S time-stamp tokens: `META-INF/timestamp.tst` over the data file and, in a long-term
/// container (ETSI EN 319 162-1), later tokens each over an `ASiCArchiveManifest*.xml` that
/// lists, with digests, the data file and the tokens and manifests before it. Every token and
/// every manifest is checked; a broken later one makes the container INVALID like a broken
/// first one. Each token is checked at its own time (its TSA trusted then), so a token whose
/// certificate has expired since still counts, and the later tokens renew the protection of
/// what their manifests list.
extension Validator {
    struct TimeStampFile {
        let name: String
        let bytes: [UInt8]
    }

    func validateASiCSTimeStamps(_ files: [TimeStampFile], manifests: [TimeStampFile], firstIndex: Int,
                                 container: Container, digests: DigestCache) -> [SignatureReport] {
        var reports: [SignatureReport] = []
        var parsed: [String: ASiCArchiveManifest] = [:]
        var manifestProblems: [String: String] = [:]
        for manifest in manifests {
            do { parsed[manifest.name] = try ASiCArchiveManifest.parse(file: manifest.name, bytes: manifest.bytes) } catch {
                manifestProblems[manifest.name] = "\(error)"
            }
        }
        let manifestOfToken = Dictionary(parsed.values.compactMap { manifest in manifest.timeStampFile.map { ($0, manifest) } },
                                         uniquingKeysWith: { first, _ in first })
        var tokenTimes: [String: Date] = [:]
        for (offset, file) in files.enumerated() {
            var report = SignatureReport(index: firstIndex + offset, file: file.name, id: nil)
            report.kind = "TimeStampToken"
            let token: TimeStampToken
            do { token = try TimeStampToken(der: file.bytes) } catch {
                report.add(.invalid, .timestamp, "the time-stamp token cannot be read: \(error)")
                reports.append(report)
                continue
            }
            tokenTimes[file.name] = token.genTime
            report.evidence.identifyingBytes = file.bytes
            report.evidence.timeStamps.append(.init(role: .container, token: file.bytes, time: token.genTime))
            if let tsa = token.signerCertificate { report.evidence.certificateChain = [tsa.der] }
            report.timeStampTime = token.genTime
            report.timeStampAuthority = token.signerCertificate.map { $0.commonName ?? $0.subjectLine }
            report.signerName = report.timeStampAuthority
            if let manifest = manifestOfToken[file.name] {
                report.profile = "ASiC-S archive time-stamp"
                report.signedFiles = manifest.references.map(\.name)
                let bytes = manifests.first { $0.name == manifest.file }?.bytes ?? []
                verifyToken(token, over: { try Digest.hash(bytes, token.imprintAlgorithm) }, covering: manifest.file, &report)
                checkArchiveManifest(manifest, container: container, digests: digests, &report)
            } else if file.name != Container.asicSTimeStamp {
                // Only timestamp.tst covers the data file itself; another token is not a time-stamp of this container.
                report.add(.invalid, .timestamp,
                           "\(file.name) is not \(Container.asicSTimeStamp) and no ASiCArchiveManifest names it, so it time-stamps nothing of this container")
            } else {
                report.profile = "ASiC-S time-stamp"
                report.signedFiles = container.dataFiles.map(\.name)
                guard let data = container.dataFiles.first else {
                    report.add(.invalid, .timestamp, "there is no data file to time-stamp")
                    reports.append(report)
                    continue
                }
                verifyToken(token, over: { try digests.digest(of: data.name, token.imprintAlgorithm) }, covering: data.name, &report)
            }
            // A token that does not hold proves no time.
            if report.verdict != .invalid { report.evidence.provenTime = token.genTime }
            reports.append(report)
        }
        // Each archive token must renew everything before it: the data file and every earlier
        // token (earlier in time, or in the same second and earlier in the container).
        for (index, file) in files.enumerated() {
            guard let manifest = manifestOfToken[file.name], let time = tokenTimes[file.name] else { continue }
            let listed = Set(manifest.references.map(\.name))
            for (otherIndex, earlier) in files.enumerated() where otherIndex != index && !listed.contains(earlier.name) {
                guard let other = tokenTimes[earlier.name], other < time || (other == time && otherIndex < index) else { continue }
                reports[index].add(.invalid, .archiveManifest, "\(manifest.file) does not cover the earlier time-stamp \(earlier.name)")
            }
        }
        // Manifests that cannot be read, or that no token covers, are broken data too.
        for (name, problem) in manifestProblems.sorted(by: { $0.key < $1.key }) {
            var report = SignatureReport(index: firstIndex + reports.count, file: name, id: nil)
            report.kind = "ASiCArchiveManifest"
            report.add(.invalid, .archiveManifest, "the archive manifest cannot be read: \(problem)")
            reports.append(report)
        }
        for manifest in parsed.values.sorted(by: { $0.file < $1.file })
        where !files.contains(where: { $0.name == manifest.timeStampFile }) {
            var report = SignatureReport(index: firstIndex + reports.count, file: manifest.file, id: nil)
            report.kind = "ASiCArchiveManifest"
            report.add(.invalid, .archiveManifest,
                       "the archive manifest names the time-stamp \(manifest.timeStampFile ?? "(none)"), which is not in the container")
            reports.append(report)
        }
        return reports
    }

    private func verifyToken(_ token: TimeStampToken, over imprint: () throws -> [UInt8], covering name: String,
                             _ report: inout SignatureReport) {
        do {
            let tsa = try token.verify(imprint: try imprint())
            checkTimeStampAuthority(tsa, token: token, others: [], &report)
        } catch {
            report.add(.invalid, .timestamp, "Failed to verify TS response over \(name): \(error)")
        }
    }

    /// Every file an archive manifest lists is in the container with that digest, and the data file is among them.
    private func checkArchiveManifest(_ manifest: ASiCArchiveManifest, container: Container, digests: DigestCache,
                                      _ report: inout SignatureReport) {
        if let data = container.dataFiles.first, !manifest.references.contains(where: { $0.name == data.name }) {
            report.add(.invalid, .archiveManifest, "\(manifest.file) does not cover the data file '\(data.name)'")
        }
        for reference in manifest.references {
            guard let algorithm = AlgorithmURI.digest(reference.digestAlgorithmURI) else {
                report.add(.invalid, .archiveManifest, "unsupported digest method \(reference.digestAlgorithmURI) for '\(reference.name)' in \(manifest.file)")
                continue
            }
            let actual: [UInt8]
            do {
                if container.dataFile(named: reference.name) != nil {
                    actual = try digests.digest(of: reference.name, algorithm)
                } else if let file = container.signatureFiles.first(where: { $0.name == reference.name }) {
                    actual = Digest.hash(try container.signatureBytes(file), algorithm)
                } else {
                    report.add(.invalid, .archiveManifest, "\(manifest.file) lists '\(reference.name)', which is not in the container")
                    continue
                }
            } catch {
                report.add(.invalid, .archiveManifest, "'\(reference.name)' cannot be read: \(error)")
                continue
            }
            if actual != reference.digestValue {
                report.add(.invalid, .archiveManifest, "'\(reference.name)' has changed since \(manifest.file) was time-stamped (its digest does not match)")
            }
        }
    }
}
