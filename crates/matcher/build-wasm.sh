#!/usr/bin/env bash
# Rebuilds themes/default/static/wasm/matcher.wasm (the paste box's matcher);
# tests/matcher_wasm.rs checks that the committed file matches this build.
exec "$(dirname "$0")/../sizing/build-wasm.sh" matcher
