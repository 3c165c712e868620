// Runs the fake engine's own C++ tests (test/native/, built as
// build/Release/fake_engine_tests by npm install in the repository): the
// JSON and ModelConfig module against real Triton's reference documents, and
// the engine tests that dlopen build/fake/libtritonserver.so. The binary runs
// in a child process with this package's folder as its working directory, so
// a crash in it fails this test instead of the test runner.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
// FAKE_ENGINE_TESTS_BIN points at a binary built elsewhere (e.g. by CMake).
const binary =
  process.env.FAKE_ENGINE_TESTS_BIN ?? join(packageRoot, 'build', 'Release', 'fake_engine_tests');
const built = existsSync(binary);
const skipReason = !built && `${binary} is not built; run \`npm run build\` in packages/fake-engine`;

interface Ran {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Runs `file` to its end without blocking this worker (it must keep answering the runner). */
function runProcess(file: string, cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(file, [], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('error', (error) => resolve({ status: null, signal: null, stdout, stderr, error }));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

describe('fake engine native tests', () => {
  it('passes every C++ test of the fake engine', async (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    // Not spawnSync: the tests take half a minute, more on a busy machine,
    // which vitest's worker must spend answering its runner (runProcess).
    const result = await runProcess(binary, packageRoot);
    const output =
      `${result.stdout ?? ''}${result.stderr ?? ''}` +
      (result.error ? `\nspawn error: ${result.error.message}` : '') +
      (result.signal ? `\nkilled by signal ${result.signal}` : '');
    // The whole output is the failure message: it names each failed CHECK.
    expect(result.status, output).toBe(0);
    // The harness prints "<n> tests, <m> failed" last; make sure tests ran.
    const summary = /(\d+) tests, (\d+) failed/.exec(result.stdout ?? '');
    expect(summary, output).not.toBeNull();
    expect(Number(summary?.[1]), output).toBeGreaterThan(0);
    expect(Number(summary?.[2]), output).toBe(0);
  }, 300_000);
});
