#!/usr/bin/env bash
# Rebuilds a crate's WebAssembly (the calculator's by default; give `matcher`
# for the paste box's) and puts it where the theme serves it.
# The committed files must match this build: tests/build.rs (sizing) and
# tests/matcher_wasm.rs (matcher) check it.
set -euo pipefail
package="${1:-sizing}"
cd "$(dirname "$0")/../.."
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || true
cargo build -p "$package" --target wasm32-unknown-unknown --profile wasm --locked
mkdir -p themes/default/static/wasm
cp "target/wasm32-unknown-unknown/wasm/$package.wasm" "themes/default/static/wasm/$package.wasm"
echo "themes/default/static/wasm/$package.wasm: $(wc -c < "themes/default/static/wasm/$package.wasm") bytes"
