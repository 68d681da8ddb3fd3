import CDOC
import Configuration
import Crypto
import Foundation
import Signing
import TestTools
import XCTest

/// What the recipient-key tests share: a PIN on a descriptor (never argv or the environment),
/// the software side of the key agreement, and the events a key reports.
enum RecipientKeyTesting {
    /// A configuration that never asks pinentry (the tests give PINs on descriptors or the PIN pad).
    static func configuration() throws -> Configuration {
        var configuration = Configuration()
        try configuration.set("pinentry", "none", origin: "test")
        return configuration
    }

    /// The PIN as one line in a file, opened read-only: the descriptor number goes to pin-fd=.
    static func pinDescriptor(_ pin: String, in folder: String) throws -> Int32 {
        let file = folder + "/pin-\(UUID().uuidString.prefix(8))"
        try Data((pin + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ShellError("cannot open \(file)") }
        unlink(file)
        return fd
    }

    /// The sender's side of ECDH-ES: a fresh key on `curve`.
    static func ephemeral(_ curve: EllipticCurve) throws -> PrivateKey { try PrivateKey.generateEC(curve) }

    static func privateKey(_ path: String) throws -> PrivateKey {
        try PrivateKey.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func bytes(_ secret: SecretBytes) -> [UInt8] { secret.withBytes { Array($0) } }

    static func certificateDER(_ pemPath: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: pemPath, encoding: .utf8)
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Array(try XCTUnwrap(Data(base64Encoded: body), "not one PEM certificate: \(pemPath)"))
    }
}

/// Collects what a key reports (steps, where to type the PIN).
final class EventLog: @unchecked Sendable {
    private(set) var events: [SigningEvent] = []
    func record(_ event: SigningEvent) { events.append(event) }
    var texts: [String] {
        events.map {
            switch $0 {
            case .step(let text), .waitingForUser(let text), .verificationCode(let text), .deviceLink(let text, _): text
            }
        }
    }
}

/// The commands the emulated card received (contrib/card writes headers and status words).
func cardCommands(_ log: String, ins: String, p1p2: String? = nil) -> Int {
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").filter { line in
        let fields = line.split(separator: " ")
        guard line.hasPrefix(">"), fields.count > 4, fields[2] == Substring(ins) else { return false }
        return p1p2.map { "\(fields[3]) \(fields[4])" == $0 } ?? true
    }.count
}
