//! Host bindings of the `plugin` world, generated from `wit/`.
//!
//! Exports are async so a call can be interrupted at every epoch tick;
//! the one import (`host.progress`) is a plain function.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    exports: { default: async },
});
