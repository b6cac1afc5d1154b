//! The guest with a way in to its linear memory, for a live session's images.
//!
//! The guest component exports only its `runner`; its core module's memory is reachable from
//! inside the component alone. [`instrument`] appends to the component (leaving every byte of
//! it as it was) a small core module instantiated against the guest's core instance, whose
//! functions are lifted into the component and exported as the instance [`ACCESS`]:
//!
//! - `view(scratch: u32) -> list<u8>`: the whole memory, read in place by the host (the list's
//!   pointer and length are stored at `scratch`, a spot in the dead shadow stack);
//! - `grow(pages: u32) -> s32`: `memory.grow`, which the store's memory limiter sees;
//! - `seek(offset: u32)` then `write(bytes: list<u8>)`: the host copies `bytes` to `offset`.
//!   `write` is lifted with a `realloc` of its own that returns the offset last sought, so the
//!   bytes land in place without the guest's allocator; its body does nothing.
//!
//! The guest's core module has one mutable global, the shadow stack pointer, whose initial
//! value is the top of the shadow stack (below it, the stack grows down from there; above it,
//! the data and the heap). Every export returns with it where it started, so between calls it
//! holds its initial value and the stack below it is dead: an image is the memory above it.

use wasm_encoder::{
    Alias, CanonicalFunctionSection, CanonicalOption, CodeSection, Component,
    ComponentAliasSection, ComponentExportKind, ComponentExportSection, ComponentInstanceSection,
    ComponentTypeSection, ComponentValType, EntityType, ExportKind, ExportSection, Function,
    FunctionSection, GlobalSection, GlobalType, ImportSection, InstanceSection, Instruction,
    MemArg, MemoryType, Module, ModuleArg, ModuleSection, PrimitiveValType, TypeSection, ValType,
};
use wasmparser::{
    CanonicalFunction, ComponentAlias, ComponentExternalKind, ComponentOuterAliasKind, Instance,
    Parser, Payload,
};

/// The name the access functions are exported under.
pub(crate) const ACCESS: &str = "palisade:live/access";

/// What [`instrument`] learned of the guest's layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    /// The shadow stack pointer's initial value: the first byte above the stack.
    pub stack_top: u32,
}

/// Counts of the component's index spaces at its top level, and where its program is.
#[derive(Default)]
struct Spaces {
    core_modules: u32,
    core_instances: u32,
    core_funcs: u32,
    core_memories: u32,
    types: u32,
    funcs: u32,
    instances: u32,
    /// The core instance of the component's first core module (the guest's program).
    program: Option<u32>,
    /// The program's shadow stack pointer's initial value.
    stack_top: Option<u32>,
}

impl Spaces {
    fn add(&mut self, kind: ComponentExternalKind) -> Result<(), String> {
        match kind {
            ComponentExternalKind::Func => self.funcs += 1,
            ComponentExternalKind::Type => self.types += 1,
            ComponentExternalKind::Instance => self.instances += 1,
            other => {
                return Err(format!(
                    "the guest has a top-level {other:?} it cannot track"
                ));
            }
        }
        Ok(())
    }
}

/// The guest component with [`ACCESS`] appended, and its layout.
pub(crate) fn instrument(component: &[u8]) -> Result<(Vec<u8>, Layout), String> {
    let spaces = count(component).map_err(|e| format!("reading the guest: {e}"))?;
    let program = spaces
        .program
        .ok_or("the guest instantiates no core module")?;
    let stack_top = spaces
        .stack_top
        .ok_or("the guest has no shadow stack pointer")?;
    let mut out = component.to_vec();
    let mut tail = Component::new();
    tail.section(&ModuleSection(&accessor_module()));
    let mut instances = InstanceSection::new();
    instances.instantiate(
        spaces.core_modules,
        [("program", ModuleArg::Instance(program))],
    );
    tail.section(&instances);
    let accessor = spaces.core_instances;
    let mut aliases = ComponentAliasSection::new();
    for name in ["view", "grow", "seek", "write", "realloc"] {
        aliases.alias(Alias::CoreInstanceExport {
            instance: accessor,
            kind: ExportKind::Func,
            name,
        });
    }
    aliases.alias(Alias::CoreInstanceExport {
        instance: program,
        kind: ExportKind::Memory,
        name: "memory",
    });
    tail.section(&aliases);
    let core = |i: u32| spaces.core_funcs + i;
    let memory = CanonicalOption::Memory(spaces.core_memories);
    tail.section(&lift_types(spaces.types));
    let ty = |i: u32| spaces.types + i;
    let mut canon = CanonicalFunctionSection::new();
    canon.lift(core(0), ty(1), [memory]);
    canon.lift(core(1), ty(2), []);
    canon.lift(core(2), ty(3), []);
    canon.lift(core(3), ty(4), [memory, CanonicalOption::Realloc(core(4))]);
    tail.section(&canon);
    let mut exported = ComponentInstanceSection::new();
    exported.export_items(
        ["view", "grow", "seek", "write"]
            .into_iter()
            .zip(0..4)
            .map(|(name, i)| (name, ComponentExportKind::Func, spaces.funcs + i)),
    );
    tail.section(&exported);
    let mut exports = ComponentExportSection::new();
    exports.export(
        ACCESS,
        ComponentExportKind::Instance,
        spaces.instances,
        None,
    );
    tail.section(&exports);
    // A component's body is its sections one after another: the tail's, without its header.
    out.extend_from_slice(&tail.finish()[8..]);
    Ok((out, Layout { stack_top }))
}

