/**
 * A model load body larger than `maxBodyBytes` (issue 43, NVIDIA's
 * http_test.py test_loading_large_invalid_model): tritonserver reads the whole
 * 2.9 GB body and answers 400 "'file:1/model.onnx' exceeds the maximum allowed
 * data size limit INT_MAX"; serve answered 413 before reading it. Now the rest of
 * such a body streams through a scanner that holds none of it (load-scan.ts):
 * Triton's answer when a `file:` value passes INT_MAX, serve's 413 otherwise.
 */
import { Readable } from 'node:stream';
import { useServer } from '@triton-node/test-support/helpers.js';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { INT_MAX, LoadBodyScan } from '../../lib/http/load-scan.js';
import { useGateway } from '../helpers.js';

/** Feeds `parts` to a scan, each as its own chunk (`repeat` times a Buffer). */
function scan(parts: Array<string | { chunk: Buffer; repeat: number }>): LoadBodyScan {
  const s = new LoadBodyScan();
  for (const p of parts) {
    if (typeof p === 'string') s.push(Buffer.from(p));
    else for (let i = 0; i < p.repeat; i++) s.push(p.chunk);
  }
  return s;
}

describe('the load body scan (load-scan.ts)', () => {
  // 64 MiB of base64 letters, fed 33 times: 2,214,592,512 characters, past INT_MAX.
  const letters = Buffer.alloc(64 * 1024 * 1024, 'A');
  const repeat = Math.ceil((INT_MAX + 1) / letters.length);

  it('names the first file: parameter whose value passes INT_MAX, keeping none of it', () => {
    const s = scan([
      '{"parameters": {"config": "{\\"backend\\": \\"onnxruntime\\"}", "file:1/model.onnx": "',
      { chunk: letters, repeat },
      '", "file:1/other.bin": "',
      { chunk: letters, repeat },
      '"}}',
    ]);
    expect(s.broken).toBe(false);
    expect(s.oversized).toBe('file:1/model.onnx');
  });

  it('a value of exactly INT_MAX, a long value that is not a file, or one outside parameters, is not named', () => {
    const exact = Buffer.alloc(INT_MAX % letters.length, 'A');
    const whole = Math.floor(INT_MAX / letters.length);
    expect(
      scan([
        '{"parameters":{"file:m":"',
        { chunk: letters, repeat: whole },
        { chunk: exact, repeat: 1 },
        '"}}',
      ]).oversized,
    ).toBeUndefined();
    expect(scan(['{"parameters":{"config":"', { chunk: letters, repeat }, '"}}']).oversized).toBeUndefined();
    expect(scan(['{"file:m":"', { chunk: letters, repeat }, '"}']).oversized).toBeUndefined();
  });

  it('follows escapes, keys cut across chunks and nesting; refuses what is not JSON', () => {
    const s = scan([
      '{"a":[1,{"b":"x\\"}"},true,null],"param',
      'eters":{"fi',
      'le:q\\u0041":"',
      '\\',
      'n"}}',
    ]);
    expect(s.broken).toBe(false);
    expect(s.oversized).toBeUndefined();
    expect(scan(['{"parameters" 1}']).broken).toBe(true);
    expect(scan(['{}}']).broken).toBe(true);
    expect(scan(['['.repeat(100)]).broken).toBe(true);
  });
});

describe('a load body past maxBodyBytes, through the gateway', () => {
  const server = useServer(['identity_fp32']);
  const gw = useGateway(server, { maxBodyBytes: 1024, repositoryControl: true });

  async function load(body: string) {
    const res = await request(`${gw().url}/v2/repository/models/identity_fp32/load`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.statusCode, body: await res.body.text() };
  }

  it('answers as tritonserver when a file: value passes INT_MAX: 400 naming it, the body read and never held', async () => {
    // 2.2 GB sent from one 16 MiB buffer: what NVIDIA's test sends, without its memory.
    const chunk = Buffer.alloc(16 * 1024 * 1024, 'A');
    const chunks = Math.ceil((INT_MAX + 1) / chunk.length);
    const head = Buffer.from('{"parameters":{"config":"{}","file:1/model.onnx":"');
    const tail = Buffer.from('"}}');
    async function* body() {
      yield head;
      for (let i = 0; i < chunks; i++) yield chunk;
      yield tail;
    }
    const before = process.memoryUsage().rss;
    const res = await request(`${gw().url}/v2/repository/models/invalid_onnx/load`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(head.length + chunks * chunk.length + tail.length),
      },
      body: Readable.from(body()),
    });
    expect({ status: res.statusCode, body: await res.body.text() }).toEqual({
      status: 400,
      body: JSON.stringify({
        error: "'file:1/model.onnx' exceeds the maximum allowed data size limit INT_MAX",
      }),
    });
    // Held, the body alone would have grown the process by 2 GB.
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
  }, 120_000);

  it('gets 413 naming the bytes read when no file passes INT_MAX; one within the limit still loads', async () => {
    const big = JSON.stringify({ parameters: { 'file:1/model.onnx': 'A'.repeat(4000) } });
    expect(await load(big)).toEqual({
      status: 413,
      body: JSON.stringify({ error: `request body of ${big.length} bytes exceeds the limit of 1024 bytes` }),
    });
    // Not JSON: the scan gives up and the 413 comes without reading the rest.
    const junk = await load(`not json ${'x'.repeat(4000)}`);
    expect(junk.status).toBe(413);
    expect(await load(JSON.stringify({ parameters: {} }))).toEqual({ status: 200, body: '' });
  });
});
