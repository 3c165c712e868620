// Prometheus metrics: Triton's counters move by exactly the requests sent,
// custom metrics of every kind show with their labels, and the handler
// serves text a Prometheus parser reads (checked with a parser package).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readUntil, requestsSettled, serverOptions, useServer } from '@triton-node/test-support/helpers.js';
import { histogramSeries, parseExposition } from '@triton-node/test-support/metrics/prometheus.js';
import type { PrometheusFamily } from 'parse-prometheus-text-format';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  type Metric,
  PROMETHEUS_CONTENT_TYPE,
  Server,
  type ServerOptions,
  TritonError,
} from '../../lib/index.js';
import {
  type MetricsHandler,
  STREAM_BETWEEN_RESPONSES_METRIC,
  STREAM_FIRST_RESPONSE_METRIC,
  createMetricsHandler,
} from '../../lib/metrics/metrics.js';

const server = useServer(['identity_fp32', 'identity_nobatch']);

const parse = parseExposition;

function family(families: PrometheusFamily[], name: string): PrometheusFamily | undefined {
  return families.find((f) => f.name === name);
}

/** The value of the series of `name` whose labels include `labels`. */
function sample(
  families: PrometheusFamily[],
  name: string,
  labels: Record<string, string>,
): number | undefined {
  const f = family(families, name);
  const m = f?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  return m?.value === undefined ? undefined : Number(m.value);
}

async function scrape(): Promise<PrometheusFamily[]> {
  return parse(await server().metrics());
}

