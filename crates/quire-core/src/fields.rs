//! Field definitions of section templates and collections, and the validator
//! that checks content against them on every write.
//!
//! Content is a JSON object. Each field definition names a key, a kind and its
//! limits; the validator walks both and reports every broken rule with the
//! dotted path of the value (`content.tiers.1.name: required`).

use crate::FieldError;
use crate::text::{check_line, check_line_chars};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of value a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum FieldKind {
    /// A single line of plain text.
    Text,
    /// Markdown, possibly long.
    Markdown,
    /// An image of the media library: a relative `/uploads/...` URL, or an
    /// object `{ imageId?, url, alt? }`.
    Image,
    /// A link: `{ label?, href }`; href is a relative path, `#anchor`,
    /// `http(s)://`, `mailto:` or `tel:`.
    Link,
    /// A number, optionally bounded by `min` / `max`.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of `options`.
    Select,
    /// A date or date-time (ISO 8601, e.g. `2026-11-22` or `2026-11-22T10:00:00Z`).
    Date,
    /// An object with its own `fields`.
    Object,
    /// A list; each item is validated against `item`.
    List,
}

impl FieldKind {
    /// The word used in errors: `must be text`.
    pub fn noun(self) -> &'static str {
        match self {
            FieldKind::Text => "text",
            FieldKind::Markdown => "markdown text",
            FieldKind::Image => "an image (\"/uploads/...\" or { url, imageId?, alt? })",
            FieldKind::Link => "a link { label?, href }",
            FieldKind::Number => "a number",
            FieldKind::Boolean => "true or false",
            FieldKind::Select => "one of the options",
            FieldKind::Date => "an ISO 8601 date",
            FieldKind::Object => "an object",
            FieldKind::List => "a list",
        }
    }
}

/// One field of a template or collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldDef {
    /// The key in content, camelCase (`backgroundImage`).
    pub name: String,
    /// What kind of value it holds.
    pub kind: FieldKind,
    /// Whether the key must be present and non-empty.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// What editors read as the field's name ("Call to action"); without
    /// one, its name in words ([`words_of`]: `backgroundImage` reads
    /// "Background image").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The field's help: a short explanation shown to editors under its
    /// input, and to the agent with the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Longest accepted text, in characters (text, markdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 4294967295.0)]
    pub max_length: Option<u32>,
    /// Smallest accepted number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Largest accepted number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Fewest items of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 4294967295.0)]
    pub min_items: Option<u32>,
    /// Most items of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 4294967295.0)]
    pub max_items: Option<u32>,
    /// Accepted values of a select.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Sub-fields of an object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(no_recursion)]
    pub fields: Vec<FieldDef>,
    /// The definition every item of a list must meet (its `name` is ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(no_recursion)]
    pub item: Option<Box<FieldDef>>,
    /// Whether it has a value per locale (a top-level field of a template
    /// or a collection); the rest have one value in every locale.
    #[serde(default, skip_serializing_if = "is_false")]
    pub localized: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl FieldDef {
    /// A field of `kind` named `name`, optional, without limits.
    pub fn new(name: &str, kind: FieldKind) -> Self {
        Self {
            name: name.to_string(),
            kind,
            required: false,
            label: None,
            description: None,
            max_length: None,
            min: None,
            max: None,
            min_items: None,
            max_items: None,
            options: Vec::new(),
            fields: Vec::new(),
            item: None,
            localized: false,
        }
    }
    /// Marks the field required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
    /// Sets the longest accepted text.
    pub fn max_length(mut self, n: u32) -> Self {
        self.max_length = Some(n);
        self
    }
    /// Sets numeric bounds.
    pub fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }
    /// Sets list bounds.
    pub fn items(mut self, min: u32, max: u32) -> Self {
        self.min_items = Some(min);
        self.max_items = Some(max);
        self
    }
    /// Sets the options of a select.
    pub fn options(mut self, options: &[&str]) -> Self {
        self.options = options.iter().map(|s| s.to_string()).collect();
        self
    }
    /// Sets the sub-fields of an object.
    pub fn fields(mut self, fields: Vec<FieldDef>) -> Self {
        self.fields = fields;
        self
    }
    /// Sets the item definition of a list.
    pub fn of(mut self, item: FieldDef) -> Self {
        self.item = Some(Box::new(item));
        self
    }
    /// Marks the field localised.
    pub fn localized(mut self) -> Self {
        self.localized = true;
        self
    }
    /// Sets the description (the field's help).
    pub fn describe(mut self, text: &str) -> Self {
        self.description = Some(text.to_string());
        self
    }
    /// Sets the label editors read.
    pub fn label(mut self, text: &str) -> Self {
        self.label = Some(text.to_string());
        self
    }
    /// The label editors read: the one set, or the name in words.
    pub fn display_label(&self) -> String {
        match self.label.as_deref().map(str::trim) {
            Some(label) if !label.is_empty() => label.to_string(),
            _ => words_of(&self.name),
        }
    }
}

