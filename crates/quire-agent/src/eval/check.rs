//! Checks on values: what a task reads at the end ([`Check`]), a path
//! into the JSON value read and what must hold there.
//! Pure: the runner reads the value (a tool's answer, a delivered page)
//! and asks this module whether the check holds, and why not.

use serde::Deserialize;
use serde_json::Value;

/// What the delivery API is asked, as the public site reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// A published page with its published sections, by slug.
    Page,
    /// A published post, by slug.
    Post,
    /// A menu with its visible items, by key.
    Navigation,
}

/// A check on the site at the end: a value read (a tool's answer as the
/// site's admin sees it, or what the delivery API shows), a place in it
/// and what must hold there.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// What the check means, in words (shown when it fails).
    #[serde(default)]
    pub about: Option<String>,
    /// Read with this tool (a read tool: get*, readNote, listFolder…).
    #[serde(default)]
    pub tool: Option<String>,
    /// Its arguments.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Or read from the delivery API: what is public (null when it serves nothing).
    #[serde(default)]
    pub delivery: Option<Delivery>,
    /// The page's or post's slug, or the menu's key.
    #[serde(default)]
    pub slug: Option<String>,
    /// Where in the value ([`Path`]: `/items/[slug=faq]/content/heading`);
    /// default: the whole value.
    #[serde(default)]
    pub path: Option<String>,
    /// The value there equals this.
    #[serde(default)]
    pub equals: Option<Value>,
    /// The value there, as text, contains each of these (case does not count).
    #[serde(default, deserialize_with = "one_or_many")]
    pub contains: Vec<String>,
    /// The value there, as text, contains none of these.
    #[serde(default, deserialize_with = "one_or_many")]
    pub lacks: Vec<String>,
    /// The value there is an array of this many items.
    #[serde(default)]
    pub count: Option<usize>,
    /// There is a value there (true) or none (false).
    #[serde(default)]
    pub exists: Option<bool>,
}

impl Check {
    /// The rules a check follows beyond its shape; `place` names it in
    /// errors, `known` checks a tool's name.
    pub(super) fn validate(&self, place: &str, known: &dyn Fn(&str, &str) -> Result<(), String>) -> Result<(), String> {
        match (&self.tool, self.delivery) {
            (Some(tool), None) => {
                known(tool, &format!("{place}.tool"))?;
                if self.slug.is_some() {
                    return Err(format!("{place}.slug: only for delivery checks; put it in args"));
                }
            }
            (None, Some(_)) => {
                if self.slug.as_deref().is_none_or(|s| s.trim().is_empty()) {
                    return Err(format!("{place}.slug: a delivery check names the slug (or the menu's key)"));
                }
            }
            _ => return Err(format!("{place}: exactly one of `tool` or `delivery`")),
        }
        if let Some(path) = &self.path {
            Path::parse(path).map_err(|e| format!("{place}.path: {e}"))?;
        }
        let expects = self.equals.is_some()
            || !self.contains.is_empty()
            || !self.lacks.is_empty()
            || self.count.is_some()
            || self.exists.is_some();
        if !expects {
            return Err(format!("{place}: say what must hold (equals, contains, lacks, count or exists)"));
        }
        Ok(())
    }
}

pub(super) fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A string or a list of strings.
pub(super) fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// A key of an object, or an index of an array.
    Key(String),
    /// The first item of an array whose field `key` is `value` (compared
    /// as text: `[sortOrder=2]` finds the number 2).
    Find { key: String, value: String },
}

/// A place in a JSON value: `/`-separated keys and indexes, and `[k=v]`
/// steps that pick the first array item whose field `k` is `v`:
/// `/items/[templateKey=faq]/content/items`.
#[derive(Debug, Clone, PartialEq)]
pub struct Path(Vec<Step>);

impl Path {
    /// Reads a path; an empty one (or `/`) is the whole value.
    pub fn parse(text: &str) -> Result<Path, String> {
        let text = text.trim();
        if text.is_empty() || text == "/" {
            return Ok(Path(Vec::new()));
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!("\"{text}\" must start with /"));
        };
        let mut steps = Vec::new();
        for part in split_steps(rest) {
            if part.is_empty() {
                return Err(format!("\"{text}\" has an empty step"));
            }
            if let Some(inner) = part.strip_prefix('[') {
                let Some((key, value)) = inner.strip_suffix(']').and_then(|i| i.split_once('=')) else {
                    return Err(format!("\"{part}\": a find step is [key=value]"));
                };
                if key.is_empty() {
                    return Err(format!("\"{part}\": a find step names a key"));
                }
                steps.push(Step::Find { key: key.to_string(), value: value.to_string() });
            } else {
                steps.push(Step::Key(part.to_string()));
            }
        }
        Ok(Path(steps))
    }

    /// The value at this place, if there is one.
    pub fn select<'a>(&self, mut value: &'a Value) -> Option<&'a Value> {
        for step in &self.0 {
            value = match step {
                Step::Key(key) => match value {
                    Value::Object(map) => map.get(key)?,
                    Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
                    _ => return None,
                },
                Step::Find { key, value: wanted } => {
                    value.as_array()?.iter().find(|item| item.get(key).is_some_and(|v| as_text(v) == *wanted))?
                }
            };
        }
        Some(value)
    }
}

/// The steps of a path after its first `/`: split on `/`, except inside
/// a `[k=v]` step (whose value may hold one: `[path=notes/a.md]`).
fn split_steps(rest: &str) -> Vec<&str> {
    let (mut steps, mut start, mut depth) = (Vec::new(), 0, 0usize);
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                steps.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    steps.push(&rest[start..]);
    steps
}

