// The sizing calculator: the same Rust code as `errata size`, compiled to
// WebAssembly. No framework. The form starts disabled and shows the result
// computed at build time; this script enables it, recomputes on every input,
// and keeps the state in the URL hash (#calc=model=...&context=...).
(function () {
  "use strict";
  var form = document.querySelector(".calc-form");
  var dataNode = document.getElementById("sizing-data");
  if (!form || !dataNode || typeof WebAssembly !== "object") return;
  var data = JSON.parse(dataNode.textContent);
  var section = form.closest(".calculator");
  var out = function (name) { return section.querySelector('[data-out="' + name + '"]'); };
  var encoder = new TextEncoder();
  var decoder = new TextDecoder();
  var exports = null;

  function field(name) { return form.elements[name]; }

  function state() {
    return {
      model: field("model").value,
      weights: field("weights").value,
      runtime: field("runtime").value,
      context: Math.max(1, parseInt(field("context").value, 10) || 1),
      parallel: Math.max(1, parseInt(field("parallel").value, 10) || 1),
      gpus: Math.min(64, Math.max(1, parseInt(field("gpus").value, 10) || 1)),
      kv: field("kv").value,
      gpu: field("gpu").value,
      gpu_memory: field("gpu_memory").value.trim(),
      fa: field("fa").checked
    };
  }

  // A typed value as one request line: a line break or `&` would start another key.
  function line(v) { return String(v).replace(/[\r\n&]/g, " "); }

  // The request text. Each preset's architecture comes as request lines
  // written by the sizing crate itself (sizing::model_request), so the page
  // sends the numbers native code computes with. GPU names and memory are
  // passed as typed: the crate reads `rtx-3090` and `24GiB` the way
  // `errata size` does.
  function request(s) {
    var m = data.models.find(function (x) { return x.id === s.model; });
    var lines = [m.request, "weights=" + s.weights, "runtime=" + s.runtime,
      "context=" + s.context, "parallel=" + s.parallel, "kv=" + s.kv, "fa=" + (s.fa ? 1 : 0),
      "util=0.9", "train=0", "checkpointing=0", "gpus=" + s.gpus];
    data.gpus.forEach(function (g) { lines.push("gpu=" + g.name + "|" + g.memory_mib); });
    lines.push(s.gpu_memory ? "gpu_memory=" + line(s.gpu_memory) : "target=" + line(s.gpu));
    return lines.join("\n");
  }

  function ask(text) {
    var bytes = encoder.encode(text);
    exports.reset();
    var at = exports.alloc(bytes.length);
    new Uint8Array(exports.memory.buffer, at, bytes.length).set(bytes);
    exports.handle(at, bytes.length);
    var answer = new Uint8Array(exports.memory.buffer, exports.answer_ptr(), exports.answer_len());
    return JSON.parse(decoder.decode(answer));
  }

  function show(a) {
    if (a.error) {
      out("verdict").textContent = "Cannot compute: " + a.error;
      return;
    }
    ["weights_gib", "kv_cache_gib", "compute_gib", "overhead_gib", "total_gib"].forEach(function (k) {
      out(k).textContent = a[k].toFixed(2);
    });
    out("kv_tokens").textContent = String(a.kv_tokens);
    var t = a.target;
    out("verdict").textContent = !t ? "" : t.fits
      ? "Fits on " + t.name + " with " + t.headroom_gib + " GiB to spare."
      : "Does not fit on " + t.name + " (" + t.memory_gib + " GiB)." + (t.offload
        ? " Offload: " + t.offload.gpu_layers + " of " + t.offload.all_layers + " layers on the GPU, "
          + t.offload.ram_gib + " GiB in system RAM." : "");
    out("max_context").textContent = a.max_context ? a.max_context + " tokens" : "none";
    out("fits").textContent = a.fits.length
      ? a.fits.map(function (f) { return f.gpu; }).join(", ") : "none of the catalogue";
    var list = out("suggestions");
    list.textContent = "";
    a.suggestions.forEach(function (s) {
      var li = document.createElement("li");
      var code = document.createElement("code");
      code.textContent = s;
      li.appendChild(code);
      list.appendChild(li);
    });
  }

  function toHash(s) {
    var q = new URLSearchParams();
    Object.keys(s).forEach(function (k) { q.set(k, String(s[k])); });
    return "#calc=" + encodeURIComponent(q.toString());
  }

  function fromHash() {
    var m = /^#calc=(.*)$/.exec(window.location.hash);
    if (!m) return;
    var q = new URLSearchParams(decodeURIComponent(m[1]));
    ["model", "weights", "runtime", "context", "parallel", "gpus", "kv", "gpu", "gpu_memory"].forEach(function (k) {
      var v = q.get(k);
      if (v === null) return;
      var el = field(k);
      if (el.tagName === "SELECT" && !Array.prototype.some.call(el.options, function (o) { return o.value === v; })) return;
      el.value = v;
    });
    if (q.has("fa")) field("fa").checked = q.get("fa") === "true";
  }

  function update(fromUser) {
    var s = state();
    show(ask(request(s)));
    var hash = toHash(s);
    out("share").setAttribute("href", hash);
    if (fromUser && window.location.hash !== hash) history.replaceState(null, "", hash);
  }

  function start(instance) {
    exports = instance.exports;
    fromHash();
    form.querySelector("fieldset").disabled = false;
    form.setAttribute("data-ready", "true");
    form.addEventListener("input", function () { update(true); });
    form.addEventListener("change", function () { update(true); });
    window.addEventListener("hashchange", function () { fromHash(); update(false); });
    update(false);
  }

  fetch(form.getAttribute("data-wasm"))
    .then(function (r) { return r.arrayBuffer(); })
    .then(function (bytes) { return WebAssembly.instantiate(bytes, {}); })
    .then(function (result) { start(result.instance); })
    .catch(function (e) {
      out("verdict").textContent = "The interactive calculator could not load (" + e + "); the figures above are for the page's default.";
    });
})();
