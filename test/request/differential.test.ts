// Generated requests, replayed: the library under test (the fake engine in
// CI) must answer each of them as a real Triton r25.07 did when the fixture
// was recorded (test/differential/generate.ts says how): the same submission
// error word for word, or the same responses (outputs, datatypes, shapes,
// bytes, parameters, errors). Runs on a real library too, where it checks
// that the recording still holds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Fixture,
  GENERATOR_VERSION,
  casesDigest,
  describeCase,
  difference,
  fromFixture,
  generateCases,
  runCases,
} from '../differential/generate.js';
import { BACKEND_DIR, FIXTURES, LIBRARY_PATH, library } from '../helpers.js';

const fixture = JSON.parse(
  readFileSync(join(FIXTURES, 'real-triton-r25.07', 'outcomes.json'), 'utf8'),
) as Fixture;

describe('generated requests answered as real Triton r25.07 answered them', () => {
  it('the fixture holds the outcomes of these very cases, successes and failures', () => {
    expect(fixture.generatorVersion).toBe(GENERATOR_VERSION);
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

  it(`each of the ${fixture.count} cases has the recorded outcome`, async () => {
    library();
    const cases = generateCases(fixture.seed, fixture.count);
    const expected = fromFixture(fixture);
    const actual = await runCases(cases, { library: LIBRARY_PATH, backendDirectory: BACKEND_DIR });
    const differences: string[] = [];
    for (let i = 0; i < cases.length; i++) {
      const d = difference(expected[i]!, actual[i]!);
      if (d !== null) differences.push(`#${i} ${describeCase(cases[i]!)}\n      ${d}`);
    }
    expect(
      differences.slice(0, 10).join('\n'),
      `${differences.length} of ${cases.length} cases differ from real Triton (first 10 shown)`,
    ).toBe('');
  }, 300_000);
});
