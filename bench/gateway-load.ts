/**
 * The gateway under load on loopback, against the same inferences called in
 * process: `triton-node serve` runs in a child process; autocannon drives its
 * HTTP routes (JSON and binary tensors) and a @grpc/grpc-js client its gRPC
 * ModelInfer, each with the same number of requests in flight, for 16 B and
 * 1 MiB FP32 tensors through identity_fp32; the in-process side calls
 * `model.infer()` in a closed loop of that concurrency. Prints a table of
 * req/s and p50/p99 per case with the gateway's ratio to in process, and
 * writes it as JSON. With `--sigterm`, a last HTTP run gets SIGTERM halfway:
 * the report says whether the drain finished (every accepted request
 * answered), the statuses seen, and the exit code.
 *
 *   npx tsx bench/gateway-load.ts [--library L] [--backend-dir D] [--duration 20]
 *     [--connections 256] [--cases http-json-16B,grpc-1MiB] [--sigterm] [--out bench/results]
 *
 * Results go to docs/benchmarks.md by hand, never into a test assertion.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import autocannon from 'autocannon';
import * as hdr from 'hdr-histogram-js';
import { Server } from 'triton-node';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    library: {
      type: 'string',
      default: process.env.TRITON_SERVER_LIB ?? `${ROOT}/packages/fake-engine/build/fake/libtritonserver.so`,
    },
    'backend-dir': { type: 'string', default: process.env.TRITON_BACKEND_DIR },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '256' },
    cases: { type: 'string' },
    sigterm: { type: 'boolean', default: false },
    out: { type: 'string', default: `${ROOT}/bench/results` },
  },
});
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const REPOSITORY = `${ROOT}/bench/models`;
const INFER = '/v2/models/identity_fp32/infer';

interface CaseResult {
  case: string;
  side: 'in-process' | 'gateway' | 'echo';
  requests: number;
  errors: number;
  non2xx: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

const SIZES = { '16B': 4, '1MiB': 262_144 } as const;
type Size = keyof typeof SIZES;

function input(size: Size): Float32Array {
  return Float32Array.from({ length: SIZES[size] }, (_, i) => i % 1000);
}

function httpBody(kind: 'json' | 'binary', size: Size): { body: Buffer; headers: Record<string, string> } {
  const data = input(size);
  if (kind === 'json') {
    const body = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, data.length], data: Array.from(data) }],
      }),
    );
    return { body, headers: { 'content-type': 'application/json' } };
  }
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, data.length],
          parameters: { binary_data_size: data.byteLength },
        },
      ],
      parameters: { binary_data_output: true },
    }),
  );
  return {
    body: Buffer.concat([header, Buffer.from(data.buffer)]),
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(header.length),
    },
  };
}

function histogram() {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600e6,
    numberOfSignificantValueDigits: 3,
  });
}

/** A closed loop of `concurrency` requests for `seconds`; latency in µs. */
async function closedLoop(
  concurrency: number,
  seconds: number,
  once: () => Promise<void>,
): Promise<{
  requests: number;
  errors: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  firstError?: string;
}> {
  const h = histogram();
  let requests = 0;
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await once();
        requests++;
        h.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - start) / 1000;
  const out = {
    requests,
    errors,
    seconds: elapsed,
    p50Ms: h.getValueAtPercentile(50) / 1000,
    p99Ms: h.getValueAtPercentile(99) / 1000,
    firstError,
  };
  h.destroy();
  return out;
}

interface Served {
  child: ChildProcess;
  httpPort: number;
  grpcPort: number;
  lines: Array<Record<string, unknown>>;
  exit: Promise<number | null>;
}

