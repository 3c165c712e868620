/**
 * An HTTP service with Triton inside: POST /infer runs identity on a JSON
 * array of numbers, GET /metrics serves Triton's Prometheus metrics joined
 * with the service's own prom-client metrics (if prom-client is installed).
 *
 *   node --import tsx examples/metrics-server.ts        # listens on 127.0.0.1:8000 (PORT to change)
 *   curl -s -X POST localhost:8000/infer -d '[1, 2, 3]'
 *   curl -s localhost:8000/metrics | grep nv_inference_request_success
 *
 * Engine: the fake engine by default, real Triton when TRITON_SERVER_LIB is set
 * (examples/engine.mjs); the first line it prints says which.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MetricsRegistry, Server, TritonError } from 'triton-node';
import { engine } from './engine.mjs';

const PORT = Number(process.env.PORT ?? 8000);
const HOST = '127.0.0.1';

/** A model repository with one identity model, made for this run. */
async function makeRepository(): Promise<string> {
  const repo = await mkdtemp(join(tmpdir(), 'triton-metrics-example-'));
  await mkdir(join(repo, 'identity_fp32', '1'), { recursive: true });
  await writeFile(
    join(repo, 'identity_fp32', 'config.pbtxt'),
    [
      'name: "identity_fp32"',
      'backend: "identity"',
      'max_batch_size: 8',
      'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
      'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
      'dynamic_batching { }',
      'instance_group [ { count: 1 kind: KIND_CPU } ]',
      '',
    ].join('\n'),
  );
  return repo;
}

/** prom-client is optional: the service's own metrics when it is installed. */
async function serviceRegistry(): Promise<{
  registry?: MetricsRegistry;
  observe: (route: string, status: number, seconds: number) => void;
}> {
  try {
    const prom = await import('prom-client');
    const registry = new prom.Registry();
    prom.collectDefaultMetrics({ register: registry, prefix: 'metrics_example_' });
    const latency = new prom.Histogram({
      name: 'metrics_example_http_request_seconds',
      help: 'HTTP request latency of the example service',
      labelNames: ['route', 'status'],
      registers: [registry],
    });
    return {
      registry,
      observe: (route, status, seconds) => latency.observe({ route, status: String(status) }, seconds),
    };
  } catch {
    return { observe: () => {} };
  }
}

async function readBody(req: http.IncomingMessage, limit = 1 << 20): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new RangeError(`request body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

async function main(): Promise<void> {
  const { library, backendDirectory } = engine('metrics-server');
  const repository = await makeRepository();
  const server = await Server.create({
    modelRepository: repository,
    library,
    // A real Triton's backends, when they are not beside its lib/ folder.
    backendDirectory,
    log: { info: false },
  });
  await server.loadModel('identity_fp32');
  const model = server.model('identity_fp32');
  const { registry, observe } = await serviceRegistry();
  const metrics = server.metricsHandler(registry);
  const requests = server.createMetric({
    kind: 'counter',
    name: 'metrics_example_infer_requests',
    description: 'Inference requests the example service accepted',
    labels: { model: 'identity_fp32' },
  });

  const http_ = http.createServer((req, res) => {
    const started = process.hrtime.bigint();
    const route = (req.url ?? '/').split('?')[0]!;
    res.on('finish', () => observe(route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9));
    if (route === '/metrics') {
      metrics(req, res);
      return;
    }
    if (route === '/infer' && req.method === 'POST') {
      readBody(req)
        .then(async (body) => {
          const values = JSON.parse(body) as unknown;
          if (!Array.isArray(values) || values.some((v) => typeof v !== 'number')) {
            return send(res, 400, { error: 'expected a JSON array of numbers' });
          }
          if (values.length === 0) return send(res, 400, { error: 'expected at least one number' });
          requests.increment();
          const result = await model.infer({
            inputs: { INPUT0: { data: Float32Array.from(values), shape: [1, values.length] } },
            timing: true,
          });
          send(res, 200, {
            output: Array.from(result.outputs.OUTPUT0!.data as Float32Array),
            timing: result.timing,
          });
        })
        .catch((err: unknown) => {
          const status = err instanceof SyntaxError || err instanceof TypeError ? 400 : 500;
          const code = err instanceof TritonError ? err.code : undefined;
          send(res, status, { error: err instanceof Error ? err.message : String(err), code });
        });
      return;
    }
    send(res, 404, { error: `no route ${req.method} ${route}: try POST /infer or GET /metrics` });
  });

  await new Promise<void>((resolve) => http_.listen(PORT, HOST, resolve));
  const address = http_.address();
  const port = typeof address === 'object' && address ? address.port : PORT;
  console.log(
    `[metrics-server] listening on http://${HOST}:${port} (POST /infer, GET /metrics); Ctrl-C stops`,
  );

  const shutdown = async () => {
    console.log('[metrics-server] stopping');
    await new Promise<void>((resolve) => http_.close(() => resolve()));
    requests.dispose();
    await server.stop();
    await rm(repository, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
