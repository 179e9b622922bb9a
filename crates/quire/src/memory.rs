//! Gives back to the operating system what the process holds but no longer
//! uses, once the store has gone quiet ([`quire_store::Store::quiet_periods`]).
//!
//! Two kinds of memory stay with an idle server otherwise:
//! - the allocator's free pages, kept for reuse ([`collect_heap`]);
//! - the pages of the executable that start touched: most of its code and
//!   read-only data runs once (migrations, the registry's schemas, the
//!   router), yet stays mapped, 64 KB around every page touched
//!   ([`unmap_clean_image_pages`]). Unmapped, they stay in the operating
//!   system's file cache; what runs again maps them back from there.

/// Gives back what it can; cheap enough to run at every quiet period.
pub fn release() {
    collect_heap();
    unmap_clean_image_pages();
}

/// Makes mimalloc return the free pages of its arenas now rather than
/// after its own delay.
fn collect_heap() {
    // SAFETY: mi_collect walks and trims the allocator's own free lists,
    // under its own synchronisation; it frees nothing in use.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// A mapping of the executable the process never wrote to: read-only,
/// private, and with no page of its own (`Anonymous: 0 kB`).
#[derive(Debug, PartialEq)]
struct Clean {
    start: usize,
    end: usize,
}

/// The clean mappings of `exe` in a `/proc/PID/smaps` text.
fn clean_mappings(smaps: &str, exe: &str) -> Vec<Clean> {
    let mut found = Vec::new();
    let mut candidate: Option<Clean> = None;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if !first.ends_with(':') {
            // A mapping's header: "start-end perms offset dev inode path".
            let perms = words.next().unwrap_or("");
            let path = words.nth(3).unwrap_or("");
            let range = first
                .split_once('-')
                .and_then(|(a, b)| Some((usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?)));
            let read_only_private = perms.len() == 4 && !perms.contains('w') && perms.ends_with('p');
            candidate = match range {
                Some((start, end)) if read_only_private && path == exe && end > start => Some(Clean { start, end }),
                _ => None,
            };
        } else if first == "Anonymous:" {
            let own = words.next().and_then(|kb| kb.parse::<u64>().ok());
            if let (Some(clean), Some(0)) = (candidate.take(), own) {
                found.push(clean);
            }
        }
    }
    found
}

/// Unmaps the pages of the executable's clean mappings (its code and
/// read-only data; never the relocated data, which has pages of its own).
/// They are read again from the file cache when next run. Linux only.
fn unmap_clean_image_pages() {
    #[cfg(target_os = "linux")]
    {
        let (Ok(exe), Ok(smaps)) = (std::fs::read_link("/proc/self/exe"), std::fs::read_to_string("/proc/self/smaps"))
        else {
            return;
        };
        for Clean { start, end } in clean_mappings(&smaps, &exe.to_string_lossy()) {
            // SAFETY: the range is a private mapping of the executable that
            // cannot be written (no `w`) and holds no page of its own, so
            // every page dropped is the file's, and comes back from it on
            // the next access; nothing the process made is lost.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0000000-55d0c1000000 r--p 00000000 fe:00 42 /opt/quire
Size:              16384 kB
Rss:                1200 kB
Anonymous:             0 kB
55d0c1000000-55d0c4000000 r-xp 01000000 fe:00 42 /opt/quire
Size:              49152 kB
Anonymous:             0 kB
55d0c4000000-55d0c4200000 r--p 04000000 fe:00 42 /opt/quire
Size:               2048 kB
Anonymous:          1792 kB
55d0c4200000-55d0c4210000 rw-p 04200000 fe:00 42 /opt/quire
Anonymous:            64 kB
7f0000000000-7f0000100000 r-xp 00026000 fe:00 7 /usr/lib/libc.so.6
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
";

    #[test]
    fn only_the_executables_unwritten_read_only_mappings_are_clean() {
        let clean = clean_mappings(SMAPS, "/opt/quire");
        assert_eq!(
            clean,
            vec![
                Clean { start: 0x55d0c0000000, end: 0x55d0c1000000 },
                Clean { start: 0x55d0c1000000, end: 0x55d0c4000000 },
            ],
            "the relocated read-only data (pages of its own), the writable data, libc and the heap are left"
        );
        assert!(clean_mappings(SMAPS, "/opt/other").is_empty());
    }

    fn rss_file_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("RssFile:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn release_unmaps_the_executables_pages_and_the_process_goes_on() {
        let before = rss_file_kb();
        release();
        let after = rss_file_kb();
        assert!(after < before, "file-backed pages mapped: {before} kB before, {after} kB after");
        // What was unmapped runs again: code, constants, tables.
        let text: String = (0..1000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let parsed: serde_json::Value = serde_json::from_str(&format!("{{\"t\": \"{text}\"}}")).unwrap();
        assert_eq!(parsed["t"].as_str().map(str::len), Some(1000));
        let v: Vec<u64> = (0..10_000).collect();
        assert_eq!(v.iter().sum::<u64>(), 49_995_000);
    }
}