function startServe(): Promise<Served> {
  const args = [
    '--import',
    'tsx',
    `${ROOT}/lib/cli.ts`,
    'serve',
    '--repository',
    REPOSITORY,
    '--library',
    values.library!,
    ...(values['backend-dir'] ? ['--backend-dir', values['backend-dir']] : []),
    '--model-control-mode',
    'explicit',
    '--load-model',
    'identity_fp32',
    '--host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--grpc-port',
    '0',
    '--log-level',
    'info',
    '--max-body-bytes',
    String(16 << 20),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env },
  });
  const lines: Array<Record<string, unknown>> = [];
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          lines.push(parsed);
          if (parsed.msg === 'serving') {
            resolve({
              child,
              lines,
              exit,
              httpPort: parsed.httpPort as number,
              grpcPort: parsed.grpcPort as number,
            });
          }
        } catch {
          // not a log line
        }
      }
    });
    void exit.then((code) => reject(new Error(`serve exited with ${code} before serving`)));
  });
}

/**
 * The control: a plain node:http server in a child process that answers each
 * body with itself. What autocannon and the loopback reach on this machine
 * with no gateway and no Triton, for the same bodies.
 */
const ECHO = `const http = require('node:http');
const s = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => { const b = Buffer.concat(chunks); res.writeHead(200, { 'content-length': b.length }); res.end(b); });
});
s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

async function echoCase(kind: 'json' | 'binary', size: Size, seconds: number) {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve) =>
      child.stdout!.once('data', (d) => resolve(Number(String(d)))),
    );
    return await httpCase(port, '/', kind, size, seconds);
  } finally {
    child.kill();
  }
}

async function httpCase(port: number, route: string, kind: 'json' | 'binary', size: Size, seconds: number) {
  const { body, headers } = httpBody(kind, size);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${route}`,
    method: 'POST',
    body,
    headers,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
  });
  return {
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    reqPerSec: result.requests.total / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    statusCodes: result.statusCodeStats as Record<string, { count: number }> | undefined,
  };
}

async function grpcCase(served: Served, size: Size, seconds: number) {
  const def = protoLoader.loadSync(`${ROOT}/proto/kserve_v2.proto`, {
    keepCase: true,
    longs: String,
    enums: String,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    inference: {
      GRPCInferenceService: new (a: string, c: grpc.ChannelCredentials, o: object) => grpc.Client;
    };
  };
  // Several channels, as several client processes would open.
  const clients = Array.from(
    { length: 8 },
    () =>
      new pkg.inference.GRPCInferenceService(
        `127.0.0.1:${served.grpcPort}`,
        grpc.credentials.createInsecure(),
        {
          'grpc.use_local_subchannel_pool': 1,
          'grpc.max_receive_message_length': -1,
          'grpc.max_send_message_length': -1,
        },
      ) as grpc.Client & { ModelInfer(r: object, cb: (e: Error | null) => void): void },
  );
  const data = input(size);
  const request = {
    model_name: 'identity_fp32',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, data.length] }],
    raw_input_contents: [Buffer.from(data.buffer)],
  };
  let next = 0;
  const r = await closedLoop(CONNECTIONS, seconds, () => {
    const c = clients[next++ % clients.length]!;
    return new Promise((resolve, reject) => c.ModelInfer(request, (e) => (e ? reject(e) : resolve())));
  });
  for (const c of clients) c.close();
  return {
    requests: r.requests,
    errors: r.errors,
    non2xx: 0,
    reqPerSec: r.requests / r.seconds,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
  };
}

async function inProcess(size: Size, seconds: number) {
  const server = await Server.create({
    modelRepository: REPOSITORY,
    library: values.library,
    ...(values['backend-dir'] ? { backendDirectory: values['backend-dir'] } : {}),
  });
  try {
    await server.loadModel('identity_fp32');
    const model = server.model('identity_fp32');
    const data = input(size);
    const r = await closedLoop(CONNECTIONS, seconds, async () => {
      const result = await model.infer({ inputs: { INPUT0: { data, shape: [1, data.length] } } });
      result.dispose();
    });
    return {
      requests: r.requests,
      errors: r.errors,
      non2xx: 0,
      reqPerSec: r.requests / r.seconds,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
    };
  } finally {
    await server.stop();
  }
}

