//! The pipeline on generated files: types from bytes, refusals that say
//! what was found, bounded decoding, orientation, stripped metadata,
//! variants.

use quire_media::samples::{self, SECRET};
use quire_media::{Format, Limits, MediaError, inspect, process, sniff};
use std::io::Cursor;
use std::time::{Duration, Instant};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn types_come_from_the_bytes() {
    assert_eq!(sniff(&samples::png(4, 4)).unwrap(), Format::Png);
    assert_eq!(sniff(&samples::jpeg(8, 8)).unwrap(), Format::Jpeg);
    assert_eq!(sniff(&samples::webp(4, 4)).unwrap(), Format::Webp);
    assert_eq!(sniff(&samples::gif(4, 4, 1)).unwrap(), Format::Gif);
    let refused = |bytes: &[u8]| sniff(bytes).unwrap_err().to_string();
    let svg = refused(&samples::svg_with_script());
    assert!(svg.starts_with("the file is an SVG image"), "{svg}");
    assert!(svg.ends_with("only PNG, JPEG, WebP and GIF images are accepted"), "{svg}");
    assert!(refused(b"<!DOCTYPE html><html>").contains("an HTML document"));
    assert!(refused(b"%PDF-1.7\n").contains("a PDF document"));
    assert!(refused(b"\0\0\0\x1cftypavif\0\0\0\0").contains("AVIF"));
    assert!(refused(b"hello world\n").contains("plain text"));
    assert!(refused(b"").contains("empty"));
    let unknown = refused(&[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5]);
    assert!(unknown.contains("starts with bytes de ad be ef 01 02 03 04"), "{unknown}");
}

#[test]
fn a_decompression_bomb_is_refused_from_its_header_at_once() {
    let bomb = samples::png_bomb(60_000);
    assert!(bomb.len() < 100, "the bomb is {} bytes", bomb.len());
    let started = Instant::now();
    let err = inspect(Cursor::new(&bomb), Format::Png, &Limits::default()).unwrap_err();
    assert_eq!(err.to_string(), "the image is 60000×60000 pixels (3600 megapixels); the limit is 16 megapixels");
    let err = process(&bomb, Format::Png, &Limits::default()).unwrap_err();
    assert!(matches!(err, MediaError::TooManyPixels { width: 60_000, height: 60_000, .. }));
    assert!(started.elapsed() < Duration::from_millis(500), "took {:?}", started.elapsed());
}

