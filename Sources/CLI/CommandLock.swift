import ASiC

/// Another program (a mount, another command, flock(1)) holds the container: `busy` in the
/// JSON (`ErrorCode`), so that a script can wait and try again; the line is the same as before.
struct ContainerBusy: Error, CustomStringConvertible {
    let description: String
}

/// The lock a command takes before it changes a container.
func lockForChange(_ path: String) throws -> ContainerLock {
    do {
        return try ContainerLock.acquire(path)
    } catch let error as ContainerError {
        if case .refused = error { throw ContainerBusy(description: error.line(naming: path)) }
        throw error
    }
}
