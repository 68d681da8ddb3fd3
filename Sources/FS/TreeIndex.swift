import Foundation

/// The folders of a mount's view, made in one pass over the data-file names: each folder's
/// direct children (files and subfolders, in the order they first appear) and the newest
/// modification time of the files below it. Listing a folder and giving its time then cost
/// a lookup instead of a scan of every name (`find` over 65,000 files in 650 folders took 5 s).
struct TreeIndex {
    private(set) var children: [String: [String]] = [:]
    private(set) var newest: [String: Date] = [:]

    /// `files` in the view's order, then the empty folders made with mkdir.
    init(files: [String], emptyFolders: [String], modified: (String) -> Date) {
        var seen = Set<String>()
        for (isFile, name) in files.map({ (true, $0) }) + emptyFolders.map({ (false, $0) }) {
            let time = isFile ? modified(name) : nil
            var parent = ""
            var rest = Substring(name)
            while true {
                let slash = rest.firstIndex(of: "/")
                let component = String(rest[..<(slash ?? rest.endIndex)])
                if seen.insert(parent + "\u{0}" + component).inserted { children[parent, default: []].append(component) }
                if let time { newest[parent] = max(newest[parent] ?? time, time) }
                guard let slash else { break }
                parent = parent.isEmpty ? component : parent + "/" + component
                rest = rest[rest.index(after: slash)...]
            }
        }
    }
}
