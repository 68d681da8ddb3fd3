import Crypto
import Foundation

/// Loads the configured trusted list and, for a list of lists, the national lists it points to.
///
/// Where a list comes from: a local path is read as is. A pointed list of a local LOTL is looked
/// for by the last path component of its TSLLocation beside the LOTL, then in the cache folder,
/// then downloaded. A list given by URL is taken from the cache while its copy verifies and has
/// not passed NextUpdate, else downloaded (only lists whose signature verified are cached).
/// The top list must load; a national list that fails is skipped with a warning, so one bad
/// country does not stop validation for the others.
struct TrustedListLoader {
    let settings: TrustSettings
    private(set) var warnings: [String] = []

    init(settings: TrustSettings) { self.settings = settings }

    mutating func load() throws(TrustedListError) -> [TrustedList] {
        guard let tsl = settings.tsl, !tsl.isEmpty else { return [] }
        let signers = ListSigners(certificates: settings.tslCerts, fingerprints: settings.tslSignerFingerprints)
        guard !signers.isEmpty else {
            throw TrustedListError("trusted list \(tsl) cannot be checked: no tsl-cert is configured to say who may sign it (nor a tsl-signer-sha256)")
        }
        let top = try fetch(tsl, besideFolder: nil, allowedSigners: signers)
        noteExpiry(of: top)
        guard top.isListOfLists else { return [top] }
        var lists = [top]
        let folder = Self.isURL(tsl) ? nil : (tsl as NSString).deletingLastPathComponent
        for pointer in top.pointers where pointer.isFollowed {
            do {
                let list = try fetch(pointer.location, besideFolder: folder, allowedSigners: ListSigners(certificates: pointer.signers))
                noteExpiry(of: list)
                lists.append(list)
            } catch {
                warnings.append("\(error.description); its services are not trusted")
            }
        }
        return lists
    }

    private mutating func noteExpiry(of list: TrustedList) {
        guard list.isExpired(at: settings.now), let nextUpdate = list.nextUpdate else { return }
        warnings.append("trusted list \(list.name) from \(list.source) expired on \(XMLDateTime.format(nextUpdate))"
            + " (its NextUpdate); it is still used")
    }

    /// One list by path or URL. `besideFolder`: the folder of a local LOTL, searched first.
    private mutating func fetch(_ location: String, besideFolder: String?,
                                allowedSigners: ListSigners) throws(TrustedListError) -> TrustedList {
        guard Self.isURL(location) else {
            let path = location.hasPrefix("/") || besideFolder == nil
                ? location : (besideFolder! as NSString).appendingPathComponent(location)
            return try readLocal(path, allowedSigners: allowedSigners)
        }
        let fileName = Self.fileName(of: location)
        if let besideFolder {
            let sibling = (besideFolder as NSString).appendingPathComponent(fileName)
            if FileManager.default.fileExists(atPath: sibling) { return try readLocal(sibling, allowedSigners: allowedSigners) }
        }
        let cached = (settings.cacheDir as NSString).appendingPathComponent(fileName)
        var cachedList: TrustedList?
        var cacheProblem: TrustedListError?
        if FileManager.default.fileExists(atPath: cached) {
            do { cachedList = try readLocal(cached, allowedSigners: allowedSigners) } catch { cacheProblem = error }
            if let cachedList, !cachedList.isExpired(at: settings.now) { return cachedList }
        }
        guard let download = settings.download else {
            if let cachedList { return cachedList }
            if let cacheProblem { throw cacheProblem }
            let looked = ([besideFolder.map { ($0 as NSString).appendingPathComponent(fileName) }, cached]).compactMap { $0 }
            throw TrustedListError("trusted list \(location) is not available: it is not in \(looked.joined(separator: " or "))"
                + " and downloading is not configured")
        }
        let marker = UnreachableMarker(cachedCopy: cached)
        do {
            if let failed = marker.recent(at: settings.now) {
                throw Unreachable(reason: "\(failed.reason) (at \(XMLDateTime.format(failed.time)); not tried again for "
                    + "\(Int(UnreachableMarker.retryDelay / 60)) minutes: remove \(marker.path) to try now)")
            }
            let bytes: [UInt8]
            do { bytes = try download(location) } catch let error as TrustedListError { throw error } catch {
                let reason = "trusted list \(location) cannot be downloaded: \(error)"
                marker.record(reason, at: settings.now, cacheDir: settings.cacheDir)
                throw Unreachable(reason: reason)
            }
            marker.clear()
            let list = try TrustedList.verified(bytes, source: location, allowedSigners: allowedSigners)
            store(bytes, at: cached)
            return list
        } catch {
            let reason = (error as? TrustedListError)?.description ?? (error as? Unreachable)?.reason ?? "\(error)"
            guard let cachedList else {
                // No usable copy: most likely no network yet (the first run offline), unless a
                // copy was there and refused, which is then the story to tell as well.
                let refusedCopy = cacheProblem.map { "; the cached copy is not used: \($0.description)" } ?? ""
                throw TrustedListError((error is TrustedListError ? reason : "the trusted list could not be downloaded (offline?): \(reason)")
                    + refusedCopy)
            }
            warnings.append("\(reason); the cached copy \(cached) is used instead")
            return cachedList
        }
    }

    /// A download that failed for want of the network (now, or remembered by `UnreachableMarker`).
    private struct Unreachable: Error { let reason: String }

    private func readLocal(_ path: String, allowedSigners: ListSigners) throws(TrustedListError) -> TrustedList {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrustedListError("trusted list \(path) cannot be read: no such file, or no permission")
        }
        return try TrustedList.verified(Array(data), source: path, allowedSigners: allowedSigners)
    }

    /// A failed cache write only costs a download next time.
    private mutating func store(_ bytes: [UInt8], at path: String) {
        do {
            try FileManager.default.createDirectory(atPath: settings.cacheDir, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            warnings.append("the trusted list cache \(path) cannot be written: \(error.localizedDescription)")
        }
    }

    static func isURL(_ location: String) -> Bool {
        location.hasPrefix("https://") || location.hasPrefix("http://")
    }

    /// The cache name of a URL: its last path component (`EE_T.xml`), made safe for a file name.
    static func fileName(of url: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let safe = String(last.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" })
        return safe.isEmpty || safe.hasPrefix(".") ? "tsl-" + safe + ".xml" : safe
    }
}
