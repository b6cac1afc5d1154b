//! Integration tests live under `tests/`.
