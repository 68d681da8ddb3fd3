import ASiC
import Configuration

/// What every command gets besides its arguments.
struct CommandContext: Sendable {
    let configuration: Configuration
    let quiet: Bool
    /// `-o` options that are not settings (only `mount` takes them).
    var mountOptions: [String] = []
    /// `--config FILE` and the `-o key=value` settings as given, for a command that runs asicfs again.
    var settingArguments: [String] = []
}

/// One `asicfs COMMAND`: its help text and what it does. Commands only parse and print;
/// the work is done by the core (`ASiC`), which the filesystem shares.
struct Command: Sendable {
    let name: String
    let synopsis: String
    let summary: String
    let details: String
    let options: [OptionSpec]
    let run: @Sendable (ParsedArguments, CommandContext) throws -> Int32

    var help: String {
        var text = "Usage: asicfs \(synopsis)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text += "\nOptions:\n"
        for option in options + globalOptions {
            let names = option.names.joined(separator: ", ") + (option.takesValue ? " VALUE" : "")
            text += "  " + names.padding(toLength: 24, withPad: " ", startingAt: 0) + " " + option.help + "\n"
        }
        return text
    }
}

/// The commands in the order `asicfs --help` lists them.
let commands: [Command] = [mountCommand, umountCommand, createCommand, listCommand, extractCommand, addCommand, removeCommand,
                           signCommand, verifyCommand, extendCommand, decryptCommand, encryptCommand, cardCommand, tokensCommand, remoteCommand,
                           openCommand, closeCommand]

/// Takes exactly `count` leading positionals or fails with a usage error naming `what`.
func requirePositionals(_ arguments: ParsedArguments, atLeast count: Int, _ what: String) throws {
    if arguments.positionals.count < count { throw UsageError("missing \(what)") }
}