/// Two files like these, 380 KB each, took a server to 1.17 GB: complete,
/// valid PNGs (every row there to decode), tiny because they are flat.
#[test]
fn a_small_file_of_huge_dimensions_is_refused_by_the_default_budget_from_its_header() {
    let flat = samples::png_flat(7000, 7000, false);
    assert!(flat.len() < 1_000_000, "the file is {} bytes", flat.len());
    let started = Instant::now();
    let err = inspect(Cursor::new(&flat), Format::Png, &Limits::default()).unwrap_err();
    assert_eq!(err.to_string(), "the image is 7000×7000 pixels (49 megapixels); the limit is 16 megapixels");
    let err = process(&flat, Format::Png, &Limits::default()).unwrap_err();
    assert!(matches!(err, MediaError::TooManyPixels { width: 7000, height: 7000, .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_millis(500), "took {:?}", started.elapsed());
    // The same file is a real image: within a budget that allows it, it
    // decodes (so the refusal above is the budget's, not a broken file's).
    let small = samples::png_flat(700, 700, true);
    let p = process(&small, Format::Png, &Limits::default()).unwrap();
    assert_eq!((p.width, p.height, p.color.as_str()), (700, 700, "#000000"));
}

#[test]
fn the_budget_is_pixels_and_the_bytes_they_take_decoded() {
    let limits = Limits::megapixels(16);
    assert_eq!((limits.max_pixels, limits.max_alloc), (16_000_000, 64_000_000));
    assert_eq!(Limits::default().max_pixels, Limits::megapixels(quire_media::DEFAULT_MAX_MEGAPIXELS).max_pixels);
    // Exactly at the budget passes; one row more does not.
    let at = samples::png_flat(4000, 4000, true);
    assert_eq!(inspect(Cursor::new(&at), Format::Png, &limits).unwrap(), (4000, 4000));
    let over = samples::png_flat(4000, 4001, true);
    let err = inspect(Cursor::new(&over), Format::Png, &limits).unwrap_err().to_string();
    assert_eq!(err, "the image is 4000×4001 pixels (16.01 megapixels); the limit is 16 megapixels");
    // Under a budget of fewer bytes than the pixels take decoded (as a
    // 16-bit image would), the header alone is refused too.
    let few_bytes = Limits { max_alloc: 1_000_000, ..limits };
    let err = inspect(Cursor::new(&samples::png(1000, 1000)), Format::Png, &few_bytes).unwrap_err().to_string();
    assert_eq!(err, "the image is 1000×1000 pixels and needs 3 MB decoded; the limit is 1 MB");
    // Budgets under a megapixel read as such.
    let tiny = Limits { max_pixels: 10_000, ..limits };
    let err = inspect(Cursor::new(&samples::png(300, 300)), Format::Png, &tiny).unwrap_err().to_string();
    assert_eq!(err, "the image is 300×300 pixels (0.09 megapixels); the limit is 0.01 megapixels");
}

#[test]
fn the_polyglot_is_not_a_readable_gif() {
    let poly = samples::gif_html_polyglot();
    assert_eq!(sniff(&poly).unwrap(), Format::Gif);
    let err = process(&poly, Format::Gif, &Limits::default()).unwrap_err().to_string();
    assert!(err.starts_with("the file starts as GIF but is not a readable GIF image"), "{err}");
}

#[test]
fn memory_and_time_limits_hold() {
    let tight = Limits { max_alloc: 1024, ..Limits::default() };
    let err = process(&samples::png(200, 200), Format::Png, &tight).unwrap_err();
    assert!(matches!(err, MediaError::Limit(_)), "{err:?}");
    let few = Limits { max_pixels: 10_000, ..Limits::default() };
    assert!(matches!(process(&samples::png(200, 200), Format::Png, &few), Err(MediaError::TooManyPixels { .. })));
    let no_time = Limits { max_time: Duration::ZERO, ..Limits::default() };
    let err = process(&samples::png(64, 64), Format::Png, &no_time).unwrap_err().to_string();
    assert!(err.starts_with("processing took longer than 0 s"), "{err}");
}

#[test]
fn jpeg_orientation_is_applied_and_every_stored_file_is_bare() {
    // Stored as 64 wide × 32 high; orientation 6 shows it rotated clockwise.
    let raw = samples::jpeg_with_exif(64, 32, 6);
    assert!(contains(&raw, SECRET.as_bytes()) && contains(&raw, b"Exif\0\0"));
    let p = process(&raw, Format::Jpeg, &Limits::default()).unwrap();
    assert_eq!((p.width, p.height), (32, 64));
    assert_eq!((p.original.width, p.original.height), (32, 64));
    // Rotated clockwise, the left (red) half of the stored pixels is on top.
    let shown = image::load_from_memory(&p.original.bytes).unwrap().to_rgb8();
    let top = shown.get_pixel(12, 12);
    let bottom = shown.get_pixel(12, 52);
    assert!(top[0] > 150 && top[2] < 100, "top {top:?}");
    assert!(bottom[2] > 150 && bottom[0] < 100, "bottom {bottom:?}");
    let mut files = vec![&p.original];
    for v in &p.variants {
        files.push(&v.webp);
        files.push(&v.fallback);
    }
    for f in files {
        assert!(!contains(&f.bytes, SECRET.as_bytes()), "{} keeps the secret", f.name);
        assert!(!contains(&f.bytes, b"Exif"), "{} keeps EXIF", f.name);
        assert!(!contains(&f.bytes, b"http://ns.adobe.com/xap"), "{} keeps XMP", f.name);
        assert_eq!(sniff(&f.bytes).unwrap(), f.format);
    }
}

#[test]
fn variants_in_webp_and_the_original_format_named_by_hash() {
    let p = process(&samples::jpeg(2000, 1000), Format::Jpeg, &Limits::default()).unwrap();
    assert_eq!((p.width, p.height), (2000, 1000));
    let sizes: Vec<_> = p.variants.iter().map(|v| (v.name, v.webp.width, v.webp.height, v.fallback.format)).collect();
    assert_eq!(
        sizes,
        [("thumbnail", 320, 160, Format::Jpeg), ("medium", 800, 400, Format::Jpeg), ("large", 1600, 800, Format::Jpeg)]
    );
    for v in &p.variants {
        assert_eq!(sniff(&v.webp.bytes).unwrap(), Format::Webp);
        let decoded = image::load_from_memory(&v.webp.bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (v.webp.width, v.webp.height));
        use sha2::Digest;
        let hash = hex::encode(sha2::Sha256::digest(&v.webp.bytes));
        assert_eq!(v.webp.name, format!("{}.webp", &hash[..32]));
        assert!(v.fallback.name.ends_with(".jpg"));
    }
    // Red and blue halves under a green bar: a purple-ish mean.
    let c = u32::from_str_radix(&p.color[1..], 16).unwrap();
    let (r, g, b) = (c >> 16, (c >> 8) & 0xff, c & 0xff);
    assert!(r > 80 && b > 80 && g < 80, "{}", p.color);
}

/// A source at least twice a variant's size is averaged down by whole
/// blocks before the filter: the sizes are those of the source's own
/// proportions, and the picture is still where it was.
#[test]
fn variants_of_a_large_image_keep_its_proportions_and_its_picture() {
    let p = process(&samples::png(6001, 1501), Format::Png, &Limits::default()).unwrap();
    let sizes: Vec<_> = p.variants.iter().map(|v| (v.name, v.webp.width, v.webp.height)).collect();
    assert_eq!(sizes, [("thumbnail", 320, 80), ("medium", 800, 200), ("large", 1600, 400)]);
    for v in &p.variants {
        let px = image::load_from_memory(&v.fallback.bytes).unwrap().to_rgb8();
        let (w, h) = px.dimensions();
        // Green bar along the top eighth, red left half, blue right half.
        assert_eq!(px.get_pixel(w / 2, h / 32).0, [0, 200, 0], "{}", v.name);
        assert_eq!(px.get_pixel(w / 4, h / 2).0, [220, 20, 20], "{}", v.name);
        assert_eq!(px.get_pixel(3 * w / 4, h / 2).0, [20, 20, 220], "{}", v.name);
    }
}

#[test]
fn small_images_are_never_enlarged() {
    let p = process(&samples::png(100, 50), Format::Png, &Limits::default()).unwrap();
    for v in &p.variants {
        assert_eq!((v.webp.width, v.webp.height), (100, 50), "{}", v.name);
    }
}

#[test]
fn png_webp_and_animated_gif() {
    let p = process(&samples::png_rgba(40, 20), Format::Png, &Limits::default()).unwrap();
    let decoded = image::load_from_memory(&p.original.bytes).unwrap();
    assert!(decoded.color().has_alpha());
    assert_eq!(p.color, "#0ac80a", "transparent pixels do not count");

    let p = process(&samples::webp(30, 20), Format::Webp, &Limits::default()).unwrap();
    assert_eq!(p.original.format, Format::Webp);
    assert_eq!(p.variants[0].fallback.format, Format::Png);

    let p = process(&samples::gif(16, 16, 3), Format::Gif, &Limits::default()).unwrap();
    use image::AnimationDecoder;
    let frames = image::codecs::gif::GifDecoder::new(Cursor::new(&p.original.bytes))
        .unwrap()
        .into_frames()
        .collect_frames()
        .unwrap();
    assert_eq!(frames.len(), 3, "the animation is kept");
    assert_eq!(p.variants[0].fallback.format, Format::Gif);
}

#[test]
fn processing_the_same_file_again_gives_the_same_files_and_reports_its_stages() {
    // A job run again after a crash names its files as the first attempt did,
    // so nothing is stored twice under two names.
    for (bytes, format) in [
        (samples::jpeg_with_exif(500, 300, 6), Format::Jpeg),
        (samples::png_rgba(400, 300), Format::Png),
        (samples::webp(300, 200), Format::Webp),
        (samples::gif(60, 40, 3), Format::Gif),
    ] {
        let mut stages = Vec::new();
        let first =
            quire_media::process_observed(&bytes, format, &Limits::default(), &mut |s, p| stages.push((s, p))).unwrap();
        let again = process(&bytes, format, &Limits::default()).unwrap();
        let names = |p: &quire_media::Processed| {
            let mut n = vec![p.original.name.clone()];
            n.extend(p.variants.iter().flat_map(|v| [v.webp.name.clone(), v.fallback.name.clone()]));
            n
        };
        assert_eq!(names(&first), names(&again), "{format:?}");
        assert!(stages.windows(2).all(|w| w[0].1 < w[1].1), "{format:?}: {stages:?}");
        assert_eq!(stages.iter().filter(|(s, _)| *s == "variants").count(), 3, "{format:?}: {stages:?}");
    }
}