/// A field's name in words, for a field defined without a label:
/// `backgroundImage` reads "Background image", `cta` "Call to action",
/// `imageUrl` "Image URL".
pub fn words_of(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' || (c.is_uppercase() && !word.is_empty()) {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if c == '_' || c == '-' || c == ' ' {
                continue;
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    let words: Vec<String> = words
        .into_iter()
        .map(|w| match w.as_str() {
            "cta" => "call to action".to_string(),
            "url" | "id" | "faq" | "seo" | "html" | "api" => w.to_uppercase(),
            _ => w,
        })
        .collect();
    let text = words.join(" ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `fields` with each label and help (description) they lack taken from
/// `shipped`, the definitions they were made from (a starter template's,
/// a seeded collection's), field by field of the same name and kind, at
/// every depth. A site made before its definitions had labels reads them
/// this way; a label or help of its own is kept.
pub fn with_shipped_words(fields: &[FieldDef], shipped: &[FieldDef]) -> Vec<FieldDef> {
    fields
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(s) = shipped.iter().find(|s| s.name == f.name && s.kind == f.kind) {
                f.label = f.label.or_else(|| s.label.clone());
                f.description = f.description.or_else(|| s.description.clone());
                f.fields = with_shipped_words(&f.fields, &s.fields);
                if let (Some(item), Some(shipped_item)) = (&f.item, &s.item) {
                    let mut item = (**item).clone();
                    let mut from = (**shipped_item).clone();
                    // A list's item is matched whatever its name.
                    from.name = item.name.clone();
                    item = with_shipped_words(std::slice::from_ref(&item), std::slice::from_ref(&from)).remove(0);
                    f.item = Some(Box::new(item));
                }
            }
            f
        })
        .collect()
}

/// Checks that a list of field definitions is itself well formed: unique
/// names, objects with fields, lists with an item, selects with options.
pub fn check_definitions(path: &str, fields: &[FieldDef]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, f) in fields.iter().enumerate() {
        let here = format!("{path}.{i}");
        if f.name.is_empty() || !f.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            errors.push(FieldError::new(format!("{here}.name"), "must be letters, digits or underscores"));
        }
        if !seen.insert(f.name.as_str()) {
            errors.push(FieldError::new(format!("{here}.name"), format!("\"{}\" is defined twice", f.name)));
        }
        match f.kind {
            FieldKind::Object if f.fields.is_empty() => {
                errors.push(FieldError::new(format!("{here}.fields"), "an object field needs fields"))
            }
            FieldKind::Object => errors.extend(check_definitions(&format!("{here}.fields"), &f.fields)),
            FieldKind::List if f.item.is_none() => {
                errors.push(FieldError::new(format!("{here}.item"), "a list field needs an item definition"))
            }
            FieldKind::List => {
                if let Some(item) = &f.item {
                    let mut item = (**item).clone();
                    item.name = "item".into();
                    errors.extend(check_definitions(&format!("{here}.item"), std::slice::from_ref(&item)));
                }
            }
            FieldKind::Select if f.options.is_empty() => {
                errors.push(FieldError::new(format!("{here}.options"), "a select field needs options"))
            }
            _ => {}
        }
        if let Some(label) = &f.label {
            errors.extend(check_line(&format!("{here}.label"), label, 80).err());
        }
        // An option is a value content is compared with: two that look alike
        // must be the same.
        for (j, option) in f.options.iter().enumerate() {
            errors.extend(check_line(&format!("{here}.options.{j}"), option, 120).err());
        }
    }
    errors
}

/// Validates `content` (a JSON object) against `fields`; `path` prefixes
/// every error (`content`). Unknown keys are errors too, so a typo never
/// silently stores data the site will not render.
pub fn validate_content(path: &str, fields: &[FieldDef], content: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match content {
        Value::Object(map) => validate_object(path, fields, map, &mut errors),
        _ => errors.push(FieldError::new(path, "must be an object")),
    }
    errors
}

