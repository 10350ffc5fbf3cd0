//! DRAM model: a flat physical address space backed by `memmap2`.
//!
//! Anonymous by default, or a file; either way sparse, so a large physical size costs only
//! the pages that are touched.

use memmap2::{MmapMut, MmapOptions};
use std::fs::OpenOptions;
use std::path::Path;

/// Physical memory of the node.
#[derive(Debug)]
pub struct Dram {
    map: MmapMut,
    persistent: bool,
    /// Bytes read (bursts count their full length).
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

impl Dram {
    /// Anonymous zeroed memory of `bytes`.
    pub fn anonymous(bytes: u64) -> std::io::Result<Dram> {
        let map = MmapOptions::new().len(bytes as usize).map_anon()?;
        Ok(Dram {
            map,
            persistent: false,
            read_bytes: 0,
            write_bytes: 0,
        })
    }

    /// Anonymous zeroed memory of `bytes` that another mapping can share: a memfd, returned
    /// with the memory so a slow-path thread can map it too (`MappedMemory::from_file`).
    pub fn shared(bytes: u64) -> std::io::Result<(Dram, std::fs::File)> {
        use std::os::fd::FromRawFd;
        // SAFETY: the name is a NUL-terminated C string literal; the call only creates a
        // descriptor.
        let fd = unsafe { libc::memfd_create(c"clio-dram".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        f.set_len(bytes)?;
        let len = usize::try_from(bytes)
            .map_err(|_| std::io::Error::other("DRAM size does not fit the address space"))?;
        // SAFETY: the memfd is private to this process; the only other mapping is the slow
        // path's, which writes only frames no request can reach (freed, not yet handed out).
        let map = unsafe { MmapOptions::new().len(len).map_mut(&f)? };
        Ok((
            Dram {
                map,
                persistent: false,
                read_bytes: 0,
                write_bytes: 0,
            },
            f,
        ))
    }

    /// Memory backed by a file (created sparse if shorter than `bytes`; contents kept).
    /// `persistent`: the file is the node's persistence domain (`--memory-file`), so durable
    /// writes and Persist flush it; a scratch file (the external slow path's shared DRAM) is
    /// not.
    pub fn file(path: &Path, bytes: u64, persistent: bool) -> std::io::Result<Dram> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        if !persistent {
            // Scratch DRAM (shared with an external slow path): starts zeroed every time.
            f.set_len(0)?;
        }
        if f.metadata()?.len() < bytes {
            f.set_len(bytes)?;
        }
        // SAFETY: the file is ours for the node's lifetime; concurrent external modification is
        // outside the model's contract (documented on `--memory-file`).
        let map = unsafe { MmapOptions::new().len(bytes as usize).map_mut(&f)? };
        Ok(Dram {
            map,
            persistent,
            read_bytes: 0,
            write_bytes: 0,
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Whether the memory is empty (never, for a valid layout).
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn range(&self, pa: u64, n: usize) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(pa).ok()?;
        let end = start.checked_add(n)?;
        (end <= self.map.len()).then_some(start..end)
    }

    /// Read `buf.len()` bytes at `pa`; false (nothing read) if out of range.
    pub fn read(&mut self, pa: u64, buf: &mut [u8]) -> bool {
        match self.range(pa, buf.len()) {
            Some(r) => {
                buf.copy_from_slice(&self.map[r]);
                self.read_bytes += buf.len() as u64;
                true
            }
            None => false,
        }
    }

    /// Write `data` at `pa`; false (nothing written) if out of range.
    pub fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        match self.range(pa, data.len()) {
            Some(r) => {
                self.map[r].copy_from_slice(data);
                self.write_bytes += data.len() as u64;
                true
            }
            None => false,
        }
    }

    /// Whether this memory has a persistence domain (a backing file that outlives the node).
    pub fn is_persistent(&self) -> bool {
        self.persistent
    }

    /// Flush `[pa, pa + len)` to the backing file (`msync`): once this returns the bytes
    /// survive a crash of the node and of the operating system. False if out of range or not
    /// persistent, or if the flush failed.
    pub fn persist(&self, pa: u64, len: u64) -> bool {
        let Some(r) = usize::try_from(len).ok().and_then(|n| self.range(pa, n)) else {
            return false;
        };
        self.persistent && self.map.flush_range(r.start, r.len()).is_ok()
    }

    /// A view of memory without counting it as traffic (images for tests and conformance).
    pub fn peek(&self, pa: u64, n: usize) -> Option<&[u8]> {
        self.range(pa, n).map(|r| &self.map[r])
    }
}

/// The bytes themselves, outside the traffic counters: the slow path clears frames and
/// applies transaction records through this (on the board the ARM does it over its own port),
/// and the cosimulation's bus model reads and writes through it.
impl AsRef<[u8]> for Dram {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl AsMut<[u8]> for Dram {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}
