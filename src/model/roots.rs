//! Roots: the filesystem boundaries a client exposes, and the result of `roots/list`.

mcp_object! {
    /// A root directory or file the server may work in.
    #[derive(Default)]
    pub struct Root {
        /// A `file://` URI.
        pub uri: String,
        /// Display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
    }
    meta: "Metadata (2025-06-18)."
}

mcp_object! {
    /// Result of `roots/list`.
    #[derive(Default)]
    pub struct ListRootsResult {
        /// The roots.
        pub roots: Vec<Root>,
    }
    meta: "Result metadata."
}
