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
use image::{AnimationDecoder, DynamicImage, ExtendedColorType, Frame, ImageDecoder, ImageEncoder, ImageReader};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
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
    #[error(
        "the image is {width}×{height} pixels ({} megapixels); the limit is {} megapixels",
        megapixels(*.pixels, true),
        megapixels(*.limit, false)
    )]
    TooManyPixels {
        /// Width the header declares.
        width: u32,
        /// Height the header declares.
        height: u32,
        /// Its pixel count.
        pixels: u64,
        /// The most pixels allowed.
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

/// The pixel budget of one image by default, in megapixels (the server's
/// `max_image_megapixels`). Processing an image costs about its decoded
/// size (4 bytes a pixel at most in 8-bit RGBA) plus up to ~80 MB for the
/// variants, a progressive JPEG's decoder more (its coefficients): at 16
/// megapixels the peak measured was 109–125 MB (a flat RGBA PNG) and 108
/// MB (a progressive 4:4:4 JPEG), well under 256 MB.
pub const DEFAULT_MAX_MEGAPIXELS: u64 = 16;

/// Decoding limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most pixels (width × height) of an image.
    pub max_pixels: u64,
    /// Most bytes the decoded image may take (for an animation: all its
    /// frames), and the decoder may allocate.
    pub max_alloc: u64,
    /// Longest processing may take; checked between steps.
    pub max_time: Duration,
}

impl Limits {
    /// The limits of a budget of `megapixels`: that many pixels, and as
    /// many bytes decoded as they take in 8-bit RGBA (4 a pixel), so a
    /// 16-bit image counts twice its pixels; 60 s.
    pub fn megapixels(megapixels: u64) -> Self {
        let max_pixels = megapixels.saturating_mul(1_000_000);
        Limits { max_pixels, max_alloc: max_pixels.saturating_mul(4), max_time: Duration::from_secs(60) }
    }
}

impl Default for Limits {
    /// [`DEFAULT_MAX_MEGAPIXELS`]: 16 megapixels, 64 MB decoded, 60 s.
    fn default() -> Self {
        Limits::megapixels(DEFAULT_MAX_MEGAPIXELS)
    }
}

