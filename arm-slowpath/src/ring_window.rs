//! The memory window shared by the fast path and the slow path: the register block and the
//! two descriptor rings of `clio_proto::ring`, mapped with `memmap2`.
//!
//! The same type maps an anonymous region (fast path and daemon in one process), a
//! shared-memory file (the simulated board and the `clio-slowpath` daemon as two processes),
//! or the board's UIO device. Each ring has exactly one producer and one consumer; the
//! methods say which side calls them.

use clio_proto::header::WireError;
use clio_proto::ring::{reg, Descriptor, RingLayout, DESC_BYTES, RING_MAGIC, RING_VERSION};
use memmap2::{MmapOptions, MmapRaw};
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use thiserror::Error;

/// Errors of the ring window.
#[derive(Debug, Error)]
pub enum RingError {
    /// Mapping or file I/O failed.
    #[error("ring window I/O on {path}: {source}")]
    Io {
        /// File or device.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The window is not initialised by a fast path, or has another layout version.
    #[error("ring window is not initialised (magic {magic:#x}, version {version}); start the board first")]
    NotInitialised {
        /// Magic read.
        magic: u32,
        /// Version read.
        version: u32,
    },
    /// The window is smaller than its layout says.
    #[error("ring window of {have} bytes is smaller than its layout ({need} bytes)")]
    TooSmall {
        /// Bytes mapped.
        have: usize,
        /// Bytes required.
        need: usize,
    },
    /// Bad geometry.
    #[error("ring entries must be a power of two in 2..=65536 (got {0})")]
    BadEntries(u32),
    /// No free slot in the ring.
    #[error("ring is full")]
    Full,
}

/// A mapped ring window.
pub struct RingWindow {
    map: MmapRaw,
    layout: RingLayout,
}

// The window is plain shared memory; all cross-side synchronisation goes through the atomic
// head/tail registers.
impl std::fmt::Debug for RingWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingWindow")
            .field("layout", &self.layout)
            .field("len", &self.map.len())
            .finish()
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RingError + '_ {
    move |source| RingError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl RingWindow {
    /// An anonymous window (both sides in this process).
    pub fn anonymous(layout: RingLayout) -> Result<RingWindow, RingError> {
        let map = MmapOptions::new()
            .len(layout.total_bytes())
            .map_anon()
            .map_err(|source| RingError::Io {
                path: "<anonymous>".into(),
                source,
            })?;
        Ok(RingWindow {
            map: MmapRaw::from(map),
            layout,
        })
    }

    /// Create (or truncate) a shared-memory file sized for `layout` and map it. The fast-path
    /// side does this, then calls [`RingWindow::init_fast_path`].
    pub fn create_file(path: &Path, layout: RingLayout) -> Result<RingWindow, RingError> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(io_err(path))?;
        f.set_len(layout.total_bytes() as u64)
            .map_err(io_err(path))?;
        let map = MmapOptions::new()
            .len(layout.total_bytes())
            .map_raw(&f)
            .map_err(io_err(path))?;
        Ok(RingWindow { map, layout })
    }

    /// Map an existing, initialised window (a shared-memory file, or `/dev/uioN` on the board;
    /// `len` is required for devices whose size the file system does not report).
    pub fn open(path: &Path, len: Option<usize>) -> Result<RingWindow, RingError> {
        let f: File = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        let mut opts = MmapOptions::new();
        if let Some(n) = len {
            opts.len(n);
        }
        let map = opts.map_raw(&f).map_err(io_err(path))?;
        if map.len() < clio_proto::ring::REGS_BYTES {
            return Err(RingError::TooSmall {
                have: map.len(),
                need: clio_proto::ring::REGS_BYTES,
            });
        }
        let mut w = RingWindow {
            map,
            layout: RingLayout::default(),
        };
        let (magic, version) = (
            w.reg(reg::MAGIC).load(Ordering::Acquire),
            w.reg(reg::VERSION).load(Ordering::Acquire),
        );
        if magic != RING_MAGIC || version != RING_VERSION {
            return Err(RingError::NotInitialised { magic, version });
        }
        let entries = w.reg(reg::ENTRIES).load(Ordering::Acquire);
        w.layout = RingLayout::new(entries).ok_or(RingError::BadEntries(entries))?;
        if w.map.len() < w.layout.total_bytes() {
            return Err(RingError::TooSmall {
                have: w.map.len(),
                need: w.layout.total_bytes(),
            });
        }
        Ok(w)
    }

