//! A note's text as numbered lines: parsing, rendering, and the line edits of the `read` and `update` tools.
//!
//! Pure: no I/O. The rules, which every edit follows:
//!
//! - Text is split into lines on `\n`; a `\r` just before a `\n` belongs to the line break, not to the line.
//!   `"a\nb\n"` and `"a\nb"` both have 2 lines, `""` has none and `"\n"` has one empty line.
//! - The text's line ending is that of its first line break (`\n` when there is none). Each line remembers its own
//!   break, so parsing and rendering give back the same bytes, even for mixed line endings.
//! - Content inserted by an edit is split the same way; a trailing newline in it adds no extra line (`"x\n"` and
//!   `"x"` are both one line). Inserted lines get the text's line ending.
//! - Whether the text ends with a line break is kept through every edit. Empty text counts as ending with one, so
//!   the first content it gets is written with `\n` and a final newline (also when an edit has just emptied it).

use crate::error::Param;

/// A line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl LineEnding {
    /// The bytes of the break.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
        }
    }
}

/// A note's text split into lines, ready to be edited by line number and rendered back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    lines: Vec<String>,
    /// The break after each line (same length as `lines`); the last one is written only when `final_newline`.
    breaks: Vec<LineEnding>,
    ending: LineEnding,
    final_newline: bool,
}

impl Text {
    /// Splits text into lines (see the module documentation for the rules).
    pub fn parse(text: &str) -> Text {
        let mut lines = Vec::new();
        let mut breaks = Vec::new();
        let mut first_break = None;
        let mut rest = text;
        while let Some(at) = rest.find('\n') {
            let raw = &rest[..at];
            let (line, brk) = match raw.strip_suffix('\r') {
                Some(line) => (line, LineEnding::CrLf),
                None => (raw, LineEnding::Lf),
            };
            first_break.get_or_insert(brk);
            lines.push(line.to_owned());
            breaks.push(brk);
            rest = &rest[at + 1..];
        }
        let ending = first_break.unwrap_or(LineEnding::Lf);
        let final_newline = rest.is_empty();
        if !final_newline {
            lines.push(rest.to_owned());
            breaks.push(ending);
        }
        Text { lines, breaks, ending, final_newline }
    }

    /// The text with every line and break written back.
    pub fn render(&self) -> String {
        let size = self.lines.iter().map(|line| line.len() + 2).sum();
        let mut out = String::with_capacity(size);
        let last = self.lines.len().saturating_sub(1);
        for (index, (line, brk)) in self.lines.iter().zip(&self.breaks).enumerate() {
            out.push_str(line);
            if index < last || self.final_newline {
                out.push_str(brk.as_str());
            }
        }
        out
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the text has no lines at all.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `number` (1-based), without its line break.
    pub fn line(&self, number: usize) -> Option<&str> {
        number.checked_sub(1).and_then(|index| self.lines.get(index)).map(String::as_str)
    }

    /// All lines in order, without their line breaks.
    pub fn lines(&self) -> impl ExactSizeIterator<Item = &str> {
        self.lines.iter().map(String::as_str)
    }

    /// The line ending given to inserted lines: that of the first line break.
    pub fn line_ending(&self) -> LineEnding {
        self.ending
    }

    /// Whether the text ends with a line break (empty text counts as ending with one).
    pub fn has_final_newline(&self) -> bool {
        self.final_newline
    }

    /// Applies an edit, refusing positions outside the text.
    pub fn apply(&mut self, edit: LineEdit) -> Result<(), LineError> {
        let total = self.len();
        match edit {
            LineEdit::Insert { before, lines } => {
                if before == 0 {
                    return Err(LineError::StartBelowOne { start: 0, append_allowed: true });
                }
                if before > total + 1 {
                    return Err(LineError::StartPastEnd { start: to_i64(before), total, inserting: true });
                }
                self.splice(before - 1, before - 1, lines);
            }
            LineEdit::Append { lines } => self.splice(total, total, lines),
            LineEdit::Replace { start, end, lines } => {
                if start == 0 {
                    return Err(LineError::StartBelowOne { start: 0, append_allowed: true });
                }
                if end < start {
                    return Err(LineError::EndBeforeStart { start: to_i64(start), end: to_i64(end) });
                }
                if start > total {
                    return Err(LineError::StartPastEnd { start: to_i64(start), total, inserting: false });
                }
                if end > total {
                    return Err(LineError::EndPastEnd { end: to_i64(end), total });
                }
                self.splice(start - 1, end, lines);
            }
        }
        Ok(())
    }

    /// Replaces the lines at indexes `from..to` (0-based, exclusive) with `new_lines`, each ending with the text's
    /// line ending.
    fn splice(&mut self, from: usize, to: usize, new_lines: Vec<String>) {
        let count = new_lines.len();
        self.lines.splice(from..to, new_lines);
        self.breaks.splice(from..to, std::iter::repeat_n(self.ending, count));
        if self.lines.is_empty() {
            // Empty text renders as "", which parses back with `\n` and a final newline; keep the two in step so
            // content added later is written as it would be after writing the empty text and reading it again.
            self.ending = LineEnding::Lf;
            self.final_newline = true;
        }
    }
}

/// Splits content given to `write` or `update` into lines, the same way as [`Text::parse`]: a trailing newline
/// adds no line, and `""` has none.
pub fn content_lines(content: &str) -> Vec<String> {
    Text::parse(content).lines
}

/// An edit of the `update` tool, already checked for the rules that do not depend on the note's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineEdit {
    /// Inserts lines before line `before` (1-based); `before` one past the last line appends.
    Insert {
        /// The line the new lines go in front of.
        before: usize,
        /// The lines to insert (never empty).
        lines: Vec<String>,
    },
    /// Adds lines after the last line.
    Append {
        /// The lines to add (never empty).
        lines: Vec<String>,
    },
    /// Replaces lines `start..=end` (1-based, inclusive) with `lines`; no lines deletes the range.
    Replace {
        /// First line replaced.
        start: usize,
        /// Last line replaced.
        end: usize,
        /// The replacement, possibly empty.
        lines: Vec<String>,
    },
}

