//! The store's fixed names: the schema version this code writes and the
//! environment variable that names the database.

/// The schema version this code writes (SQLite `user_version`, the
/// `hwcal_schema` table in PostgreSQL).
pub const SCHEMA_VERSION: i64 = 3;

/// Environment variable naming the database (overridden by `--db`): a file
/// path or a `postgres://` URL.
pub const ENV_VAR: &str = "HWCAL_DB";
