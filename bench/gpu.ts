/**
 * GPU memory benchmark (issue 6): a 64 MiB FP32 tensor through identity with
 * the input and the output in pageable host memory, pinned host memory or
 * device memory, and the throughput of each placement.
 *
 * Run on a machine with a GPU (after `npm run build`):
 *   node --import tsx bench/gpu.ts [--library PATH] [--iterations N] [--mib N] [--device N]
 * JSON goes to stdout, progress to stderr. Without CUDA it prints a JSON
 * document saying why nothing was measured and exits 0.
 *
 * Each request writes into a destination allocated once (`outputs: { OUTPUT0:
 * { into } }`), so first-touch page faults are no part of a request; inputs are
 * filled once before the warm-up. GB/s is the tensor size divided by the
 * median time of one request (one tensor in, one out).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type CudaBuffer, type HostBuffer, cuda } from 'triton-node';

type Placement = 'pageable' | 'pinned' | 'device';

interface CaseResult {
  name: string;
  input: Placement;
  output: Placement;
  iterations: number;
  medianMs: number;
  p90Ms: number;
  minMs: number;
  /** Tensor bytes / median seconds / 1e9. */
  gbps: number;
  verified: boolean;
}

interface PublicServer {
  loadModel(name: string, options?: { config?: Record<string, unknown> }): Promise<void>;
  model(name: string): {
    infer(request: Record<string, unknown>): Promise<{ outputs: Record<string, { data: unknown }> }>;
  };
  stop(): Promise<void>;
}

interface PublicApi {
  Server: { create(options: Record<string, unknown>): Promise<PublicServer> };
  libraryInfo?: () => { path: string; isFake: boolean } | null;
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values: args } = parseArgs({
  options: {
    library: { type: 'string' },
    'backend-dir': { type: 'string' },
    iterations: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    mib: { type: 'string', default: '64' },
    device: { type: 'string', default: '0' },
  },
});

function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new TypeError(`--${name} must be a non-negative integer, got '${value}'`);
  return n;
}

const iterations = Math.max(1, positiveInt('iterations', args.iterations));
const warmup = positiveInt('warmup', args.warmup);
const mib = Math.max(1, positiveInt('mib', args.mib));
const device = positiveInt('device', args.device);
const bytes = mib * 1024 * 1024;
const elements = bytes / 4;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** A server on `library` with bench/models (explicit model control). */
async function createServer(api: PublicApi, library: string): Promise<PublicServer> {
  const options: Record<string, unknown> = {
    modelRepository: join(root, 'bench', 'models'),
    library,
    modelControlMode: 'explicit',
    log: { info: false, warn: false },
    exitTimeoutSeconds: 5,
  };
  if (args['backend-dir']) options.backendDirectory = args['backend-dir'];
  else if (process.env.TRITON_BACKEND_DIR) options.backendDirectory = process.env.TRITON_BACKEND_DIR;
  return api.Server.create(options);
}

/** Times `iterations` requests of one placement (after the warm-up) and logs the line. */
async function timePlacement(
  model: ReturnType<PublicServer['model']>,
  request: Record<string, unknown>,
  input: Placement,
  output: Placement,
  verified: boolean,
): Promise<CaseResult> {
  const name = `${input}->${output}`;
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await model.infer(request);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const medianMs = percentile(times, 50);
  const result: CaseResult = {
    name,
    input,
    output,
    iterations,
    medianMs,
    p90Ms: percentile(times, 90),
    minMs: times[0]!,
    gbps: bytes / (medianMs / 1000) / 1e9,
    verified,
  };
  log(
    `${name.padEnd(20)} median ${medianMs.toFixed(2)} ms  ${result.gbps.toFixed(2)} GB/s${verified ? '' : '  WRONG OUTPUT'}`,
  );
  return result;
}

