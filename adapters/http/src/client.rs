//! The HTTP client: performs the requests the core client builds.
