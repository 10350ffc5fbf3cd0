//! Frame streams over 512-bit beats with byte enables, as the fast path's network ports
//! carry them (`rx_*`, `tx_*`): a source that cuts frames into beats and a sink that joins
//! beats into frames. Used by the `fastpath_top` and `ack_layer` testbenches and the
//! cosimulation harness. Each frame carries side-band metadata `T` (the route) with it.

use super::axi_dram::BEAT;
use std::collections::VecDeque;

/// Byte enables of a beat holding `n` bytes (lanes `0..n`).
pub fn keep_of(n: usize) -> u64 {
    if n >= BEAT {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// One beat offered by a [`StreamSource`].
#[derive(Debug, Clone, Copy)]
pub struct Beat<'a, T> {
    /// The frame's side band.
    pub meta: &'a T,
    /// The beat's bytes (1..=64; the lanes beyond are the driver's to fill).
    pub data: &'a [u8],
    /// Byte enables (`keep_of(data.len())`).
    pub keep: u64,
    /// First beat of its frame.
    pub first: bool,
    /// Last beat of its frame.
    pub last: bool,
}

/// Frames in, beats out: a beat is offered until it is taken.
#[derive(Debug)]
pub struct StreamSource<T> {
    frames: VecDeque<(T, Vec<u8>)>,
    off: usize,
}

impl<T> Default for StreamSource<T> {
    fn default() -> Self {
        StreamSource {
            frames: VecDeque::new(),
            off: 0,
        }
    }
}

impl<T> StreamSource<T> {
    /// Queue a frame (at least one byte).
    pub fn push(&mut self, meta: T, frame: Vec<u8>) {
        assert!(!frame.is_empty(), "a frame has at least one beat");
        self.frames.push_back((meta, frame));
    }

    /// The beat to offer this cycle, if any.
    pub fn beat(&self) -> Option<Beat<'_, T>> {
        let (meta, f) = self.frames.front()?;
        let end = (self.off + BEAT).min(f.len());
        Some(Beat {
            meta,
            data: &f[self.off..end],
            keep: keep_of(end - self.off),
            first: self.off == 0,
            last: end == f.len(),
        })
    }

    /// The offered beat was taken (valid and ready at the edge). Returns whether it was the
    /// last beat of its frame.
    pub fn accept(&mut self) -> bool {
        let Some((_, f)) = self.frames.front() else {
            return false;
        };
        self.off += BEAT;
        if self.off >= f.len() {
            self.frames.pop_front();
            self.off = 0;
            return true;
        }
        false
    }

    /// No frame left to send.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Beats in, frames out.
#[derive(Debug)]
pub struct StreamSink<T> {
    cur: Option<(T, Vec<u8>)>,
}

impl<T> Default for StreamSink<T> {
    fn default() -> Self {
        StreamSink { cur: None }
    }
}

impl<T> StreamSink<T> {
    /// A beat was taken: the lanes enabled by `keep` are appended; `meta` gives the side band
    /// on a frame's first beat. Returns the frame on its last beat.
    pub fn take(
        &mut self,
        data: &[u8; BEAT],
        keep: u64,
        last: bool,
        meta: impl FnOnce() -> T,
    ) -> Option<(T, Vec<u8>)> {
        let (_, bytes) = self.cur.get_or_insert_with(|| (meta(), Vec::new()));
        if keep == u64::MAX {
            bytes.extend_from_slice(data);
        } else {
            bytes.extend((0..BEAT).filter(|k| keep >> k & 1 == 1).map(|k| data[k]));
        }
        if last {
            self.cur.take()
        } else {
            None
        }
    }

    /// A frame is partly received.
    pub fn busy(&self) -> bool {
        self.cur.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_through_beats() {
        let mut src = StreamSource::default();
        let mut sink = StreamSink::default();
        let frames: Vec<Vec<u8>> = [1usize, 63, 64, 65, 200]
            .iter()
            .map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect())
            .collect();
        for (i, f) in frames.iter().enumerate() {
            src.push(i, f.clone());
        }
        let mut out = vec![];
        let mut stall = false;
        while let Some(b) = src.beat() {
            // Every other cycle the beat is not taken: it must be offered again.
            stall = !stall;
            if stall {
                continue;
            }
            assert_eq!(b.keep, keep_of(b.data.len()));
            let mut full = [0xEEu8; BEAT];
            full[..b.data.len()].copy_from_slice(b.data);
            let (meta, first, last) = (*b.meta, b.first, b.last);
            if let Some(f) = sink.take(&full, b.keep, last, || {
                assert!(first);
                meta
            }) {
                out.push(f);
            }
            assert_eq!(src.accept(), last);
        }
        assert!(src.is_empty() && !sink.busy());
        let want: Vec<(usize, Vec<u8>)> = frames.into_iter().enumerate().collect();
        assert_eq!(out, want);
    }
}
