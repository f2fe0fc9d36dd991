//! A synthetic triage site of N pages, the same bytes for the same N.
//!
//! Each page has front matter like the seed page, about 700–1,000 words of
//! prose, 3–4 code blocks (bash, python, yaml), links to other pages and
//! sponsored links. Pages spread over 20 sections.
//!
//! Two kinds: [`Kind::Realistic`], whose commands, code and config lines
//! recur across pages the way real triage sites repeat them, and
//! [`Kind::Distinct`], where every code line carries its page's number, so
//! no highlighted line repeats (the worst case for any per-line memo).

/// Which corpus to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Realistic,
    Distinct,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Realistic => "realistic",
            Kind::Distinct => "distinct",
        }
    }
}

use std::fmt::Write as _;
use std::path::Path;

use crate::copy_dir::copy_dir;

const TOOLS: &[&str] = &[
    "ollama",
    "llama.cpp",
    "vllm",
    "comfyui",
    "transformers",
    "tgi",
];
const FRAMEWORKS: &[&str] = &["pytorch", "tensorflow", "jax", "onnxruntime"];
const TAGS: &[&str] = &[
    "cuda",
    "vram",
    "oom",
    "rocm",
    "driver",
    "kv-cache",
    "quantization",
    "nccl",
];
const WORDS: &[&str] = &[
    "allocator",
    "tensor",
    "contiguous",
    "block",
    "fragmentation",
    "reserved",
    "cache",
    "kernel",
    "driver",
    "context",
    "batch",
    "sequence",
    "attention",
    "projection",
    "weights",
    "quantized",
    "precision",
    "device",
    "stream",
    "synchronization",
    "memory",
    "pool",
    "virtual",
    "segment",
    "runtime",
    "scheduler",
    "request",
    "throughput",
    "latency",
    "offload",
    "layer",
    "activation",
    "gradient",
    "checkpoint",
    "optimizer",
    "shard",
];

/// A small deterministic generator (xorshift), so the corpus never changes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let n = 10 + rng.below(12);
    for i in 0..n {
        let w = rng.pick(WORDS);
        if i == 0 {
            let mut c = w.chars();
            let first = c.next().unwrap().to_ascii_uppercase();
            out.push(first);
            out.push_str(c.as_str());
        } else {
            out.push(' ');
            out.push_str(w);
        }
    }
    out.push_str(". ");
}

fn paragraph(rng: &mut Rng, out: &mut String, sentences: u64) {
    for _ in 0..sentences {
        sentence(rng, out);
    }
    out.push_str("\n\n");
}

