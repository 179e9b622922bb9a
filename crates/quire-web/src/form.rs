//! Forms generated from field definitions (section templates, collections),
//! and the reading of such a form back into content.
//!
//! An input's name is the dotted path of its value inside the content
//! (`title`, `cta.href`, `items.2.name`), which is also how the store names
//! a value in its validation errors (`content.items.2.name: required`), so
//! each error lands next to its input. Reading is lenient on purpose: what
//! the person typed is kept as it is (a number field holding `abc` stays
//! the text `abc`) and the store's validator, the one every surface uses,
//! says what is wrong.

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use quire_app::{AppError, Failure};
use quire_core::FieldError;
use quire_core::fields::{FieldDef, FieldKind};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// Escapes text for HTML element content and quoted attribute values.
pub fn esc(text: &str) -> String {
    quire_core::text::escape_markup(text, |c| match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// A submitted form (`application/x-www-form-urlencoded`), every value
/// with its line endings made `\n`: browsers send a textarea's line breaks
/// as CRLF, and text is stored with `\n` whichever form it came from (a
/// markdown field, an excerpt, a note, an image's description). Every
/// back-office handler reads its form through this extractor, never
/// through `axum::Form`.
pub struct Form<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Form<T> {
    type Rejection = crate::WebError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let urlencoded = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        if !urlencoded {
            return Err(crate::WebError::Status(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a form is sent as application/x-www-form-urlencoded".into(),
            ));
        }
        let bytes = axum::body::Bytes::from_request(req, state).await.map_err(|_| crate::WebError::TooLarge)?;
        let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(&bytes)
            .map_err(|e| crate::WebError::Status(StatusCode::BAD_REQUEST, format!("the form cannot be read: {e}")))?;
        let pairs: Vec<(String, String)> = pairs.into_iter().map(|(k, v)| (k, unix_lines(&v))).collect();
        let encoded = serde_urlencoded::to_string(&pairs)
            .map_err(|e| crate::WebError::Status(StatusCode::BAD_REQUEST, format!("the form cannot be read: {e}")))?;
        serde_urlencoded::from_str(&encoded).map(Form).map_err(|e| {
            crate::WebError::Status(StatusCode::UNPROCESSABLE_ENTITY, format!("the form is not complete: {e}"))
        })
    }
}

/// `text` with every line ending (`\r\n`, or a lone `\r`) made `\n`.
pub fn unix_lines(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// A name in words, for what no definition labels (a key of an image's
/// generated fields): `backgroundImage` reads "Background image".
pub fn label(name: &str) -> String {
    quire_core::fields::words_of(name)
}

/// What a person reads for the value at `path` (`items.2.question`) of
/// content of `defs`: each field by its label, an item of a list by its
/// number ("Questions › Item 3 › Question"); a path the definitions do
/// not hold, in words.
pub fn label_at(defs: &[FieldDef], path: &str) -> String {
    let mut parts = Vec::new();
    let mut here: Option<&FieldDef> = None;
    let mut fields = defs;
    for key in path.split('.') {
        match (here, key.parse::<usize>()) {
            (Some(list), Ok(i)) if list.kind == FieldKind::List => {
                parts.push(format!("Item {}", i + 1));
                here = list.item.as_deref();
                fields = here.map_or(&[], |item| item.fields.as_slice());
            }
            _ => match fields.iter().find(|f| f.name == key) {
                Some(def) => {
                    parts.push(def.display_label());
                    here = Some(def);
                    fields = &def.fields;
                }
                None => {
                    parts.push(label(key));
                    here = None;
                    fields = &[];
                }
            },
        }
    }
    parts.join(" › ")
}

/// A template's fields as its form shows them: with the labels and help
/// of the starter template of the same key where the site's own
/// definitions have none (a site made before they had them).
pub fn template_fields(template: &quire_core::model::SectionTemplate) -> Vec<FieldDef> {
    let shipped = quire_core::templates::starter_templates().into_iter().find(|t| t.key == template.key);
    quire_core::fields::with_shipped_words(&template.fields, shipped.as_ref().map_or(&[], |t| t.fields.as_slice()))
}

/// A collection's fields as its forms show them: with the labels and help
/// of the definitions it was made from (see [`template_fields`]).
pub fn collection_fields(collection: &quire_core::model::Collection) -> Vec<FieldDef> {
    let posts = collection.kind == quire_core::model::CollectionKind::Posts;
    let shipped = quire_core::templates::shipped_collection_fields(posts, &collection.slug);
    quire_core::fields::with_shipped_words(&collection.fields, &shipped)
}

/// Validation errors by the path of the value they name, inside content
/// (`content.` and the like stripped by the caller).
pub type Errors = HashMap<String, String>;

/// The errors of a refused write, by input name: `prefix.` is taken off
/// each field (`content.title` → `title` for prefix `content`); errors of
/// fields outside `prefix` are kept whole, and a conflict, or a rule broken
/// by no field, is under its field or "".
pub fn errors_of(e: &AppError, prefix: &str) -> Errors {
    let mut out = Errors::new();
    let key = |field: &str| {
        field
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('.'))
            .map_or_else(|| field.to_string(), str::to_string)
    };
    match e.failure {
        Failure::Invalid | Failure::Malformed if !e.details.is_empty() => {
            for err in &e.details {
                out.entry(key(&err.field)).or_insert_with(|| err.rule.clone());
            }
        }
        Failure::Invalid | Failure::Malformed => {
            // One rule broken: the words are "field: rule".
            let field = e.field.as_deref().unwrap_or_default();
            let rule = e.message.strip_prefix(field).and_then(|m| m.strip_prefix(": ")).unwrap_or(&e.message);
            out.insert(key(field), rule.to_string());
        }
        Failure::Conflict => {
            out.insert(e.field.clone().unwrap_or_default(), e.message.clone());
        }
        _ => {}
    }
    out
}

/// The time a schedule form asks for: `at_utc`, which the browser's script
/// fills with the local time typed turned into UTC, or else `at` (a
/// `datetime-local` value) read as UTC.
pub fn time<T: std::str::FromStr>(pairs: &[(String, String)]) -> Result<T, AppError> {
    let utc = value(pairs, "at_utc").trim();
    if !utc.is_empty() {
        return utc.parse().map_err(|_| AppError::invalid("at", format!("at: \"{utc}\" is not a date and time")));
    }
    let typed = value(pairs, "at").trim();
    if typed.is_empty() {
        return Err(AppError::invalid("at", "at: required"));
    }
    // A datetime-local value has no seconds unless they were typed.
    let seconds = if typed.matches(':').count() == 1 { ":00" } else { "" };
    format!("{typed}{seconds}Z")
        .parse()
        .map_err(|_| AppError::invalid("at", format!("at: \"{typed}\" is not a date and time (YYYY-MM-DDTHH:MM)")))
}

/// A rule a value typed in a form broke, refused as the use cases refuse
/// it (so it shows next to its input).
pub fn invalid(e: FieldError) -> AppError {
    AppError::invalid(e.field.clone(), e.to_string())
}

/// An image of the media library as the image picker offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryImage {
    /// Its URL, the value an image field stores.
    pub url: String,
    /// How a person knows it: its alt text, or its file name.
    pub label: String,
    /// Its smallest file, shown as the thumbnail.
    pub thumb: String,
}

