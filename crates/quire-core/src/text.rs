//! Rules for plain text written by people: names, titles, labels, tags and
//! descriptions. Such text is shown in the back-office, in terminals and to
//! the agent, so it may not carry characters that act instead of showing:
//! NUL and other control characters (ANSI escapes start with one), and the
//! bidirectional overrides and isolates that make text read differently
//! from how it is stored.
//!
//! A single line (a name, title, label, tag, file name) identifies
//! something, so it may not hold a character that shows nothing either:
//! "Pricing" and "Pricing" followed by a zero width space look the same
//! and are two names. Those are Unicode's Default_Ignorable_Code_Point
//! characters (zero width space and joiners, soft hyphen, word joiner, byte
//! order mark, variation selectors, Hangul fillers, tag characters, …) and
//! the bidirectional controls (Bidi_Control, marks included), read from
//! ICU's compiled Unicode data. Three kinds are kept where they are part of
//! what shows, and only there: a zero width joiner or non-joiner after a
//! virama, or a non-joiner between letters that join (RFC 5892, appendix A,
//! the rule internationalised domain names follow: Persian and Indic
//! spelling need them); a zero width joiner between two pictographs
//! (emoji ZWJ sequences: 👩‍💻) and an emoji presentation selector after an
//! emoji (❤️); tag characters after a black flag (subdivision flags).
//! Text of several lines (an excerpt, a description, a prompt) and content
//! (markdown bodies, text fields of sections and entries) is prose, where
//! soft hyphens, zero width spaces (Thai, Khmer) and joiners are ordinary
//! spelling: it keeps them.

use crate::FieldError;
use icu_properties::props::{
    BidiControl, BinaryProperty, CanonicalCombiningClass, DefaultIgnorableCodePoint, Emoji, EnumeratedProperty,
    ExtendedPictographic, JoiningType,
};
use std::borrow::Cow;
use utoipa::openapi::{ObjectBuilder, RefOr, Type, schema::Schema};

/// Characters a single line may not hold anywhere, as the inside of a JSON
/// Schema character class: control characters, bidirectional overrides and
/// isolates, and the default-ignorable characters that no context allows.
/// Those of the Basic Multilingual Plane are escapes; those above U+FFFF
/// (shorthand format controls, musical format controls, the language tag
/// and the variation selectors supplement) are the characters themselves,
/// which every Unicode-aware dialect (ECMAScript's `u` mode, as JSON
/// Schema recommends, Python, Rust) reads as one code point each, where no
/// escape is spelled the same in all of them. The joiners, the emoji
/// presentation selectors and the tag characters (which spell subdivision
/// flags) are left to the server's check: a pattern cannot say in which
/// context they show.
macro_rules! refused_in_lines {
    () => {
        concat!(
            "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b\\u200e\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0d\\ufeff\\uffa0\\ufff0-\\ufff8",
            "\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e001f}\u{e0080}-\u{e0fff}"
        )
    };
}

/// What [`refused_in_lines`] refuses, and also Unicode White_Space (what
/// `str::trim` removes) and the characters that show only in context: a
/// line needs one character outside this set.
macro_rules! not_visible {
    () => {
        concat!(
            "\\u0000-\\u0020\\u007f-\\u00a0\\u00ad\\u034f\\u061c\\u115f\\u1160\\u1680\\u17b4\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8",
            "\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}"
        )
    };
}

/// Characters text of several lines may not hold: control characters but
/// tab, line feed and carriage return, and bidirectional overrides and
/// isolates.
macro_rules! refused_in_text {
    () => {
        "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069"
    };
}

/// [`check_line`] as a JSON Schema pattern (with `maxLength`), for the
/// OpenAPI document: no control character, bidirectional override or
/// character that shows nothing, and one character that is not Unicode
/// White_Space. Character sets are spelled out, and the end is
/// `(?![\s\S])`, because `\s` and `$` mean different things in Rust,
/// ECMAScript and Python. Joiners in context and characters above U+FFFF
/// are the server's to judge.
pub const LINE_PATTERN: &str =
    concat!("^[^", refused_in_lines!(), "]*[^", not_visible!(), "][^", refused_in_lines!(), "]*(?![\\s\\S])");

/// An optional single line: empty, or [`LINE_PATTERN`].
pub const OPTIONAL_LINE_PATTERN: &str =
    concat!("^(?:[^", refused_in_lines!(), "]*[^", not_visible!(), "][^", refused_in_lines!(), "]*)?(?![\\s\\S])");

