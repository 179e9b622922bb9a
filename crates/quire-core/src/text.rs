//! Rules for plain text written by people: names, titles, labels, tags and
//! descriptions. Such text is shown in the back-office, in terminals and to
//! the agent, so it may not carry characters that act instead of showing:
//! NUL and other control characters (ANSI escapes start with one), and the
//! bidirectional overrides and isolates that make text read differently
//! from how it is stored.

use crate::FieldError;

/// [`check_line`] as a JSON Schema pattern (with `maxLength`), for the
/// OpenAPI document: no control character or bidirectional override, and a
/// character that is not Unicode White_Space (what `str::trim` removes).
/// Character sets are spelled out, and the end is `(?![\s\S])`, because
/// `\s` and `$` mean different things in Rust, ECMAScript and Python.
pub const LINE_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*[^\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028-\\u202f\\u205f\\u2066-\\u2069\\u3000][^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*(?![\\s\\S])";

/// An optional single line: empty, or [`LINE_PATTERN`].
pub const OPTIONAL_LINE_PATTERN: &str = "^(?:[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*[^\\u0000-\\u0020\\u007f-\\u00a0\\u1680\\u2000-\\u200a\\u2028-\\u202f\\u205f\\u2066-\\u2069\\u3000][^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*)?(?![\\s\\S])";

/// [`check_text`] as a JSON Schema pattern: line breaks and tabs allowed,
/// other control characters and bidirectional overrides not.
pub const TEXT_PATTERN: &str =
    "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*(?![\\s\\S])";

/// An image MIME type: `image/` and then a single line.
pub const MIME_PATTERN: &str = "^image/[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*(?![\\s\\S])";

/// The first character of `value` that plain text may not hold, with its
/// position (in characters). Line breaks and tabs are allowed only when
/// `multiline`.
fn forbidden(value: &str, multiline: bool) -> Option<(usize, char)> {
    value.chars().enumerate().find(|&(_, c)| {
        let allowed_space = multiline && matches!(c, '\n' | '\r' | '\t');
        (c.is_control() && !allowed_space) || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

fn check_chars(field: &str, value: &str, multiline: bool) -> Result<(), FieldError> {
    match forbidden(value, multiline) {
        None => Ok(()),
        Some((at, c)) => {
            let what = if c.is_control() { "a control character" } else { "a bidirectional override" };
            Err(FieldError::new(
                field,
                format!("contains {what} (U+{:04X}) at character {}; use plain text", c as u32, at + 1),
            ))
        }
    }
}

/// A required single line of at most `max` characters (a name, title,
/// label or tag).
pub fn check_line(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    if value.trim().is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    if value.chars().count() > max {
        return Err(FieldError::new(field, format!("at most {max} characters")));
    }
    check_chars(field, value, false)
}

/// Optional text of at most `max` characters that may span lines (an
/// excerpt, a description).
pub fn check_text(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    if value.chars().count() > max {
        return Err(FieldError::new(field, format!("at most {max} characters")));
    }
    check_chars(field, value, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_passes() {
        assert!(check_line("name", "Über uns — 2026 ✓", 80).is_ok());
        assert!(check_line("name", "مرحبا بالعالم", 80).is_ok());
        assert!(check_line("name", "👩‍💻 team", 80).is_ok(), "zero-width joiners of emoji are text");
        assert!(check_text("excerpt", "two\nlines\twith a tab", 80).is_ok());
    }

    #[test]
    fn acting_characters_are_refused_naming_them() {
        for (value, code) in [
            ("a\0b", "U+0000"),
            ("\u{1b}[31mred", "U+001B"),
            ("line\nbreak", "U+000A"),
            ("del\u{7f}", "U+007F"),
            ("c1\u{9b}", "U+009B"),
            ("txt.exe\u{202e}gpj", "U+202E"),
            ("iso\u{2067}late", "U+2067"),
        ] {
            let err = check_line("name", value, 80).unwrap_err();
            assert_eq!(err.field, "name");
            assert!(err.rule.contains(code), "{value:?}: {}", err.rule);
        }
        assert!(check_text("excerpt", "bell\u{7}", 80).is_err());
        assert!(check_line("name", "  ", 80).unwrap_err().rule.contains("required"));
        assert!(check_line("name", "abcdef", 5).unwrap_err().rule.contains("at most 5"));
    }
}
