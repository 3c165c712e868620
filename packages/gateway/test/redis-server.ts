/**
 * A real Redis server for a test file: Debian's `redis-server`, started on a
 * free loopback port in a temporary directory, with no persistence, and
 * stopped (its directory removed) after the file, also when a test failed.
 * `.ci/run` installs `redis-server` when it is missing.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Why Redis tests cannot run here (false: they can). In CI a missing server fails instead of skipping. */
export const noRedis: string | false =
  spawnSync('redis-server', ['--version']).status === 0 || process.env.CI === 'true'
    ? false
    : 'redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)';

export interface RedisHandle {
  url: string;
  port: number;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill). */
  restart(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once the server answers PING on `port` (rejects after `tries` attempts). */
async function answers(port: number, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1');
      c.once('error', () => resolve(false));
      c.once('connect', () => c.write('PING\r\n'));
      c.once('data', (d) => {
        c.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING`);
}

/** Starts one redis-server for the file's tests. */
export function useRedis(): () => RedisHandle {
  let dir: string | undefined;
  let child: ChildProcess | undefined;
  let handle: RedisHandle | undefined;
  const start = async (port: number) => {
    const p = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir!, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const failed = new Promise<never>((_, reject) => {
      p.once('error', (err) => reject(new Error(`redis-server did not start: ${err.message}`)));
      p.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
    });
    failed.catch(() => undefined);
    child = p;
    await Promise.race([answers(port), failed]);
  };
  const stop = async () => {
    const p = child;
    child = undefined;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };
  beforeAll(async () => {
    if (noRedis !== false) return;
    dir = mkdtempSync(join(tmpdir(), 'redis-'));
    const port = await freePort();
    await start(port);
    handle = { url: `redis://127.0.0.1:${port}`, port, kill: stop, restart: () => start(port) };
  });
  afterAll(async () => {
    await stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (handle === undefined) throw new Error('redis-server not started');
    return handle;
  };
}
