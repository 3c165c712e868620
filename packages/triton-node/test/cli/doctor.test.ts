/**
 * `triton-node doctor` and `doctor()`: the addon, each library candidate
 * and why it is refused (missing, not Triton, an unsupported API version),
 * the backends, the model checks of a repository, the table and the exit
 * code. The CLI runs from lib/cli/main.ts under tsx, as `dist/cli.js` runs it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BACKEND_DIR,
  LIBRARY_PATH,
  MODELS,
  runProcess,
  skipAllIf,
  skipIf,
} from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { addonBinaryPath } from '../../lib/addon/load.js';
import { findOnnxRuntimeNode } from '../../lib/config/onnxruntime.js';
import { parseKernelModuleVersion } from '../../lib/doctor/gpu.js';
import { checkOnnxRuntime, onnxRuntimeLibraryVersion } from '../../lib/doctor/onnxruntime.js';
import { checkPython, linkedLibPython } from '../../lib/doctor/python.js';
import { onlyTritonMissing } from '../../lib/doctor/report.js';
import { type DoctorReport, doctor, formatDoctorReport, libraryInfo } from '../../lib/index.js';
import { fakeEngine } from '../../lib/testing.js';
import { buildElf, noCompiler, onlyIn } from './elf-fixtures.js';

const CLI = fileURLToPath(new URL('../../lib/cli/main.ts', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../test-support/fixtures', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'triton-node-doctor-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Not spawnSync: doctor takes seconds a run, more on a busy machine, which
// vitest's worker must spend answering its runner (runProcess).
async function cli(...args: string[]) {
  const child = await runProcess(process.execPath, ['--import', 'tsx', CLI, ...args], {
    timeoutMs: 180_000,
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

async function doctorJson(...args: string[]): Promise<{ status: number | null; report: DoctorReport }> {
  const child = await cli('doctor', '--json', ...args);
  if (child.status !== 0 && child.status !== 1)
    throw new Error(`doctor exited ${child.status}: ${child.stderr}`);
  return { status: child.status, report: JSON.parse(child.stdout) as DoctorReport };
}

const backendArgs = BACKEND_DIR === undefined ? [] : ['--backend-dir', BACKEND_DIR];

describe('triton-node doctor', () => {
  it('on the library under test: the addon, the library with its versions, the backends', async () => {
    const { status, report } = await doctorJson('--library', LIBRARY_PATH, ...backendArgs);
    expect(report.addon.kind).toBe('source build');
    expect(report.addon.napiVersion).toBe(9);
    expect(report.addon.externalBuffers).toBe(true);
    expect(report.libraries).toHaveLength(1);
    const lib = report.libraries[0]!;
    expect(lib).toMatchObject({ path: LIBRARY_PATH, source: 'option', outcome: 'loaded', used: true });
    expect(lib.apiVersion).toMatch(/^1\.\d+$/);
    expect(lib.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lib.serverError).toBeNull();
    if (lib.isFake)
      expect(report.backends).toEqual({
        directory: null,
        found: ['identity', 'repeat', 'square', 'fake_text_stream', 'fake_text_embedding'],
      });
    else expect(report.backends.found).toEqual(expect.arrayContaining(['identity', 'repeat', 'square']));
    expect(status).toBe(report.ok ? 0 : 1);
    expect(
      report.checks.find((c) => c.topic === 'limits' && c.subject.startsWith('ulimit -l')),
    ).toBeDefined();
  }, 180_000);

  it('prints a table: a status per line, the fix under each problem, a summary and exit code 1 on failure', async () => {
    const missing = join(scratch, 'nowhere', 'libtritonserver.so');
    const child = await cli('doctor', '--library', missing);
    expect(child.status).toBe(1);
    const lines = child.stdout.split('\n');
    expect(lines[0]).toMatch(/^STATUS +TOPIC +SUBJECT +DETAIL$/);
    const failure = lines.findIndex((l) => l.startsWith('FAIL   library'));
    expect(lines[failure]).toContain('not found (--library)');
    // A subject too long for its column is repeated whole on the next line, then the fix.
    expect(lines.slice(failure + 1, failure + 3).find((l) => l.trimStart().startsWith('fix:'))).toMatch(
      /^ {16}fix: .*TRITON_SERVER_LIB/,
    );
    expect(lines.some((l) => /^ok +addon +build\/Release\/triton_node\.node +source build/.test(l))).toBe(
      true,
    );
    expect(child.stdout).toMatch(/\d+ ok, \d+ warning\(s\), 1 failure\(s\): fix the FAIL lines above\n$/);
  }, 180_000);

  it('says which file is not Triton at all', async () => {
    const { report } = await doctorJson('--library', addonBinaryPath());
    expect(report.libraries[0]).toMatchObject({ outcome: 'symbols', used: false });
    expect(report.checks.find((c) => c.topic === 'library')).toMatchObject({
      status: 'fail',
      fix: 'point TRITON_SERVER_LIB at libtritonserver.so itself',
    });
  }, 180_000);

  it('says which API version a library has when it is not one triton-node supports', async (ctx) => {
    const cc = ['cc', 'gcc'].find((c) => spawnSync(c, ['--version']).status === 0);
    skipIf(ctx, cc === undefined && 'no C compiler to build the old-API library with');
    skipIf(ctx, !existsSync(fakeEngine.libraryPath) && 'the fake engine (which it links to) is not built');
    const library = join(scratch, 'old', 'lib', 'libtritonserver.so');
    spawnSync('mkdir', ['-p', join(scratch, 'old', 'lib')]);
    const built = spawnSync(
      cc!,
      [
        '-shared',
        '-fPIC',
        '-o',
        library,
        join(FIXTURES, 'old-api-version.c'),
        // Recorded as needed although nothing here calls into it: dlsym finds the other entry points there.
        '-Wl,--no-as-needed',
        fakeEngine.libraryPath,
        `-Wl,-rpath,${dirname(fakeEngine.libraryPath)}`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(built.status, built.stderr).toBe(0);
    const { status, report } = await doctorJson('--library', library);
    expect(status).toBe(1);
    expect(report.libraries[0]).toMatchObject({ outcome: 'version', used: false });
    expect(report.libraries[0]!.detail).toMatch(/^API version 1\.20 found, 1\.\d+ or a later 1\.x needed$/);
    const line = report.checks.find((c) => c.topic === 'library')!;
    expect(line.detail).toContain('Triton too old');
    expect(line.fix).toContain('upgrade Triton');
  });

  it('checks every model of a repository and says what is wrong with each', async () => {
    const { report } = await doctorJson('--library', LIBRARY_PATH, ...backendArgs, '--repository', MODELS);
    const byName = new Map(report.checks.filter((c) => c.topic === 'model').map((c) => [c.subject, c]));
    expect(byName.get('identity_fp32')).toMatchObject({
      status: 'ok',
      detail: 'backend identity, versions 1',
    });
    expect(byName.get('two_versions')).toMatchObject({
      status: 'ok',
      detail: 'backend identity, versions 1, 2',
    });
    expect(byName.get('bad_config')).toMatchObject({ status: 'fail' });
    expect(byName.get('bad_config')!.detail).toContain('config.pbtxt does not parse');
    expect(byName.get('no_version')).toMatchObject({
      status: 'fail',
      detail: 'no version folder (1/, 2/, ...)',
      fix: 'put the model files in a numbered folder: <model>/1/',
    });
    expect(byName.get('unknown_backend')!.detail).toMatch(
      /^backend no_such_backend is not installed \(found: /,
    );
    const gpu = byName.get('identity_gpu')!;
    if (report.cuda.devices.length === 0) {
      expect(gpu).toMatchObject({
        status: 'fail',
        detail: 'instance_group asks for KIND_GPU and no GPU is visible',
      });
    } else {
      expect(gpu.status).toBe('ok');
    }
    expect(report.ok).toBe(false);
  }, 180_000);

  it('prints the names it finds with their control characters escaped: a folder cannot colour or forge a line', async () => {
    const repo = join(scratch, 'hostile-names');
    const forged = 'x\nok     model    forged           backend identity, versions 1';
    const names = ['red\x1b[31m\x1b]0;title\x07', forged, 'tab\there\r\u009b2J'];
    for (const name of names) {
      mkdirSync(join(repo, name, '1'), { recursive: true });
      // A config whose name differs: the detail repeats the folder's name and the config's.
      writeFileSync(join(repo, name, 'config.pbtxt'), `name: "m\x1b[32m" backend: "identity"`);
    }
    const child = await cli('doctor', '--library', LIBRARY_PATH, ...backendArgs, '--repository', repo);
    // Before: the escapes reached the terminal as they are, and the newline printed a line of its own.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    expect(child.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const lines = child.stdout.split('\n');
    expect(lines.filter((l) => /^ok\s+model\s+forged/.test(l))).toEqual([]);
    expect(child.stdout).toContain('red\\x1b[31m\\x1b]0;title\\x07');
    expect(child.stdout).toContain('x\\nok     model');
    expect(child.stdout).toContain('tab\\there\\r\\x9b2J');
    // Each model is one FAIL line, its detail escaped too (the config's name holds an ESC).
    const modelLines = lines.filter((l) => /^\S+\s+model\s/.test(l));
    expect(modelLines.map((l) => l.split(/\s+/)[0])).toEqual(['FAIL', 'FAIL', 'FAIL']);
    expect(child.stdout).toContain('config name "m\\x1b[32m" differs');
    // --json keeps the names as they are (JSON escapes them itself).
    const { report } = await doctorJson('--library', LIBRARY_PATH, ...backendArgs, '--repository', repo);
    expect(report.models.map((m) => m.name).sort()).toEqual([...names].sort());
  });

  it('refuses bad options as usage errors (exit code 2), and says where the benchmarks went', async () => {
    const bad = await cli('doctor', '--min-compute-capability', 'new');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      "expected a number like 7.5 for --min-compute-capability but received 'new'",
    );
    expect((await cli('doctor', '--bogus')).status).toBe(2);
    expect((await cli('frobnicate')).status).toBe(2);
    const bench = await cli('bench');
    expect(bench.status).toBe(2);
    expect(bench.stderr).toContain('npm run bench');
  }, 180_000);
});

describe('doctor()', () => {
  it('loads no Triton library into the calling process', async () => {
    const report = await doctor({
      library: LIBRARY_PATH,
      ...(BACKEND_DIR ? { backendDirectory: BACKEND_DIR } : {}),
    });
    expect(report.libraries[0]!.used).toBe(true);
    expect(libraryInfo()).toBeNull();
  });

  it('rejects options of the wrong type, naming them', async () => {
    await expect(doctor({ library: '' })).rejects.toThrow(
      'Expected a non-empty string for library but received',
    );
    await expect(doctor({ minComputeCapability: -1 })).rejects.toThrow(TypeError);
    await expect(doctor({ probeTimeoutMs: 1.5 })).rejects.toThrow('probeTimeoutMs');
  });

  it('formatDoctorReport() lays out any report the same way', () => {
    const report = {
      ok: false,
      checks: [
        { topic: 'addon', subject: 'a.node', status: 'ok', detail: 'fine' },
        {
          topic: 'library',
          subject: '/x/libtritonserver.so',
          status: 'fail',
          detail: 'not found',
          fix: 'install it',
        },
        { topic: 'limits', subject: '/dev/shm', status: 'warn', detail: 'small', fix: 'bigger' },
      ],
    } as unknown as DoctorReport;
    expect(formatDoctorReport(report)).toBe(
      [
        'STATUS TOPIC    SUBJECT                DETAIL',
        'ok     addon    a.node                 fine',
        'FAIL   library  /x/libtritonserver.so  not found',
        '                fix: install it',
        'WARN   limits   /dev/shm               small',
        '                fix: bigger',
        '',
        '1 ok, 1 warning(s), 1 failure(s): fix the FAIL lines above',
        '',
      ].join('\n'),
    );
  });
});

describe('doctor where only Triton is missing', () => {
  it('says how to try without Triton when that is the only failure, and only then', () => {
    const report = {
      ok: false,
      checks: [
        { topic: 'addon', subject: 'a.node', status: 'ok', detail: 'fine' },
        { topic: 'library', subject: '/opt/t/libtritonserver.so', status: 'fail', detail: 'not found' },
      ],
      libraries: [{ path: '/opt/t/libtritonserver.so', source: 'default', outcome: 'missing' }],
      addon: { fakeEngine: '/p/libtritonserver.so' },
    } as unknown as DoctorReport;
    expect(onlyTritonMissing(report)).toBe(true);
    expect(formatDoctorReport(report)).toContain(
      '1 ok, 0 warning(s), 1 failure(s): no Triton library, the rest is fine\nNo Triton here (none was asked for)',
    );
    // Asked for (TRITON_SERVER_LIB, --library), no fake engine, or another failure: a failure as before.
    const asked = structuredClone(report);
    asked.libraries[0]!.source = 'TRITON_SERVER_LIB';
    const noFake = structuredClone(report);
    noFake.addon.fakeEngine = null;
    const more = structuredClone(report);
    more.checks.push({ topic: 'cuda', subject: 'x', status: 'fail', detail: 'broken' });
    for (const r of [asked, noFake, more]) {
      expect(onlyTritonMissing(r)).toBe(false);
      expect(formatDoctorReport(r)).toContain('fix the FAIL lines above');
      expect(formatDoctorReport(r)).not.toContain('No Triton here');
    }
  });
});

describe('doctor: ONNX Runtime versions that would meet in one process', () => {
  const app = findOnnxRuntimeNode();
  const skip = app?.library === undefined ? 'onnxruntime-node (a devDependency) is not installed' : false;

  /** A backends directory whose onnxruntime backend has a libonnxruntime.so.1 of `version`. */
  function backendsWith(version: string): string {
    const dir = mkdtempSync(join(scratch, 'backends-'));
    mkdirSync(join(dir, 'onnxruntime'));
    // An ELF file names its symbol version in its string table; ONNX Runtime's is VERS_<version>.
    writeFileSync(
      join(dir, 'onnxruntime', 'libonnxruntime.so.1'),
      `\u007fELF\0OrtGetApiBase\0VERS_${version}\0`,
    );
    return dir;
  }

  it('reads the version from the library file', (ctx) => {
    skipIf(ctx, skip);
    expect(onnxRuntimeLibraryVersion(app!.library!)).toBe(app!.version);
    expect(onnxRuntimeLibraryVersion(join(scratch, 'absent.so'))).toBeNull();
  });

  it('warns when onnxruntime-node and the backend have different versions, naming both', (ctx) => {
    skipIf(ctx, skip);
    const { checks, facts } = checkOnnxRuntime(backendsWith('1.20.1'), app ?? null);
    expect(facts.backend?.libraryVersion).toBe('1.20.1');
    expect(facts.node?.libraryVersion).toBe(app!.version);
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ topic: 'onnx', status: 'warn' });
    expect(checks[0]!.detail).toContain(
      `onnxruntime-node ${app!.version} and the onnxruntime backend's 1.20.1`,
    );
    expect(checks[0]!.fix).toContain('onnxruntime-node@1.20.1');
  });

  it('is content when both are one version, and says the fake engine uses onnxruntime-node', (ctx) => {
    skipIf(ctx, skip);
    expect(checkOnnxRuntime(backendsWith(app!.version!), app ?? null).checks[0]).toMatchObject({
      status: 'ok',
    });
    expect(checkOnnxRuntime(null, app ?? null).checks[0]).toMatchObject({ status: 'info' });
    expect(checkOnnxRuntime(null, null).checks).toEqual([]);
  });

  it('the report has the line (on the backends directory under test)', async (ctx) => {
    skipIf(ctx, skip);
    const report = await doctor({
      library: LIBRARY_PATH,
      ...(BACKEND_DIR ? { backendDirectory: BACKEND_DIR } : {}),
    });
    const line = report.checks.find((c) => c.topic === 'onnx');
    expect(line).toBeDefined();
    expect(report.onnxRuntime.node?.version).toBe(app!.version);
    if (BACKEND_DIR !== undefined && existsSync(join(BACKEND_DIR, 'onnxruntime', 'libonnxruntime.so.1'))) {
      const same = report.onnxRuntime.backend?.libraryVersion === app!.version;
      expect(line!.status).toBe(same ? 'ok' : 'warn');
    }
  });
});

