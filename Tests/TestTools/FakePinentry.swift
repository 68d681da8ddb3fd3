import Foundation

/// A pinentry stand-in speaking the Assuan protocol (POSIX sh): it logs the commands it gets,
/// its own environment and its parent's environment and command line (to check that no secret
/// is there), and answers GETPIN with `pin`, or cancels as pinentry does when `pin` is nil.
public enum FakePinentry {
    /// Writes the program to `path` (made executable); its log goes to `log`.
    public static func write(to path: String, pin: String?, log: String) throws {
        let answer = pin.map { "echo \"D \($0)\"; echo OK" } ?? "echo 'ERR 83886179 Operation cancelled <Pinentry>'"
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            { echo "ARGV $0 $*"; tr '\\0' '\\n' < /proc/$PPID/environ | sed 's/^/PARENT-ENV /'; \
              echo "PARENT-ARGV $(tr '\\0' ' ' < /proc/$PPID/cmdline)"; env | sed 's/^/ENV /'; } >> '\(log)'
            while IFS= read -r line; do
              echo "$line" >> '\(log)'
              case "$line" in
                GETPIN) \(answer) ;;
                BYE) echo OK 2>/dev/null; exit 0 ;;
                *) echo OK ;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
    }
}
