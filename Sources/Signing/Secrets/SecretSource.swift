import ASiC
import Configuration
import Crypto
import Foundation

/// Where PINs and passphrases come from, one module for every method (the ID-card, PKCS#11
/// tokens, remote signing, a PKCS#12 passphrase). In order: a descriptor the caller named
/// (`pin-fd=N`), else the configured pinentry program (`pinentry`, default `pinentry`) if it
/// can be found, else a no-echo prompt on the terminal. (A PIN pad comes before the terminal;
/// the card method decides that, as only it knows the reader.) Secrets live in `SecretBytes`,
/// are wiped after use and never reach argv, the environment, a log or a file.
public enum SecretSource: Sendable, Equatable {
    case descriptor(Int32)
    case pinentry(String)
    case terminal

    /// The source for one request. `descriptor` comes from `pin-fd=`; `terminalAllowed` is false
    /// in a mount's daemon (it has no terminal; pinentry is how a mount asks).
    public static func choose(descriptor: Int32?, configuration: Configuration, terminalAllowed: Bool) -> SecretSource? {
        if let descriptor { return .descriptor(descriptor) }
        if let program = pinentryProgram(configuration), configuration["pinentry"] != nil || defaultPinentryCanAsk() {
            return .pinentry(program)
        }
        if terminalAllowed, TerminalPrompt.isAvailable { return .terminal }
        return nil
    }

    /// Whether the system's default pinentry can show a prompt: it draws on the terminal of our
    /// standard input (pinentry-curses, Debian's default, otherwise fails with "Inappropriate
    /// ioctl for device"), or opens a dialog where a desktop session is. A program named by
    /// the pinentry setting is trusted to know its own way.
    static func defaultPinentryCanAsk(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        isatty(STDIN_FILENO) == 1 || !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Why no source could be chosen, for the message that says what to give instead.
    public static let noPrompt = "no terminal to ask on, and no DISPLAY or WAYLAND_DISPLAY for pinentry's dialog"

    /// The configured pinentry as an executable path, or nil if it is not installed.
    /// `pinentry = none` turns pinentry off.
    static func pinentryProgram(_ configuration: Configuration) -> String? {
        let name = configuration["pinentry"] ?? "pinentry"
        if name.isEmpty || name == "none" { return nil }
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where access("\(folder)/\(name)", X_OK) == 0 {
            return "\(folder)/\(name)"
        }
        return nil
    }

    /// Asks for the secret and checks its form (length, digits).
    public func ask(_ request: SecretRequest) throws -> SecretBytes {
        let secret: SecretBytes
        switch self {
        case .descriptor(let fd):
            secret = try DescriptorSecret.read(fd, what: request.prompt)
        case .pinentry(let program):
            secret = try Pinentry(program: program).ask(request)
        case .terminal:
            // Names in these texts come from files and certificates: escaped like all output.
            if let error = request.error { FileHandle.standardError.write(Data("asicfs: \(PrintableText.escaped(error))\n".utf8)) }
            let text = PrintableText.escaped(request.description) + "\n" + PrintableText.escaped(request.prompt) + ": "
            let first = try TerminalPrompt.read(prompt: text, what: request.prompt)
            if request.confirm {
                let second = try TerminalPrompt.read(prompt: "\(request.prompt) again: ", what: request.prompt)
                defer { second.wipe() }
                guard first.withBytes({ a in second.withBytes { b in a.elementsEqual(b) } }) else {
                    first.wipe()
                    throw SecretEntryError.invalid("the two new \(request.prompt) values differ")
                }
            }
            secret = first
        }
        do { try request.check(secret) } catch {
            secret.wipe()
            throw error
        }
        return secret
    }

    /// What the person is told when a PIN is asked: where to type it.
    public var whereToAnswer: String {
        switch self {
        case .descriptor(let fd): "read from descriptor \(fd)"
        case .pinentry(let program): "asked by \(program)"
        case .terminal: "asked on the terminal"
        }
    }
}
