/**
 * The docs say what the code does: the oldest Triton C API the loader takes
 * (native/include/triton_capi.h) is the one README, docs/api.md and
 * docs/troubleshooting.md state; every `doctor` transcript in the docs counts
 * the lines it shows; the transcripts made from known inputs are what doctor
 * prints for them (scripts/doctor-transcripts.mjs makes them).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { skipIf } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { MIN_TRITON_API, TRITON_API } from '../../lib/abi/binding.js';
// @ts-expect-error: a plain .mjs script without types
import * as transcripts from '../../scripts/doctor-transcripts.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The repository: the README and docs/ are there. */
const REPOSITORY = `${ROOT}../../`;
const read = (file: string) =>
  readFileSync(`${file.startsWith('native/') ? ROOT : REPOSITORY}${file}`, 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(`${REPOSITORY}docs`)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const script = transcripts as {
  DOC: string;
  unavailable(): string | undefined;
  makeTranscripts(): Record<string, { command: string; text: string; status: number }>;
  block(t: { command: string; text: string; status: number }): string;
  generatedBlocks(doc: string): Map<string, string>;
  comparable(text: string): string[];
};

describe('the Triton C API the docs state', () => {
  const header = read('native/include/triton_capi.h');
  const define = (name: string) => Number(new RegExp(`#define ${name} (\\d+)`).exec(header)?.[1]);

  it('is the one the loader checks', () => {
    expect(TRITON_API).toEqual({
      major: define('TRITON_NODE_API_MAJOR'),
      minMinor: define('TRITON_NODE_API_MIN_MINOR'),
      minor: define('TRITON_NODE_API_MINOR'),
    });
  });

  it.each(['README.md', 'docs/api.md', 'docs/troubleshooting.md'])('%s says C API %s', (file) => {
    const text = read(file).replace(/\s+/g, ' ');
    expect(text).toContain(`C API ${MIN_TRITON_API} or a later ${TRITON_API.major}.x`);
    // No other minimum anywhere: "C API 1.xx or newer", "1.xx / Triton r.. needed", "r24.08+".
    const minima = [
      ...text.matchAll(/C API (1\.\d+) or (?:newer|a later)|(1\.\d+) \/ Triton r\d+|r\d+\.\d+\+/g),
    ];
    expect(minima.map((m) => m[1] ?? m[0])).toEqual(minima.map(() => MIN_TRITON_API));
  });
});

interface Transcript {
  file: string;
  text: string;
}

/** Every fenced block of the docs that is a `doctor` table. */
function doctorTranscripts(): Transcript[] {
  const out: Transcript[] = [];
  for (const file of DOCS) {
    for (const m of read(file).matchAll(/```\n(\$ [^\n]*doctor[\s\S]*?)```/g)) {
      if (/^STATUS +TOPIC +SUBJECT +DETAIL$/m.test(m[1]!)) out.push({ file, text: m[1]! });
    }
  }
  return out;
}

describe('doctor transcripts in the docs', () => {
  const all = doctorTranscripts();

  it('are found', () => {
    expect(all.length).toBeGreaterThanOrEqual(5);
  });

  it.each(all.map((t, i) => [`${t.file} #${i + 1}`, t] as const))(
    '%s: the summary counts the lines shown, and the exit code follows the failures (3: only Triton missing)',
    (_, t) => {
      const lines = t.text.split('\n');
      const count = (mark: string) => lines.filter((l) => l.startsWith(`${mark} `)).length;
      const summary = /^(\d+) ok, (\d+) warning\(s\), (\d+) failure\(s\)/m.exec(t.text);
      expect(summary, 'a summary line').not.toBeNull();
      expect(summary!.slice(1, 4).map(Number)).toEqual([count('ok'), count('WARN'), count('FAIL')]);
      const exit = /^exit (\d+)$/m.exec(t.text)?.[1];
      const fails = lines.filter((l) => l.startsWith('FAIL '));
      // Exit 3: nothing failed but the library, none was asked for, and the fake engine is there.
      const onlyTriton =
        fails.length > 0 && fails.every((l) => /^FAIL +library /.test(l)) && /No Triton here/.test(t.text);
      if (exit !== undefined) expect(Number(exit)).toBe(fails.length === 0 ? 0 : onlyTriton ? 3 : 1);
    },
  );

  it('made from known inputs are what doctor prints for them', (ctx) => {
    skipIf(ctx, script.unavailable() ?? false);
    const doc = readFileSync(script.DOC, 'utf8');
    const found = script.generatedBlocks(doc);
    const made = script.makeTranscripts();
    expect([...found.keys()].sort()).toEqual(Object.keys(made).sort());
    for (const [name, t] of Object.entries(made)) {
      expect(script.comparable(found.get(name)!), name).toEqual(script.comparable(script.block(t)));
    }
  }, 120_000);
});
