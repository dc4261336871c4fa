//! A proptest strategy for small JSON trees: the caller's leaves, and arrays and objects of
//! a bounded width whose member names come from the caller's key strategy (so the members
//! the code under test looks at turn up often).

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Trees of `leaf` values at most `depth` levels deep, about `size` nodes, arrays and objects
/// of fewer than `width` items, members named by `key`.
pub fn json_tree(
    leaf: BoxedStrategy<Value>,
    key: BoxedStrategy<String>,
    depth: u32,
    size: u32,
    width: usize,
) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(depth, size, width as u32, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..width).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..width)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Member names drawn from `keys`.
#[allow(dead_code)] // Not every test binary draws names from a list.
pub fn named(keys: Vec<&'static str>) -> BoxedStrategy<String> {
    prop::sample::select(keys).prop_map(str::to_owned).boxed()
}
