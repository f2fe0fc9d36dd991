use super::*;

// ---- errata new ----

pub fn errata_cmd(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

// ---- errata check ----

pub fn check_cmd(root: &Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_errata"))
        .arg("check")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr),
    )
}
