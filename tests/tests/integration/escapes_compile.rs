//! Regression tests for the containment escapes (docs/reliability.md), compile group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.
