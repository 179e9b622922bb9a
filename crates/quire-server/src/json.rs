//! Lists answered from JSON the store already wrote: the items of a
//! [`Listing<String>`] (each the JSON text of one record) put together into
//! the document [`ListResponse`](crate::routes::ListResponse) serializes
//! to, byte for byte, with no value parsed or encoded again.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use quire_store::Listing;

/// One page of a list whose items are JSON text, answered as
/// `{"items":[…],"count":…,"nextCursor":…}`, the shape of every list.
#[derive(Debug)]
pub struct JsonList(pub Listing<String>);

impl JsonList {
    /// The document's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let Listing { items, next_cursor } = &self.0;
        let size = items.iter().map(|i| i.len() + 1).sum::<usize>() + 64;
        let mut out = Vec::with_capacity(size + next_cursor.as_ref().map_or(0, String::len));
        out.extend_from_slice(b"{\"items\":[");
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item.as_bytes());
        }
        out.extend_from_slice(b"],\"count\":");
        out.extend_from_slice(items.len().to_string().as_bytes());
        if let Some(cursor) = next_cursor {
            out.extend_from_slice(b",\"nextCursor\":");
            // A string serializes infallibly into a Vec.
            serde_json::to_writer(&mut out, cursor).expect("a string serializes");
        }
        out.push(b'}');
        out
    }
}

impl IntoResponse for JsonList {
    fn into_response(self) -> Response {
        let body = self.to_bytes();
        // The content type `axum::Json` answers.
        ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::JsonList;
    use quire_store::Listing;

    /// The same document `ListResponse` serializes to, with and without a
    /// next page, and empty.
    #[test]
    fn writes_what_list_response_serializes() {
        let items = vec![r#"{"a":1,"b":"x\"y"}"#.to_string(), r#"{"a":2,"b":null}"#.to_string()];
        for (items, next_cursor) in [(items.clone(), Some("azox".to_string())), (items, None), (Vec::new(), None)] {
            let values: Vec<serde_json::Value> = items.iter().map(|i| serde_json::from_str(i).unwrap()).collect();
            let expected = serde_json::to_vec(&crate::routes::ListResponse::from(Listing {
                items: values,
                next_cursor: next_cursor.clone(),
            }))
            .unwrap();
            assert_eq!(
                String::from_utf8(JsonList(Listing { items, next_cursor }).to_bytes()).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }
}
