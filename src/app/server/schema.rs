//! JSON Schema for tool inputs and structured outputs, compiled once when the tool is built,
//! with the `jsonschema` crate: every keyword of drafts 7, 2019-09 and 2020-12 (the draft named
//! by `$schema`, 2020-12 when there is none), local `$ref`, `$anchor` and `$dynamicRef`.
//!
//! No reference is ever fetched: the validator is built offline (and the crate without its
//! HTTP and file resolvers), so a `$ref` to another document makes the schema fail to compile,
//! which the server reports when the tool is registered. `format` is an annotation unless the
//! server opts in to format assertions. `pattern` uses the `regex` crate (linear time, no
//! backtracking), with a bounded compiled size.

use std::sync::Arc;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

#[path = "schema_flat.rs"]
mod flat;

pub(crate) use flat::FlatObject;

/// The most errors collected for one instance.
const MAX_ERRORS: usize = 16;
/// Compiled size limit of one `pattern` / `patternProperties` regex (bytes).
const MAX_REGEX_SIZE: usize = 1 << 20;

/// A compiled schema, ready to validate instances.
#[derive(Clone)]
pub struct Schema {
    root: Value,
    /// The compiled validator, or why the document does not compile.
    compiled: Result<Arc<Validator>, InvalidSchema>,
    /// Whether `format` is asserted.
    formats: bool,
    /// The schema's flat object form, if it has one (a quick "valid" on JSON text).
    flat: Option<flat::FlatObject>,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("root", &self.root)
            .field("compiles", &self.compiled.is_ok())
            .field("formats", &self.formats)
            .finish()
    }
}

/// One validation failure: where in the instance, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON Pointer into the instance (`""` is the root).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Why a schema document does not compile (not a schema of its draft, an unknown draft, a
/// `$ref` that does not resolve locally, an invalid `pattern`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidSchema {
    /// The reason, as the compiler gives it.
    pub reason: String,
}

impl std::fmt::Display for InvalidSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the schema does not compile: {}", self.reason)
    }
}

impl std::error::Error for InvalidSchema {}

impl Schema {
    /// Compiles a schema document (an object or a boolean), `format` as an annotation. A
    /// document that does not compile is kept with the reason: [`Schema::error`] gives it,
    /// and every instance is refused with it.
    pub fn new(root: Value) -> Self {
        Schema::with_formats(root, false)
    }

    /// Compiles a schema document, or says why it does not compile.
    pub fn compile(root: Value) -> Result<Self, InvalidSchema> {
        let schema = Schema::new(root);
        match &schema.compiled {
            Ok(_) => Ok(schema),
            Err(e) => Err(e.clone()),
        }
    }

    /// Compiles a schema document, asserting `format` (dates, e-mail addresses, URIs, …) when
    /// `formats` is set; unknown formats are ignored.
    pub fn with_formats(root: Value, formats: bool) -> Self {
        let compiled = jsonschema::options()
            .offline()
            .should_validate_formats(formats)
            .with_pattern_options(PatternOptions::regex().size_limit(MAX_REGEX_SIZE))
            .build(&root)
            .map(Arc::new)
            .map_err(|e| InvalidSchema {
                reason: e.to_string(),
            });
        let flat = compiled
            .is_ok()
            .then(|| flat::FlatObject::compile(&root))
            .flatten();
        Schema {
            root,
            compiled,
            formats,
            flat,
        }
    }

    /// The same document compiled with format assertions on or off (itself when unchanged).
    pub fn formats(self, formats: bool) -> Self {
        if self.formats == formats {
            self
        } else {
            Schema::with_formats(self.root, formats)
        }
    }

    /// Why the document does not compile, if it does not.
    pub fn error(&self) -> Option<&InvalidSchema> {
        self.compiled.as_ref().err()
    }

    /// Whether `text` (the JSON text of one value, already known to be valid JSON) surely
    /// passes [`Schema::validate`], answered without parsing it when the schema is a flat
    /// object schema (properties checked by `type` only). `false` means "not sure": parse the
    /// text and call `validate`, which also gives the errors.
    pub fn admits_text(&self, text: &[u8]) -> bool {
        self.flat.as_ref().is_some_and(|f| f.admits(text))
    }

    /// The schema's flat object form, if it has one: its check can run inside a larger scan.
    pub(crate) fn flat(&self) -> Option<&FlatObject> {
        self.flat.as_ref()
    }

    /// The schema document.
    pub fn document(&self) -> &Value {
        &self.root
    }

    /// Validates `instance`; `Ok` or the errors found (at most 16), each naming the path.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<SchemaError>> {
        let validator = match &self.compiled {
            Ok(v) => v,
            Err(e) => {
                return Err(vec![SchemaError {
                    path: String::new(),
                    message: e.to_string(),
                }])
            }
        };
        if validator.is_valid(instance) {
            return Ok(());
        }
        let errors: Vec<SchemaError> = validator
            .iter_errors(instance)
            .take(MAX_ERRORS)
            .map(|e| SchemaError {
                path: e.instance_path().as_str().to_owned(),
                message: e.to_string(),
            })
            .collect();
        if errors.is_empty() {
            // `is_valid` and `iter_errors` disagree only on a validator bug; refuse anyway.
            return Err(vec![SchemaError {
                path: String::new(),
                message: "invalid".into(),
            }]);
        }
        Err(errors)
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