/// [`check_text`] as a JSON Schema pattern: line breaks and tabs allowed,
/// other control characters and bidirectional overrides not.
pub const TEXT_PATTERN: &str = concat!("^[^", refused_in_text!(), "]*(?![\\s\\S])");

/// An image MIME type: `image/` and then a single line.
pub const MIME_PATTERN: &str = concat!("^image/[^", refused_in_lines!(), "]*(?![\\s\\S])");

const ZWNJ: char = '\u{200c}';
const ZWJ: char = '\u{200d}';

/// Whether `c` shows nothing by itself: Unicode's Default_Ignorable_Code_Point
/// or Bidi_Control.
pub fn is_invisible(c: char) -> bool {
    DefaultIgnorableCodePoint::for_char(c) || BidiControl::for_char(c)
}

/// `text` with `&`, `<` and `>` written as entities, so that it can neither
/// close an element nor open one, and every other character as `also`
/// writes it (`None` keeps it): the one escaping of the back-office's HTML,
/// the system prompt and the `<untrusted>` elements around outside data,
/// each adding what its place needs.
pub fn escape_markup(text: &str, also: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => match also(c) {
                Some(written) => out.push_str(written),
                None => out.push(c),
            },
        }
    }
    out
}

/// Whether `c` is a bidirectional override or isolate (U+202A–U+202E,
/// U+2066–U+2069), refused in text of every kind.
fn is_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether the invisible character at `chars[i]` is part of what shows (see
/// the module documentation).
fn shows_in_context(chars: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| chars[j]);
    let after_virama = before.is_some_and(|b| CanonicalCombiningClass::for_char(b) == CanonicalCombiningClass::Virama);
    match chars[i] {
        ZWJ => after_virama || in_emoji_sequence(chars, i),
        ZWNJ => after_virama || between_joining_letters(chars, i),
        '\u{fe0e}' | '\u{fe0f}' => before.is_some_and(Emoji::for_char),
        '\u{e0020}'..='\u{e007f}' => before.is_some_and(|b| matches!(b, '\u{1f3f4}' | '\u{e0020}'..='\u{e007e}')),
        _ => false,
    }
}

/// A zero width joiner between two pictographs, the first perhaps with a
/// skin tone or presentation selector (UTS #51's emoji ZWJ sequences).
fn in_emoji_sequence(chars: &[char], i: usize) -> bool {
    let before = chars[..i].iter().rev().find(|&&c| !matches!(c, '\u{fe0f}' | '\u{1f3fb}'..='\u{1f3ff}')).copied();
    before.is_some_and(ExtendedPictographic::for_char)
        && chars.get(i + 1).copied().is_some_and(ExtendedPictographic::for_char)
}

/// RFC 5892 appendix A.1's joining context of a zero width non-joiner:
/// `(L|D) T* ZWNJ T* (R|D)` in Joining_Type.
fn between_joining_letters(chars: &[char], i: usize) -> bool {
    let joining = |c: &char| JoiningType::for_char(*c);
    let not_transparent = |c: &&char| joining(c) != JoiningType::Transparent;
    let before = chars[..i].iter().rev().find(not_transparent).map(joining);
    let after = chars[i + 1..].iter().find(not_transparent).map(joining);
    matches!(before, Some(JoiningType::LeftJoining | JoiningType::DualJoining))
        && matches!(after, Some(JoiningType::RightJoining | JoiningType::DualJoining))
}

/// The first character of `value` that plain text may not hold, with its
/// position (in characters) and what it is. Line breaks and tabs are
/// allowed only when `multiline`, and so are characters that show nothing.
fn forbidden(value: &str, multiline: bool) -> Option<(usize, char, &'static str)> {
    let chars: Vec<char> = value.chars().collect();
    chars.iter().enumerate().find_map(|(i, &c)| {
        let what = if c.is_control() && !(multiline && matches!(c, '\n' | '\r' | '\t')) {
            "a control character"
        } else if is_override(c) {
            "a bidirectional override"
        } else if !multiline && is_invisible(c) && !shows_in_context(&chars, i) {
            "an invisible character"
        } else {
            return None;
        };
        Some((i, c, what))
    })
}

