/**
 * .github/workflows/release.yml: valid against SchemaStore's GitHub workflow
 * schema (the `schemastore` package ships it; ajv validates), and it does
 * what a release needs: one version in every package, the addon's and the
 * fake engine's prebuilds built on a machine of each architecture (linux-x64
 * on ubuntu-24.04, linux-arm64 on ubuntu-24.04-arm) in Debian 12 (the glibc
 * and libstdc++ the binaries may need), the release's dry run on each before
 * anything is published, one pack of the three packages with both
 * (TRITON_NODE_RELEASE=1), `npm publish --provenance` of each with the
 * id-token permission, and the same tarballs attached to the GitHub release.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const require = createRequire(import.meta.url);
const FILE = fileURLToPath(new URL('../.github/workflows/release.yml', import.meta.url));

// Parsed YAML, its shape checked by the schema test.
// biome-ignore lint/suspicious/noExplicitAny: property paths into parsed YAML
type Doc = Record<string, any>;
const workflow = parseYaml(readFileSync(FILE, 'utf8')) as Doc;
const jobs = workflow.jobs as Record<string, Doc>;

function steps(job: string): Doc[] {
  return (jobs[job]!.steps as Doc[]) ?? [];
}

function runs(job: string): string {
  return steps(job)
    .map((s) => (typeof s.run === 'string' ? s.run : ''))
    .join('\n');
}

/** The index of the first step of `job` whose run matches. */
function stepIndex(job: string, pattern: RegExp): number {
  return steps(job).findIndex((s) => typeof s.run === 'string' && pattern.test(s.run));
}

describe('the release workflow', () => {
  it("is valid against SchemaStore's github-workflow schema", () => {
    const schema = JSON.parse(
      readFileSync(require.resolve('schemastore/schemas/json/github-workflow.json'), 'utf8'),
    ) as Doc;
    // The schema the package ships predates the runners GitHub added since (ubuntu-24.04, and the
    // arm64 ones): its list of hosted runner labels gets those two, nothing else is changed.
    const hosted = schema.definitions.normalJob.properties['runs-on'].oneOf[0] as { enum: string[] };
    expect(hosted.enum).toContain('ubuntu-22.04');
    hosted.enum.push('ubuntu-24.04', 'ubuntu-24.04-arm');
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const ok = validate(workflow);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
    // The schema is not a rubber stamp: a job without runs-on, a step with both run and uses fail it.
    const broken = structuredClone(workflow);
    broken.jobs.publish['runs-on'] = undefined;
    broken.jobs.publish = JSON.parse(JSON.stringify(broken.jobs.publish));
    broken.jobs.prebuild.steps[0].run = 'echo';
    expect(validate(broken)).toBe(false);
  });

  it('builds the prebuilds on an x64 and an arm64 runner, in Debian 12', () => {
    const prebuild = jobs.prebuild!;
    const include = prebuild.strategy.matrix.include as Array<{ arch: string; runner: string }>;
    expect(include).toEqual(
      expect.arrayContaining([
        { arch: 'x64', runner: 'ubuntu-24.04' },
        { arch: 'arm64', runner: 'ubuntu-24.04-arm' },
      ]),
    );
    expect(prebuild['runs-on']).toBe('${{ matrix.runner }}');
    expect(prebuild.container).toMatch(/bookworm/);
    expect(runs('prebuild')).toContain(
      '(cd packages/triton-node && node ../../scripts/prebuild.mjs --arch ${{ matrix.arch }})',
    );
    expect(runs('prebuild')).toContain(
      '(cd packages/fake-engine && node ../../scripts/prebuild.mjs --arch ${{ matrix.arch }})',
    );
    expect(runs('prebuild')).toContain('node scripts/release.mjs --check');
  });

  it('runs the package test on each architecture, after building and before uploading', () => {
    const test = stepIndex('prebuild', /vitest run --project repository test\/package\.test\.ts/);
    expect(test).toBeGreaterThan(stepIndex('prebuild', /scripts\/prebuild\.mjs/));
    const upload = steps('prebuild').findIndex((s) => String(s.uses).startsWith('actions/upload-artifact'));
    expect(upload).toBeGreaterThan(test);
    expect(steps('prebuild')[test]!.env.TRITON_NODE_PREBUILD_ARCHES).toBe('${{ matrix.arch }}');
  });

  it('publishes the three packages once, after every prebuild job passed, with provenance, and attaches them', () => {
    const publish = jobs.publish!;
    expect(publish.needs).toBe('prebuild');
    expect(publish.permissions['id-token']).toBe('write');
    expect(publish.permissions.contents).toBe('write');
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(publish.env.TRITON_NODE_RELEASE).toBe('1');
    const pack = stepIndex('publish', /^node scripts\/release\.mjs --dry-run --out release > packed\.json$/m);
    const npmPublish = stepIndex('publish', /node scripts\/release\.mjs --publish-packed packed\.json/);
    const attach = stepIndex('publish', /gh release upload/);
    expect(pack).toBeGreaterThan(-1);
    expect(npmPublish).toBeGreaterThan(pack);
    expect(attach).toBeGreaterThan(pack);
    // The tarballs published are the ones packed with both architectures' prebuilds.
    expect(runs('publish')).toMatch(
      /ls packages\/triton-node\/prebuilds\/linux-x64 packages\/triton-node\/prebuilds\/linux-arm64/,
    );
    expect(runs('publish')).toMatch(
      /ls packages\/fake-engine\/prebuilds\/linux-x64 packages\/fake-engine\/prebuilds\/linux-arm64/,
    );
    const download = steps('publish').findIndex((s) =>
      String(s.uses).startsWith('actions/download-artifact'),
    );
    expect(download).toBeGreaterThan(-1);
    expect(download).toBeLessThan(pack);
    expect(workflow.on.release.types).toEqual(['published']);
  });
});
