//! Link flags for a Node.js addon (undefined `napi_*` symbols resolved by the node process).

fn main() {
    napi_build::setup();
}
