//! Reading JSON the same strict way on every surface: one value and nothing
//! after it, no key twice in an object, and a whole number written as a
//! float (`375.0`) accepted where an integer is expected — JSON does not tell
//! the two apart, and JSON Schema calls `375.0` an integer.

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt;

/// Why a JSON text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    /// Not JSON (or more than one value): the parser's message.
    Syntax(String),
    /// A key appears twice in one object; `path` names it (`content.title`).
    DuplicateKey {
        /// Path of the repeated key.
        path: String,
    },
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax(m) => write!(f, "not valid JSON: {m}"),
            JsonError::DuplicateKey { path } => write!(f, "{path}: the key appears more than once"),
        }
    }
}

impl std::error::Error for JsonError {}

/// Parses one JSON value, refusing trailing bytes after it and any object
/// with a repeated key (serde_json would silently keep the last one, so two
/// readers of the same body could disagree about what it says).
pub fn parse_strict(bytes: &[u8]) -> Result<Value, JsonError> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = Strict { path: String::new(), duplicate: &duplicate }.deserialize(&mut de);
    if let Some(path) = duplicate.into_inner() {
        return Err(JsonError::DuplicateKey { path });
    }
    let value = parsed.map_err(|e| JsonError::Syntax(e.to_string()))?;
    de.end().map_err(|e| JsonError::Syntax(e.to_string()))?;
    Ok(value)
}

/// [`parse_strict`] over text.
pub fn parse_strict_str(text: &str) -> Result<Value, JsonError> {
    parse_strict(text.as_bytes())
}

/// Builds a [`Value`] while remembering where it is, so a repeated key can
/// be named by its path.
struct Strict<'a> {
    path: String,
    duplicate: &'a RefCell<Option<String>>,
}

impl Strict<'_> {
    fn child(&self, segment: &str) -> String {
        if self.path.is_empty() { segment.to_string() } else { format!("{}.{segment}", self.path) }
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = format!("{}[{}]", self.path, items.len());
            match seq.next_element_seed(Strict { path, duplicate: self.duplicate })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = self.child(&key);
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(path);
                return Err(de::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(Strict { path, duplicate: self.duplicate })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Deserializes `T` from `value`, taking a whole-number float (`375.0`) as
/// the integer it denotes wherever `T` expects an integer; a fractional one
/// (`375.5`) is refused as "expected a whole number". The error carries the
/// path of the offending value.
pub fn from_value<T: DeserializeOwned>(mut value: Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    // Each retry fixes one more value, so the loop ends after at most as
    // many rounds as the input has numbers.
    loop {
        let err = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(t) => return Ok(t),
            Err(err) => err,
        };
        let message = err.inner().to_string();
        let Some(expected) = message
            .strip_prefix("invalid type: floating point `")
            .and_then(|r| r.split_once("`, expected "))
            .map(|(_, e)| e)
        else {
            return Err(err);
        };
        if !is_integer_type(expected) {
            return Err(err);
        }
        let Some(slot) = value_at(&mut value, err.path()) else { return Err(err) };
        let Some(float) = slot.as_f64() else { return Err(err) };
        match whole(float) {
            Some(integer) => *slot = integer,
            None => {
                let inner: serde_json::Error = de::Error::custom(format!("expected a whole number, got {float}"));
                return Err(serde_path_to_error::Error::new(err.path().clone(), inner));
            }
        }
    }
}

/// serde's names for the primitive integer types in "expected ..." messages.
fn is_integer_type(expected: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    expected == "usize"
        || expected == "isize"
        || expected.strip_prefix('i').is_some_and(digits)
        || expected.strip_prefix('u').is_some_and(digits)
}

/// Largest magnitude up to which every integer is exactly a float (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The integer a whole-number float denotes. Only up to 2^53: beyond it a
/// float stands for many integers (`-9223372036854775809` parses as the
/// float of `i64::MIN`), so taking one would accept an out-of-range number.
fn whole(f: f64) -> Option<Value> {
    if f.fract() != 0.0 || !f.is_finite() || f.abs() > EXACT {
        return None;
    }
    Some(Value::from(f as i64))
}

/// The value at `path` inside `value`.
fn value_at<'v>(value: &'v mut Value, path: &serde_path_to_error::Path) -> Option<&'v mut Value> {
    let mut current = value;
    for segment in path {
        current = match segment {
            serde_path_to_error::Segment::Seq { index } => current.get_mut(*index)?,
            serde_path_to_error::Segment::Map { key } => current.get_mut(key.as_str())?,
            // Enum variants and untracked steps do not address a JSON value.
            _ => return None,
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Input {
        width: Option<u32>,
        sort_order: Option<i64>,
        ratio: Option<f64>,
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        n: i32,
    }

    #[test]
    fn refuses_trailing_bytes_and_repeated_keys() {
        assert_eq!(parse_strict(br#" {"a": 1} "#).unwrap(), json!({"a": 1}));
        assert!(matches!(parse_strict(br#"{"a": 1} x"#), Err(JsonError::Syntax(_))));
        assert!(matches!(parse_strict(br#"{"a": 1}{"a": 2}"#), Err(JsonError::Syntax(_))));
        assert_eq!(
            parse_strict(br#"{"a": {"b": [1, {"c": 1, "c": 2}]}}"#),
            Err(JsonError::DuplicateKey { path: "a.b[1].c".into() })
        );
        assert_eq!(parse_strict(br#"{"a": 1, "a": 1}"#), Err(JsonError::DuplicateKey { path: "a".into() }));
        // The same key in two objects is fine.
        assert!(parse_strict(br#"[{"a": 1}, {"a": 2}]"#).is_ok());
    }

    #[test]
    fn whole_floats_are_integers_where_integers_are_expected() {
        let got: Input =
            from_value(json!({"width": 375.0, "sortOrder": -2.0, "ratio": 2.0, "items": [{"n": 4.0}]})).unwrap();
        assert_eq!(got, Input { width: Some(375), sort_order: Some(-2), ratio: Some(2.0), items: vec![Item { n: 4 }] });
        let err = from_value::<Input>(json!({"width": 375.5})).unwrap_err();
        assert_eq!(err.path().to_string(), "width");
        assert_eq!(err.inner().to_string(), "expected a whole number, got 375.5");
        let err = from_value::<Input>(json!({"items": [{"n": 1}, {"n": 0.5}]})).unwrap_err();
        assert_eq!(err.path().to_string(), "items[1].n");
        // Out of range stays out of range, and a float too large to stand
        // for one integer is no integer.
        assert!(from_value::<Input>(json!({"width": -1.0})).is_err());
        assert!(from_value::<Input>(json!({"sortOrder": 1e300})).is_err());
        let beyond: Value = serde_json::from_str(r#"{"sortOrder": -9223372036854775809}"#).unwrap();
        assert!(from_value::<Input>(beyond).is_err());
        let exact: Input = from_value(json!({"sortOrder": 9007199254740992.0})).unwrap();
        assert_eq!(exact.sort_order, Some(9_007_199_254_740_992));
    }
}
