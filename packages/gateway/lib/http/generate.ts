/**
 * Triton's generate extension over HTTP: `POST /v2/models/{m}/generate_stream`
 * answers with Server-Sent Events, one `data:` event per response, and
 * `POST /v2/models/{m}/generate` with the one response as JSON. A client
 * that disconnects cancels the request.
 *
 * The body is either Triton's generate form (each top-level key an input by
 * name, its value a scalar or an array; `parameters` for the request) or a
 * KServe v2 inference request (`{"inputs": [...]}`); events follow the same
 * form: `{"model_name", "model_version", OUT: value}`, or a v2 inference
 * response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferRequest, InferResult, InferStream, Tensor } from 'triton-node';
import type { GatewayContext } from '../context.js';
import { GatewayError, badRequest, errorMessage, httpStatus, wordingOf } from '../errors.js';
import type { Exchange } from '../exchange.js';
import {
  decodeInferRequest,
  encodeInferResponse,
  flatten,
  parseJsonHeader,
  tensorJsonData,
} from '../kserve/codec.js';
import { modelMetadata } from '../kserve/protocol.js';
import { awaitClient, endWithin, slowClientMessage, slowClientOverflow } from '../slow-client.js';
import { readBody, readJsonBody } from './body.js';

/** The tensors of a generate-form body, shaped by the model's metadata. */
async function generateRequest(
  ctx: GatewayContext,
  name: string,
  version: number,
  body: Record<string, unknown>,
): Promise<InferRequest> {
  const meta = await modelMetadata(ctx.server, name, version);
  const inputs: Array<Record<string, unknown>> = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === 'parameters' || key === 'id') continue;
    const spec = meta.inputs.find((i) => i.name === key);
    if (spec === undefined) {
      throw badRequest(
        `model '${name}' has no input '${key}' (its inputs: ${meta.inputs.map((i) => i.name).join(', ')})`,
      );
    }
    const data = Array.isArray(value) ? flatten(value) : [value];
    inputs.push({ name: key, datatype: spec.datatype, shape: fitShape(spec.shape, data.length, key), data });
  }
  // Written back as JSON for the codec: only scalars may go, so that nothing nests deeply.
  if (body.id !== undefined && typeof body.id !== 'string')
    throw badRequest(`Expected a string for 'id' but received ${typeof body.id}`);
  const params = body.parameters;
  if (params !== undefined) {
    if (typeof params !== 'object' || params === null || Array.isArray(params))
      throw badRequest("Expected an object for 'parameters'");
    for (const [k, v] of Object.entries(params))
      if (typeof v === 'object' && v !== null)
        throw badRequest(`Expected a string, number or boolean for parameter '${k}'`);
  }
  const header = JSON.stringify({ id: body.id, parameters: params, inputs });
  return decodeInferRequest(Buffer.from(header), undefined).request;
}

/**
 * The model's dims with the variable dimensions sized to hold `count`
 * elements: the last variable one takes them, earlier ones (a batch
 * dimension) are 1.
 */
function fitShape(dims: readonly number[], count: number, input: string): number[] {
  const last = dims.findLastIndex((d) => d < 0);
  const known = dims.reduce((n, d) => (d < 0 ? n : n * d), 1);
  if (last < 0) return [...dims];
  if (known === 0 || count % known !== 0) {
    throw badRequest(
      `input '${input}': cannot shape ${count} elements to the model's dims [${dims.join(',')}]; send a v2 inference request with 'shape'`,
    );
  }
  return dims.map((d, i) => (d >= 0 ? d : i === last ? count / known : 1));
}

/**
 * One response in the generate form, as Triton's HTTP server writes it: the
 * request's id (when it has one), `model_name`, `model_version`, each
 * response parameter and each output (one element unwrapped from its
 * array) as top-level keys, the first of a name kept, sorted by name.
 */
function generateEvent(result: InferResult): string {
  const entries = new Map<string, string>();
  if (result.id !== '') entries.set('id', JSON.stringify(result.id));
  entries.set('model_name', JSON.stringify(result.model));
  entries.set('model_version', JSON.stringify(String(result.version)));
  for (const [name, value] of Object.entries(result.parameters)) {
    if (!entries.has(name)) entries.set(name, JSON.stringify(value));
  }
  for (const [name, tensor] of Object.entries(result.outputs)) {
    if (!entries.has(name)) entries.set(name, scalarOrArray(tensor));
  }
  const keys = [...entries.keys()].sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${entries.get(k)}`).join(',')}}`;
}

function scalarOrArray(tensor: Tensor): string {
  const text = tensorJsonData(tensor);
  return tensor.size === 1 && text.startsWith('[') ? text.slice(1, -1) : text;
}

/** What Triton's generate endpoint answers when a model sent other than one response. */
export const GENERATE_ONE_RESPONSE =
  'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses';

/**
 * What ends a generate request's stream besides its model: a shutdown past
 * its deadline (`shutDown()` then says so, for the last words) and a client
 * that goes away, also before the stream began. `release()` when done.
 */
