/**
 * doctor: the libraries each backend needs. The ELF reader against
 * `readelf` on real files; the loader's search (RPATH, LD_LIBRARY_PATH,
 * RUNPATH, $ORIGIN, SONAMEs) on libraries made here with cc, against what
 * `ldd` (the loader itself) says of them; the pytorch backend's libtorch,
 * CUDA runtime and cuDNN lines, a backend with a library missing, and the
 * real CPU build's backends (TRITON_BACKEND_DIR).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BACKEND_DIR, skipAllIf, skipIf } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { addonBinaryPath } from '../../lib/addon/load.js';
import { readElfDynamic } from '../../lib/doctor/elf.js';
import { locateFor, neededLibraries } from '../../lib/doctor/ldso.js';
import { checkBackendNeeds } from '../../lib/doctor/needs.js';
import { checkPytorch } from '../../lib/doctor/pytorch.js';
import { buildElf, noCompiler, onlyIn, under } from './elf-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'triton-node-doctor-libs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const at = under(root);
const has = (tool: string) => spawnSync(tool, ['--version']).status === 0;

/** readelf's view of a file: NEEDED names, SONAME, RPATH and RUNPATH. */
function readelf(file: string) {
  const out = spawnSync('readelf', ['-d', file], { encoding: 'utf8' }).stdout;
  const all = (tag: string) =>
    [...out.matchAll(new RegExp(`\\(${tag}\\)\\s+.*?\\[(.*)\\]`, 'g'))].map((m) => m[1]!);
  const one = (tag: string) => all(tag)[0] ?? null;
  return {
    needed: all('NEEDED'),
    soname: one('SONAME'),
    rpath: one('RPATH')?.split(':') ?? null,
    runpath: one('RUNPATH')?.split(':') ?? null,
  };
}

/** What ldd (the loader) resolves for `file`: name → path, or null for 'not found'. */
function ldd(file: string, ldLibraryPath: string): Map<string, string | null> {
  const out = spawnSync('ldd', [file], {
    encoding: 'utf8',
    env: { ...process.env, LD_LIBRARY_PATH: ldLibraryPath },
  }).stdout;
  const map = new Map<string, string | null>();
  for (const m of out.matchAll(/^\s+(\S+) => (not found|\S+)/gm))
    map.set(m[1]!, m[2] === 'not found' ? null : resolve(m[2]!));
  return map;
}

describe('the ELF reader', () => {
  skipAllIf(noCompiler);

  it('reads NEEDED, SONAME, RUNPATH and RPATH as written ($ORIGIN kept)', () => {
    const a = buildElf(at('elf', 'liba.so.1'));
    const b = buildElf(at('elf', 'libb.so'), { soname: 'libb.so.2' });
    const withRunpath = buildElf(at('elf', 'librun.so'), {
      needs: [a, b],
      runpath: ['$ORIGIN/../lib', '/opt/x'],
    });
    expect(readElfDynamic(withRunpath)).toEqual({
      bits: 64,
      machine: readElfDynamic(a)!.machine,
      needed: ['liba.so.1', 'libb.so.2'],
      soname: 'librun.so',
      rpath: null,
      runpath: ['$ORIGIN/../lib', '/opt/x'],
    });
    const withRpath = buildElf(at('elf', 'librp.so'), { needs: [a], rpath: ['${ORIGIN}/r'] });
    expect(readElfDynamic(withRpath)).toMatchObject({ rpath: ['${ORIGIN}/r'], runpath: null });
  });

  it('is null for what is not an ELF file: text, a folder, nothing, a truncated header', () => {
    writeFileSync(at('elf', 'notes.txt'), 'libpython3.11.so.1.0\n');
    writeFileSync(at('elf', 'cut.so'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]));
    for (const f of [at('elf', 'notes.txt'), at('elf'), at('elf', 'absent.so'), at('elf', 'cut.so')])
      expect(readElfDynamic(f), f).toBeNull();
  });

  it("agrees with readelf on real files: the addon, the fake engine, this machine's libc and the backends under test", (ctx) => {
    skipIf(ctx, !has('readelf') && 'no readelf here');
    const files = [
      addonBinaryPath(),
      at('elf', 'librun.so'),
      ...['/lib/x86_64-linux-gnu/libc.so.6', '/lib/aarch64-linux-gnu/libc.so.6'].filter(existsSync),
      ...(BACKEND_DIR === undefined
        ? []
        : [
            'python/libtriton_python.so',
            'python/triton_python_backend_stub',
            'onnxruntime/libtriton_onnxruntime.so',
          ]
            .map((f) => join(BACKEND_DIR!, f))
            .filter(existsSync)),
    ];
    for (const file of files) expect(readElfDynamic(file), file).toMatchObject(readelf(file));
  });
});

