//! Property tests of the line model against a plain `Vec<String>` model.

use proptest::prelude::*;
use quire_vault::lines::{LineEdit, LineEnding, Text, content_lines};

/// The reference: a file as lines, its line ending, and whether it ends with a line break.
#[derive(Debug, Clone, PartialEq)]
struct Model {
    lines: Vec<String>,
    crlf: bool,
    final_newline: bool,
}

impl Model {
    /// Reads a file with uniform line endings the simplest way possible.
    fn parse(file: &str) -> Model {
        let crlf = file.find('\n').is_some_and(|at| at > 0 && file.as_bytes()[at - 1] == b'\r');
        let mut lines: Vec<String> =
            file.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned()).collect();
        let final_newline = lines.last().is_some_and(String::is_empty);
        if final_newline {
            lines.pop();
        }
        Model { lines, crlf, final_newline }
    }

    fn render(&self) -> String {
        let ending = if self.crlf { "\r\n" } else { "\n" };
        let mut out = self.lines.join(ending);
        if self.final_newline && !self.lines.is_empty() {
            out.push_str(ending);
        }
        out
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert { at: usize, lines: Vec<String> },
    Append { lines: Vec<String> },
    Replace { from: usize, to: usize, lines: Vec<String> },
    Delete { from: usize, to: usize },
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z #\\-\t]{1,8}", "[äé✓ ]{1,3}"]
}

fn file() -> impl Strategy<Value = String> {
    (prop::collection::vec(line(), 0..12), any::<bool>(), any::<bool>())
        .prop_map(|(lines, crlf, final_newline)| Model { lines, crlf, final_newline }.render())
}

fn op() -> impl Strategy<Value = Op> {
    let lines = || prop::collection::vec(line(), 1..5);
    prop_oneof![
        (any::<usize>(), lines()).prop_map(|(at, lines)| Op::Insert { at, lines }),
        lines().prop_map(|lines| Op::Append { lines }),
        (any::<usize>(), any::<usize>(), lines()).prop_map(|(from, to, lines)| Op::Replace { from, to, lines }),
        (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Op::Delete { from, to }),
    ]
}

/// Writes lines as the `content` parameter; a trailing newline is added at random, and always when the last line is
/// empty (without one, `["a", ""]` would read back as `["a"]`).
fn content(lines: &[String], trailing: bool, crlf: bool) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let ending = if crlf { "\r\n" } else { "\n" };
    let mut out = lines.join(ending);
    if trailing || lines.last().is_some_and(String::is_empty) {
        out.push_str(ending);
    }
    out
}

