// Runs the fake engine's own C++ tests (native/fake/test/, built as
// build/Release/fake_engine_tests) as part of the suite: the JSON and
// ModelConfig module against real Triton's reference documents, and the
// engine tests that dlopen build/fake/libtritonserver.so. The binary runs in
// a child process with the repository root as its working directory, so a
// crash in it fails this test instead of the test runner.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess, skipIf } from '@triton-node/test-support/helpers.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
// FAKE_ENGINE_TESTS_BIN points at a binary built elsewhere (e.g. by CMake).
const binary = process.env.FAKE_ENGINE_TESTS_BIN ?? join(repoRoot, 'build', 'Release', 'fake_engine_tests');
const built = existsSync(binary);
const skipReason =
  !built &&
  `${binary} is not built; run \`npx node-gyp configure\` then \`make -C build fake_engine_tests fake_engine_layout\``;

describe('fake engine native tests', () => {
  it('passes every C++ test of the fake engine', async (ctx) => {
    skipIf(ctx, skipReason);
    // Not spawnSync: the tests take half a minute, more on a busy machine,
    // which vitest's worker must spend answering its runner (runProcess).
    const result = await runProcess(binary, [], { cwd: repoRoot, timeoutMs: 240_000 });
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
