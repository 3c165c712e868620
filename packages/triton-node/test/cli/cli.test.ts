/**
 * The `triton-node` command as the package ships it (dist/cli.js): one
 * shape for every command (`--help` lists them, `--version`, a repository as
 * an argument or with --repository), the first minute on a laptop (`demo`,
 * `serve --fake-engine` with an inference over HTTP, `doctor` without
 * Triton), and every command line the README and docs show, run with
 * `--help`, is one the CLI accepts.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODELS, runProcess, skipIf } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startServing } from '../../../gateway/test/serve-helpers.js';
import { repositoryArgs } from '../../lib/cli/args.js';
import { fakeEngine } from '../../lib/testing.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The repository: the README and docs/ are there. */
const REPOSITORY = join(ROOT, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const EXAMPLES = join(ROOT, 'examples', 'models');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The environment without a Triton named (the fake engine's tests must not pick one up). */
function noTritonEnv(): NodeJS.ProcessEnv {
  const { TRITON_SERVER_LIB: _lib, TRITON_BACKEND_DIR: _backends, ...env } = process.env;
  return env;
}

/** npm's own CLI script. */
function npmCli(): string {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm?.endsWith('npm-cli.js')) return fromNpm;
  return join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
}

// Not spawnSync: a test that runs the CLI many times (every documented command
// line) blocks for half a minute, more on a busy machine, which vitest's worker
// must spend answering its runner (runProcess).
async function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = await runProcess(process.execPath, [CLI, ...args], { env, timeoutMs: 180_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('the triton-node command', () => {
  it('--help lists every command, not one command’s options; --version prints the package’s', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const help = await cli([flag]);
      expect(help.status).toBe(0);
      for (const command of ['demo', 'serve', 'doctor', 'lint', 'types', 'tune'])
        expect(help.stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, 'm'));
      expect(help.stdout).not.toContain('--min-compute-capability');
    }
    for (const flag of ['--version', '-v'])
      expect(await cli([flag])).toMatchObject({ status: 0, stdout: `${VERSION}\n` });
    const unknown = await cli(['nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'nope'");
    expect((await cli(['doctor', '--help'])).stdout).toMatch(/^usage: triton-node doctor/);
  }, 180_000);

  it('every command takes its repository as an argument and with --repository, the same', async () => {
    expect(repositoryArgs('lint', ['--repository', 'a', '--format', 'json', 'b'])).toEqual([
      '--format',
      'json',
      'b',
      'a',
    ]);
    expect(repositoryArgs('types', ['a', '-o', 'x.d.ts', '--repository=b'])).toEqual([
      '-o',
      'x.d.ts',
      '--repository',
      'a',
      '--repository',
      'b',
    ]);
    for (const command of ['lint', 'types']) {
      const flagged = await cli([command, '--repository', EXAMPLES]);
      const positional = await cli([command, EXAMPLES]);
      expect(flagged.status, flagged.stderr).toBe(0);
      expect(positional).toEqual(flagged);
    }
    const doctorArgs = ['doctor', '--json', '--library', fakeEngine.libraryPath];
    const a = JSON.parse((await cli([...doctorArgs, EXAMPLES])).stdout) as { models: unknown[] };
    const b = JSON.parse((await cli([...doctorArgs, '--repository', EXAMPLES])).stdout) as {
      models: unknown[];
    };
    expect(a.models.length).toBe(readdirSync(EXAMPLES).length);
    expect(a.models).toEqual(b.models);
    const tune = await cli(['tune', MODELS, '--model', 'identity_fp32']);
    expect(tune.status).toBe(2);
    expect(tune.stderr).not.toContain('--repository is required');
  }, 180_000);

  it('`demo` runs the example models on the fake engine and says so', async () => {
    const child = await cli(['demo'], noTritonEnv());
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toContain("on the FAKE ENGINE (triton-node's own libtritonserver.so, not Triton)");
    expect(child.stdout).toContain(fakeEngine.libraryPath);
    expect(child.stdout).toContain('identity_fp32: INPUT0 [1,2,3,4] -> OUTPUT0 FP32 [1,4] = [1,2,3,4]');
    expect(child.stdout).toContain('repeat_int32: IN [10,20,30] -> 3 responses, OUT = [10,20,30]');
    expect(child.stdout).toContain('npx triton-node serve --fake-engine');
    const json = JSON.parse((await cli(['demo', '--json'], noTritonEnv())).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ engine: 'fake', infer: [1, 2, 3, 4], stream: [10, 20, 30] });
    expect((await cli(['demo', '--nope'])).status).toBe(2);
  }, 180_000);

  it('`doctor` without a Triton says how to try without one, and exits 3, not 1', async (ctx) => {
    skipIf(ctx, existsSync('/opt/tritonserver/lib/libtritonserver.so') && 'a Triton is installed here');
    const child = await cli(['doctor'], noTritonEnv());
    expect(child.status, child.stdout).toBe(3);
    expect(child.stdout).toContain('no Triton library, the rest is fine');
    expect(child.stdout).toContain('npx triton-node demo');
    expect(child.stdout).toContain('npx triton-node serve --fake-engine');
    // Anything else that fails is a failure: a library asked for that is not there.
    const asked = await cli(['doctor', '--library', '/nonexistent/libtritonserver.so'], noTritonEnv());
    expect(asked.status).toBe(1);
    expect(asked.stdout).toContain('fix the FAIL lines above');
  }, 180_000);

  it('`serve --fake-engine` serves the example models on the fake engine and stops on SIGTERM', async () => {
    const args = [CLI, 'serve', '--fake-engine', '--no-grpc', '--host', '127.0.0.1', '--http-port', '0'];
    const running = await startServing(process.execPath, args, noTritonEnv());
    try {
      const serving = running.lines.find((l) => l.msg === 'serving')!;
      expect(serving).toMatchObject({ engine: 'fake', triton: fakeEngine.libraryPath, models: EXAMPLES });
      // What it serves, asked of the server: the example models and their backends, no fixed list.
      const fake = running.lines.find((l) => String(l.msg).includes('fake engine (not Triton)'))!;
      expect(fake).toMatchObject({ level: 40, backends: ['identity', 'repeat'] });
      expect(fake.msg).toBe(
        "on triton-node's fake engine (not Triton): the fake's own identity, repeat backend(s) answer, not a real model",
      );
      const ready = running.lines.find((l) => String(l.msg).includes('model(s) ready'))!;
      expect([...(ready.models as string[])].sort()).toEqual(readdirSync(EXAMPLES).sort());
      expect(ready.msg).toContain('5 model(s) ready: ');
      expect(ready.msg).toContain('repeat_int32 (repeat)');
      expect(ready.msg).toContain('identity_fp32 (identity)');
      const res = await request(`http://127.0.0.1:${running.httpPort}/v2/models/identity_fp32/infer`, {
        method: 'POST',
        body: JSON.stringify({
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }],
        }),
      });
      const body = (await res.body.json()) as { outputs: Array<{ data: number[] }> };
      expect(res.statusCode).toBe(200);
      expect(body.outputs[0]!.data).toEqual([1, 2, 3]);
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
    expect((await cli(['serve', '--fake-engine', '--library', '/x.so'])).status).toBe(2);
  });

  it('`tune --fake-engine` tunes an example model on the fake engine, as serve --fake-engine serves them', async () => {
    const out = mkdtempSync(join(tmpdir(), 'tune-fake-'));
    try {
      const point = ['--concurrency', '1', '--instances', '1', '--preferred', '2', '--queue-delays', '100'];
      const short = ['--duration', '200ms', '--warmup', '50ms', '--out', out];
      const args = [
        'tune',
        '--fake-engine',
        '--model',
        'identity_fp32',
        '--sla-p99',
        '5s',
        ...point,
        ...short,
      ];
      const child = await cli(args, noTritonEnv());
      // 0 or 1 (a pick within the SLA or none): it ran; 2 is a usage or start error.
      expect([0, 1], child.stderr).toContain(child.status);
      expect(child.stderr).toContain(`on triton-node's fake engine (not Triton), models from ${EXAMPLES}`);
      const json = readdirSync(out).find((f) => f.endsWith('.json'));
      expect(json, `files in ${out}: ${readdirSync(out).join(', ')}`).toMatch(/^tune-identity_fp32-/);
      expect(child.stdout).toContain(`json:   ${join(out, json!)}`);
      // As serve: --fake-engine and --library name two libraries.
      const both = await cli([
        'tune',
        '--fake-engine',
        '--library',
        '/x.so',
        '--model',
        'm',
        '--sla-p99',
        '1ms',
      ]);
      expect(both.status).toBe(2);
      expect(both.stderr).toContain('--fake-engine and --library name two libraries');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);

  it('`npx triton-node serve` stops gracefully on a SIGTERM to npx, which npm does not pass on', async (ctx) => {
    skipIf(ctx, !existsSync(npmCli()) && `no npm here (looked for ${npmCli()})`);
    // In the repository, npx runs the package's own bin (dist/cli.js).
    const args = [npmCli(), 'exec', '--no', '--', 'triton-node', 'serve', '--fake-engine', '--no-grpc'];
    const running = await startServing(
      process.execPath,
      [...args, '--host', '127.0.0.1', '--http-port', '0'],
      noTritonEnv(),
    );
    const url = `http://127.0.0.1:${running.httpPort}/v2/health/live`;
    expect((await request(url)).statusCode).toBe(200);
    running.child.kill('SIGTERM');
    await running.exit; // npm is gone; the server, its grandchild, was not told
    const noticed = await running.logged('the npm process that started serve exited: shutting down');
    expect(noticed.level).toBe(40);
    await running.logged('stopped');
    await running.closed; // the server process exited
    await expect(request(url)).rejects.toThrow(/ECONNREFUSED/);
  });
});

/** `triton-node ...` command lines in the README and docs: code lines and inline code. */
function documentedCommands(): Array<{ file: string; line: string }> {
  const files = [
    'README.md',
    ...readdirSync(join(REPOSITORY, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const out: Array<{ file: string; line: string }> = [];
  for (const file of files) {
    const text = readFileSync(join(REPOSITORY, file), 'utf8');
    const pieces = [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
    const prose = text.replace(/```[a-z]*\n[\s\S]*?```/g, '');
    pieces.push(...[...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' ')));
    for (const piece of pieces) {
      const commandLine =
        /(?:^|[\s(;&])(?:npx |node dist\/cli\.js |node node_modules\/triton-node\/dist\/cli\.js )?triton-node ((?:demo|serve|doctor|lint|types|tune|bench|soak)\b[^#|;&)`,]*)/g;
      for (const m of piece.matchAll(commandLine)) out.push({ file, line: m[1]!.trim() });
    }
  }
  return out;
}

describe('the docs and --help', () => {
  const commands = documentedCommands();

  it('finds the command lines the docs show', () => {
    expect(commands.filter((c) => c.file === 'README.md').map((c) => c.line)).toEqual(
      expect.arrayContaining(['demo', 'doctor', 'serve --fake-engine']),
    );
  });

  it('every documented command line is one the CLI accepts (run with --help)', async () => {
    const refused: string[] = [];
    const seen = new Set<string>();
    for (const { file, line } of commands) {
      if (seen.has(line)) continue;
      seen.add(line);
      // Placeholders of usage lines stay words: <dir>, [--out file]; a shell would not split them differently.
      const words = line
        .replace(/[[\]]/g, ' ')
        .split(/\s+/)
        .filter((w) => w !== '' && w !== '...');
      const [command, ...rest] = words;
      const child = await cli([command!, ...rest, '--help'], noTritonEnv());
      if (child.status !== 0 || !/^usage: triton-node /i.test(child.stdout))
        refused.push(
          `${file}: triton-node ${line} --help -> ${child.status}: ${child.stderr.split('\n')[0]}`,
        );
    }
    expect(refused).toEqual([]);
  }, 180_000);

  it('docs/benchmarks.md names the bench commands that exist', () => {
    const text = readFileSync(join(REPOSITORY, 'docs', 'benchmarks.md'), 'utf8');
    expect(text).not.toMatch(/npx triton-node bench|node dist\/cli\.js bench/);
  });
});
