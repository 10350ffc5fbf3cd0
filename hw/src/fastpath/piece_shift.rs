//! The size of the pieces an access is cut into, as a shift: the page, but at most 4 KiB.
//!
//! Each piece of an access is one AXI burst, and AXI4 forbids a burst that crosses a 4 KiB
//! boundary (AMBA AXI4, A3.4.1: a slave may assume none does). Pages are larger (the cosimulation
//! runs 64 KiB pages, Clio's are megabytes), so a request that crosses a 4 KiB boundary inside
//! its page is cut there like one that crosses its page's end: the executor's pieces
//! (`Executor::cfg_piece_shift`) and the look-ahead's "fits in one piece" check
//! (`TranslateAhead::piece_shift`) both take this shift; the translation of a piece on the same
//! page is the same frame, so only the burst is cut.

use rust_hdl::prelude::*;

/// log2 of the largest span an AXI4 burst may cover without crossing a boundary of it.
pub const AXI_BOUNDARY_SHIFT: u64 = 12;

/// `min(page_shift, AXI_BOUNDARY_SHIFT)` (combinational).
#[derive(LogicBlock)]
pub struct PieceShift {
    /// log2 of the page size (the configuration).
    pub page_shift: Signal<In, Bits<5>>,
    /// log2 of a piece's largest size.
    pub piece_shift: Signal<Out, Bits<5>>,
    boundary: Constant<Bits<5>>,
}

impl Default for PieceShift {
    fn default() -> Self {
        PieceShift {
            page_shift: Default::default(),
            piece_shift: Default::default(),
            boundary: Constant::new(AXI_BOUNDARY_SHIFT.to_bits()),
        }
    }
}

impl Logic for PieceShift {
    #[hdl_gen]
    fn update(&mut self) {
        self.piece_shift.next = self.page_shift.val();
        if self.page_shift.val() > self.boundary.val() {
            self.piece_shift.next = self.boundary.val();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_is_the_page_up_to_4_kib() {
        let mut u = PieceShift::default();
        u.connect_all();
        for shift in 0..32u64 {
            u.page_shift.next = shift.to_bits();
            assert!(simulate(&mut u, 100));
            assert_eq!(
                u.piece_shift.val().to_u64(),
                shift.min(12),
                "page shift {shift}"
            );
        }
    }
}
