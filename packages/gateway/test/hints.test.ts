/**
 * Errors in the protocol's words: the library ends some messages with advice
 * for a JS caller ("server.loadModel('x') loads it", "use model.stream()
 * instead of infer()"); a remote client can do nothing with a JS call, so the
 * gateway keeps Triton's message and says the advice in HTTP or gRPC terms
 * (or not at all). Every HTTP route and every RPC of the proto is driven into
 * an error here, with undici and @grpc/grpc-js, and no answer may name a JS
 * call.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { useServer } from '@triton-node/test-support/helpers.js';
import { type ErrorHint, TritonError, hintText } from 'triton-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolHint } from '../lib/errors.js';
import { createGateway } from '../lib/index.js';
import { httpCall, kserveClient, useGateway } from './helpers.js';

const server = useServer(['identity_fp32', 'repeat_int32']);
const gw = useGateway(server);
const readOnly = useGateway(server, { repositoryControl: false });

/** A JS call in a message: `server.loadModel(`, `model.stream(`, `Server.create(`, `infer()`. */
const JS_CALL = /\b(server|model|result|stream|tensor|Server)\.\w+\(|\b(loadModel|unloadModel|infer)\(/;

const FP32 = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 2] }] };
const INT32 = { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] };
const GENERATE = { text_input: 'x' };

/** Every HTTP route, each driven into an error: [method, path, JSON body]. */
const HTTP_ROUTES: Array<[string, string, unknown]> = [
  ['GET', '/v2/models/no_such_model', undefined],
  ['GET', '/v2/models/identity_fp32/versions/7', undefined],
  ['GET', '/v2/models/no_such_model/ready', undefined],
  ['GET', '/v2/models/no_such_model/config', undefined],
  ['GET', '/v2/models/identity_fp32/versions/7/config', undefined],
  ['GET', '/v2/models/no_such_model/stats', undefined],
  ['POST', '/v2/models/no_such_model/infer', FP32],
  ['POST', '/v2/models/identity_fp32/versions/7/infer', FP32],
  ['POST', '/v2/models/repeat_int32/infer', INT32],
  ['POST', '/v2/models/no_such_model/generate', GENERATE],
  ['POST', '/v2/models/repeat_int32/generate', GENERATE],
  ['POST', '/v2/models/no_such_model/generate_stream', GENERATE],
  ['POST', '/v2/models/identity_fp32/versions/7/generate_stream', GENERATE],
  ['POST', '/v2/models/identity_fp32/nothing', FP32],
  ['POST', '/v2/repository/index', { ready: 'yes' }],
  ['POST', '/v2/repository/models/no_such_model/load', {}],
  ['POST', '/v2/repository/models/no_such_model/unload', {}],
  ['POST', '/v2/repository/models/identity_fp32/load', { parameters: { nope: 'x' } }],
  ['GET', '/v2/systemsharedmemory/region/no_such_region/unregister', undefined],
  ['GET', '/v2/systemsharedmemory/region/no_such_region/status', undefined],
  ['POST', '/v2/systemsharedmemory/region/r/register', { key: '/no_such_key', offset: 0, byte_size: 8 }],
  ['POST', '/v2/cudasharedmemory/region/r/register', { raw_handle: { b64: 'AA==' }, device_id: 0 }],
  ['GET', '/v2/cudasharedmemory/region/no_such_region/status', undefined],
  ['POST', '/v2/health/live', {}],
  ['POST', '/v2/health/ready', {}],
  ['POST', '/v2', {}],
  ['POST', '/v2/models/stats', {}],
  ['POST', '/metrics', {}],
  ['GET', '/v2/nothing', undefined],
];

const call = (base: string, method: string, path: string, json: unknown) =>
  httpCall(base, path, { method, json });

