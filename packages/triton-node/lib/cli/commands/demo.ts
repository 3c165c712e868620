/**
 * `triton-node demo`: the first minute on a laptop. Starts an in-process
 * server on triton-node's fake engine (its own libtritonserver.so, built or
 * shipped with the package: no Triton, no GPU) with the example models the
 * package ships, runs an inference and a stream, and says plainly that it
 * ran on the fake engine and what to try next. Exit code 0 when it ran, 1
 * when the fake engine is not there (with the fix), 2 for a usage error.
 * @internal
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Server } from '../../index.js';
import { fakeEngine } from '../../testing.js';

export const DEMO_USAGE = `usage: triton-node demo [--json]
Runs the example models the package ships (examples/models) on triton-node's fake engine:
no Triton and no GPU needed. Then: triton-node serve --fake-engine serves them over HTTP and gRPC.
  --json        print what ran as JSON
  -h, --help    this text
`;

/** The folder of the triton-node package this code runs from (where package.json names it). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'triton-node')
          return dir;
      } catch {
        // not ours: keep looking
      }
    }
    const up = dirname(dir);
    if (up === dir)
      throw new Error(`triton-node: no package.json of triton-node above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** examples/models of this package: the models `demo` and `serve --fake-engine` use. */
export function exampleModels(): string {
  return join(packageRoot(), 'examples', 'models');
}

/** What the demo prints when the fake engine is missing. */
export const NO_FAKE_ENGINE =
  "triton-node: the fake engine is not here (it comes with the package's prebuilt binaries, or is built by\n" +
  '`npm install` from source). Run `npx triton-node doctor` to see what is missing, then `npm rebuild triton-node`.\n';

export async function demoCommand(args: string[]): Promise<number> {
  let json = false;
  try {
    const { values } = parseArgs({
      args,
      options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(DEMO_USAGE);
      return 0;
    }
    json = values.json === true;
  } catch (err) {
    process.stderr.write(`triton-node demo: ${(err as Error).message}\n${DEMO_USAGE}`);
    return 2;
  }
  if (!fakeEngine.available()) {
    process.stderr.write(NO_FAKE_ENGINE);
    return 1;
  }
  const modelRepository = exampleModels();
  const library = fakeEngine.libraryPath;
  const say = (line: string) => {
    if (!json) process.stdout.write(`${line}\n`);
  };
  say(`triton-node demo: on the FAKE ENGINE (triton-node's own libtritonserver.so, not Triton): ${library}`);
  say(`models: ${modelRepository}`);
  const server = await Server.create({ modelRepository, library, modelControlMode: 'explicit' });
  try {
    await server.loadModel('identity_fp32');
    await server.loadModel('repeat_int32');
    const input = Float32Array.of(1, 2, 3, 4);
    const result = await server
      .model('identity_fp32')
      .infer({ inputs: { INPUT0: { data: input, shape: [1, 4] } } });
    const out = result.outputs.OUTPUT0!;
    const inferred = Array.from(out.data as Float32Array);
    say(
      `infer  identity_fp32: INPUT0 [1,2,3,4] -> ${out.name} ${out.datatype} [${out.shape}] = [${inferred}]`,
    );
    const streamed: number[] = [];
    const stream = server.model('repeat_int32').stream({
      inputs: {
        IN: Int32Array.of(10, 20, 30),
        DELAY: Uint32Array.of(0, 0, 0),
        WAIT: Uint32Array.of(0),
      },
    });
    for await (const r of stream) {
      const value = r.outputs.OUT;
      if (value !== undefined) streamed.push(...Array.from(value.data as Int32Array));
    }
    say(`stream repeat_int32: IN [10,20,30] -> ${streamed.length} responses, OUT = [${streamed}]`);
    if (json) {
      const report = { engine: 'fake', library, modelRepository, infer: inferred, stream: streamed };
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      say('');
      say(
        "That ran on the fake engine, which implements Triton's C API with test backends (identity, repeat,",
      );
      say('square): real requests, no real models. Next:');
      say('  npx triton-node serve --fake-engine     serve these models over HTTP (8000) and gRPC (8001)');
      say('  npx triton-node doctor                  what it takes to run a real Triton here');
    }
  } finally {
    await server.stop();
  }
  return 0;
}
