#!/usr/bin/env bash
# Rebuilds the calculator's WebAssembly and puts it where the theme serves it.
# The committed file must match this build: tests/sizing.rs checks it.
set -euo pipefail
cd "$(dirname "$0")/../.."
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || true
cargo build -p sizing --target wasm32-unknown-unknown --profile wasm --locked
mkdir -p themes/default/static/wasm
cp target/wasm32-unknown-unknown/wasm/sizing.wasm themes/default/static/wasm/sizing.wasm
echo "themes/default/static/wasm/sizing.wasm: $(wc -c < themes/default/static/wasm/sizing.wasm) bytes"
