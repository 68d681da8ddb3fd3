import ASiC
import Configuration
import Foundation

/// The `asicfs` command line: picks the command, parses its arguments, loads the settings,
/// runs it and turns every failure into one line on stderr and an exit code
/// (0 success, 1 operation failed, 2 usage error).
public enum Main {
    /// `asicfs -q --config F -o k=v ls C`: the global options may come before the command too;
    /// they are moved after it, where each command parses them.
    static func movingGlobalOptionsAfterTheCommand(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if ["-q", "--quiet"].contains(argument) || argument.hasPrefix("--config=") || argument.hasPrefix("--option=") {
                leading.append(argument)
                index += 1
            } else if ["--config", "-o", "--option"].contains(argument), index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        return [arguments[index]] + leading + arguments[(index + 1)...]
    }

    /// Other names a command answers to (what people type from other tools).
    static let aliases = ["list": "ls", "rm": "remove", "unmount": "umount"]

    /// The command by its name or an alias.
    static func command(named name: String) -> Command? {
        commands.first { $0.name == (aliases[name] ?? name) }
    }

    public static func run(_ arguments: [String]) -> Int32 {
        let arguments = movingGlobalOptionsAfterTheCommand(Array(arguments.dropFirst()))
        guard let first = arguments.first else {
            FileHandle.standardError.write(Data(globalHelp.utf8))
            return 2
        }
        switch first {
        case "--version", "-V", "version":
            Terminal.out("asicfs \(asicfsVersion)")
            if arguments.dropFirst().contains(where: { $0 == "--verbose" || $0 == "-v" }) { Terminal.out(BuiltInTrustReport.text()) }
            return 0
        case "--help", "-h":
            Terminal.out(globalHelp)
            return 0
        case "help":
            guard arguments.count > 1 else {
                Terminal.out(globalHelp)
                return 0
            }
            guard let command = command(named: arguments[1]) else {
                Terminal.error("unknown command '\(arguments[1])' (see 'asicfs --help')")
                return 2
            }
            Terminal.out(command.help)
            return 0
        default:
            break
        }
        // mount(8) and fstab run FUSE programs as "PROGRAM SOURCE MOUNTPOINT -o OPTIONS"
        // (mount.fuse3): that is `asicfs mount`.
        if command(named: first) == nil, looksLikeMountHelperCall(arguments) {
            return run(["asicfs", "mount"] + arguments)
        }
        guard let command = command(named: first) else {
            let suggestion = Suggestion.closest(to: first, among: commands.map(\.name) + aliases.keys).map { "; did you mean '\(aliases[$0] ?? $0)'?" } ?? ""
            Terminal.error("unknown command '\(first)'\(suggestion) (see 'asicfs --help')")
            return 2
        }
        var container: String? = nil
        // Known before parsing, so that a mistake in the arguments is JSON too.
        let wantsJSON = arguments.dropFirst().contains("--json") && command.options.contains { $0.names.contains("--json") }
        var jsonName = CommandJSON.name(command.name, positionals: Array(arguments.dropFirst().prefix(1)))
        var loadedConfiguration: Configuration? = nil
        /// A failure's line on stderr, and with --json the same as one object on stdout.
        func failed(_ line: String, status: Int32, code: ErrorCode) -> Int32 {
            Terminal.error(line)
            // The desktop runs `open` without a terminal: every failure is a notification too.
            if command.name == openCommand.name {
                OpenAttempt.notify(given: container ?? "", reason: line, configuration: loadedConfiguration ?? Configuration())
            }
            if wantsJSON {
                CommandJSON.failure(jsonName, container: CommandJSON.containerCommands.contains(command.name) ? container : nil,
                                    code: code, error: line, status: status)
            }
            return status
        }
        do {
            let parsed = try ParsedArguments.parse(Array(arguments.dropFirst()), options: command.options)
            container = parsed.positionals.first
            jsonName = CommandJSON.name(command.name, positionals: parsed.positionals)
            if parsed.has("--help") {
                Terminal.out(command.help)
                return 0
            }
            // mount takes FUSE options through -o too: settings are the key=value ones with a known key.
            var settings = parsed.all("--option")
            var mountOptions: [String] = []
            if command.name == "mount" {
                let all = settings.flatMap { $0.split(separator: ",", omittingEmptySubsequences: true).map(String.init) }
                settings = all.filter { option in
                    option.split(separator: "=", maxSplits: 1).first.map { Configuration.knownKeys.contains(String($0)) } ?? false
                }
                mountOptions = all.filter { !settings.contains($0) }
            }
            let configuration = try Configuration.load(explicitPath: parsed.value("--config"), overrides: settings)
            loadedConfiguration = configuration
            var context = CommandContext(configuration: configuration, quiet: parsed.has("--quiet"))
            context.mountOptions = mountOptions
            context.settingArguments = (parsed.value("--config").map { ["--config", $0] } ?? []) + settings.flatMap { ["-o", $0] }
            return try command.run(parsed, context)
        } catch let error as UsageError {
            return failed("\(error.description) (see 'asicfs \(command.name) --help')", status: 2, code: .usage)
        } catch let error as ConfigurationError {
            return failed(error.description, status: 2, code: .configuration)
        } catch let error as ContainerError {
            return failed(error.line(naming: container), status: 1, code: ErrorCode.of(error))
        } catch {
            return failed("\(error)", status: 1, code: ErrorCode.of(error))
        }
    }

    /// SOURCE (a file or folder) and MOUNTPOINT (a folder) first, then options.
    static func looksLikeMountHelperCall(_ arguments: [String]) -> Bool {
        guard arguments.count >= 2, !arguments[0].hasPrefix("-"), !arguments[1].hasPrefix("-") else { return false }
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: arguments[0])
            && FileManager.default.fileExists(atPath: arguments[1], isDirectory: &isFolder) && isFolder.boolValue
    }

    static var globalHelp: String {
        var text = """
        asicfs \(asicfsVersion): ASiC-E signature containers (.asice, .sce, .bdoc) as folders.

        Usage: asicfs COMMAND [ARGUMENTS] [OPTIONS]

        Commands:

        """
        for command in commands {
            // A long synopsis gets its own line rather than being cut.
            if command.synopsis.count > 46 {
                text += "  " + command.synopsis + "\n" + String(repeating: " ", count: 49) + command.summary + "\n"
            } else {
                text += "  " + command.synopsis.padding(toLength: 46, withPad: " ", startingAt: 0) + " " + command.summary + "\n"
            }
        }
        text += """

        Every command takes --config FILE, -o key=value, -q and --help; 'asicfs COMMAND --help' shows its options.
        Exit codes: 0 success, 1 the operation failed (the reason is on stderr), 2 usage error.

        Settings (\(Configuration.systemPath()), then \(Configuration.defaultPath()), or -o key=value):

        """
        for (key, meaning) in Configuration.keys {
            text += "  " + key.padding(toLength: 40, withPad: " ", startingAt: 0) + " " + meaning + "\n"
        }
        text += "\nSee asicfs(1) for details.\n"
        return text
    }
}
