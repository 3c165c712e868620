/**
 * Writing HTTP answers: JSON documents, empty answers, errors as Triton's
 * HTTP server gives them (`{"error": "..."}` with the status of their Triton
 * code, see kserve/errors.ts). Waiting for a slow client: slow-client.ts.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { GatewayError, errorMessage, httpStatus, wordingOf } from '../errors.js';

const JSON_TYPE = 'application/json';

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = typeof value === 'string' ? value : JSON.stringify(value);
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendEmpty(res: ServerResponse, status: number): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Length': 0 });
  res.end();
}

/** Answers `err` (logged; a response already under way is cut). `what` names the request in the log. */
export function sendError(ctx: GatewayContext, res: ServerResponse, err: unknown, what: string): void {
  const status = httpStatus(err);
  const message = errorMessage(err, wordingOf(ctx, 'http'));
  ctx.log(status >= 500 ? 'error' : 'info', { status, err: message, route: what }, 'request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof GatewayError && err.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(err.retryAfterSeconds));
  if (err instanceof GatewayError && err.challenge !== undefined)
    res.setHeader('WWW-Authenticate', err.challenge);
  sendJson(res, status, { error: message });
}
