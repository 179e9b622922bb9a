//! Quire's image pipeline: what an uploaded file is, and what is stored of it.
//!
//! [`sniff`] tells the type from the first bytes of a file (never from a
//! name or a client's word) and refuses anything but PNG, JPEG, WebP and GIF,
//! naming what it found. [`inspect`] reads the header under [`Limits`], so a
//! decompression bomb is refused before a pixel is decoded. [`process`]
//! decodes under the same limits, applies the EXIF orientation, and encodes
//! every file that will be stored from pixels alone — the original in its own
//! format and the variants in WebP plus that format — so no metadata (EXIF,
//! GPS, XMP, ICC, comments) nor anything appended to the image survives.
//! Files are named by the hash of their bytes.
//!
//! Everything here is synchronous CPU work without I/O beyond the reader it
//! is given; callers run it on a blocking thread.

use image::codecs::gif::{GifDecoder, GifEncoder, Repeat};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::imageops::FilterType;
use image::{AnimationDecoder, DynamicImage, Frame, ImageDecoder, ImageEncoder, ImageReader};
use sha2::{Digest, Sha256};
use std::io::{BufRead, Cursor, Seek};
use std::time::{Duration, Instant};

/// A stored image type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
    /// GIF (animation kept in the original).
    Gif,
}

impl Format {
    /// Its MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
            Format::Gif => "image/gif",
        }
    }
    /// The file extension of its stored files.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Webp => "webp",
            Format::Gif => "gif",
        }
    }
    /// Its name for people.
    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Webp => "WebP",
            Format::Gif => "GIF",
        }
    }
    /// The type of a MIME string this pipeline produces.
    pub fn from_mime(mime: &str) -> Option<Format> {
        [Format::Png, Format::Jpeg, Format::Webp, Format::Gif].into_iter().find(|f| f.mime() == mime)
    }
    fn image_format(self) -> image::ImageFormat {
        match self {
            Format::Png => image::ImageFormat::Png,
            Format::Jpeg => image::ImageFormat::Jpeg,
            Format::Webp => image::ImageFormat::WebP,
            Format::Gif => image::ImageFormat::Gif,
        }
    }
}

/// Why a file was refused or could not be processed. Messages say what was
/// found and what is accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MediaError {
    /// Not one of the accepted types.
    #[error("the file is {found}; only PNG, JPEG, WebP and GIF images are accepted")]
    Unsupported {
        /// What the bytes look like.
        found: String,
    },
    /// More pixels than allowed.
    #[error("the image is {width}×{height} pixels ({megapixels} megapixels); the limit is {limit} megapixels")]
    TooManyPixels {
        /// Width the header declares.
        width: u32,
        /// Height the header declares.
        height: u32,
        /// Its pixel count in megapixels, rounded up.
        megapixels: u64,
        /// The limit in megapixels.
        limit: u64,
    },
    /// Bytes that do not decode as the type they start as.
    #[error("the file starts as {format} but is not a readable {format} image: {reason}")]
    Corrupt {
        /// The sniffed type's name.
        format: &'static str,
        /// What the decoder said.
        reason: String,
    },
    /// Decoding needs more memory or time than allowed.
    #[error("{0}")]
    Limit(String),
    /// Encoding a stored file failed.
    #[error("could not encode the {0}")]
    Encode(String),
}

/// Decoding limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most pixels (width × height) of an image.
    pub max_pixels: u64,
    /// Most bytes the decoder may allocate (for an animation: all frames).
    pub max_alloc: u64,
    /// Longest processing may take; checked between steps.
    pub max_time: Duration,
}

impl Default for Limits {
    /// 50 megapixels, 512 MiB, 60 s.
    fn default() -> Self {
        Limits { max_pixels: 50_000_000, max_alloc: 512 * 1024 * 1024, max_time: Duration::from_secs(60) }
    }
}

/// The type of a file from its first bytes (16 are enough), or a refusal
/// naming what they look like.
pub fn sniff(head: &[u8]) -> Result<Format, MediaError> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(Format::Png);
    }
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(Format::Jpeg);
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Ok(Format::Gif);
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Ok(Format::Webp);
    }
    Err(MediaError::Unsupported { found: describe(head) })
}

