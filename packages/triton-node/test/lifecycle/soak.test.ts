/**
 * `npm run soak` in small (2,000 requests, 4 streams, 4 rounds of hostile
 * worker threads): the command runs on
 * the library under test, prints its table and ends with a PASS line and exit
 * code 0. The full soak (1,000,000 requests) is run by hand; its figures are
 * in docs/reliability.md.
 *
 * RSS in so short a run: each round of worker threads starts new threads,
 * and glibc gives each new thread a malloc arena of its own (up to 8 per
 * core) that keeps the memory freed into it, so RSS climbs 20-30 MiB a round
 * until the arenas are all made (about 6 rounds), then stays flat: a short
 * run sees only that climb. MALLOC_ARENA_MAX=2 keeps the arenas few, and
 * memory freed by one round is used again by the next, so what is left to
 * rise is what is never freed. Four rounds give the phase two samples in each
 * window of the soak's measure (the medians of the middle half and of the
 * last quarter), two rounds apart, and the limit is 24 MiB: a leak of 14 MiB
 * a round (a Buffer kept per round, injected by hand) failed it with +30.7
 * MiB, one of 12 MiB passed with +15 to +18 MiB, and the swing with no leak
 * stayed under 8 MiB on a busy 2-core machine. (Two rounds at 32 MiB, as
 * before, failed with no leak at all on a busy machine: +33.8 MiB.)
 */
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, FIXTURES, LIBRARY_PATH, runProcess } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../../../bench/cli.ts', import.meta.url));

function soak(...args: string[]) {
  const backend = BACKEND_DIR === undefined ? [] : ['--backend-dir', BACKEND_DIR];
  // Not spawnSync: the soak takes most of a minute on a busy machine, which
  // vitest's worker must spend answering its runner (runProcess).
  return runProcess(
    process.execPath,
    ['--import', 'tsx', CLI, 'soak', '--library', LIBRARY_PATH, ...backend, ...args],
    { timeoutMs: 150_000, env: { ...process.env, MALLOC_ARENA_MAX: '2' } },
  );
}

describe('npm run soak', () => {
  it('a short soak passes: right answers, flat memory, nothing alive after stop', async () => {
    const child = await soak(
      '--requests',
      '2000',
      '--streams',
      '4',
      '--samples',
      '4',
      '--worker-rounds',
      '4',
      '--max-growth',
      '24',
    );
    expect(child.stderr).not.toMatch(/Segmentation|double free|terminate called/);
    const lines = child.stdout.trim().split('\n');
    const verdict = lines.at(-1) ?? '';
    expect(verdict).toMatch(/^soak: PASS requests=2000 streams=4x1000 workers=4x4 errors=0 /);
    // Every phase had the samples to judge its RSS.
    expect(verdict).toMatch(/growth: requests -?[\d.]+ MiB, streams -?[\d.]+ MiB, workers -?[\d.]+ MiB /);
    expect(verdict).toContain('live after stop: pending=0 outputBuffers=0');
    // The table: a header, and samples of both phases and after stop.
    expect(lines.some((l) => /^phase\s+done\s+s\s+per s\s+RSS MiB/.test(l))).toBe(true);
    expect(lines.some((l) => /^requests\s+2000\s/.test(l))).toBe(true);
    expect(lines.some((l) => /^streams\s+4\s/.test(l))).toBe(true);
    expect(lines.some((l) => /^workers\s+2\s/.test(l))).toBe(true);
    expect(lines.some((l) => /^stopped\s/.test(l))).toBe(true);
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
  }, 180_000);

  it('a run that cannot start is a FAIL line and exit code 1', async () => {
    const child = await soak(
      '--requests',
      '10',
      '--streams',
      '1',
      '--worker-rounds',
      '0',
      '--repository',
      FIXTURES,
    );
    expect(child.signal).toBeNull();
    const verdict = child.stdout.trim().split('\n').at(-1) ?? '';
    expect(verdict).toMatch(/^soak: FAIL .*identity_fp32/);
    expect(child.status).toBe(1);
  });

  it('bad options are usage errors naming the option', async () => {
    const child = await soak('--requests', 'many');
    expect(child.status).not.toBe(0);
    expect(child.stderr).toContain('--requests');
  });
});
