//! Seconds per 12-megapixel JPEG through the whole pipeline (decode,
//! orientation, re-encoded original, three variants in WebP and JPEG), and
//! the peak resident memory while processing; the same for the largest PNG
//! the default pixel budget takes (16 megapixels, RGBA, flat: its file is
//! small, its decoding costs what its header says).
//!
//! Run: `cargo bench -p quire-media --bench process` (Linux: the peak is
//! read from /proc/self/status after resetting it with /proc/self/clear_refs).

use quire_media::{Limits, process, samples, sniff};
use std::time::Instant;

fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let runs: usize = std::env::var("MEDIA_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let cases = [
        ("12 MP JPEG (4000×3000)", 4000u32, 3000u32, false),
        ("2 MP JPEG (1600×1200)", 1600, 1200, false),
        ("16 MP flat RGBA PNG (4000×4000)", 4000, 4000, true),
    ];
    for (label, width, height, flat) in cases {
        let jpeg = if flat { samples::png_flat(width, height, true) } else { samples::photo_jpeg(width, height) };
        let format = sniff(&jpeg).expect("an image");
        let mut seconds = Vec::with_capacity(runs);
        let mut peaks = Vec::with_capacity(runs);
        for _ in 0..runs {
            // Reset the high-water mark to what is resident now (the input).
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            let before = status_kb("VmRSS:").unwrap_or(0);
            let start = Instant::now();
            let out = process(&jpeg, format, &Limits::default()).expect("processes");
            seconds.push(start.elapsed().as_secs_f64());
            let peak = status_kb("VmHWM:").unwrap_or(0);
            peaks.push(peak.saturating_sub(before) as f64 / 1024.0);
            assert_eq!((out.width, out.height), (width, height));
            drop(out);
        }
        seconds.sort_by(|a, b| a.total_cmp(b));
        peaks.sort_by(|a, b| a.total_cmp(b));
        println!(
            "{label}: input {:.1} MB; median {:.2} s per image (min {:.2}, max {:.2}); peak RSS above the input: median {:.0} MB (max {:.0} MB); {runs} runs",
            jpeg.len() as f64 / 1e6,
            seconds[runs / 2],
            seconds[0],
            seconds[runs - 1],
            peaks[runs / 2],
            peaks[runs - 1],
        );
    }
}