fn validate_object(path: &str, fields: &[FieldDef], map: &Map<String, Value>, errors: &mut Vec<FieldError>) {
    for key in map.keys() {
        if !fields.iter().any(|f| &f.name == key) {
            let accepted: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            errors.push(FieldError::new(
                format!("{path}.{key}"),
                format!("unknown field (accepted: {})", accepted.join(", ")),
            ));
        }
    }
    for field in fields {
        let here = format!("{path}.{}", field.name);
        match map.get(&field.name) {
            None | Some(Value::Null) => {
                if field.required {
                    errors.push(FieldError::new(here, "required"));
                }
            }
            Some(value) => validate_value(&here, field, value, errors),
        }
    }
}

fn is_blank(value: &Value) -> bool {
    matches!(value, Value::String(s) if s.trim().is_empty())
}

fn validate_value(path: &str, field: &FieldDef, value: &Value, errors: &mut Vec<FieldError>) {
    if field.required && is_blank(value) {
        errors.push(FieldError::new(path, "required"));
        return;
    }
    let wrong_kind = || FieldError::new(path, format!("must be {}", field.kind.noun()));
    match field.kind {
        FieldKind::Text | FieldKind::Markdown => match value {
            // Text is text: a NUL character is nothing a reader sees, and
            // PostgreSQL's JSON cannot hold it.
            Value::String(s) if s.contains('\0') => {
                errors.push(FieldError::new(path, "contains a NUL character (U+0000); use plain text"))
            }
            Value::String(s) => check_length(path, field, s, errors),
            _ => errors.push(wrong_kind()),
        },
        FieldKind::Number => match value.as_f64() {
            Some(n) => {
                if let Some(min) = field.min.filter(|min| n < *min) {
                    errors.push(FieldError::new(path, format!("at least {min}")));
                }
                if let Some(max) = field.max.filter(|max| n > *max) {
                    errors.push(FieldError::new(path, format!("at most {max}")));
                }
            }
            None => errors.push(wrong_kind()),
        },
        FieldKind::Boolean => {
            if !value.is_boolean() {
                errors.push(wrong_kind());
            }
        }
        FieldKind::Select => match value {
            Value::String(s) if field.options.iter().any(|o| o == s) => {}
            Value::String(s) => {
                errors.push(FieldError::new(path, format!("\"{s}\" is not one of {}", field.options.join(", "))))
            }
            _ => errors.push(wrong_kind()),
        },
        FieldKind::Date => match value {
            Value::String(s) if is_iso_date(s) => {}
            _ => errors.push(wrong_kind()),
        },
        FieldKind::Image => match value {
            Value::String(url) => check_upload_url(path, url, errors),
            Value::Object(map) => {
                let image_fields = [
                    FieldDef::new("imageId", FieldKind::Text).max_length(64),
                    FieldDef::new("url", FieldKind::Text).required().max_length(500),
                    FieldDef::new("alt", FieldKind::Text).max_length(300),
                ];
                let before = errors.len();
                validate_object(path, &image_fields, map, errors);
                if errors.len() == before
                    && let Some(Value::String(url)) = map.get("url")
                {
                    check_upload_url(&format!("{path}.url"), url, errors);
                }
            }
            _ => errors.push(wrong_kind()),
        },
        FieldKind::Link => match value {
            Value::Object(map) => {
                let link_fields = [
                    FieldDef::new("label", FieldKind::Text).max_length(80),
                    FieldDef::new("href", FieldKind::Text).required().max_length(2000),
                ];
                let before = errors.len();
                validate_object(path, &link_fields, map, errors);
                if errors.len() == before {
                    // A link's label names where it leads, as a menu item's does.
                    if let Some(Value::String(label)) = map.get("label") {
                        errors.extend(check_line_chars(&format!("{path}.label"), label).err());
                    }
                    if let Some(Value::String(href)) = map.get("href") {
                        errors.extend(check_href(&format!("{path}.href"), href).err());
                    }
                }
            }
            _ => errors.push(wrong_kind()),
        },
        FieldKind::Object => match value {
            Value::Object(map) => validate_object(path, &field.fields, map, errors),
            _ => errors.push(wrong_kind()),
        },
        FieldKind::List => match value {
            Value::Array(items) => {
                if let Some(min) = field.min_items.filter(|min| items.len() < *min as usize) {
                    errors.push(FieldError::new(path, format!("at least {min} items")));
                }
                if let Some(max) = field.max_items.filter(|max| items.len() > *max as usize) {
                    errors.push(FieldError::new(path, format!("at most {max} items")));
                }
                if let Some(item) = &field.item {
                    for (i, v) in items.iter().enumerate() {
                        let here = format!("{path}.{i}");
                        if v.is_null() {
                            errors.push(FieldError::new(here, "must not be null"));
                        } else {
                            validate_value(&here, item, v, errors);
                        }
                    }
                }
            }
            _ => errors.push(wrong_kind()),
        },
    }
}

