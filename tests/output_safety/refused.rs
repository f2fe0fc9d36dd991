//! Which outputs errata refuses (sources, the home folder, mount points,
//! files, folders it did not build), seen through symlinks and relative
//! forms, and which it replaces.

use std::path::{Path, PathBuf};

use crate::snapshot_support::snapshot_dir as snapshot;
use crate::{Site, leftovers_in};
use errata::output_dir::MARKER;

fn assert_refused(site: &Site, output: &Path, why: &str) {
    let before = snapshot(site.root());
    let message = site
        .build_into(output, true)
        .expect_err(&output.display().to_string());
    assert!(
        message.contains("refusing to use") && message.contains(why),
        "{}: {message}",
        output.display()
    );
    assert!(
        message.contains("\nhelp: build into a folder of its own"),
        "{message}"
    );
    assert_eq!(snapshot(site.root()), before, "{}", output.display());
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn outputs_that_resolve_to_the_site_or_its_sources_are_refused_even_with_force() {
    let site = Site::new();
    let root = site.root();
    let inside = "inside the source folder";
    let is_root = "it is the site's root folder";
    for (output, why) in [
        (root.join("x/../content"), inside),
        (root.join("content/guides/../guides"), inside),
        (root.join("public/../themes/default/templates"), inside),
        (root.join("data/new-folder"), inside),
        (root.join(".errata/x"), inside),
        (root.join("src"), inside),
        (root.to_path_buf(), is_root),
        (root.join("content/.."), is_root),
        (root.join("."), is_root),
        (
            root.parent().unwrap().to_path_buf(),
            "it holds the site's root folder",
        ),
        (PathBuf::from("/"), "it holds the site's root folder"),
    ] {
        assert_refused(&site, &output, why);
    }
}

#[cfg(unix)]
#[test]
fn symlinks_into_sources_are_seen_through() {
    use std::os::unix::fs::symlink;
    let site = Site::new();
    let root = site.root();
    symlink(root.join("content"), root.join("out")).unwrap();
    assert_refused(&site, &root.join("out"), "inside the source folder");
    assert_refused(&site, &root.join("out/guides"), "inside the source folder");
    // `link/..` is the folder above the link's target, as the OS reads it.
    symlink(root.join("content/guides"), root.join("deep")).unwrap();
    assert_refused(&site, &root.join("deep/.."), "inside the source folder");
    // A symlink elsewhere pointing back at the site root.
    let elsewhere = tempfile::tempdir().unwrap();
    symlink(root, elsewhere.path().join("site")).unwrap();
    assert_refused(
        &site,
        &elsewhere.path().join("site"),
        "the site's root folder",
    );
    // A source folder that is itself a symlink protects its target.
    let theme_home = tempfile::tempdir().unwrap();
    std::fs::rename(
        root.join("themes/default"),
        theme_home.path().join("default"),
    )
    .unwrap();
    symlink(
        theme_home.path().join("default"),
        root.join("themes/default"),
    )
    .unwrap();
    assert_refused(
        &site,
        &theme_home.path().join("default/static"),
        "inside the source folder",
    );
    assert!(site.public().symlink_metadata().is_err());
}

#[test]
fn relative_output_forms_are_resolved_against_the_current_folder() {
    let site = Site::new();
    let before = snapshot(site.root());
    for output in ["x/../content", "./content/", "content/guides/..", "."] {
        let out = site.command().args(["--output", output]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{output}: {stderr}");
        assert!(
            stderr.contains("error: refusing to use") && stderr.contains(output),
            "{output}: {stderr}"
        );
        assert_eq!(snapshot(site.root()), before, "{output}");
    }
}

#[test]
fn the_home_folder_is_refused_even_with_force() {
    let site = Site::new();
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("user");
    std::fs::create_dir_all(user.join("Documents")).unwrap();
    std::fs::write(user.join("Documents/thesis.tex"), "years of work").unwrap();
    for output in [user.clone(), home.path().to_path_buf()] {
        let out = site
            .command()
            .env("HOME", &user)
            .arg("--force")
            .arg("--output")
            .arg(&output)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("your home folder"), "{stderr}");
    }
    assert_eq!(
        std::fs::read(user.join("Documents/thesis.tex")).unwrap(),
        b"years of work"
    );
}

#[cfg(unix)]
#[test]
fn a_mount_point_is_refused_before_the_build() {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    // A folder on another device than its parent is a mount point.
    let mount = ["/proc", "/sys", "/dev", "/dev/shm", "/run", "/tmp"]
        .into_iter()
        .map(Path::new)
        .find(|p| dev(p).is_some() && dev(p) != p.parent().and_then(dev));
    let Some(mount) = mount else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no mount point found among /proc, /sys, /dev, /run and /tmp"
        );
        eprintln!("skipped: no mount point found here to build into");
        return;
    };
    let site = Site::new();
    let message = site.build_into(mount, false).unwrap_err();
    assert!(message.contains("it is a mount point"), "{message}");
    let inside = mount.join("site");
    assert!(
        message.contains(&format!(
            "help: build into a folder inside it, such as {}",
            inside.display()
        )),
        "{message}"
    );
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn an_existing_file_is_refused_as_output() {
    let site = Site::new();
    let root = site.root();
    assert_refused(&site, &root.join("site.toml"), "it is an existing file");
    assert!(root.join("site.toml").is_file());
    std::fs::write(root.join("notes.txt"), "mine").unwrap();
    assert_refused(&site, &root.join("notes.txt"), "it is an existing file");
    assert_eq!(std::fs::read(root.join("notes.txt")).unwrap(), b"mine");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("notes.txt"), root.join("link.txt")).unwrap();
        assert_refused(&site, &root.join("link.txt"), "it is an existing file");
    }
}

