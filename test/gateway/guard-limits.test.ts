/**
 * Rate limits under load: undici drives 256 connections from two
 * tenants with different request limits at once, each offering far more
 * than its limit. Each tenant's accepted rate must stay within 5% of its
 * limit (the other tenant's traffic does not take from it), and the audit
 * log must hold exactly one line per request, accepted and refused alike.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, hashApiKey } from '../../lib/gateway/index.js';
import { readUntil, useServer } from '../helpers.js';
import { offer, saturatedRate, useGateway } from './helpers.js';

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
 * How long each tenant offers load, as fast as its 128 connections go (a
 * time rather than an amount: a fixed amount ended in 3.3 s on a fast CI
 * machine, too short to measure a rate to 5%). TENANT_SECONDS sets it.
 */
const SECONDS = Number(process.env.TENANT_SECONDS ?? 8);

function load(tenant: 'fast' | 'slow') {
  return offer(
    gw().url,
    {
      path: '/v2/models/identity_fp32/infer',
      body: BODY,
      headers: { 'content-type': 'application/json', 'x-api-key': KEY[tenant] },
    },
    128,
    SECONDS,
  );
}

describe('rate limits under load', () => {
  it('holds two tenants at 256 connections to their own limits within 5%, one audit line per request', async () => {
    const [fast, slow] = await Promise.all([load('fast'), load('slow')]);
    // A request's line is written when it ends, which may be just after its
    // client had the answer: read until every request has one.
    const lines = await readUntil(
      () => {
        gw().gateway.guard!.flush();
        return readFileSync(auditFile, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as { tenant: string; status: number; time: string; latencyMs: number });
      },
      (ls) => ls.length >= fast.sent + slow.sent,
    );
    const report: Record<string, unknown> = {};
    for (const [tenant, run] of [
      ['fast', fast],
      ['slow', slow],
    ] as const) {
      const answered = [...run.byStatus.values()].reduce((a, b) => a + b, 0);
      const mine = lines.filter((l) => l.tenant === tenant);
      const accepted = mine.filter((l) => l.status === 200).length;
      const refused = mine.filter((l) => l.status === 429).length;
      // The accepted rate while the tenant offered more than its limit
      // (saturatedRate): the clients' start-up and the tail, when its last
      // connections trickle out, are not the limiter's doing, and neither is
      // a pause of a busy machine.
      const { rate, span, admitted: inSpan } = saturatedRate(mine, LIMIT[tenant], BURST);
      report[tenant] = {
        seconds: run.seconds,
        span,
        inSpan,
        answered,
        accepted,
        refused,
        rate,
        errors: run.errors.length,
      };
      // Long enough to hold the rate to 5% (one token either way is 1% of the
      // slow tenant's 50/s over 2 s). A tenant's first answer can come seconds
      // after the other's on a loaded machine, so this is well under SECONDS.
      expect(span, tenant).toBeGreaterThan(2);
      expect(run.errors, tenant).toEqual([]);
      expect(answered, tenant).toBe(run.sent);
      expect([...run.byStatus.keys()].sort(), tenant).toEqual([200, 429]);
      // Exactly one audit line per request: accepted ones and 429s, nothing else.
      expect(mine.length, tenant).toBe(run.sent);
      expect(accepted + refused, tenant).toBe(run.sent);
      expect(accepted, tenant).toBe(run.byStatus.get(200));
      expect(Math.abs(rate - LIMIT[tenant]) / LIMIT[tenant], `${tenant}: ${rate.toFixed(1)}/s`).toBeLessThan(
        0.05,
      );
    }
    console.log(JSON.stringify(report));
  });
});
