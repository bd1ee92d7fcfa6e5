//! Oracle support for the ori corpus.
//!
//! * [`Expectation`]: the `tests/corpus/NAME.expected` file format (what real
//!   ptxas 13.0.88 + cuobjdump printed for `NAME.ptx`), with [`Expectation::parse`]
//!   and [`Expectation::render`].
//! * [`skeleton_from_sass`]: reduces `cuobjdump -sass` text (or ori's SASS-like
//!   text in the same layout) to the GMMA skeleton: `WARPGROUP.ARRIVE`, every
//!   `?GMMA` opcode and `WARPGROUP.DEPBAR.LE gsb0, 0xN`.
//! * [`parse_message`]: parses one ptxas diagnostic line into a [`Msg`].
//! * [`compare`]: compares an [`Expectation`] with an [`Observed`] run and
//!   returns a [`CaseAgreement`]; [`AgreementTable`] aggregates many cases.
//! * [`parse_roundtrip`] / [`render_roundtrip`]: the recorded fix-it round
//!   trip (`roundtrip.expected`), with [`classify_skeleton`].
//! * [`wgmma_table`]: the generated table of `wgmma` shape/type/form cases
//!   and the format of their recorded ptxas verdicts.

#![warn(missing_docs)]

pub mod accuracy;
mod case_shape;
mod compare;
mod expectation;
mod message;
mod roundtrip;
mod skeleton;
pub mod wgmma_table;

pub use case_shape::has_loop_or_call;
pub use compare::{compare, AgreementTable, CaseAgreement, ColumnTotal, Observed, Totals, COLUMNS};
pub use expectation::{Expectation, HEADER_PREFIX};
pub use message::{
    parse_message, Msg, Severity, ADVISORY_CODES, C7407_TOO_MANY_LIVE_RANGES, C7517_WAIT_INJECTED,
    C7519_ARRIVE_INJECTED, SERIALIZATION_CODES,
};
pub use roundtrip::{
    classify_skeleton, fixit_digest, parse_roundtrip, render_roundtrip, RoundtripRecord,
    SkeletonVerdict, ROUNDTRIP_HEADER, UNFIXABLE_CODES,
};
pub use skeleton::{skeleton_from_sass, skeleton_line};
