// The matcher in a Worker, so that a pasted log of any size never blocks the
// page. The same Rust code as `errata match` (crates/matcher), compiled to
// WebAssembly. Messages in: {init: {index, wasm}} once, then {id, text}.
// Messages out: {id, matches} or {id, error}.
"use strict";

var exports = null;
var ready = null;
var CHUNK = 1 << 20;

function answer() {
  var bytes = new Uint8Array(exports.memory.buffer, exports.answer_ptr(), exports.answer_len());
  return new TextDecoder().decode(bytes);
}

// Copies bytes into wasm memory, calls f(ptr, len), frees them.
function withBytes(bytes, f) {
  var ptr = exports.alloc(bytes.length);
  new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
  var result = f(ptr, bytes.length);
  exports.dealloc(ptr, bytes.length);
  return result;
}

function init(urls) {
  return Promise.all([
    fetch(urls.wasm).then(function (r) {
      if (!r.ok) throw new Error(urls.wasm + ": " + r.status);
      return r.arrayBuffer();
    }),
    fetch(urls.index).then(function (r) {
      if (!r.ok) throw new Error(urls.index + ": " + r.status);
      return r.arrayBuffer();
    })
  ]).then(function (got) {
    return WebAssembly.instantiate(got[0], {}).then(function (result) {
      exports = result.instance.exports;
      if (withBytes(new Uint8Array(got[1]), exports.load) !== 0) throw new Error(answer());
    });
  });
}

function match(text) {
  var bytes = new TextEncoder().encode(text);
  exports.begin();
  for (var at = 0; at < bytes.length; at += CHUNK) {
    withBytes(bytes.subarray(at, Math.min(at + CHUNK, bytes.length)), exports.feed);
  }
  exports.finish();
  return JSON.parse(answer()).matches;
}

self.onmessage = function (event) {
  var data = event.data;
  if (data.init) {
    ready = init(data.init);
    return;
  }
  ready.then(function () {
    self.postMessage({ id: data.id, matches: match(data.text) });
  }).catch(function (e) {
    self.postMessage({ id: data.id, error: String(e && e.message || e) });
  });
};
