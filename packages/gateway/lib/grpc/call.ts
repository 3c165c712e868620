/**
 * One gRPC call to the gateway as an Exchange: counted in flight, admitted
 * by the guard (a model the tenant may not use answered as an absent one),
 * its errors turned into gRPC statuses, its end audited and counted.
 */
import type { GatewayContext } from '../context.js';
import { ModelHiddenError, errorMessage, grpcStatus, httpStatus, wordingOf } from '../errors.js';
import { Exchange, type GuardContext, requestIdOf } from '../exchange.js';
import { asAnswered } from '../kserve/absent.js';
import { ROUTES, matchRpc } from '../routes.js';
import { type Json, grpcMessageBytes } from './codec.js';

export type Callback = (err: { code: number; details: string } | null, value?: object) => void;

/** The parts of a grpc-js call the gateway reads. */
export interface CallLike {
  metadata?: { getMap(): Record<string, unknown> };
  getPeer?(): string;
}
export interface UnaryCall extends CallLike {
  request: Record<string, Json>;
  cancelled?: boolean;
  on(event: 'cancelled', listener: () => void): void;
}
export interface DuplexCall extends CallLike {
  on(event: 'data', listener: (msg: Record<string, Json>) => void): void;
  on(event: 'end' | 'cancelled' | 'error' | 'close', listener: () => void): void;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  write(msg: object): boolean;
  end(): void;
  destroy(): void;
  readonly destroyed: boolean;
  cancelled?: boolean;
}

/** A call's metadata as the guard reads headers: lower-cased names, string values. */
export function metadataHeaders(call: CallLike): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.metadata?.getMap() ?? {})) {
    if (typeof v === 'string') headers[k.toLowerCase()] = v;
  }
  return headers;
}

/**
 * The exchange of a call (or of one message of a stream). The client's
 * x-request-id names a unary call (a message's own id otherwise); in a
 * stream each message is a request of its own, named by its id where it has one.
 */
export function grpcExchange(
  ctx: GatewayContext,
  rpc: string,
  msg: Record<string, Json>,
  headers: Record<string, string>,
): Exchange {
  const requestId = requestIdOf(
    rpc === 'ModelStreamInfer' ? msg.id || headers['x-request-id'] : headers['x-request-id'] || msg.id,
  );
  const ex = new Exchange('grpc', matchRpc(rpc, msg), requestId, ctx.metrics);
  ctx.traceExchange(ex, headers.traceparent);
  return ex;
}

/** What the guard is told of a call besides its route: its metadata, tensor bytes and peer. */
export function grpcGuardContext(
  call: CallLike,
  msg: Record<string, Json>,
  headers: Record<string, string>,
): GuardContext {
  const bytesIn =
    Array.isArray(msg.raw_input_contents) || Array.isArray(msg.inputs) ? grpcMessageBytes(msg) : undefined;
  let peer: string | undefined;
  try {
    peer = call.getPeer?.();
  } catch {
    // A call already closed has no peer.
  }
  return {
    headers,
    ...(bytesIn === undefined ? {} : { bytesIn }),
    ...(peer === undefined ? {} : { remoteAddress: peer }),
  };
}

function fail(ctx: GatewayContext, callback: Callback, err: unknown, rpc: string): void {
  const code = grpcStatus(err);
  ctx.log(
    code === 13 || code === 2 ? 'error' : 'info',
    { rpc, err: errorMessage(err, wordingOf(ctx, 'grpc')), code },
    'rpc failed',
  );
  callback({ code, details: errorMessage(err, wordingOf(ctx, 'grpc')) });
}

/** A unary handler: counted in flight, admitted, its errors turned into gRPC statuses, audited. */
export function unary(
  ctx: GatewayContext,
  rpc: string,
  fn: (req: Record<string, Json>, call: UnaryCall, ex: Exchange) => Promise<object>,
) {
  return (call: UnaryCall, callback: Callback) => {
    const done = ctx.ledger.begin();
    const headers = metadataHeaders(call);
    const ex = grpcExchange(ctx, rpc, call.request, headers);
    const denied = (err: unknown) => {
      done();
      // ModelReady answers an unknown model with ready: false, so a hidden one too.
      if (ex.route === ROUTES.modelReady && err instanceof ModelHiddenError)
        return callback(null, { ready: false });
      const answered = asAnswered(err, ex.route.name);
      fail(ctx, callback, answered, rpc);
      ex.record(String(grpcStatus(answered)));
    };
    const run = () =>
      fn(call.request, call, ex).then(
        (value) => {
          ex.end({ status: 200, ...ex.timing() });
          done();
          callback(null, value);
          ex.record('OK');
        },
        (err) => {
          ex.end({
            status: httpStatus(err),
            error: errorMessage(err, wordingOf(ctx, 'grpc')),
            ...ex.timing(),
          });
          done();
          fail(ctx, callback, err, rpc);
          ex.record(String(grpcStatus(err)));
        },
      );
    if (ctx.guard === undefined) return void run();
    const context = grpcGuardContext(call, call.request, headers);
    ex.admit(ctx.guard, context, () => ({ status: 499 })).then(run, denied);
  };
}