impl LibraryImage {
    /// The library's images as the picker offers them, with the current
    /// `value` first when the library does not hold it (an image from
    /// elsewhere, or one older than those offered).
    pub fn choices<'a>(library: &'a [LibraryImage], value: &str) -> (Option<LibraryImage>, &'a [LibraryImage]) {
        let other = (!value.is_empty() && !library.iter().any(|i| i.url == value)).then(|| LibraryImage {
            url: value.to_string(),
            label: format!("{} (not in the library's newest)", value.rsplit('/').next().unwrap_or(value)),
            thumb: value.to_string(),
        });
        (other, library)
    }

    /// The thumbnail of `value` (none when no image is chosen).
    pub fn thumb_of(library: &[LibraryImage], value: &str) -> Option<String> {
        if value.is_empty() {
            return None;
        }
        Some(library.iter().find(|i| i.url == value).map_or_else(|| value.to_string(), |i| i.thumb.clone()))
    }
}

/// The HTML of the inputs for `defs`, filled from `content`, with each
/// error under its input. `images` are the media library's images, offered
/// in image fields.
pub fn render(defs: &[FieldDef], content: &Value, errors: &Errors, images: &[LibraryImage]) -> String {
    let mut out = String::new();
    for def in defs {
        field(&mut out, def, &def.name, content.get(&def.name), errors, images);
    }
    out
}