function selected(name: string): boolean {
  if (!values.cases) return true;
  return values.cases.split(',').some((c) => name.startsWith(c));
}

/** Runs one case on a fresh `serve` process: no backlog of the previous case slows it. */
async function onFreshServe<T>(run: (served: Served) => Promise<T>): Promise<T> {
  const served = await startServe();
  try {
    return await run(served);
  } finally {
    if (served.child.exitCode === null) {
      served.child.kill('SIGTERM');
      await served.exit;
    }
  }
}

/** SIGTERM halfway through a run: requests already accepted are answered (the drain finishes), new ones get 503 or a refused connection. */
function sigtermRun(): Promise<Record<string, unknown>> {
  return onFreshServe(async (served) => {
    const run = httpCase(served.httpPort, INFER, 'binary', '16B', DURATION_S);
    setTimeout(() => served.child.kill('SIGTERM'), (DURATION_S * 1000) / 2);
    const r = await run;
    const code = await served.exit;
    return {
      exitCode: code,
      drainFinished: served.lines.find((l) => l.msg === 'stopped')?.finished,
      inFlightAtSignal: served.lines.find((l) => l.msg === 'shutting down: draining')?.inFlight,
      answered: r.requests,
      statusCodes: r.statusCodes,
      clientErrors: r.errors,
    };
  });
}

function ratiosOf(results: CaseResult[]) {
  return results
    .filter((r) => r.side === 'gateway')
    .map((g) => {
      const size = g.case.endsWith('1MiB') ? '1MiB' : '16B';
      const base = results.find((r) => r.case === `in-process-${size}`);
      const echo = g.case.startsWith('http-')
        ? results.find((r) => r.case === g.case.replace(/^http-/, 'echo-'))
        : undefined;
      return {
        case: g.case,
        reqPerSecVsInProcess: base ? g.reqPerSec / base.reqPerSec : undefined,
        p99VsInProcess: base ? g.p99Ms / base.p99Ms : undefined,
        reqPerSecVsEcho: echo ? g.reqPerSec / echo.reqPerSec : undefined,
      };
    });
}

async function main(): Promise<void> {
  const results: CaseResult[] = [];
  const report = (name: string, side: CaseResult['side'], r: Omit<CaseResult, 'case' | 'side'>) => {
    results.push({ case: name, side, ...r });
    process.stderr.write(
      `${name.padEnd(20)} ${side.padEnd(10)} ${r.reqPerSec.toFixed(0).padStart(8)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  errors ${r.errors} non2xx ${r.non2xx}\n`,
    );
  };
  for (const size of ['16B', '1MiB'] as const) {
    if (selected(`in-process-${size}`))
      report(`in-process-${size}`, 'in-process', await inProcess(size, DURATION_S));
    for (const kind of ['binary', 'json'] as const) {
      const name = `echo-${kind}-${size}`;
      if (selected(name)) report(name, 'echo', await echoCase(kind, size, DURATION_S));
    }
    for (const kind of ['binary', 'json'] as const) {
      const name = `http-${kind}-${size}`;
      if (selected(name)) {
        report(
          name,
          'gateway',
          await onFreshServe((s) => httpCase(s.httpPort, INFER, kind, size, DURATION_S)),
        );
      }
    }
    if (selected(`grpc-${size}`)) {
      report(`grpc-${size}`, 'gateway', await onFreshServe((s) => grpcCase(s, size, DURATION_S)));
    }
  }
  const sigterm = values.sigterm ? await sigtermRun() : undefined;
  if (sigterm) process.stderr.write(`sigterm: ${JSON.stringify(sigterm)}\n`);
  const out = {
    when: new Date().toISOString(),
    library: values.library,
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      loadavg: os.loadavg(),
    },
    connections: CONNECTIONS,
    durationS: DURATION_S,
    results,
    ratios: ratiosOf(results),
    sigterm,
  };
  mkdirSync(values.out!, { recursive: true });
  const file = path.join(values.out!, `gateway-load-${out.when.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

await main();
