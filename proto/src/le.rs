//! Little-endian fields read from byte slices: the codecs' one set of readers (ring
//! descriptors, persistence records). A field past the slice's end panics, as slicing does;
//! callers size their buffers from the layouts they read.

/// The little-endian u16 at `b[at..at + 2]`.
pub(crate) fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian u32 at `b[at..at + 4]`.
pub(crate) fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// The little-endian u64 at `b[at..at + 8]`.
pub(crate) fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}
