//! The values a statement binds and a row holds, and how they convert from
//! and into Rust types (times stored as RFC 3339 text).

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use std::borrow::Cow;

/// A value bound to a query or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub(crate) fn kind(&self) -> &'static str {
        self.as_ref().kind()
    }

    /// The value borrowed.
    pub(crate) fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Int(*i),
            Value::Real(r) => ValueRef::Real(*r),
            Value::Text(s) => ValueRef::Text(Cow::Borrowed(s)),
            Value::Blob(b) => ValueRef::Blob(b),
        }
    }
}

/// A value of a row borrowed from the statement that read it (see
/// [`super::RowRef`]): a [`Value`] without a copy of its text or bytes.
/// Text that is not UTF-8 is read as [`String::from_utf8_lossy`] makes it,
/// as [`Value`]'s is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ValueRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(Cow<'a, str>),
    Blob(&'a [u8]),
}

impl ValueRef<'_> {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            ValueRef::Null => "null",
            ValueRef::Int(_) => "integer",
            ValueRef::Real(_) => "real",
            ValueRef::Text(_) => "text",
            ValueRef::Blob(_) => "blob",
        }
    }
}

/// The text a time is stored as: RFC 3339 with as many fraction digits as it
/// has and `+00:00` (what the store has always written, so stored times
/// compare and sort as text).
pub(crate) fn time_text(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, false)
}

macro_rules! value_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from($v: $t) -> Self {
                $e
            }
        })*
    };
}

value_from! {
    i64 => |v| Value::Int(v),
    &i64 => |v| Value::Int(*v),
    i32 => |v| Value::Int(v.into()),
    &i32 => |v| Value::Int((*v).into()),
    &u32 => |v| Value::Int((*v).into()),
    &f64 => |v| Value::Real(*v),
    &f32 => |v| Value::Real((*v).into()),
    u32 => |v| Value::Int(v.into()),
    u16 => |v| Value::Int(v.into()),
    u8 => |v| Value::Int(v.into()),
    bool => |v| Value::Int(v.into()),
    &bool => |v| Value::Int((*v).into()),
    f64 => |v| Value::Real(v),
    f32 => |v| Value::Real(v.into()),
    &str => |v| Value::Text(v.to_string()),
    String => |v| Value::Text(v),
    &String => |v| Value::Text(v.clone()),
    &&str => |v| Value::Text(v.to_string()),
    Vec<u8> => |v| Value::Blob(v),
    &Vec<u8> => |v| Value::Blob(v.clone()),
    &[u8] => |v| Value::Blob(v.to_vec()),
    DateTime<Utc> => |v| Value::Text(time_text(&v)),
    &DateTime<Utc> => |v| Value::Text(time_text(v)),
    &Value => |v| v.clone(),
}

macro_rules! value_from_option {
    ($($t:ty),* $(,)?) => {
        $(impl From<Option<$t>> for Value {
            fn from(v: Option<$t>) -> Self {
                v.map_or(Value::Null, Into::into)
            }
        }
        impl From<&Option<$t>> for Value {
            fn from(v: &Option<$t>) -> Self {
                v.as_ref().map_or(Value::Null, Into::into)
            }
        })*
    };
}

value_from_option!(i64, i32, u32, bool, f64, f32, String, Vec<u8>, DateTime<Utc>);

impl From<Option<&str>> for Value {
    fn from(v: Option<&str>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl From<Option<&String>> for Value {
    fn from(v: Option<&String>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// A type a column's value decodes into.
pub(crate) trait FromValue: Sized {
    /// The value decoded, or why not.
    fn from_value(v: &Value) -> Result<Self, String>;
}

fn wrong(v: &Value, want: &str) -> String {
    format!("a {} where {want} was expected", v.kind())
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Int(i) => Ok(*i),
            _ => Err(wrong(v, "an integer")),
        }
    }
}

impl FromValue for i32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        i32::try_from(i64::from_value(v)?).map_err(|e| e.to_string())
    }
}

impl FromValue for u32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        u32::try_from(i64::from_value(v)?).map_err(|e| e.to_string())
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(r) => Ok(*r),
            Value::Int(i) => Ok(*i as f64),
            _ => Err(wrong(v, "a number")),
        }
    }
}

impl FromValue for f32 {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(f64::from_value(v)? as f32)
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(wrong(v, "text")),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            _ => Err(wrong(v, "a blob")),
        }
    }
}

impl FromValue for DateTime<Utc> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => parse_time(s).ok_or_else(|| format!("\"{s}\" is not a time")),
            Value::Int(secs) => DateTime::from_timestamp(*secs, 0).ok_or_else(|| format!("{secs} is not a time")),
            _ => Err(wrong(v, "a time")),
        }
    }
}

/// A stored time: RFC 3339, or SQLite's own `YYYY-MM-DD HH:MM:SS[.f]`
/// (with or without an offset, UTC when without).
pub(crate) fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%F %T%.f%:z") {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(s, "%F %T%.f").ok().map(|t| t.and_utc())
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}
