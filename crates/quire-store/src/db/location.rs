//! Where the database is: a SQLite file or a PostgreSQL URL, read from the
//! settings and shown without its password.

use std::path::PathBuf;

/// Where the database is: a SQLite file, or a PostgreSQL server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file (created when missing).
    File(PathBuf),
    /// A PostgreSQL database, as a `postgres://` URL.
    Postgres(String),
}

impl Location {
    /// A `postgres://` or `postgresql://` URL names a PostgreSQL database;
    /// anything else is a SQLite file's path (`sqlite://` taken off).
    pub fn parse(url: &str) -> Location {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Location::Postgres(url.to_string())
        } else {
            Location::File(PathBuf::from(url.strip_prefix("sqlite://").unwrap_or(url)))
        }
    }
}

impl std::fmt::Display for Location {
    /// The file's path, or the URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => match (url.find("://"), url.rfind('@')) {
                (Some(scheme), Some(at)) if at > scheme => {
                    let user = &url[scheme + 3..at];
                    let user = user.split(':').next().unwrap_or_default();
                    write!(f, "{}{user}{}", &url[..scheme + 3], &url[at..])
                }
                _ => f.write_str(url),
            },
        }
    }
}
