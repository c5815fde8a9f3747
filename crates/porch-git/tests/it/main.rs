//! Integration tests of porch-git against real git: `git http-backend` over smart HTTP
//! (porch-testkit), OpenSSH `sshd` and `file://` remotes.

mod common;
mod concurrency;
mod conformance;
mod faults;
mod roundtrip;
mod smart;
mod ssh;
mod sync;
