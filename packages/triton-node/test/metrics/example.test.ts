// examples/metrics-server.ts end to end: it starts, answers /infer, and
// serves /metrics that a Prometheus parser reads, then stops on SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LIBRARY_PATH } from '@triton-node/test-support/helpers.js';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/metrics-server.ts', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves /infer and a scrapeable /metrics, and stops on SIGTERM', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'examples/metrics-server.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', TRITON_SERVER_LIB: LIBRARY_PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d) => {
      err += String(d);
    });
    const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in 60 s: ${out} ${err}`)), 60_000);
      proc.stdout!.on('data', (d) => {
        out += String(d);
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      proc.on('exit', (code) =>
        reject(new Error(`example exited (${code}) before listening: ${out} ${err}`)),
      );
    });

    const inferred = await fetch(`${base}/infer`, { method: 'POST', body: '[1, 2.5, -3]' });
    expect(inferred.status).toBe(200);
    const body = (await inferred.json()) as { output: number[]; timing: Record<string, number> };
    expect(body.output).toEqual([1, 2.5, -3]);
    expect(body.timing.totalUs).toBeGreaterThan(0);
    const bad = await fetch(`${base}/infer`, { method: 'POST', body: '{"not": "an array"}' });
    expect(bad.status).toBe(400);

    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(await scraped.text());
    const success = families.find((f) => f.name === 'nv_inference_request_success');
    expect(success?.metrics.find((m) => m.labels?.model === 'identity_fp32')?.value).toBe('1');
    const accepted = families.find((f) => f.name === 'metrics_example_infer_requests');
    expect(accepted?.metrics[0]?.value).toBe('1');
    // prom-client's own metrics are joined in (it is a dev dependency here).
    expect(families.some((f) => f.name === 'metrics_example_http_request_seconds')).toBe(true);

    proc.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
