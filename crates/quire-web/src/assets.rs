//! The back-office's own script and stylesheet, embedded in the binary.
//! Their URLs carry the content's hash, so they are cached for a year.
//! They are served without what only a reader of the source needs: the
//! script's comment lines, the stylesheet's comments and the spaces around
//! its punctuation, and the indentation and blank lines of both.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::Embed)]
#[folder = "assets/"]
struct Assets;

/// The URL of asset `name` (e.g. `app.js`), with its content hash.
pub fn url(name: &str) -> String {
    match Assets::get(name) {
        Some(file) => {
            let hash: String = file.metadata.sha256_hash().iter().take(6).map(|b| format!("{b:02x}")).collect();
            format!("/assets/{name}?v={hash}")
        }
        None => format!("/assets/{name}"),
    }
}

/// `GET /favicon.ico`: the icon, an SVG (every browser the back-office
/// serves takes one, and no screen is left asking for a missing file).
pub async fn favicon() -> Response {
    serve(Path("icon.svg".to_string())).await
}

/// The text of a script or stylesheet as it is served: each line without
/// its indentation, without blank lines and, in a script, without the
/// lines that are a `//` comment alone (the script has no string that
/// spans lines, so no line of a string is taken for a comment); a
/// stylesheet also loses its comments and the spaces and line breaks
/// around `{`, `}`, `;`, `,` and `>` ([`tight_css`]).
fn served_text(text: &str, script: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines().map(str::trim) {
        if line.is_empty() || (script && line.starts_with("//")) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if script { out } else { tight_css(&out) }
}

/// A stylesheet without its `/* … */` comments, and without the white
/// space next to `{`, `}`, `;`, `,` and `>`, where it never means anything
/// (a space before `:` can, as a descendant combinator, so colons keep
/// theirs). The stylesheet's one string, a font's name, holds none of them.
fn tight_css(css: &str) -> String {
    let mut bare = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        bare.push_str(&rest[..start]);
        rest = rest[start..].find("*/").map_or("", |end| &rest[start + end + 2..]);
    }
    bare.push_str(rest);
    let tight = |c: char| matches!(c, '{' | '}' | ';' | ',' | '>');
    let mut out = String::with_capacity(bare.len());
    let mut space = false;
    for c in bare.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !tight(c) && !out.ends_with(tight) && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// The served bytes of each script and stylesheet, made once.
static SERVED: std::sync::LazyLock<std::collections::HashMap<String, Vec<u8>>> = std::sync::LazyLock::new(|| {
    Assets::iter()
        .filter_map(|name| {
            let script = name.ends_with(".js");
            if !script && !name.ends_with(".css") {
                return None;
            }
            let file = Assets::get(&name)?;
            let text = std::str::from_utf8(&file.data).ok()?;
            Some((name.to_string(), served_text(text, script).into_bytes()))
        })
        .collect()
});

/// `GET /assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    let Some(file) = Assets::get(&name) else {
        return crate::WebError::NotFound(format!("no asset {name}")).into_response();
    };
    let mime = match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "public, max-age=31536000, immutable")],
        SERVED.get(&name).cloned().unwrap_or_else(|| file.data.into_owned()),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_served_with_every_line_of_code_and_no_comment_line() {
        let source = String::from_utf8(Assets::get("app.js").unwrap().data.into_owned()).unwrap();
        let served = String::from_utf8(SERVED["app.js"].clone()).unwrap();
        let code: Vec<&str> = source.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//")).collect();
        assert_eq!(served.lines().collect::<Vec<_>>(), code);
        assert!(served.starts_with("\"use strict\";\n"), "{}", &served[..40]);
        assert!(served.len() < source.len() * 9 / 10, "{} of {}", served.len(), source.len());
        let css = String::from_utf8(SERVED["app.css"].clone()).unwrap();
        assert!(!css.contains("/*") && !css.contains("  ") && !css.contains("{ "), "{}", &css[..200]);
        assert_eq!(served_text("  a, b > c {\n\n    b: c; /* why */\n  }\n", false), "a,b>c{b: c;}");
        // A space before a colon is a combinator, and stays; so do spaces inside values.
        assert_eq!(tight_css(".a :focus { margin: 0 auto ; }"), ".a :focus{margin: 0 auto;}");
        assert_eq!(tight_css("@media (max-width: 600px) {\n .x { a: b }\n}"), "@media (max-width: 600px){.x{a: b}}");
    }
}
