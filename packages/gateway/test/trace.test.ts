// The trace extension (GET/POST /v2[/models/{m}]/trace/setting, gRPC
// TraceSetting) as tritonserver r25.07 answers it: defaults, per-model
// settings that follow the global ones until they specify a field, the same
// refusals; the trace file in the triton mode; and in the opentelemetry
// mode a request's traceparent parents spans of Triton's timestamps.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { useServer } from '@triton-node/test-support/helpers.js';
import { byName, inMemoryTracing, parentOf } from '@triton-node/test-support/request/otel-helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../lib/index.js';
import { httpCall, kserveClient, useGateway } from './helpers.js';

const server = useServer(['identity_fp32', 'ensemble_identity']);
const dir = mkdtempSync(join(tmpdir(), 'trace-'));
const traceFile = join(dir, 'trace.json');

const DEFAULTS = {
  trace_level: ['OFF'],
  trace_rate: '1000',
  trace_count: '-1',
  log_frequency: '0',
  trace_file: '',
  trace_mode: 'triton',
};

const inferBody = (model: string, input: string) => ({
  inputs: [{ name: input, datatype: 'FP32', shape: [1, 1], data: [1] }],
});

describe('trace settings over HTTP', () => {
  const gw = useGateway(server);

  it('start as tritonserver starts, and server metadata lists the extension', async () => {
    const r = await httpCall(gw().url, '/v2/trace/setting');
    expect(r.status).toBe(200);
    expect(r.json).toEqual(DEFAULTS);
    expect((await httpCall(gw().url, '/v2')).json.extensions).toContain('trace');
    expect((await httpCall(gw().url, '/v2/models/identity_fp32/trace/setting')).json).toEqual(DEFAULTS);
  });

  it('refuse what tritonserver refuses, with its messages', async () => {
    const post = (json: unknown, path = '/v2/trace/setting') => httpCall(gw().url, path, { json });
    const cases: [unknown, number, string][] = [
      [
        { trace_level: ['TIMESTAMPS'] },
        400,
        'Attempting to set invalid trace setting :trace file name is not given',
      ],
      [{ trace_file: '/tmp/x' }, 501, 'trace file location can not be updated through network protocol'],
      [{ trace_rate: 'abc' }, 400, "Unable to parse 'trace_rate', got: abc"],
      [{ trace_count: '-2' }, 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-2"],
      [
        { trace_count: '99999999999' },
        400,
        "Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: 99999999999",
      ],
      [{ trace_level: ['OFF', 'TIMESTAMPS'] }, 400, "Expect only one trace level 'OFF' is specified"],
      [{ trace_rate: 5 }, 500, 'attempt to access JSON non-string as string'],
    ];
    for (const [json, status, error] of cases) {
      const r = await post(json);
      expect({ status: r.status, body: r.json }, JSON.stringify(json)).toEqual({ status, body: { error } });
    }
    const unknown = await post({}, '/v2/models/nope/trace/setting');
    expect({ status: unknown.status, body: unknown.json }).toEqual({
      status: 400,
      body: { error: 'Request for unknown model : nope' },
    });
    expect((await httpCall(gw().url, '/v2/trace/setting', { method: 'PUT' })).status).toBe(405);
    // Nothing changed.
    expect((await httpCall(gw().url, '/v2/trace/setting')).json).toEqual(DEFAULTS);
  });

  it("a model's setting keeps what it specified, follows the global one for the rest, and falls back when cleared", async () => {
    const model = '/v2/models/identity_fp32/trace/setting';
    const set = await httpCall(gw().url, model, { json: { trace_rate: '5', trace_count: '3' } });
    expect(set.json).toEqual({ ...DEFAULTS, trace_rate: '5', trace_count: '3' });
    await httpCall(gw().url, '/v2/trace/setting', { json: { trace_rate: '7', log_frequency: '2' } });
    expect((await httpCall(gw().url, model)).json).toEqual({
      ...DEFAULTS,
      trace_rate: '5',
      trace_count: '3',
      log_frequency: '2',
    });
    const cleared = await httpCall(gw().url, model, { json: { trace_rate: null, trace_count: null } });
    expect(cleared.json).toEqual({ ...DEFAULTS, trace_rate: '7', log_frequency: '2' });
    await httpCall(gw().url, '/v2/trace/setting', { json: { trace_rate: null, log_frequency: null } });
    expect((await httpCall(gw().url, '/v2/trace/setting')).json).toEqual(DEFAULTS);
  });
});

describe('the trace file (triton mode)', () => {
  const gw = useGateway(server, { trace: { level: ['TIMESTAMPS'], rate: 1, file: traceFile } });

  it("has tritonserver's records of each traced request, an ensemble's steps with their parent id", async () => {
    const r = await httpCall(gw().url, '/v2/models/ensemble_identity/infer', {
      json: {
        id: 'req-1',
        ...inferBody('ensemble_identity', 'IN'),
        inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 1], data: [1] }],
      },
    });
    expect(r.status).toBe(200);
    await gw().gateway.closeTraces();
    const records = JSON.parse(readFileSync(traceFile, 'utf8')) as Array<Record<string, unknown>>;
    const heads = records.filter((x) => 'model_name' in x);
    expect(heads.map((h) => h.model_name)).toEqual(['ensemble_identity', 'identity_fp32', 'identity_fp32']);
    const [own, ...steps] = heads;
    expect(own).toMatchObject({ model_version: 1, request_id: 'req-1' });
    expect(own).not.toHaveProperty('parent_id');
    for (const s of steps) expect(s.parent_id).toBe(own!.id);
    const names = (id: unknown) =>
      records
        .filter((x) => x.id === id && 'timestamps' in x)
        .map((x) => (x.timestamps as Array<{ name: string; ns: number }>)[0]!.name);
    expect(names(steps[0]!.id)).toEqual([
      'REQUEST_START',
      'QUEUE_START',
      'COMPUTE_START',
      'COMPUTE_INPUT_END',
      'COMPUTE_OUTPUT_START',
      'COMPUTE_END',
      'REQUEST_END',
    ]);
    expect(names(own!.id)).toContain('REQUEST_START');
  });
});