    /// Fast-path side, at reset: zero the rings and publish the layout and memory geometry.
    /// The magic is written last, so a daemon never sees a half-initialised window.
    pub fn init_fast_path(&self, dram_bytes: u64, page_shift: u32) {
        self.reg(reg::MAGIC).store(0, Ordering::Release);
        for r in [
            reg::RX_HEAD,
            reg::RX_TAIL,
            reg::TX_HEAD,
            reg::TX_TAIL,
            reg::DAEMON_STATE,
            reg::DAEMON_HEARTBEAT,
        ] {
            self.reg(r).store(0, Ordering::Relaxed);
        }
        self.reg(reg::VERSION)
            .store(RING_VERSION, Ordering::Relaxed);
        self.reg(reg::ENTRIES)
            .store(self.layout.entries, Ordering::Relaxed);
        self.reg(reg::DESC_BYTES)
            .store(DESC_BYTES as u32, Ordering::Relaxed);
        self.reg(reg::DRAM_BYTES)
            .store(dram_bytes as u32, Ordering::Relaxed);
        self.reg(reg::DRAM_BYTES + 4)
            .store((dram_bytes >> 32) as u32, Ordering::Relaxed);
        self.reg(reg::PAGE_SHIFT)
            .store(page_shift, Ordering::Relaxed);
        self.reg(reg::FIFO_DEPTH).store(
            clio_proto::consts::FREE_PAGE_FIFO_DEPTH as u32,
            Ordering::Relaxed,
        );
        self.reg(reg::MAGIC).store(RING_MAGIC, Ordering::Release);
    }

    /// The atomic register at byte offset `off` of the register block.
    pub fn reg(&self, off: usize) -> &AtomicU32 {
        assert!(
            off.is_multiple_of(4) && off + 4 <= clio_proto::ring::REGS_BYTES,
            "register offset out of the block"
        );
        // SAFETY: the offset is 4-aligned inside the mapping (page-aligned base), the mapping
        // lives as long as `self`, and all shared accesses to it are atomic.
        unsafe { AtomicU32::from_ptr(self.map.as_mut_ptr().add(off) as *mut u32) }
    }

    /// DRAM bytes published by the fast path.
    pub fn dram_bytes(&self) -> u64 {
        self.reg(reg::DRAM_BYTES).load(Ordering::Acquire) as u64
            | (self.reg(reg::DRAM_BYTES + 4).load(Ordering::Acquire) as u64) << 32
    }

    /// Page shift published by the fast path.
    pub fn page_shift(&self) -> u32 {
        self.reg(reg::PAGE_SHIFT).load(Ordering::Acquire)
    }

    /// The geometry.
    pub fn layout(&self) -> RingLayout {
        self.layout
    }

