//! The result folders of the conformance suite's server runs: a fresh scratch folder per run,
//! and each scenario's checks read back from `server-<scenario>-<timestamp>/checks.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// `-2026-11-30T08-46-40-258Z` at the end of a result directory's name.
const TIMESTAMP_SUFFIX: usize = "-2026-11-30T08-46-40-258Z".len();

/// An empty folder for one run's results, named after `what` and this process.
pub fn scratch_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-sansio-conformance-{what}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Scenario name → its checks. A scenario folder without `checks.json` is left out (the
/// callers count the scenarios they expect).
pub fn read_results(dir: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("results dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        // `<scenario>-YYYY-MM-DDTHH-MM-SS-mmmZ`: the timestamp has a fixed length (scenario
        // names themselves contain dashes and digits, e.g. json-schema-2020-12).
        let scenario = rest[..rest.len().saturating_sub(TIMESTAMP_SUFFIX)].to_owned();
        let Ok(text) = std::fs::read_to_string(entry.path().join("checks.json")) else {
            continue;
        };
        let checks: Vec<Value> = serde_json::from_str(&text).expect("checks.json is JSON");
        out.insert(scenario, checks);
    }
    out
}
