//! The spellings of 127.0.0.1 that both the address parser's unit tests and
//! the client's SSRF suite hold to: the parser reads each as loopback, and
//! the client refuses each without connecting.

/// Decimal, octal, hexadecimal, short forms and a trailing dot.
pub const SPELLINGS: [&str; 10] = [
    "127.0.0.1",
    "2130706433",
    "0x7f000001",
    "0x7f.1",
    "0177.0.0.1",
    "0177.1",
    "127.1",
    "127.0.1",
    "017700000001",
    "127.0.0.1.",
];