    fn push(
        &self,
        base: usize,
        head_reg: usize,
        tail_reg: usize,
        d: &Descriptor,
    ) -> Result<(), RingError> {
        let head = self.reg(head_reg).load(Ordering::Relaxed);
        let tail = self.reg(tail_reg).load(Ordering::Acquire);
        if head.wrapping_sub(tail) >= self.layout.entries {
            return Err(RingError::Full);
        }
        let bytes = d.encode();
        let off = self.layout.slot_offset(base, head);
        // SAFETY: the slot lies inside the mapping (layout checked at map time) and is owned by
        // the producer until the head store below publishes it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.as_mut_ptr().add(off),
                DESC_BYTES,
            )
        };
        self.reg(head_reg)
            .store(head.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    fn pop(
        &self,
        base: usize,
        head_reg: usize,
        tail_reg: usize,
    ) -> Option<Result<Descriptor, WireError>> {
        self.pop_bytes(base, head_reg, tail_reg)
            .map(|b| Descriptor::decode(&b))
    }

    fn pop_bytes(&self, base: usize, head_reg: usize, tail_reg: usize) -> Option<[u8; DESC_BYTES]> {
        let tail = self.reg(tail_reg).load(Ordering::Relaxed);
        let head = self.reg(head_reg).load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let mut bytes = [0u8; DESC_BYTES];
        let off = self.layout.slot_offset(base, tail);
        // SAFETY: the slot is inside the mapping and was published by the producer's release
        // store of the head; the producer does not touch it until our tail store.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.map.as_ptr().add(off),
                bytes.as_mut_ptr(),
                DESC_BYTES,
            )
        };
        self.reg(tail_reg)
            .store(tail.wrapping_add(1), Ordering::Release);
        Some(bytes)
    }

    fn used(&self, head_reg: usize, tail_reg: usize) -> u32 {
        self.reg(head_reg)
            .load(Ordering::Acquire)
            .wrapping_sub(self.reg(tail_reg).load(Ordering::Acquire))
    }

    /// Fast-path side: post a descriptor to the ARM.
    pub fn push_rx(&self, d: &Descriptor) -> Result<(), RingError> {
        self.push(self.layout.rx_base(), reg::RX_HEAD, reg::RX_TAIL, d)
    }
    /// Fast-path side: free RX slots.
    pub fn rx_free(&self) -> u32 {
        self.layout.entries - self.used(reg::RX_HEAD, reg::RX_TAIL)
    }
    /// Fast-path side: RX descriptors the ARM has taken (the RX tail, a free-running count).
    pub fn rx_taken(&self) -> u32 {
        self.reg(reg::RX_TAIL).load(Ordering::Acquire)
    }
    /// Fast-path side: take the next descriptor from the ARM (a malformed one is consumed and
    /// reported as an error).
    pub fn pop_tx(&self) -> Option<Result<Descriptor, WireError>> {
        self.pop(self.layout.tx_base(), reg::TX_HEAD, reg::TX_TAIL)
    }
    /// Fast-path side: take the next descriptor from the ARM as raw bytes (what hardware sees).
    pub fn pop_tx_bytes(&self) -> Option<[u8; DESC_BYTES]> {
        self.pop_bytes(self.layout.tx_base(), reg::TX_HEAD, reg::TX_TAIL)
    }
    /// ARM side: take the next descriptor from the fast path.
    pub fn pop_rx(&self) -> Option<Result<Descriptor, WireError>> {
        self.pop(self.layout.rx_base(), reg::RX_HEAD, reg::RX_TAIL)
    }
    /// ARM side: post a descriptor to the fast path.
    pub fn push_tx(&self, d: &Descriptor) -> Result<(), RingError> {
        self.push(self.layout.tx_base(), reg::TX_HEAD, reg::TX_TAIL, d)
    }
    /// ARM side: free TX slots.
    pub fn tx_free(&self) -> u32 {
        self.layout.entries - self.used(reg::TX_HEAD, reg::TX_TAIL)
    }
    /// Descriptors waiting in RX.
    pub fn rx_pending(&self) -> u32 {
        self.used(reg::RX_HEAD, reg::RX_TAIL)
    }
    /// Descriptors waiting in TX.
    pub fn tx_pending(&self) -> u32 {
        self.used(reg::TX_HEAD, reg::TX_TAIL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_wraparound_and_full() {
        let w = RingWindow::anonymous(RingLayout::new(4).unwrap()).unwrap();
        w.init_fast_path(1 << 30, 22);
        for round in 0..5u64 {
            for i in 0..4 {
                w.push_rx(&Descriptor::FreePage {
                    pfn: round * 10 + i,
                })
                .unwrap();
            }
            assert!(matches!(
                w.push_rx(&Descriptor::FreePage { pfn: 0 }),
                Err(RingError::Full)
            ));
            for i in 0..4 {
                assert_eq!(
                    w.pop_rx().unwrap().unwrap(),
                    Descriptor::FreePage {
                        pfn: round * 10 + i
                    }
                );
            }
            assert!(w.pop_rx().is_none());
        }
    }

    #[test]
    fn file_window_is_shared_between_mappings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rings");
        let board = RingWindow::create_file(&path, RingLayout::new(8).unwrap()).unwrap();
        assert!(matches!(
            RingWindow::open(&path, None),
            Err(RingError::NotInitialised { .. })
        ));
        board.init_fast_path(3 << 30, 21);
        let arm = RingWindow::open(&path, None).unwrap();
        assert_eq!(
            (arm.dram_bytes(), arm.page_shift(), arm.layout().entries),
            (3 << 30, 21, 8)
        );
        board
            .push_rx(&Descriptor::TlbInvalidate { pid: 1, vpn: 2 })
            .unwrap();
        assert_eq!(
            arm.pop_rx().unwrap().unwrap(),
            Descriptor::TlbInvalidate { pid: 1, vpn: 2 }
        );
        arm.push_tx(&Descriptor::FreePage { pfn: 7 }).unwrap();
        assert_eq!(
            board.pop_tx().unwrap().unwrap(),
            Descriptor::FreePage { pfn: 7 }
        );
    }
}
