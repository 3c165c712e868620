/**
 * Errors: one class for everything Triton (or the binding acting for Triton)
 * reports, TypeErrors for mistakes in how the API is called.
 */

import { ERROR_CODES, type LoadAttempt, type TritonErrorCode } from '../abi/binding.js';

export type { LoadAttempt, TritonErrorCode };

export interface TritonErrorDetails {
  code: TritonErrorCode;
  model?: string;
  version?: number;
  requestId?: string;
  correlationId?: number | bigint | string;
  attempts?: LoadAttempt[];
  hint?: ErrorHint;
  cause?: unknown;
}

/**
 * What a caller can do about an error, as data: the library writes it into
 * the message in JS words (`server.loadModel('x') loads it`), and the
 * gateway, which must not show a remote client a JS call, writes the same
 * advice in its protocol's words (`POST /v2/repository/models/x/load`).
 * - `load`: the model (or that version of it) is not loaded.
 * - `stream`: the model is decoupled; a single-response call cannot serve it.
 * - `config`: the repository has no config.pbtxt for the model; the load must bring one.
 */
export type ErrorHint =
  | { readonly kind: 'load'; readonly model: string; readonly version?: number }
  | { readonly kind: 'stream'; readonly model: string }
  | { readonly kind: 'config'; readonly model: string };

/** The hint in the words of a JS caller, as the message carries it. */
export function hintText(hint: ErrorHint): string {
  if (hint.kind === 'stream') return 'use model.stream() instead of infer()';
  if (hint.kind === 'config') return 'pass loadModel(name, { config, versions })';
  const which = hint.version === undefined || hint.version === -1 ? '' : ` with version ${hint.version}`;
  return `is it loaded${which}? server.loadModel('${hint.model}') loads it`;
}

/**
 * An error reported by Triton, or by the binding on Triton's behalf (a
 * validation failure before a request is sent, a cancelled request, a stopped
 * server). `code` is Triton's code; `message` keeps Triton's own text.
 */
export class TritonError extends Error {
  readonly code: TritonErrorCode;
  /** The model the failing call was about, when there was one. */
  declare readonly model?: string;
  /** The model version the call asked for (-1: the highest ready version). */
  declare readonly version?: number;
  /** The request id (`request.id`) of the failing inference, when given. */
  declare readonly requestId?: string;
  /** The sequence (`request.correlationId`) of the failing inference, when it had one. */
  declare readonly correlationId?: number | bigint | string;
  /** Library loader failures: every path tried and what was found there. */
  declare readonly attempts?: LoadAttempt[];
  /** What to do about it, as data; the message ends with it in JS words (see `hintText`). */
  declare readonly hint?: ErrorHint;

  constructor(message: string, details: TritonErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TritonError';
    this.code = details.code;
    if (details.model !== undefined) this.model = details.model;
    if (details.version !== undefined) this.version = details.version;
    if (details.requestId !== undefined) this.requestId = details.requestId;
    if (details.correlationId !== undefined) this.correlationId = details.correlationId;
    if (details.attempts !== undefined) this.attempts = details.attempts;
    if (details.hint !== undefined) this.hint = details.hint;
  }
}

/**
 * `err` with what to do about it appended to its message: Triton's code and
 * its own text stay as they are. For errors not yet handed to anyone.
 */
export function withHint<E extends Error>(err: E, hint: string): E {
  err.message = `${err.message} (${hint})`;
  return err;
}

/**
 * `err` with a structured hint: kept as `err.hint` and appended to the
 * message in JS words, so that a layer serving another protocol can swap
 * the words for its own (the gateway's `errorMessage`).
 */
export function withCallHint(err: TritonError, hint: ErrorHint): TritonError {
  (err as { hint?: ErrorHint }).hint = hint;
  return withHint(err, hintText(hint));
}

/**
 * A fresh copy of `err` for one caller, with that caller's context: an error
 * shared by several waiting calls (one failed model-config fetch) must not
 * have its stack or request id rewritten by each of them.
 */
export function copyError(err: TritonError, context: ErrorContext): TritonError {
  const copy = new TritonError(named(err.message, context), {
    code: err.code,
    model: context.model ?? err.model,
    version: context.version ?? err.version,
    requestId: context.requestId,
    correlationId: context.correlationId,
    attempts: err.attempts,
    hint: err.hint,
    cause: err.cause,
  });
  copy.name = err.name;
  return copy;
}

/** Where a native call came from: the model, version and request (and its sequence) it was for. */
export interface ErrorContext {
  model?: string;
  version?: number;
  requestId?: string;
  correlationId?: number | bigint | string;
}

