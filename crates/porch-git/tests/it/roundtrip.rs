//! roundtrip tests.
