// scripts/affected.mjs: a change runs its own package's tests and the
// contract tests of the packages that consume it, nothing else; a change
// outside the packages runs everything.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a script of the repository, in JavaScript
import { plan } from '../scripts/affected.mjs';

interface Run {
  why: string;
  projects: string[];
  files?: string[];
}
const planFor = (files: string[]) => plan(files) as { runs: Run[]; build: string[] | 'all' };
const gatewayContract = (
  JSON.parse(readFileSync(new URL('../packages/gateway/package.json', import.meta.url), 'utf8')) as {
    contractTests: Record<string, string[]>;
  }
).contractTests['triton-node']!;

describe('npm run affected', () => {
  it('a gateway-only change runs the gateway’s own projects and nothing else', () => {
    const { runs, build } = planFor([
      'packages/gateway/lib/openai/routes.ts',
      'packages/gateway/test/openai.test.ts',
    ]);
    expect(runs).toEqual([
      expect.objectContaining({ projects: ['gateway', 'gateway-dist', 'gateway-gpu', 'gateway-gpu-stub'] }),
    ]);
    expect(runs[0]!.files).toBeUndefined();
    expect(build).toEqual(['triton-node', '@triton-node/gateway']);
  });

  it('a library change runs triton-node’s projects and the gateway’s contract tests', () => {
    const { runs } = planFor(['packages/triton-node/lib/request/validate.ts']);
    expect(runs.map((r) => r.projects)).toEqual([['conformance', 'gpu', 'gpu-stub'], ['gateway']]);
    expect(gatewayContract.length).toBeGreaterThan(3);
    expect(runs[1]!.files).toEqual(gatewayContract.map((f) => `packages/gateway/${f}`));
  });

  it('a fake engine change runs its C++ tests and triton-node’s whole conformance suite, its contract', () => {
    const { runs } = planFor(['packages/fake-engine/src/core/engine.cc']);
    expect(runs.map((r) => r.projects)).toEqual([['fake-engine'], ['conformance', 'gpu', 'gpu-stub']]);
    expect(runs[1]!.files).toBeUndefined();
  });

  it('a change of both a package and its consumer runs both whole, not the contract twice', () => {
    const { runs } = planFor(['packages/triton-node/lib/api/server.ts', 'packages/gateway/lib/routes.ts']);
    expect(runs.map((r) => r.projects)).toEqual([
      ['conformance', 'gpu', 'gpu-stub'],
      ['gateway', 'gateway-dist', 'gateway-gpu', 'gateway-gpu-stub'],
    ]);
  });

  it('a change outside the packages (docs, scripts, test support, the root) runs everything', () => {
    for (const file of [
      'docs/api.md',
      'scripts/mutate.mjs',
      'packages/test-support/helpers.ts',
      'package.json',
    ]) {
      expect(planFor([file]).build, file).toBe('all');
    }
  });
});