describe("the loader's search, as ld.so does it", () => {
  skipAllIf(noCompiler);
  // app/libroot.so (RUNPATH $ORIGIN/deps) → deps/liba.so.1 → libb.so.2 (LD_LIBRARY_PATH only) and libgone.so.3 (removed)
  const a = at('tree', 'app', 'deps', 'liba.so.1');
  const rootLib = at('tree', 'app', 'libroot.so');
  if (!noCompiler) {
    const gone = buildElf(at('tree', 'tmp', 'libgone.so.3'));
    const b = buildElf(at('tree', 'ld', 'libb.so.2'));
    buildElf(a, { needs: [b, gone] });
    buildElf(rootLib, { needs: [a], runpath: ['$ORIGIN/deps'] });
    rmSync(gone);
  }

  it('finds each library where the loader would, breadth first, and says what is missing, for whom and where it looked', () => {
    const found = neededLibraries(rootLib, onlyIn(at('tree', 'ld')))!;
    expect(found.map((n) => [n.name, n.path, n.via])).toEqual([
      ['liba.so.1', at('tree', 'app', 'deps', 'liba.so.1'), 'RUNPATH'],
      ['libb.so.2', at('tree', 'ld', 'libb.so.2'), 'LD_LIBRARY_PATH'],
      ['libgone.so.3', null, null],
    ]);
    expect(found[2]).toMatchObject({ neededBy: a, searched: [`${at('tree', 'ld')} (LD_LIBRARY_PATH)`] });
    // liba's search has no RUNPATH of its own: the root's does not reach its needs.
    expect(neededLibraries(rootLib, onlyIn())!.map((n) => n.path === null)).toEqual([false, true, true]);
  });

  it('agrees with ldd', (ctx) => {
    skipIf(ctx, !has('ldd') && 'no ldd here');
    const loader = ldd(rootLib, at('tree', 'ld'));
    const mine = neededLibraries(rootLib, { ldLibraryPath: at('tree', 'ld') })!;
    for (const n of mine) expect([n.name, n.path], n.name).toEqual([n.name, loader.get(n.name)]);
  });

  it('RPATH comes before LD_LIBRARY_PATH and reaches the needs of needs; RUNPATH comes after, and stops it', () => {
    const early = buildElf(at('order', 'rpath', 'libdup.so.1'));
    const late = buildElf(at('order', 'ld', 'libdup.so.1'));
    buildElf(at('order', 'rpath', 'libdeep.so.1'));
    const middle = buildElf(at('order', 'mid', 'libmid.so.1'), {
      needs: [at('order', 'rpath', 'libdeep.so.1')],
    });
    const blocked = buildElf(at('order', 'blk', 'libmid.so.1'), {
      needs: [at('order', 'rpath', 'libdeep.so.1')],
      runpath: ['/nonexistent'],
    });
    const viaRpath = buildElf(at('order', 'app', 'librp.so'), {
      needs: [early, middle],
      rpath: ['$ORIGIN/../rpath', '$ORIGIN/../mid'],
    });
    const viaRunpath = buildElf(at('order', 'app', 'librun.so'), {
      needs: [early],
      runpath: ['$ORIGIN/../rpath'],
    });
    const search = onlyIn(at('order', 'ld'));
    const paths = (file: string, s = search) => neededLibraries(file, s)!.map((n) => [n.name, n.path, n.via]);
    expect(paths(viaRpath)).toEqual([
      ['libdup.so.1', early, 'RPATH'],
      ['libmid.so.1', middle, 'RPATH'],
      // libmid has no RUNPATH: its loader's RPATH is searched for its needs too.
      ['libdeep.so.1', at('order', 'rpath', 'libdeep.so.1'), 'RPATH'],
    ]);
    expect(paths(viaRunpath)).toEqual([['libdup.so.1', late, 'LD_LIBRARY_PATH']]);
    // A library with a RUNPATH of its own: the loaders' RPATHs are not searched for its needs.
    copyFileSync(blocked, at('order', 'mid', 'libmid.so.1'));
    expect(paths(viaRpath)[2]).toEqual(['libdeep.so.1', null, null]);
    if (has('ldd')) {
      const loader = ldd(viaRpath, at('order', 'ld'));
      expect(loader.get('libdup.so.1')).toBe(early);
      expect(loader.get('libdeep.so.1')).toBeNull();
    }
  });

  it('passes over a file of the name that is not a library of its kind; answers a dlopen by name', () => {
    mkdirSync(at('tree', 'fake'));
    writeFileSync(at('tree', 'fake', 'libb.so.2'), 'not ELF');
    const found = neededLibraries(a, onlyIn(at('tree', 'fake'), at('tree', 'ld')))!;
    expect(found[0]).toMatchObject({ name: 'libb.so.2', path: at('tree', 'ld', 'libb.so.2') });
    expect(locateFor(rootLib, 'liba.so.1', onlyIn())).toBe(at('tree', 'app', 'deps', 'liba.so.1'));
    expect(locateFor(rootLib, 'libnothing.so.1', onlyIn())).toBeNull();
  });
});

