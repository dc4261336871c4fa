//! The core (`src/`) must never do IO, read a clock, spawn threads or touch the file system.
//! This test scans its source for the APIs that would; adapters live outside `src/`.
//!
//! Test-only code inside `src/` is exempt: everything from a file's first `#[cfg(test)]` line
//! on (unit-test modules sit at the end of their file), `*tests.rs` files, and the fuzz harness
//! under `src/fuzzing` (compiled only for tests and the `fuzzing` feature). A harness needs a
//! clock origin (`Instant::now()` once) and may read its seed corpus; the engine never does.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "Instant::now",
    "SystemTime",
    "std::thread",
    "thread::spawn",
    "std::fs",
    "std::net",
    "std::io::stdin",
    "std::io::stdout",
    "io::stdin(",
    "io::stdout(",
    "std::process",
    "std::env::var",
    "rand::",
    "getrandom",
];

fn scan(dir: &Path, hits: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            scan(&path, hits);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_harness(&path) {
            let text = std::fs::read_to_string(&path).expect("read source");
            for (n, line) in text.lines().enumerate() {
                if line.trim() == "#[cfg(test)]" {
                    break;
                }
                let code = line.split("//").next().unwrap_or("");
                for pat in FORBIDDEN {
                    if code.contains(pat) {
                        hits.push(format!("{}:{}: {pat}", path.display(), n + 1));
                    }
                }
            }
        }
    }
}

/// Files that only the test and fuzz builds compile.
fn is_test_harness(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with("tests.rs")
        || name == "fuzzing.rs"
        || path.components().any(|c| c.as_os_str() == "fuzzing")
}

#[test]
fn core_sources_use_no_io_clock_thread_or_randomness() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut hits = Vec::new();
    scan(&src, &mut hits);
    assert!(
        hits.is_empty(),
        "the core must stay sans-IO:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_scanner_catches_a_forbidden_call() {
    let dir = std::env::temp_dir().join(format!("mcp-sansio-noio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bad.rs"),
        "fn f() { let _ = std::time::Instant::now(); }\n",
    )
    .unwrap();
    let mut hits = Vec::new();
    scan(&dir, &mut hits);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(hits.len(), 1);
}
