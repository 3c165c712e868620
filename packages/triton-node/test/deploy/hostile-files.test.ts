// A hostile tenant's files: a config.pbtxt that is a link to /dev/zero, a
// FIFO or 17 MiB; a link or FIFO planted in /dev/shm; model names and file
// paths that climb out of the repository; a deployment history that is not
// one. Each is refused with a typed error naming the file, the key or the
// name, promptly, and nothing is written where it should not be. On the
// fake and on a real Triton.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODELS, SETTLE_MS, serverOptions, useServer } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useGateway } from '../../../gateway/test/helpers.js';
import { Server, TritonError, lint } from '../../lib/index.js';

const MODEL = 'identity_fp32';

/** A folder holding `repo/` (identity_fp32 and the given copies of it), so that writes beside the repository show. */
function sandbox(copies: string[]): { root: string; repo: string } {
  const root = mkdtempSync(join(tmpdir(), 'triton-node-hostile-files-'));
  const repo = join(root, 'repo');
  for (const name of [MODEL, ...copies]) {
    cpSync(join(MODELS, MODEL), join(repo, name), { recursive: true });
    if (name !== MODEL) {
      const config = readFileSync(join(repo, name, 'config.pbtxt'), 'utf8');
      writeFileSync(join(repo, name, 'config.pbtxt'), config.replace(`"${MODEL}"`, `"${name}"`));
    }
  }
  return { root, repo };
}

/** Replaces `file` with a FIFO. */
function fifo(file: string): void {
  rmSync(file, { force: true, recursive: true });
  execFileSync('mkfifo', [file]);
}

