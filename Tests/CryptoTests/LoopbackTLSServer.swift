import Foundation
import TestTools
import XCTest

/// A loopback HTTPS server (TestHTTPServer) for a test class's tests to share, whose keys and
/// certificates a shell script makes with the openssl command line in a fresh folder.
final class LoopbackTLSServer: @unchecked Sendable {
    let folder: TemporaryFolder
    private let server: LoopbackProcess

    /// The folder's path: the script's files are there.
    var dir: String { folder.path }
    /// The server's text page.
    var url: String { "https://127.0.0.1:\(server.port)/text" }

    /// Runs `script` in a new folder and serves with its `certificate` (a PEM chain, leaf first)
    /// and `key`. The script may use `key NAME.key` (a new P-256 key) and `leaf.ext` (the
    /// extensions of a server certificate for 127.0.0.1), which a prelude provides.
    init(_ name: String, making script: String, certificate: String, key: String) throws {
        folder = try TemporaryFolder(name)
        let made = try Shell.sh("""
            set -e; cd '\(folder.path)'
            key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
            printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:false\\nextendedKeyUsage=serverAuth\\n' > leaf.ext
            """ + "\n" + script)
        XCTAssertEqual(made.status, 0, made.stderr)
        server = try TestHTTPServer.start(in: folder.path, tls: (folder.path + "/" + certificate, folder.path + "/" + key))
    }

    func stop() {
        server.stop()
        folder.remove()
    }
}
