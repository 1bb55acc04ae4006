/**
 * An OTLP/HTTP collector for tests: a node:http server on a random port of
 * 127.0.0.1 that takes what effect's own OTLP exporter sends as JSON
 * (`POST /v1/traces`, `/v1/metrics`, `/v1/logs`), keeps the spans and the
 * metrics with their attributes decoded to plain values, and answers 200.
 *
 * `layer(collector)` installs effect's exporter (`Otlp.layerJson`, over
 * effect's fetch-based `HttpClient`) pointed at it, with a fresh metric
 * registry; `exported` flushes the exporters so everything recorded so far
 * has arrived.
 */
import { Effect, Layer, Metric } from "effect"
import type { Scope } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp, OtlpExporter, OtlpMetrics, OtlpSerialization } from "effect/observability"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** An OTLP attribute value (`AnyValue`), as JSON. */
interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly doubleValue?: number
  readonly boolValue?: boolean
  readonly arrayValue?: { readonly values: ReadonlyArray<AnyValue> }
}

type KeyValues = ReadonlyArray<{ readonly key: string; readonly value: AnyValue }>

const valueOf = (value: AnyValue): unknown =>
  value.stringValue ?? (value.intValue !== undefined
    ? Number(value.intValue)
    : value.doubleValue ?? value.boolValue ?? value.arrayValue?.values.map(valueOf))

const attributesOf = (keyValues: KeyValues | undefined): Record<string, unknown> =>
  Object.fromEntries((keyValues ?? []).map(({ key, value }) => [key, valueOf(value)]))

/** A span as the collector received it. */
export interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Record<string, unknown>
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string }
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Record<string, unknown> }>
}

/** One histogram data point as received. */
export interface HistogramPoint {
  readonly attributes: Record<string, unknown>
  readonly count: number
  readonly sum: number
  readonly bucketCounts: ReadonlyArray<number>
  readonly explicitBounds: ReadonlyArray<number>
}

/** One metric of one export. */
export interface MetricData {
  readonly name: string
  readonly unit: string
  readonly description: string
  readonly histogram?: { readonly dataPoints: ReadonlyArray<HistogramPoint> }
}

/** What the collector has received so far. */
export interface Collector {
  readonly url: string
  readonly spans: Array<Span>
  /** Each metrics export, in arrival order (each holds the cumulative state). */
  readonly metricExports: Array<ReadonlyArray<MetricData>>
  /** Every request body, as text. */
  readonly bodies: Array<string>
}

interface RawSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes?: KeyValues
  readonly status: { readonly code: number; readonly message?: string }
  readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: KeyValues }>
}

interface RawMetric {
  readonly name: string
  readonly unit: string
  readonly description: string
  readonly histogram?: { readonly dataPoints: ReadonlyArray<Omit<HistogramPoint, "attributes"> & { readonly attributes?: KeyValues }> }
}

const receive = (collector: Collector, path: string | undefined, body: string): void => {
  collector.bodies.push(body)
  const data = JSON.parse(body) as Record<string, ReadonlyArray<Record<string, ReadonlyArray<Record<string, unknown>>>>>
  if (path === "/v1/traces") {
    for (const resource of data.resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans as ReadonlyArray<RawSpan>) {
          collector.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            status: span.status,
            events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) }))
          })
        }
      }
    }
  } else if (path === "/v1/metrics") {
    const metrics: Array<MetricData> = []
    for (const resource of data.resourceMetrics ?? []) {
      for (const scope of resource.scopeMetrics ?? []) {
        for (const metric of scope.metrics as ReadonlyArray<RawMetric>) {
          metrics.push({
            name: metric.name,
            unit: metric.unit,
            description: metric.description,
            ...(metric.histogram === undefined ? {} : {
              histogram: {
                dataPoints: metric.histogram.dataPoints.map((point) => ({ ...point, attributes: attributesOf(point.attributes) }))
              }
            })
          })
        }
      }
    }
    collector.metricExports.push(metrics)
  }
}

/** The collector as a scoped resource: listening while the scope is open. */
export const make: Effect.Effect<Collector, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly collector: Collector; readonly server: http.Server; readonly sockets: Set<Socket> }>((resolve) => {
      const sockets = new Set<Socket>()
      const holder: { collector?: Collector } = {}
      const server = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          if (holder.collector !== undefined) receive(holder.collector, request.url, Buffer.concat(chunks).toString("utf8"))
          response.writeHead(200, { "content-type": "application/json" })
          response.end("{}")
        })
      })
      server.on("connection", (socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        holder.collector = { url: `http://127.0.0.1:${port}`, spans: [], metricExports: [], bodies: [] }
        resolve({ collector: holder.collector, server, sockets })
      })
    })
  ),
  ({ server, sockets }) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
    )
).pipe(Effect.map(({ collector }) => collector))

/**
 * Effect's OTLP exporter (JSON over fetch) sending to `collector`, with a
 * metric registry of its own; exports only when flushed (or at shutdown).
 */
export const layer = (collector: Collector): Layer.Layer<OtlpExporter.Flusher> =>
  Otlp.layerJson({
    baseUrl: collector.url,
    resource: { serviceName: "loopwork-test" },
    tracerExportInterval: "1 hour",
    metricsExportInterval: "1 hour",
    loggerExportInterval: "1 hour"
  }).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provideMerge(Layer.succeed(Metric.MetricRegistry, new Map()))
  )

/** Effect's OTLP metrics exporter alone (no tracer), sending to `collector`, with a metric registry of its own. */
export const metricsLayer = (collector: Collector): Layer.Layer<OtlpExporter.Flusher> =>
  OtlpMetrics.layer({ url: `${collector.url}/v1/metrics`, resource: { serviceName: "loopwork-test" }, exportInterval: "1 hour" }).pipe(
    Layer.provide([FetchHttpClient.layer, OtlpSerialization.layerJson]),
    Layer.provideMerge(Layer.succeed(Metric.MetricRegistry, new Map()))
  )

/** Sends everything recorded so far to the collector. */
export const exported: Effect.Effect<void, never, OtlpExporter.Flusher> = Effect.flatMap(
  Effect.service(OtlpExporter.Flusher),
  (flusher) => flusher.flush
)

/** The latest export of the metric named `name`. */
export const latestMetric = (collector: Collector, name: string): MetricData | undefined => {
  for (let i = collector.metricExports.length - 1; i >= 0; i--) {
    const found = collector.metricExports[i].find((metric) => metric.name === name)
    if (found !== undefined) return found
  }
  return undefined
}

/** The spans as a tree, one line per span (`name [status]`), children indented under their parent, in arrival order. */
export const tree = (spans: ReadonlyArray<Span>, label: (span: Span) => string = (span) => span.name): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const ids = new Set(spans.map((span) => span.spanId))
  const visit = (span: Span, depth: number) => {
    lines.push(`${"  ".repeat(depth)}${label(span)}`)
    for (const child of spans) if (child.parentSpanId === span.spanId) visit(child, depth + 1)
  }
  for (const span of spans) if (span.parentSpanId === undefined || !ids.has(span.parentSpanId)) visit(span, 0)
  return lines
}