/** Serves `handler` on an ephemeral localhost port for the duration of `fn`. */
async function withHttp<T>(handler: MetricsHandler, fn: (url: string) => Promise<T>): Promise<T> {
  const srv = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  try {
    return await fn(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/metrics`);
  } finally {
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
}

const MODEL = { model: 'identity_nobatch', version: '1' };

describe("Triton's metrics", () => {
  it('serve Prometheus text with the nv_inference families', async () => {
    const text = await server().metrics();
    expect(typeof text).toBe('string');
    const families = parse(text);
    for (const name of [
      'nv_inference_request_success',
      'nv_inference_request_failure',
      'nv_inference_count',
      'nv_inference_exec_count',
      'nv_inference_request_duration_us',
      'nv_inference_queue_duration_us',
      'nv_inference_compute_input_duration_us',
      'nv_inference_compute_infer_duration_us',
      'nv_inference_compute_output_duration_us',
    ]) {
      expect(family(families, name)?.type, name).toBe('COUNTER');
      expect(sample(families, name, MODEL), `${name} for identity_nobatch`).toBeTypeOf('number');
    }
    // Every failure reason has a series from load on.
    for (const reason of ['OTHER', 'BACKEND', 'CANCELED', 'REJECTED']) {
      expect(sample(families, 'nv_inference_request_failure', { ...MODEL, reason })).toBeTypeOf('number');
    }
  });

  it('count exactly the successes and failures sent (validation failures nowhere)', async () => {
    const read = async () => {
      const f = await scrape();
      return {
        success: sample(f, 'nv_inference_request_success', MODEL)!,
        backend: sample(f, 'nv_inference_request_failure', { ...MODEL, reason: 'BACKEND' })!,
        count: sample(f, 'nv_inference_count', MODEL)!,
        exec: sample(f, 'nv_inference_exec_count', MODEL)!,
        requestUs: sample(f, 'nv_inference_request_duration_us', MODEL)!,
      };
    };
    const before = await read();
    const successes = 7;
    const failures = 3;
    for (let i = 0; i < successes; i++) {
      await server().infer('identity_nobatch', { inputs: { INPUT0: new Float32Array([i, 1, 2]) } });
    }
    for (let i = 0; i < failures; i++) {
      // Too small a destination: the allocator fails the response, which
      // Triton counts as a backend failure of an executed request.
      await expect(
        server().infer('identity_nobatch', {
          inputs: { INPUT0: new Float32Array([1, 2, 3]) },
          outputs: { OUTPUT0: { into: new Float32Array(1) } },
        }),
      ).rejects.toBeInstanceOf(TritonError);
    }
    // Refused before the scheduler: counted nowhere.
    await expect(
      server().infer('identity_nobatch', { inputs: { NOT_AN_INPUT: new Float32Array([1]) } }),
    ).rejects.toThrow();

    const expected = (m: Awaited<ReturnType<typeof read>>) =>
      m.success - before.success === successes &&
      m.backend - before.backend === failures &&
      m.exec - before.exec === successes + failures;
    // Triton counts after the response (identity: before the release):
    // once every request is released the counters are final.
    expect(await requestsSettled()).toBe(true);
    const after = await readUntil(read, expected);
    expect(after.success - before.success).toBe(successes);
    expect(after.backend - before.backend).toBe(failures);
    expect(after.count - before.count).toBe(successes);
    expect(after.exec - before.exec).toBe(successes + failures);
    expect(after.requestUs).toBeGreaterThan(before.requestUs);
  });
});

describe('custom metrics', () => {
  it('show counters, gauges and histograms with their labels and values', async () => {
    const created: Metric[] = [];
    try {
      const c1 = server().createMetric({
        kind: 'counter',
        name: 'tn_test_requests_total',
        description: 'Requests seen by the test',
        labels: { route: '/infer', tier: 'gold' },
      });
      const c2 = server().createMetric({
        kind: 'counter',
        name: 'tn_test_requests_total',
        description: 'Requests seen by the test',
        labels: { route: '/health' },
      });
      const g = server().createMetric({
        kind: 'gauge',
        name: 'tn_test_queue_depth',
        description: 'Queue depth',
        labels: { pool: 'a' },
      });
      const h = server().createMetric({
        kind: 'histogram',
        name: 'tn_test_payload_bytes',
        description: 'Payload sizes',
        labels: { model: 'm1' },
        buckets: [0.5, 1, 5],
      });
      created.push(c1, c2, g, h);
      c1.increment();
      c1.increment(2.5);
      c2.increment(7);
      g.set(10);
      g.increment(-3.25);
      for (const v of [0.3, 0.7, 3, 10, 0.5]) h.observe(v);
      expect(c1.value()).toBe(3.5);
      expect(g.value()).toBe(6.75);

      const families = await scrape();
      const counter = family(families, 'tn_test_requests_total')!;
      expect(counter.type).toBe('COUNTER');
      expect(counter.help).toBe('Requests seen by the test');
      expect(sample(families, 'tn_test_requests_total', { route: '/infer', tier: 'gold' })).toBe(3.5);
      expect(sample(families, 'tn_test_requests_total', { route: '/health' })).toBe(7);
      expect(family(families, 'tn_test_queue_depth')?.type).toBe('GAUGE');
      expect(sample(families, 'tn_test_queue_depth', { pool: 'a' })).toBe(6.75);
      expect(family(families, 'tn_test_payload_bytes')?.type).toBe('HISTOGRAM');
      const series = histogramSeries(await server().metrics(), 'tn_test_payload_bytes', { model: 'm1' })!;
      expect(series.count).toBe(5);
      expect(series.sum).toBeCloseTo(14.5, 9);
      expect(series.buckets).toEqual([
        [0.5, 2],
        [1, 3],
        [5, 4],
        [Number.POSITIVE_INFINITY, 5],
      ]);

      // Disposing a series removes it from the text; the family goes with the last one.
      c2.dispose();
      const afterOne = await scrape();
      expect(sample(afterOne, 'tn_test_requests_total', { route: '/health' })).toBeUndefined();
      expect(sample(afterOne, 'tn_test_requests_total', { route: '/infer' })).toBe(3.5);
      for (const m of created) m.dispose();
      const afterDispose = await scrape();
      for (const name of ['tn_test_requests_total', 'tn_test_queue_depth', 'tn_test_payload_bytes']) {
        expect(family(afterDispose, name)?.metrics ?? []).toEqual([]);
      }
    } finally {
      for (const m of created) m.dispose();
    }
  });

  it('share one series between two metrics with the same name and labels', async () => {
    const spec = {
      kind: 'counter',
      name: 'tn_test_shared',
      description: 'shared',
      labels: { k: 'v' },
    } as const;
    const a = server().createMetric(spec);
    const b = server().createMetric(spec);
    try {
      a.increment(1);
      b.increment(100);
      expect(a.value()).toBe(101);
      expect(sample(await scrape(), 'tn_test_shared', { k: 'v' })).toBe(101);
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  it('refuse wrong use with TypeErrors naming the metric', () => {
    const counter = server().createMetric({ kind: 'counter', name: 'tn_test_rules_c', labels: { a: 'b' } });
    const gauge = server().createMetric({ kind: 'gauge', name: 'tn_test_rules_g', labels: {} });
    const hist = server().createMetric({
      kind: 'histogram',
      name: 'tn_test_rules_h',
      labels: {},
      buckets: [1, 2],
    });
    try {
      expect(() => counter.increment(-1)).toThrow(/counter 'tn_test_rules_c\{a="b"\}'.*only go up/);
      expect(() => counter.set(5)).toThrow(TypeError);
      expect(() => counter.observe(1)).toThrow(TypeError);
      expect(() => gauge.observe(1)).toThrow(/gauge 'tn_test_rules_g'/);
      expect(() => gauge.set(Number.NaN)).toThrow(/finite number/);
      expect(() => hist.increment(1)).toThrow(/histogram 'tn_test_rules_h'.*observe/);
      expect(() => hist.set(1)).toThrow(TypeError);
      expect(() => hist.value()).toThrow(TypeError);
      // The counter kept its value through the refused calls.
      expect(counter.value()).toBe(0);
    } finally {
      counter.dispose();
      gauge.dispose();
      hist.dispose();
    }
    expect(() => counter.increment()).toThrow(/after dispose/);
    counter.dispose(); // idempotent

    const create = (spec: object) => () => server().createMetric(spec as never);
    expect(create({ kind: 'counter', name: 'bad name-with-dash' })).toThrow(/\[a-zA-Z_:\]\[a-zA-Z0-9_:\]\*/);
    expect(create({ kind: 'counter', name: '9starts_with_digit' })).toThrow(TypeError);
    expect(create({ kind: 'summary', name: 'tn_x' })).toThrow(
      /kind must be 'counter', 'gauge' or 'histogram'/,
    );
    expect(create({ kind: 'histogram', name: 'tn_x' })).toThrow(/needs buckets/);
    expect(create({ kind: 'histogram', name: 'tn_x', buckets: [5, 1] })).toThrow(/strictly increasing/);
    expect(create({ kind: 'histogram', name: 'tn_x', buckets: [1, 1] })).toThrow(/strictly increasing/);
    expect(create({ kind: 'histogram', name: 'tn_x', buckets: [1, Number.POSITIVE_INFINITY] })).toThrow(
      /finite/,
    );
    expect(create({ kind: 'counter', name: 'tn_x', buckets: [1] })).toThrow(/buckets are for histograms/);
    expect(create({ kind: 'counter', name: 'tn_x', labels: { 'bad-label': 'v' } })).toThrow(/label name/);
    expect(create({ kind: 'counter', name: 'tn_x', labels: { n: 1 } })).toThrow(/label 'n' must be a string/);
    expect(create({ kind: 'histogram', name: 'tn_x', labels: { le: '1' }, buckets: [1] })).toThrow(/'le'/);
    expect(create(null as never)).toThrow(TypeError);
    // None of the refused specs left a family behind.
    return server()
      .metrics()
      .then((text) => expect(text).not.toMatch(/^# TYPE tn_x /m));
  });

  it('escape label values so that they read back exactly', async () => {
    const value = 'C:\\dir "quoted"\nnext line ünï';
    const g = server().createMetric({
      kind: 'gauge',
      name: 'tn_test_escaping',
      description: 'escaping',
      labels: { path: value },
    });
    try {
      g.set(1);
      expect(sample(await scrape(), 'tn_test_escaping', { path: value })).toBe(1);
    } finally {
      g.dispose();
    }
    expect(() =>
      server().createMetric({ kind: 'gauge', name: 'tn_test_bad_help', description: 'two\nlines' }),
    ).toThrow(/description/);
  });

  it('print no HELP line for a family without description (as prometheus-cpp does)', async () => {
    const c = server().createMetric({ kind: 'counter', name: 'tn_test_no_help', labels: { a: 'b' } });
    try {
      c.increment(2);
      const text = await server().metrics();
      expect(text).toMatch(/^# TYPE tn_test_no_help counter$/m);
      expect(text).not.toMatch(/^# HELP tn_test_no_help/m);
      expect(sample(parse(text), 'tn_test_no_help', { a: 'b' })).toBe(2);
    } finally {
      c.dispose();
    }
  });

  it('print bucket bounds and values as Triton does (C++ stream, 16 significant digits)', async () => {
    const h = server().createMetric({
      kind: 'histogram',
      name: 'tn_test_bounds',
      description: 'bounds',
      labels: {},
      buckets: [0.5, 50, 100, 2500, 30000],
    });
    try {
      h.observe(10.168110000000013);
      const text = await server().metrics();
      const bounds = [...text.matchAll(/^tn_test_bounds_bucket\{le="([^"]+)"\}/gm)].map((m) => m[1]);
      expect(bounds).toEqual(['0.5', '50', '100', '2500', '30000', '+Inf']);
      expect(text).toMatch(/^tn_test_bounds_sum 10\.16811000000001$/m);
    } finally {
      h.dispose();
    }
  });

  it('keep one kind per name', () => {
    const c = server().createMetric({ kind: 'counter', name: 'tn_test_kind', labels: {} });
    try {
      expect(() => server().createMetric({ kind: 'gauge', name: 'tn_test_kind', labels: {} })).toThrow(
        /already a counter/,
      );
    } finally {
      c.dispose();
    }
  });

  it('accept a histogram with no buckets (only +Inf), as Triton does', async () => {
    const h = server().createMetric({
      kind: 'histogram',
      name: 'tn_test_inf_only',
      labels: { x: 'y' },
      buckets: [],
    });
    try {
      h.observe(2);
      const series = histogramSeries(await server().metrics(), 'tn_test_inf_only', { x: 'y' })!;
      expect(series.count).toBe(1);
      expect(series.sum).toBe(2);
      expect(series.buckets).toEqual([[Number.POSITIVE_INFINITY, 1]]);
    } finally {
      h.dispose();
    }
  });
});

describe('the metrics option', () => {
  it("{ enabled } turns Triton's own metrics on and off; streaming histograms work either way", async () => {
    const texts: Record<string, string> = {};
    const variants: Array<[string, ServerOptions['metrics']]> = [
      ['object on', { enabled: true }],
      ['default', {}],
      ['object off', { enabled: false, streaming: true }],
      ['boolean off', false],
    ];
    for (const [label, metrics] of variants) {
      const s = await Server.create(serverOptions({ metrics }));
      try {
        await s.loadModel('square_int32');
        for await (const _ of s.model('square_int32').stream({ inputs: { IN: new Int32Array([2]) } })) {
          // drain
        }
        texts[label] = await s.metrics();
      } finally {
        await s.stop();
      }
    }
    expect(texts['object on']).toContain('nv_inference_request_success');
    expect(texts.default).toContain('nv_inference_request_success');
    // Off, Triton still lists its families and series but counts nothing.
    const success = /^nv_inference_request_success\{model="square_int32",version="1"\} (\S+)$/m;
    expect(texts['object off']).toMatch(success);
    expect(texts['object off']?.match(success)?.[1]).toBe('0');
    expect(texts['boolean off']?.match(success)?.[1]).toBe('0');
    expect(texts['object off']).toContain(STREAM_FIRST_RESPONSE_METRIC);
    expect(texts['object on']).not.toContain(STREAM_FIRST_RESPONSE_METRIC);
  });
});

describe('streaming histograms', () => {
  it('are absent unless Server.create asked for them', async () => {
    const text = await server().metrics();
    expect(text).not.toContain(STREAM_FIRST_RESPONSE_METRIC);
    expect(text).not.toContain(STREAM_BETWEEN_RESPONSES_METRIC);
  });
});

describe('metricsHandler', () => {
  it('serves parseable Triton text over node:http with the Prometheus content type', async () => {
    await withHttp(server().metricsHandler(), async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
      const families = parse(await res.text());
      expect(family(families, 'nv_inference_request_success')).toBeDefined();
    });
  });

  it("joins a prom-client registry's metrics after Triton's", async () => {
    const registry = new Registry();
    const own = new Counter({
      name: 'tn_service_requests_total',
      help: 'service requests',
      registers: [registry],
    });
    own.inc(4);
    await withHttp(server().metricsHandler(registry), async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const families = parse(await res.text());
      expect(family(families, 'nv_inference_count')?.type).toBe('COUNTER');
      expect(sample(families, 'tn_service_requests_total', {})).toBe(4);
    });
  });

  it('answers HEAD without a body and other methods with 405', async () => {
    await withHttp(server().metricsHandler(), async (url) => {
      const head = await fetch(url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      const post = await fetch(url, { method: 'POST', body: 'x' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    });
  });

  it('answers 500 with the reason when the registry fails or names clash', async () => {
    const failing = {
      metrics: async () => {
        throw new Error('registry exploded');
      },
    };
    await withHttp(server().metricsHandler(failing), async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(500);
      expect(await res.text()).toContain('registry exploded');
    });
    const clashing = new Registry();
    new Counter({ name: 'nv_inference_count', help: 'clash', registers: [clashing] });
    await withHttp(server().metricsHandler(clashing), async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(500);
      expect(await res.text()).toContain("'nv_inference_count'");
    });
  });

  it('refuses an OpenMetrics registry and a missing metrics() when built', () => {
    expect(() =>
      server().metricsHandler({
        metrics: () => '',
        contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
      }),
    ).toThrow(/Prometheus text/);
    expect(() => server().metricsHandler({} as never)).toThrow(/metrics\(\)/);
    expect(() => createMetricsHandler('text' as never)).toThrow(TypeError);
  });
});

// Last: stops the file's server.
describe('metricsHandler of a stopped server', () => {
  it('answers 500 instead of throwing or leaving a rejection', async () => {
    const handler = server().metricsHandler();
    await server().stop();
    await withHttp(handler, async (url) => {
      const res = await fetch(url);
      expect(res.status).toBe(500);
      expect(await res.text()).toMatch(/stopped/);
    });
    expect(() => server().createMetric({ kind: 'counter', name: 'tn_after_stop' })).toThrow(TritonError);
  });
});
