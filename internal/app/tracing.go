package app

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Option changes what New builds.
type Option func(*options)

type options struct {
	tracer trace.TracerProvider
}

// WithTracerProvider traces the service with tp instead of what the OTEL_*
// environment asks for (tests use an in-memory recorder).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp }
}

// tracingShutdownTimeout bounds the flush of the last spans at exit.
const tracingShutdownTimeout = 5 * time.Second

// openTracing returns the tracer provider the standard OpenTelemetry
// environment asks for, or nil (tracing off: no span is started anywhere).
// Tracing is off unless OTEL_TRACES_EXPORTER names an exporter other than
// "none", or, with it unset, an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
// OTEL_SDK_DISABLED=true turns it off whatever else is set. The exporter
// (otlp over http/protobuf or grpc, console), its endpoint, headers and
// TLS, the sampler (OTEL_TRACES_SAMPLER), the batching (OTEL_BSP_*) and
// the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES; the service is
// "skillsvc" by default) are read from the environment by the SDK.
// shutdown flushes the spans not yet exported.
func openTracing(ctx context.Context, log *slog.Logger) (_ trace.TracerProvider, shutdown func(), err error) {
	if !tracingEnabled(os.Getenv) {
		return nil, func() {}, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, nil, err
	}
	if autoexport.IsNoneSpanExporter(exp) {
		return nil, func() {}, nil
	}
	// Later options win: OTEL_SERVICE_NAME overrides the default name.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "skillsvc")),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID(),
		resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("tracing: exporting spans", "exporter", envOr("OTEL_TRACES_EXPORTER", "otlp"),
		"endpoint", envOr("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("tracing: flushing the last spans", "err", err)
		}
	}, nil
}

// tracingEnabled is the rule of openTracing: off unless the environment
// names an exporter or an OTLP endpoint.
func tracingEnabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp != "" {
		return exp != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
