import Foundation

/// One emulated Estonian ID-card (contrib/card/esteid_card.py) to put into a virtual reader.
public struct VirtualCard: Sendable {
    public enum Kind: String, Sendable { case idemia, thales }
    public var kind: Kind = .idemia
    /// Answer like a T=0 card: 61xx (GET RESPONSE) and 6Cxx (resend with Le).
    public var t0 = false
    /// Contactless: PACE with this CAN first, then secure messaging.
    public var can: String? = nil
    /// The signing certificate and key (PEM); the authentication pair comes from the same PKI.
    public var signCertificate: String
    public var signKey: String
    public var authCertificate: String
    public var authKey: String
    public var surname = "JÕEORG"
    public var givenNames = "JAAK-KRISTJAN"
    public var personalCode = "38001085718"
    public var documentNumber = "AB0123456"
    /// The PIN file: counters and values survive a removal and re-insertion.
    public var state: String
    /// `INS[,N]`: the card leaves the reader when the N-th command with that INS arrives.
    public var pullOn: String? = nil
    /// Another answer to reset (hex): a card that is no ID-card, to its clients.
    public var atr: String? = nil

    /// The card of the test PKI's signer (mkpki.sh and make-card-pki.sh made `pki`).
    public init(pki: String, state: String) {
        signCertificate = pki + "/signer.pem"
        signKey = pki + "/signer.key"
        authCertificate = pki + "/card-auth.pem"
        authKey = pki + "/card-auth.key"
        self.state = state
    }

    var arguments: [String] {
        var list = ["--kind", kind.rawValue, "--sign-cert", signCertificate, "--sign-key", signKey,
                    "--auth-cert", authCertificate, "--auth-key", authKey, "--surname", surname,
                    "--given-names", givenNames, "--personal-code", personalCode, "--document-number", documentNumber,
                    "--state", state]
        if t0 { list.append("--t0") }
        if let can { list += ["--contactless", "--can", can] }
        if let pullOn { list += ["--pull-on", pullOn] }
        if let atr { list += ["--atr", atr] }
        return list
    }
}

/// pcscd with a private reader configuration and vpcd's two virtual readers ("Virtual PCD 00 00"
/// and "Virtual PCD 00 01"), through contrib/card/virtual-reader.sh. Only one pcscd can run on a
/// machine: `start` fails clearly when another one runs.
public final class VirtualCardReaders: @unchecked Sendable {
    public let folder: String
    public static let names = ["Virtual PCD 00 00", "Virtual PCD 00 01"]

    static let contrib: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path + "/contrib/card"
    }()

    private init(folder: String) { self.folder = folder }

    /// `pinPad`: readers with a PIN pad (contrib/card/pinpad), named "Virtual PIN pad 00 00" and
    /// "… 00 01"; `typeOnPINPad` gives what the person types at the next PIN entry.
    public static func start(in folder: String, pinPad: Bool = false) throws -> VirtualCardReaders {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let started = try Shell.run(contrib + "/virtual-reader.sh", ["start", folder] + (pinPad ? ["--pinpad"] : []))
        guard started.status == 0 else { throw ShellError("virtual-reader.sh start failed: \(started.stderr)") }
        return VirtualCardReaders(folder: folder)
    }

    /// Adds the card material (authentication certificates, a second person, an expired signer)
    /// to a PKI made by mkpki.sh.
    public static func addCardCertificates(to pki: String) throws {
        let made = try Shell.run(contrib + "/make-card-pki.sh", [pki])
        guard made.status == 0 else { throw ShellError("make-card-pki.sh failed: \(made.stderr)") }
    }

    /// Puts `card` into reader 0 or 1 and waits until PC/SC sees it.
    public func insert(_ card: VirtualCard, reader: Int = 0, log: String? = nil) throws {
        var arguments = ["insert", folder, "--reader", "\(reader)", "--wait", "--"] + card.arguments
        if let log { arguments += ["--log", log] }
        let inserted = try Shell.run(Self.contrib + "/virtual-reader.sh", arguments)
        guard inserted.status == 0 else { throw ShellError("virtual-reader.sh insert failed: \(inserted.stderr)") }
    }

    /// Takes the card out of the reader (its emulator stops).
    public func remove(reader: Int = 0) throws {
        let removed = try Shell.run(Self.contrib + "/virtual-reader.sh", ["remove", folder, "--reader", "\(reader)"])
        guard removed.status == 0 else { throw ShellError("virtual-reader.sh remove failed: \(removed.stderr)") }
    }

    /// Types `text` on the PIN pad (digits, or "cancel"): the reader waiting for a PIN takes it.
    public func typeOnPINPad(_ text: String) throws {
        let temporary = folder + "/pinpad-input.tmp"
        try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, folder + "/pinpad-input") == 0 else { throw ShellError("cannot write the PIN-pad input") }
    }

    /// True while the PIN pad waits for typing that was given but not taken yet.
    public var pinPadInputPending: Bool { FileManager.default.fileExists(atPath: folder + "/pinpad-input") }

    /// Stops the emulators and pcscd.
    public func stop() {
        _ = try? Shell.run(Self.contrib + "/virtual-reader.sh", ["stop", folder])
    }
}

/// A test PKI with its loopback services, the card certificates, and the virtual readers, shared
/// by all tests of one class: made in `override class func setUp()`, stopped in `tearDown()`.
public final class SharedCardReaders: @unchecked Sendable {
    public let services: SharedTestServices
    public let readers: VirtualCardReaders?
    /// Why the readers could not start (tests then fail with it).
    public let failure: String?
    public var folder: String { services.folder }

    public init(label: String, pinPad: Bool = false) {
        services = SharedTestServices(label: label)
        do {
            guard let pki = services.services?.pki.folder else { throw ShellError(services.failure ?? "no test PKI") }
            try VirtualCardReaders.addCardCertificates(to: pki)
            readers = try VirtualCardReaders.start(in: services.folder + "/readers", pinPad: pinPad)
            failure = nil
        } catch {
            readers = nil
            failure = "\(error)"
        }
    }

    public func stop() {
        readers?.stop()
        services.stop()
    }
}
