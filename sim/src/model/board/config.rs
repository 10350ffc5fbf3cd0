//! How a node is configured ([`BoardConfig`], [`Offloads`], [`SlowPathMode`]), and why it
//! could not start ([`BoardError`]).

use clio_proto::layout::LayoutError;
use clio_proto::persist::{PersistError, Superblock, META_BYTES, SUPER_BYTES, SUPER_SLOTS};
use clio_slowpath::RingError;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

/// Where the slow path runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlowPathMode {
    /// In this process, over an anonymous ring window, stepped by the node (deterministic).
    InProcess,
    /// On a thread of its own in this process (`clio board`'s default; the board's shape):
    /// the node's DRAM is mapped twice (the memory file, or an anonymous memfd), and the
    /// serving thread never runs slow-path work, so allocation, teardown and frame clearing
    /// never hold up data requests. Not deterministic: tests that replay streams use
    /// [`SlowPathMode::InProcess`].
    Thread,
    /// A separate `clio-slowpath` process attached to this shared-memory ring file. The node's
    /// DRAM is then a file the daemon maps too (to clear frames): `--memory-file` if given,
    /// else [`dram_file_for`] of the ring file.
    External {
        /// The ring file the node creates.
        ring_file: PathBuf,
    },
    /// None at all: requests for the slow path stay in the RX ring, which fills and stays
    /// full (nothing registers, so no tenant is ever admitted). For the conformance rule that
    /// a slow-path request meeting a full ring is RETRY_LATER (`conformance::references`).
    Absent,
}

/// The DRAM file of a node whose slow path runs externally with `ring_file` and no memory
/// file: the ring file's path plus `.dram` (what `clio-slowpath --ring-file` maps by default).
pub fn dram_file_for(ring_file: &std::path::Path) -> PathBuf {
    let mut p = ring_file.as_os_str().to_owned();
    p.push(".dram");
    PathBuf::from(p)
}

/// Configuration of a node.
#[derive(Debug, Clone)]
pub struct BoardConfig {
    /// DRAM bytes (sparse: only touched memory costs).
    pub dram_bytes: u64,
    /// log2 page size.
    pub page_shift: u32,
    /// Back DRAM with this file instead of anonymous memory.
    pub memory_file: Option<PathBuf>,
    /// Where the slow path runs.
    pub slowpath: SlowPathMode,
    /// Entries per ring.
    pub ring_entries: u32,
    /// Lease of a RAS member (in-process slow path; the external daemon has `--lease-ms`).
    pub lease: Duration,
    /// Draw RAS keys from a generator seeded with this instead of the OS CSPRNG. Only for
    /// tests that replay one stream into two nodes (model-vs-RTL conformance): a node with a
    /// seed hands out predictable keys. `None` (the default) on every real node.
    pub key_seed: Option<u64>,
    /// The extend path's offloads the node serves. By default those the RTL fast path has
    /// units for ([`Offloads::Hardware`]), so model and RTL answer every extend opcode alike.
    pub offloads: Offloads,
    /// Bytes of Clio-KV's region in its own RAS (offloads on): it holds
    /// `proto::kv::StoreLayout::fit(_, kv_store_bytes).records - 1` keys.
    pub kv_store_bytes: u64,
    /// The slow path's quotas (in-process and thread; an external daemon has its own flags).
    pub limits: clio_slowpath::Limits,
}

/// The extend path's offloads a node serves ([`BoardConfig::offloads`]); an extend opcode it
/// does not serve is answered UNSUPPORTED before the key check, as the RTL's dispatch does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Offloads {
    /// None.
    None,
    /// Those the RTL fast path has units for (`proto::offload::IN_HARDWARE`: pointer
    /// chasing).
    #[default]
    Hardware,
    /// All: pointer chasing and Clio-KV (`clio board`'s default).
    All,
}

impl Offloads {
    /// Whether a node configured so serves `op` (an extend opcode).
    pub fn serves(self, op: clio_proto::Opcode) -> bool {
        match self {
            Offloads::None => false,
            Offloads::Hardware => clio_proto::offload::in_hardware(op),
            Offloads::All => true,
        }
    }
}

