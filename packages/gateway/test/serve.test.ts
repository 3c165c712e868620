/**
 * `triton-node serve` in a child process (usage errors, HTTP and gRPC up,
 * structured logs, SIGTERM while a stream is in flight: it completes and the
 * process exits 0), and the gateway's drain in process (readiness false, new
 * inferences refused, streams past the deadline cancelled).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import {
  BACKEND_DIR,
  FIXTURES,
  LIBRARY_PATH,
  MODELS,
  eventually,
  useServer,
} from '@triton-node/test-support/helpers.js';
import { Client, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../lib/cli/serve.js';
import { kserveClient, useGateway } from './helpers.js';

const CLI = fileURLToPath(new URL('../../triton-node/lib/cli/main.ts', import.meta.url));

/** Node's arguments that run `triton-node serve ...args` from lib/cli/main.ts, as dist/cli.js runs it. */
function serve(...args: string[]): string[] {
  return ['--import', 'tsx', CLI, 'serve', ...args];
}

function serveArgs(extra: string[] = []): string[] {
  return [
    '--repository',
    MODELS,
    '--library',
    LIBRARY_PATH,
    ...(BACKEND_DIR ? ['--backend-dir', BACKEND_DIR] : []),
    '--model-control-mode',
    'explicit',
    '--load-model',
    'identity_fp32',
    '--load-model',
    'repeat_int32',
    '--host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--grpc-port',
    '0',
    ...extra,
  ];
}

interface Running {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  httpPort: number;
  grpcPort: number;
  exit: Promise<number | null>;
}

/** Starts `serve` and waits for its "serving" log line. */
function startServe(extra: string[] = []): Promise<Running> {
  const child = spawn(process.execPath, serve(...serveArgs(extra)), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue;
        }
        lines.push(parsed);
        if (parsed.msg === 'serving') {
          resolve({
            child,
            lines,
            exit,
            httpPort: parsed.httpPort as number,
            grpcPort: parsed.grpcPort as number,
          });
        }
      }
    });
    void exit.then((code) => reject(new Error(`serve exited ${code} before serving: ${stderr}`)));
  });
}