/// What bytes that are not an accepted image look like.
fn describe(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head).trim_start_matches('\u{feff}').trim_start().to_ascii_lowercase();
    let ftyp = |brands: &[&[u8]]| head.len() >= 12 && &head[4..8] == b"ftyp" && brands.contains(&&head[8..12]);
    let found = if head.is_empty() {
        "empty"
    } else if text.starts_with("<svg") || (text.starts_with("<?xml") && text.contains("<svg")) {
        "an SVG image (SVG can carry scripts)"
    } else if text.starts_with("<!doctype html") || text.starts_with("<html") || text.starts_with("<script") {
        "an HTML document"
    } else if text.starts_with("<?xml") || text.starts_with('<') {
        "XML or HTML markup (possibly SVG)"
    } else if head.starts_with(b"%PDF") {
        "a PDF document"
    } else if ftyp(&[b"avif", b"avis"]) {
        "an AVIF image, which this server cannot decode"
    } else if ftyp(&[b"heic", b"heix", b"mif1", b"msf1", b"hevc"]) {
        "a HEIC/HEIF image, which this server cannot decode"
    } else if head.len() >= 8 && &head[4..8] == b"ftyp" {
        "an MP4/QuickTime container"
    } else if head.starts_with(b"BM") {
        "a BMP image"
    } else if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") {
        "a TIFF image"
    } else if head.starts_with(&[0, 0, 1, 0]) {
        "an ICO icon"
    } else if head.starts_with(b"PK\x03\x04") {
        "a ZIP archive"
    } else if head.starts_with(b"\x1f\x8b") {
        "gzip-compressed data"
    } else if head.starts_with(b"\x7fELF") || head.starts_with(b"MZ") {
        "an executable"
    } else if head.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        "plain text"
    } else {
        let hex: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
        return format!("not a known image type (it starts with bytes {})", hex.join(" "));
    };
    found.to_string()
}

/// Checks a pixel count against the limit.
fn check_pixels(width: u32, height: u32, limits: &Limits) -> Result<(), MediaError> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > limits.max_pixels {
        return Err(MediaError::TooManyPixels {
            width,
            height,
            megapixels: pixels.div_ceil(1_000_000),
            limit: limits.max_pixels / 1_000_000,
        });
    }
    Ok(())
}

fn corrupt(format: Format, e: impl std::fmt::Display) -> MediaError {
    MediaError::Corrupt { format: format.name(), reason: e.to_string() }
}

fn decoder_limits(limits: &Limits) -> image::Limits {
    let mut l = image::Limits::default();
    l.max_alloc = Some(limits.max_alloc);
    l
}

/// Reads the header of a file sniffed as `format` and returns its width and
/// height, refusing an image with more pixels than allowed before any pixel
/// is decoded.
pub fn inspect(reader: impl BufRead + Seek, format: Format, limits: &Limits) -> Result<(u32, u32), MediaError> {
    let mut r = ImageReader::with_format(reader, format.image_format());
    r.limits(decoder_limits(limits));
    let (w, h) = r.into_dimensions().map_err(|e| corrupt(format, e))?;
    if w == 0 || h == 0 {
        return Err(corrupt(format, "it has no pixels"));
    }
    check_pixels(w, h, limits)?;
    Ok((w, h))
}

/// One stored file.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its type.
    pub format: Format,
    /// Its file name: hash of the bytes and extension.
    pub name: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Encoded {
    fn new(bytes: Vec<u8>, format: Format, width: u32, height: u32) -> Self {
        let hash = hex::encode(Sha256::digest(&bytes));
        let name = format!("{}.{}", &hash[..32], format.extension());
        Encoded { bytes, format, name, width, height }
    }
}

/// A resized copy in WebP and in the original's format.
#[derive(Debug, Clone)]
pub struct Variant {
    /// thumbnail, medium or large.
    pub name: &'static str,
    /// The WebP file.
    pub webp: Encoded,
    /// The file in the original's format.
    pub fallback: Encoded,
}

/// The variants made of every image: name and longest edge in pixels. An
/// image smaller than a variant keeps its size there (never enlarged).
pub const VARIANTS: [(&str, u32); 3] = [("thumbnail", 320), ("medium", 800), ("large", 1600)];

