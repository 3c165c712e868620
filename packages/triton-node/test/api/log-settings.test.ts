// Triton's logger at run time, on the fake and on real Triton: one per
// process, set by the last server created; server.updateLogSettings()
// changes it now (TRITONSERVER_ServerOptionsSetLog* on no options object,
// as tritonserver's logging extension does), and the log shows it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverOptions, until, useServer } from '@triton-node/test-support/helpers.js';
import { afterAll, describe, expect, it } from 'vitest';
import { Server } from '../../lib/index.js';

const dir = mkdtempSync(join(tmpdir(), 'triton-node-log-settings-'));
const file = join(dir, 'triton.log');
const server = useServer([], { log: { info: false, warn: true, error: true, file } });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const logLines = () =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const loadedLine = (model: string) => logLines().find((l) => l.includes(`successfully loaded '${model}'`));
/** Waits for the info line of `model`'s load and answers it. */
async function loaded(model: string): Promise<string> {
  await until(
    `the info line of the load of ${model}`,
    () => loadedLine(model) !== undefined,
    () => logLines().slice(-3),
  );
  return loadedLine(model)!;
}

describe('server.logSettings() and updateLogSettings()', () => {
  it('answer the settings the server started with', () => {
    expect(server().logSettings()).toEqual({
      file,
      info: false,
      warn: true,
      error: true,
      verbose: 0,
      format: 'default',
    });
  });

  it("change Triton's log now: info lines only while info is on, the format of the lines that follow", async () => {
    const s = server();
    // Info off (as at start): this load writes no info line.
    await s.loadModel('identity_int32');
    expect(s.updateLogSettings({ info: true })).toMatchObject({ info: true, format: 'default' });
    await s.loadModel('identity_fp32');
    // Lines are written in order: once this one is there, an earlier one would be too.
    await loaded('identity_fp32');
    expect(loadedLine('identity_int32')).toBeUndefined();
    expect(s.updateLogSettings({ format: 'iso8601' }).format).toBe('iso8601');
    await s.loadModel('identity_bytes');
    expect(await loaded('identity_bytes')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z I /);
    expect(s.updateLogSettings({ format: 'default', info: false, verbose: 2 })).toEqual({
      file,
      info: false,
      warn: true,
      error: true,
      verbose: 2,
      format: 'default',
    });
    expect(s.updateLogSettings({ verbose: 0 }).verbose).toBe(0);
  });

  it('refuse a bad update with a TypeError naming the field, changing nothing', () => {
    const s = server();
    const before = s.logSettings();
    expect(() => s.updateLogSettings({ file: '/tmp/x' } as never)).toThrow(TypeError);
    expect(() => s.updateLogSettings({ file: '/tmp/x' } as never)).toThrow(/it is set at start/);
    expect(() => s.updateLogSettings({ info: 'yes' } as never)).toThrow(/Expected a boolean for info/);
    expect(() => s.updateLogSettings({ verbose: -1 })).toThrow(/a non-negative integer for verbose/);
    expect(() => s.updateLogSettings({ verbose: 2 ** 31 })).toThrow(RangeError);
    expect(() => s.updateLogSettings({ format: 'json' as never })).toThrow(
      /'default' or 'iso8601' for format/,
    );
    expect(() => s.updateLogSettings({ infos: true } as never)).toThrow(/received string "infos"/);
    expect(() => s.updateLogSettings(null as never)).toThrow(TypeError);
    expect(s.logSettings()).toEqual(before);
  });

  it('a log file that cannot be opened fails the start, and the log stays where it was (as Triton)', async () => {
    const before = server().logSettings();
    const missing = join(dir, 'no-such-dir', 'triton.log');
    const start = Server.create(serverOptions({ log: { info: before.info, file: missing } }));
    await expect(start).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(start).rejects.toThrow(/log\.file: .*Failed to open log file: No such file or directory/);
    expect(server().logSettings()).toEqual(before);
  });
});
