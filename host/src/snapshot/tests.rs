use super::*;
use wasm_encoder::{
    CodeSection, Component, ConstExpr, DataCountSection, DataSection, Function, FunctionSection,
    Instruction, MemArg, MemorySection, MemoryType, ModuleSection, TypeSection,
};

/// A module whose code uses data segment 1; segments: 0 empty passive, 1 passive "x",
/// 2 empty passive, 3 active "y".
fn module() -> wasm_encoder::Module {
    let mut types = TypeSection::new();
    types.ty().function([], []);
    let mut functions = FunctionSection::new();
    functions.function(0);
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: 1,
        maximum: None,
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    let mut body = Function::new([]);
    body.instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Const(1))
        .instruction(&Instruction::MemoryInit {
            mem: 0,
            data_index: 1,
        })
        .instruction(&Instruction::I32Const(0))
        .instruction(&Instruction::I32Load(MemArg {
            offset: 8,
            align: 2,
            memory_index: 0,
        }))
        .instruction(&Instruction::Drop)
        .instruction(&Instruction::End);
    let mut code = CodeSection::new();
    code.function(&body);
    let mut data = DataSection::new();
    data.passive([])
        .passive(*b"x")
        .passive([])
        .active(0, &ConstExpr::i32_const(8), *b"y");
    let mut module = wasm_encoder::Module::new();
    module
        .section(&types)
        .section(&functions)
        .section(&memories)
        .section(&DataCountSection { count: 4 })
        .section(&code)
        .section(&data);
    module
}

fn segments(module: &[u8]) -> Vec<(bool, Vec<u8>)> {
    let mut out = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(module) {
        if let wasmparser::Payload::DataSection(reader) = payload.unwrap() {
            for data in reader {
                let data = data.unwrap();
                let passive = matches!(data.kind, wasmparser::DataKind::Passive);
                out.push((passive, data.data.to_vec()));
            }
        }
    }
    out
}

#[test]
fn spent_segments_go_and_segments_code_can_reach_stay() {
    let original = module().finish();
    let compacted = compact_module(&original).expect("one segment is spent");
    wasmparser::Validator::new()
        .validate_all(&compacted)
        .expect("the compacted module is valid");
    assert_eq!(
        segments(&compacted),
        [
            (true, vec![]),
            (true, b"x".to_vec()),
            (false, b"y".to_vec())
        ]
    );
    // Nothing left to drop the second time.
    assert!(compact_module(&compacted).is_none());

    let mut component = Component::new();
    component.section(&ModuleSection(&module()));
    let rewritten = drop_spent_segments(&component.finish()).expect("rewritten");
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&rewritten)
        .expect("the rewritten component is valid");
    let mut nested = None;
    for payload in wasmparser::Parser::new(0).parse_all(&rewritten) {
        if let wasmparser::Payload::ModuleSection {
            unchecked_range, ..
        } = payload.unwrap()
        {
            nested = Some(rewritten[unchecked_range].to_vec());
        }
    }
    assert_eq!(nested.unwrap(), compacted);
}