/// A value as text: strings as they are, anything else as JSON.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value shortened for a message.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let cut: String = text.chars().take(157).collect();
    format!("{cut}...")
}

/// Whether `check` holds on `value` (what its source read): none when it
/// does, otherwise why not.
pub fn judge(check: &Check, value: &Value) -> Option<String> {
    let path = check.path.as_deref().unwrap_or("");
    // A path the task validated; an unreadable one here would be a bug of
    // the caller, reported as a failed check rather than a panic.
    let found = match Path::parse(path) {
        Ok(p) => p.select(value),
        Err(e) => return Some(format!("path {e}")),
    };
    let at = if path.is_empty() { String::from("the value") } else { path.to_string() };
    if let Some(exists) = check.exists {
        let there = found.is_some_and(|v| !v.is_null());
        if there != exists {
            return Some(match found {
                Some(v) if there => format!("{at} is {}, expected nothing there", shown(v)),
                _ => format!("nothing at {at} in {}", shown(value)),
            });
        }
    }
    let needs_value = check.equals.is_some() || check.count.is_some() || !check.contains.is_empty();
    let Some(found) = found else {
        return needs_value.then(|| format!("nothing at {at} in {}", shown(value)));
    };
    if let Some(expected) = &check.equals
        && !same(found, expected)
    {
        return Some(format!("{at} is {}, expected {}", shown(found), shown(expected)));
    }
    if let Some(n) = check.count {
        let len = found.as_array().map(Vec::len);
        if len != Some(n) {
            return Some(match len {
                Some(len) => format!("{at} has {len} items, expected {n}"),
                None => format!("{at} is {}, expected a list of {n}", shown(found)),
            });
        }
    }
    let text = as_text(found).to_lowercase();
    for part in &check.contains {
        if !text.contains(&part.to_lowercase()) {
            return Some(format!("{at} does not contain \"{part}\": {}", shown(found)));
        }
    }
    for part in &check.lacks {
        if text.contains(&part.to_lowercase()) {
            return Some(format!("{at} contains \"{part}\": {}", shown(found)));
        }
    }
    None
}

/// Equal values, numbers compared as numbers (TOML's 2 equals JSON's 2.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `value` includes `part`: every key of an object part is in
/// `value` with a value that includes the part's; other values are equal.
pub fn includes(value: &Value, part: &Value) -> bool {
    match (value, part) {
        (Value::Object(v), Value::Object(p)) => p.iter().all(|(k, pv)| v.get(k).is_some_and(|vv| includes(vv, pv))),
        _ => same(value, part),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(toml: &str) -> Check {
        toml::from_str(&format!("tool = \"getPage\"\n{toml}")).unwrap()
    }

    #[test]
    fn paths_find_keys_indexes_and_items() {
        let v = json!({ "items": [{ "slug": "a", "n": 1 }, { "slug": "b", "n": 2, "tags": ["x"] }] });
        assert_eq!(Path::parse("/items/1/n").unwrap().select(&v), Some(&json!(2)));
        assert_eq!(Path::parse("/items/[slug=b]/tags/0").unwrap().select(&v), Some(&json!("x")));
        assert_eq!(Path::parse("/items/[n=1]/slug").unwrap().select(&v), Some(&json!("a")));
        assert_eq!(Path::parse("/items/[slug=c]").unwrap().select(&v), None);
        assert_eq!(Path::parse("").unwrap().select(&v), Some(&v));
        let notes = json!({ "items": [{ "path": "notes/a.md", "kind": "file" }] });
        assert_eq!(Path::parse("/items/[path=notes/a.md]/kind").unwrap().select(&notes), Some(&json!("file")));
        assert!(Path::parse("items").is_err());
        assert!(Path::parse("/items//x").is_err());
        assert!(Path::parse("/items/[slug]").is_err());
    }

    #[test]
    fn expectations_hold_or_say_why_not() {
        let v = json!({ "items": [{ "name": "Plans", "sortOrder": 2 }], "count": 1 });
        assert_eq!(judge(&check("path = \"/items/0/name\"\nequals = \"Plans\""), &v), None);
        assert_eq!(judge(&check("path = \"/items/0/sortOrder\"\nequals = 2"), &v), None);
        let why = judge(&check("path = \"/items/0/name\"\nequals = \"Pricing\""), &v).unwrap();
        assert!(why.contains("expected \"Pricing\""), "{why}");
        assert_eq!(judge(&check("path = \"/items\"\ncount = 1"), &v), None);
        assert!(judge(&check("path = \"/items\"\ncount = 2"), &v).unwrap().contains("has 1 items"));
        assert_eq!(judge(&check("contains = [\"plans\", \"SORTORDER\"]"), &v), None);
        assert!(judge(&check("lacks = \"plans\""), &v).is_some());
        assert_eq!(judge(&check("path = \"/items/1\"\nexists = false"), &v), None);
        assert!(judge(&check("path = \"/items/0\"\nexists = false"), &v).is_some());
        assert!(judge(&check("path = \"/missing\"\nequals = 1"), &v).unwrap().starts_with("nothing at /missing"));
    }

    #[test]
    fn includes_is_a_subset_of_objects() {
        let v = json!({ "ids": ["a"], "meta": { "title": "T", "x": 1 } });
        assert!(includes(&v, &json!({ "meta": { "title": "T" } })));
        assert!(!includes(&v, &json!({ "meta": { "title": "U" } })));
        assert!(includes(&v, &json!({ "ids": ["a"] })));
        assert!(!includes(&v, &json!({ "ids": ["b"] })));
    }
}
