// lib/gateway/guard/types.ts — part A creates it; parts B and C create the SAME file verbatim if they need to compile against it (identical content merges cleanly).
export interface GuardRequest {
  protocol: 'http' | 'grpc';
  /** route label, e.g. 'infer', 'model_metadata', 'repository_load', 'health', 'metrics', 'openai_chat' */
  route: string;
  /** the model named by the request, if any (already percent-decoded) */
  model?: string;
  version?: string;
  /** lower-cased header names (HTTP) or gRPC metadata */
  headers: Record<string, string | string[] | undefined>;
  /** request body size when known */
  bytesIn?: number;
  remoteAddress?: string;
  requestId: string;
}
export interface Admission {
  /** the tenant the caller authenticated as ('anonymous' when auth is off) */
  tenant: string;
  /** call exactly once when the request ends; records the audit line */
  done(outcome: {
    status: number;
    bytesOut?: number;
    queueUs?: number;
    computeUs?: number;
    tokens?: number;
    version?: string;
    error?: string;
  }): void;
  /** may this tenant see this model? (listing filters use it) */
  canSee(model: string): boolean;
  /** spend generated tokens against the tenant's token bucket (OpenAI routes); false when over the limit */
  spendTokens(n: number, model: string): boolean;
}
export interface Guard {
  /** throws a GatewayError (401/403/404/429 with retryAfterSeconds, 431, 400) when denied; denied requests are audited by admit itself */
  admit(request: GuardRequest): Admission;
}