async function main(): Promise<void> {
  if (!cuda.isAvailable()) {
    process.stdout.write(
      `${JSON.stringify({ benchmark: 'gpu-memory', skipped: true, reason: cuda.unavailableReason() }, null, 2)}\n`,
    );
    return;
  }
  const library =
    args.library ?? process.env.TRITON_SERVER_LIB ?? join(root, 'build', 'fake', 'libtritonserver.so');
  if (!existsSync(library))
    throw new Error(`no Triton library at ${library} (build the fake or pass --library)`);

  const api = (await import('triton-node')) as unknown as PublicApi;
  const server = await createServer(api, library);
  const info = api.libraryInfo?.() ?? null;
  const isFake = info?.isFake ?? library.includes(join('build', 'fake'));
  try {
    // bench/models/identity_fp32, with a GPU instance so a real Triton runs
    // it as the GPU model it would be in production.
    await server.loadModel('identity_fp32', {
      config: {
        name: 'identity_fp32',
        backend: 'identity',
        max_batch_size: 8,
        input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
        instance_group: [{ count: 1, kind: 'KIND_GPU', gpus: [device] }],
      },
    });
    const model = server.model('identity_fp32');

    // The data, once per placement; a pattern the check can recognise.
    const source = new Float32Array(elements);
    for (let i = 0; i < elements; i++) source[i] = (i % 65521) * 0.5;
    const pinnedIn = cuda.allocHost(bytes);
    pinnedIn.copyFrom(source);
    const deviceIn = cuda.alloc(bytes, { device });
    deviceIn.copyFrom(pinnedIn);
    const pageableOut = new Float32Array(elements);
    pageableOut.fill(-1); // touch every page now, not during a request
    const pinnedOut = cuda.allocHost(bytes);
    const deviceOut = cuda.alloc(bytes, { device });

    const inputs: Record<Placement, Float32Array | HostBuffer | CudaBuffer> = {
      pageable: source,
      pinned: pinnedIn,
      device: deviceIn,
    };
    const outputs: Record<Placement, Float32Array | HostBuffer | CudaBuffer> = {
      pageable: pageableOut,
      pinned: pinnedOut,
      device: deviceOut,
    };
    const check = new Float32Array(elements);
    const verify = (out: Placement): boolean => {
      const dst = outputs[out];
      if (dst instanceof Float32Array) check.set(dst);
      else dst.copyTo(check);
      for (let i = 0; i < elements; i += 4099) if (check[i] !== source[i]) return false;
      return check[elements - 1] === source[elements - 1];
    };
    const clear = (out: Placement) => {
      const dst = outputs[out];
      if (dst instanceof Float32Array) dst.fill(0);
      else dst.copyFrom(new Float32Array(elements));
    };

    const placements: Array<[Placement, Placement]> = [
      ['pageable', 'pageable'],
      ['pinned', 'pinned'],
      ['device', 'device'],
      ['pageable', 'device'],
      ['pinned', 'device'],
      ['device', 'pageable'],
      ['device', 'pinned'],
    ];
    const results: CaseResult[] = [];
    for (const [input, output] of placements) {
      const request = {
        inputs: { INPUT0: { data: inputs[input], shape: [1, elements], datatype: 'FP32' } },
        outputs: { OUTPUT0: { into: outputs[output] } },
      };
      clear(output);
      for (let i = 0; i < warmup; i++) await model.infer(request);
      const verified = verify(output);
      results.push(await timePlacement(model, request, input, output, verified));
    }

    const find = (i: Placement, o: Placement) => results.find((r) => r.input === i && r.output === o)!;
    const ratio = (a: CaseResult, b: CaseResult) => a.gbps / b.gbps;
    const report = {
      benchmark: 'gpu-memory',
      engine: isFake
        ? 'fake engine (triton-node test double: identity copies GPU buffers with cudaMemcpy, not real Triton)'
        : 'Triton',
      library: info?.path ?? library,
      tensorBytes: bytes,
      device,
      deviceCount: cuda.deviceCount(),
      iterations,
      warmup,
      node: process.version,
      gbpsDefinition: 'tensor bytes / median request time (one tensor in and one out per request)',
      results,
      ratios: {
        pinnedOverPageable: ratio(find('pinned', 'pinned'), find('pageable', 'pageable')),
        deviceOverPageable: ratio(find('device', 'device'), find('pageable', 'pageable')),
        pinnedToDeviceOverPageableToDevice: ratio(find('pinned', 'device'), find('pageable', 'device')),
        deviceToPinnedOverDeviceToPageable: ratio(find('device', 'pinned'), find('device', 'pageable')),
      },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    for (const b of [pinnedIn, deviceIn, pinnedOut, deviceOut]) b.dispose();
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  process.stderr.write(
    `bench/gpu.ts failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
});
