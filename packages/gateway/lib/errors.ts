/**
 * Errors of the gateway and the status codes the KServe v2 protocol gives
 * them: Triton's HTTP server maps its error codes to HTTP statuses (and its
 * gRPC server to gRPC codes) the way these tables do, so a client sees the
 * same status from this gateway as from `tritonserver`.
 */
import { type ErrorHint, TritonError, type TritonErrorCode, hintText } from 'triton-node';

/**
 * A request the gateway refuses or cannot serve: `status` is the HTTP status
 * it answers with, `code` the Triton error code it stands for (gRPC maps it).
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly code: TritonErrorCode;
  /** A 429's wait before a retry, whole seconds ≥ 1 (HTTP sends it as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** The gRPC status code when it is not the one of `code` (UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED). */
  readonly grpcCode?: number;
  /** A 401's `WWW-Authenticate` challenge. */
  readonly challenge?: string;
  /** What to do about it, as data (the message carries it in JS words, as a TritonError's does). */
  readonly hint?: ErrorHint;

  constructor(
    status: number,
    message: string,
    code: TritonErrorCode = codeOfStatus(status),
    extra: GatewayErrorExtra = {},
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = status;
    this.code = code;
    if (extra.retryAfterSeconds !== undefined) this.retryAfterSeconds = extra.retryAfterSeconds;
    if (extra.grpcCode !== undefined) this.grpcCode = extra.grpcCode;
    if (extra.challenge !== undefined) this.challenge = extra.challenge;
    if (extra.hint !== undefined) this.hint = extra.hint;
  }
}

/** What a guard's denial adds to a GatewayError. */
export interface GatewayErrorExtra {
  retryAfterSeconds?: number;
  grpcCode?: number;
  challenge?: string;
  hint?: ErrorHint;
}

/**
 * The guard's refusal of a model the tenant may not use. It never reaches a
 * client as it is: the protocol layer answers it as the route answers for a
 * model the server does not have (`absentModel`), so that a tenant cannot
 * tell another tenant's model from none. Its message is for the audit log.
 */
export class ModelHiddenError extends GatewayError {
  readonly model: string;
  /** The version the request named, as given. */
  readonly version: string | undefined;

  constructor(model: string, version: string | undefined, tenant: string) {
    super(404, `model '${model}' is not one of the models of tenant '${tenant}'`, 'NOT_FOUND');
    this.name = 'ModelHiddenError';
    this.model = model;
    this.version = version;
  }
}

/** A malformed request (400, INVALID_ARG). */
export function badRequest(message: string): GatewayError {
  return new GatewayError(400, message, 'INVALID_ARG');
}

/** HTTP status per Triton error code, as Triton's HTTP server answers. */
const HTTP_STATUS: Record<TritonErrorCode, number> = {
  INTERNAL: 500,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  UNKNOWN: 400,
  INVALID_ARG: 400,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
};

/** gRPC status codes (numbers of google.rpc.Code) per Triton error code, as Triton's gRPC server answers. */
const GRPC_STATUS: Record<TritonErrorCode, number> = {
  UNKNOWN: 2,
  INTERNAL: 13,
  NOT_FOUND: 5,
  INVALID_ARG: 3,
  UNAVAILABLE: 14,
  UNSUPPORTED: 12,
  ALREADY_EXISTS: 6,
  CANCELLED: 1,
};

function codeOfStatus(status: number): TritonErrorCode {
  if (status === 404) return 'NOT_FOUND';
  if (status === 503) return 'UNAVAILABLE';
  if (status === 501) return 'UNSUPPORTED';
  if (status >= 500) return 'INTERNAL';
  return 'INVALID_ARG';
}

/** The Triton error code of anything thrown while serving a request. */
export function errorCode(err: unknown): TritonErrorCode {
  if (err instanceof GatewayError || err instanceof TritonError) return err.code;
  // TypeErrors and RangeErrors are the library's word for a malformed argument.
  if (err instanceof TypeError || err instanceof RangeError) return 'INVALID_ARG';
  return 'INTERNAL';
}

/** The HTTP status for an error thrown while serving a request. */
export function httpStatus(err: unknown): number {
  if (err instanceof GatewayError) return err.status;
  return HTTP_STATUS[errorCode(err)];
}

/** The gRPC status code for an error thrown while serving a request. */
export function grpcStatus(err: unknown): number {
  if (err instanceof GatewayError && err.grpcCode !== undefined) return err.grpcCode;
  return GRPC_STATUS[errorCode(err)];
}

/**
 * The words a gateway answers in: a remote client can do nothing with a JS
 * call (`server.loadModel('x')`), so an error's hint is said in the
 * protocol's own terms, or left out where the protocol has none.
 */
export interface Wording {
  protocol: 'http' | 'grpc' | 'openai';
  /** Whether the gateway serves the repository routes (load and unload). */
  repositoryControl: boolean;
}

/** The wording of a gateway (its context's options) for `protocol`. */
export function wordingOf(
  ctx: { options: { repositoryControl: boolean } },
  protocol: Wording['protocol'],
): Wording {
  return { protocol, repositoryControl: ctx.options.repositoryControl };
}

/** The advice of `hint` in the words of `wording` (undefined: nothing to say there). */
export function protocolHint(hint: ErrorHint, wording: Wording): string | undefined {
  const { protocol } = wording;
  if (protocol === 'openai') return undefined;
  if (hint.kind === 'stream') {
    return protocol === 'grpc'
      ? 'use the ModelStreamInfer RPC instead of ModelInfer'
      : `use POST /v2/models/${encodeURIComponent(hint.model)}/generate_stream instead of infer`;
  }
  if (!wording.repositoryControl) return undefined;
  if (hint.kind === 'config') {
    return protocol === 'grpc'
      ? "send the config in RepositoryModelLoad's parameters (key 'config')"
      : "send the config in the load request's parameters.config";
  }
  const which = hint.version === undefined || hint.version === -1 ? '' : ` with version ${hint.version}`;
  const how =
    protocol === 'grpc'
      ? 'the RepositoryModelLoad RPC loads it'
      : `POST /v2/repository/models/${encodeURIComponent(hint.model)}/load loads it`;
  return `is it loaded${which}? ${how}`;
}

/**
 * The message a client is shown: Triton's text as it is, with the hint the
 * library added for JS callers said in the protocol's words (`wording`), or
 * dropped when no wording is given or the protocol has no words for it. A
 * GatewayError's hint is data only (its message has no JS words): its
 * protocol words are added at the end.
 */
export function errorMessage(err: unknown, wording?: Wording): string {
  if (!(err instanceof Error)) return String(err);
  const hint = (err as { hint?: ErrorHint }).hint;
  if (hint === undefined) return err.message;
  const words = wording === undefined ? undefined : protocolHint(hint, wording);
  const said = words === undefined ? '' : ` (${words})`;
  if (err instanceof GatewayError) return `${err.message}${said}`;
  return err.message.replace(` (${hintText(hint)})`, said);
}
