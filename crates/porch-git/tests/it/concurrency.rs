//! concurrency tests.