#[test]
fn a_folder_errata_did_not_build_is_replaced_only_with_force() {
    let site = Site::new();
    let theirs = site.root().join("docs");
    std::fs::create_dir_all(theirs.join("keep")).unwrap();
    std::fs::write(theirs.join("keep/notes.md"), "precious").unwrap();

    let out = site.command().args(["--output", "docs"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("errata did not build"), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("help:") && l.contains("--force")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(theirs.join("keep/notes.md")).unwrap(),
        b"precious"
    );
    assert_eq!(site.leftovers(), Vec::<String>::new());

    let out = site
        .command()
        .args(["--output", "docs", "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!theirs.join("keep").exists());
    assert!(theirs.join("index.html").is_file());
    assert!(theirs.join(MARKER).is_file());
    // Now errata built it, so it is replaced without --force.
    site.build_into(&theirs, false).unwrap();
    assert_eq!(site.leftovers(), Vec::<String>::new());
}

#[test]
fn only_a_marked_folder_is_replaced_and_empty_folders_are_fine() {
    let site = Site::new();
    let public = site.public();
    std::fs::create_dir(&public).unwrap();
    site.build_into(&public, false).unwrap();
    let built = snapshot(&public);
    assert!(built.contains_key(Path::new(MARKER)));
    site.build_into(&public, false).unwrap();
    assert_eq!(snapshot(&public), built, "rebuilt in place, same bytes");
    // Without the marker, the folder is someone else's.
    std::fs::remove_file(public.join(MARKER)).unwrap();
    let message = site.build_into(&public, false).unwrap_err();
    assert!(
        message.contains("help: ") && message.contains("--force"),
        "{message}"
    );
    assert!(public.join("index.html").is_file());
    // A marker that is a symlink is not a marker.
    #[cfg(unix)]
    {
        std::fs::write(site.root().join("elsewhere"), "").unwrap();
        std::os::unix::fs::symlink(site.root().join("elsewhere"), public.join(MARKER)).unwrap();
        assert!(site.build_into(&public, false).is_err());
    }
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_stays_a_symlink_and_its_target_gets_the_site() {
    let site = Site::new();
    let hosting = tempfile::tempdir().unwrap();
    let target = hosting.path().join("www");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, site.public()).unwrap();
    for round in 0..2 {
        site.edit(&format!("Round {round}."));
        site.build_into(&site.public(), false).unwrap();
        assert!(
            site.public()
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink(),
            "round {round}"
        );
        assert_eq!(std::fs::read_link(site.public()).unwrap(), target);
        let page = std::fs::read_to_string(target.join("guides/generated-0/index.html")).unwrap();
        assert!(page.contains(&format!("Round {round}.")), "{page}");
        assert_eq!(leftovers_in(hosting.path()), Vec::<String>::new());
        assert_eq!(site.leftovers(), Vec::<String>::new());
    }
    // A symlink to a folder errata did not build is refused like the folder.
    let foreign = hosting.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("x"), "x").unwrap();
    std::os::unix::fs::symlink(&foreign, site.root().join("out")).unwrap();
    let message = site
        .build_into(&site.root().join("out"), false)
        .unwrap_err();
    assert!(message.contains("--force"), "{message}");
}
