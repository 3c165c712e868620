/**
 * ModelStreamInfer: each request message starts a stream of its model (a
 * decoupled model answers any number of times); every response is written as
 * it comes, a request's error as `error_message`. Each message is a request
 * of its own (its own Exchange: admitted and audited alone); the call is
 * counted in flight once. The call ends once the client ended its side and
 * every request is done; a cancelled call cancels its requests.
 */
import type { InferResult, InferStream } from 'triton-node';
import type { GatewayContext } from '../context.js';
import { GatewayError, errorMessage, httpStatus, wordingOf } from '../errors.js';
import { asAnswered } from '../kserve/absent.js';
import type { SharedMemoryRegistry } from '../kserve/shared-memory.js';
import { awaitClient, slowClientMessage, slowClientOverflow } from '../slow-client.js';
import { type DuplexCall, grpcExchange, grpcGuardContext, metadataHeaders } from './call.js';
import { type Json, decodeGrpcRequest, encodeGrpcResponse } from './codec.js';

/**
 * Writes each response of `stream` to the call as it comes, taking the next
 * only once the client took the last (slow-client.ts); throws when the stream
 * held too much for a client that read nothing. False when the client took
 * nothing for the write timeout: the caller cuts the call.
 */
async function relay(
  ctx: GatewayContext,
  call: DuplexCall,
  stream: InferStream,
  model: string,
  encode: (result: InferResult) => object,
  finished: () => boolean,
): Promise<boolean> {
  const limits = ctx.options.streams;
  for await (const result of stream) {
    if (finished()) break;
    const sent = call.write({ infer_response: encode(result) });
    setImmediate(() => result.dispose());
    if (sent) continue;
    const how = await awaitClient(call, stream, limits);
    if (how === 'overflow') throw new GatewayError(503, slowClientOverflow(limits), 'UNAVAILABLE');
    if (how === 'timeout') {
      ctx.log('warn', { model, err: slowClientMessage(limits.writeTimeoutMs) }, 'stream cut');
      return false;
    }
  }
  return true;
}

export function streamInfer(
  ctx: GatewayContext,
  shm: SharedMemoryRegistry | undefined,
  call: DuplexCall,
): void {
  const done = ctx.ledger.begin();
  const open = new Set<InferStream>();
  let clientEnded = false;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    for (const s of open) s.cancel();
    done();
  };
  const maybeEnd = () => {
    if (clientEnded && open.size === 0 && !finished) {
      call.end();
      finish();
    }
  };
  const cancelAll = () => finish();
  // A shutdown past its deadline: cancel the requests and end the call.
  const shutdown = () => {
    if (finished) return;
    finish();
    call.end();
  };
  ctx.cancels.add(shutdown);
  const run = async (msg: Record<string, Json>) => {
    const headers = metadataHeaders(call);
    const ex = grpcExchange(ctx, 'ModelStreamInfer', msg, headers);
    const wording = wordingOf(ctx, 'grpc');
    let stream: InferStream | undefined;
    let status = 200;
    try {
      if (ctx.guard !== undefined) {
        const context = grpcGuardContext(call, msg, headers);
        await ex
          .admit(ctx.guard, context, () => ({ status: 499 }))
          .catch((err) => {
            throw asAnswered(err, ex.route.name);
          });
      }
      if (ctx.draining) throw new GatewayError(503, 'the server is shutting down', 'UNAVAILABLE');
      const decoded = decodeGrpcRequest(msg, shm);
      stream = ctx.server.model(decoded.name, decoded.version).stream(decoded.request);
      open.add(stream);
      const encode = (r: InferResult) => encodeGrpcResponse(r, decoded.outputs, shm);
      // A client that took nothing for the write timeout is cut.
      if (!(await relay(ctx, call, stream, decoded.name, encode, () => finished))) {
        finish();
        call.destroy();
      }
    } catch (err) {
      status = httpStatus(err);
      if (!finished) call.write({ error_message: errorMessage(err, wording) });
      ex.end({ status, error: errorMessage(err, wording) });
    } finally {
      ex.end({ status });
      if (stream !== undefined) open.delete(stream);
      maybeEnd();
    }
  };
  call.on('data', (msg) => void run(msg));
  call.on('end', () => {
    clientEnded = true;
    maybeEnd();
  });
  call.on('cancelled', cancelAll);
  call.on('error', cancelAll);
  call.on('close', () => ctx.cancels.delete(shutdown));
}
