// Triton's log format option, on the fake and on real Triton: an ISO 8601
// timestamp opens every line of the log file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverOptions } from '@triton-node/test-support/helpers.js';
import { describe, expect, it } from 'vitest';
import { Server } from '../../lib/index.js';

describe('log.format', () => {
  it("'iso8601' starts each line of Triton's log with an ISO 8601 time; other values are TypeErrors", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'triton-node-log-format-'));
    const file = join(dir, 'triton.log');
    try {
      const s = await Server.create(
        serverOptions({ log: { info: true, warn: true, error: true, file, format: 'iso8601' } }),
      );
      await s.loadModel('identity_fp32');
      await s.stop();
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      // Records start with the time; real Triton also prints its model table as is.
      const iso = lines.filter((l) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z [IWE] /.test(l));
      expect(iso.length).toBeGreaterThan(0);
      // No record in the default format ('I1201 13:47:00.123456 ...', the fake's 'I fake-engine] ...').
      expect(lines.filter((l) => /^[IWE](\d{4} \d{2}:| fake-engine\])/.test(l))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(Server.create(serverOptions({ log: { format: 'json' as never } }))).rejects.toThrow(
      /'default' or 'iso8601' for log.format/,
    );
  });
});
