/// The version of the JSON shapes asicfs prints (`ls`, `verify` and the other `--json`
/// outputs), given as `format_version` in each: keys are snake_case; the version goes up only
/// when a key changes meaning or goes away (new keys may be added without it).
public enum JSONFormat {
    public static let version = 1
}
