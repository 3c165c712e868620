/**
 * The gateway's guard: authentication (API keys by hash, JWT), tenants and
 * their model allow-lists, rate limits and concurrency caps, the audit log,
 * and model-name hardening. `createGateway(server, { guard })` builds one;
 * every request passes through `admit()` (exchange.ts asks it).
 */
export { GatewayGuard, hashApiKey, invalidModelName } from './guard.js';
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
export type { Admission, AuditOutcome, Guard, GuardRequest } from './types.js';
