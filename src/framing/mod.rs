//! Incremental push parsers and encoders that cut byte streams into frames.