describe('HTTP', () => {
  it.each(HTTP_ROUTES)('%s %s: an error without a JS call in it', async (method, path, json) => {
    for (const base of [gw().url, readOnly().url]) {
      const r = await call(base, method, path, json);
      expect(r.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(r.text).not.toMatch(JS_CALL);
    }
  });

  it('keeps Triton’s message and says how to load the model in HTTP words', async () => {
    const r = await call(gw().url, 'POST', '/v2/models/no_such_model/infer', FP32);
    const { error } = JSON.parse(r.text) as { error: string };
    expect(error).toMatch(/unknown model.*no_such_model/);
    expect(error).toContain('(is it loaded? POST /v2/repository/models/no_such_model/load loads it)');
    const v = JSON.parse(
      (await call(gw().url, 'POST', '/v2/models/identity_fp32/versions/7/infer', FP32)).text,
    );
    expect(v.error).toContain('is it loaded with version 7? POST /v2/repository/models/identity_fp32/load');
  });

  it('says nothing of loading where the gateway has no repository routes', async () => {
    const r = await call(readOnly().url, 'POST', '/v2/models/no_such_model/infer', FP32);
    const { error } = JSON.parse(r.text) as { error: string };
    expect(error).toMatch(/unknown model.*no_such_model/);
    expect(error).not.toMatch(/load/);
  });

  it('points a decoupled model’s infer at generate_stream', async () => {
    const r = await call(gw().url, 'POST', '/v2/models/repeat_int32/infer', INT32);
    const { error } = JSON.parse(r.text) as { error: string };
    expect(error).toMatch(/repeat_int32' is decoupled/);
    expect(error).toContain('use POST /v2/models/repeat_int32/generate_stream instead of infer');
  });
});

type Msg = Record<string, unknown>;
type Unary = (req: Msg, cb: (err: grpc.ServiceError | null, res: Msg) => void) => void;

/** Every RPC of the proto, each with a request that fails (or, for health, the answer it gives). */
const RPCS: Record<string, Msg> = {
  ServerLive: {},
  ServerReady: {},
  ModelReady: { name: 'no_such_model' },
  ServerMetadata: {},
  ModelMetadata: { name: 'no_such_model' },
  ModelInfer: {
    model_name: 'no_such_model',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
  },
  ModelStreamInfer: {
    model_name: 'identity_fp32',
    model_version: '7',
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
  },
  ModelConfig: { name: 'no_such_model' },
  ModelStatistics: { name: 'no_such_model' },
  RepositoryIndex: { repository_name: 'no_such_repository' },
  RepositoryModelLoad: { model_name: 'no_such_model' },
  RepositoryModelUnload: { model_name: 'no_such_model' },
  SystemSharedMemoryStatus: { name: 'no_such_region' },
  SystemSharedMemoryRegister: { name: 'r', key: '/no_such_key', offset: 0, byte_size: 8 },
  SystemSharedMemoryUnregister: { name: 'no_such_region' },
  CudaSharedMemoryStatus: { name: 'no_such_region' },
  CudaSharedMemoryRegister: { name: 'r', raw_handle: Buffer.alloc(1), device_id: 0, byte_size: 8 },
  CudaSharedMemoryUnregister: { name: 'no_such_region' },
  // Refused settings: the answer is an error, and nothing changes for the other tests.
  TraceSetting: { model_name: 'no_such_model', settings: { trace_rate: { value: ['not a number'] } } },
  LogSettings: { settings: { log_verbose_level: { string_param: 'not a number' } } },
};

describe('gRPC', () => {
  const clients: Array<grpc.Client & Record<string, Unary>> = [];
  const servers: grpc.Server[] = [];
  beforeAll(async () => {
    for (const repositoryControl of [true, false]) {
      const s = new grpc.Server();
      await createGateway(server(), { repositoryControl }).addToGrpcServer(s);
      const port = await new Promise<number>((resolve, reject) =>
        s.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
          err ? reject(err) : resolve(p),
        ),
      );
      const Client = kserveClient<Record<string, Unary>>();
      servers.push(s);
      clients.push(new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()));
    }
  });
  afterAll(() => {
    for (const c of clients) c.close();
    for (const s of servers) s.forceShutdown();
  });

  /** The error's details of a unary RPC, or its answer as JSON when it succeeds. */
  function unary(client: grpc.Client & Record<string, Unary>, method: string, req: Msg): Promise<string> {
    return new Promise((resolve) =>
      client[method]!(req, (err, res) =>
        resolve(err ? `error ${err.code}: ${err.details}` : JSON.stringify(res)),
      ),
    );
  }

  /** Every message of a ModelStreamInfer call with `requests`, and its error, as text. */
  function stream(client: grpc.Client, requests: Msg[]): Promise<string[]> {
    return new Promise((resolve) => {
      const c = (
        client as unknown as { ModelStreamInfer(): grpc.ClientDuplexStream<Msg, Msg> }
      ).ModelStreamInfer();
      const got: string[] = [];
      c.on('data', (m: Msg) => got.push(String(m.error_message ?? '')));
      c.on('end', () => resolve(got));
      c.on('error', (err: grpc.ServiceError) => resolve([...got, `error ${err.code}: ${err.details}`]));
      for (const r of requests) c.write(r);
      c.end();
    });
  }

  it('drives every RPC of the proto', () => {
    const proto = readFileSync(new URL('../proto/kserve_v2.proto', import.meta.url), 'utf8');
    const declared = [...proto.matchAll(/^\s*rpc (\w+)\(/gm)].map((m) => m[1]);
    expect(Object.keys(RPCS).sort()).toEqual(declared.sort());
  });

  it.each(Object.keys(RPCS).filter((m) => m !== 'ModelStreamInfer'))(
    '%s: no JS call in the answer',
    async (method) => {
      for (const client of clients) {
        const answer = await unary(client, method, RPCS[method]!);
        expect(answer).not.toMatch(JS_CALL);
      }
    },
  );

  it('ModelInfer of an unknown model, a missing version and a decoupled model: protocol words', async () => {
    const [full, ro] = clients as [grpc.Client & Record<string, Unary>, grpc.Client & Record<string, Unary>];
    let answer = await unary(full, 'ModelInfer', RPCS.ModelInfer!);
    expect(answer).toMatch(/unknown model.*no_such_model/);
    expect(answer).toContain('(is it loaded? the RepositoryModelLoad RPC loads it)');
    answer = await unary(full, 'ModelInfer', { ...RPCS.ModelStreamInfer });
    expect(answer).toContain('is it loaded with version 7? the RepositoryModelLoad RPC loads it');
    answer = await unary(ro, 'ModelInfer', RPCS.ModelInfer!);
    expect(answer).toMatch(/unknown model.*no_such_model/);
    expect(answer).not.toMatch(/load/i);
    answer = await unary(full, 'ModelInfer', {
      model_name: 'repeat_int32',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], contents: { int_contents: [1] } }],
    });
    expect(answer).toMatch(/repeat_int32' is decoupled/);
    expect(answer).toContain('use the ModelStreamInfer RPC instead of ModelInfer');
    expect(answer).not.toMatch(JS_CALL);
  });

  it('ModelStreamInfer: error messages of unknown models and versions without a JS call', async () => {
    for (const client of clients) {
      const got = await stream(client, [RPCS.ModelStreamInfer!, { ...RPCS.ModelInfer }]);
      expect(got).toHaveLength(2);
      for (const m of got) {
        expect(m).toMatch(/unknown model|version/);
        expect(m).not.toMatch(JS_CALL);
      }
    }
  });
});

