// Generated requests, replayed: the library under test must answer each of
// them as a real Triton did when the fixture of its release was recorded
// (test/differential/generate.ts says how): the same submission error word
// for word, or the same responses (outputs, datatypes, shapes, bytes,
// parameters, errors). One fixture per release: the fake engine replays
// each while imitating that release (fakeEngine.release()); a real library
// replays the fixture of its own release and skips the other, saying which
// it is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BACKEND_DIR, FIXTURES, LIBRARY_PATH, library, skipIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { provenRelease } from '../../lib/api/releases.js';
import { type FakeRelease, fakeEngine } from '../../lib/testing.js';
import {
  type Fixture,
  GENERATOR_VERSION,
  type Outcome,
  casesDigest,
  describeCase,
  difference,
  fromFixture,
  generateCases,
  runCases,
} from '../differential/generate.js';

const RELEASES: readonly FakeRelease[] = ['r25.07', 'r26.06'];

const fixtures = Object.fromEntries(
  RELEASES.map((r) => [
    r,
    JSON.parse(readFileSync(join(FIXTURES, `real-triton-${r}`, 'outcomes.json'), 'utf8')) as Fixture,
  ]),
) as Record<FakeRelease, Fixture>;

/** Runs the cases on the library under test (as `release` on the fake); says which release answered. */
async function replay(release: FakeRelease): Promise<{ actual: Outcome[]; release: string | null }> {
  const fixture = fixtures[release];
  if (library().isFake) fakeEngine.release(release);
  const seen: { serverVersion?: string } = {};
  const actual = await runCases(generateCases(fixture.seed, fixture.count), {
    library: LIBRARY_PATH,
    backendDirectory: BACKEND_DIR,
    seen,
  });
  return { actual, release: provenRelease(seen.serverVersion ?? '') };
}

function differences(fixture: Fixture, actual: Outcome[]): string[] {
  const cases = generateCases(fixture.seed, fixture.count);
  const expected = fromFixture(fixture);
  const out: string[] = [];
  for (let i = 0; i < cases.length; i++) {
    const d = difference(expected[i]!, actual[i]!);
    if (d !== null) out.push(`#${i} ${describeCase(cases[i]!)}\n      ${d}`);
  }
  return out;
}

afterAll(() => {
  if (library().isFake) fakeEngine.release('r26.06');
});

for (const release of RELEASES) {
  const fixture = fixtures[release];
  describe(`generated requests answered as real Triton ${release} answered them`, () => {
    it('the fixture holds the outcomes of these very cases, successes and failures', () => {
      expect(fixture.generatorVersion).toBe(GENERATOR_VERSION);
      expect(fixture.library).toContain(release);
      expect(casesDigest(generateCases(fixture.seed, fixture.count))).toBe(fixture.casesDigest);
      const outcomes = fromFixture(fixture);
      expect(outcomes).toHaveLength(fixture.count);
      // Each kind of outcome is well represented (a runner that broke one way
      // could not match them all).
      const submitErrors = outcomes.filter((o) => o.at === 'submit').length;
      const answered = outcomes.filter((o) => o.responses?.some((r) => r.code === undefined)).length;
      const responseErrors = outcomes.filter((o) => o.responses?.some((r) => r.code !== undefined)).length;
      expect(submitErrors).toBeGreaterThan(fixture.count / 10);
      expect(answered).toBeGreaterThan(fixture.count / 10);
      expect(responseErrors).toBeGreaterThan(10);
    });

    it(`each of the ${fixture.count} cases has the recorded outcome`, async (ctx) => {
      const { actual, release: answered } = await replay(release);
      // A real library answers for its own release only.
      skipIf(
        ctx,
        answered !== release && !library().isFake
          ? `recorded on ${release}; this library is ${answered ?? 'another release'}`
          : false,
      );
      expect(answered).toBe(release);
      const found = differences(fixture, actual);
      expect(
        found.slice(0, 10).join('\n'),
        `${found.length} of ${fixture.count} cases differ from real Triton ${release} (first 10 shown)`,
      ).toBe('');
    }, 300_000);
  });
}

describe('what changed between the recorded releases', () => {
  it('r26.06 differs from r25.07 only where native/fake/PRECONDITIONS.md names a difference', () => {
    // Each difference between the two recordings is one of the two named
    // ones: a second request for an output (refused from r26.06 on), or a
    // shape whose size cannot be computed (r26.06's words, not a byte count).
    const older = fromFixture(fixtures['r25.07']);
    const newer = fromFixture(fixtures['r26.06']);
    const unexplained: string[] = [];
    const named = { duplicateOutput: 0, invalidDimension: 0 };
    for (let i = 0; i < older.length; i++) {
      if (difference(older[i]!, newer[i]!) === null) continue;
      const m = newer[i]!.message ?? '';
      if (/output '[^']+' already exists in request$/.test(m)) named.duplicateOutput++;
      else if (/^tensor '[^']+' contains an invalid dimension (in shape )?\[[-0-9,]*\]$/.test(m))
        named.invalidDimension++;
      else unexplained.push(`#${i}: ${JSON.stringify(older[i])} -> ${JSON.stringify(newer[i])}`);
    }
    expect(unexplained.slice(0, 5).join('\n'), `${unexplained.length} unexplained`).toBe('');
    expect(named.duplicateOutput).toBeGreaterThan(0);
    expect(named.invalidDimension).toBeGreaterThan(0);
  });
});