describe('doctor: the Python backend', () => {
  skipAllIf(noCompiler);

  /**
   * A backends directory with a python backend made with cc: the backend
   * library (needing `backendNeeds`), and a stub executable (unless told)
   * that needs `libPython`, executable unless told, with the utils file
   * unless told. Each needed library is built in `<dir>/lib` and stays
   * there unless `drop` names it; search() looks there only.
   */
  function pythonBackend(
    libPython: string,
    o: {
      executable?: boolean;
      stub?: boolean;
      utils?: boolean;
      backendNeeds?: string[];
      drop?: string[];
    } = {},
  ) {
    const dir = mkdtempSync(join(scratch, 'py-backends-'));
    const lib = (name: string) => buildElf(join(dir, 'lib', name));
    buildElf(join(dir, 'python', 'libtriton_python.so'), { needs: (o.backendNeeds ?? []).map(lib) });
    const stub = join(dir, 'python', 'triton_python_backend_stub');
    if (o.stub !== false) {
      buildElf(stub, { executable: true, needs: [lib(libPython)] });
      chmodSync(stub, o.executable === false ? 0o644 : 0o755);
    }
    if (o.utils !== false) writeFileSync(join(dir, 'python', 'triton_python_backend_utils.py'), '');
    for (const name of o.drop ?? []) rmSync(join(dir, 'lib', name));
    return dir;
  }
  const search = (dir: string) => onlyIn(join(dir, 'lib'));

  /** A PATH with only the given programs, as scripts that print what a Python would. */
  function pathWith(programs: Record<string, string>): string {
    const dir = mkdtempSync(join(scratch, 'path-'));
    for (const [name, script] of Object.entries(programs)) {
      writeFileSync(join(dir, name), `#!/bin/sh\n${script}\n`);
      chmodSync(join(dir, name), 0o755);
    }
    return dir;
  }
  const noTorch = 'echo "torch-error ModuleNotFoundError: No module named \'torch\'"';
  const goodPython = `echo version 3.11.2; echo numpy 1.24.2; ${noTorch}`;
  const withTorch = 'echo version 3.11.2; echo numpy 1.24.2; echo torch 2.8.0 12.8';
  const noNumpy = 'echo version 3.11.2; echo "ModuleNotFoundError: No module named \'numpy\'" >&2; exit 1';
  const check = (dir: string, path: string) => checkPython(dir, path, search(dir));

  it('reads the libpython a stub links from its dynamic section', () => {
    const dir = pythonBackend('libpython3.11.so.1.0');
    expect(linkedLibPython(join(dir, 'python', 'triton_python_backend_stub'))).toBe('libpython3.11.so.1.0');
    expect(linkedLibPython(join(dir, 'python', 'libtriton_python.so'))).toBeNull();
    expect(linkedLibPython(join(scratch, 'absent'))).toBeNull();
  });

  it('no python backend, or the fake engine: no lines', () => {
    expect(checkPython(null)).toEqual({ facts: null, checks: [] });
    expect(checkPython(scratch)).toEqual({ facts: null, checks: [] });
  });

  it('all there: the stub, Python 3.11 with numpy, torch (optional: a fact when absent), bash', () => {
    const path = pathWith({ 'python3.11': goodPython, bash: 'exit 0' });
    const dir = pythonBackend('libpython3.11.so.1.0');
    const { facts, checks } = check(dir, path);
    expect(facts).toMatchObject({
      stubExecutable: true,
      utils: true,
      libPython: 'libpython3.11.so.1.0',
      libPythonPath: join(dir, 'lib', 'libpython3.11.so.1.0'),
      missing: [],
      python: join(path, 'python3.11'),
      pythonVersion: '3.11.2',
      numpy: '1.24.2',
      torch: null,
      torchError: "ModuleNotFoundError: No module named 'torch'",
      bash: join(path, 'bash'),
    });
    expect(checks.map((c) => [c.subject.split('/').at(-1), c.status])).toEqual([
      ['triton_python_backend_stub', 'ok'],
      [join(path, 'python3.11').split('/').at(-1), 'ok'],
      ['torch', 'info'],
      ['bash', 'ok'],
    ]);
    expect(checks[1]!.detail).toBe('Python 3.11.2 with numpy 1.24.2 (the stub links libpython3.11.so.1.0)');
    expect(checks[2]!.detail).toBe(
      `${join(path, 'python3.11')} does not import torch (ModuleNotFoundError: No module named 'torch'): only models that import it need it`,
    );
    expect(checks[2]!.fix).toBe(`${join(path, 'python3.11')} -m pip install torch, if your models import it`);
    const torch = check(dir, pathWith({ 'python3.11': withTorch, bash: 'exit 0' }));
    expect(torch.checks[2]).toEqual({
      topic: 'python',
      subject: 'torch',
      status: 'ok',
      detail: 'torch 2.8.0 (CUDA 12.8)',
    });
  });

  it("the Python the stub's libpython belongs to, where the loader finds it, before PATH's", () => {
    const dir = pythonBackend('libpython3.11.so.1.0');
    // <prefix>/lib/libpython3.11.so.1.0 with <prefix>/bin/python3.11 beside it.
    const prefix = join(dir, 'prefix');
    mkdirSync(join(prefix, 'bin'), { recursive: true });
    buildElf(join(prefix, 'lib', 'libpython3.11.so.1.0'));
    writeFileSync(join(prefix, 'bin', 'python3.11'), `#!/bin/sh\n${withTorch}\n`);
    chmodSync(join(prefix, 'bin', 'python3.11'), 0o755);
    const path = pathWith({ 'python3.11': goodPython, bash: 'exit 0' });
    const { facts } = checkPython(dir, path, onlyIn(join(prefix, 'lib')));
    expect(facts).toMatchObject({
      libPythonPath: join(prefix, 'lib', 'libpython3.11.so.1.0'),
      python: join(prefix, 'bin', 'python3.11'),
      torch: '2.8.0',
    });
  });

  it('fails each missing part with a fix: stub, execute bit, utils, libraries, the Python, numpy, bash', () => {
    const path = pathWith({ 'python3.11': goodPython, bash: 'exit 0' });
    const fail = (dir: string, p = path) => check(dir, p).checks.filter((c) => c.status === 'fail');
    expect(fail(pythonBackend('libpython3.11.so.1.0', { stub: false }))[0]!.detail).toContain(
      'no triton_python_backend_stub beside libtriton_python.so',
    );
    const notExec = fail(pythonBackend('libpython3.11.so.1.0', { executable: false }))[0]!;
    expect(notExec.detail).toBe('triton_python_backend_stub is not executable');
    expect(notExec.fix).toMatch(/^chmod \+x .*triton_python_backend_stub$/);
    expect(fail(pythonBackend('libpython3.11.so.1.0', { utils: false }))[0]!.detail).toContain(
      'triton_python_backend_utils.py is missing',
    );
    const other = fail(pythonBackend('libpython3.13.so.1.0'));
    expect(other).toHaveLength(1);
    expect(other[0]).toMatchObject({ subject: 'python3.13' });
    expect(other[0]!.detail).toBe('the stub embeds libpython3.13.so.1.0, and no python3.13 is on PATH');
    const numpy = fail(
      pythonBackend('libpython3.11.so.1.0'),
      pathWith({ 'python3.11': noNumpy, bash: 'exit 0' }),
    );
    expect(numpy).toHaveLength(1);
    expect(numpy[0]!.detail).toContain("cannot import numpy (ModuleNotFoundError: No module named 'numpy')");
    const bash = fail(pythonBackend('libpython3.11.so.1.0'), pathWith({ 'python3.11': goodPython }));
    expect(bash.map((c) => c.subject)).toEqual(['bash']);
    expect(bash[0]!.detail).toContain('starts every stub through bash');
  });

  it("libraries the loader does not find, the backend's and the stub's: one failure naming each, with the fixes", () => {
    const path = pathWith({ 'python3.11': goodPython, bash: 'exit 0' });
    // libtritonserver.so is no folder's: the process the backend loads into has it.
    const dir = pythonBackend('libpython3.11.so.1.0', {
      backendNeeds: ['libtritonserver.so', 'libarchive.so.13'],
      drop: ['libtritonserver.so', 'libarchive.so.13', 'libpython3.11.so.1.0'],
    });
    const { facts, checks } = check(dir, path);
    const line = checks.find((c) => c.subject === 'libraries')!;
    expect(line).toMatchObject({
      topic: 'python',
      status: 'fail',
      detail:
        'the loader finds no libarchive.so.13 (for libtriton_python.so), libpython3.11.so.1.0 (for triton_python_backend_stub): python models cannot start',
    });
    expect(line.fix).toBe(
      "apt-get install libarchive13 (the python backend unpacks environments with it); install Python 3.11's shared library (Debian/Ubuntu: apt-get install libpython3.11), or put the folder of its libpython3.11.so.1.0 on LD_LIBRARY_PATH",
    );
    expect(facts).toMatchObject({
      libPythonPath: null,
      missing: [{ name: 'libarchive.so.13' }, { name: 'libpython3.11.so.1.0' }],
    });
  });

  it('on the python backend of TRITON_BACKEND_DIR (or /work/triton-cpu/install/backends)', (ctx) => {
    const dir = [BACKEND_DIR, '/work/triton-cpu/install/backends'].find(
      (d) => d !== undefined && existsSync(join(d, 'python', 'libtriton_python.so')),
    );
    skipIf(ctx, dir === undefined ? 'no python backend (TRITON_BACKEND_DIR/python)' : false);
    const { facts, checks } = checkPython(dir!);
    console.log(checks.map((c) => `${c.status} ${c.subject}: ${c.detail}`).join('\n'));
    expect(facts?.stubExecutable).toBe(true);
    expect(facts?.libPython).toMatch(/^libpython3\.\d+\.so/);
    // This machine's build: the stub links Debian's Python 3.11, which has numpy (torch is optional).
    expect(checks.filter((c) => c.status !== 'ok' && c.subject !== 'torch')).toEqual([]);
    expect(facts?.numpy).toMatch(/^\d+\.\d+/);
  });

  it("the report has the python lines and /dev/shm's free space (on the backends under test)", async (ctx) => {
    skipIf(
      ctx,
      BACKEND_DIR === undefined || !existsSync(join(BACKEND_DIR, 'python'))
        ? 'needs TRITON_BACKEND_DIR with a python backend'
        : false,
    );
    const report = await doctor({ library: LIBRARY_PATH, backendDirectory: BACKEND_DIR! });
    expect(report.python?.backend).toBe(join(BACKEND_DIR!, 'python', 'libtriton_python.so'));
    // The stub, its Python with numpy, torch (when numpy imports), bash.
    expect(report.checks.filter((c) => c.topic === 'python').length).toBe(report.python?.numpy ? 4 : 3);
    expect(report.limits.shmFreeBytes).toBeGreaterThan(0);
    expect(report.checks.find((c) => c.subject === '/dev/shm')?.detail).toMatch(/GiB free/);
  }, 120_000);
});

describe('doctor: the driver version in /proc/driver/nvidia/version', () => {
  // The file's text as the driver writes it (its first line names the module flavour).
  const SAMPLES: Array<[string, string]> = [
    [
      'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n' +
        'GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n',
      '580.65.06',
    ],
    [
      'NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  (dvs-builder@U22-I3-AE18-09-1)  Tue Sep 23 09:54:17 UTC 2025\n' +
        'GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n',
      '580.95.05',
    ],
    [
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n' +
        'GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n',
      '535.129.03',
    ],
    [
      'NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15  Tue Mar  5 22:15:33 UTC 2024\n' +
        'GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n',
      '550.54.15',
    ],
  ];

  it.each(SAMPLES)('reads the version of %j', (text, version) => {
    expect(parseKernelModuleVersion(text)).toBe(version);
  });

  it('reads nothing from a text without a version', () => {
    expect(parseKernelModuleVersion('')).toBeNull();
    expect(parseKernelModuleVersion('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64\n')).toBeNull();
  });
});