/// The component types of the lifted functions, from type index `base`: `list<u8>` (+0), then
/// `view` (+1), `grow` (+2), `seek` (+3) and `write` (+4).
fn lift_types(base: u32) -> ComponentTypeSection {
    let u32 = ComponentValType::Primitive(PrimitiveValType::U32);
    let mut types = ComponentTypeSection::new();
    types
        .defined_type()
        .list(ComponentValType::Primitive(PrimitiveValType::U8));
    let bytes = ComponentValType::Type(base);
    types
        .function()
        .params([("scratch", u32)])
        .result(Some(bytes));
    types
        .function()
        .params([("pages", u32)])
        .result(Some(ComponentValType::Primitive(PrimitiveValType::S32)));
    types.function().params([("offset", u32)]).result(None);
    types.function().params([("bytes", bytes)]).result(None);
    types
}

/// The core module behind [`ACCESS`]: imports the program's memory, keeps the offset last
/// sought in a global of its own.
fn accessor_module() -> Module {
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32], [ValType::I32]); // view, grow
    types.ty().function([ValType::I32], []); // seek
    types.ty().function([ValType::I32, ValType::I32], []); // write
    types.ty().function([ValType::I32; 4], [ValType::I32]); // realloc
    let mut imports = ImportSection::new();
    let memory = MemoryType {
        minimum: 0,
        maximum: None,
        memory64: false,
        shared: false,
        page_size_log2: None,
    };
    imports.import("program", "memory", EntityType::Memory(memory));
    let mut functions = FunctionSection::new();
    for ty in [0, 0, 1, 2, 3] {
        functions.function(ty);
    }
    let mut globals = GlobalSection::new();
    let offset = GlobalType {
        val_type: ValType::I32,
        mutable: true,
        shared: false,
    };
    globals.global(offset, &wasm_encoder::ConstExpr::i32_const(0));
    let mut exports = ExportSection::new();
    for (i, name) in ["view", "grow", "seek", "write", "realloc"]
        .into_iter()
        .enumerate()
    {
        exports.export(name, ExportKind::Func, i as u32);
    }
    let mut code = CodeSection::new();
    for body in [view(), grow(), seek(), nothing(), realloc()] {
        code.function(&body);
    }
    let mut module = Module::new();
    module
        .section(&types)
        .section(&imports)
        .section(&functions)
        .section(&globals)
        .section(&exports)
        .section(&code);
    module
}

