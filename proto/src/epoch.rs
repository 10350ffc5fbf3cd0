//! Epochs: the fence that keeps a client with a stale view of a replicated pool from changing
//! a replica that is no longer its view's (docs/replication.md, "Epochs").
//!
//! A remote address space (RAS) may hold an epoch (16 bits, beside its key in the key table;
//! 0 = the RAS is not fenced). Every request carries the epoch of its sender's view in the
//! header's [`crate::header::field::EPOCH`] bytes (0 from a client outside any pool). The
//! fast path refuses, with [`crate::Status::Stale`] and nothing executed, a request that
//! presents the right key with an epoch **older** than its RAS's ([`older`]); a request with
//! the RAS's epoch or a newer one passes (a client learns a new view before the nodes do).
//! One exception executes nothing either: an atomic whose entry the idempotence ring holds
//! (an earlier attempt executed before the epoch moved on) is answered from the ring
//! ([`crate::rules::Rule::StaleReplay`]), so `Stale` means "nothing executed" also to a
//! sender that retransmitted.
//! Only [`crate::Opcode::SetEpoch`] raises a RAS's epoch, and only forward.
//!
//! Epochs compare as serial numbers (RFC 1982) on 16 bits, so a pool's epoch (a `u64` in the
//! configuration manager) maps to the wire with [`wire`] and keeps its order across the wrap
//! as long as no two live views are 32,767 or more epochs apart.

/// A RAS epoch of 0: not fenced (every request's epoch passes).
pub const UNFENCED: u16 = 0;

/// Whether a request presenting `presented` is older than a RAS holding `stored` (and is
/// refused): `stored` is fenced (not 0) and `presented` precedes it as a serial number.
pub const fn older(stored: u16, presented: u16) -> bool {
    stored != UNFENCED && (stored.wrapping_sub(presented) as i16) > 0
}

/// A pool's epoch on the wire: 0 for epoch 0 (a pool whose view never changed: unfenced),
/// else 1..=65535 in the order of `epoch` (successive epochs are successive serial numbers;
/// `65535` is followed by `1`, never by the unfenced 0).
pub const fn wire(epoch: u64) -> u16 {
    if epoch == 0 {
        UNFENCED
    } else {
        ((epoch - 1) % 65_535) as u16 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_is_serial_order_and_zero_is_unfenced() {
        assert!(!older(0, 0) && !older(0, 5) && !older(0, 0xFFFF));
        assert!(older(5, 4) && older(5, 0) && !older(5, 5) && !older(5, 6));
        assert!(older(1, 0xFFFF), "1 follows 65535 on the wire");
        assert!(!older(0xFFFF, 1));
        assert!(older(40_000, 39_999) && !older(40_000, 40_000 + 20_000));
    }

    #[test]
    fn wire_keeps_the_order_of_successive_epochs() {
        assert_eq!(wire(0), 0);
        assert_eq!(wire(1), 1);
        assert_eq!(wire(65_535), 65_535);
        assert_eq!(wire(65_536), 1);
        for e in [
            0u64,
            1,
            2,
            100,
            65_534,
            65_535,
            65_536,
            1 << 40,
            u64::MAX - 1,
        ] {
            let (a, b) = (wire(e), wire(e + 1));
            assert_ne!(b, 0);
            assert!(older(b, a), "{e}: {a} then {b}");
            assert!(!older(a, b));
        }
    }
}
