use super::*;

// ---- The calculator: the committed WebAssembly against its source and the native build ----

pub const WASM: &str = "themes/default/static/wasm/sizing.wasm";

/// The committed `sizing.wasm`, run in wasmi.
pub struct SizingWasm(Wasm);

impl SizingWasm {
    pub fn load() -> SizingWasm {
        SizingWasm(Wasm::load(&Path::new(REPO).join(WASM)))
    }

    pub fn handle(&mut self, request: &str) -> String {
        let wasm = &mut self.0;
        wasm.call::<(), ()>("reset", ());
        let at: i32 = wasm.call("alloc", request.len() as i32);
        wasm.write(at, request.as_bytes());
        wasm.call::<(i32, i32), ()>("handle", (at, request.len() as i32));
        let p: i32 = wasm.call("answer_ptr", ());
        let n: i32 = wasm.call("answer_len", ());
        String::from_utf8(wasm.read(p, n)).unwrap()
    }
}