interface TorchBuild {
  /** A build for GPUs: libtorch_cuda.so, libc10_cuda.so and the CUDA runtime (default true). */
  cuda?: boolean;
  /** libtorch_cuda.so links cuDNN (default true); else it opens it on first use. */
  cudnnLinked?: boolean;
  /** Files removed once built, by name. */
  drop?: string[];
}

let builds = 0;
/**
 * A backends folder with a pytorch backend shaped like the NGC image's:
 * libtriton_pytorch.so (RUNPATH $ORIGIN) beside libtorch*.so and libc10*.so;
 * the CUDA runtime and cuDNN in folders of their own (cuda/, cudnn/), which
 * the search reaches through LD_LIBRARY_PATH.
 */
function torchBackend(o: TorchBuild = {}) {
  const cuda = o.cuda ?? true;
  const dir = at(`torch-${builds++}`);
  const p = (name: string) => join(dir, 'backends', 'pytorch', name);
  const server = buildElf(join(dir, 'tmp', 'libtritonserver.so'));
  const omp = buildElf(join(dir, 'omp', 'libomp_fake.so.5'));
  const cudart = buildElf(join(dir, 'cuda', 'libcudart.so.12'));
  const cudnn = buildElf(join(dir, 'cudnn', 'libcudnn.so.9'));
  const c10 = buildElf(p('libc10.so'));
  const cpu = buildElf(p('libtorch_cpu.so'), { needs: [c10, omp], runpath: ['$ORIGIN'] });
  const gpu = cuda
    ? [
        buildElf(p('libc10_cuda.so'), { needs: [c10, cudart], runpath: ['$ORIGIN'] }),
        buildElf(p('libtorch_cuda.so'), {
          needs: [cpu, p('libc10_cuda.so'), cudart, ...(o.cudnnLinked === false ? [] : [cudnn])],
          runpath: ['$ORIGIN'],
        }),
      ]
    : [];
  const torch = buildElf(p('libtorch.so'), { needs: [cpu, ...gpu.slice(1)], runpath: ['$ORIGIN'] });
  buildElf(p('libtriton_pytorch.so'), { needs: [torch, cpu, ...gpu, c10, server], runpath: ['$ORIGIN'] });
  rmSync(server);
  rmSync(omp);
  for (const name of o.drop ?? []) {
    for (const f of [p(name), join(dir, 'cuda', name), join(dir, 'cudnn', name)]) rmSync(f, { force: true });
  }
  const search = {
    ...onlyIn(join(dir, 'cuda'), join(dir, 'cudnn'), join(dir, 'omp-installed')),
    loaded: { 'libtritonserver.so': '/opt/tritonserver/lib/libtritonserver.so' },
  };
  // libomp is "installed" unless dropped: copied where LD_LIBRARY_PATH reaches.
  mkdirSync(join(dir, 'omp-installed'));
  if (!(o.drop ?? []).includes('libomp_fake.so.5')) buildElf(join(dir, 'omp-installed', 'libomp_fake.so.5'));
  return { backends: join(dir, 'backends'), dir, search };
}

