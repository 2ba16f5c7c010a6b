/// sqlive's version, as `--version` and `initialize` report it.
public enum SQLiveVersion {
    public static let current = "0.1.0"
}
