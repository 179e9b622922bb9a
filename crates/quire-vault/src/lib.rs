//! A sandboxed folder of markdown notes on disk: the storage behind Quire's vault tools.
//!
//! A [`Vault`] is opened on a folder and every operation stays inside it. Notes are read and edited by line
//! number ([`lines`] holds the pure line model), written atomically (temporary file, then rename), and never
//! deleted: [`Vault::archive`] moves them to `.archive/YYYY-MM-DD_HH-mm-ss/<path>` instead. Every operation that
//! changes something returns a [`Change`] with the note's text before and after, for the caller's change log and
//! for undoing it with [`Vault::restore_content`]. [`Vault::search`] ranks notes with an in-memory index that
//! catches up with edits made outside Quire before each search.
//!
//! Every path a caller gives is checked by one function before it touches the disk (see [`sandbox`]): absolute
//! paths, `..`, backslashes, control characters and symbolic links leading outside the vault are refused, and
//! nothing but [`Vault::archive`] writes into `.archive`. Errors name the parameter at fault
//! ([`VaultError::field`]) and say what sort of failure they are ([`VaultError::kind`]).
//!
//! Architecture Invariant: synchronous and plain `std::fs`; no async runtime, no knowledge of tools, HTTP or the
//! database. Paths in and out are vault-relative with `/` separators.

pub mod error;
mod files;
pub mod glob;
pub mod lines;
pub mod sandbox;
mod search;
mod vault;

pub use error::{ErrorKind, Param, VaultError};
pub use files::MAX_NOTE_BYTES;
pub use search::{NOTE_EXTENSIONS, SearchHit};
pub use vault::{Change, ChangeOp, Item, ItemKind, NoteLines, NoteStamp, Vault};