const lines = (r: ReturnType<typeof checkPytorch>) => r.checks.map((c) => [c.subject, c.status, c.detail]);

describe('doctor: the pytorch backend', () => {
  skipAllIf(noCompiler);

  it('all there: libtorch with CUDA, the CUDA runtime and cuDNN, each where the loader finds it', () => {
    const t = torchBackend();
    const r = checkPytorch(t.backends, t.search);
    expect(lines(r)).toEqual([
      [
        'libtorch',
        'ok',
        `libtorch.so in ${join(t.backends, 'pytorch')} (RUNPATH), with CUDA (libtorch_cuda.so)`,
      ],
      ['CUDA runtime', 'ok', `libcudart.so.12: ${join(t.dir, 'cuda', 'libcudart.so.12')} (LD_LIBRARY_PATH)`],
      ['cuDNN', 'ok', `libcudnn.so.9: ${join(t.dir, 'cudnn', 'libcudnn.so.9')} (LD_LIBRARY_PATH)`],
    ]);
    expect(r.facts).toMatchObject({
      backend: join(t.backends, 'pytorch', 'libtriton_pytorch.so'),
      libtorch: join(t.backends, 'pytorch', 'libtorch.so'),
      cuda: true,
      cudnn: { name: 'libcudnn.so.9', linked: true },
      missing: [],
    });
  });

  it('no CUDA runtime: a failure naming libcudart.so.12 and who needs it, with the fix', () => {
    const t = torchBackend({ drop: ['libcudart.so.12'] });
    const line = checkPytorch(t.backends, t.search).checks.find((c) => c.subject === 'CUDA runtime')!;
    expect(line).toMatchObject({
      status: 'fail',
      detail: 'the loader finds no libcudart.so.12 (for libc10_cuda.so): the pytorch backend does not load',
    });
    expect(line.fix).toMatch(/^install the CUDA 12 runtime .*LD_LIBRARY_PATH \(\/usr\/local\/cuda-12\/lib64/);
  });

  it('cuDNN that libtorch opens itself: found where libtorch_cuda.so looks, or a warning with the fix', () => {
    const found = torchBackend({ cudnnLinked: false });
    expect(lines(checkPytorch(found.backends, found.search))[2]).toEqual([
      'cuDNN',
      'ok',
      `libcudnn.so.9: ${join(found.dir, 'cudnn', 'libcudnn.so.9')} (libtorch opens it on the first GPU convolution)`,
    ]);
    const absent = torchBackend({ cudnnLinked: false, drop: ['libcudnn.so.9'] });
    const r = checkPytorch(absent.backends, absent.search);
    expect(r.checks[2]).toMatchObject({
      subject: 'cuDNN',
      status: 'warn',
      detail:
        'no libcudnn.so.9 where libtorch_cuda.so looks: models load, and their first GPU convolution fails',
    });
    expect(r.checks[2]!.fix).toContain('pip install nvidia-cudnn-cu12');
    expect(r.facts?.cudnn).toEqual({ name: 'libcudnn.so.9', path: null, linked: false });
    // Linked and missing: the backend does not load at all.
    const linked = torchBackend({ drop: ['libcudnn.so.9'] });
    expect(checkPytorch(linked.backends, linked.search).checks[2]).toMatchObject({
      subject: 'cuDNN',
      status: 'fail',
    });
  });

  it('libtorch_cuda.so missing: the libtorch line fails, naming it, with the fix', () => {
    const t = torchBackend({ drop: ['libtorch_cuda.so'] });
    const r = checkPytorch(t.backends, t.search);
    expect(r.checks[0]).toMatchObject({
      subject: 'libtorch',
      status: 'fail',
      detail:
        'the pytorch backend does not load: the loader finds no libtorch_cuda.so (for libtriton_pytorch.so)',
    });
    expect(r.checks[0]!.fix).toContain('nvcr.io/nvidia/tritonserver');
    expect(r.facts?.missing).toEqual([
      { name: 'libtorch_cuda.so', neededBy: join(t.backends, 'pytorch', 'libtriton_pytorch.so') },
    ]);
  });

  it('a CPU-only libtorch says so; another library missing is a line of its own', () => {
    const cpu = torchBackend({ cuda: false });
    expect(lines(checkPytorch(cpu.backends, cpu.search))).toEqual([
      [
        'libtorch',
        'ok',
        `libtorch.so in ${join(cpu.backends, 'pytorch')} (RUNPATH): CPU only (no libtorch_cuda.so): KIND_GPU models cannot run`,
      ],
    ]);
    const omp = torchBackend({ drop: ['libomp_fake.so.5'] });
    const line = checkPytorch(omp.backends, omp.search).checks.find((c) => c.subject === 'libraries')!;
    expect(line).toMatchObject({
      status: 'fail',
      detail: 'the pytorch backend does not load: the loader finds no libomp_fake.so.5 (for libtorch_cpu.so)',
    });
    expect(line.fix).toContain('apt-file search libomp_fake.so.5');
  });

  it('no pytorch backend: no lines', () => {
    expect(checkPytorch(null)).toEqual({ facts: null, checks: [] });
    expect(checkPytorch(at('elf'))).toEqual({ facts: null, checks: [] });
  });
});

describe('doctor: every backend library', () => {
  skipAllIf(noCompiler);

  it('a backend whose library is missing fails, naming it; pytorch and python say theirs on their own lines', () => {
    const t = torchBackend({ drop: ['libtorch_cuda.so'] });
    const nvinfer = buildElf(join(t.dir, 'trt', 'libnvinfer.so.10'));
    buildElf(join(t.backends, 'tensorrt', 'libtriton_tensorrt.so'), { needs: [nvinfer] });
    buildElf(join(t.backends, 'identity', 'libtriton_identity.so'));
    rmSync(nvinfer);
    const r = checkBackendNeeds(t.backends, ['identity', 'pytorch', 'tensorrt'], t.search);
    expect(r.facts.map((f) => [f.backend, f.missing.map((m) => m.name)])).toEqual([
      ['identity', []],
      ['pytorch', ['libtorch_cuda.so']],
      ['tensorrt', ['libnvinfer.so.10']],
    ]);
    expect(r.checks).toEqual([
      {
        topic: 'backends',
        subject: join(t.backends, 'tensorrt', 'libtriton_tensorrt.so'),
        status: 'fail',
        detail:
          'the tensorrt backend does not load: the loader finds no libnvinfer.so.10 (for libtriton_tensorrt.so)',
        fix: "use the NGC Triton image, or put TensorRT's lib folder on LD_LIBRARY_PATH (pip install tensorrt)",
      },
    ]);
    expect(checkBackendNeeds(null, ['identity'], {})).toEqual({ facts: [], checks: [] });
  });

  it('the real CPU build (TRITON_BACKEND_DIR): every backend loads, as ldd sees it', (ctx) => {
    skipIf(ctx, BACKEND_DIR === undefined && 'needs TRITON_BACKEND_DIR (source /tmp/real.sh)');
    const backends = ['identity', 'onnxruntime', 'python', 'repeat', 'square'].filter((b) =>
      existsSync(join(BACKEND_DIR!, b, `libtriton_${b}.so`)),
    );
    const r = checkBackendNeeds(BACKEND_DIR!, backends, {
      loaded: { 'libtritonserver.so': 'libtritonserver.so' },
    });
    expect(r.facts.map((f) => f.backend)).toEqual(backends);
    expect(r.facts.flatMap((f) => f.missing)).toEqual([]);
    expect(r.checks).toEqual([]);
    if (!has('ldd')) return;
    for (const f of r.facts) {
      const loader = ldd(f.library, process.env.LD_LIBRARY_PATH ?? '');
      const mine = neededLibraries(f.library, { loaded: { 'libtritonserver.so': 'libtritonserver.so' } })!;
      for (const n of mine.filter((x) => x.name !== 'libtritonserver.so' && loader.has(x.name)))
        expect(n.path, `${f.backend}: ${n.name}`).toBe(loader.get(n.name));
    }
  });
});
