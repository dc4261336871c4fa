//! The HTTP server: accepts connections and hands each request to the core endpoint.