impl LineEdit {
    /// Reads the `update` tool's parameters:
    ///
    /// - `startLine` only: insert the content before that line (one past the last line appends);
    /// - `startLine: -1`: append;
    /// - `startLine` and `endLine`: replace that inclusive range; empty content deletes it.
    pub fn from_params(start_line: i64, end_line: Option<i64>, content: &str) -> Result<LineEdit, LineError> {
        let lines = content_lines(content);
        match (start_line, end_line) {
            (-1, Some(end)) => Err(LineError::EndWithAppend { end }),
            (-1, None) if lines.is_empty() => Err(LineError::NothingToInsert),
            (-1, None) => Ok(LineEdit::Append { lines }),
            (start, _) if start < 1 => Err(LineError::StartBelowOne { start, append_allowed: true }),
            (_, None) if lines.is_empty() => Err(LineError::NothingToInsert),
            (start, None) => Ok(LineEdit::Insert { before: to_usize(start), lines }),
            (start, Some(end)) if end < start => Err(LineError::EndBeforeStart { start, end }),
            (start, Some(end)) => Ok(LineEdit::Replace { start: to_usize(start), end: to_usize(end), lines }),
        }
    }
}

/// The inclusive range of line numbers the `read` tool returns for `startLine` and `endLine` on a text of `total`
/// lines.
///
/// `endLine` defaults to the last line and is clamped to it. `startLine` past the end is refused, except that
/// `startLine: 1` on an empty text is allowed and returns the empty range `(1, 0)`.
pub fn read_range(total: usize, start_line: i64, end_line: Option<i64>) -> Result<(usize, usize), LineError> {
    if start_line < 1 {
        return Err(LineError::StartBelowOne { start: start_line, append_allowed: false });
    }
    if let Some(end) = end_line
        && end < start_line
    {
        return Err(LineError::EndBeforeStart { start: start_line, end });
    }
    let start = to_usize(start_line);
    if start > total && !(start == 1 && total == 0) {
        return Err(LineError::StartPastEnd { start: start_line, total, inserting: false });
    }
    let end = end_line.map_or(total, |end| to_usize(end).min(total));
    Ok((start, end))
}

/// Converts a line number already checked to be positive; numbers beyond the address space saturate, and any
/// saturated number is past the end of every text.
fn to_usize(number: i64) -> usize {
    usize::try_from(number).unwrap_or(usize::MAX)
}

/// Converts a line number back for an error message.
fn to_i64(number: usize) -> i64 {
    i64::try_from(number).unwrap_or(i64::MAX)
}

