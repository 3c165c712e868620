/**
 * The gateway's guard: authentication (API keys by hash, JWT), tenants and
 * their model allow-lists, rate limits and concurrency caps, the audit log,
 * and model-name hardening. `createGateway(server, { guard })` builds one;
 * the HTTP routes and every gRPC call pass through `admit()`.
 */
export { GatewayGuard, hashApiKey, invalidModelName, isHiddenModel, unknownModelMessage } from './guard.js';
export type {
  GuardApiKeyOptions,
  GuardAuditOptions,
  GuardJwtOptions,
  GuardLimitOptions,
  GuardLimitsOptions,
  GuardOptions,
  GuardRedisOptions,
  GuardTenantOptions,
} from './config.js';
export type { GuardHooks, GuardRevocation } from './guard.js';
export type { AuditRecord } from './audit.js';
export {
  chargeBody,
  grpcGuardRequest,
  grpcMessageBytes,
  httpGuardRequest,
  keepAdmission,
  servingOn,
  visibleTo,
} from './routes.js';
export type { Admission, Guard, GuardRequest } from './types.js';
