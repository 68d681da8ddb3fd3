import Foundation

/// A pinentry stand-in speaking the Assuan protocol (POSIX sh): it logs the commands it gets,
/// its own environment and its parent's environment and command line (to check that no secret
/// is there), and answers GETPIN with `pin`, or cancels as pinentry does when `pin` is nil.
public enum FakePinentry {
    /// Writes the program to `path` (made executable); its log goes to `log`. `holdWhile`: at
    /// GETPIN the dialog "stays open" while that file exists, with `HOLD.held` made meanwhile
    /// (a test's deterministic window while the person looks at the dialog).
    public static func write(to path: String, pin: String?, log: String, holdWhile hold: String? = nil) throws {
        var answer = pin.map { "echo \"D \($0)\"; echo OK" } ?? "echo 'ERR 83886179 Operation cancelled <Pinentry>'"
        if let hold { answer = ": > '\(hold).held'; while [ -e '\(hold)' ]; do sleep 0.05; done; " + answer }
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
