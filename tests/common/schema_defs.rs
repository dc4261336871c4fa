//! What the two schema test files share: finding the official schema directory, and checking a
//! JSON value against one definition of a schema document (the schemas have no root, so each
//! definition is validated through a wrapper that carries the whole document's definitions),
//! with the compiled validators cached per definition; and which way a message definition
//! travels by the unions that list it.

use std::collections::HashMap;
use std::path::PathBuf;

use jsonschema::Validator;
use mcp_sansio::testing::MethodDirection;
use serde_json::{json, Value};

/// The official schema directory: `MCP_SCHEMA_DIR`, or the in-repository copy `tests/schema`
/// (tests/schema/README.md); it must hold `probe`, so a missing copy fails instead of passing.
pub fn schema_dir(probe: &str) -> PathBuf {
    let dir = match std::env::var("MCP_SCHEMA_DIR") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema"),
    };
    assert!(
        dir.join(probe).is_file(),
        "{probe} not found in {}",
        dir.display()
    );
    dir
}

/// Validators for the definitions of one schema document, built on first use.
#[derive(Default)]
pub struct DefValidators {
    by_def: HashMap<String, Validator>,
}

impl DefValidators {
    /// Whether `instance` matches definition `def` of `root`, whose definitions are under
    /// `defs_key` (`$defs` or `definitions`); the errors joined when it does not.
    pub fn check(
        &mut self,
        root: &Value,
        defs_key: &str,
        def: &str,
        instance: &Value,
    ) -> Result<(), String> {
        let validator = self.by_def.entry(def.to_owned()).or_insert_with(|| {
            let schema = json!({
                "$schema": root["$schema"],
                defs_key: root[defs_key],
                "allOf": [{"$ref": format!("#/{defs_key}/{def}")}],
            });
            jsonschema::validator_for(&schema).unwrap()
        });
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| e.to_string())
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

/// Which way message definition `def` travels: client to server when a client union lists it
/// (`from_client`), server to client when a server union does, either when both do; `None`
/// when no union lists it.
pub fn direction_of(
    def: &str,
    from_client: &[String],
    from_server: &[String],
) -> Option<MethodDirection> {
    match (
        from_client.iter().any(|d| d == def),
        from_server.iter().any(|d| d == def),
    ) {
        (true, true) => Some(MethodDirection::Either),
        (true, false) => Some(MethodDirection::ClientToServer),
        (false, true) => Some(MethodDirection::ServerToClient),
        (false, false) => None,
    }
}
