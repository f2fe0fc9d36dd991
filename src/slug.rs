//! Slugs for URLs, heading ids and taxonomy terms.

/// Lower-cases `text` and joins its runs of letters and digits with `-`.
///
/// `"CUDA out of memory. Tried to allocate"` → `"cuda-out-of-memory-tried-to-allocate"`.
/// Dots between digits survive (`llama.cpp` → `llama-cpp`, `3.1` → `3-1`).
pub fn slugify(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    let mut dash = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if dash && !slug.is_empty() {
                slug.push('-');
            }
            dash = false;
            slug.extend(c.to_lowercase());
        } else {
            dash = true;
        }
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::slugify;

    #[test]
    fn slugs() {
        assert_eq!(
            slugify("Root Cause & Memory Allocation Mechanics"),
            "root-cause-memory-allocation-mechanics"
        );
        assert_eq!(slugify("  llama.cpp "), "llama-cpp");
        assert_eq!(slugify("Ошибка CUDA"), "ошибка-cuda");
        assert_eq!(slugify("!!!"), "");
    }
}