/// What processing made of an upload.
#[derive(Debug, Clone)]
pub struct Processed {
    /// The original type.
    pub format: Format,
    /// Width after orientation.
    pub width: u32,
    /// Height after orientation.
    pub height: u32,
    /// The original, re-encoded from its pixels (no metadata).
    pub original: Encoded,
    /// The variants, smallest first.
    pub variants: Vec<Variant>,
    /// Average colour as `#rrggbb`, for placeholders.
    pub color: String,
}

/// Decodes `bytes` (sniffed as `format`) under `limits`, applies the EXIF
/// orientation and encodes the stored files.
pub fn process(bytes: &[u8], format: Format, limits: &Limits) -> Result<Processed, MediaError> {
    process_observed(bytes, format, limits, &mut |_, _| {})
}

/// [`process`], telling `step` each stage as it starts (`decoding`,
/// `encoding`, `variants`) with how far the whole got, 0 to 100.
pub fn process_observed(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
    step: &mut dyn FnMut(&'static str, u8),
) -> Result<Processed, MediaError> {
    let started = Instant::now();
    let in_time = |step: &str| {
        if started.elapsed() > limits.max_time {
            Err(MediaError::Limit(format!(
                "processing took longer than {} s (stopped while {step})",
                limits.max_time.as_secs()
            )))
        } else {
            Ok(())
        }
    };
    inspect(Cursor::new(bytes), format, limits)?;
    step("decoding", 10);
    let (image, original) = if format == Format::Gif {
        let frames = gif_frames(bytes, limits)?;
        in_time("decoding")?;
        let first = DynamicImage::ImageRgba8(frames[0].buffer().clone());
        let original = encode_gif(frames, first.width(), first.height())?;
        (first, original)
    } else {
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format.image_format());
        reader.limits(decoder_limits(limits));
        let mut decoder = reader.into_decoder().map_err(|e| decode_error(format, e))?;
        // The decoders bound their own buffers loosely; the image itself is
        // checked here before a pixel is decoded.
        if decoder.total_bytes() > limits.max_alloc {
            return Err(MediaError::Limit(format!(
                "decoding this {} needs {} MiB; the limit is {} MiB",
                format.name(),
                decoder.total_bytes().div_ceil(1_048_576),
                limits.max_alloc / 1_048_576
            )));
        }
        let orientation = decoder.orientation().map_err(|e| decode_error(format, e))?;
        let mut image = DynamicImage::from_decoder(decoder).map_err(|e| decode_error(format, e))?;
        image.apply_orientation(orientation);
        in_time("decoding")?;
        step("encoding", 30);
        let original = encode(&image, format)?;
        (image, original)
    };
    in_time("encoding the original")?;
    let mut variants = Vec::with_capacity(VARIANTS.len());
    // Each variant is made from the next larger one: cheaper, and as sharp.
    let mut source = image.clone();
    for (i, (name, edge)) in VARIANTS.iter().rev().enumerate() {
        step("variants", 50 + 15 * i as u8);
        let resized = fit(&source, *edge);
        let fallback_format = if format == Format::Webp { Format::Png } else { format };
        let webp = encode(&resized, Format::Webp)?;
        let fallback = if format == Format::Webp {
            // A WebP original has no other format of its own: its variants
            // also come as PNG for clients without WebP.
            encode(&resized, fallback_format)?
        } else {
            encode(&resized, format)?
        };
        variants.push(Variant { name, webp, fallback });
        source = resized;
        in_time("making variants")?;
    }
    variants.reverse();
    let color = average_color(&source);
    Ok(Processed { format, width: image.width(), height: image.height(), original, variants, color })
}

fn decode_error(format: Format, e: image::ImageError) -> MediaError {
    match e {
        image::ImageError::Limits(l) => {
            MediaError::Limit(format!("decoding this {} would exceed the memory limit ({l})", format.name()))
        }
        e => corrupt(format, e),
    }
}

