/// The version of the JSON shapes asicfs prints (every `--json` output), given as
/// `format_version` in each: keys are snake_case; the version goes up only when a key changes
/// meaning or goes away (new keys may be added without it). 2: one envelope for every command
/// (`command`, `ok`, `exit_status`, `error` as `{code, message}`), `container` for verify's
/// `path`, `data_files` always objects, `sign --json` as JSON Lines (docs/json-schema.json).
public enum JSONFormat {
    public static let version = 2
}
