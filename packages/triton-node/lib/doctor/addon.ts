/**
 * The doctor's addon lines: which binary loads (prebuilt or built from
 * source), the Node-API version it needs and the one this runtime has, and
 * whether outputs can be external buffers here.
 * @internal
 * @packageDocumentation
 */
import { existsSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { addon, addonBinaryPath, fakeEnginePath, packageRoot } from '../addon/load.js';
import type { DoctorCheck, DoctorReport } from './report.js';

type AddonFacts = DoctorReport['addon'];

function glibcVersion(): string | null {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ?? null;
}

function shortPath(path: string): string {
  const rel = relative(packageRoot(), path);
  return rel.startsWith('..') ? path : rel;
}

const REBUILD_FIX =
  'npm rebuild triton-node (prebuilt for linux-x64/arm64 with glibc; elsewhere it builds from source and needs g++, make, python3)';

/** The addon's facts and lines. */
export function checkAddon(): { facts: AddonFacts; checks: DoctorCheck[] } {
  const facts: AddonFacts = {
    path: null,
    kind: null,
    napiVersion: null,
    runtimeNapiVersion: Number(process.versions.napi),
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
    glibc: process.platform === 'linux' ? glibcVersion() : null,
    externalBuffers: null,
    fakeEngine: null,
  };
  const checks: DoctorCheck[] = [];
  const runtime = `Node ${facts.node} ${facts.platform}${facts.glibc ? ` glibc ${facts.glibc}` : ''}`;
  try {
    facts.path = addonBinaryPath();
  } catch (err) {
    checks.push({
      topic: 'addon',
      subject: 'triton_node.node',
      status: 'fail',
      detail: `no binary for ${runtime}: ${(err as Error).message.split('\n')[0]}`,
      fix: REBUILD_FIX,
    });
    return { facts, checks };
  }
  facts.kind = facts.path.split(sep).includes('prebuilds') ? 'prebuild' : 'source build';
  try {
    const native = addon();
    facts.napiVersion = native.constants.napiVersion;
    facts.externalBuffers = !native.copyOutputs();
  } catch (err) {
    checks.push({
      topic: 'addon',
      subject: shortPath(facts.path),
      status: 'fail',
      detail: `${facts.kind} does not load: ${(err as Error).message.split('\n')[0]}`,
      fix: REBUILD_FIX,
    });
    return { facts, checks };
  }
  checks.push({
    topic: 'addon',
    subject: shortPath(facts.path),
    status: 'ok',
    detail: `${facts.kind}, Node-API ${facts.napiVersion} (this runtime has ${facts.runtimeNapiVersion}); ${runtime}`,
  });
  checks.push(outputsCheck(facts.externalBuffers));
  const fake = fakeEnginePath();
  facts.fakeEngine = existsSync(fake) ? fake : null;
  checks.push({
    topic: 'addon',
    subject: 'fake engine',
    status: facts.fakeEngine === null ? 'warn' : 'info',
    detail:
      facts.fakeEngine === null
        ? `not found at ${shortPath(fake)} (triton-node/testing needs it)`
        : `${shortPath(fake)} (for tests: triton-node/testing)`,
    ...(facts.fakeEngine === null ? { fix: REBUILD_FIX } : {}),
  });
  return { facts, checks };
}

function outputsCheck(external: boolean): DoctorCheck {
  if (external) {
    return {
      topic: 'addon',
      subject: 'output buffers',
      status: 'ok',
      detail: "external ArrayBuffers allowed: CPU outputs are views of Triton's memory, no copy",
    };
  }
  const forced = process.env.TRITON_NODE_COPY_OUTPUTS === '1';
  return {
    topic: 'addon',
    subject: 'output buffers',
    status: 'info',
    detail: forced
      ? 'copied (TRITON_NODE_COPY_OUTPUTS=1)'
      : 'copied: this runtime refuses external ArrayBuffers (Electron)',
    fix: 'pass outputs: { NAME: { into: yourArray } } to have Triton write into your memory (docs/electron.md)',
  };
}
