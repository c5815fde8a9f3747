//! Remote URLs as they may be shown: kpt's [`kpt::pkg::redact`], which `pkg get` and
//! `pkg update` use for the same purpose, so there is one rule for what a URL may show.

pub use kpt::pkg::redact::{redact_url, scrub};
