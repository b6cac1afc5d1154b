//! The objects that hold QuickJS's shapes along the key orders the input repeats.

use super::{Owned, define, new_object, same};
use javy::quickjs::qjs;

/// Objects with more keys are not given held paths.
pub(super) const PATH_KEYS: usize = 16;
/// Key orders remembered, to see one repeat.
const RECENT_PATHS: usize = 4;
/// Paths held at most, each by one object per key but the last.
const HELD_PATHS: usize = 8;

/// Objects that hold QuickJS's shapes along the key orders the input repeats (see the
/// documentation of the `json` module). They are not reachable from JavaScript; dropping this
/// frees them. Atoms are kept here without references: `hold` only defines the keys of the object just made
/// (which references them), and an atom number in `recent` or `held` may have been freed and
/// reused since, which can only make a path held that did not repeat, or not held.
pub(super) struct ShapePaths {
    ctx: *mut qjs::JSContext,
    /// The keys read so far of each object being read, outermost first (at most PATH_KEYS
    /// of each).
    pub(super) keys: Vec<qjs::JSAtom>,
    /// The key orders of the last objects made, in a ring.
    recent: Vec<Vec<qjs::JSAtom>>,
    next: usize,
    held: Vec<Vec<qjs::JSAtom>>,
    holders: Vec<Owned>,
    /// QuickJS could not make a holder (out of memory): make no more.
    stopped: bool,
    /// Set once the input has made an object.
    tracking: bool,
}

impl ShapePaths {
    pub(super) fn new(ctx: *mut qjs::JSContext) -> Self {
        ShapePaths {
            ctx,
            keys: Vec::new(),
            recent: Vec::new(),
            next: 0,
            held: Vec::new(),
            holders: Vec::new(),
            stopped: false,
            tracking: false,
        }
    }

    /// Where the keys of an object begun now go in `keys`; `None` while the input has made
    /// no object yet, so that an input of one flat object pays for nothing.
    pub(super) fn start(&self) -> Option<usize> {
        self.tracking.then_some(self.keys.len())
    }

    /// An object was made with `count` keys, the first of them at `start` in `keys`.
    pub(super) fn completed(&mut self, start: Option<usize>, count: usize) {
        let Some(start) = start else {
            self.tracking = true;
            return;
        };
        if count > 0 && count <= PATH_KEYS && !self.stopped {
            self.seen(start);
        }
        self.keys.truncate(start);
    }

    pub(super) fn seen(&mut self, start: usize) {
        let path = &self.keys[start..];
        if self.held.iter().any(|held| same(held, path)) {
            return;
        }
        if self.recent.iter().any(|recent| same(recent, path)) {
            if self.held.len() < HELD_PATHS {
                let path = path.to_vec();
                if self.hold(&path).is_none() {
                    self.stopped = true;
                    // SAFETY: clears the out-of-memory error the failed call left pending.
                    unsafe { qjs::JS_FreeValue(self.ctx, qjs::JS_GetException(self.ctx)) };
                    return;
                }
                self.held.push(path);
            }
            return;
        }
        if self.recent.len() < RECENT_PATHS {
            self.recent.push(path.to_vec());
        } else {
            let slot = &mut self.recent[self.next];
            slot.clear();
            slot.extend_from_slice(path);
            self.next = (self.next + 1) % RECENT_PATHS;
        }
    }

    /// Hold the shapes along `keys`: of an empty object (the first time), then of each proper
    /// prefix of `keys`, each by an object with those keys, defined as the input's are. The
    /// whole path is held by the objects the input made with it.
    pub(super) fn hold(&mut self, keys: &[qjs::JSAtom]) -> Option<()> {
        let first = usize::from(!self.holders.is_empty());
        let ctx = self.ctx;
        for prefix in first..keys.len() {
            let holder = new_object(ctx)?;
            for &key in &keys[..prefix] {
                let undefined = Owned {
                    ctx,
                    value: qjs::JS_MKVAL(qjs::JS_TAG_UNDEFINED, 0),
                };
                if !define(ctx, &holder, key, undefined) {
                    return None;
                }
            }
            self.holders.push(holder);
        }
        Some(())
    }
}