fn check_length(path: &str, field: &FieldDef, s: &str, errors: &mut Vec<FieldError>) {
    if let Some(max) = field.max_length
        && s.chars().count() > max as usize
    {
        errors.push(FieldError::new(path, format!("at most {max} characters")));
    }
}

fn check_upload_url(path: &str, url: &str, errors: &mut Vec<FieldError>) {
    if !is_upload_url(url) {
        errors.push(FieldError::new(path, format!("\"{url}\" is not a relative /uploads/... URL")));
    }
}

/// [`is_upload_url`] as a JSON Schema pattern, for the OpenAPI document:
/// `/uploads/` and then no `..`, `%`, backslash or NUL.
pub const UPLOAD_URL_PATTERN: &str = "^/uploads/(?:\\.?[^%\\\\\\u0000.])*\\.?$";

/// Whether `url` is a relative `/uploads/...` URL that stays in the uploads
/// folder (no `..`, no percent-escapes that decode to it, no backslashes).
pub fn is_upload_url(url: &str) -> bool {
    url.starts_with("/uploads/")
        && !url.contains("..")
        && !url.contains('%')
        && !url.contains('\\')
        && !url.contains('\0')
}

/// What a link may be, in the words of the errors: [`is_href`] refused it.
pub const HREF_RULE: &str = "must be a relative path, #anchor, http(s)://, mailto: or tel: link";

/// Whether `href` is a link a site can render safely: a path on the site
/// (`/about`), an `#anchor`, `http(s)://`, `mailto:` or `tel:`. This is
/// the one rule of links, wherever one is stored or shown: menu items,
/// link fields of content, image attributions and the back-office's
/// markdown preview. `javascript:` and other schemes are refused, and so
/// are protocol-relative links (`//host`, `/\host`), which leave the site,
/// and a control character anywhere: browsers drop tabs and line breaks
/// from a URL, so `/<tab>/host` is `//host` to them.
pub fn is_href(href: &str) -> bool {
    let h = href.trim();
    !h.is_empty()
        && !h.chars().any(char::is_control)
        && !h.starts_with("//")
        && !h.starts_with("/\\")
        && (h.starts_with('/')
            || h.starts_with('#')
            || h.starts_with("https://")
            || h.starts_with("http://")
            || h.starts_with("mailto:")
            || h.starts_with("tel:"))
}

/// [`is_href`], naming `field` and the link when it is refused.
pub fn check_href(field: &str, href: &str) -> Result<(), FieldError> {
    if is_href(href) { Ok(()) } else { Err(FieldError::new(field, format!("\"{href}\" {HREF_RULE}"))) }
}