/// The frames of a GIF, within the memory limit for all of them together.
fn gif_frames(bytes: &[u8], limits: &Limits) -> Result<Vec<Frame>, MediaError> {
    let mut decoder = GifDecoder::new(Cursor::new(bytes)).map_err(|e| decode_error(Format::Gif, e))?;
    decoder.set_limits(decoder_limits(limits)).map_err(|e| decode_error(Format::Gif, e))?;
    let mut frames = Vec::new();
    let mut used: u64 = 0;
    for frame in decoder.into_frames() {
        let frame = frame.map_err(|e| decode_error(Format::Gif, e))?;
        used += frame.buffer().as_raw().len() as u64;
        if used > limits.max_alloc {
            return Err(MediaError::Limit(format!(
                "the GIF's frames need more than {} MiB decoded",
                limits.max_alloc / 1_048_576
            )));
        }
        frames.push(frame);
    }
    if frames.is_empty() {
        return Err(corrupt(Format::Gif, "it has no frames"));
    }
    Ok(frames)
}

fn encode_gif(frames: Vec<Frame>, width: u32, height: u32) -> Result<Encoded, MediaError> {
    let mut out = Vec::new();
    {
        let mut encoder = GifEncoder::new_with_speed(&mut out, 10);
        let repeat = if frames.len() > 1 { Repeat::Infinite } else { Repeat::Finite(0) };
        encoder.set_repeat(repeat).map_err(|_| MediaError::Encode("GIF original".into()))?;
        encoder.encode_frames(frames).map_err(|e| MediaError::Encode(format!("GIF original: {e}")))?;
    }
    Ok(Encoded::new(out, Format::Gif, width, height))
}

/// `image` scaled down so its longest edge is at most `edge` (never up).
fn fit(image: &DynamicImage, edge: u32) -> DynamicImage {
    if image.width().max(image.height()) <= edge {
        return image.clone();
    }
    image.resize(edge, edge, FilterType::Triangle)
}

/// Encodes pixels alone: nothing of the source file but the picture.
fn encode(image: &DynamicImage, format: Format) -> Result<Encoded, MediaError> {
    let (w, h) = (image.width(), image.height());
    let mut out = Vec::new();
    let fail = |e: image::ImageError| MediaError::Encode(format!("{} file: {e}", format.name()));
    let has_alpha = image.color().has_alpha();
    match format {
        Format::Jpeg => {
            let rgb = image.to_rgb8();
            JpegEncoder::new_with_quality(&mut out, 85)
                .write_image(rgb.as_raw(), w, h, image::ExtendedColorType::Rgb8)
                .map_err(fail)?;
        }
        Format::Png => {
            if has_alpha {
                let px = image.to_rgba8();
                PngEncoder::new(&mut out).write_image(px.as_raw(), w, h, image::ExtendedColorType::Rgba8)
            } else {
                let px = image.to_rgb8();
                PngEncoder::new(&mut out).write_image(px.as_raw(), w, h, image::ExtendedColorType::Rgb8)
            }
            .map_err(fail)?;
        }
        Format::Webp => {
            // `image` encodes WebP losslessly only.
            if has_alpha {
                let px = image.to_rgba8();
                WebPEncoder::new_lossless(&mut out).encode(px.as_raw(), w, h, image::ExtendedColorType::Rgba8)
            } else {
                let px = image.to_rgb8();
                WebPEncoder::new_lossless(&mut out).encode(px.as_raw(), w, h, image::ExtendedColorType::Rgb8)
            }
            .map_err(fail)?;
        }
        Format::Gif => {
            let frame = Frame::new(image.to_rgba8());
            return encode_gif(vec![frame], w, h);
        }
    }
    Ok(Encoded::new(out, format, w, h))
}

/// The mean colour of the opaque pixels, as `#rrggbb`.
fn average_color(image: &DynamicImage) -> String {
    let px = image.to_rgba8();
    let (mut r, mut g, mut b, mut n) = (0u64, 0u64, 0u64, 0u64);
    for p in px.pixels() {
        let a = u64::from(p[3]);
        r += u64::from(p[0]) * a;
        g += u64::from(p[1]) * a;
        b += u64::from(p[2]) * a;
        n += a;
    }
    if n == 0 {
        return "#000000".into();
    }
    format!("#{:02x}{:02x}{:02x}", r / n, g / n, b / n)
}

#[cfg(feature = "samples")]
pub mod samples;