describe('triton-node serve', () => {
  it('refuses a usage error with exit code 2 and the usage', () => {
    const none = spawnSync(process.execPath, serve(), { encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/a model repository is required: serve <dir>, --repository <dir>/);
    expect(none.stderr).toMatch(/usage: triton-node serve/);
    const port = spawnSync(process.execPath, serve('--repository', MODELS, '--http-port', 'x'), {
      encoding: 'utf8',
    });
    expect(port.status).toBe(2);
    expect(port.stderr).toMatch(/Expected a port \(0-65535\) for --http-port but received 'x'/);
    const config = spawnSync(process.execPath, serve('--config', '/nonexistent.json'), {
      encoding: 'utf8',
    });
    expect(config.status).toBe(2);
    expect(config.stderr).toMatch(/--config: cannot read/);
  });

  it('reads the value of --exit-on-error and --strict-readiness after a space, never as a repository', () => {
    // Before (in the audit's mutation): `false` became a model repository, and the flag true.
    for (const flag of ['--exit-on-error', '--strict-readiness']) {
      const child = spawnSync(process.execPath, serve(flag, 'false', '--no-grpc'), { encoding: 'utf8' });
      expect(child.status, child.stderr).toBe(2);
      expect(child.stderr).toMatch(/a model repository is required/);
    }
  });

  it("defaults strictModelConfig to tritonserver's false; --strict-model-config and the config file set it", () => {
    const strictOf = (...args: string[]) => {
      const config = parseServeArgs(['--repository', MODELS, ...args]);
      if (config === 'help') throw new Error('help');
      return config.server.strictModelConfig;
    };
    expect(strictOf()).toBe(false);
    expect(strictOf('--strict-model-config')).toBe(true);
    expect(strictOf('--strict-model-config', 'true')).toBe(true);
    expect(strictOf('--strict-model-config=false')).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), 'serve-config-'));
    try {
      const file = join(dir, 'serve.json');
      writeFileSync(file, JSON.stringify({ server: { strictModelConfig: true } }));
      expect(strictOf('--config', file)).toBe(true);
      expect(strictOf('--config', file, '--strict-model-config=false')).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => strictOf('--strict-model-config=maybe')).toThrow(
      "Expected true or false for --strict-model-config but received 'maybe'",
    );
  });

  it('is a command of the package CLI: `triton-node --help` lists it, `serve --help` prints its usage', () => {
    const help = spawnSync(process.execPath, ['--import', 'tsx', CLI, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^ {2}serve {5}serve models over the KServe v2 protocol/m);
    const usage = spawnSync(process.execPath, serve('--help'), { encoding: 'utf8' });
    expect(usage.status).toBe(0);
    expect(usage.stdout).toMatch(/^usage: triton-node serve \[<dir>\.\.\.\] \[--repository <dir>\.\.\.\]/);
  });

  it('without its optional peer dependencies, exits 1 naming them and the npm command', () => {
    const hiding = (packages: string, ...args: string[]) => {
      const child = spawnSync(
        process.execPath,
        ['--import', `${FIXTURES}/hide-packages.mjs`, ...serve(...serveArgs(args))],
        { encoding: 'utf8', env: { ...process.env, TRITON_NODE_HIDE_PACKAGES: packages } },
      );
      expect(child.status, child.stderr).toBe(1);
      expect(child.stdout).toBe('');
      return child.stderr;
    };
    expect(hiding('pino,@grpc/proto-loader')).toBe(
      "triton-node serve needs 'pino' and '@grpc/proto-loader' (optional peer " +
        'dependencies of @triton-node/gateway), not installed here. Install: npm install pino @grpc/proto-loader ' +
        '(or pass --no-grpc to serve HTTP only, without gRPC)\n',
    );
    expect(hiding('@grpc/grpc-js')).toMatch(
      /needs '@grpc\/grpc-js' \(an optional peer dependency of @triton-node\/gateway\)/,
    );
    expect(hiding('pino', '--no-grpc')).toBe(
      "triton-node serve needs 'pino' (an optional peer dependency of @triton-node/gateway), " +
        'not installed here. Install: npm install pino\n',
    );
    // jose only when the guard verifies tokens.
    const dir = mkdtempSync(join(tmpdir(), 'serve-jose-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ gateway: { guard: { jwt: { secret: 's'.repeat(32) } } } }));
    try {
      expect(hiding('jose', '--no-grpc', '--config', config)).toBe(
        "triton-node serve needs 'jose' (an optional peer dependency of @triton-node/gateway), " +
          'not installed here. Install: npm install jose\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails to start with exit code 1 and a log line naming why', async () => {
    const child = spawnSync(process.execPath, serve(...serveArgs(['--load-model', 'no_such_model'])), {
      encoding: 'utf8',
    });
    expect(child.status).toBe(1);
    expect(child.stdout).toMatch(/"msg":"the server did not start"/);
    expect(child.stdout).toMatch(/no_such_model/);
  });

  it('serves HTTP and gRPC, and on SIGTERM finishes the stream in flight and exits 0', async () => {
    const running = await startServe();
    try {
      const base = `http://127.0.0.1:${running.httpPort}`;
      const live = await request(`${base}/v2/health/live`);
      await live.body.dump();
      expect(live.statusCode).toBe(200);

      const Client = kserveClient<{
        ServerLive(r: object, cb: (e: Error | null, r: { live: boolean }) => void): void;
      }>();
      const client = new Client(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
      const grpcLive = await new Promise<{ live: boolean }>((resolve, reject) =>
        client.ServerLive({}, (e, r) => (e ? reject(e) : resolve(r))),
      );
      client.close();
      expect(grpcLive.live).toBe(true);

      // A stream of 5 responses 200 ms apart: in flight when SIGTERM comes.
      const sse = await request(`${base}/v2/models/repeat_int32/generate_stream`, {
        method: 'POST',
        body: JSON.stringify({ IN: [1, 2, 3, 4, 5], DELAY: [200, 200, 200, 200, 200], WAIT: 0 }),
      });
      expect(sse.statusCode).toBe(200);
      let text = '';
      const events = () => text.split('\n\n').filter((e) => e.startsWith('data:'));
      const all = (async () => {
        for await (const chunk of sse.body) {
          text += chunk;
          if (events().length === 1) running.child.kill('SIGTERM');
        }
      })();
      await all;
      expect(events().length).toBe(5);
      expect(events().map((e) => JSON.parse(e.slice(5)).OUT)).toEqual([1, 2, 3, 4, 5]);
      expect(await running.exit).toBe(0);
      const msgs = running.lines.map((l) => l.msg);
      expect(msgs).toEqual(expect.arrayContaining(['serving', 'shutting down: draining', 'stopped']));
      // The start says what it serves, as the server reports it: the two models loaded, their backends.
      expect(running.lines.find((l) => String(l.msg).includes('model(s) ready'))).toMatchObject({
        msg: '2 model(s) ready: identity_fp32 (identity), repeat_int32 (repeat)',
        models: ['identity_fp32', 'repeat_int32'],
        backends: ['identity', 'repeat'],
        versions: { identity_fp32: [1], repeat_int32: [1] },
      });
      expect(running.lines.find((l) => l.msg === 'stopped')).toMatchObject({ finished: true });
    } finally {
      running.child.kill('SIGKILL');
    }
  });
});

describe('gateway.drain()', () => {
  const server = useServer(['identity_fp32', 'repeat_int32']);
  const gw = useGateway(server);
  const other = useGateway(server);
  const bare = useGateway(server, { metrics: false });

  it('turns readiness false, refuses new inferences with 503, and waits for the stream in flight', async () => {
    const { gateway, url } = gw();
    const client = new Client(url);
    try {
      const sse = await client.request({
        path: '/v2/models/repeat_int32/generate_stream',
        method: 'POST',
        body: JSON.stringify({ IN: [1, 2, 3], DELAY: [100, 100, 100], WAIT: 0 }),
      });
      let text = '';
      const reading = (async () => {
        for await (const chunk of sse.body) text += chunk;
      })();
      const drained = gateway.drain({ timeoutMs: 60_000 });
      expect(gateway.draining).toBe(true);
      const ready = await request(`${url}/v2/health/ready`);
      await ready.body.dump();
      expect(ready.statusCode).toBe(400);
      const infer = await request(`${url}/v2/models/identity_fp32/infer`, {
        method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }] }),
      });
      expect(infer.statusCode).toBe(503);
      expect(infer.headers.connection).toBe('close');
      expect(await infer.body.json()).toEqual({ error: 'the server is shutting down' });
      expect(await drained).toBe(true);
      await reading;
      expect(text.split('\n\n').filter((e) => e.startsWith('data:')).length).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('without its metrics, still counts the stream in flight and waits for it', async () => {
    const { gateway, url } = bare();
    const sse = await request(`${url}/v2/models/repeat_int32/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ IN: [1, 2, 3], DELAY: [10, 200, 200], WAIT: 0 }),
    });
    let text = '';
    const reading = (async () => {
      for await (const chunk of sse.body) text += chunk;
    })();
    // Before: the ledger counted only through its metrics gauge: 0 in flight, a drain that waited for nothing.
    expect(await eventually(() => text.includes('data:'), 10_000)).toBe(true);
    expect(gateway.inFlight).toBe(1);
    expect(await gateway.drain({ timeoutMs: 60_000 })).toBe(true);
    await reading;
    expect(text.split('\n\n').filter((e) => e.startsWith('data:')).length).toBe(3);
  });

  it('cancels open streams once the deadline passes', async () => {
    const { gateway, url } = other();
    const sse = await request(`${url}/v2/models/repeat_int32/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ IN: [1, 2, 3, 4, 5, 6], DELAY: [10, 5000, 5000, 5000, 5000, 5000], WAIT: 0 }),
    });
    let text = '';
    const reading = (async () => {
      for await (const chunk of sse.body) text += chunk;
    })();
    expect(await gateway.drain({ timeoutMs: 200 })).toBe(false);
    await reading;
    const events = text.split('\n\n').filter((e) => e.startsWith('data:'));
    expect(events.length).toBeLessThan(6);
    expect(events.at(-1)).toMatch(/"error"/);
  });
});