fn is_iso_date(s: &str) -> bool {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() || chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hero() -> Vec<FieldDef> {
        crate::templates::starter_templates().into_iter().find(|t| t.key == "hero").unwrap().fields
    }

    fn messages(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_field_reads_by_its_label_or_its_name_in_words() {
        assert_eq!(words_of("backgroundImage"), "Background image");
        assert_eq!(words_of("cta"), "Call to action");
        assert_eq!(words_of("imageUrl"), "Image URL");
        assert_eq!(words_of("show_form"), "Show form");
        assert_eq!(words_of("title"), "Title");
        assert_eq!(FieldDef::new("cta", FieldKind::Link).label("Button").display_label(), "Button");
        assert_eq!(FieldDef::new("cta", FieldKind::Link).label("  ").display_label(), "Call to action");
        // Every starter template's field has a label and help of its own.
        for template in crate::templates::starter_templates() {
            for f in &template.fields {
                assert!(f.label.is_some() && f.description.is_some(), "{}.{}", template.key, f.name);
            }
        }
    }

    #[test]
    fn labels_come_from_the_shipped_definitions_where_a_site_has_none() {
        let stored: Vec<FieldDef> = serde_json::from_value(json!([
            { "name": "heading", "kind": "text", "label": "Title of the banner" },
            { "name": "cta", "kind": "link" },
            { "name": "backgroundImage", "kind": "text" }
        ]))
        .unwrap();
        let read = with_shipped_words(&stored, &hero());
        assert_eq!(read[0].display_label(), "Title of the banner", "its own label is kept");
        assert_eq!(read[1].display_label(), "Call to action");
        assert!(read[1].description.is_some());
        assert_eq!(read[2].label, None, "another kind is another field");
        let faq = crate::templates::starter_templates().into_iter().find(|t| t.key == "faq").unwrap().fields;
        let bare: Vec<FieldDef> = serde_json::from_value(json!([{ "name": "items", "kind": "list",
            "item": { "name": "x", "kind": "object", "fields": [{ "name": "question", "kind": "text" }] } }]))
        .unwrap();
        let read = with_shipped_words(&bare, &faq);
        assert_eq!(read[0].item.as_ref().unwrap().fields[0].display_label(), "Question");
        assert_eq!(read[0].display_label(), faq[1].display_label());
        let long = vec![FieldDef::new("a", FieldKind::Text).label(&"x".repeat(81))];
        assert_eq!(messages(check_definitions("fields", &long)), ["fields.0.label: at most 80 characters"]);
    }

    #[test]
    fn names_field_and_rule() {
        let errors = validate_content("content", &hero(), &json!({"heading": "Hi", "cta": {"label": "Go"}}));
        assert_eq!(messages(errors), ["content.cta.href: required"]);
        let long = "x".repeat(121);
        let errors = validate_content("content", &hero(), &json!({ "heading": long }));
        assert_eq!(messages(errors), ["content.heading: at most 120 characters"]);
    }

    #[test]
    fn unknown_keys_and_wrong_kinds() {
        let errors = validate_content("content", &hero(), &json!({"heading": 3, "colour": "red"}));
        let m = messages(errors);
        assert!(m.iter().any(|e| e.starts_with("content.colour: unknown field (accepted: heading")), "{m:?}");
        assert!(m.contains(&"content.heading: must be text".to_string()), "{m:?}");
    }

    #[test]
    fn text_with_a_nul_character_is_refused() {
        let m = messages(validate_content("content", &hero(), &json!({"heading": "Hi\u{0}there"})));
        assert_eq!(m, ["content.heading: contains a NUL character (U+0000); use plain text"]);
    }

    #[test]
    fn images_must_be_local() {
        let errors = validate_content(
            "content",
            &hero(),
            &json!({"heading": "Hi", "backgroundImage": "https://evil.example/x.png"}),
        );
        assert_eq!(
            messages(errors),
            ["content.backgroundImage: \"https://evil.example/x.png\" is not a relative /uploads/... URL"]
        );
        let ok = validate_content(
            "content",
            &hero(),
            &json!({"heading": "Hi", "backgroundImage": {"url": "/uploads/a.png", "imageId": "x"}}),
        );
        assert!(ok.is_empty());
    }

    #[test]
    fn lists_and_selects() {
        let pricing = crate::templates::starter_templates().into_iter().find(|t| t.key == "pricing").unwrap();
        let errors = validate_content(
            "content",
            &pricing.fields,
            &json!({"tiers": [{"name": "Free", "price": "0"}, {"price": "9"}]}),
        );
        assert_eq!(messages(errors), ["content.tiers.1.name: required"]);
        let it = crate::templates::starter_templates().into_iter().find(|t| t.key == "image-text").unwrap();
        let errors = validate_content(
            "content",
            &it.fields,
            &json!({"body": "b", "image": "/uploads/a.png", "imagePosition": "top"}),
        );
        assert_eq!(messages(errors), ["content.imagePosition: \"top\" is not one of left, right"]);
    }

    #[test]
    fn protocol_relative_and_escaped_urls_refused() {
        for bad in ["//evil.example/x", "/\\evil.example"] {
            assert!(!is_href(bad), "{bad}");
        }
        for bad in ["/uploads/%2e%2e/secret", "/uploads/a\\..\\b", "/uploads/../x", "/files/a.png"] {
            assert!(!is_upload_url(bad), "{bad}");
        }
        assert!(is_upload_url("/uploads/demo/a.png"));
    }

    #[test]
    fn javascript_links_refused() {
        let errors =
            validate_content("content", &hero(), &json!({"heading": "Hi", "cta": {"href": "javascript:alert(1)"}}));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "content.cta.href");
    }

    #[test]
    fn definitions_are_checked() {
        let bad = vec![
            FieldDef::new("a", FieldKind::Object),
            FieldDef::new("a", FieldKind::List),
            FieldDef::new("b c", FieldKind::Select),
        ];
        let m = messages(check_definitions("fields", &bad));
        assert_eq!(m.len(), 5, "{m:?}");
        for t in crate::templates::starter_templates() {
            assert!(check_definitions("fields", &t.fields).is_empty(), "{}", t.key);
        }
    }
}
