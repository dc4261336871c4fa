#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::sse_transport_router(data));
