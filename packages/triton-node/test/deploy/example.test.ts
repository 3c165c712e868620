// examples/deploy.ts end to end: it rolls out v2, refuses v3, rolls back to
// v1 with a client running, and no request fails.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, LIBRARY_PATH } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/deploy.ts', () => {
  it('deploys, rolls back automatically and by hand, with no failed request', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/deploy.ts'], {
      cwd: ROOT,
      env: { ...process.env, TRITON_SERVER_LIB: LIBRARY_PATH, TRITON_BACKEND_DIR: BACKEND_DIR ?? '' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr, run.stdout).not.toMatch(/Error/);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('deploy v2: succeeded; pinned 2');
    expect(run.stdout).toMatch(
      /deploy v3: rolled-back \(canary request 1 failed on version 3: .*\); pinned 2/,
    );
    expect(run.stdout).toContain('rollback to v1: succeeded; pinned 1');
    expect(run.stdout).toMatch(/failed: 0\n/);
    expect(run.stdout).toContain('  deploy 1 -> 2: succeeded');
  });
});
