//! Test images made in code (feature `samples`): the tests and benchmarks of
//! every crate use them, so no binary fixture hides what it contains.

use image::{DynamicImage, ImageEncoder, Rgb, RgbImage, Rgba, RgbaImage};
use std::io::Cursor;

/// Text planted in the EXIF GPS block, the XMP packet and the comment of
/// [`jpeg_with_exif`]; a stored file must not contain it.
pub const SECRET: &str = "QUIRE-SECRET-51.5007N";

/// An RGB picture: left half red, right half blue, a green bar along the
/// top, so orientation and scaling can be checked by colour.
pub fn picture(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        if y < height / 8 {
            Rgb([0, 200, 0])
        } else if x < width / 2 {
            Rgb([220, 20, 20])
        } else {
            Rgb([20, 20, 220])
        }
    })
}

/// A PNG of [`picture`].
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(picture(width, height))
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// A PNG with transparency.
pub fn png_rgba(width: u32, height: u32) -> Vec<u8> {
    let img =
        RgbaImage::from_fn(
            width,
            height,
            |x, _| if x < width / 2 { Rgba([0, 0, 0, 0]) } else { Rgba([10, 200, 10, 255]) },
        );
    let mut out = Vec::new();
    DynamicImage::ImageRgba8(img).write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A JPEG of [`picture`], without metadata.
pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .write_image(picture(width, height).as_raw(), width, height, image::ExtendedColorType::Rgb8)
        .unwrap();
    out
}

/// A lossless WebP of [`picture`].
pub fn webp(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut out)
        .encode(picture(width, height).as_raw(), width, height, image::ExtendedColorType::Rgb8)
        .unwrap();
    out
}

/// A GIF of `frames` frames of [`picture`] (an animation when more than one).
pub fn gif(width: u32, height: u32, frames: usize) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = image::codecs::gif::GifEncoder::new(&mut out);
        enc.set_repeat(image::codecs::gif::Repeat::Infinite).unwrap();
        let base = DynamicImage::ImageRgb8(picture(width, height)).to_rgba8();
        for i in 0..frames {
            let mut f = base.clone();
            f.put_pixel(0, 0, Rgba([i as u8, 0, 0, 255]));
            enc.encode_frame(image::Frame::new(f)).unwrap();
        }
    }
    out
}

/// A GIF header and screen descriptor followed by an HTML document with a
/// script: what a browser that sniffs would run.
pub fn gif_html_polyglot() -> Vec<u8> {
    let mut out = b"GIF89a\x01\x00\x01\x00\x00\x00\x00".to_vec();
    out.extend_from_slice(b"<html><body><script>alert(document.cookie)</script></body></html>");
    out
}

/// An SVG with a script.
pub fn svg_with_script() -> Vec<u8> {
    b"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><script>alert(1)</script></svg>"
        .to_vec()
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
}

