//! Locales ([decision 0050]): the tags a site may use, which locale a
//! reader gets (`?locale=`, `Accept-Language`), the chain of fallbacks that
//! fills what a translation lacks, which of a document's own fields have a
//! value per locale, and the digest that tells a translation went stale.
//!
//! [decision 0050]: ../../../docs/decisions/0050-locales.md

use crate::FieldError;
use crate::model::{EntityKind, SiteLocale};
use serde_json::{Map, Value};

/// Most locales a site may have.
pub const MAX_LOCALES: usize = 32;

/// The document kinds that have translations.
pub const TRANSLATED: [EntityKind; 3] = [EntityKind::Page, EntityKind::Entry, EntityKind::Navigation];

/// The canonical form of BCP 47 tag `tag` (`pt-br` → `pt-BR`,
/// `zh-hant` → `zh-Hant`): a language of two or three letters, then
/// optionally a script of four letters and a region of two letters or three
/// digits. None when it is not one.
pub fn canonical(tag: &str) -> Option<String> {
    let mut parts = tag.trim().split(['-', '_']);
    let language = parts.next()?;
    if !(2..=3).contains(&language.len()) || !language.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut out = language.to_ascii_lowercase();
    let (mut script, mut region) = (false, false);
    for part in parts {
        if !script && !region && part.len() == 4 && part.chars().all(|c| c.is_ascii_alphabetic()) {
            script = true;
            out.push('-');
            out.push_str(&part[..1].to_ascii_uppercase());
            out.push_str(&part[1..].to_ascii_lowercase());
        } else if !region
            && ((part.len() == 2 && part.chars().all(|c| c.is_ascii_alphabetic()))
                || (part.len() == 3 && part.chars().all(|c| c.is_ascii_digit())))
        {
            region = true;
            out.push('-');
            out.push_str(&part.to_ascii_uppercase());
        } else {
            return None;
        }
    }
    Some(out)
}

/// Checks `tag` is a canonical BCP 47 tag ([`canonical`]).
pub fn check_tag(field: &str, tag: &str) -> Result<(), FieldError> {
    match canonical(tag) {
        Some(c) if c == tag => Ok(()),
        Some(c) => Err(FieldError::new(field, format!("\"{tag}\" is written {c}"))),
        None => Err(FieldError::new(
            field,
            format!(
                "\"{tag}\" is not a BCP 47 language tag (a language, then optionally a script and a region: en, de, pt-BR)"
            ),
        )),
    }
}

/// Checks a site's locales: canonical tags, each once, exactly one default
/// (with no fallback), every fallback another of them, no circle of
/// fallbacks, at most [`MAX_LOCALES`].
pub fn check_locales(locales: &[SiteLocale]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if locales.is_empty() || locales.len() > MAX_LOCALES {
        errors.push(FieldError::new("locales", format!("a site has 1 to {MAX_LOCALES} locales")));
        return errors;
    }
    let tags: Vec<&str> = locales.iter().map(|l| l.tag.as_str()).collect();
    for (i, locale) in locales.iter().enumerate() {
        if let Err(e) = check_tag(&format!("locales.{i}.tag"), &locale.tag) {
            errors.push(e);
        }
        if tags[..i].contains(&locale.tag.as_str()) {
            errors.push(FieldError::new(format!("locales.{i}.tag"), format!("{} is listed twice", locale.tag)));
        }
        match (&locale.fallback, locale.is_default) {
            (Some(_), true) => errors
                .push(FieldError::new(format!("locales.{i}.fallback"), "the default locale falls back to nothing")),
            (Some(f), false) if f == &locale.tag || !tags.contains(&f.as_str()) => errors.push(FieldError::new(
                format!("locales.{i}.fallback"),
                format!("{f} is not another of the site's locales ({})", tags.join(", ")),
            )),
            _ => {}
        }
    }
    if locales.iter().filter(|l| l.is_default).count() != 1 {
        errors.push(FieldError::new("locales", "exactly one locale is the default"));
    }
    if errors.is_empty() {
        for locale in locales {
            if chain(locales, &locale.tag).len() > locales.len() {
                errors
                    .push(FieldError::new("locales", format!("the fallbacks of {} go round in a circle", locale.tag)));
                break;
            }
        }
    }
    errors
}

/// The locales whose values a reader of `tag` gets, in order: `tag`, its
/// fallback, that one's, …, then the default. A circle ends it (its length
/// then exceeds the locales', which [`check_locales`] refuses).
pub fn chain(locales: &[SiteLocale], tag: &str) -> Vec<String> {
    let mut out = vec![tag.to_string()];
    let mut at = tag;
    while let Some(locale) = locales.iter().find(|l| l.tag == at) {
        if locale.is_default {
            return out;
        }
        let next = match &locale.fallback {
            Some(f) => f.as_str(),
            None => match locales.iter().find(|l| l.is_default) {
                Some(d) => d.tag.as_str(),
                None => return out,
            },
        };
        out.push(next.to_string());
        if out.len() > locales.len() {
            return out;
        }
        at = next;
    }
    out
}

