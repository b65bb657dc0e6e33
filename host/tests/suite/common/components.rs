//! Components generated in the test, for attacks no toolchain fixture can
//! express: thousands of exports, hundreds of huge tables.

use std::borrow::Cow;

use wasm_encoder::{
    CodeSection, ComponentBuilder, ComponentExportKind, ComponentValType, ElementSection, Elements,
    ExportKind, ExportSection, Function, FunctionSection, Instruction, Module, PrimitiveValType,
    RefType, StartSection, TableSection, TableType, TypeSection, ValType,
};

/// A core module exporting `f: () -> i32` (returns 7) and holding `tables`
/// funcref tables of `elements` elements each, which its start function
/// fills (so their memory is touched, not only reserved).
fn core_module(tables: u32, elements: u64) -> Module {
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]);
    types.ty().function([], []);
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0);
    functions.function(1);
    module.section(&functions);
    if tables > 0 {
        let mut section = TableSection::new();
        for _ in 0..tables {
            section.table(TableType {
                element_type: RefType::FUNCREF,
                table64: false,
                minimum: elements,
                maximum: None,
                shared: false,
            });
        }
        module.section(&section);
    }
    let mut exports = ExportSection::new();
    exports.export("f", ExportKind::Func, 0);
    module.section(&exports);
    module.section(&StartSection { function_index: 1 });
    let mut declared = ElementSection::new();
    declared.declared(Elements::Functions(Cow::Borrowed(&[0])));
    module.section(&declared);
    let mut code = CodeSection::new();
    let mut body = Function::new([]);
    body.instruction(&Instruction::I32Const(7));
    body.instruction(&Instruction::End);
    code.function(&body);
    let mut fill = Function::new([]);
    let length = i32::try_from(elements).expect("elements fit an i32");
    for table in 0..tables {
        fill.instruction(&Instruction::I32Const(0));
        fill.instruction(&Instruction::RefFunc(0));
        fill.instruction(&Instruction::I32Const(length));
        fill.instruction(&Instruction::TableFill(table));
    }
    fill.instruction(&Instruction::End);
    code.function(&fill);
    module.section(&code);
    module
}

/// A component with typed exports: `instances` instances of one core
/// module with `tables` tables of `elements` funcrefs each, and `exports`
/// functions `f0`, `f1`, ... `() -> u32` (each returns 7).
pub fn typed_component(instances: u32, tables: u32, elements: u64, exports: u32) -> Vec<u8> {
    let mut component = ComponentBuilder::default();
    let module = component.core_module(None, &core_module(tables, elements));
    let mut first = None;
    for _ in 0..instances.max(1) {
        let instance = component.core_instantiate(None, module, []);
        first.get_or_insert(instance);
    }
    let first = first.expect("one instance");
    let core_f = component.core_alias_export(None, first, "f", ExportKind::Func);
    let (ty, mut encoder) = component.type_function(None);
    encoder
        .params([] as [(&str, ComponentValType); 0])
        .result(Some(ComponentValType::Primitive(PrimitiveValType::U32)));
    for i in 0..exports {
        let lifted = component.lift_func(None, core_f, ty, []);
        component.export(
            format!("f{i}").as_str(),
            ComponentExportKind::Func,
            lifted,
            None,
        );
    }
    component.finish()
}