/// A line number that does not fit the note or the operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// `startLine` is 0 or negative (other than `-1` where appending is allowed).
    StartBelowOne {
        /// The number given.
        start: i64,
        /// Whether `-1` (append) would have been accepted.
        append_allowed: bool,
    },
    /// `endLine` was given together with `startLine: -1`.
    EndWithAppend {
        /// The number given.
        end: i64,
    },
    /// `endLine` is before `startLine`.
    EndBeforeStart {
        /// The `startLine` given.
        start: i64,
        /// The `endLine` given.
        end: i64,
    },
    /// `startLine` is past the last line (or, when inserting, past one after it).
    StartPastEnd {
        /// The number given.
        start: i64,
        /// The note's line count.
        total: usize,
        /// Whether this was an insert, where one past the last line is allowed.
        inserting: bool,
    },
    /// `endLine` is past the last line of a range to replace.
    EndPastEnd {
        /// The number given.
        end: i64,
        /// The note's line count.
        total: usize,
    },
    /// An insert or append with empty content.
    NothingToInsert,
}

impl LineError {
    /// The parameter at fault.
    pub fn param(&self) -> Param {
        match self {
            LineError::StartBelowOne { .. } | LineError::StartPastEnd { .. } => Param::StartLine,
            LineError::EndWithAppend { .. } | LineError::EndBeforeStart { .. } | LineError::EndPastEnd { .. } => {
                Param::EndLine
            }
            LineError::NothingToInsert => Param::Content,
        }
    }

    /// The message after `param: `, naming the note at `path` where its length matters.
    pub fn describe(&self, path: &str) -> String {
        match self {
            LineError::StartBelowOne { append_allowed: true, .. } => "must be 1 or more (or -1 to append)".to_owned(),
            LineError::StartBelowOne { append_allowed: false, .. } => "must be 1 or more".to_owned(),
            LineError::EndWithAppend { end } => {
                format!("{end} cannot be combined with startLine -1; -1 appends after the last line")
            }
            LineError::EndBeforeStart { start, end } => format!("{end} is before startLine {start}"),
            LineError::StartPastEnd { start, total, inserting } => {
                let mut message = format!("{start} is past the end; {path:?} has {}", count_lines(*total));
                if *inserting {
                    message.push_str(&format!(" (use {} or -1 to append)", total + 1));
                }
                message
            }
            LineError::EndPastEnd { end, total } => {
                format!("{end} is past the end; {path:?} has {}", count_lines(*total))
            }
            LineError::NothingToInsert => "is empty; nothing to insert".to_owned(),
        }
    }
}

