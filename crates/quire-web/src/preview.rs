//! The preview of a markdown field: the editor's text rendered by the
//! server, so its links follow the one rule of links the server keeps
//! everywhere else ([`quire_core::fields::is_href`]: no `javascript:`, no
//! protocol-relative `//host`). The script asks for it as the person types
//! and shows the fragment it answers.

use crate::Person;
use crate::error::WebError;
use crate::form::Form;
use axum::response::Html;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd, html};
use quire_core::access::Permission;
use quire_core::fields::{is_href, is_upload_url};
use serde::Deserialize;

/// The preview's form.
#[derive(Deserialize)]
pub struct PreviewForm {
    /// The markdown to render.
    #[serde(default)]
    text: String,
}

/// `POST /preview`: the HTML of the markdown a signed-in person typed.
pub async fn markdown(person: Person, Form(form): Form<PreviewForm>) -> Result<Html<String>, WebError> {
    person.require(Permission::Read)?;
    Ok(Html(render(&form.text)))
}

/// Renders markdown (CommonMark with tables, strikethrough and task lists)
/// as an HTML fragment in which nothing typed becomes markup of its own:
/// raw HTML is shown as text, a link the rule of links refuses is its text
/// alone, and an image not in the media library (`/uploads/...`) is its
/// alternative text. Text and attributes are escaped by pulldown-cmark's
/// writer; a task (`- [ ]`, `- [x]`) is a checkbox, the one piece of markup
/// written here.
pub fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    // For each open link or image, whether it was left out (its end is
    // then left out too, and what it holds shows as text).
    let mut left_out: Vec<bool> = Vec::new();
    let events = Parser::new_ext(markdown, options).filter_map(|event| match event {
        Event::Start(Tag::Link { link_type, ref dest_url, .. }) => {
            // An email autolink's destination is the address alone; the
            // writer puts `mailto:` in front of it.
            let href = if link_type == LinkType::Email { format!("mailto:{dest_url}") } else { dest_url.to_string() };
            let refused = !is_href(&href);
            left_out.push(refused);
            if refused { None } else { Some(event) }
        }
        Event::Start(Tag::Image { ref dest_url, .. }) => {
            let keep = is_upload_url(dest_url);
            left_out.push(!keep);
            keep.then_some(event)
        }
        Event::End(TagEnd::Link | TagEnd::Image) => {
            if left_out.pop().unwrap_or(false) {
                None
            } else {
                Some(event)
            }
        }
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        // A task shows as a checkbox a reader can see but not tick, named
        // for those who cannot see whether it is ticked.
        Event::TaskListMarker(done) => Some(Event::InlineHtml(
            if done {
                "<input type=\"checkbox\" class=\"task\" disabled checked aria-label=\"Done\"> "
            } else {
                "<input type=\"checkbox\" class=\"task\" disabled aria-label=\"To do\"> "
            }
            .into(),
        )),
        other => Some(other),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn links_follow_the_one_rule_of_links() {
        for (markdown, href) in [
            ("[About](/about)", "/about"),
            ("[Top](#top)", "#top"),
            ("[Docs](https://example.com/docs)", "https://example.com/docs"),
            ("[Mail](mailto:team@example.com)", "mailto:team@example.com"),
            ("[Call](tel:+4930123)", "tel:+4930123"),
            ("<team@example.com>", "mailto:team@example.com"),
        ] {
            assert!(render(markdown).contains(&format!("<a href=\"{href}\">")), "{markdown}: {}", render(markdown));
        }
        for markdown in [
            "[Elsewhere](//evil.example/x)",
            "[Elsewhere](/\\evil.example)",
            "[Elsewhere](<//evil.example>)",
            "[Elsewhere](&#x2F;&#x2F;evil.example)",
            "[Run](javascript:alert(1))",
            "[Run](JAVASCRIPT:alert(1))",
            "[Data](data:text/html,hi)",
            "[Ref][r]\n\n[r]: //evil.example",
            "<//evil.example>",
            "<javascript:alert(1)>",
        ] {
            let html = render(markdown);
            assert!(!html.contains("<a"), "{markdown}: {html}");
            assert!(!html.contains("evil.example\""), "{markdown}: {html}");
        }
        let html = render("See [Elsewhere](//evil.example/x) now");
        assert_eq!(html, "<p>See Elsewhere now</p>\n");
    }

    #[test]
    fn nothing_typed_becomes_markup() {
        let html = render("<script>alert(1)</script>\n\nHi <img src=x onerror=alert(1)> **there**");
        assert!(!html.contains("<script") && !html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;") && html.contains("<strong>there</strong>"), "{html}");
        assert!(!render("![x](https://evil.example/t.png)").contains("<img"));
        assert!(
            render("![a door](/uploads/site/door.png)").contains("<img src=\"/uploads/site/door.png\" alt=\"a door\"")
        );
        assert!(render("[a \"b\"](/x?a=1&b=2)").contains("href=\"/x?a=1&amp;b=2\""));
    }

    #[test]
    fn tasks_are_checkboxes_and_tables_are_tables() {
        let html = render("- [ ] write\n- [x] <b>read</b>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(
            html.contains("<li><input type=\"checkbox\" class=\"task\" disabled aria-label=\"To do\"> write</li>"),
            "{html}"
        );
        assert!(html.contains("disabled checked aria-label=\"Done\"> &lt;b&gt;read&lt;/b&gt;</li>"), "{html}");
        assert!(!html.contains("[ ]") && !html.contains("[x]"), "{html}");
        assert!(html.contains("<table>") && html.contains("<td>2</td>"), "{html}");
        // Brackets that are not a task stay text.
        assert!(render("[ ] not a list").contains("<p>[ ] not a list</p>"));
    }
}