fn body(instructions: &[Instruction<'_>]) -> Function {
    let mut function = Function::new([]);
    for instruction in instructions {
        function.instruction(instruction);
    }
    function.instruction(&Instruction::End);
    function
}

/// `view(scratch)`: store `(0, memory size in bytes)` at `scratch`, return `scratch`.
fn view() -> Function {
    let word = |offset| MemArg {
        offset,
        align: 2,
        memory_index: 0,
    };
    body(&[
        Instruction::LocalGet(0),
        Instruction::I32Const(0),
        Instruction::I32Store(word(0)),
        Instruction::LocalGet(0),
        Instruction::MemorySize(0),
        Instruction::I32Const(16),
        Instruction::I32Shl,
        Instruction::I32Store(word(4)),
        Instruction::LocalGet(0),
    ])
}

fn grow() -> Function {
    body(&[Instruction::LocalGet(0), Instruction::MemoryGrow(0)])
}

fn seek() -> Function {
    body(&[Instruction::LocalGet(0), Instruction::GlobalSet(0)])
}

fn nothing() -> Function {
    body(&[])
}

/// The `realloc` of `write`: the offset last sought, whatever was asked.
fn realloc() -> Function {
    body(&[Instruction::GlobalGet(0)])
}

/// Walk the component's top level, counting each index space the tail extends.
fn count(component: &[u8]) -> Result<Spaces, String> {
    let mut spaces = Spaces::default();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(component) {
        let payload = payload.map_err(|e| e.to_string())?;
        match &payload {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => {
                if depth == 0 && matches!(payload, Payload::ModuleSection { .. }) {
                    spaces.core_modules += 1;
                }
                if let Payload::ModuleSection {
                    unchecked_range, ..
                } = &payload
                    && spaces.core_modules == 1
                    && depth == 0
                    && spaces.stack_top.is_none()
                {
                    spaces.stack_top = stack_top(&component[unchecked_range.clone()]);
                }
                depth += 1;
                continue;
            }
            Payload::End(_) => {
                depth = depth.saturating_sub(1);
                continue;
            }
            _ if depth > 0 => continue,
            _ => {}
        }
        count_section(&mut spaces, payload)?;
    }
    Ok(spaces)
}

fn count_section(spaces: &mut Spaces, payload: Payload<'_>) -> Result<(), String> {
    match payload {
        Payload::InstanceSection(reader) => {
            for instance in reader {
                if let Instance::Instantiate {
                    module_index: 0, ..
                } = ok(instance)?
                    && spaces.program.is_none()
                {
                    spaces.program = Some(spaces.core_instances);
                }
                spaces.core_instances += 1;
            }
        }
        Payload::ComponentInstanceSection(reader) => spaces.instances += reader.count(),
        Payload::ComponentTypeSection(reader) => spaces.types += reader.count(),
        Payload::ComponentAliasSection(reader) => {
            for alias in reader {
                match ok(alias)? {
                    ComponentAlias::CoreInstanceExport { kind, .. } => match kind {
                        wasmparser::ExternalKind::Func | wasmparser::ExternalKind::FuncExact => {
                            spaces.core_funcs += 1
                        }
                        wasmparser::ExternalKind::Memory => spaces.core_memories += 1,
                        _ => {}
                    },
                    ComponentAlias::InstanceExport { kind, .. } => spaces.add(kind)?,
                    ComponentAlias::Outer { kind, .. } => match kind {
                        ComponentOuterAliasKind::Type => spaces.types += 1,
                        ComponentOuterAliasKind::CoreType => {}
                        other => return Err(format!("an outer {other:?} alias")),
                    },
                }
            }
        }
        Payload::ComponentCanonicalSection(reader) => {
            for function in reader {
                match ok(function)? {
                    CanonicalFunction::Lift { .. } => spaces.funcs += 1,
                    _ => spaces.core_funcs += 1,
                }
            }
        }
        Payload::ComponentImportSection(reader) => {
            for import in reader {
                spaces.add(ok(import)?.ty.kind())?;
            }
        }
        Payload::ComponentExportSection(reader) => {
            for export in reader {
                spaces.add(ok(export)?.kind)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn ok<T>(read: wasmparser::Result<T>) -> Result<T, String> {
    read.map_err(|e| e.to_string())
}

/// The initial value of a core module's first mutable `i32` global: the shadow stack pointer
/// (wasm-ld puts it first).
fn stack_top(module: &[u8]) -> Option<u32> {
    for payload in Parser::new(0).parse_all(module) {
        if let Payload::GlobalSection(reader) = payload.ok()? {
            let global = reader.into_iter().next()?.ok()?;
            if !global.ty.mutable || global.ty.content_type != wasmparser::ValType::I32 {
                return None;
            }
            let mut init = global.init_expr.get_operators_reader();
            return match init.read().ok()? {
                wasmparser::Operator::I32Const { value } => u32::try_from(value).ok(),
                _ => None,
            };
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instrumented guests validate, export the access instance, and have their stack
    /// first, below 6 MiB of data.
    #[test]
    fn each_guest_instruments() {
        for guest in [crate::guest::Guest::Full, crate::guest::Guest::Plain] {
            let (wasm, layout) = instrument(guest.bytes()).unwrap();
            let mut validator =
                wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
            validator.validate_all(&wasm).unwrap();
            assert_eq!(layout.stack_top, 6 << 20);
        }
    }
}
