/**
 * Request bodies: read whole into one Buffer (the binary tensors in it are
 * then handed to Triton as views), never past a size limit.
 */
import type { IncomingMessage } from 'node:http';
import { parseJsonHeader } from './codec.js';
import { GatewayError } from './errors.js';

/** Who pays for the bytes of a body read without a Content-Length (the guard's bytes buckets). */
type Payer = (bytes: number, force?: boolean) => void | Promise<void>;
const payers = new WeakMap<IncomingMessage, Payer>();

/**
 * Makes `pay` charge the bytes of `req`'s body once read, when it has no
 * Content-Length (a declared length is charged at admission). `pay` throws
 * the error to answer instead (a 429), before anything else uses the body.
 */
export function payForBody(req: IncomingMessage, pay: Payer): void {
  if (req.headers['content-length'] === undefined) payers.set(req, pay);
}

/**
 * The payer of a body set by `payForBody`, for a body passed on as it comes
 * rather than read by `readBody` (call it with `force`: the bytes are gone).
 */
export function payerOf(req: IncomingMessage): Payer | undefined {
  const pay = payers.get(req);
  payers.delete(req);
  return pay;
}

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
 * GatewayError 413 past `limit`, 400 when the client ends early.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
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
        const pay = payers.get(req);
        payers.delete(req);
        paid = pay?.(received);
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
): Promise<Record<string, unknown>> {
  const body = await readBody(req, limit);
  if (optional && body.length === 0) return {};
  return parseJsonHeader(body.toString('utf8'), what);
}