/**
 * `message` naming the request's sequence where the request had one and the
 * message does not name it already (Triton's "inference request for
 * sequence 7 to model ..." does; its "Cancelled" of the requests queued
 * behind a cancelled one does not): with several sequences in flight, which
 * one failed is what the caller needs to know.
 */
function named(message: string, context: ErrorContext): string {
  const id = context.correlationId;
  if (id === undefined || message.includes(`sequence ${id}`)) return message;
  return `${message} (sequence ${id})`;
}

/**
 * Captures the caller's stack before a native call so the error that comes
 * back later (from another tick) points at the caller's code, as sharp does.
 */
export function captureStack(): Error {
  const holder = { stack: '' } as Error;
  Error.captureStackTrace(holder, captureStack);
  return holder;
}

/**
 * Replaces `err`'s stack with the stack of the function calling stackHere.
 * Called in an async function after an `await`, that stack ends with the
 * functions awaiting it ("at async caller (file:line)"): V8 follows the
 * awaiting chain at no cost until an error is made. Errors only.
 */
export function stackHere<E extends Error>(err: E): E {
  Error.captureStackTrace(err, stackHere);
  return err;
}

function withStack(err: Error, holder: Error | undefined): Error {
  if (holder?.stack) {
    const frames = holder.stack.split('\n').slice(1).join('\n');
    err.stack = `${err.name}: ${err.message}\n${frames}`;
  }
  return err;
}

function isCode(value: unknown): value is TritonErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** Turns an error thrown by the addon (an Error with `code`) into a TritonError. */
export function fromNativeError(err: unknown, context: ErrorContext = {}, holder?: Error): TritonError {
  if (err instanceof TritonError) return err;
  const e = err as { code?: unknown; message?: unknown; attempts?: LoadAttempt[] } | undefined;
  const code = isCode(e?.code) ? e.code : 'UNKNOWN';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const out = new TritonError(named(message, context), { ...context, code, attempts: e?.attempts });
  return withStack(out, holder) as TritonError;
}

/** Builds a TritonError from an error carried on a response event. */
export function fromErrorInfo(
  info: { code: string; message: string },
  context: ErrorContext,
  holder?: Error,
): TritonError {
  const code = isCode(info.code) ? info.code : 'UNKNOWN';
  // Triton fails the requests queued behind a cancelled one of a sequence with CANCELLED and no text.
  const message =
    info.message === '' ? `${requestOf(context)} was answered ${code}, with no message` : info.message;
  return withStack(new TritonError(named(message, context), { ...context, code }), holder) as TritonError;
}

/** A TritonError raised by the binding itself (validation, stopped server...). */
export function tritonError(
  code: TritonErrorCode,
  message: string,
  context: ErrorContext = {},
  holder?: Error,
): TritonError {
  return withStack(new TritonError(named(message, context), { ...context, code }), holder) as TritonError;
}

/** What every call on a stopped (or stopping) server rejects with. */
export function stoppedError(
  holder?: Error,
  context: { model?: string; version?: number } = {},
  message = 'the server was stopped',
): TritonError {
  return tritonError('UNAVAILABLE', message, context, holder);
}

function requestOf(context: ErrorContext): string {
  return context.model === undefined ? 'request' : `request to model '${context.model}'`;
}

/**
 * The error an aborted call rejects with: a TritonError with code 'CANCELLED'
 * whose `name` is 'AbortError' (as fetch names it), and the signal's reason as
 * `cause`.
 */
export function abortError(context: ErrorContext, reason: unknown, holder?: Error): TritonError {
  const err = new TritonError(named(`${requestOf(context)} was aborted`, context), {
    ...context,
    code: 'CANCELLED',
    cause: reason,
  });
  err.name = 'AbortError';
  return withStack(err, holder) as TritonError;
}

/** A short description of a value for error messages: type and, where short, the value. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') {
    return value.length > 40 ? `string "${value.slice(0, 37)}..."` : `string "${value}"`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `${typeof value} ${String(value)}${typeof value === 'bigint' ? 'n' : ''}`;
  }
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of length ${value.byteLength} bytes`;
  const ctor = (value as object).constructor;
  return ctor && ctor !== Object ? `a ${ctor.name}` : 'an object';
}

/** An option mistake: names the option, what was expected, and what was given. */
export function optionError(option: string, expected: string, given: unknown): TypeError {
  return new TypeError(`Expected ${expected} for ${option} but received ${describe(given)}`);
}

/** A value of the right type but outside what it may be: names the option, the range, and what was given. */
export function optionRangeError(option: string, expected: string, given: unknown): RangeError {
  return new RangeError(`Expected ${expected} for ${option} but received ${describe(given)}`);
}