fn check_chars(field: &str, value: &str, multiline: bool) -> Result<(), FieldError> {
    match forbidden(value, multiline) {
        None => Ok(()),
        Some((at, c, what)) => Err(FieldError::new(
            field,
            format!("contains {what} (U+{:04X}) at character {}; use plain text", c as u32, at + 1),
        )),
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

/// The characters of a single line alone, whatever its length: for a
/// value whose other rules are checked elsewhere (a path, an option of a
/// select).
pub fn check_line_chars(field: &str, value: &str) -> Result<(), FieldError> {
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

/// The longest id a client may choose for a record of its own.
pub const MAX_CLIENT_ID: usize = 128;

/// The pattern of an id a client chooses for a record of its own (an AG-UI
/// client's `threadId`), as [`check_client_id`] checks it.
pub const CLIENT_ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}(?![\\s\\S])";

/// An id a client chose for a record of its own (an AG-UI thread, which
/// becomes a session): 1 to [`MAX_CLIENT_ID`] ASCII letters, digits, `.`,
/// `_`, `:` and `-`, beginning with a letter or digit, so it reads the same
/// in a URL's path, a log line and a header.
pub fn check_client_id(field: &str, value: &str) -> Result<(), FieldError> {
    let rule = || {
        FieldError::new(
            field,
            format!(
                "1 to {MAX_CLIENT_ID} ASCII letters, digits, '.', '_', ':' and '-', beginning with a letter or digit"
            ),
        )
    };
    let mut chars = value.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if !first_ok || !rest_ok || value.len() > MAX_CLIENT_ID {
        return Err(rule());
    }
    Ok(())
}

/// A required single line of at most `MAX` characters ([`check_line`]), as
/// the OpenAPI document shows it: `#[schema(value_type = Line<200>)]` on a
/// `String` field. One component per length (`Line200`).
pub struct Line<const MAX: usize>;

/// An optional single line (empty, or [`Line`]) of at most `MAX`
/// characters, as the OpenAPI document shows it.
pub struct OptionalLine<const MAX: usize>;

/// Text of several lines of at most `MAX` characters ([`check_text`]), as
/// the OpenAPI document shows it.
pub struct Text<const MAX: usize>;

/// An image MIME type of at most `MAX` characters: `image/` and then a
/// single line, as the OpenAPI document shows it.
pub struct Mime<const MAX: usize>;

fn string_schema(description: String, min: Option<usize>, max: usize, pattern: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .min_length(min)
        .max_length(Some(max))
        .pattern(Some(pattern))
        .into()
}

/// The OpenAPI component of a plain-text type: named after the type and
/// its length (`Line200`), described by `$description` (where `{MAX}` is
/// the length), with its least length and its pattern.
macro_rules! text_component {
    ($ty:ident, $min:expr, $pattern:expr, $description:literal) => {
        impl<const MAX: usize> utoipa::PartialSchema for $ty<MAX> {
            fn schema() -> RefOr<Schema> {
                string_schema(format!($description, MAX = MAX), $min, MAX, $pattern)
            }
        }

        impl<const MAX: usize> utoipa::ToSchema for $ty<MAX> {
            fn name() -> Cow<'static, str> {
                Cow::Owned(format!("{}{MAX}", stringify!($ty)))
            }
        }
    };
}

text_component!(
    Line,
    Some(1),
    LINE_PATTERN,
    "A single line of plain text, at most {MAX} characters: no control, bidirectional or invisible character, not blank."
);
text_component!(
    OptionalLine,
    None,
    OPTIONAL_LINE_PATTERN,
    "Empty, or a single line of plain text, at most {MAX} characters: no control, bidirectional or invisible character."
);
text_component!(
    Text,
    None,
    TEXT_PATTERN,
    "Plain text of at most {MAX} characters, line breaks and tabs allowed: no other control character, no bidirectional override."
);
text_component!(Mime, None, MIME_PATTERN, "An image MIME type, at most {MAX} characters.");

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

    /// Default_Ignorable_Code_Point in Unicode's DerivedCoreProperties.txt
    /// (16.0.0), and Bidi_Control in PropList.txt: the characters a single
    /// line may not hold outside their context.
    const IGNORABLE: &[(u32, u32)] = &[
        (0x00ad, 0x00ad),
        (0x034f, 0x034f),
        (0x061c, 0x061c),
        (0x115f, 0x1160),
        (0x17b4, 0x17b5),
        (0x180b, 0x180f),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x206f),
        (0x3164, 0x3164),
        (0xfe00, 0xfe0f),
        (0xfeff, 0xfeff),
        (0xffa0, 0xffa0),
        (0xfff0, 0xfff8),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0000, 0xe0fff),
    ];

    #[test]
    fn invisible_characters_in_a_line_are_refused_naming_them() {
        for code in [0x200b, 0xfeff, 0x2060, 0x00ad, 0x200f, 0x061c] {
            let c = char::from_u32(code).unwrap();
            for value in [format!("Pricing{c}"), format!("{c}Pricing"), format!("Pri{c}cing")] {
                let err = check_line("title", &value, 80).unwrap_err();
                assert_eq!(err.field, "title");
                let expected = format!("contains an invisible character (U+{code:04X})");
                assert!(err.rule.contains(&expected), "{value:?}: {}", err.rule);
            }
        }
        assert!(check_line("name", "\u{3164}", 80).is_err(), "a Hangul filler alone is no name");
        assert!(check_line("name", "\u{200b}", 80).is_err());
    }

    #[test]
    fn every_ignorable_code_point_is_refused_at_the_end_of_a_line() {
        let mut refused = 0;
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            let listed = IGNORABLE.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)));
            assert!(!listed || is_invisible(c), "U+{:04X} is listed but not known as invisible", c as u32);
            if is_invisible(c) {
                let err = check_line("name", &format!("Pricing{c}"), 80).unwrap_err();
                assert!(err.rule.contains(&format!("(U+{:04X})", c as u32)), "{}", err.rule);
                refused += 1;
            }
        }
        let listed: u32 = IGNORABLE.iter().map(|&(lo, hi)| hi - lo + 1).sum();
        assert!(refused >= listed, "{refused} of {listed}");
    }

    #[test]
    fn joiners_and_selectors_that_are_part_of_what_shows_are_kept() {
        for value in [
            "👩‍💻 team",
            "👩🏽‍💻 team",
            "🏳️‍🌈 pride",
            "❤️ Pricing",
            "#️⃣ hashtags",
            "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} Scotland",
            "می\u{200c}خواهم",
            "क्\u{200d}ष",
            "क्\u{200c}ष",
        ] {
            assert!(check_line("name", value, 80).is_ok(), "{value:?}: {:?}", check_line("name", value, 80));
        }
        for value in [
            "Pric\u{200d}ing",
            "Pric\u{200c}ing",
            "Pricing\u{fe0f}",
            "\u{200d}💻",
            "💻\u{200d}",
            "a\u{e0067}",
            "می\u{200c} خواهم",
        ] {
            let err = check_line("name", value, 80).unwrap_err();
            assert!(err.rule.contains("invisible character"), "{value:?}: {}", err.rule);
        }
    }

    #[test]
    fn text_of_several_lines_keeps_what_prose_spells() {
        for value in ["Donau\u{ad}dampf\u{ad}schiff", "ภาษา\u{200b}ไทย", "می\u{200c}خواهم\nA\u{200d}B", "\u{200f}שלום"]
        {
            assert!(check_text("excerpt", value, 200).is_ok(), "{value:?}");
        }
        assert!(check_text("excerpt", "txt.exe\u{202e}gpj", 200).is_err());
    }

    /// The code points of a character class as the patterns spell it
    /// (`\\u0000-\\u001f\\u00ad…`, and characters above U+FFFF as
    /// themselves).
    fn class(spelled: &str) -> Vec<(u32, u32)> {
        let mut points = Vec::new();
        let mut chars = spelled.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    assert_eq!(chars.next(), Some('u'), "{spelled}");
                    let hex: String = chars.by_ref().take(4).collect();
                    points.push(Some(u32::from_str_radix(&hex, 16).unwrap()));
                }
                '-' => points.push(None),
                other => points.push(Some(other as u32)),
            }
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < points.len() {
            let lo = points[i].unwrap();
            if points.get(i + 1) == Some(&None) {
                ranges.push((lo, points[i + 2].unwrap()));
                i += 3;
            } else {
                ranges.push((lo, lo));
                i += 1;
            }
        }
        ranges
    }

    #[test]
    fn the_patterns_say_what_the_rule_says_in_every_plane() {
        let refused = class(refused_in_lines!());
        let not_visible = class(not_visible!());
        let within = |ranges: &[(u32, u32)], c: char| ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&(c as u32)));
        // Joiners, presentation selectors and tag characters show in context.
        let in_context = |c: char| matches!(c, ZWJ | ZWNJ | '\u{fe0e}' | '\u{fe0f}' | '\u{e0020}'..='\u{e007f}');
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            // A line of one character: that character must be visible.
            assert_eq!(
                !within(&not_visible, c),
                check_line("name", &c.to_string(), 80).is_ok(),
                "U+{:04X} alone",
                c as u32
            );
            // After a letter: only what no context allows is in the class.
            let server = check_line("name", &format!("a{c}"), 80).is_ok();
            assert_eq!(!within(&refused, c), server || in_context(c), "U+{:04X} after a letter", c as u32);
        }
    }
}