/// An image field's picker: the thumbnail of the image chosen, and a select
/// of the library's images by name ("None" clears it), which the script
/// turns into a grid of thumbnails with a Clear button; a link to the
/// library, where images are uploaded.
fn image_picker(out: &mut String, p: &str, caption: &str, value: &str, extra: &str, images: &[LibraryImage]) {
    let _ = write!(out, "<div class=\"field part image-field\"><label for=\"f-{}\">{}</label>", esc(p), esc(caption));
    out.push_str("<div class=\"image-choice\">");
    match LibraryImage::thumb_of(images, value) {
        Some(t) => {
            let _ = write!(out, "<img class=\"thumb\" src=\"{}\" alt=\"\" width=\"96\" height=\"72\">", esc(&t));
        }
        None => out.push_str("<img class=\"thumb\" alt=\"\" width=\"96\" height=\"72\" hidden>"),
    }
    let _ = write!(out, "<select id=\"f-{p}\" name=\"{p}\" data-image-picker{extra}>", p = esc(p));
    out.push_str("<option value=\"\">None</option>");
    let (other, library) = LibraryImage::choices(images, value);
    for i in other.iter().chain(library) {
        let sel = if i.url == value { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{}\" data-thumb=\"{}\"{sel}>{}</option>",
            esc(&i.url),
            esc(&i.thumb),
            esc(&i.label)
        );
    }
    out.push_str("</select></div><p class=\"hint\"><a href=\"/media\" target=\"_blank\">Open the media library</a> to upload an image, then choose it here.</p>");
}

fn describedby(path: &str, def: &FieldDef, errors: &Errors) -> String {
    let mut ids = Vec::new();
    if def.description.is_some() {
        ids.push(format!("h-{path}"));
    }
    if errors.contains_key(path) {
        ids.push(format!("e-{path}"));
    }
    if ids.is_empty() { String::new() } else { format!(" aria-describedby=\"{}\"", esc(&ids.join(" "))) }
}