/** Collects the process warnings emitted while `work` runs. */
async function warningsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => seen.push(w.message);
  process.on('warning', listener);
  try {
    await work();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

describe('a config.pbtxt that is not a regular file, or too large', () => {
  const { root, repo } = sandbox(['zero_link', 'fifo_config', 'huge_config']);
  let server: Server;
  beforeAll(async () => {
    unlinkSync(join(repo, 'zero_link', 'config.pbtxt'));
    symlinkSync('/dev/zero', join(repo, 'zero_link', 'config.pbtxt'));
    fifo(join(repo, 'fifo_config', 'config.pbtxt'));
    // 17 MiB, sparse: over the 16 MiB limit without writing it.
    truncateSync(join(repo, 'huge_config', 'config.pbtxt'), 17 * 1024 * 1024);
    server = await Server.create(serverOptions({ modelRepository: repo }));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const cases = [
    ['zero_link', /it is a character device, not a regular file/],
    ['fifo_config', /it is a FIFO, not a regular file/],
    ['huge_config', /larger than the 16 MiB limit/],
  ] as const;

  it('lint() reports each as one config-syntax error naming the file, and returns (no hang, no crash)', () => {
    const report = lint(repo);
    for (const [name, why] of cases) {
      const found = report.findings.filter((f) => f.model === name);
      expect(found, name).toHaveLength(1);
      expect(found[0]).toMatchObject({ rule: 'config-syntax', severity: 'error' });
      expect(found[0]!.message).toContain(join(repo, name, 'config.pbtxt'));
      expect(found[0]!.message).toMatch(why);
    }
    expect(report.findings.filter((f) => f.model === MODEL && f.severity === 'error')).toEqual([]);
  });

  it('loadModel(name) and loadModel(name, { versions }) reject with INVALID_ARG naming the file; Triton never reads it', async () => {
    for (const [name, why] of cases) {
      for (const options of [{}, { versions: [1] }]) {
        const err = await server.loadModel(name, options).catch((e: unknown) => e);
        expect(err, name).toBeInstanceOf(TritonError);
        expect((err as TritonError).code).toBe('INVALID_ARG');
        expect((err as TritonError).message).toContain(join(repo, name, 'config.pbtxt'));
        expect((err as TritonError).message).toMatch(why);
      }
    }
    // The server is fine: a regular model still loads and serves.
    await server.loadModel(MODEL);
    const r = await server.model(MODEL).infer({ inputs: { INPUT0: Float32Array.of(7) } });
    expect((r.outputs.OUTPUT0!.data as Float32Array)[0]).toBe(7);
  });

  it('a server that would load them at startup is refused before Triton starts, naming the file', async () => {
    for (const extra of [{ modelControlMode: 'none' as const }, { startupModels: ['fifo_config'] }]) {
      const err = await Server.create(serverOptions({ modelRepository: repo, ...extra })).catch(
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(extra)).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('INVALID_ARG');
      expect((err as Error).message).toContain(join(repo, 'fifo_config', 'config.pbtxt'));
      expect((err as Error).message).toMatch(/it is a FIFO, not a regular file/);
    }
    // Every such file at once, not the first one found.
    const all = await Server.create(serverOptions({ modelRepository: repo, modelControlMode: 'none' })).catch(
      (e: unknown) => e as Error,
    );
    for (const [name, why] of cases) {
      expect((all as Error).message).toContain(join(repo, name, 'config.pbtxt'));
      expect((all as Error).message).toMatch(why);
    }
  });

  it("a server with lint: 'error' refuses them the same way (its synchronous lint read does not block)", async () => {
    const linted = await Server.create(serverOptions({ modelRepository: repo, lint: 'error' }));
    try {
      await expect(linted.loadModel('fifo_config')).rejects.toThrow(/it is a FIFO, not a regular file/);
    } finally {
      await linted.stop();
    }
  });
});

describe('system shared memory: links and FIFOs in /dev/shm, keys that are not one name', () => {
  const server = useServer([MODEL]);
  const gw = useGateway(server);
  const base = `triton-node-hostile-${process.pid}`;
  const outside = join(mkdtempSync(join(tmpdir(), 'triton-node-shm-target-')), 'secret');
  beforeAll(() => {
    writeFileSync(outside, 'the bytes of another file');
    symlinkSync(outside, `/dev/shm/${base}-link`);
    execFileSync('mkfifo', [`/dev/shm/${base}-fifo`]);
    const fd = openSync(`/dev/shm/${base}-ok`, 'w+');
    ftruncateSync(fd, 16);
    closeSync(fd);
  });
  afterAll(() => {
    for (const s of ['link', 'fifo', 'ok']) rmSync(`/dev/shm/${base}-${s}`, { force: true });
    rmSync(join(outside, '..'), { recursive: true, force: true });
  });

  const register = async (region: string, key: string) => {
    const res = await request(`${gw().url}/v2/systemsharedmemory/region/${region}/register`, {
      method: 'POST',
      body: JSON.stringify({ key, offset: 0, byte_size: 8 }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, error: (JSON.parse(text) as { error?: string }).error };
  };

  it('a link planted in /dev/shm is not followed: 400 naming the key, and the file it points to stays unread and unwritten', async () => {
    const r = await register('linked', `/${base}-link`);
    expect(r.status).toBe(400);
    expect(r.error).toMatch(new RegExp(`'/${base}-link' is a symbolic link`));
    const status = await request(`${gw().url}/v2/systemsharedmemory/status`);
    expect(await status.body.json()).toEqual([]);
    expect(readFileSync(outside, 'utf8')).toBe('the bytes of another file');
  });

  it('a FIFO in /dev/shm: 400 (the open does not wait for a writer)', async () => {
    // An open that waited for a writer would wait for ever: the answer must come at all.
    const r = await Promise.race([
      register('piped', `${base}-fifo`),
      new Promise<never>((_, reject) => {
        setTimeout(
          () => reject(new Error(`no answer in ${SETTLE_MS} ms: the open waits for a writer`)),
          SETTLE_MS,
        ).unref();
      }),
    ]);
    expect(r.status).toBe(400);
    expect(r.error).toMatch(new RegExp(`'${base}-fifo' is not a shared memory object`));
  });

  it("keys that are not one name under shm_open's rules: Triton's 500 naming the key; a NUL, 400", async () => {
    // A NUL would cut the key short (Triton's C string) and open another object: refused as malformed.
    const nul = await register('bad', `${base}\0ok`);
    expect(nul.status).toBe(400);
    expect(nul.error).toMatch(/invalid key .*has a NUL character/);
    // The rest shm_open refuses, and Triton answers INTERNAL "Unable to open shared memory region: '<key>'".
    const bad: Array<[string, RegExp]> = [
      [`/${base}/ok`, /has a '\/' after the leading one/],
      ['', /names no object/],
      ['/', /names no object/],
      ['..', /names no object/],
      ['x'.repeat(256), /longer than 255 bytes/],
    ];
    for (const [key, why] of bad) {
      const r = await register('bad', key);
      expect(r.status, JSON.stringify(key)).toBe(500);
      expect(r.error?.startsWith(`Unable to open shared memory region: '${key}' (invalid key: `)).toBe(true);
      expect(r.error).toMatch(why);
    }
    // Leading slashes are dropped, as shm_open does: a regular object registers.
    expect((await register('fine', `//${base}-ok`)).status).toBe(200);
  });
});

describe('deploy: names and paths that leave the repository, histories that are not one', () => {
  const { root, repo } = sandbox([]);
  const modelDir = join(repo, MODEL);
  let server: Server;
  beforeAll(async () => {
    server = await Server.create(serverOptions({ modelRepository: repo }));
    await server.loadModel(MODEL);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const entries = () => readdirSync(modelDir).sort();

  it('a model name that is not one folder name is refused before anything is written', async () => {
    mkdirSync(join(root, 'outside'));
    cpSync(join(modelDir, 'config.pbtxt'), join(root, 'outside', 'config.pbtxt'));
    for (const name of ['../outside', 'a/b', '.', '..', 'x\\y']) {
      const err = await server.deploy(name, { files: { 'notes.txt': 'x' } }).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(/expected a model name that is one folder name/);
      await expect(server.rollback(name, { to: 1 })).rejects.toThrow(/one folder name/);
      await expect(server.deployments(name)).rejects.toThrow(/one folder name/);
    }
    expect(readdirSync(join(root, 'outside'))).toEqual(['config.pbtxt']);
    expect(readdirSync(root).sort()).toEqual(['outside', 'repo']);
  });

  it('file paths that are not inside the version folder are refused before anything is written', async () => {
    const before = entries();
    const bad: Array<Record<string, string>> = [
      { '.': 'x' },
      { '': 'x' },
      { 'a/./b': 'x' },
      { 'a/../../b': 'x' },
      { '/etc/passwd': 'x' },
      { 'a//b': 'x' },
      { 'a\\..\\b': 'x' },
      { 'a\0b': 'x' },
      { a: 'x', 'a/b': 'y' },
    ];
    for (const files of bad) {
      await expect(server.deploy(MODEL, { files }), JSON.stringify(files)).rejects.toThrow(
        /deploy files\['.*'\]: (expected a path inside the version folder|'a' is also given as a file)/s,
      );
    }
    expect(entries()).toEqual(before);
    // The model deploys normally afterwards: version 2 is a folder with the file.
    const d = await server.deploy(MODEL, { files: { 'weights/notes.txt': 'v2' } });
    expect(d).toMatchObject({ status: 'succeeded', to: 2, pinned: 2 });
    expect(readFileSync(join(modelDir, '2', 'weights', 'notes.txt'), 'utf8')).toBe('v2');
  });

  it('a files deploy whose version does not load leaves no folder behind', async () => {
    const before = entries();
    const d = await server.deploy(MODEL, {
      files: { 'notes.txt': 'v3' },
      config: { name: MODEL, backend: 'no_such_backend' },
    });
    expect(d).toMatchObject({ status: 'failed', to: 3, pinned: 2 });
    expect(entries()).toEqual(before);
  });

  it('history lines that are not deployments are skipped with a warning naming file:line; loadModel still restores', async () => {
    const file = join(modelDir, 'deployments.jsonl');
    const good = readFileSync(file, 'utf8').trim().split('\n');
    const lines = [
      'null',
      good[0]!,
      JSON.stringify({ ...JSON.parse(good[0]!), loaded: 'all' }),
      '{"kind":"deploy"',
      '42',
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const again = await Server.create(serverOptions({ modelRepository: repo }));
    try {
      const warnings = await warningsOf(async () => {
        await again.loadModel(MODEL);
        expect(again.pinnedVersion(MODEL)).toBe(2);
        const history = await again.deployments(MODEL);
        expect(history).toHaveLength(1);
        expect(history[0]).toMatchObject({ kind: 'deploy', to: 2, status: 'succeeded' });
      });
      for (const n of [1, 3, 4, 5]) expect(warnings.join('\n')).toContain(`${file}:${n}:`);
      expect(warnings.join('\n')).not.toContain(`${file}:2:`);
    } finally {
      await again.stop();
    }
  });

  it('a history that is a directory, a FIFO or a link: deploy and deployments() reject naming it, loadModel warns and loads', async () => {
    const file = join(modelDir, 'deployments.jsonl');
    const target = join(root, 'elsewhere.jsonl');
    writeFileSync(target, readFileSync(file));
    const targetText = readFileSync(target, 'utf8');
    for (const make of [(f: string) => mkdirSync(f), fifo, (f: string) => symlinkSync(target, f)]) {
      rmSync(file, { recursive: true, force: true });
      make(file);
      const before = entries();
      for (const call of [
        () => server.deployments(MODEL),
        () => server.deploy(MODEL, { files: { 'notes.txt': 'v' } }),
        () => server.rollback(MODEL, { to: 1 }),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(TritonError);
        expect((err as TritonError).code).toBe('INVALID_ARG');
        expect((err as Error).message).toContain(file);
        expect((err as Error).message).toMatch(/not a regular file( \(not followed\))?; move it away/);
      }
      expect(entries()).toEqual(before);
      expect(server.pinnedVersion(MODEL)).toBe(2);
      const again = await Server.create(serverOptions({ modelRepository: repo }));
      try {
        const warnings = await warningsOf(() => again.loadModel(MODEL));
        expect(warnings.join('\n')).toMatch(/deployment history was not read/);
        expect(await again.model(MODEL).isReady()).toBe(true);
      } finally {
        await again.stop();
      }
    }
    rmSync(file, { recursive: true, force: true });
    expect(existsSync(file)).toBe(false);
    // The file the link pointed to was neither appended to nor replaced.
    expect(readFileSync(target, 'utf8')).toBe(targetText);
  });

  it('a link or FIFO planted as the history after the deploy read it: the append neither follows nor waits, the deploy rejects naming it', async () => {
    const file = join(modelDir, 'deployments.jsonl');
    const target = join(root, 'planted-target.jsonl');
    writeFileSync(target, 'not yours\n');
    const plants: Array<[string, (f: string) => void, RegExp]> = [
      ['link', (f) => symlinkSync(target, f), /it is a symbolic link, not a regular file \(not followed\)/],
      ['fifo', fifo, /it is a FIFO, not a regular file/],
    ];
    for (const [what, plant, why] of plants) {
      rmSync(file, { recursive: true, force: true });
      const pinned = server.pinnedVersion(MODEL)!;
      // The deploy reads the history first; the link appears while the new version loads.
      const err = await server
        .deploy(MODEL, {
          files: { 'notes.txt': what },
          onStep: (s) => {
            if (s.step === 'loading') plant(file);
          },
        })
        .catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(TritonError);
      expect((err as TritonError).code).toBe('INVALID_ARG');
      expect((err as Error).message).toContain(`cannot write ${file}`);
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).toMatch(/ended 'succeeded' \(pinned: \d+\) but is not in the history/);
      expect(server.pinnedVersion(MODEL)).toBeGreaterThan(pinned);
    }
    // Nothing was written through the link.
    expect(readFileSync(target, 'utf8')).toBe('not yours\n');
    rmSync(file, { recursive: true, force: true });
  });
});