/// A PNG whose header declares `side`×`side` pixels (60000 makes a 3.6
/// gigapixel, ~10 GB decompression bomb) with a few bytes of zlib data.
pub fn png_bomb(side: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    // A zlib stream of a few kilobytes of zeros, stored compressed: the start
    // of an endless field of black.
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x63, 0x60, 0x18, 0x05, 0xa3, 0x60, 0x14, 0x0c, 0x77, 0x00, 0x00]);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A complete, valid PNG of `width`×`height` black pixels (8-bit RGB, or
/// RGBA when `alpha`) whose zlib stream is written by hand: one literal
/// zero, then back-references of 258 bytes at distance 1, 13 bits each. A
/// 7000×7000 RGB image is ~0.9 MB on disk and 147 MB decoded: a file small
/// enough for any upload limit whose decoding costs what its header says.
pub fn png_flat(width: u32, height: u32, alpha: bool) -> Vec<u8> {
    let channels: u64 = if alpha { 4 } else { 3 };
    // Each scanline: filter type 0, then its pixels; all of it zeros.
    let raw = u64::from(height) * (1 + u64::from(width) * channels);
    let mut bits = BitWriter::default();
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE 01: fixed Huffman codes
    let literal_zero = |bits: &mut BitWriter| bits.code(0x30, 8);
    literal_zero(&mut bits);
    let mut left = raw - 1;
    while left >= 258 {
        bits.code(0xC5, 8); // length 258 (symbol 285)
        bits.code(0, 5); // distance 1
        left -= 258;
    }
    for _ in 0..left {
        literal_zero(&mut bits);
    }
    bits.code(0, 7); // end of block (symbol 256)
    let mut zlib = vec![0x78, 0x01];
    zlib.extend_from_slice(&bits.finish());
    // Adler-32 of zeros: a stays 1, b gains 1 a byte.
    let adler = ((raw % 65_521) << 16) | 1;
    zlib.extend_from_slice(&(adler as u32).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, if alpha { 6 } else { 2 }, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    for part in zlib.chunks(1 << 20) {
        chunk(&mut out, b"IDAT", part);
    }
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The bits of a deflate stream, least significant first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    current: u8,
    used: u8,
}

impl BitWriter {
    /// `count` bits of `value`, least significant first (header fields,
    /// extra bits).
    fn put(&mut self, value: u32, count: u8) {
        for i in 0..count {
            self.bit((value >> i) & 1 == 1);
        }
    }
    /// A Huffman code of `len` bits, most significant first.
    fn code(&mut self, code: u32, len: u8) {
        for i in (0..len).rev() {
            self.bit((code >> i) & 1 == 1);
        }
    }
    fn bit(&mut self, set: bool) {
        if set {
            self.current |= 1 << self.used;
        }
        self.used += 1;
        if self.used == 8 {
            self.bytes.push(self.current);
            (self.current, self.used) = (0, 0);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.bytes.push(self.current);
        }
        self.bytes
    }
}

/// A TIFF-structured EXIF block (little endian): IFD0 with the orientation
/// and a pointer to a GPS IFD holding a latitude and, as its map datum, the
/// [`SECRET`].
fn exif(orientation: u16) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(b"II*\0");
    t.extend_from_slice(&8u32.to_le_bytes());
    let entry = |t: &mut Vec<u8>, tag: u16, kind: u16, count: u32, value: [u8; 4]| {
        t.extend_from_slice(&tag.to_le_bytes());
        t.extend_from_slice(&kind.to_le_bytes());
        t.extend_from_slice(&count.to_le_bytes());
        t.extend_from_slice(&value);
    };
    // IFD0 at 8: 2 entries → 2 + 24 + 4 = 30 bytes; GPS IFD at 38.
    t.extend_from_slice(&2u16.to_le_bytes());
    let o = orientation.to_le_bytes();
    entry(&mut t, 0x0112, 3, 1, [o[0], o[1], 0, 0]);
    entry(&mut t, 0x8825, 4, 1, 38u32.to_le_bytes());
    t.extend_from_slice(&0u32.to_le_bytes());
    // GPS IFD at 38: 3 entries → 2 + 36 + 4 = 42 bytes; data at 80.
    let secret = SECRET.as_bytes();
    t.extend_from_slice(&3u16.to_le_bytes());
    entry(&mut t, 0x0001, 2, 2, *b"N\0\0\0");
    entry(&mut t, 0x0002, 5, 3, 80u32.to_le_bytes());
    entry(&mut t, 0x0012, 2, secret.len() as u32 + 1, (80u32 + 24).to_le_bytes());
    t.extend_from_slice(&0u32.to_le_bytes());
    for (n, d) in [(51u32, 1u32), (30, 1), (2, 1)] {
        t.extend_from_slice(&n.to_le_bytes());
        t.extend_from_slice(&d.to_le_bytes());
    }
    t.extend_from_slice(secret);
    t.push(0);
    t
}

fn segment(out: &mut Vec<u8>, marker: u8, data: &[u8]) {
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&((data.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(data);
}

/// A JPEG of [`picture`] as a camera would store it rotated: the pixels are
/// `width`×`height` and the EXIF orientation (6 = rotate 90° clockwise to
/// view) says how to show them. It also carries GPS coordinates, an XMP
/// packet and a comment, each holding [`SECRET`].
pub fn jpeg_with_exif(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    let plain = jpeg(width, height);
    let mut out = plain[..2].to_vec();
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&exif(orientation));
    segment(&mut out, 0xE1, &app1);
    let mut xmp = b"http://ns.adobe.com/xap/1.0/\0".to_vec();
    xmp.extend_from_slice(
        format!("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><exif:GPSLatitude>{SECRET}</exif:GPSLatitude></x:xmpmeta>")
            .as_bytes(),
    );
    segment(&mut out, 0xE1, &xmp);
    segment(&mut out, 0xFE, format!("comment {SECRET}").as_bytes());
    out.extend_from_slice(&plain[2..]);
    out
}

/// A large photo-like JPEG (smooth gradients and noise), for benchmarks.
pub fn photo_jpeg(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let img = RgbImage::from_fn(width, height, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let n = (seed & 0x1f) as u8;
        Rgb([
            ((x * 255 / width) as u8).saturating_add(n),
            ((y * 255 / height) as u8).saturating_add(n),
            (((x + y) * 127 / (width + height)) as u8).saturating_add(n),
        ])
    });
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .write_image(img.as_raw(), width, height, image::ExtendedColorType::Rgb8)
        .unwrap();
    out
}
