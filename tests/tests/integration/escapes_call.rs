//! Regression tests for the containment escapes (docs/reliability.md), call group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.
