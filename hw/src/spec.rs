//! One source for every number: how the RTL takes its values from `clio_proto`.
//!
//! A value a kernel compares with or assigns (a status, an opcode, a descriptor kind, a
//! length bound) is a [`Spec`] field of the block: a rust-hdl `Constant` whose value is a
//! const generic computed from proto (`st_retry: Spec<8, { Status::RetryLater as u64 }>`).
//! It is emitted as a Verilog `localparam`, so a change in proto changes the RTL, and a
//! value that does not fit its width fails the build ([`Spec::FITS`]). The field keeps the
//! block's `#[derive(Default)]` (a plain `Constant` has no `Default`).
//!
//! A bit position or a slice width cannot be a `Constant`: rust-hdl kernels take only
//! literals there (`get_bits::<16>(336)`). Those literals stay, and each is pinned to proto
//! by a compile-time assert next to the kernel (`const _: () = assert!(...)`), built from the
//! helpers below, so a change in proto breaks the build instead of silently mismatching.

use clio_proto::header::ROUTED_HEADER_LEN;
use rust_hdl::prelude::*;

/// An `N`-bit constant of value `V`, for values that come from `clio_proto`.
#[derive(Clone, Copy, Debug)]
pub struct Spec<const N: usize, const V: u64>(Constant<Bits<N>>);

impl<const N: usize, const V: u64> Spec<N, V> {
    /// `V` fits in `N` bits (evaluated for every `Spec` type the crate builds: a compile error
    /// otherwise).
    pub const FITS: () = assert!(N >= 64 || V >> N == 0, "Spec value wider than its width");

    /// The value, for kernels (`self.st_ok.val()`).
    pub fn val(&self) -> Bits<N> {
        self.0.val()
    }
}

impl<const N: usize, const V: u64> Default for Spec<N, V> {
    fn default() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::FITS;
        Spec(Constant::new(V.to_bits()))
    }
}

impl<const N: usize, const V: u64> Logic for Spec<N, V> {
    fn update(&mut self) {}
    fn connect(&mut self) {}
}

impl<const N: usize, const V: u64> Block for Spec<N, V> {
    fn connect_all(&mut self) {}
    fn update_all(&mut self) {}
    fn has_changed(&self) -> bool {
        false
    }
    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        self.0.accept(name, probe);
    }
}

/// A status byte from proto (`proto::Status as u64`): the statuses a block answers with.
pub type StatusSpec<const V: u64> = Spec<8, V>;
/// An opcode byte from proto (`proto::Opcode as u64`): the opcodes a block branches on.
pub type OpcodeSpec<const V: u64> = Spec<8, V>;

/// Bit offset of byte `byte` in a 512-bit beat or a 1024-bit descriptor (byte k at bits
/// 8k..8k+8).
pub const fn bit_of(byte: usize) -> usize {
    8 * byte
}

/// Where a big-endian header field at bytes `f` sits as a little-endian number in a view of
/// the routed header (bytes 0..48) with its bytes reversed (`ByteSwap<384>`).
pub const fn swapped(f: core::ops::Range<usize>) -> usize {
    8 * (ROUTED_HEADER_LEN - f.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::ring::desc;
    use clio_proto::Status;

    #[derive(LogicBlock, Default)]
    struct UsesSpec {
        out: Signal<Out, Bits<8>>,
        st: Spec<8, { Status::RetryLater as u64 }>,
    }

    impl Logic for UsesSpec {
        #[hdl_gen]
        fn update(&mut self) {
            self.out.next = self.st.val();
        }
    }

    #[test]
    fn spec_is_a_localparam_of_the_proto_value() {
        let v = crate::verilog_of("uses_spec", UsesSpec::default());
        let want = format!("localparam  st = 8'h{:x};", Status::RetryLater as u8);
        assert!(v.contains(&want), "{want} not in\n{v}");
        assert!(
            v.contains("out = st;"),
            "kernel does not read the constant:\n{v}"
        );
        assert_eq!(UsesSpec::default().st.val(), Status::RetryLater as u64);
    }

    #[test]
    fn offsets_follow_the_layouts() {
        assert_eq!(bit_of(desc::body::PFN.start), 832);
        assert_eq!(swapped(clio_proto::header::field::PID), 336);
    }
}