describe('the library keeps its JS words', () => {
  it('a TritonError carries the hint as data and in its message', async () => {
    const err = await server()
      .model('repeat_int32')
      .infer({ inputs: { IN: new Int32Array([1]) } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TritonError);
    const e = err as TritonError;
    expect(e.hint).toEqual({ kind: 'stream', model: 'repeat_int32' });
    expect(e.message).toContain(`(${hintText(e.hint!)})`);
    expect(e.message).toContain('use model.stream() instead of infer()');
    const missing = (await server()
      .model('no_such_model')
      .infer({ inputs: {} })
      .catch((x: unknown) => x)) as TritonError;
    expect(missing.hint).toEqual({ kind: 'load', model: 'no_such_model' });
    expect(missing.message).toContain("server.loadModel('no_such_model') loads it");
  });
});

describe('every kind of hint', () => {
  const hints: ErrorHint[] = [
    { kind: 'load', model: 'm' },
    { kind: 'load', model: 'm', version: 3 },
    { kind: 'stream', model: 'm' },
    { kind: 'config', model: 'm' },
  ];

  it.each(hints)('%j: JS words in the library, protocol words (or none) in the gateway', (hint) => {
    expect(hintText(hint)).toMatch(JS_CALL);
    for (const protocol of ['http', 'grpc', 'openai'] as const) {
      for (const repositoryControl of [true, false]) {
        const words = protocolHint(hint, { protocol, repositoryControl });
        if (words !== undefined) expect(words).not.toMatch(JS_CALL);
        if (protocol === 'openai') expect(words).toBeUndefined();
        // Loading and configs are for a gateway that serves the repository routes.
        if (!repositoryControl && hint.kind !== 'stream') expect(words).toBeUndefined();
        if (protocol !== 'openai' && (repositoryControl || hint.kind === 'stream'))
          expect(words).toMatch(
            protocol === 'grpc' ? /ModelStreamInfer|RepositoryModelLoad/ : /POST |load request/,
          );
      }
    }
  });

  it('a load with versions of a model that has no config.pbtxt: the config hint', async () => {
    const err = (await server()
      .loadModel('no_such_model', { versions: [1] })
      .catch((e: unknown) => e)) as TritonError;
    expect(err.code).toBe('NOT_FOUND');
    expect(err.hint).toEqual({ kind: 'config', model: 'no_such_model' });
    expect(err.message).toContain('(pass loadModel(name, { config, versions }))');
  });
});
