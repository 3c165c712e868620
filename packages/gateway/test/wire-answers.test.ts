/**
 * The gateway answers as tritonserver r25.07 does where NVIDIA's own clients
 * and qa tests look (issue 43): raw binary requests, a load override that is
 * not JSON, a full queue, shapes past 2^53 and negative, 'data' nested deep,
 * an empty shared memory key. The answers of Triton's core are recorded in
 * test/fixtures/real-triton-r25.07/wire-answers.json (wire-record.ts), and
 * what tritonserver's HTTP server answers itself is written there as its
 * source reads; each case checks HTTP and, where the protocol has it, gRPC.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { FIXTURES, settledStatistics, useServer } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../lib/index.js';
import { httpCall, kserveClient, parseBinaryResponse, useGateway } from './helpers.js';
import { WIRE_MODELS, writeWireModels } from './wire-models.js';

interface Answer {
  code: string;
  message: string;
}
interface RawCase {
  model: string;
  body: string;
  submitError?: Answer;
  response?: { outputs: Array<{ name: string; datatype: string; shape: number[]; bytes: string }> };
}
interface FrontendCase extends Answer {
  case: string;
  status: number;
  shape?: string;
}
const RECORDED = JSON.parse(readFileSync(join(FIXTURES, 'real-triton-r25.07/wire-answers.json'), 'utf8')) as {
  core: {
    raw: RawCase[];
    loadConfigNotJson: Array<Answer & { model: string; config: string }>;
    queueFull: Answer;
  };
  frontend: { cases: FrontendCase[] };
};
const frontend = (name: string) => RECORDED.frontend.cases.find((c) => c.case.startsWith(name))!;

/** Triton's codes (as the addon names them, or as TRITONSERVER_ErrorCodeString says them) → HTTP status, gRPC code (http_server.cc HttpCodeFromError, grpc_utils.cc). */
const STATUS: Record<string, [number, number]> = {
  INVALID_ARG: [400, grpc.status.INVALID_ARGUMENT],
  'Invalid argument': [400, grpc.status.INVALID_ARGUMENT],
  INTERNAL: [500, grpc.status.INTERNAL],
  UNAVAILABLE: [503, grpc.status.UNAVAILABLE],
};

const repo = writeWireModels(mkdtempSync(join(tmpdir(), 'wire-models-')));
afterAll(() => rmSync(repo, { recursive: true, force: true }));
const server = useServer(Object.keys(WIRE_MODELS), { modelRepository: repo, modelControlMode: 'explicit' });
const gateway = useGateway(server);

