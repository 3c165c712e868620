// The logging extension (GET/POST /v2/logging, gRPC LogSettings) as
// tritonserver r25.07 answers it: Triton's logger read and changed, a
// refused setting answered with tritonserver's status and words (those
// before it applied, as there), and server metadata listing `logging`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { useServer } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../lib/index.js';
import { httpCall, kserveClient, useGateway } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'triton-node-logging-'));
const file = join(dir, 'triton.log');
const server = useServer([], { log: { info: true, warn: true, error: true, file } });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STARTED = {
  log_file: file,
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
};

describe('/v2/logging over HTTP', () => {
  const gw = useGateway(server);
  const post = (json: unknown) => httpCall(gw().url, '/v2/logging', { json });

  it("answers Triton's log settings; server metadata lists the extension", async () => {
    const r = await httpCall(gw().url, '/v2/logging');
    expect({ status: r.status, json: r.json }).toEqual({ status: 200, json: STARTED });
    expect((await httpCall(gw().url, '/v2')).json.extensions).toContain('logging');
  });

  it('changes only the settings named, and answers them all', async () => {
    const r = await post({ log_info: false, log_verbose_level: 1, log_format: 'ISO8601', log_file: null });
    expect({ status: r.status, json: r.json }).toEqual({
      status: 200,
      json: { ...STARTED, log_info: false, log_verbose_level: 1, log_format: 'ISO8601' },
    });
    expect(server().logSettings()).toMatchObject({ info: false, verbose: 1, format: 'iso8601' });
    // An empty body changes nothing.
    expect(
      (await httpCall(gw().url, '/v2/logging', { method: 'POST', body: '' })).json.log_verbose_level,
    ).toBe(1);
    // tritonserver casts the level to int32, and keeps a negative one as 0.
    expect((await post({ log_verbose_level: 2 ** 32 + 3 })).json.log_verbose_level).toBe(3);
    expect((await post({ log_verbose_level: 2 ** 32 - 1 })).json.log_verbose_level).toBe(0);
    const back = await post({ log_info: true, log_verbose_level: 0, log_format: 'default' });
    expect(back.json).toEqual(STARTED);
  });

  it('refuses what tritonserver refuses, with its statuses and words', async () => {
    const cases: [unknown, number, string][] = [
      [
        { log_file: '/tmp/elsewhere.log' },
        501,
        'log file location can not be updated through network protocol',
      ],
      [{ log_info: 'true' }, 500, 'attempt to access JSON non-boolean as boolean'],
      [{ log_error: 1 }, 500, 'attempt to access JSON non-boolean as boolean'],
      [{ log_verbose_level: -1 }, 500, 'attempt to access JSON non-unsigned-integer as unsigned-integer'],
      [{ log_verbose_level: 1.5 }, 500, 'attempt to access JSON non-unsigned-integer as unsigned-integer'],
      [{ log_verbose_level: '1' }, 500, 'attempt to access JSON non-unsigned-integer as unsigned-integer'],
      [{ log_format: 'iso8601' }, 503, 'invalid argument for --log_format, got: iso8601'],
      [{ log_format: ['default'] }, 500, 'attempt to access JSON non-string as string'],
    ];
    for (const [json, status, error] of cases) {
      const r = await post(json);
      expect({ status: r.status, body: r.json }, JSON.stringify(json)).toEqual({ status, body: { error } });
    }
    expect((await httpCall(gw().url, '/v2/logging', { method: 'PUT' })).status).toBe(405);
    expect((await httpCall(gw().url, '/v2/logging', { body: '{"log_info":' })).status).toBe(400);
    expect((await httpCall(gw().url, '/v2/logging')).json).toEqual(STARTED);
  });

  it('applies the settings read before a refused one, as tritonserver does', async () => {
    const r = await post({ log_warning: false, log_verbose_level: 'x', log_format: 'ISO8601' });
    expect(r.status).toBe(500);
    expect((await httpCall(gw().url, '/v2/logging')).json).toEqual({ ...STARTED, log_warning: false });
    await post({ log_warning: true });
  });
});

describe('LogSettings over gRPC', () => {
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
      client.LogSettings!(req, (err, res) => (err ? reject(err) : resolve(res))),
    );
  /** Each setting's value, whatever its kind. */
  const values = (res: Msg) =>
    Object.fromEntries(
      Object.entries(res.settings as Record<string, Record<string, unknown>>).map(([k, v]) => [
        k,
        v[v.parameter_choice as string],
      ]),
    );
  const refused = (req: Msg) =>
    call(req).then(
      () => undefined,
      (e: grpc.ServiceError) => [e.code, e.details],
    );

  it('reads and changes the settings, each value of its own kind', async () => {
    expect(values(await call({}))).toEqual(STARTED);
    const changed = await call({
      settings: {
        log_error: { bool_param: false },
        log_verbose_level: { uint32_param: 3 },
        log_format: { string_param: 'ISO8601' },
      },
    });
    expect(values(changed)).toEqual({
      ...STARTED,
      log_error: false,
      log_verbose_level: 3,
      log_format: 'ISO8601',
    });
    expect((changed.settings as Record<string, Msg>).log_verbose_level!.parameter_choice).toBe(
      'uint32_param',
    );
    const back = await call({
      settings: {
        log_error: { bool_param: true },
        log_verbose_level: { uint32_param: 0 },
        log_format: { string_param: 'default' },
      },
    });
    expect(values(back)).toEqual(STARTED);
  });

  it('refuses what tritonserver refuses, with its codes and words', async () => {
    expect(await refused({ settings: { log_file: { string_param: '' } } })).toEqual([
      grpc.status.UNIMPLEMENTED,
      'log file location can not be updated through network protocol',
    ]);
    expect(await refused({ settings: { log_info: { uint32_param: 1 } } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      "expect boolean for 'log_info'",
    ]);
    expect(await refused({ settings: { log_warning: {} } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      "expect boolean for 'log_warning'",
    ]);
    expect(await refused({ settings: { log_verbose_level: { bool_param: true } } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      "expect int32 for 'log_verbose_level'",
    ]);
    expect(await refused({ settings: { log_format: { string_param: 'json' } } })).toEqual([
      grpc.status.INVALID_ARGUMENT,
      'invalid argument for log_format, got: json',
    ]);
    expect(values(await call({}))).toEqual(STARTED);
  });
});
