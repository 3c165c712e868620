/**
 * deploy/grafana: every query of the dashboard names only metrics that
 * /metrics actually exposes, read from a gateway over a server that has run
 * what each panel shows (inferences, a stream with streaming metrics on, a
 * failed request, a deployment, a streamed OpenAI completion on the
 * library's LLM), and the LLM panels (TTFT, TPOT, tokens per second) are there.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { llmUnderTest } from '@triton-node/test-support/backends/llm-helpers.js';
import { MODELS, skipIf, useServer } from '@triton-node/test-support/helpers.js';
import type { Server } from 'triton-node';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { OPENAI_METRICS } from '../../lib/openai/index.js';
import { useGateway } from '../helpers.js';

const DASHBOARD = fileURLToPath(new URL('../../kit/grafana/triton-node-dashboard.json', import.meta.url));

// The OpenAI panels' metrics come from a generation on the library's LLM (absent: those panels skip).
const llm = llmUnderTest();
const models = ['identity_fp32', 'repeat_int32', 'two_versions'];
const repo = mkdtempSync(join(tmpdir(), 'triton-node-grafana-'));
for (const m of models) cpSync(join(MODELS, m), join(repo, m), { recursive: true });
if (llm.skip === false && existsSync(join(MODELS, llm.model)))
  cpSync(join(MODELS, llm.model), join(repo, llm.model), { recursive: true });
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const server = useServer(llm.skip === false ? [...models, llm.model] : models, {
  modelRepository: [repo, ...(llm.skip === false ? llm.repositories.filter((r) => r !== MODELS) : [])],
  metrics: { streaming: true },
});
const gw = useGateway(server, { openai: { llm: { model: llm.model } } });
const isOpenAIMetric = (name: string) => name.startsWith('triton_node_openai_');

/** PromQL words that are not metric names. */
const PROMQL = new Set([
  'sum',
  'avg',
  'min',
  'max',
  'count',
  'by',
  'without',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'clamp_min',
  'clamp_max',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'offset',
]);

/** The metric names a PromQL expression reads. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/(?<![\w:])\d+(\.\d+)?(e[-+]?\d+)?/gi, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  const words = stripped.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(words.filter((w) => !PROMQL.has(w)))];
}

async function exercise(s: Server): Promise<void> {
  const base = gw().url;
  const infer = (model: string) =>
    request(`${base}/v2/models/${model}/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }] }),
    }).then((r) => r.body.dump());
  await infer('identity_fp32');
  await infer('no_such_model');
  // A request that fails inside Triton counts as a failure.
  await request(`${base}/v2/models/identity_fp32/infer`, {
    method: 'POST',
    body: JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [9, 1], data: Array(9).fill(0) }],
    }),
  }).then((r) => r.body.dump());
  for await (const r of s.model('repeat_int32').stream({
    inputs: { IN: new Int32Array([1, 2]), DELAY: new Uint32Array([0, 0]), WAIT: new Uint32Array([0]) },
  }))
    r.dispose();
  await s.deploy('two_versions', { version: 1 });
  if (llm.skip !== false) return;
  // Three tokens streamed: one TTFT and one TPOT observation, generated and prompt tokens counted.
  const res = await request(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'llm', prompt: 'one two three', max_tokens: 3, stream: true }),
  });
  expect(res.statusCode).toBe(200);
  await res.body.text();
}

describe('deploy/grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  };

  it('reads metric names out of PromQL', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, model) (rate(foo_bucket{a="b"}[5m]))) / clamp_min(bar_total, 1e-9)',
      ),
    ).toEqual(['foo_bucket', 'bar_total']);
  });

  it('names only metrics that /metrics exposes, in every query', async () => {
    await exercise(server());
    const res = await request(`${gw().url}/metrics`);
    const text = await res.body.text();
    const exposed = new Set(
      text
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => l.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/)![0]),
    );
    const queries = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
    expect(queries.length).toBeGreaterThan(10);
    const missing = queries.flatMap((q) =>
      metricNames(q.expr)
        .filter((n) => !exposed.has(n))
        // Without an LLM here, no OpenAI metric exists to check (the next test says so).
        .filter((n) => llm.skip === false || !isOpenAIMetric(n))
        .map((n) => `${q.panel}: ${n}`),
    );
    expect(missing).toEqual([]);
  });

  it('shows the OpenAI routes: TTFT and TPOT p50 / p99 per model, and tokens per second', (ctx) => {
    skipIf(ctx, llm.skip);
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const [ttft, tpot, generated, prompt] = OPENAI_METRICS;
    for (const histogram of [ttft, tpot])
      for (const q of ['0.5', '0.99'])
        expect(exprs, `${histogram} p${q}`).toContain(
          `histogram_quantile(${q}, sum by (le, model) (rate(${histogram}_bucket[5m])))`,
        );
    expect(exprs).toContain(`sum by (model) (rate(${generated}[1m]))`);
    expect(exprs).toContain(`sum by (model) (rate(${prompt}[1m]))`);
    // Every OpenAI metric the dashboard reads is one the routes define (and, above, expose).
    const named = exprs.flatMap(metricNames).filter(isOpenAIMetric);
    expect(named.length).toBeGreaterThanOrEqual(5);
    const defined = OPENAI_METRICS.flatMap((m) => [m, `${m}_bucket`, `${m}_sum`, `${m}_count`]);
    expect(named.filter((n) => !defined.includes(n))).toEqual([]);
  });
});
