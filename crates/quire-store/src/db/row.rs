//! The rows a statement answers: columns read by name or position, whole
//! rows decoded into tuples.

use super::value::{FromValue, Value, ValueRef};
use crate::{Result, StoreError};
use std::sync::Arc;

/// A row read: its columns' names and values.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(super) names: Arc<[String]>,
    pub(super) values: Vec<Value>,
}

/// Names a column of a row: by name or by position.
pub(crate) trait ColumnIndex: std::fmt::Display + Copy {
    /// The column's position in `row`.
    fn position(self, row: &Row) -> Option<usize>;
}

impl ColumnIndex for &str {
    fn position(self, row: &Row) -> Option<usize> {
        row.names.iter().position(|n| n == self)
    }
}

impl ColumnIndex for usize {
    fn position(self, row: &Row) -> Option<usize> {
        (self < row.values.len()).then_some(self)
    }
}

impl Row {
    /// The value of column `col`, decoded.
    pub fn try_get<T: FromValue, I: ColumnIndex>(&self, col: I) -> Result<T> {
        let at = col.position(self).ok_or_else(|| StoreError::Corrupt(format!("no column {col}")))?;
        T::from_value(&self.values[at]).map_err(|e| StoreError::Corrupt(format!("column {col}: {e}")))
    }

    /// Its values, in the order of the columns.
    pub fn values(&self) -> &[Value] {
        &self.values
    }
}

/// A row read with its values borrowed from the statement (see
/// [`super::Conn::each_ref`]): for a reader that writes the values
/// somewhere at once, with no copy of the row in between.
pub(crate) struct RowRef<'a> {
    pub(super) names: &'a [String],
    pub(super) values: Vec<ValueRef<'a>>,
}

impl<'a> RowRef<'a> {
    /// The value of the column at `at`.
    pub fn get(&self, at: usize) -> Result<&ValueRef<'a>> {
        self.values.get(at).ok_or_else(|| StoreError::Corrupt(format!("no column {at}")))
    }

    /// The text of the column at `at`, or `None` for NULL.
    pub fn opt_text(&self, at: usize) -> Result<Option<&str>> {
        match self.get(at)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(t) => Ok(Some(t)),
            v => Err(self.wrong(at, v, "text")),
        }
    }

    /// The text of the column at `at`.
    pub fn text(&self, at: usize) -> Result<&str> {
        self.opt_text(at)?.ok_or_else(|| self.wrong(at, &ValueRef::Null, "text"))
    }

    /// The integer of the column at `at`.
    pub fn int(&self, at: usize) -> Result<i64> {
        match self.get(at)? {
            ValueRef::Int(i) => Ok(*i),
            v => Err(self.wrong(at, v, "an integer")),
        }
    }

    /// How long its texts are together, in bytes.
    pub fn text_len(&self) -> usize {
        self.values.iter().map(|v| if let ValueRef::Text(t) = v { t.len() } else { 0 }).sum()
    }

    /// The name of the column at `at`, for errors.
    pub fn name(&self, at: usize) -> &str {
        self.names.get(at).map_or("?", String::as_str)
    }

    fn wrong(&self, at: usize, v: &ValueRef<'_>, want: &str) -> StoreError {
        StoreError::Corrupt(format!("column {}: a {} where {want} was expected", self.name(at), v.kind()))
    }
}

/// A type a whole row decodes into (tuples, by position).
pub(crate) trait FromRow: Sized {
    /// The row decoded.
    fn from_row(row: &Row) -> Result<Self>;
}

impl FromRow for Row {
    fn from_row(row: &Row) -> Result<Self> {
        Ok(row.clone())
    }
}

/// A struct read from `$row`: each field before the `;` from the column of
/// the same name, each after it from the expression given
/// (`read_row!(row => Upload { id, url; scope: Scope::of_row(row)? })`).
/// Used where a `?` passes a [`crate::StoreError`] on.
macro_rules! read_row {
    ($row:ident => $ty:ident { $($field:ident),+ $(,)? $(; $($other:ident: $value:expr),+ $(,)?)? }) => {
        $ty { $($field: $row.try_get(stringify!($field))?,)+ $($($other: $value,)+)? }
    };
}
pub(crate) use read_row;

macro_rules! tuple_from_row {
    ($($n:tt $t:ident),+) => {
        impl<$($t: FromValue),+> FromRow for ($($t,)+) {
            fn from_row(row: &Row) -> Result<Self> {
                Ok(($(row.try_get::<$t, usize>($n)?,)+))
            }
        }
    };
}

tuple_from_row!(0 A);
tuple_from_row!(0 A, 1 B);
tuple_from_row!(0 A, 1 B, 2 C);
tuple_from_row!(0 A, 1 B, 2 C, 3 D);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_from_row!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
