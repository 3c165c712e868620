#!/usr/bin/env node
// The `triton-node doctor` transcripts of docs/troubleshooting.md that can be
// made from known inputs, made by running doctor on them: a library of a C API
// too old (test/fixtures/old-api-version.c), a GPU build whose CUDA runtime
// is missing (a library that needs libcudart.so.12, which is not there), and a
// pytorch backend whose libtorch_cuda.so is missing (libraries made with cc,
// one removed; the fake engine stands in for Triton).
//
//   node --import tsx scripts/doctor-transcripts.mjs           checks the docs (exit 1 on a difference)
//   node --import tsx scripts/doctor-transcripts.mjs --write   rewrites the generated blocks
//
// A generated block follows the line `<!-- doctor-transcript NAME ... -->`.
// Lines about the machine (the addon build, CUDA, GPUs, limits) differ from
// machine to machine: the check compares their status, topic and subject only;
// every other line, fix and the summary are compared whole.
// Needs a C compiler and the fake engine (build/fake/libtritonserver.so).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDoctorReport } from '../lib/doctor/report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DOC = join(ROOT, 'docs', 'troubleshooting.md');
const FAKE = join(ROOT, 'build', 'fake', 'libtritonserver.so');
const CLI = join(ROOT, 'lib', 'cli', 'main.ts');

/** Why the transcripts cannot be made here (undefined: they can). */
export function unavailable() {
  if (!['cc', 'gcc'].some((c) => spawnSync(c, ['--version']).status === 0)) return 'no C compiler';
  if (!existsSync(FAKE)) return 'the fake engine is not built (build/fake/libtritonserver.so)';
  return undefined;
}

function compile(args) {
  const cc = ['cc', 'gcc'].find((c) => spawnSync(c, ['--version']).status === 0);
  const r = spawnSync(cc, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cc} ${args.join(' ')}: ${r.stderr}`);
}

/**
 * doctor's table for `args`, with the scratch paths shown as `shownAs` says
 * (replaced in the report, before the table is laid out) and the checkout's
 * own path left out.
 */
function doctor(args, env, shownAs) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'doctor', '--json', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TRITON_SERVER_LIB: '', ...env },
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`doctor exited ${r.status}: ${r.stderr}`);
  let json = r.stdout;
  for (const [from, to] of [...shownAs, [ROOT, '']]) json = json.replaceAll(from, to);
  const report = JSON.parse(json);
  return { text: formatDoctorReport(report), status: r.status };
}

/**
 * A pytorch backend laid out as the NGC image has it (libtriton_pytorch.so
 * beside libtorch*.so and libc10.so, RUNPATH $ORIGIN) whose libtorch_cuda.so
 * was removed; returns the backends folder.
 */
function pytorchWithoutCuda(backends) {
  const dir = join(backends, 'pytorch');
  mkdirSync(dir, { recursive: true });
  const so = (name, needs = []) => {
    const source = join(dir, `${name}.c`);
    writeFileSync(source, `int ${name.replace(/\W/g, '_')}(void) { return 0; }\n`);
    compile([
      '-shared',
      '-fPIC',
      '-nostdlib',
      `-Wl,-soname,${name}`,
      '-o',
      join(dir, name),
      source,
      '-Wl,--no-as-needed',
      ...needs.map((n) => join(dir, n)),
      '-Wl,--enable-new-dtags,-rpath,$ORIGIN',
    ]);
    rmSync(source);
  };
  so('libc10.so');
  so('libtorch_cpu.so', ['libc10.so']);
  so('libtorch_cuda.so', ['libtorch_cpu.so', 'libc10.so']);
  so('libtorch.so', ['libtorch_cpu.so', 'libtorch_cuda.so']);
  so('libtriton_pytorch.so', ['libtorch.so', 'libtorch_cpu.so', 'libtorch_cuda.so', 'libc10.so']);
  rmSync(join(dir, 'libtorch_cuda.so'));
  return backends;
}

/** Every transcript, by name: the command line as the docs show it, doctor's table and exit code. */
export function makeTranscripts() {
  const scratch = mkdtempSync(join(tmpdir(), 'triton-node-transcripts-'));
  try {
    const old = join(scratch, 'old-triton', 'lib', 'libtritonserver.so');
    mkdirSync(dirname(old), { recursive: true });
    compile([
      '-shared',
      '-fPIC',
      '-o',
      old,
      join(ROOT, 'test', 'fixtures', 'old-api-version.c'),
      '-Wl,--no-as-needed',
      FAKE,
      `-Wl,-rpath,${dirname(FAKE)}`,
    ]);
    // A library that needs libcudart.so.12: linked against a stand-in that is then removed.
    const gpu = join(scratch, 'gpu-triton', 'lib', 'libtritonserver.so');
    const stub = join(scratch, 'stub', 'libcudart.so.12');
    mkdirSync(dirname(gpu), { recursive: true });
    mkdirSync(dirname(stub), { recursive: true });
    writeFileSync(join(scratch, 'stub.c'), 'int cudart_stand_in(void) { return 0; }\n');
    compile(['-shared', '-fPIC', '-Wl,-soname,libcudart.so.12', '-o', stub, join(scratch, 'stub.c')]);
    writeFileSync(join(scratch, 'gpu.c'), 'int gpu_triton_stand_in(void) { return 0; }\n');
    compile(['-shared', '-fPIC', '-o', gpu, join(scratch, 'gpu.c'), '-Wl,--no-as-needed', stub]);
    rmSync(stub);
    const torchBackends = pytorchWithoutCuda(join(scratch, 'torch-triton', 'backends'));
    const shownAs = [
      [join(scratch, 'old-triton'), '/tmp/old-triton'],
      [join(scratch, 'gpu-triton'), '/tmp/gpu-triton'],
      [join(scratch, 'torch-triton'), '/tmp/torch-triton'],
    ];
    const oldRun = doctor(['--library', old], {}, shownAs);
    const gpuRun = doctor([], { TRITON_SERVER_LIB: gpu }, shownAs);
    const torchRun = doctor(['--library', FAKE, '--backend-dir', torchBackends], {}, shownAs);
    return {
      'old-api': {
        command: 'npx triton-node doctor --library /tmp/old-triton/lib/libtritonserver.so',
        ...oldRun,
      },
      'missing-cuda': {
        command: 'TRITON_SERVER_LIB=/tmp/gpu-triton/lib/libtritonserver.so npx triton-node doctor',
        ...gpuRun,
      },
      'pytorch-libraries': {
        command:
          'npx triton-node doctor --library build/fake/libtritonserver.so --backend-dir /tmp/torch-triton/backends',
        ...torchRun,
      },
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The fenced block of a transcript. */
export function block(t) {
  return `\`\`\`\n$ ${t.command}\n${t.text.trimEnd()}\nexit ${t.status}\n\`\`\``;
}

