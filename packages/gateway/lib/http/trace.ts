import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
/**
 * `GET|POST /v2[/models/{model}]/trace/setting` (the trace extension): GET
 * answers the settings, POST updates them from its JSON body first; any
 * other method is 405, as tritonserver's HandleTrace answers.
 */
import { GatewayError } from '../errors.js';
import type { Exchange } from '../exchange.js';
import { traceSetting, updateFromJson } from '../trace/protocol.js';
import { readJsonBody } from './body.js';
import { sendJson } from './respond.js';

/** What of kserve.ts's HttpCall the route reads. */
interface TraceCall {
  ctx: GatewayContext;
  ex: Exchange;
  req: IncomingMessage;
  res: ServerResponse;
}

export async function handleTraceSetting(call: TraceCall, model: string): Promise<void> {
  const { ctx, ex, req, res } = call;
  if (req.method !== 'GET' && req.method !== 'POST') {
    throw new GatewayError(405, 'Method Not Allowed', 'UNSUPPORTED');
  }
  const body =
    req.method === 'POST'
      ? await readJsonBody(req, ctx.options.maxBodyBytes, 'the trace setting request', true, ex.bodyCharge)
      : undefined;
  const doc = await traceSetting(
    ctx.server,
    ctx.trace,
    model,
    body === undefined ? undefined : () => updateFromJson(body),
  );
  sendJson(res, 200, doc);
}
