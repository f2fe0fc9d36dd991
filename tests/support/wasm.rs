//! Running committed WebAssembly in wasmi, and rebuilding it to prove the
//! committed file matches its source.

use std::path::{Path, PathBuf};

/// A committed `.wasm` instantiated in wasmi, with no imports.
pub struct Wasm {
    pub store: wasmi::Store<()>,
    pub instance: wasmi::Instance,
}

impl Wasm {
    /// Loads and instantiates the file.
    pub fn load(path: &Path) -> Wasm {
        let bytes = std::fs::read(path).unwrap();
        let engine = wasmi::Engine::default();
        let module = wasmi::Module::new(&engine, &bytes[..]).unwrap();
        let mut store = wasmi::Store::new(&engine, ());
        let linker = wasmi::Linker::<()>::new(&engine);
        let instance = linker.instantiate_and_start(&mut store, &module).unwrap();
        Wasm { store, instance }
    }

    /// Calls an exported function.
    pub fn call<P: wasmi::WasmParams, R: wasmi::WasmResults>(
        &mut self,
        name: &str,
        params: P,
    ) -> R {
        self.instance
            .get_typed_func::<P, R>(&self.store, name)
            .unwrap()
            .call(&mut self.store, params)
            .unwrap()
    }

    /// Writes bytes into linear memory at `at`.
    pub fn write(&mut self, at: i32, bytes: &[u8]) {
        let memory = self.instance.get_memory(&self.store, "memory").unwrap();
        memory.write(&mut self.store, at as usize, bytes).unwrap();
    }

    /// Reads `len` bytes of linear memory at `at`.
    pub fn read(&self, at: i32, len: i32) -> Vec<u8> {
        let memory = self.instance.get_memory(&self.store, "memory").unwrap();
        let mut out = vec![0; len as usize];
        memory.read(&self.store, at as usize, &mut out).unwrap();
        out
    }
}

/// Whether the wasm32-unknown-unknown target is installed.
pub fn target_installed() -> bool {
    let sysroot = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .unwrap();
    let sysroot = PathBuf::from(String::from_utf8(sysroot.stdout).unwrap().trim());
    sysroot.join("lib/rustlib/wasm32-unknown-unknown").exists()
}

/// Builds `package` for wasm32-unknown-unknown with the `wasm` profile into
/// a private target folder and returns the `.wasm` bytes.
pub fn build(repo: &Path, package: &str) -> Vec<u8> {
    let target_dir = repo.join("target/wasm-check");
    let status = std::process::Command::new(env!("CARGO"))
        .current_dir(repo)
        .args([
            "build",
            "-p",
            package,
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm",
            "--locked",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(target_dir.join(format!("wasm32-unknown-unknown/wasm/{package}.wasm"))).unwrap()
}