type Msg = Record<string, unknown>;
type Unary = (req: Msg, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;
let client: grpc.Client & Record<string, Unary>;
let grpcServer: grpc.Server;

beforeAll(async () => {
  grpcServer = new grpc.Server();
  await createGateway(server()).addToGrpcServer(grpcServer);
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = kserveClient<Record<string, Unary>>();
  client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(() => {
  client?.close();
  grpcServer?.forceShutdown();
});

function rpc(method: string, req: Msg): Promise<Msg> {
  return new Promise((resolve, reject) =>
    client[method]!(req, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

async function rpcError(method: string, req: Msg): Promise<grpc.ServiceError | undefined> {
  return rpc(method, req).then(
    () => undefined,
    (err: grpc.ServiceError) => err,
  );
}

/** An HTTP answer's error: its status and `{"error"}` text. */
async function httpError(path: string, options: Parameters<typeof httpCall>[2]) {
  const r = await httpCall(gateway().url, path, options);
  return { status: r.status, error: (r.json as { error?: string } | undefined)?.error ?? r.text };
}

const fp32 = (shape: string, data = '[1.0]') =>
  `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":${shape},"data":${data}}]}`;

describe('raw binary requests (Inference-Header-Content-Length: 0)', () => {
  it('take the body as the only input, and answer as the recorded core did: outputs binary, or its error', async () => {
    expect(RECORDED.core.raw.length).toBeGreaterThanOrEqual(7);
    for (const c of RECORDED.core.raw) {
      const r = await httpCall(gateway().url, `/v2/models/${c.model}/infer`, {
        body: Buffer.from(c.body, 'hex'),
        headers: { 'Inference-Header-Content-Length': '0', 'Content-Type': 'application/octet-stream' },
      });
      const what = `${c.model} with ${c.body.length / 2} bytes: ${r.text.slice(0, 300)}`;
      if (c.submitError !== undefined) {
        expect([r.status, r.json?.error], what).toEqual([
          STATUS[c.submitError.code]![0],
          c.submitError.message,
        ]);
        continue;
      }
      expect(r.status, what).toBe(200);
      const length = Number(r.headers['inference-header-content-length']);
      expect(Number.isInteger(length), what).toBe(true);
      const { outputs } = parseBinaryResponse(r.bytes, length);
      expect(
        outputs.map((o) => ({
          name: o.name,
          datatype: o.datatype,
          shape: o.shape,
          bytes: o.bytes?.toString('hex'),
        })),
        what,
      ).toEqual(c.response!.outputs);
    }
  });
});

describe('a load whose config override is not JSON', () => {
  it('fails as Triton fails it: 500 (gRPC INTERNAL) and "failed to load"', async () => {
    for (const c of RECORDED.core.loadConfigNotJson) {
      const [status, code] = STATUS[c.code]!;
      const http = await httpError(`/v2/repository/models/${c.model}/load`, {
        json: { parameters: { config: c.config } },
      });
      expect(http, c.config).toEqual({ status, error: c.message });
      const g = await rpcError('RepositoryModelLoad', {
        model_name: c.model,
        parameters: { config: { string_param: c.config } },
      });
      expect([g?.code, g?.details], c.config).toEqual([code, c.message]);
    }
  });
});

describe('a request past max_queue_size while the first waits for its batch', () => {
  const body = fp32('[1,2]', '[[1.0,2.0]]');

  /**
   * The second request's answer, sent once the first is queued (submitted in
   * process, before the second is sent): queue_one waits 1 s for a batch of
   * 8, so the first is still queued unless the machine stalled that long.
   * A second request taken is tried again only when it ran in an execution
   * of its own (the first had left the queue: the machine was late); one
   * batched with the first was taken while the first was queued.
   */
  async function second<T>(send: () => Promise<T>, refused: (t: T) => boolean): Promise<T> {
    const model = server().model('queue_one');
    for (let tries = 1; ; tries++) {
      const before = await settledStatistics(model);
      const first = model.infer({ inputs: { INPUT0: { data: new Float32Array([1, 2]), shape: [1, 2] } } });
      const answer = await send();
      await first;
      if (refused(answer)) return answer;
      const after = await settledStatistics(model);
      if (after.executionCount - before.executionCount < 2 || tries === 5) return answer;
    }
  }

  it("is refused as Triton's core refused it: 503 (gRPC UNAVAILABLE) and its text", async () => {
    const { code, message } = RECORDED.core.queueFull;
    const [status, grpcCode] = STATUS[code]!;
    const http = await second(
      () => httpError('/v2/models/queue_one/infer', { body }),
      (a) => a.status !== 200,
    );
    expect(http).toEqual({ status, error: message });
    const g = await second(
      () =>
        rpcError('ModelInfer', {
          model_name: 'queue_one',
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
        }),
      (e) => e !== undefined,
    );
    expect([g?.code, g?.details]).toEqual([grpcCode, message]);
  });
});

describe("what tritonserver's HTTP server refuses before its core", () => {
  it('a shape past INT64_MAX elements or bytes, read exactly past 2^53: 400 and its text', async () => {
    for (const name of ['shape whose element count', 'shape whose byte size']) {
      const c = frontend(name);
      expect(await httpError('/v2/models/raw_fp32/infer', { body: fp32(c.shape!) }), name).toEqual({
        status: c.status,
        error: c.message,
      });
    }
  });

  it('a negative dimension: 500 and its text', async () => {
    const c = frontend('negative dimension');
    expect(await httpError('/v2/models/raw_fp32/infer', { body: fp32(c.shape!) })).toEqual({
      status: c.status,
      error: c.message,
    });
  });

  it("'data' nested 100 deep: 400 and its text; 99 deep is taken", async () => {
    const c = frontend("'data' nested 100 deep");
    const nested = (depth: number, value: string) => '['.repeat(depth) + value + ']'.repeat(depth);
    for (const [model, datatype, value] of [
      ['raw_bytes', 'BYTES', '"hello"'],
      ['int64_identity', 'INT64', '123'],
    ] as const) {
      const body = (depth: number) =>
        `{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[1,1],"data":${nested(depth, value)}}]}`;
      const taken = await httpCall(gateway().url, `/v2/models/${model}/infer`, { body: body(99) });
      expect(taken.status, `${datatype} 99 deep: ${taken.text}`).toBe(200);
      for (const depth of [100, 120]) {
        expect(
          await httpError(`/v2/models/${model}/infer`, { body: body(depth) }),
          `${datatype} ${depth}`,
        ).toEqual({
          status: c.status,
          error: c.message,
        });
      }
    }
  });

  it('system shared memory with an empty key: 500 (gRPC INTERNAL) and its text', async () => {
    const c = frontend('system shared memory');
    const http = await httpError('/v2/systemsharedmemory/region/empty_key/register', {
      json: { key: '', offset: 0, byte_size: 4 },
    });
    expect(http.status).toBe(c.status);
    expect(http.error.startsWith(c.message), http.error).toBe(true);
    const g = await rpcError('SystemSharedMemoryRegister', {
      name: 'empty_key',
      key: '',
      offset: 0,
      byte_size: 4,
    });
    expect(g?.code).toBe(STATUS[c.code]![1]);
    expect(g?.details.startsWith(c.message), g?.details).toBe(true);
  });
});