/// Turns a random op into `update` parameters valid for a file of `total` lines, applies it to the model, and
/// returns the parameters; `None` when the op needs lines the file does not have.
fn plan(op: &Op, model: &mut Model, total: usize) -> Option<(i64, Option<i64>, Vec<String>)> {
    let was_empty = model.lines.is_empty();
    let planned = match op {
        Op::Insert { at, lines } => {
            let at = at % (total + 1);
            model.lines.splice(at..at, lines.iter().cloned());
            (at as i64 + 1, None, lines.clone())
        }
        Op::Append { lines } => {
            model.lines.extend(lines.iter().cloned());
            (-1, None, lines.clone())
        }
        Op::Replace { from, to, .. } | Op::Delete { from, to } if total > 0 => {
            let (a, b) = (from % total, to % total);
            let (from, to) = (a.min(b), a.max(b));
            let lines = if let Op::Replace { lines, .. } = op { lines.clone() } else { Vec::new() };
            model.lines.splice(from..=to, lines.iter().cloned());
            (from as i64 + 1, Some(to as i64 + 1), lines)
        }
        _ => return None,
    };
    if was_empty && !model.lines.is_empty() {
        // An empty file that gets content uses `\n` and a final newline.
        model.crlf = false;
        model.final_newline = true;
    }
    Some(planned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_round_trips(text in "[a\r\n é]{0,40}") {
        prop_assert_eq!(Text::parse(&text).render(), text);
    }

    #[test]
    fn arbitrary_strings_round_trip(text in any::<String>()) {
        prop_assert_eq!(Text::parse(&text).render(), text);
    }

    #[test]
    fn parsing_agrees_with_the_model(file in file()) {
        let text = Text::parse(&file);
        let model = Model::parse(&file);
        prop_assert_eq!(text.lines().collect::<Vec<_>>(), model.lines.iter().map(String::as_str).collect::<Vec<_>>());
        if !model.lines.is_empty() {
            prop_assert_eq!(text.has_final_newline(), model.final_newline);
        }
        let ending = if model.crlf { LineEnding::CrLf } else { LineEnding::Lf };
        if file.contains('\n') {
            prop_assert_eq!(text.line_ending(), ending);
        }
    }

    #[test]
    fn edits_agree_with_the_model(
        file in file(),
        ops in prop::collection::vec(op(), 1..6),
        trailing in any::<bool>(),
        content_crlf in any::<bool>(),
    ) {
        let mut text = Text::parse(&file);
        let mut model = Model::parse(&file);
        for op in &ops {
            let Some((start, end, lines)) = plan(op, &mut model, text.len()) else { continue };
            let edit = LineEdit::from_params(start, end, &content(&lines, trailing, content_crlf)).unwrap();
            text.apply(edit).unwrap();
            prop_assert_eq!(text.render(), model.render(), "after {:?}", op);
            prop_assert_eq!(Text::parse(&text.render()).render(), text.render());
        }
    }

    #[test]
    fn edits_keep_line_endings_and_final_newline(file in file(), op in op(), trailing in any::<bool>()) {
        prop_assume!(!Text::parse(&file).is_empty());
        let before = Text::parse(&file);
        let mut model = Model::parse(&file);
        let mut text = before.clone();
        let Some((start, end, lines)) = plan(&op, &mut model, text.len()) else { return Ok(()) };
        text.apply(LineEdit::from_params(start, end, &content(&lines, trailing, false)).unwrap()).unwrap();
        let rendered = text.render();
        let ending = before.line_ending().as_str();
        if before.has_final_newline() {
            prop_assert!(rendered.is_empty() || rendered.ends_with(ending), "final newline lost: {:?}", rendered);
        } else if text.lines().last().is_some_and(|last| !last.is_empty()) {
            // Without a final newline, a last line that is empty looks like a final newline; any other last line
            // shows that none was added.
            prop_assert!(!rendered.ends_with('\n'), "final newline added: {:?}", rendered);
        }
        if before.line_ending() == LineEnding::CrLf {
            prop_assert!(!rendered.replace("\r\n", "").contains('\n'), "a bare \\n in {:?}", rendered);
        } else {
            prop_assert!(!rendered.contains('\r'));
        }
    }

    #[test]
    fn insert_then_delete_restores_the_bytes(
        file in file(),
        at in any::<usize>(),
        lines in prop::collection::vec(line(), 1..5),
        trailing in any::<bool>(),
    ) {
        let mut text = Text::parse(&file);
        let at = at % (text.len() + 1) + 1;
        let count = content_lines(&content(&lines, trailing, false)).len();
        text.apply(LineEdit::from_params(at as i64, None, &content(&lines, trailing, false)).unwrap()).unwrap();
        prop_assert_eq!(text.len(), Text::parse(&file).len() + count);
        let last = (at + count - 1) as i64;
        text.apply(LineEdit::from_params(at as i64, Some(last), "").unwrap()).unwrap();
        prop_assert_eq!(text.render(), file);
    }

    #[test]
    fn append_then_delete_restores_the_bytes(file in file(), lines in prop::collection::vec(line(), 1..5)) {
        let mut text = Text::parse(&file);
        let total = text.len() as i64;
        text.apply(LineEdit::from_params(-1, None, &content(&lines, true, false)).unwrap()).unwrap();
        text.apply(LineEdit::from_params(total + 1, Some(text.len() as i64), "").unwrap()).unwrap();
        prop_assert_eq!(text.render(), file);
    }

    #[test]
    fn out_of_range_edits_are_refused_and_change_nothing(file in file(), past in 1usize..5) {
        let mut text = Text::parse(&file);
        let total = text.len();
        prop_assert!(text.apply(LineEdit::from_params((total + 1 + past) as i64, None, "x").unwrap()).is_err());
        prop_assert!(text.apply(LineEdit::from_params((total + past) as i64, Some((total + past) as i64), "x").unwrap()).is_err());
        if total > 0 {
            prop_assert!(text.apply(LineEdit::from_params(1, Some((total + past) as i64), "x").unwrap()).is_err());
        }
        prop_assert_eq!(text.render(), file);
    }
}
