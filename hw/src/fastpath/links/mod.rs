//! The interfaces between the fast path's stage blocks, each declared once with its mate
//! (rust-hdl `LogicInterface`s: the derive checks a pair against each other, same names and
//! types, opposite directions), and joined in the top (`fastpath_top/wiring.rs`) with one
//! line each. A signal added to an interface is added to both structs here and used in the
//! two blocks; nothing in the top changes.
//!
//! By area: [`executor`], [`checks`], [`request`], [`slow_path`], [`datapath`], [`dram`]; and
//! [`sides`], the bundles of these between the sub-tops the top joins.

pub mod checks;
pub mod datapath;
pub mod dram;
pub mod executor;
pub mod request;
pub mod sides;
pub mod slow_path;

pub use checks::*;
pub use datapath::*;
pub use dram::*;
pub use executor::*;
pub use request::*;
pub use sides::*;
pub use slow_path::*;