/// Default [`BoardConfig::kv_store_bytes`] (`proto::kv::DEFAULT_STORE_BYTES`, 16 MiB).
pub use clio_proto::kv::DEFAULT_STORE_BYTES as DEFAULT_KV_STORE_BYTES;

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig {
            dram_bytes: 4 << 30,
            page_shift: clio_proto::consts::DEFAULT_PAGE_SHIFT,
            memory_file: None,
            slowpath: SlowPathMode::InProcess,
            ring_entries: clio_proto::ring::DEFAULT_RING_ENTRIES,
            lease: Duration::from_millis(clio_proto::consts::DEFAULT_LEASE_MS),
            key_seed: None,
            offloads: Offloads::default(),
            kv_store_bytes: DEFAULT_KV_STORE_BYTES,
            limits: clio_slowpath::Limits::default(),
        }
    }
}

/// Why a node could not start.
#[derive(Debug, Error)]
pub enum BoardError {
    /// Memory geometry refused.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// DRAM could not be mapped.
    #[error("cannot map {bytes} bytes of DRAM: {source}")]
    Dram {
        /// Size asked.
        bytes: u64,
        /// Cause.
        source: std::io::Error,
    },
    /// Ring window failure.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The slow path's thread (or its view of DRAM) could not be set up.
    #[error("starting the slow path's thread: {0}")]
    SlowPathThread(std::io::Error),
    /// Bad ring geometry.
    #[error("ring entries must be a power of two in 2..=65536 (got {0})")]
    RingEntries(u32),
    /// The memory file's metadata cannot be used (foreign, other version or geometry).
    #[error("memory file {path}: {source}")]
    Persist {
        /// The file.
        path: PathBuf,
        /// Why.
        source: PersistError,
    },
    /// The memory file's metadata area could not be mapped.
    #[error("memory file {path}: cannot map its metadata area: {source}")]
    Meta {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// A memory file of the format before metadata (it has a page table, no metadata area):
    /// its allocations cannot be recovered, and it is not erased silently.
    #[error("memory file {0} holds a page table but no metadata (an older format); move it away or delete it")]
    OldFormat(PathBuf),
    /// A file of another size that is not a memory file of this node's geometry.
    #[error("memory file {path} is {len} bytes; a node with {dram} bytes of DRAM needs {need} (DRAM image + metadata). Refusing to resize it")]
    Size {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// DRAM bytes asked.
        dram: u64,
        /// The length it would need.
        need: u64,
    },
}

/// Look at an existing memory file before anything maps or resizes it: `Ok(())` if it is
/// new, empty, or a memory file of exactly this geometry; an error that names the problem
/// otherwise. Nothing is written.
pub(super) fn check_memory_file(
    path: &std::path::Path,
    dram: u64,
    shift: u32,
) -> Result<(), BoardError> {
    use std::os::unix::fs::FileExt;
    let io = |source| BoardError::Meta {
        path: path.to_path_buf(),
        source,
    };
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    let len = f.metadata().map_err(io)?.len();
    if len == 0 {
        return Ok(());
    }
    let need = dram + META_BYTES;
    // A superblock where this file's metadata would start, whatever geometry wrote it.
    let meta_at = len.checked_sub(META_BYTES);
    if let Some(at) = meta_at {
        for slot in SUPER_SLOTS {
            let mut b = [0u8; SUPER_BYTES];
            f.read_exact_at(&mut b, at + slot).map_err(io)?;
            match Superblock::decode(&b) {
                Ok(Some(sb)) if sb.dram_bytes != dram || sb.page_shift != shift || len != need => {
                    return Err(BoardError::Persist {
                        path: path.to_path_buf(),
                        source: PersistError::Geometry {
                            dram: sb.dram_bytes,
                            shift: sb.page_shift,
                            want_dram: dram,
                            want_shift: shift,
                        },
                    })
                }
                Ok(_) => {}
                Err(source) => {
                    return Err(BoardError::Persist {
                        path: path.to_path_buf(),
                        source,
                    })
                }
            }
        }
    }
    if len == need {
        return Ok(()); // MetaLog::open tells a fresh area from a foreign one
    }
    if len == dram {
        return Err(BoardError::OldFormat(path.to_path_buf()));
    }
    Err(BoardError::Size {
        path: path.to_path_buf(),
        len,
        dram,
        need,
    })
}
