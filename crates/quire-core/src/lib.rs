//! Quire's domain, with no I/O.
//!
//! This crate holds what every other crate agrees on: the content types
//! (pages, sections, templates, collections, entries, images, navigation),
//! the field definitions of section templates and collections together with
//! the validator that checks content against them, JSON merge-patch, the
//! access groups and what each may do, and the errors that name the field and
//! the rule that was broken. It knows nothing of databases, HTTP or tools.

pub mod access;
pub mod diff;
pub mod error;
pub mod fields;
mod group;
pub mod input;
pub mod json;
pub mod locale;
pub mod merge;
pub mod model;
pub mod rules;
pub mod slug;
pub mod templates;
pub mod text;

pub use error::{FieldError, ValidationErrors};