/// The site's locale a reader asking with `Accept-Language` header
/// `accept` gets: the first of the header's languages (by quality) the site
/// has exactly, or by language alone (`de-AT` → `de`); none if none.
pub fn negotiate(accept: &str, locales: &[SiteLocale]) -> Option<String> {
    let mut wanted: Vec<(f32, usize, String)> = accept
        .split(',')
        .enumerate()
        .filter_map(|(i, part)| {
            let mut bits = part.split(';');
            let tag = bits.next()?.trim();
            let q = bits
                .find_map(|b| b.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .unwrap_or(1.0);
            (q > 0.0 && !tag.is_empty() && tag != "*").then(|| (q, i, tag.to_string()))
        })
        .collect();
    wanted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, _, tag) in &wanted {
        let Some(tag) = canonical(tag) else { continue };
        if let Some(l) = locales.iter().find(|l| l.tag == tag) {
            return Some(l.tag.clone());
        }
        let language = tag.split('-').next().unwrap_or_default();
        if let Some(l) = locales.iter().find(|l| l.tag == language || l.tag.split('-').next() == Some(language)) {
            return Some(l.tag.clone());
        }
    }
    None
}

/// The fields of a document of `kind` itself (not its template's or its
/// collection's) that have a value per locale.
pub fn own_fields(kind: EntityKind) -> &'static [&'static str] {
    match kind {
        EntityKind::Page => &["name", "slug", "meta"],
        EntityKind::Entry => &["title", "slug", "excerpt"],
        _ => &[],
    }
}

/// A digest of `values` (the default locale's values a translation is made
/// from): FNV-1a over their JSON text, as 16 hex digits. It tells whether
/// they changed, nothing more.
pub fn digest(values: &Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in values.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Lays the values of `translated` over `base` (both objects), key by key;
/// answers the keys it set. Keys of `translated` that `base` lacks are
/// set too.
pub fn overlay(base: &mut Map<String, Value>, translated: &Map<String, Value>) -> Vec<String> {
    let mut set = Vec::new();
    for (key, value) in translated {
        if value.is_null() {
            continue;
        }
        base.insert(key.clone(), value.clone());
        set.push(key.clone());
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locale(tag: &str, fallback: Option<&str>, is_default: bool) -> SiteLocale {
        SiteLocale { tag: tag.into(), fallback: fallback.map(str::to_string), is_default }
    }

    #[test]
    fn tags_are_made_canonical_or_refused() {
        assert_eq!(canonical("pt-br").as_deref(), Some("pt-BR"));
        assert_eq!(canonical("zh_hant_tw").as_deref(), Some("zh-Hant-TW"));
        assert_eq!(canonical("es-419").as_deref(), Some("es-419"));
        assert_eq!(canonical("EN").as_deref(), Some("en"));
        for bad in ["", "e", "english", "en-", "en-US-US", "1a", "de-DE-x"] {
            assert_eq!(canonical(bad), None, "{bad}");
        }
        assert!(check_tag("locale", "pt-br").unwrap_err().rule.contains("pt-BR"));
    }

    #[test]
    fn a_chain_ends_at_the_default_and_a_circle_is_refused() {
        let site = [locale("en", None, true), locale("de", None, false), locale("de-AT", Some("de"), false)];
        assert!(check_locales(&site).is_empty());
        assert_eq!(chain(&site, "de-AT"), ["de-AT", "de", "en"]);
        assert_eq!(chain(&site, "en"), ["en"]);
        let circle = [locale("en", None, true), locale("de", Some("fr"), false), locale("fr", Some("de"), false)];
        assert!(check_locales(&circle).iter().any(|e| e.rule.contains("circle")));
        let two = [locale("en", None, true), locale("de", None, true)];
        assert!(check_locales(&two).iter().any(|e| e.rule.contains("exactly one")));
        let stray = [locale("en", None, true), locale("de", Some("fr"), false)];
        assert_eq!(check_locales(&stray)[0].field, "locales.1.fallback");
    }

    #[test]
    fn accept_language_picks_by_quality_then_by_language() {
        let site = [locale("en", None, true), locale("de", None, false), locale("pt-BR", None, false)];
        assert_eq!(negotiate("fr-CH, fr;q=0.9, de;q=0.7, en;q=0.5", &site).as_deref(), Some("de"));
        assert_eq!(negotiate("de-AT", &site).as_deref(), Some("de"));
        assert_eq!(negotiate("pt", &site).as_deref(), Some("pt-BR"));
        assert_eq!(negotiate("en;q=0.1, de;q=0.8", &site).as_deref(), Some("de"));
        assert_eq!(negotiate("fr, *;q=0.5", &site), None);
        assert_eq!(negotiate("de;q=0", &site), None);
    }

    #[test]
    fn a_digest_changes_with_the_values() {
        let a = serde_json::json!({ "name": "About" });
        assert_eq!(digest(&a), digest(&a.clone()));
        assert_ne!(digest(&a), digest(&serde_json::json!({ "name": "About us" })));
    }
}
