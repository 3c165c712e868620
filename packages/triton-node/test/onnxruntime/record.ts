/**
 * Runs the ONNX_CASES loads (cases.ts) on the library under test and writes
 * each outcome (the loaded model's config, or the load's error) as
 * `<dir>/<case>.json`. Recording a real Triton's outcomes:
 *
 *   TRITON_SERVER_LIB=/path/to/libtritonserver.so TRITON_BACKEND_DIR=/path/to/backends \
 *     npx tsx test/onnxruntime/record.ts test/fixtures/real-triton-<release>/onnxruntime
 *
 * The backends directory must have the onnxruntime backend. What is written
 * is Triton's observed behaviour, not code.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { realModelFiles } from '@triton-node/test-support/backends/real-models.js';
import { Server, TritonError, type TritonVersion, loadLibrary } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import {
  ONNX_CASES,
  type OnnxCase,
  type OnnxCaseMode,
  type OnnxOutcome,
  caseMode,
  caseModes,
  portableMessage,
  writeCase,
} from './cases.js';

/**
 * Loads the cases of one mode (`strict`: those with a complete config;
 * `auto`: those left to auto-complete; `auto-dmbs<n>`: auto-completed with
 * the onnxruntime backend's default-max-batch-size n) on one server and says
 * how each went. One mode per process: real Triton r25.07's onnxruntime
 * backend fails every load of a second server in a process ("OnnxLoader
 * singleton already initialized").
 */
export async function runOnnxCases(
  library: string,
  backendDirectory: string | undefined,
  mode: OnnxCaseMode,
  cases: readonly OnnxCase[] = ONNX_CASES,
  seen: { triton?: TritonVersion } = {},
): Promise<OnnxOutcome[]> {
  const strict = mode === 'strict';
  const dmbs = /^auto-dmbs(\d+)$/.exec(mode)?.[1];
  const files = realModelFiles();
  if (typeof files === 'string') throw new Error(files);
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'triton-onnx-cases-')));
  const outcomes: OnnxOutcome[] = [];
  try {
    for (const c of cases) writeCase(repo, files, c);
    {
      const server = await Server.create({
        library,
        modelRepository: repo,
        ...(backendDirectory === undefined ? {} : { backendDirectory }),
        strictModelConfig: strict,
        ...(dmbs === undefined ? {} : { backendConfig: { onnxruntime: { 'default-max-batch-size': dmbs } } }),
        exitTimeoutSeconds: 5,
        log: { warn: false, error: false },
      });
      seen.triton = server.triton;
      try {
        for (const c of cases) {
          if (caseMode(c) !== mode) continue;
          outcomes.push(await runCase(server, c, repo));
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
  const order = new Map(cases.map((c, i) => [c.name, i]));
  return outcomes.sort((a, b) => (order.get(a.case) ?? 0) - (order.get(b.case) ?? 0));
}

async function runCase(server: Server, c: OnnxCase, repo: string): Promise<OnnxOutcome> {
  try {
    await server.loadModel(c.name);
  } catch (err) {
    if (!(err instanceof TritonError)) throw err;
    return {
      case: c.name,
      loaded: false,
      error: { code: err.code, message: portableMessage(err.message, repo) },
    };
  }
  const config = await server.model(c.name).config();
  await server.unloadModel(c.name);
  return { case: c.name, loaded: true, config };
}

async function main(): Promise<void> {
  const out = process.argv[2];
  const mode = process.argv[3];
  if (out === undefined) throw new Error('usage: record.ts <output directory>');
  if (mode === undefined) {
    // Each mode in a process of its own (see runOnnxCases).
    for (const m of caseModes()) {
      const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, out, m], {
        stdio: 'inherit',
      });
      if (run.status !== 0) throw new Error(`recording the ${m} cases failed (${run.status})`);
    }
    return;
  }
  if (!(caseModes() as string[]).includes(mode)) {
    throw new Error(`unknown mode '${mode}' (known: ${caseModes().join(', ')})`);
  }
  const library = process.env.TRITON_SERVER_LIB || fakeEngine.libraryPath;
  const info = loadLibrary(library);
  const seen: { triton?: TritonVersion } = {};
  const outcomes = await runOnnxCases(
    library,
    process.env.TRITON_BACKEND_DIR || undefined,
    mode as OnnxCaseMode,
    ONNX_CASES,
    seen,
  );
  const release = seen.triton?.release ?? `of an unproven release (${seen.triton?.server})`;
  mkdirSync(resolve(out), { recursive: true });
  for (const o of outcomes) {
    const doc = {
      description:
        'Outcome of loading this case of test/onnxruntime/cases.ts (a real ONNX model with this config) on the library named; an observation.',
      library: info.isFake
        ? `the fake engine, imitating ${seen.triton?.release}`
        : `real Triton ${release} CPU build (${library})`,
      ...o,
    };
    writeFileSync(join(resolve(out), `${o.case}.json`), `${JSON.stringify(doc, null, 2)}\n`);
    console.log(`${o.case}: ${o.loaded ? 'loaded' : `${o.error?.code} ${o.error?.message}`}`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]).endsWith(join('onnxruntime', 'record.ts'))) {
  await main();
}