fn count_lines(total: usize) -> String {
    if total == 1 { "1 line".to_owned() } else { format!("{total} lines") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(text: &str, start: i64, end: Option<i64>, content: &str) -> Result<String, LineError> {
        let mut parsed = Text::parse(text);
        parsed.apply(LineEdit::from_params(start, end, content)?)?;
        Ok(parsed.render())
    }

    #[test]
    fn counts_lines_as_documented() {
        assert_eq!(Text::parse("a\nb\n").len(), 2);
        assert_eq!(Text::parse("a\nb").len(), 2);
        assert_eq!(Text::parse("").len(), 0);
        assert_eq!(Text::parse("\n").len(), 1);
        assert_eq!(Text::parse("\n").line(1), Some(""));
        assert_eq!(Text::parse("a\r\nb").lines().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn line_ending_is_that_of_the_first_break() {
        assert_eq!(Text::parse("a\r\nb\nc").line_ending(), LineEnding::CrLf);
        assert_eq!(Text::parse("a\nb\r\nc").line_ending(), LineEnding::Lf);
        assert_eq!(Text::parse("abc").line_ending(), LineEnding::Lf);
    }

    #[test]
    fn mixed_endings_round_trip() {
        for text in ["a\r\nb\nc", "a\nb\r\n", "\r\n\n\r\n", "x\r", "\r", "a\rb\n"] {
            assert_eq!(Text::parse(text).render(), text);
        }
    }

    #[test]
    fn content_trailing_newline_adds_no_line() {
        assert_eq!(content_lines("x\n"), ["x"]);
        assert_eq!(content_lines("x"), ["x"]);
        assert_eq!(content_lines("\n"), [""]);
        assert!(content_lines("").is_empty());
    }

    #[test]
    fn insert_append_replace_delete() {
        assert_eq!(edit("1\n2\n3\n", 2, None, "x").unwrap(), "1\nx\n2\n3\n");
        assert_eq!(edit("1\n2\n3\n", 4, None, "x").unwrap(), "1\n2\n3\nx\n");
        assert_eq!(edit("1\n2\n3\n", -1, None, "x\ny\n").unwrap(), "1\n2\n3\nx\ny\n");
        assert_eq!(edit("1\n2\n3\n", 2, Some(3), "x").unwrap(), "1\nx\n");
        assert_eq!(edit("1\n2\n3\n", 1, Some(2), "").unwrap(), "3\n");
    }

    #[test]
    fn missing_final_newline_stays_missing() {
        assert_eq!(edit("1\n2", -1, None, "x").unwrap(), "1\n2\nx");
        assert_eq!(edit("1\n2", 2, Some(2), "y").unwrap(), "1\ny");
        assert_eq!(edit("1\n2", 2, Some(2), "").unwrap(), "1");
        assert_eq!(edit("1\n2", 1, None, "0").unwrap(), "0\n1\n2");
    }

    #[test]
    fn empty_text_gets_lf_and_final_newline() {
        assert_eq!(edit("", 1, None, "a\r\nb").unwrap(), "a\nb\n");
        assert_eq!(edit("", -1, None, "a").unwrap(), "a\n");
    }

    #[test]
    fn crlf_is_kept_for_inserted_lines() {
        assert_eq!(edit("a\r\nb\r\n", 2, None, "x\ny\n").unwrap(), "a\r\nx\r\ny\r\nb\r\n");
        assert_eq!(edit("a\r\nb", -1, None, "x").unwrap(), "a\r\nb\r\nx");
    }

    #[test]
    fn parameter_errors() {
        assert_eq!(
            LineEdit::from_params(0, None, "x"),
            Err(LineError::StartBelowOne { start: 0, append_allowed: true })
        );
        assert_eq!(
            LineEdit::from_params(-2, None, "x"),
            Err(LineError::StartBelowOne { start: -2, append_allowed: true })
        );
        assert_eq!(LineEdit::from_params(-1, Some(3), "x"), Err(LineError::EndWithAppend { end: 3 }));
        assert_eq!(LineEdit::from_params(5, Some(3), "x"), Err(LineError::EndBeforeStart { start: 5, end: 3 }));
        assert_eq!(LineEdit::from_params(1, None, ""), Err(LineError::NothingToInsert));
        assert_eq!(LineEdit::from_params(-1, None, ""), Err(LineError::NothingToInsert));
        assert!(LineEdit::from_params(1, Some(1), "").is_ok());
    }

    #[test]
    fn length_errors_name_the_line_count() {
        let error = edit("1\n2\n", 4, None, "x").unwrap_err();
        assert_eq!(error.param(), Param::StartLine);
        assert_eq!(error.describe("a.md"), "4 is past the end; \"a.md\" has 2 lines (use 3 or -1 to append)");
        let error = edit("1\n", 1, Some(2), "x").unwrap_err();
        assert_eq!(error.param(), Param::EndLine);
        assert_eq!(error.describe("a.md"), "2 is past the end; \"a.md\" has 1 line");
        let error = edit("1\n", 2, Some(2), "x").unwrap_err();
        assert_eq!(error.param(), Param::StartLine);
    }

    #[test]
    fn read_ranges() {
        assert_eq!(read_range(12, 1, None), Ok((1, 12)));
        assert_eq!(read_range(12, 5, Some(40)), Ok((5, 12)));
        assert_eq!(read_range(12, 12, Some(12)), Ok((12, 12)));
        assert_eq!(read_range(0, 1, None), Ok((1, 0)));
        assert!(matches!(read_range(0, 2, None), Err(LineError::StartPastEnd { total: 0, .. })));
        assert!(matches!(read_range(12, 13, None), Err(LineError::StartPastEnd { total: 12, .. })));
        assert_eq!(read_range(12, 5, Some(3)), Err(LineError::EndBeforeStart { start: 5, end: 3 }));
        assert_eq!(read_range(12, 0, None), Err(LineError::StartBelowOne { start: 0, append_allowed: false }));
        assert_eq!(read_range(12, -1, None), Err(LineError::StartBelowOne { start: -1, append_allowed: false }));
        assert!(read_range(12, i64::MAX, None).is_err());
    }
}
