/**
 * The gateway's own metrics, kept in Triton's registry as custom metrics so
 * that `/metrics` serves them next to Triton's (no Prometheus client needed):
 *
 * - `triton_node_gateway_requests_total{protocol, route, status}`: requests
 *   answered (status: the HTTP status, or the gRPC code's name);
 * - `triton_node_gateway_request_duration_us{protocol, route}`: from the
 *   request's arrival to its response (histogram);
 * - `triton_node_gateway_overhead_us{protocol}`: that duration less the time
 *   the inference itself took in the library, for inference requests: what
 *   the gateway costs (histogram);
 * - `triton_node_gateway_in_flight`: requests being served (gauge);
 * - `triton_node_gateway_limits_store_up`: 1 while the guard's shared limits
 *   store (Redis) answers, 0 while its fallback applies (gauge; only with a store).
 */
import type { Metric, Server } from 'triton-node';
import type { Protocol } from './routes.js';

/** Microsecond buckets from 50 µs to 10 s. */
const BUCKETS_US = [
  50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000, 100_000, 250_000, 1_000_000, 10_000_000,
];

export const GATEWAY_METRICS = [
  'triton_node_gateway_requests_total',
  'triton_node_gateway_request_duration_us',
  'triton_node_gateway_overhead_us',
  'triton_node_gateway_in_flight',
  'triton_node_gateway_limits_store_up',
] as const;

/** Series in Triton's registry by key, each made on first use; none once the registry refused one (a stopped server). */
export class MetricSeries {
  readonly #server: Server;
  readonly #series = new Map<string, Metric>();
  #failed = false;

  constructor(server: Server) {
    this.#server = server;
  }

  get(key: string, make: () => Metric): Metric | undefined {
    if (this.#failed || this.#server.stopped) return undefined;
    let m = this.#series.get(key);
    if (m === undefined) {
      try {
        m = make();
      } catch {
        this.#failed = true;
        return undefined;
      }
      this.#series.set(key, m);
    }
    return m;
  }
}

export class GatewayMetrics {
  readonly #server: Server;
  readonly #series: MetricSeries;

  constructor(server: Server) {
    this.#server = server;
    this.#series = new MetricSeries(server);
  }

  #metric(key: string, make: () => Metric): Metric | undefined {
    return this.#series.get(key, make);
  }

  /** Counts a finished request and records its duration (and overhead, for inference). */
  record(protocol: Protocol, route: string, status: string, durationUs: number, inferUs?: number): void {
    if (this.#server.stopped) return;
    try {
      this.#metric(`c/${protocol}/${route}/${status}`, () =>
        this.#server.createMetric({
          kind: 'counter',
          name: 'triton_node_gateway_requests_total',
          description: 'Requests the gateway answered',
          labels: { protocol, route, status },
        }),
      )?.increment();
      this.#metric(`d/${protocol}/${route}`, () =>
        this.#server.createMetric({
          kind: 'histogram',
          name: 'triton_node_gateway_request_duration_us',
          description: 'Time from a request arriving at the gateway to its response, microseconds',
          labels: { protocol, route },
          buckets: BUCKETS_US,
        }),
      )?.observe(durationUs);
      if (inferUs !== undefined) {
        this.#metric(`o/${protocol}`, () =>
          this.#server.createMetric({
            kind: 'histogram',
            name: 'triton_node_gateway_overhead_us',
            description:
              "The gateway's own time per inference request (its duration less the inference's), microseconds",
            labels: { protocol },
            buckets: BUCKETS_US,
          }),
        )?.observe(Math.max(0, durationUs - inferUs));
      }
    } catch {
      // Metrics must never fail a request.
    }
  }

  /** Sets the in-flight gauge. */
  inFlight(n: number): void {
    try {
      this.#metric('in_flight', () =>
        this.#server.createMetric({
          kind: 'gauge',
          name: 'triton_node_gateway_in_flight',
          description: 'Requests the gateway is serving now',
        }),
      )?.set(n);
    } catch {
      // Metrics must never fail a request.
    }
  }

  /** Sets the limits store gauge: 1 reachable, 0 in fallback. */
  storeUp(up: boolean): void {
    try {
      this.#metric('store_up', () =>
        this.#server.createMetric({
          kind: 'gauge',
          name: 'triton_node_gateway_limits_store_up',
          description:
            "1 while the guard's shared limits store (Redis) answers, 0 while its fallback applies",
        }),
      )?.set(up ? 1 : 0);
    } catch {
      // Metrics must never fail a request.
    }
  }
}