describe('TraceSetting over gRPC', () => {
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
    client = new (kserveClient<Record<string, Unary>>())(
      `127.0.0.1:${port}`,
      grpc.credentials.createInsecure(),
    );
  });
  afterAll(() => {
    client?.close();
    grpcServer?.forceShutdown();
  });
  const call = (req: Msg) =>
    new Promise<Msg>((resolve, reject) =>
      client.TraceSetting!(req, (err, res) => (err ? reject(err) : resolve(res))),
    );
  const values = (res: Msg) =>
    Object.fromEntries(
      Object.entries(res.settings as Record<string, { value: string[] }>).map(([k, v]) => [k, v.value]),
    );

  it('reads, updates per model, clears, and refuses as tritonserver does', async () => {
    expect(values(await call({}))).toEqual({
      trace_level: ['OFF'],
      trace_rate: ['1000'],
      trace_count: ['-1'],
      log_frequency: ['0'],
      trace_file: [''],
      trace_mode: ['triton'],
    });
    const set = await call({ model_name: 'identity_fp32', settings: { trace_rate: { value: ['9'] } } });
    expect(values(set).trace_rate).toEqual(['9']);
    const cleared = await call({ model_name: 'identity_fp32', settings: { trace_rate: { value: [] } } });
    expect(values(cleared).trace_rate).toEqual(['1000']);
    const refused = async (req: Msg) =>
      call(req).then(
        () => undefined,
        (e: grpc.ServiceError) => [e.code, e.details],
      );
    expect(await refused({ settings: { trace_rate: { value: ['1', '2'] } } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      "expect only 1 value for 'trace_rate'",
    ]);
    expect(await refused({ settings: { trace_count: { value: ['-3'] } } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      "Unable to parse 'trace_count'. Expecting value >= -1, got: -3",
    ]);
    expect(await refused({ model_name: 'nope' })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      'Request for unknown model : nope',
    ]);
  });
});

describe('opentelemetry mode: a traceparent parents the spans', () => {
  let exporter: ReturnType<typeof inMemoryTracing>;
  beforeAll(() => {
    exporter = inMemoryTracing();
  });
  const gw = useGateway(server, { trace: { mode: 'opentelemetry', level: ['TIMESTAMPS'] } });

  it("over HTTP: Triton's timestamps are child spans of the caller's span; no traceparent, no spans (rate 1000)", async () => {
    expect((await httpCall(gw().url, '/v2/trace/setting')).json).toEqual({
      trace_level: ['TIMESTAMPS'],
      trace_rate: '1000',
      trace_count: '-1',
      trace_mode: 'opentelemetry',
    });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const body = { inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 1], data: [1] }] };
    const r = await httpCall(gw().url, '/v2/models/ensemble_identity/infer', {
      json: body,
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${spanId}-01` },
    });
    expect(r.status).toBe(200);
    const spans = byName(exporter.getFinishedSpans(), traceId);
    const ensemble = spans.get('ensemble_identity')![0]!;
    expect(parentOf(ensemble)).toBe(spanId);
    const steps = spans.get('identity_fp32')!;
    expect(steps.map(parentOf)).toEqual([ensemble.spanContext().spanId, ensemble.spanContext().spanId]);
    for (const name of ['queue', 'compute', 'compute_input', 'compute_infer', 'compute_output'])
      expect(spans.get(name), name).toHaveLength(2);
    exporter.reset();
    await httpCall(gw().url, '/v2/models/ensemble_identity/infer', { json: body });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
