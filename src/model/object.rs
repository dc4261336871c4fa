//! The declarations every model object shares: the derives, camelCase member names, and the two
//! members an MCP object ends with, `_meta` (on most) and the unknown members (`extra`), which
//! make a decode/encode round trip lossless.

/// Declares a model object with its own members, then `_meta` (when `meta:` documents it) and
/// `extra`. It derives `Clone, Debug, PartialEq` and serde with camelCase member names; further
/// derives (`Default`) go on the struct.
macro_rules! mcp_object {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $($members:tt)*
        }
        meta: $meta_doc:literal
    ) => {
        mcp_object! {
            $(#[$attr])*
            pub struct $name {
                $($members)*
                #[doc = $meta_doc]
                #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
                pub meta: Option<$crate::model::Meta>,
            }
        }
    };
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $($members:tt)*
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $($members)*
            /// Unknown members.
            #[serde(flatten)]
            pub extra: $crate::model::Extra,
        }
    };
}

/// Declares the result of a paginated `*/list` method: one page of items under its own member,
/// then `nextCursor`, `_meta` and the unknown members.
macro_rules! page_result {
    ($(#[$doc:meta])* $name:ident { $(#[$items_doc:meta])* $items:ident: $item:ty }) => {
        mcp_object! {
            $(#[$doc])*
            #[derive(Default)]
            pub struct $name {
                $(#[$items_doc])*
                pub $items: Vec<$item>,
                /// Where the next page starts; absent on the last page.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub next_cursor: Option<String>,
            }
            meta: "Result metadata."
        }
    };
}
