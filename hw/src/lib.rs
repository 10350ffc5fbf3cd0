//! The memory node fast path (being written; see issue 4).
