//! Image files: their intrinsic size, read from the file's header only
//! (the only module that knows `imagesize`).

use std::path::Path;

/// The width and height in pixels that the header of the image at `path`
/// states (PNG, JPEG, GIF, WebP, AVIF, BMP, ICO and more; not SVG, which
/// has no fixed size). `None` when the file is not such an image or cannot
/// be read.
pub fn intrinsic_size(path: &Path) -> Option<(u32, u32)> {
    let size = imagesize::size(path).ok()?;
    Some((
        u32::try_from(size.width).ok()?,
        u32::try_from(size.height).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_header() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles/content/guides/nested/smi-output");
        assert_eq!(intrinsic_size(&dir.join("smi.png")), Some((64, 48)));
        assert_eq!(intrinsic_size(&dir.join("img/layout.gif")), Some((24, 12)));
        assert_eq!(intrinsic_size(&dir.join("run.log")), None);
        assert_eq!(intrinsic_size(&dir.join("absent.png")), None);
    }
}
