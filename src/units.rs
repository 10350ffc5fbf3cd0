//! Parsing of human sizes on the command line ("4G", "64MiB", "4096").

/// Parse a byte size: a number with an optional binary suffix K, M, G, T (the slow path's
/// flags parse sizes the same way).
pub use clio_slowpath::limits::parse_size;

/// Format bytes with a binary unit.
pub fn human(bytes: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 && (v / 1024.0).fract() == 0.0 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v} {}", U[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(human(4 << 30), "4 GiB");
        assert_eq!(human(1536), "1536 B");
    }
}
