//! Integration tests live under `tests/`. This library holds what the bindings' tests also need
//! and get through `cargo run -p xtask -- forge-trap`: hand-made components.

/// Make the `run` export of a compiled script's core module (`wasm`, from
/// `Palisade::compile`) start with `code`, the rest of its body `nop`s: a hand-made component
/// that passes every load-time check and then does what `code` does (`[0x00]`: `unreachable`).
///
/// # Panics
///
/// When `wasm` is not a compiled Palisade script, or `code` does not fit the body.
pub fn patch_run(wasm: &mut [u8], code: &[u8]) {
    let body = run_body(wasm);
    assert!(body.len() > code.len() + 1, "the run body is too short");
    let ops = &mut wasm[body];
    ops.fill(0x01); // nop
    ops[..code.len()].copy_from_slice(code);
    *ops.last_mut().expect("not empty") = 0x0b; // end
}

/// Where the `run` export's body (its operators) is in `wasm`.
fn run_body(wasm: &[u8]) -> std::ops::Range<usize> {
    let mut body = None;
    // Per core module: imported functions, the `run` export's index, its function bodies.
    let (mut imported, mut run, mut bodies) = (0u32, None, Vec::new());
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.expect("a component") {
            wasmparser::Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    if matches!(import.expect("an import").ty, wasmparser::TypeRef::Func(_)) {
                        imported += 1;
                    }
                }
            }
            wasmparser::Payload::ExportSection(exports) => {
                for export in exports {
                    let export = export.expect("an export");
                    if export.name.ends_with("runner@0.1.0#run") {
                        run = Some(export.index);
                    }
                }
            }
            wasmparser::Payload::CodeSectionEntry(entry) => {
                let ops = entry
                    .get_operators_reader()
                    .expect("a body")
                    .original_position();
                bodies.push(ops..entry.range().end);
            }
            wasmparser::Payload::End(_) => {
                if let Some(index) = run.take() {
                    body = Some(bodies[(index - imported) as usize].clone());
                }
                (imported, bodies) = (0, Vec::new());
            }
            _ => {}
        }
    }
    body.expect("the guest exports run")
}
