//! Slugs and keys: lowercase words joined by hyphens.

use crate::FieldError;

/// Longest slug accepted.
pub const MAX_SLUG: usize = 100;

/// [`check_slug`] as a JSON Schema pattern (with `maxLength` [`MAX_SLUG`]),
/// for the OpenAPI document. A test keeps the two in step.
pub const SLUG_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

/// "Not blank" as a JSON Schema pattern: at least one character that is not
/// Unicode White_Space, which is what `str::trim` removes. Spelled out
/// because `\s` means different sets in Rust, ECMAScript and Python.
pub const NON_BLANK_PATTERN: &str =
    "[^\\t\\n\\u000b\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

/// Checks that `value` is a slug (`about-us`, `2026-plans`), naming `field` if not.
pub fn check_slug(field: &str, value: &str) -> Result<(), FieldError> {
    if value.is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    if value.chars().count() > MAX_SLUG {
        return Err(FieldError::new(field, format!("at most {MAX_SLUG} characters")));
    }
    let ok = value
        .split('-')
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("\"{value}\" is not a slug: use lowercase letters, digits and single hyphens (e.g. \"about-us\")"),
        ))
    }
}

/// Turns a title into a slug: `"Hello, World!"` → `hello-world`.
pub fn slugify(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out.chars().take(MAX_SLUG).collect::<String>().trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_refuses() {
        assert!(check_slug("slug", "about-us").is_ok());
        assert!(check_slug("slug", "2026").is_ok());
        for bad in ["", "About", "a--b", "-a", "a-", "a b", "a/b", "é"] {
            assert!(check_slug("slug", bad).is_err(), "{bad}");
        }
        assert_eq!(check_slug("slug", "").unwrap_err().to_string(), "slug: required");
    }

    #[test]
    fn slugify_titles() {
        assert_eq!(slugify("Hello, World!"), "hello-world");
        assert_eq!(slugify("  Rust & SQLite  "), "rust-sqlite");
    }
}
