// Triton's traces of one inference (infer({ timing: true }).timing.traces):
// the request's own trace and, for an ensemble, a child trace per step with
// its model and its parent's id; and request.trace, which makes them
// OpenTelemetry spans under the caller's active span or a traceparent.
import { spawnSync } from 'node:child_process';
import { context, trace } from '@opentelemetry/api';
import { FIXTURES, LIBRARY_PATH, MODELS, useServer } from '@triton-node/test-support/helpers.js';
import { byName, inMemoryTracing, ns, parentOf } from '@triton-node/test-support/request/otel-helpers.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TimingTrace } from '../../lib/index.js';

const server = useServer(['identity_fp32', 'ensemble_identity']);

const ORDER = [
  'requestStartNs',
  'queueStartNs',
  'computeStartNs',
  'computeInputEndNs',
  'computeOutputStartNs',
  'computeEndNs',
  'requestEndNs',
] as const;

function within(inner: TimingTrace, outer: TimingTrace): void {
  expect(inner.timestampsBigNs.requestStartNs >= outer.timestampsBigNs.requestStartNs).toBe(true);
  expect(inner.timestampsBigNs.requestEndNs <= outer.timestampsBigNs.requestEndNs).toBe(true);
}

describe('timing.traces', () => {
  it("a plain request has one trace, its own: the model's, with the timing's timestamps", async () => {
    const r = await server().infer('identity_fp32', {
      inputs: { INPUT0: new Float32Array([1]) },
      timing: true,
    });
    const traces = r.timing!.traces;
    expect(traces).toHaveLength(1);
    const [own] = traces as [TimingTrace];
    expect(own.id).toBeGreaterThan(0);
    expect(own).toMatchObject({ parentId: 0, model: 'identity_fp32', version: 1 });
    expect(own.timestampsNs).toEqual(r.timing!.timestampsNs);
    for (const k of ORDER) expect(own.timestampsBigNs[k], k).toBeGreaterThan(0n);
    // The result stays JSON-serializable (the exact bigints are left out).
    const json = JSON.parse(JSON.stringify(r.toJSON()));
    expect(json.timing.traces).toEqual([
      { id: own.id, parentId: 0, model: 'identity_fp32', version: 1, timestampsNs: own.timestampsNs },
    ]);
  });

  it('an ensemble has a child trace per step, each inside its parent', async () => {
    const r = await server().infer('ensemble_identity', {
      inputs: { IN: new Float32Array([1, 2]) },
      timing: true,
    });
    const traces = r.timing!.traces;
    expect(traces.map((t) => t.model)).toEqual(['ensemble_identity', 'identity_fp32', 'identity_fp32']);
    const [own, first, second] = traces as [TimingTrace, TimingTrace, TimingTrace];
    expect(own.parentId).toBe(0);
    expect(new Set([own.id, first.id, second.id]).size).toBe(3);
    for (const step of [first, second]) {
      expect(step.parentId).toBe(own.id);
      expect(step.version).toBe(1);
      for (const k of ORDER) expect(step.timestampsBigNs[k], `${step.id} ${k}`).toBeGreaterThan(0n);
      within(step, own);
    }
    // The second step starts after the first produced its output.
    expect(second.timestampsBigNs.requestStartNs >= first.timestampsBigNs.computeEndNs).toBe(true);
    // Many in a row: each request ends (every trace released) and none leaks into the next.
    for (let i = 0; i < 20; i++) {
      const again = await server().infer('ensemble_identity', {
        inputs: { IN: new Float32Array([i]) },
        timing: true,
      });
      expect(again.timing!.traces).toHaveLength(3);
    }
  });
});

describe('request.trace: OpenTelemetry spans', () => {
  let exporter: ReturnType<typeof inMemoryTracing>;
  beforeAll(() => {
    exporter = inMemoryTracing();
  });
  afterEach(() => exporter.reset());

  it('are children of the active span, with Triton timestamps as start and end', async () => {
    const tracer = trace.getTracer('test');
    const outer = tracer.startSpan('caller');
    const r = await context.with(trace.setSpan(context.active(), outer), () =>
      server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([1]) }, trace: true }),
    );
    outer.end();
    const t = r.timing!.traces[0]!;
    const spans = byName(exporter.getFinishedSpans(), outer.spanContext().traceId);
    const model = spans.get('identity_fp32')![0]!;
    expect(parentOf(model)).toBe(outer.spanContext().spanId);
    expect(model.attributes).toMatchObject({
      'triton.model_name': 'identity_fp32',
      'triton.model_version': 1,
    });
    // Wall-clock times a constant away from Triton's steady clock.
    const offset = ns(model.startTime) - t.timestampsBigNs.requestStartNs;
    expect(ns(model.endTime) - offset).toBe(t.timestampsBigNs.requestEndNs);
    const within = (name: string, parent: string, from: bigint, to: bigint) => {
      const s = spans.get(name)![0]!;
      expect(parentOf(s), name).toBe(spans.get(parent)![0]!.spanContext().spanId);
      expect(ns(s.startTime) - offset, name).toBe(from);
      expect(ns(s.endTime) - offset, name).toBe(to);
    };
    const ts = t.timestampsBigNs;
    within('queue', 'identity_fp32', ts.queueStartNs, ts.computeStartNs);
    within('compute', 'identity_fp32', ts.computeStartNs, ts.computeEndNs);
    within('compute_input', 'compute', ts.computeStartNs, ts.computeInputEndNs);
    within('compute_infer', 'compute', ts.computeInputEndNs, ts.computeOutputStartNs);
    within('compute_output', 'compute', ts.computeOutputStartNs, ts.computeEndNs);
    expect(model.events.map((e) => e.name)).toEqual([
      'REQUEST_START',
      'QUEUE_START',
      'COMPUTE_START',
      'COMPUTE_INPUT_END',
      'COMPUTE_OUTPUT_START',
      'COMPUTE_END',
      'REQUEST_END',
    ]);
  });

  it('follow a traceparent, an ensemble step under its ensemble', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    const r = await server().infer('ensemble_identity', {
      inputs: { IN: new Float32Array([1]) },
      trace: `00-${traceId}-${spanId}-01`,
    });
    expect(r.timing!.traces).toHaveLength(3);
    const spans = byName(exporter.getFinishedSpans(), traceId);
    const ensemble = spans.get('ensemble_identity')![0]!;
    expect(parentOf(ensemble)).toBe(spanId);
    const steps = spans.get('identity_fp32')!;
    expect(steps).toHaveLength(2);
    for (const s of steps) expect(parentOf(s)).toBe(ensemble.spanContext().spanId);
    expect(spans.get('compute')).toHaveLength(2);
  });

  it('rejects what is not a boolean or a traceparent', async () => {
    for (const bad of ['00-xyz', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, 1]) {
      await expect(
        server().infer('identity_fp32', { inputs: { INPUT0: new Float32Array([1]) }, trace: bad as never }),
      ).rejects.toThrow(/Expected a boolean or a W3C traceparent .* for request.trace but received/);
    }
  });
});

describe('without @opentelemetry/api installed', () => {
  it('request.trace still gives the timing, and exports nothing', () => {
    const child = spawnSync(
      process.execPath,
      ['--import', `${FIXTURES}/hide-packages.mjs`, '--import', 'tsx', `${FIXTURES}/trace-without-otel.ts`],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          TRITON_NODE_HIDE_PACKAGES: '@opentelemetry/api',
          TEST_LIBRARY: LIBRARY_PATH,
          TEST_MODELS: MODELS,
        },
      },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({ traces: 1, model: 'identity_fp32' });
    expect(child.status).toBe(0);
  });
});
