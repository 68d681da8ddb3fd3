import ASiC
import Foundation

let createCommand = Command(
    name: "create",
    synopsis: "create CONTAINER [FILE...]",
    summary: "make a new container with these data files",
    details: """
    Each FILE is stored under its base name, with a media type guessed from the name.
    With no FILE the container is empty (files can be added later). An existing
    non-empty CONTAINER is never overwritten.
    """,
    options: [],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 1, "CONTAINER")
        let path = arguments.positionals[0]
        let files = arguments.positionals.dropFirst().map { NewDataFile(sourcePath: $0) }
        let progress = ProgressLine("creating \(path)", quiet: context.quiet)
        defer { progress.finish() }
        let container = try Container.create(at: path, files: files, progress: progress.update)
        progress.finish()
        if !context.quiet {
            Terminal.out("created \(path) with \(container.dataFiles.count) data file\(container.dataFiles.count == 1 ? "" : "s")")
        }
        return 0
    })

let addCommand = Command(
    name: "add",
    synopsis: "add CONTAINER FILE...",
    summary: "add data files to an unsigned container",
    details: """
    Each FILE is stored under its base name. A name that is already in the container is an
    error unless --replace is given. A signed container cannot be changed. The container is
    replaced atomically: if anything fails it stays exactly as it was.
    """,
    options: [OptionSpec(names: ["--replace"], takesValue: false, help: "replace data files of the same name")],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "FILE to add")
        let path = arguments.positionals[0]
        var edit = try Container.open(path).edit()
        for file in arguments.positionals.dropFirst() {
            try edit.add(NewDataFile(sourcePath: file), replacing: arguments.has("--replace"))
        }
        let progress = ProgressLine("adding to \(path)", quiet: context.quiet)
        defer { progress.finish() }
        try edit.save(progress: progress.update)
        return 0
    })

let removeCommand = Command(
    name: "remove",
    synopsis: "remove CONTAINER NAME...",
    summary: "remove data files from an unsigned container",
    details: "NAME is the data file's name in the container, as 'asicfs ls' shows it.",
    options: [],
    run: { arguments, context in
        try requirePositionals(arguments, atLeast: 2, "NAME to remove")
        let path = arguments.positionals[0]
        var edit = try Container.open(path).edit()
        for name in arguments.positionals.dropFirst() { try edit.remove(name) }
        let progress = ProgressLine("saving \(path)", quiet: context.quiet)
        defer { progress.finish() }
        try edit.save(progress: progress.update)
        return 0
    })
