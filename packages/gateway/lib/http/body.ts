/**
 * Request bodies: read whole into one Buffer (the binary tensors in it are
 * then handed to Triton as views), never past a size limit.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.js';
import type { BodyCharge } from '../exchange.js';
import { parseJsonHeader } from '../kserve/codec.js';
import { LoadBodyScan } from './load-scan.js';

/** A body over the limit: 413, and the connection is not read any further. */
function tooLarge(limit: number, size: number | string): GatewayError {
  return new GatewayError(
    413,
    `request body of ${size} bytes exceeds the limit of ${limit} bytes`,
    'INVALID_ARG',
  );
}

/**
 * Reads the body of `req`. With a Content-Length the Buffer is allocated once
 * and filled in place; a chunked body is joined at the end. Rejects with a
 * GatewayError 413 past `limit`, 400 when the client ends early. `charge`
 * (the request's, when the guard could not charge the body at admission)
 * pays for the bytes once read, and may reject with a 429 instead.
 */
export function readBody(req: IncomingMessage, limit: number, charge?: BodyCharge): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  if (length !== undefined && length > limit) return Promise.reject(tooLarge(limit, length));
  // A client that left while its request was admitted: no 'end' or 'aborted' would come.
  if (req.destroyed && !req.readableEnded)
    return Promise.reject(new GatewayError(400, 'the client closed the request before its body ended'));
  return new Promise((resolve, reject) => {
    const target = length === undefined ? undefined : Buffer.allocUnsafe(length);
    const chunks: Buffer[] = [];
    let received = 0;
    let failed = false;
    const fail = (err: GatewayError) => {
      if (failed) return;
      failed = true;
      req.removeAllListeners('data');
      req.resume();
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      if (received + chunk.length > (target?.length ?? limit)) {
        fail(
          target === undefined
            ? tooLarge(limit, `more than ${limit}`)
            : new GatewayError(400, 'request body is longer than its Content-Length'),
        );
        return;
      }
      if (target !== undefined) chunk.copy(target, received);
      else chunks.push(chunk);
      received += chunk.length;
    });
    req.on('end', () => {
      if (failed) return;
      if (target !== undefined && received !== target.length) {
        fail(new GatewayError(400, `request body ended after ${received} of ${target.length} bytes`));
        return;
      }
      let paid: void | Promise<void>;
      try {
        paid = charge?.(received);
      } catch (err) {
        fail(err as GatewayError);
        return;
      }
      const body = target ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      // A shared store (Redis) answers the charge asynchronously.
      if (paid instanceof Promise)
        paid.then(
          () => resolve(body),
          (err) => fail(err as GatewayError),
        );
      else resolve(body);
    });
    req.on('error', (err) => fail(new GatewayError(400, `request body could not be read: ${err.message}`)));
    req.on('aborted', () =>
      fail(new GatewayError(400, 'the client closed the request before its body ended')),
    );
  });
}

/** Reads a JSON object body (`what` names it in a 400); an empty body is `{}` when `optional`. */
export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
  what: string,
  optional = false,
  charge?: BodyCharge,
): Promise<Record<string, unknown>> {
  const body = await readBody(req, limit, charge);
  if (optional && body.length === 0) return {};
  return parseJsonHeader(body.toString('utf8'), what);
}

/**
 * Reads a model load's JSON body as `readJsonBody` does, and answers one past
 * `limit` as tritonserver does when a `file:` value in it is longer than
 * INT_MAX (400 "'file:1/model.onnx' exceeds the maximum allowed data size limit
 * INT_MAX"): the rest of such a body streams through a scanner that keeps none
 * of it (load-scan.ts), so a 2.9 GB load costs reading it, never holding it.
 * Any other body past the limit gets the 413 of `readBody`, once read. The
 * bytes read are charged as any body's.
 */
export function readLoadBody(
  req: IncomingMessage,
  limit: number,
  what: string,
  charge?: BodyCharge,
): Promise<Record<string, unknown>> {
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  // A load body within the limit: read as any body.
  if (length !== undefined && length <= limit) return readJsonBody(req, limit, what, true, charge);
  // A client that left while its load was admitted (as readBody).
  if (!req.readableEnded && req.destroyed)
    return Promise.reject(new GatewayError(400, 'the client closed the request before its body ended'));
  return new Promise((resolve, reject) => {
    const scan = new LoadBodyScan();
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const fail = (err: GatewayError) => {
      if (settled) return;
      settled = true;
      req.removeAllListeners('data');
      req.resume();
      reject(err);
    };
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      scan.push(chunk);
      received += chunk.length;
      if (received <= limit) chunks.push(chunk);
      else chunks.length = 0;
      // Nothing past the limit can pass: stop as soon as the scan cannot say more.
      if (received > limit && scan.broken) fail(tooLarge(limit, `more than ${limit}`));
    });
    const answer = () => {
      if (received > limit) {
        fail(
          scan.oversized !== undefined
            ? new GatewayError(
                400,
                `'${scan.oversized}' exceeds the maximum allowed data size limit INT_MAX`,
                'INVALID_ARG',
              )
            : tooLarge(limit, received),
        );
        return;
      }
      settled = true;
      const body = Buffer.concat(chunks, received);
      try {
        resolve(body.length === 0 ? {} : parseJsonHeader(body.toString('utf8'), what));
      } catch (err) {
        reject(err);
      }
    };
    req.on('end', () => {
      if (settled) return;
      // Every byte read is charged, past the limit too: this body was read.
      let paid: void | Promise<void>;
      try {
        paid = charge?.(received);
      } catch (err) {
        fail(err as GatewayError);
        return;
      }
      if (paid instanceof Promise) paid.then(answer, (err) => fail(err as GatewayError));
      else answer();
    });
    req.on('error', (err) => fail(new GatewayError(400, `request body could not be read: ${err.message}`)));
    req.on('aborted', () =>
      fail(new GatewayError(400, 'the client closed the request before its body ended')),
    );
  });
}
