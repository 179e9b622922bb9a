//! An image as the back-office shows it small: in the media grid and
//! beside an image field. Apart from both screens, which use it.

use quire_core::model::{Image, ImageStatus};
use serde_json::Value;

/// An image as a card of the grid shows it.
pub struct Card {
    pub image: Image,
    /// The smallest file to show (the thumbnail, once processed).
    pub thumb: Option<String>,
}

impl Card {
    /// The card of `image`.
    pub(crate) fn of(image: Image) -> Card {
        let v = &image.variants;
        let thumb = ["thumbnail", "medium"]
            .iter()
            .find_map(|n| v.get(n).and_then(|t| t.get("webp").or(t.get("url"))).and_then(Value::as_str))
            .map(str::to_string)
            .or_else(|| (image.status == ImageStatus::Completed).then(|| image.url.clone()));
        Card { image, thumb }
    }
}
