use super::*;

// ---- The calculator: the committed WebAssembly against its source and the native build ----

pub const WASM: &str = "themes/default/static/wasm/sizing.wasm";

/// The committed `sizing.wasm`, run in wasmi.
pub struct SizingWasm {
    pub store: wasmi::Store<()>,
    pub instance: wasmi::Instance,
}

impl SizingWasm {
    pub fn load() -> SizingWasm {
        let bytes = std::fs::read(Path::new(REPO).join(WASM)).unwrap();
        let engine = wasmi::Engine::default();
        let module = wasmi::Module::new(&engine, &bytes[..]).unwrap();
        let mut store = wasmi::Store::new(&engine, ());
        let linker = wasmi::Linker::<()>::new(&engine);
        let instance = linker.instantiate_and_start(&mut store, &module).unwrap();
        SizingWasm { store, instance }
    }

    pub fn handle(&mut self, request: &str) -> String {
        let f = |name: &str| self.instance.get_func(&self.store, name).unwrap();
        let (reset, alloc, handle, ptr, len) = (
            f("reset"),
            f("alloc"),
            f("handle"),
            f("answer_ptr"),
            f("answer_len"),
        );
        reset
            .typed::<(), ()>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap();
        let at = alloc
            .typed::<i32, i32>(&self.store)
            .unwrap()
            .call(&mut self.store, request.len() as i32)
            .unwrap();
        let memory = self.instance.get_memory(&self.store, "memory").unwrap();
        memory
            .write(&mut self.store, at as usize, request.as_bytes())
            .unwrap();
        handle
            .typed::<(i32, i32), ()>(&self.store)
            .unwrap()
            .call(&mut self.store, (at, request.len() as i32))
            .unwrap();
        let p = ptr
            .typed::<(), i32>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap() as usize;
        let n = len
            .typed::<(), i32>(&self.store)
            .unwrap()
            .call(&mut self.store, ())
            .unwrap() as usize;
        let mut out = vec![0; n];
        memory.read(&self.store, p, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }
}