function watchClient(
  ctx: GatewayContext,
  res: ServerResponse,
  stream: InferStream,
): { shutDown: () => boolean; release: () => void } {
  let shutDown = false;
  const cancel = () => {
    shutDown = true;
    stream.cancel();
    // A client the answer waits for gets no last words: it is cut now.
    if (res.writableNeedDrain) res.destroy();
  };
  ctx.cancels.add(cancel);
  // A client that goes away cancels the request.
  const gone = () => stream.cancel();
  res.once('close', gone);
  // The client may have left while the body was read and the request built.
  if (res.destroyed) gone();
  return {
    shutDown: () => shutDown,
    release: () => {
      ctx.cancels.delete(cancel);
      res.off('close', gone);
      stream.cancel();
    },
  };
}

/**
 * `POST /v2/models/{m}/generate`: the body as for generate_stream, answered
 * with one JSON object, as Triton's HTTP server does it for any model,
 * decoupled or not: the first response (or the request's error) decides the
 * status and sends the headers; the body waits for the FINAL flag and is
 * that response in the generate form, or, when the model sent none or more
 * than one (an error response counting as one), `{"error": "generate
 * expects model to produce exactly 1 response, ..."}` under the status
 * already sent. An error before any response answers with its status as
 * the other routes do. A client that goes away cancels the request.
 */
export async function handleGenerate(
  ctx: GatewayContext,
  ex: Exchange,
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  version: number,
): Promise<void> {
  const body = await readJsonBody(
    req,
    ctx.options.maxBodyBytes,
    'the generate request',
    false,
    ex.bodyCharge,
  );
  const request = await generateRequest(ctx, name, version, body);
  const stream: InferStream = ctx.server.model(name, version).stream(request);
  const watch = watchClient(ctx, res, stream);
  const start = () => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
  };
  let responses = 0;
  let only = '';
  try {
    try {
      for (let next = await stream.next(); !next.done; next = await stream.next()) {
        const result = next.value;
        only = generateEvent(result);
        result.dispose();
        if (responses++ === 0) start();
      }
    } catch (err) {
      // Before any response: the error's own status; after one, it is one response more.
      if (responses === 0) throw err;
      responses++;
    }
    start();
    if (res.destroyed) return;
    if (watch.shutDown()) res.end(JSON.stringify({ error: 'the server is shutting down' }));
    else res.end(responses === 1 ? only : JSON.stringify({ error: GENERATE_ONE_RESPONSE }));
  } finally {
    watch.release();
  }
}

export async function handleGenerateStream(
  ctx: GatewayContext,
  ex: Exchange,
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  version: number,
): Promise<void> {
  const raw = await readBody(req, ctx.options.maxBodyBytes, ex.bodyCharge);
  const body = parseJsonHeader(raw.toString('utf8'), 'the generate_stream request');
  const v2 = Array.isArray(body.inputs);
  const decoded = v2 ? decodeInferRequest(raw, undefined) : undefined;
  const request = decoded?.request ?? (await generateRequest(ctx, name, version, body));
  const stream: InferStream = ctx.server.model(name, version).stream(request);
  const watch = watchClient(ctx, res, stream);
  const limits = ctx.options.streams;
  try {
    // The first response (or the request's error) decides the status.
    let next = await stream.next();
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    while (!next.done) {
      const result = next.value;
      const event = decoded
        ? encodeInferResponse(result, { outputs: decoded.outputs, binaryByDefault: false }).header.toString()
        : generateEvent(result);
      result.dispose();
      if (res.destroyed) return;
      // The next response waits while the client's socket is full (slow-client.ts).
      if (!res.write(`data: ${event}\n\n`)) {
        const how = await awaitClient(res, stream, limits);
        if (how === 'overflow') throw new GatewayError(503, slowClientOverflow(limits), 'UNAVAILABLE');
        if (how === 'timeout') {
          ctx.log('warn', { model: name, err: slowClientMessage(limits.writeTimeoutMs) }, 'stream cut');
          res.destroy();
          return;
        }
      }
      next = await stream.next();
    }
    const last = watch.shutDown()
      ? `data: ${JSON.stringify({ error: 'the server is shutting down' })}\n\n`
      : '';
    endWithin(res, limits.writeTimeoutMs, last);
  } catch (err) {
    if (!res.headersSent) throw err;
    // Mid-stream: the error is the last event, as Triton sends it.
    ctx.log(
      httpStatus(err) >= 500 ? 'error' : 'info',
      { err: errorMessage(err, wordingOf(ctx, 'http')), model: name },
      'stream failed',
    );
    if (!res.destroyed)
      endWithin(
        res,
        limits.writeTimeoutMs,
        `data: ${JSON.stringify({ error: errorMessage(err, wordingOf(ctx, 'http')) })}\n\n`,
      );
  } finally {
    watch.release();
  }
}
