/**
 * Rate limits under load: autocannon drives 256 connections from two
 * tenants with different request limits at once, each offering far more
 * than its limit. Each tenant's accepted rate must stay within 5% of its
 * limit (the other tenant's traffic does not take from it), and the audit
 * log must hold exactly one line per request, accepted and refused alike.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, hashApiKey } from '../../lib/gateway/index.js';
import { useServer } from '../helpers.js';
import { useGateway } from './helpers.js';

const server = useServer(['identity_fp32']);
const auditFile = join(mkdtempSync(join(tmpdir(), 'guard-limits-')), 'audit.log');
const KEY = { fast: 'fast-tenant-key-0123456789', slow: 'slow-tenant-key-0123456789' };
const LIMIT = { fast: 200, slow: 50 };
const BURST = 20;
const options: GatewayOptions = {
  guard: {
    apiKeys: [
      { sha256: hashApiKey(KEY.fast), tenant: 'fast' },
      { sha256: hashApiKey(KEY.slow), tenant: 'slow' },
    ],
    tenants: {
      fast: { models: ['identity_fp32'], limits: { requestsPerSecond: LIMIT.fast, requestBurst: BURST } },
      slow: { models: ['identity_fp32'], limits: { requestsPerSecond: LIMIT.slow, requestBurst: BURST } },
    },
    audit: { file: auditFile },
  },
};
const gw = useGateway(server, options);

const BODY = JSON.stringify({
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
});
/**
 * Requests each tenant sends as fast as its connections go (autocannon's
 * `overallRate` sends each connection's share in a burst at the start of
 * every second, which a small bucket would mostly refuse); a fixed amount
 * rather than a duration, so no request is cut off mid-flight and the audit
 * count is exact. TENANT_REQUESTS sets it (the run should last 5-10 s).
 */
const AMOUNT = Number(process.env.TENANT_REQUESTS ?? 20_000);

function load(tenant: 'fast' | 'slow') {
  const started = performance.now();
  return autocannon({
    url: `${gw().url}/v2/models/identity_fp32/infer`,
    method: 'POST',
    body: BODY,
    headers: { 'content-type': 'application/json', 'x-api-key': KEY[tenant] },
    connections: 128,
    amount: AMOUNT,
    timeout: 30,
  }).then((result) => ({ result, seconds: (performance.now() - started) / 1000 }));
}

describe('rate limits under load', () => {
  it('holds two tenants at 256 connections to their own limits within 5%, one audit line per request', async () => {
    const [fast, slow] = await Promise.all([load('fast'), load('slow')]);
    await new Promise((r) => setTimeout(r, 200));
    gw().gateway.guard!.flush();
    const lines = readFileSync(auditFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { tenant: string; status: number; time: string });
    const report: Record<string, unknown> = {};
    for (const [tenant, run] of [
      ['fast', fast],
      ['slow', slow],
    ] as const) {
      const { result, seconds } = run;
      const answered = result['2xx'] + result.non2xx;
      const mine = lines.filter((l) => l.tenant === tenant);
      const accepted = mine.filter((l) => l.status === 200).length;
      const refused = mine.filter((l) => l.status === 429).length;
      // The accepted rate while the tenant offered more than its limit: from
      // its first audit line to its last 429 (autocannon's start-up and the
      // tail, when its last connections trickle out, are not the limiter's
      // doing), less the burst the bucket starts with.
      const time = (l: { time: string }) => Date.parse(l.time);
      const start = Math.min(...mine.map(time));
      const end = Math.max(...mine.filter((l) => l.status === 429).map(time));
      const span = (end - start) / 1000;
      const inSpan = mine.filter((l) => l.status === 200 && time(l) <= end).length;
      const rate = (inSpan - BURST) / span;
      report[tenant] = {
        seconds,
        span,
        inSpan,
        answered,
        accepted,
        refused,
        rate,
        errors: result.errors,
        timeouts: result.timeouts,
      };
      expect(span, tenant).toBeGreaterThan(4);
      expect(result.errors + result.timeouts, tenant).toBe(0);
      expect(answered, tenant).toBe(AMOUNT);
      // Exactly one audit line per request: accepted ones and 429s, nothing else.
      expect(mine.length, tenant).toBe(AMOUNT);
      expect(accepted + refused, tenant).toBe(AMOUNT);
      expect(accepted, tenant).toBe(result['2xx']);
      expect(Math.abs(rate - LIMIT[tenant]) / LIMIT[tenant], `${tenant}: ${rate.toFixed(1)}/s`).toBeLessThan(
        0.05,
      );
    }
    console.log(JSON.stringify(report));
  });
});