/// The error of the input at `path`, naming the field by its `caption`
/// ("Heading: required").
fn error_line(out: &mut String, path: &str, caption: &str, errors: &Errors) {
    if let Some(message) = errors.get(path) {
        let _ = write!(out, "<p class=\"error\" id=\"e-{}\">{}: {}</p>", esc(path), esc(caption), esc(message));
    }
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn input(out: &mut String, kind: &str, path: &str, value: &str, extra: &str) {
    let _ = write!(
        out,
        "<input type=\"{kind}\" id=\"f-{p}\" name=\"{p}\" value=\"{v}\"{extra}>",
        p = esc(path),
        v = esc(value)
    );
}

fn field(
    out: &mut String,
    def: &FieldDef,
    path: &str,
    value: Option<&Value>,
    errors: &Errors,
    images: &[LibraryImage],
) {
    let invalid = if errors.contains_key(path) { " aria-invalid=\"true\"" } else { "" };
    let required = if def.required { " <span class=\"req\" aria-hidden=\"true\">*</span>" } else { "" };
    let aria_required = if def.required { " aria-required=\"true\"" } else { "" };
    let hint = |out: &mut String| {
        if let Some(d) = &def.description {
            let _ = write!(out, "<p class=\"hint\" id=\"h-{}\">{}</p>", esc(path), esc(d));
        }
    };
    let extra = format!("{}{invalid}{aria_required}", describedby(path, def, errors));
    let caption = def.display_label();
    let name = esc(&caption);
    match def.kind {
        FieldKind::Object | FieldKind::Link | FieldKind::Image | FieldKind::List => {
            let _ = write!(
                out,
                "<fieldset class=\"field group kind-{}\" id=\"f-{}\"><legend>{name}{required}</legend>",
                kind_name(def.kind),
                esc(path)
            );
            hint(out);
            error_line(out, path, &caption, errors);
            match def.kind {
                FieldKind::Object => {
                    for sub in &def.fields {
                        let v = value.and_then(|v| v.get(&sub.name));
                        field(out, sub, &format!("{path}.{}", sub.name), v, errors, images);
                    }
                }
                FieldKind::Link => {
                    let (label_v, href_v) = match value {
                        Some(Value::Object(m)) => (text_of(m.get("label")), text_of(m.get("href"))),
                        Some(Value::String(s)) => (String::new(), s.clone()),
                        _ => (String::new(), String::new()),
                    };
                    part(out, path, "label", "Label", &label_v, "text", errors);
                    part(out, path, "href", "Address (/path, #anchor, https://…)", &href_v, "text", errors);
                }
                FieldKind::Image => {
                    let (url, alt) = match value {
                        Some(Value::Object(m)) => (text_of(m.get("url")), text_of(m.get("alt"))),
                        Some(Value::String(s)) => (s.clone(), String::new()),
                        _ => (String::new(), String::new()),
                    };
                    let p = format!("{path}.url");
                    let invalid = if errors.contains_key(&p) { " aria-invalid=\"true\"" } else { "" };
                    image_picker(out, &p, "Image from the library", &url, invalid, images);
                    error_line(out, &p, "Image", errors);
                    out.push_str("</div>");
                    part(out, path, "alt", "Alternative text", &alt, "text", errors);
                }
                _ => list(out, def, path, value, errors, images),
            }
            out.push_str("</fieldset>");
        }
        _ => {
            let _ = write!(out, "<div class=\"field kind-{}\">", kind_name(def.kind));
            if def.kind == FieldKind::Boolean {
                let checked = if value == Some(&Value::Bool(true)) { " checked" } else { "" };
                let _ = write!(out, "<input type=\"hidden\" name=\"{}\" value=\"false\">", esc(path));
                input(out, "checkbox", path, "true", &format!("{checked}{extra}"));
                let _ = write!(out, " <label for=\"f-{}\">{name}{required}</label>", esc(path));
            } else {
                let _ = write!(out, "<label for=\"f-{}\">{name}{required}</label>", esc(path));
                let text = text_of(value);
                let max = def.max_length.map(|m| format!(" maxlength=\"{m}\"")).unwrap_or_default();
                match def.kind {
                    FieldKind::Markdown => {
                        let _ = write!(
                            out,
                            "<textarea id=\"f-{p}\" name=\"{p}\" rows=\"8\" data-markdown{max}{extra}>{v}</textarea>",
                            p = esc(path),
                            v = esc(&text)
                        );
                    }
                    FieldKind::Select => {
                        let _ = write!(out, "<select id=\"f-{p}\" name=\"{p}\"{extra}>", p = esc(path));
                        out.push_str("<option value=\"\">—</option>");
                        let mut options = def.options.clone();
                        if !text.is_empty() && !options.contains(&text) {
                            options.push(text.clone());
                        }
                        for o in &options {
                            let sel = if *o == text { " selected" } else { "" };
                            let _ = write!(out, "<option value=\"{v}\"{sel}>{v}</option>", v = esc(o));
                        }
                        out.push_str("</select>");
                    }
                    FieldKind::Number => {
                        let bounds = [("min", def.min), ("max", def.max)]
                            .iter()
                            .filter_map(|(k, v)| v.map(|v| format!(" data-{k}=\"{v}\"")))
                            .collect::<String>();
                        input(out, "text", path, &text, &format!(" inputmode=\"decimal\"{bounds}{extra}"));
                    }
                    FieldKind::Date => {
                        input(out, "text", path, &text, &format!(" placeholder=\"2026-11-22\"{extra}"));
                    }
                    _ => input(out, "text", path, &text, &format!("{max}{extra}")),
                }
            }
            hint(out);
            error_line(out, path, &caption, errors);
            out.push_str("</div>");
        }
    }
}

/// One named part of a compound field (a link's label and href, an image's alt).
fn part(out: &mut String, path: &str, key: &str, caption: &str, value: &str, kind: &str, errors: &Errors) {
    let p = format!("{path}.{key}");
    let invalid = if errors.contains_key(&p) { " aria-invalid=\"true\"" } else { "" };
    let _ = write!(out, "<div class=\"field part\"><label for=\"f-{}\">{}</label>", esc(&p), esc(caption));
    input(out, kind, &p, value, invalid);
    // "Address (/path, …)" is named "Address" in its error.
    error_line(out, &p, caption.split(" (").next().unwrap_or(caption), errors);
    out.push_str("</div>");
}

/// A list: its items, then one blank item (filled in, it is added; left
/// blank, it is ignored). The script adds, removes and reorders items and
/// renumbers their names before the form is sent.
fn list(out: &mut String, def: &FieldDef, path: &str, value: Option<&Value>, errors: &Errors, images: &[LibraryImage]) {
    let item_def = def.item.as_deref().cloned().unwrap_or_else(|| FieldDef::new("item", FieldKind::Text));
    let items = value.and_then(Value::as_array).cloned().unwrap_or_default();
    let _ = write!(out, "<ol class=\"items\" data-list=\"{}\">", esc(path));
    for (i, item) in items.iter().chain(std::iter::once(&Value::Null)).enumerate() {
        let blank = i == items.len();
        let _ = write!(out, "<li class=\"item\"{}>", if blank { " data-blank" } else { "" });
        let mut shown = item_def.clone();
        shown.label = Some(if blank { "New item".into() } else { format!("Item {}", i + 1) });
        shown.required = false;
        let v = if blank { None } else { Some(item) };
        field(out, &shown, &format!("{path}.{i}"), v, errors, images);
        out.push_str(
            "<div class=\"item-actions\" hidden><button type=\"button\" data-act=\"up\">Move up</button>\
             <button type=\"button\" data-act=\"down\">Move down</button>\
             <button type=\"button\" data-act=\"remove\">Remove</button></div></li>",
        );
    }
    out.push_str("</ol>");
}

fn kind_name(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Text => "text",
        FieldKind::Markdown => "markdown",
        FieldKind::Image => "image",
        FieldKind::Link => "link",
        FieldKind::Number => "number",
        FieldKind::Boolean => "boolean",
        FieldKind::Select => "select",
        FieldKind::Date => "date",
        FieldKind::Object => "object",
        FieldKind::List => "list",
    }
}

