//! Installs OpenTelemetry for a process: spans through `tracing` and `tracing-opentelemetry`,
//! metrics through the global meter provider, both exported by OTLP over HTTP (protobuf) to
//! the endpoint of `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`), with the
//! SDK's batch span processor and periodic metric reader (their own threads, no async
//! runtime) and [`BlockingHttp`](crate::BlockingHttp) as the client.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithHttpConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;

use crate::BlockingHttp;

/// Keeps the providers; dropping it flushes what is buffered and stops the exporters.
pub struct OtelGuard {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
    }
}

/// Sets up the OTLP exporters and makes them this process's `tracing` subscriber and global
/// meter provider. `service` names the process (`service.name`).
pub fn install_otlp(service: &'static str) -> Result<OtelGuard, String> {
    let spans = SpanExporter::builder()
        .with_http()
        .with_http_client(BlockingHttp)
        .build()
        .map_err(|e| format!("OTLP span exporter: {e}"))?;
    let metrics = MetricExporter::builder()
        .with_http()
        .with_http_client(BlockingHttp)
        .build()
        .map_err(|e| format!("OTLP metric exporter: {e}"))?;
    let resource = Resource::builder().with_service_name(service).build();
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let meter = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());
    let layer = tracing_opentelemetry::layer().with_tracer(tracer.tracer("mcp-sansio"));
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|e| format!("a tracing subscriber is already installed: {e}"))?;
    Ok(OtelGuard { tracer, meter })
}
