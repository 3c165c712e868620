import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
/**
 * `GET|POST /v2/logging` (the logging extension): GET answers Triton's log
 * settings, POST changes them from its JSON body first; any other method is
 * 405, as tritonserver's HandleLogging answers.
 */
import { GatewayError } from '../errors.js';
import type { Exchange } from '../exchange.js';
import { logDocument, updateFromJson } from '../logging/protocol.js';
import { readJsonBody } from './body.js';
import { sendJson } from './respond.js';

/** What of kserve.ts's HttpCall the route reads. */
interface LoggingCall {
  ctx: GatewayContext;
  ex: Exchange;
  req: IncomingMessage;
  res: ServerResponse;
}

export async function handleLogging(call: LoggingCall): Promise<void> {
  const { ctx, ex, req, res } = call;
  if (req.method !== 'GET' && req.method !== 'POST') {
    throw new GatewayError(405, 'Method Not Allowed', 'UNSUPPORTED');
  }
  if (req.method === 'POST') {
    const body = await readJsonBody(
      req,
      ctx.options.maxBodyBytes,
      'the dynamic logging request',
      true,
      ex.bodyCharge,
    );
    updateFromJson(ctx.server, body);
  }
  sendJson(res, 200, logDocument(ctx.server.logSettings()));
}