/// A pixel count in megapixels for people: whole when it is, else with up
/// to two decimals, rounded `up` or down (an image's count up, a limit's
/// down, so an image over the limit never reads as equal to it).
fn megapixels(pixels: u64, up: bool) -> String {
    let hundredths = if up { pixels.div_ceil(10_000) } else { pixels / 10_000 };
    let shown = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    shown.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Bytes in megabytes for people, rounded up.
fn mb(bytes: u64) -> u64 {
    bytes.div_ceil(1_000_000)
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
        return Err(MediaError::TooManyPixels { width, height, pixels, limit: limits.max_pixels });
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
/// height, refusing an image with more pixels than allowed, or whose
/// decoded pixels would take more bytes than allowed (16 bits a channel),
/// before any pixel is decoded.
pub fn inspect(reader: impl BufRead + Seek, format: Format, limits: &Limits) -> Result<(u32, u32), MediaError> {
    let decoder = checked_decoder(reader, format, limits)?;
    Ok(decoder.dimensions())
}

/// The decoder of a file sniffed as `format`, its header read and checked
/// against the limits: pixels, then the decoded size (for a GIF, of one
/// frame). No pixel is decoded yet.
fn checked_decoder<'a>(
    reader: impl BufRead + Seek + 'a,
    format: Format,
    limits: &Limits,
) -> Result<impl ImageDecoder + 'a, MediaError> {
    let mut r = ImageReader::with_format(reader, format.image_format());
    r.limits(decoder_limits(limits));
    let decoder = r.into_decoder().map_err(|e| decode_error(format, e))?;
    let (w, h) = decoder.dimensions();
    if w == 0 || h == 0 {
        return Err(corrupt(format, "it has no pixels"));
    }
    check_pixels(w, h, limits)?;
    // The decoders bound their own buffers loosely; the image itself is
    // checked here.
    if decoder.total_bytes() > limits.max_alloc {
        return Err(MediaError::Limit(format!(
            "the image is {w}×{h} pixels and needs {} MB decoded; the limit is {} MB",
            mb(decoder.total_bytes()),
            limits.max_alloc / 1_000_000
        )));
    }
    Ok(decoder)
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
    let decoder = checked_decoder(Cursor::new(bytes), format, limits)?;
    step("decoding", 10);
    let (image, original) = if format == Format::Gif {
        drop(decoder);
        let frames = gif_frames(bytes, limits)?;
        in_time("decoding")?;
        let first = DynamicImage::ImageRgba8(frames[0].buffer().clone());
        let original = encode_gif(frames, first.width(), first.height())?;
        (first, original)
    } else {
        let mut decoder = decoder;
        let orientation = decoder.orientation().map_err(|e| decode_error(format, e))?;
        let mut image = DynamicImage::from_decoder(decoder).map_err(|e| decode_error(format, e))?;
        image.apply_orientation(orientation);
        in_time("decoding")?;
        step("encoding", 30);
        let original = encode(&image, format)?;
        (image, original)
    };
    in_time("encoding the original")?;
    let (width, height) = (image.width(), image.height());
    let mut variants = Vec::with_capacity(VARIANTS.len());
    // Each variant is made from the next larger one: cheaper, and as sharp.
    // The full-size pixels are dropped as soon as the largest variant is
    // made of them, so no step holds two full-size copies.
    let mut source = image;
    for (i, (name, edge)) in VARIANTS.iter().rev().enumerate() {
        step("variants", 50 + 15 * i as u8);
        if let Some(smaller) = shrink(&source, *edge) {
            source = smaller;
        }
        let webp = encode(&source, Format::Webp)?;
        // A WebP original has no other format of its own: its variants
        // also come as PNG for clients without WebP.
        let fallback = encode(&source, if format == Format::Webp { Format::Png } else { format })?;
        variants.push(Variant { name, webp, fallback });
        in_time("making variants")?;
    }
    variants.reverse();
    let color = average_color(&source);
    Ok(Processed { format, width, height, original, variants, color })
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
                "the GIF's frames need more than {} MB decoded (the limit for all of them together)",
                limits.max_alloc / 1_000_000
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

/// `image` scaled down so its longest edge is at most `edge`; none when it
/// already fits (never enlarged).
///
/// The filter keeps a floating-point copy of (source width × target
/// height) pixels, 16 bytes each: from a 7000×7000 source to 1600 pixels,
/// 179 MB, more than the decoded image. So a source at least twice the
/// edge is first averaged down by blocks of `k`×`k` pixels (each source
/// pixel counted once, in integers), leaving the filter a ratio under 1.5
/// and a copy under 62 MB; below twice the edge, under 82 MB.
fn shrink(image: &DynamicImage, edge: u32) -> Option<DynamicImage> {
    let (w, h) = (image.width(), image.height());
    let k = w.max(h) / edge;
    if k == 0 || w.max(h) == edge {
        return None;
    }
    // The target's size from the source's own proportions (as `resize`
    // rounds them), not from the averaged copy's.
    let ratio = f64::from(edge) / f64::from(w.max(h));
    let target = |side: u32| ((f64::from(side) * ratio).round() as u32).max(1);
    let (tw, th) = (target(w), target(h));
    let averaged;
    let source = if k >= 2 {
        averaged = image.thumbnail_exact((w / k).max(tw), (h / k).max(th));
        &averaged
    } else {
        image
    };
    Some(source.resize_exact(tw, th, FilterType::Triangle))
}

/// Encodes pixels alone: nothing of the source file but the picture.
fn encode(image: &DynamicImage, format: Format) -> Result<Encoded, MediaError> {
    let (w, h) = (image.width(), image.height());
    let mut out = Vec::new();
    let fail = |e: image::ImageError| MediaError::Encode(format!("{} file: {e}", format.name()));
    let has_alpha = image.color().has_alpha();
    match format {
        Format::Jpeg => {
            let (px, color) = pixels8(image, false);
            JpegEncoder::new_with_quality(&mut out, 85).write_image(&px, w, h, color).map_err(fail)?;
        }
        Format::Png => {
            let (px, color) = pixels8(image, has_alpha);
            PngEncoder::new(&mut out).write_image(&px, w, h, color).map_err(fail)?;
        }
        Format::Webp => {
            // `image` encodes WebP losslessly only.
            let (px, color) = pixels8(image, has_alpha);
            WebPEncoder::new_lossless(&mut out).encode(&px, w, h, color).map_err(fail)?;
        }
        Format::Gif => {
            let frame = Frame::new(image.to_rgba8());
            return encode_gif(vec![frame], w, h);
        }
    }
    Ok(Encoded::new(out, format, w, h))
}

/// The pixels as 8-bit RGBA (`alpha`) or RGB: borrowed when the image is
/// already so, a converted copy otherwise (a full-size image is not
/// copied just to be encoded).
fn pixels8(image: &DynamicImage, alpha: bool) -> (Cow<'_, [u8]>, ExtendedColorType) {
    match (image, alpha) {
        (DynamicImage::ImageRgba8(px), true) => (Cow::Borrowed(px.as_raw()), ExtendedColorType::Rgba8),
        (DynamicImage::ImageRgb8(px), false) => (Cow::Borrowed(px.as_raw()), ExtendedColorType::Rgb8),
        (_, true) => (Cow::Owned(image.to_rgba8().into_raw()), ExtendedColorType::Rgba8),
        (_, false) => (Cow::Owned(image.to_rgb8().into_raw()), ExtendedColorType::Rgb8),
    }
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
