// Commit subjects stay under 72 characters (the rest goes in the body), from
// the commit that made the repository a workspace on: git log --oneline,
// shortlogs and GitHub's lists show them whole. Older subjects ran to
// hundreds of characters and are left as they are.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIRST = 'Move the sources into four workspace packages';
const LIMIT = 72;

/** Subjects from the first commit of the rule to HEAD, or why they cannot be read here. */
function subjects(): string[] | string {
  const log = spawnSync('git', ['log', '--format=%H%x09%s'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (log.status !== 0) return `no git history here (${log.stderr.trim() || log.error?.message})`;
  const lines = log.stdout.split('\n').filter(Boolean);
  const first = lines.findIndex((l) => l.split('\t')[1] === FIRST);
  if (first < 0) return `the history here does not reach "${FIRST}" (a shallow clone?)`;
  return lines.slice(0, first + 1).map((l) => l.slice(l.indexOf('\t') + 1));
}

describe('commit subjects', () => {
  it(`are under ${LIMIT} characters since the repository became a workspace`, (ctx) => {
    const found = subjects();
    if (typeof found === 'string') ctx.skip(found);
    expect(found.length).toBeGreaterThan(1);
    const long = (found as string[]).filter((s) => [...s].length >= LIMIT);
    expect(long, `subjects of ${LIMIT} characters or more: shorten them, the why goes in the body`).toEqual(
      [],
    );
  });
});
