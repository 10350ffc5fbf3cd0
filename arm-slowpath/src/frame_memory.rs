//! The slow path's view of the node's DRAM: to clear frames before they are reused, to flush
//! ranges into the persistence domain, and to read and apply transaction records.
//!
//! A frame a process freed (or that a torn-down RAS held) still holds its data. The slow path
//! clears every frame to zeros before it pushes it into the fast path's async free-page
//! buffer, so the next owner's first touch reads zeros and the fault path stays a constant,
//! small number of cycles (Clio's principle: slow work off the critical path). On the board
//! the daemon maps the PL DRAM aperture; in simulation it maps the node's DRAM file (or is
//! handed the in-process DRAM model).

use memmap2::{MmapMut, MmapOptions};
use std::fs::OpenOptions;
use std::path::Path;

/// Physical memory the slow path can clear (and, where the node has a persistence domain,
/// flush).
pub trait FrameMemory {
    /// Set `len` bytes at physical address `pa` to zero; false (nothing done) if the range
    /// is outside the memory.
    fn zero(&mut self, pa: u64, len: u64) -> bool;
    /// Make `len` bytes at `pa` durable (flush them to the persistence domain); false if the
    /// memory has none, the range is outside it, or the flush failed.
    fn persist(&mut self, pa: u64, len: u64) -> bool;
    /// Whether this memory is a persistence domain at all.
    fn is_persistent(&self) -> bool;
    /// Copy `buf.len()` bytes at `pa` into `buf`; false (nothing read) if out of range or the
    /// memory cannot be read by the slow path.
    fn read(&self, pa: u64, buf: &mut [u8]) -> bool;
    /// Write `data` at `pa` (a transaction's redo entry); false (nothing written) if out of
    /// range or the memory cannot be written by the slow path.
    fn write(&mut self, pa: u64, data: &[u8]) -> bool;
}

/// Read from a byte slice that models physical memory (the shared helper of the
/// implementations).
pub fn read_range(mem: &[u8], pa: u64, buf: &mut [u8]) -> bool {
    match range(mem.len(), pa, buf.len() as u64) {
        Some(r) => {
            buf.copy_from_slice(&mem[r]);
            true
        }
        None => false,
    }
}

/// Write into a byte slice that models physical memory.
pub fn write_range(mem: &mut [u8], pa: u64, data: &[u8]) -> bool {
    match range(mem.len(), pa, data.len() as u64) {
        Some(r) => {
            mem[r].copy_from_slice(data);
            true
        }
        None => false,
    }
}

/// Zero `mem`, writing only the 4 KiB chunks that are not zero already: a never-touched frame
/// of sparse memory is only read (no page is committed), a used one is written once.
pub fn clear_bytes(mem: &mut [u8]) {
    for chunk in mem.chunks_mut(4096) {
        if chunk.iter().any(|b| *b != 0) {
            chunk.fill(0);
        }
    }
}

fn range(len: usize, pa: u64, n: u64) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(pa).ok()?;
    let end = start.checked_add(usize::try_from(n).ok()?)?;
    (end <= len).then_some(start..end)
}

/// Clear a range of a byte slice that models physical memory (the shared helper of the
/// implementations).
pub fn clear_range(mem: &mut [u8], pa: u64, len: u64) -> bool {
    match range(mem.len(), pa, len) {
        Some(r) => {
            clear_bytes(&mut mem[r]);
            true
        }
        None => false,
    }
}

/// DRAM mapped from a file: the node's DRAM file in simulation, or a device node exposing
/// the board's DRAM aperture.
#[derive(Debug)]
pub struct MappedMemory {
    map: MmapMut,
    persistent: bool,
}

impl MappedMemory {
    /// Map `bytes` of `path` starting at byte `offset`. The file must already be that long
    /// (the node creates it). `persistent`: the file is the node's persistence domain (its
    /// `--memory-file`), so [`FrameMemory::persist`] flushes it; otherwise persist refuses.
    pub fn open(
        path: &Path,
        offset: u64,
        bytes: u64,
        persistent: bool,
    ) -> std::io::Result<MappedMemory> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        if !path.starts_with("/dev") && f.metadata()?.len() < offset + bytes {
            return Err(std::io::Error::other(format!(
                "{} holds {} bytes, the node has {} bytes of DRAM",
                path.display(),
                f.metadata()?.len(),
                bytes
            )));
        }
        MappedMemory::from_file(&f, offset, bytes, persistent)
    }

    /// Map `bytes` of an open file from byte `offset` (the node's shared DRAM when the slow
    /// path runs on a thread of the node's process: a memory file or an anonymous memfd).
    pub fn from_file(
        f: &std::fs::File,
        offset: u64,
        bytes: u64,
        persistent: bool,
    ) -> std::io::Result<MappedMemory> {
        let len = usize::try_from(bytes)
            .map_err(|_| std::io::Error::other("DRAM size does not fit the address space"))?;
        // SAFETY: the mapping is shared with the memory node by design; the slow path only
        // writes frames that no process owns (freed, not yet handed out), so no other writer
        // touches the bytes it clears while it clears them.
        let map = unsafe { MmapOptions::new().offset(offset).len(len).map_mut(f)? };
        Ok(MappedMemory {
            map,
            persistent: persistent && f.metadata()?.is_file(),
        })
    }
}

impl FrameMemory for MappedMemory {
    fn zero(&mut self, pa: u64, len: u64) -> bool {
        clear_range(&mut self.map, pa, len)
    }
    /// A file mapping flushes with `msync`; a device aperture (the board's DRAM) is not a
    /// persistence domain and refuses.
    fn persist(&mut self, pa: u64, len: u64) -> bool {
        match range(self.map.len(), pa, len) {
            Some(r) if self.persistent => self.map.flush_range(r.start, r.len()).is_ok(),
            _ => false,
        }
    }
    fn is_persistent(&self) -> bool {
        self.persistent
    }
    fn read(&self, pa: u64, buf: &mut [u8]) -> bool {
        read_range(&self.map, pa, buf)
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        write_range(&mut self.map, pa, data)
    }
}

/// Memory held in a vector (tests): volatile, no persistence domain.
impl FrameMemory for Vec<u8> {
    fn zero(&mut self, pa: u64, len: u64) -> bool {
        clear_range(self, pa, len)
    }
    fn persist(&mut self, _pa: u64, _len: u64) -> bool {
        false
    }
    fn is_persistent(&self) -> bool {
        false
    }
    fn read(&self, pa: u64, buf: &mut [u8]) -> bool {
        read_range(self, pa, buf)
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        write_range(self, pa, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clears_only_in_range() {
        let mut m = vec![7u8; 3 * 4096];
        assert!(m.zero(4096, 4096));
        assert!(m[..4096].iter().all(|b| *b == 7));
        assert!(m[4096..8192].iter().all(|b| *b == 0));
        assert!(m[8192..].iter().all(|b| *b == 7));
        assert!(!m.zero(8192, 8192), "past the end: refused");
        assert!(m[8192..].iter().all(|b| *b == 7), "and nothing changed");
    }
}
