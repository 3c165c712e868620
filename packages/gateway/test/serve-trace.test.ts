/**
 * `triton-node serve --trace-config ...`: tritonserver's flag for the trace
 * extension's global setting at start (level, rate, count, mode; the triton
 * mode's file and log frequency), read as tritonserver reads it and refused
 * in its words; a serve started with it traces to its file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BACKEND_DIR, LIBRARY_PATH, MODELS, useServer } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../lib/cli/serve.js';
import { createGateway } from '../lib/index.js';
import { httpCall } from './helpers.js';
import { startServing } from './serve-helpers.js';

const CLI = fileURLToPath(new URL('../../triton-node/lib/cli/main.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'triton-node-serve-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const server = useServer([]);

const traceOf = (...flags: string[]) => {
  const config = parseServeArgs(['--fake-engine', ...flags.flatMap((f) => ['--trace-config', f])]);
  if (config === 'help') throw new Error('help');
  return config.gateway.trace;
};

describe('serve --trace-config', () => {
  it("reads tritonserver's global and triton-mode settings; levels add up, any OFF turns tracing off", () => {
    expect(
      traceOf(
        'level=TIMESTAMPS',
        'level=tensors',
        'rate=1',
        'count=5',
        'mode=Triton',
        'triton,file=/tmp/trace.json',
        'triton,log-frequency=2',
      ),
    ).toEqual({
      level: ['TIMESTAMPS', 'TENSORS'],
      rate: 1,
      count: 5,
      mode: 'triton',
      file: '/tmp/trace.json',
      logFrequency: 2,
    });
    expect(traceOf('level=on', 'level=OFF')?.level).toBe('OFF');
    expect(traceOf('count=-1', 'mode=opentelemetry')).toEqual({ count: -1, mode: 'opentelemetry' });
  });

  it('puts its flags over the "gateway.trace" of --config', () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ gateway: { trace: { rate: 10, count: 7, mode: 'opentelemetry' } } }),
    );
    const config = parseServeArgs(['--fake-engine', '--config', file, '--trace-config', 'count=3']);
    expect(config !== 'help' && config.gateway.trace).toEqual({ rate: 10, count: 3, mode: 'opentelemetry' });
  });

  it('refuses what tritonserver refuses, in its words, and what serve has no use for, saying why', () => {
    const cases: [string, RegExp][] = [
      ['level', /--trace-config option format is '<trace mode>,<setting>=<value>'\. Got level/],
      ['rate=', /--trace-config option format is '<trace mode>,<setting>=<value>'\. Got rate=/],
      [',rate=1', /No trace mode specified\. --trace-config option format is/],
      ['level=loud', /Bad option: "--trace-config level"\. invalid value for trace level option: loud/],
      [
        'mode=jaeger',
        /invalid value for trace mode option: jaeger\. Available options are "triton" and "opentelemetry"/,
      ],
      ['zipkin,file=/x', /invalid value for trace mode option: zipkin/],
      ['rate=-1', /Bad option: "--trace-config rate"\. expected an integer from 0 to 2147483647, got '-1'/],
      ['count=-2', /expected an integer from -1/],
      ['triton,log-frequency=1e3', /Bad option: "--trace-config triton,log-frequency"/],
      ['triton,rate=1', /the triton mode settings are file and log-frequency/],
      ['file=/x', /the global settings are level, rate, count and mode/],
      ['opentelemetry,url=localhost:4318', /OpenTelemetry SDK this process registers/],
    ];
    for (const [flag, message] of cases) expect(() => traceOf(flag), flag).toThrow(message);
  });

  it('a "gateway.trace" the gateway refuses is a TypeError naming the option', () => {
    const bad: [unknown, RegExp][] = [
      [{ rate: -1 }, /Expected an integer from 0 to 2147483647 for trace.rate but received -1/],
      [{ count: '5' }, /for trace.count but received "5"/],
      [{ level: ['LOUD'] }, /'OFF' or an array of 'TIMESTAMPS' and 'TENSORS' for trace.level/],
      [{ mode: 'zipkin' }, /'triton' or 'opentelemetry' for trace.mode/],
      [{ file: 3 }, /a path for trace.file/],
    ];
    for (const [trace, message] of bad)
      expect(() => createGateway(server(), { trace: trace as never }), JSON.stringify(trace)).toThrow(
        message,
      );
  });

  it('starts serve with the setting: the trace extension answers it and the trace file has the requests', async () => {
    const traceFile = join(dir, 'trace.json');
    const serving = await startServing(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI,
        'serve',
        '--repository',
        MODELS,
        '--library',
        LIBRARY_PATH,
        ...(BACKEND_DIR ? ['--backend-dir', BACKEND_DIR] : []),
        '--model-control-mode',
        'explicit',
        '--load-model',
        'identity_fp32',
        '--host',
        '127.0.0.1',
        '--http-port',
        '0',
        '--no-grpc',
        '--trace-config',
        'level=TIMESTAMPS',
        '--trace-config',
        'rate=1',
        '--trace-config',
        `triton,file=${traceFile}`,
      ],
      process.env,
    );
    try {
      const url = `http://127.0.0.1:${serving.httpPort}`;
      expect((await httpCall(url, '/v2/trace/setting')).json).toEqual({
        trace_level: ['TIMESTAMPS'],
        trace_rate: '1',
        trace_count: '-1',
        log_frequency: '0',
        trace_file: traceFile,
        trace_mode: 'triton',
      });
      const r = await httpCall(url, '/v2/models/identity_fp32/infer', {
        json: { id: 'traced', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [1] }] },
      });
      expect(r.status).toBe(200);
    } finally {
      serving.child.kill('SIGTERM');
    }
    expect(await serving.exit).toBe(0);
    const records = JSON.parse(readFileSync(traceFile, 'utf8')) as Array<Record<string, unknown>>;
    expect(records[0]).toMatchObject({ model_name: 'identity_fp32', request_id: 'traced' });
  });
});
