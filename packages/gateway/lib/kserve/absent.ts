/**
 * What the protocol answers for a model the server does not have, route by
 * route, and so for a model the guard hides (a ModelHiddenError): a tenant
 * cannot tell another tenant's model from none.
 */
import type { ErrorHint } from 'triton-node';
import { GatewayError, ModelHiddenError, badRequest } from '../errors.js';
import { ROUTES } from '../routes.js';

/** Triton's message for a model it does not have. */
export function unknownModelMessage(model: string): string {
  return `Request for unknown model: '${model}' is not found`;
}

/** The routes whose absent model is the library's NOT_FOUND with its hint to load it (an inference's). */
const INFERENCE: ReadonlySet<string> = new Set([
  ROUTES.infer.name,
  ROUTES.generateStream.name,
  ROUTES.streamInfer.name,
]);

/**
 * What route `route` (a route's name, routes.ts) answers for a model the
 * server does not have, as Triton's servers and the library answer it: the
 * inference routes with the library's hint to load it (said in the
 * protocol's words by `errorMessage`), readiness and statistics in their own
 * terms, the others with Triton's NOT_FOUND.
 */
export function absentModel(route: string, model: string, version: string | undefined): GatewayError {
  if (route === ROUTES.modelReady.name) return badRequest('Model version not ready');
  if (route === ROUTES.modelStats.name) return badRequest(`requested model '${model}' is not available`);
  if (INFERENCE.has(route)) {
    const hint: ErrorHint = {
      kind: 'load',
      model,
      ...(version === undefined || version === '-1' ? {} : { version: Number(version) }),
    };
    return new GatewayError(404, unknownModelMessage(model), 'NOT_FOUND', { hint });
  }
  return new GatewayError(404, unknownModelMessage(model), 'NOT_FOUND');
}

/** `err` as the protocol answers it: a hidden model as an absent one (`absentModel`), anything else as it is. */
export function asAnswered(err: unknown, route: string): unknown {
  return err instanceof ModelHiddenError ? absentModel(route, err.model, err.version) : err;
}