/// Reads a submitted form back into content for `defs`: a value per
/// field, `None` for a field left empty. For a list, items are taken in
/// the order of their numbers, and an item left wholly blank is dropped.
pub fn read(defs: &[FieldDef], pairs: &[(String, String)]) -> Map<String, Value> {
    let mut values: HashMap<&str, &str> = HashMap::new();
    for (k, v) in pairs {
        // A checkbox follows its hidden "false": the last value wins.
        values.insert(k.as_str(), v.as_str());
    }
    let mut out = Map::new();
    for def in defs {
        if let Some(v) = read_field(def, &def.name, &values) {
            out.insert(def.name.clone(), v);
        }
    }
    out
}

/// The merge patch that makes content's fields of `defs` exactly `read`:
/// every field, set or `null` (removed); keys outside `defs` stay as they are.
pub fn patch(defs: &[FieldDef], read: Map<String, Value>) -> Value {
    let mut read = read;
    let mut out = Map::new();
    for def in defs {
        out.insert(def.name.clone(), read.remove(&def.name).unwrap_or(Value::Null));
    }
    Value::Object(out)
}

fn read_field(def: &FieldDef, path: &str, values: &HashMap<&str, &str>) -> Option<Value> {
    // Line endings are `\n` already (see [`Form`]); read here as well, so
    // pairs that did not come through it are read alike.
    let text = |p: &str| {
        values.get(p).map(|v| unix_lines(v).trim_end_matches('\n').to_string()).filter(|v| !v.trim().is_empty())
    };
    match def.kind {
        FieldKind::Text | FieldKind::Date | FieldKind::Select => {
            text(path).map(|v| Value::String(v.trim().to_string()))
        }
        FieldKind::Markdown => text(path).map(Value::String),
        FieldKind::Number => text(path).map(|v| {
            let v = v.trim();
            v.parse::<i64>()
                .map(Value::from)
                .ok()
                .or_else(|| v.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number))
                .unwrap_or_else(|| Value::String(v.to_string()))
        }),
        FieldKind::Boolean => values.get(path).map(|v| Value::Bool(*v == "true")),
        FieldKind::Link | FieldKind::Image => {
            let (main, second) = if def.kind == FieldKind::Link { ("href", "label") } else { ("url", "alt") };
            let a = text(&format!("{path}.{main}"));
            let b = text(&format!("{path}.{second}"));
            if a.is_none() && b.is_none() {
                return None;
            }
            let mut m = Map::new();
            if let Some(a) = a {
                m.insert(main.into(), Value::String(a.trim().to_string()));
            }
            if let Some(b) = b {
                m.insert(second.into(), Value::String(b.trim().to_string()));
            }
            Some(Value::Object(m))
        }
        FieldKind::Object => {
            let mut m = Map::new();
            for sub in &def.fields {
                if let Some(v) = read_field(sub, &format!("{path}.{}", sub.name), values) {
                    m.insert(sub.name.clone(), v);
                }
            }
            (!m.is_empty()).then_some(Value::Object(m))
        }
        FieldKind::List => {
            let prefix = format!("{path}.");
            let indexes: BTreeSet<usize> = values
                .keys()
                .filter_map(|k| k.strip_prefix(&prefix))
                .filter_map(|rest| rest.split('.').next())
                .filter_map(|n| n.parse().ok())
                .collect();
            let item_def = def.item.as_deref().cloned().unwrap_or_else(|| FieldDef::new("item", FieldKind::Text));
            let items: Vec<Value> = indexes
                .into_iter()
                .filter_map(|i| {
                    let item_path = format!("{prefix}{i}");
                    // A blank item: nothing typed (a checkbox left unticked is blank too).
                    let typed = values.iter().any(|(k, v)| {
                        (*k == item_path || k.starts_with(&format!("{item_path}.")))
                            && !v.trim().is_empty()
                            && *v != "false"
                    });
                    if !typed {
                        return None;
                    }
                    read_field(&item_def, &item_path, values)
                })
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
    }
}

