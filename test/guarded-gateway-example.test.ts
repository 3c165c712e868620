// examples/guarded-gateway.ts end to end: a request without a key is 401, one
// with Alice's key is served, each has its audit line on stdout, and SIGTERM
// stops it with exit code 0.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LIBRARY_PATH } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INFER = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }] });

describe('examples/guarded-gateway.ts', () => {
  it('refuses a request without a key, serves Alice, audits both, and stops on SIGTERM', async () => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/triton-node/examples/guarded-gateway.ts'],
      {
        cwd: ROOT,
        env: { ...process.env, PORT: '0', TRITON_SERVER_LIB: LIBRARY_PATH, ALICE_KEY: 'k-alice' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    proc.stdout!.on('data', (d) => {
      out += String(d);
    });
    const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    try {
      const base = await new Promise<string>((resolve, reject) => {
        proc.stderr!.on('data', (d) => {
          err += String(d);
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        void exit.then((code) => reject(new Error(`example exited (${code}) before listening: ${err}`)));
      });
      const url = `${base}/v2/models/identity_fp32/infer`;
      expect((await fetch(url, { method: 'POST', body: INFER })).status).toBe(401);
      const served = await fetch(url, { method: 'POST', body: INFER, headers: { 'x-api-key': 'k-alice' } });
      expect(served.status).toBe(200);
      expect(((await served.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data).toEqual([
        1, 2,
      ]);
      proc.kill('SIGTERM');
      expect(await exit).toBe(0);
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { tenant: string | null; status: number });
      expect(lines.map((l) => [l.tenant, l.status])).toEqual([
        [null, 401],
        ['alice', 200],
      ]);
      expect(out).not.toContain('k-alice');
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });
});