const MARK = /<!-- doctor-transcript ([\w-]+)[^>]*-->\n```\n[\s\S]*?\n```/g;

/** The generated blocks of `doc` by name. */
export function generatedBlocks(doc) {
  const out = new Map();
  for (const m of doc.matchAll(MARK)) out.set(m[1], m[0].slice(m[0].indexOf('\n') + 1));
  return out;
}

/** A table line as cells (status, topic, subject, detail), or the line itself for fixes and summaries. */
function cells(line) {
  if (!/^(ok|info|WARN|FAIL) /.test(line)) return [line.trim()];
  const status = line.slice(0, 6).trim();
  const topic = line.slice(7, 15).trim();
  const [subject, ...detail] = line.slice(16).split(/ {2,}/);
  return [status, topic, subject.trim(), detail.join('  ').trim()];
}

const MACHINE_TOPICS = new Set(['addon', 'onnx', 'cuda', 'gpu', 'limits']);

/**
 * `block` reduced to what must be the same on every machine: each line's cells
 * (column widths aside), with the details and fixes of machine lines left out.
 */
export function comparable(text) {
  const out = [];
  let machine = false;
  for (const line of text.split('\n')) {
    const c = cells(line);
    if (c.length === 4) {
      machine = MACHINE_TOPICS.has(c[1]);
      out.push(machine ? c.slice(0, 3).join(' | ') : c.join(' | '));
    } else if (line.startsWith(' '.repeat(16))) {
      if (!machine) out.push(c[0]);
    } else {
      machine = false;
      // How many lines are ok or warnings depends on the machine; the failures do not.
      out.push(c[0].replace(/^\d+ ok, \d+ warning\(s\)/, 'N ok, N warning(s)'));
    }
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const why = unavailable();
  if (why !== undefined) {
    console.error(`doctor-transcripts: cannot run here: ${why}`);
    process.exit(2);
  }
  const made = makeTranscripts();
  let doc = readFileSync(DOC, 'utf8');
  const found = generatedBlocks(doc);
  let differ = 0;
  for (const [name, t] of Object.entries(made)) {
    const old = found.get(name);
    if (old === undefined) {
      console.error(`doctor-transcripts: no <!-- doctor-transcript ${name} --> block in ${DOC}`);
      differ++;
      continue;
    }
    if (process.argv.includes('--write')) doc = doc.replace(old, block(t));
    else if (JSON.stringify(comparable(old)) !== JSON.stringify(comparable(block(t)))) {
      console.error(`doctor-transcripts: '${name}' differs from doctor's output:\n${block(t)}`);
      differ++;
    }
  }
  if (process.argv.includes('--write')) writeFileSync(DOC, doc);
  process.exit(differ === 0 ? 0 : 1);
}