/// The value a submitted form last gave `name` (a ticked checkbox's
/// "true" follows its hidden "false": the last one counts), or "" when it
/// gave none.
pub fn value<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs.iter().rev().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
}

/// Every value a submitted form gave `name`, in order (a multiple choice).
pub fn values(pairs: &[(String, String)], name: &str) -> Vec<String> {
    pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
}

/// A checkbox sent as a hidden "false" then, when ticked, the box's
/// "true": whether it is ticked; `None` when the form has no such input.
pub fn checked(pairs: &[(String, String)], name: &str) -> Option<bool> {
    pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v == "true")
}

/// `None` for an empty (trimmed) text: clears an optional field.
pub fn optional(text: &str) -> Option<String> {
    Some(text.trim()).filter(|t| !t.is_empty()).map(str::to_string)
}

/// Tags typed comma-separated.
pub fn tags(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// A choice a form may leave empty: `None` for "", else what `parse`
/// makes of it, its refusal as the use cases' (so it shows next to its
/// input).
pub fn choice<T>(value: &str, parse: impl FnOnce(&str) -> Result<T, FieldError>) -> Result<Option<T>, AppError> {
    match value {
        "" => Ok(None),
        v => parse(v).map(Some).map_err(invalid),
    }
}

/// A conflict when the form was opened on an older version of the record
/// than the one stored (someone, or the agent, changed it meanwhile): saving
/// would silently undo their change.
pub fn stale(pairs: &[(String, String)], current: i64) -> Option<AppError> {
    let opened = value(pairs, "_version").parse::<i64>().ok()?;
    (opened != current).then(|| {
        AppError::conflict(format!(
            "it changed since you opened it (you edited version {opened}, it is now at {current}); reload to see the \
             changes, then make yours again"
        ))
    })
}

/// The refusal of every rule in `broken` (field, rule), as the use cases
/// answer a write that broke them.
#[cfg(test)]
pub(crate) fn refusal_of(broken: &[(&str, &str)]) -> AppError {
    let details: Vec<FieldError> = broken.iter().map(|(field, rule)| FieldError::new(*field, *rule)).collect();
    let message = details.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
    let one = AppError::invalid(broken[0].0, message);
    if details.len() > 1 { AppError { details, ..one } } else { one }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_lands_on_the_inputs_it_names() {
        let one = refusal_of(&[("content.items.2.name", "required")]);
        assert_eq!(errors_of(&one, "content"), Errors::from([("items.2.name".into(), "required".into())]));
        let two = refusal_of(&[("content.title", "required"), ("slug", "taken")]);
        let both = Errors::from([("title".into(), "required".into()), ("slug".into(), "taken".into())]);
        assert_eq!(errors_of(&two, "content"), both);
        let stale = stale(&[("_version".into(), "1".into())], 2).unwrap();
        assert!(errors_of(&stale, "content")[""].starts_with("it changed since you opened it"));
        assert!(errors_of(&AppError::not_found("page x not found"), "").is_empty());
    }

    fn defs() -> Vec<FieldDef> {
        let mut tier = FieldDef::new("tier", FieldKind::Object);
        tier.fields = vec![FieldDef::new("name", FieldKind::Text), FieldDef::new("price", FieldKind::Number)];
        let mut tiers = FieldDef::new("tiers", FieldKind::List);
        tiers.item = Some(Box::new(tier));
        let mut size = FieldDef::new("size", FieldKind::Select);
        size.options = vec!["small".into(), "large".into()];
        vec![
            FieldDef::new("title", FieldKind::Text),
            FieldDef::new("body", FieldKind::Markdown),
            FieldDef::new("cta", FieldKind::Link),
            FieldDef::new("image", FieldKind::Image),
            FieldDef::new("featured", FieldKind::Boolean),
            size,
            tiers,
        ]
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_form_reads_back_into_content() {
        let read = read(
            &defs(),
            &pairs(&[
                ("_csrf", "x"),
                ("title", " Hello "),
                ("body", "# Hi\r\n\r\nthere\r\n"),
                ("cta.label", "Go"),
                ("cta.href", "/start"),
                ("image.url", ""),
                ("image.alt", ""),
                ("featured", "false"),
                ("featured", "true"),
                ("size", "large"),
                ("tiers.1.tier.name", "ignored: not a field"),
                ("tiers.0.name", "Basic"),
                ("tiers.0.price", "9"),
                ("tiers.2.name", "Pro"),
                ("tiers.2.price", "19.5"),
                ("tiers.3.name", ""),
                ("tiers.3.price", ""),
            ]),
        );
        assert_eq!(
            Value::Object(read),
            json!({
                "title": "Hello",
                "body": "# Hi\n\nthere",
                "cta": { "href": "/start", "label": "Go" },
                "featured": true,
                "size": "large",
                "tiers": [{ "name": "Basic", "price": 9 }, { "name": "Pro", "price": 19.5 }]
            })
        );
    }

    #[test]
    fn what_was_typed_is_kept_for_the_validator_to_judge() {
        let read = read(&defs(), &pairs(&[("tiers.0.price", "cheap"), ("featured", "false")]));
        assert_eq!(Value::Object(read), json!({ "tiers": [{ "price": "cheap" }], "featured": false }));
    }

    #[test]
    fn a_patch_sets_every_field_and_removes_the_empty_ones() {
        let read = read(&defs(), &pairs(&[("title", "T")]));
        let patch = patch(&defs(), read);
        assert_eq!(patch["title"], json!("T"));
        assert_eq!(patch["body"], Value::Null);
        assert_eq!(patch.as_object().unwrap().len(), defs().len());
    }

    #[test]
    fn rendered_values_and_errors_are_escaped_and_placed_by_path() {
        let content = json!({ "title": "<script>alert(1)</script>", "tiers": [{ "name": "\"><img src=x>" }] });
        let mut errors = Errors::new();
        errors.insert("tiers.0.price".into(), "must be a number".into());
        let library = [LibraryImage { url: "/uploads/a\".png".into(), label: "A <b>".into(), thumb: "/t.webp".into() }];
        let html = render(&defs(), &content, &errors, &library);
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(!html.contains("\"><img src=x") && html.contains("&quot;&gt;&lt;img src=x&gt;"));
        assert!(html.contains("value=\"/uploads/a&quot;.png\""));
        assert!(html.contains("id=\"e-tiers.0.price\">Price: must be a number</p>"), "{html}");
        assert!(html.contains("name=\"tiers.0.price\"") && html.contains("aria-invalid=\"true\""));
        // One blank item after the existing one.
        assert!(html.contains("name=\"tiers.1.name\"") && html.contains("data-blank"));
    }

    #[test]
    fn an_image_field_offers_the_library_by_name_with_the_chosen_ones_thumbnail() {
        let library = [
            LibraryImage {
                url: "/uploads/s/1/dog.png".into(),
                label: "A dog".into(),
                thumb: "/uploads/s/1/t.webp".into(),
            },
            LibraryImage {
                url: "/uploads/s/2/cat.png".into(),
                label: "A cat".into(),
                thumb: "/uploads/s/2/t.webp".into(),
            },
        ];
        let defs = [FieldDef::new("image", FieldKind::Image)];
        let html =
            render(&defs, &json!({ "image": { "url": "/uploads/s/2/cat.png", "alt": "" } }), &Errors::new(), &library);
        assert!(html.contains("<select id=\"f-image.url\" name=\"image.url\" data-image-picker>"), "{html}");
        assert!(html.contains("<option value=\"\">None</option>"), "{html}");
        assert!(html.contains(">A dog</option>") && html.contains("selected>A cat</option>"), "{html}");
        assert!(html.contains("<img class=\"thumb\" src=\"/uploads/s/2/t.webp\""), "{html}");
        assert!(html.contains("href=\"/media\""), "{html}");
        // An image the library's newest do not hold stays chosen, named by its file.
        let html = render(&defs, &json!({ "image": "https://example.com/x/far.jpg" }), &Errors::new(), &library);
        assert!(html.contains("selected>far.jpg (not in the library&#39;s newest)</option>"), "{html}");
        // None chosen: no thumbnail shown.
        let html = render(&defs, &json!({}), &Errors::new(), &library);
        assert!(html.contains("<img class=\"thumb\" alt=\"\" width=\"96\" height=\"72\" hidden>"), "{html}");
    }

    #[test]
    fn labels_read_as_words() {
        assert_eq!(label("backgroundImage"), "Background image");
        assert_eq!(label("title"), "Title");
        let mut defs = defs();
        defs[6].label = Some("Price tiers".into());
        assert_eq!(label_at(&defs, "tiers.2.price"), "Price tiers › Item 3 › Price");
        assert_eq!(label_at(&defs, "cta.href"), "Call to action › Href");
        assert_eq!(label_at(&defs, "somethingElse"), "Something else");
    }

    #[test]
    fn every_line_ending_is_a_newline() {
        assert_eq!(unix_lines("a\r\nb\rc\n\r\n"), "a\nb\nc\n\n");
        assert_eq!(unix_lines("plain"), "plain");
    }

    #[tokio::test]
    async fn a_form_is_read_with_newlines_whatever_the_browser_sent() {
        let request = axum::http::Request::post("/")
            .header(axum::http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(axum::body::Body::from("body=one%0D%0Atwo%0Dthree&title=T"))
            .unwrap();
        let Form(pairs): Form<Vec<(String, String)>> = Form::from_request(request, &()).await.ok().unwrap();
        assert_eq!(pairs, [("body".to_string(), "one\ntwo\nthree".to_string()), ("title".into(), "T".into())]);
        let json = axum::http::Request::post("/")
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from("{}"))
            .unwrap();
        assert!(Form::<Vec<(String, String)>>::from_request(json, &()).await.is_err());
    }

    #[test]
    fn a_local_time_without_a_zone_is_read_as_utc_and_the_browsers_utc_wins() {
        let pairs =
            |list: &[(&str, &str)]| list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        let at: Result<String, _> = time(&pairs(&[("at", "2030-06-01T10:00")]));
        assert_eq!(at.unwrap(), "2030-06-01T10:00:00Z");
        let at: Result<String, _> = time(&pairs(&[("at", "2030-06-01T10:00"), ("at_utc", "2030-06-01T08:00:00.000Z")]));
        assert_eq!(at.unwrap(), "2030-06-01T08:00:00.000Z");
        let missing: Result<String, _> = time(&pairs(&[("at", "")]));
        assert_eq!(missing.unwrap_err().field.as_deref(), Some("at"));
    }
}