fn page(i: usize, n: usize, sections: usize, kind: Kind) -> (String, String) {
    // In the distinct corpus every code line names its page.
    let tag = match kind {
        Kind::Realistic => String::new(),
        Kind::Distinct => format!(" # p{i}"),
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let section = i % sections;
    let code = 0x1000 + i;
    let mut s = String::with_capacity(9000);
    let _ = write!(
        s,
        "---\ntitle: \"Fix E{code:05X}Error: device allocation failed in {tool}\"\n\
         description: \"How to fix E{code:05X}Error in {tool}: root cause, per-tool commands and hardware options.\"\n\
         signature: \"E{code:05X}Error: device allocation failed (code {i})\"\n\
         patterns: ['E{code:05X}Error: device allocation failed']\n\
         triage: \"The runtime raises E{code:05X}Error when a request exceeds free device memory. Lower the context, quantize the KV cache, or move to a larger GPU.\"\n\
         frameworks: [{fw}]\ntools: [{tool}, {tool2}]\ntags: [{t1}, {t2}]\n\
         date: 2026-{month:02}-{day:02}\n\
         sponsored:\n  - {{ label: \"Explore 24GB GPUs on Amazon\", url: \"https://www.amazon.com/s?k=rtx+4090&tag=sparecables-20\" }}\n  - {{ label: \"Rent on RunPod\", url: \"https://runpod.io?ref=ynypzu94\" }}\n\
         calculator: {{ model: llama-3.1-8b, weights: fp16, context: 8192 }}\n---\n",
        tool = rng.pick(TOOLS),
        tool2 = rng.pick(TOOLS),
        fw = rng.pick(FRAMEWORKS),
        t1 = rng.pick(TAGS),
        t2 = rng.pick(TAGS),
        month = 1 + i % 12,
        day = 1 + i % 28,
    );
    s.push_str("## Root Cause\n\n");
    paragraph(&mut rng, &mut s, 6);
    paragraph(&mut rng, &mut s, 5);
    let other = (i * 7 + 3) % n;
    let _ = write!(
        s,
        "A related failure is [E{:05X}Error](@/s{:02}/error-{other:05}.md), which has the same fix.\n\n",
        0x1000 + other,
        other % sections
    );
    s.push_str("## Step-by-Step CLI Remediation\n\n### Shell\n\n```bash\n");
    for k in 0..(4 + rng.below(6)) {
        let _ = writeln!(
            s,
            "export VAR_{k}={}{tag}\n./server --ctx-size {} --n-gpu-layers {} --flash-attn on{tag}",
            rng.below(100),
            1024 << rng.below(4),
            rng.below(99)
        );
    }
    s.push_str("```\n\n");
    paragraph(&mut rng, &mut s, 4);
    let _ = write!(s, "### Python\n\n```python\nimport torch{tag}\n\n");
    for k in 0..(5 + rng.below(8)) {
        let _ = writeln!(
            s,
            "x{k} = torch.zeros(({}, {}), dtype=torch.float16, device=\"cuda\")  # step {k}{tag}\nprint(f\"allocated: {{torch.cuda.memory_allocated() / 2**30:.2f}} GiB\"){tag}",
            64 << rng.below(6),
            128
        );
    }
    s.push_str("```\n\n");
    paragraph(&mut rng, &mut s, 4);
    let _ = write!(s, "### Config\n\n```yaml\nserver:{tag}\n");
    for k in 0..(4 + rng.below(6)) {
        let _ = writeln!(
            s,
            "  option_{k}: {}{tag}\n  name_{k}: \"value {k}\"{tag}",
            rng.below(1000)
        );
    }
    s.push_str("```\n\n");
    if i.is_multiple_of(2) {
        let _ = write!(
            s,
            "```bash\nnvidia-smi --query-gpu=memory.used,memory.total --format=csv{tag}\n```\n\n",
        );
    }
    s.push_str("## Why it happens\n\n");
    paragraph(&mut rng, &mut s, 8);
    paragraph(&mut rng, &mut s, 8);
    (format!("s{section:02}/error-{i:05}.md"), s)
}

/// Writes an `n`-page site (with the repository's default theme and
/// calculator data) into `dir`.
pub fn generate(dir: &Path, n: usize, kind: Kind, theme: &Path, data: &Path) {
    let sections = 20.min(n.max(1));
    std::fs::create_dir_all(dir.join("content")).unwrap();
    std::fs::write(
        dir.join("site.toml"),
        "title = \"Bench\"\nbase_url = \"https://bench.example.org/\"\ndescription = \"Synthetic corpus\"\n\
         [[links.affiliate]]\nname = \"amazon\"\nhosts = [\"amazon.com\"]\nparams = [\"tag\"]\n\
         [[links.affiliate]]\nname = \"runpod\"\nhosts = [\"runpod.io\"]\nparams = [\"ref\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("content/_index.md"),
        "---\ntitle: Bench\n---\nHome.\n",
    )
    .unwrap();
    for s in 0..sections {
        let d = dir.join(format!("content/s{s:02}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("_index.md"),
            format!("---\ntitle: \"Section {s}\"\n---\nSection {s}.\n"),
        )
        .unwrap();
    }
    for i in 0..n {
        let (rel, text) = page(i, n, sections, kind);
        std::fs::write(dir.join("content").join(rel), text).unwrap();
    }
    copy_dir(theme, &dir.join("themes/default"));
    copy_dir(data, &dir.join("data"));
}
