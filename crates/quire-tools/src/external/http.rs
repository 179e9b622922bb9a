//! Plain HTTP: httpGet reads JSON or text; httpPost sends data out and is
//! destructive — its first call previews the exact request, and it runs
//! only after a person approves it.

use super::{ExternalSettings, net_error};
use crate::catalog::{HttpGetArgs, HttpPostArgs};
use crate::tool::*;
use quire_net::{Request, Response};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Largest answer httpGet and httpPost read.
const MAX_BYTES: u64 = 1024 * 1024;
/// Longest text they return.
const MAX_TEXT: usize = 20_000;
/// Largest body httpPost sends.
const MAX_BODY: usize = 256 * 1024;

const READABLE: [&str; 6] =
    ["application/json", "+json", "text/*", "application/xml", "+xml", "application/x-www-form-urlencoded"];

fn headers_of(h: &Option<BTreeMap<String, String>>) -> Vec<(String, String)> {
    h.as_ref().map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).unwrap_or_default()
}

/// The answer of httpGet and httpPost: JSON when the body is JSON,
/// otherwise text, cut at the limit.
fn answer(res: &Response) -> Value {
    let is_json = res
        .content_type
        .as_deref()
        .is_some_and(|t| quire_net::accepts(&["application/json".into(), "+json".into()], t));
    let mut out = json!({
        "success": true, "status": res.status, "url": res.url, "contentType": res.content_type,
    });
    if is_json && let Ok(v) = serde_json::from_slice::<Value>(&res.body) {
        out["json"] = v;
        return out;
    }
    let text = res.text();
    let length = text.chars().count();
    out["text"] = json!(text.chars().take(MAX_TEXT).collect::<String>());
    out["truncated"] = json!(length > MAX_TEXT);
    out
}

async fn send(ext: &ExternalSettings, request: Request) -> ToolResult {
    let res = ext.net.send(request.accept(&READABLE).max_bytes(MAX_BYTES)).await.map_err(|e| net_error("url", e))?;
    Ok(answer(&res))
}

pub(crate) async fn http_get(call: &Call<'_>, a: HttpGetArgs) -> ToolResult {
    let mut request = Request::get(a.url.as_str());
    request.headers = headers_of(&a.headers);
    send(&call.services.external, request).await
}

/// The exact request httpPost sends: method, URL, headers and body bytes.
fn post_request(ext: &ExternalSettings, a: &HttpPostArgs) -> Result<Request, ToolError> {
    ext.net.check_url(&a.url).map_err(|e| net_error("url", e))?;
    let mut headers = headers_of(&a.headers);
    let has_type = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    let body = match &a.body {
        Value::String(s) => {
            if !has_type {
                headers.push(("Content-Type".into(), "text/plain; charset=utf-8".into()));
            }
            s.clone().into_bytes()
        }
        other => {
            if !has_type {
                headers.push(("Content-Type".into(), "application/json".into()));
            }
            other.to_string().into_bytes()
        }
    };
    if body.len() > MAX_BODY {
        return Err(ToolError::new(
            ErrorCode::Limit,
            format!("body: {} bytes; at most {MAX_BODY} are sent", body.len()),
            "Send less data.",
        ));
    }
    let mut request = Request::post(a.url.as_str(), body);
    request.headers = headers;
    Ok(request)
}

/// The request shown to the person who approves it.
fn shown(request: &Request) -> Value {
    let headers: BTreeMap<&str, &str> = request.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    json!({
        "method": "POST",
        "url": request.url,
        "headers": headers,
        "body": String::from_utf8_lossy(request.body.as_deref().unwrap_or_default()),
    })
}

pub(crate) async fn http_post(call: &Call<'_>, a: HttpPostArgs) -> ToolResult {
    let ext = &call.services.external;
    send(ext, post_request(ext, &a)?).await
}

/// Nothing is sent before a person approves this exact request.
pub(crate) async fn preview_post(call: &Call<'_>, a: HttpPostArgs) -> Result<Preview, ToolError> {
    let request = post_request(&call.services.external, &a)?;
    Ok(Preview {
        message: format!(
            "Send a POST request to {} ({} bytes).",
            request.url,
            request.body.as_ref().map_or(0, Vec::len)
        ),
        items: json!([shown(&request)]),
        fingerprint: Vec::new(),
    })
}
