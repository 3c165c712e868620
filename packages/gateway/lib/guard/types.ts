/**
 * What a route asks the guard, and what an admitted request carries until it
 * ends: the contract between the gateway's routes (KServe HTTP and gRPC, the
 * OpenAI routes, the isolating front) and the guard.
 */
export interface GuardRequest {
  protocol: 'http' | 'grpc';
  /** route label, e.g. 'infer', 'model_metadata', 'repository_load', 'health', 'metrics', 'openai_chat' */
  route: string;
  /** the model named by the request, if any (already percent-decoded) */
  model?: string;
  version?: string;
  /** lower-cased header names (HTTP) or gRPC metadata */
  headers: Record<string, string | string[] | undefined>;
  /** request body size when known: bytes received (a gRPC message), or declared (`bodyUnread`) */
  bytesIn?: number;
  /**
   * `bytesIn` is the size an HTTP `Content-Length` declares for a body not
   * read yet: admission refuses (429) a body that would not fit the tenant's
   * byte buckets now and takes none of it; the route charges the bytes as
   * it reads them (`Admission.spendBytes`), so a body refused (413) or cut
   * short costs at most what was read
   */
  bodyUnread?: boolean;
  remoteAddress?: string;
  requestId: string;
}
/** How an admitted request ended, for its audit line. */
export interface AuditOutcome {
  status: number;
  bytesOut?: number;
  queueUs?: number;
  computeUs?: number;
  tokens?: number;
  version?: string;
  error?: string;
}
export interface Admission {
  /** the tenant the caller authenticated as ('anonymous' when auth is off) */
  tenant: string;
  /** call exactly once when the request ends; records the audit line */
  done(outcome: AuditOutcome): void;
  /**
   * names the model of a request admitted before its body was read (the
   * OpenAI routes): throws the GatewayError admit would have (400 for a bad
   * name, a 404 ModelHiddenError for a model the tenant may not use, 429
   * for the model's own limits);
   * nothing is audited then, the caller's `done()` records the outcome
   */
  forModel?(model: string, bytesIn?: number): void | Promise<void>;
  /** may this tenant see this model? (listing filters use it) */
  canSee(model: string): boolean;
  /** spend generated tokens against the tenant's token bucket (OpenAI routes); false when over the limit */
  spendTokens(n: number, model: string): boolean | Promise<boolean>;
  /**
   * charge `n` body bytes the guard did not take at admission (a chunked
   * HTTP body, or one admitted on its declared size, once read) to the
   * tenant's `bytesPerSecond` buckets: 0 when taken, else the seconds until
   * they would fit (nothing taken); `force` takes them regardless (bytes
   * already passed on, or a body admitted on its declared size). Without it,
   * such bytes go uncharged. With a shared store (Redis) the answer is a Promise.
   */
  spendBytes?(n: number, force?: boolean): number | Promise<number>;
  /** after a refused spend: whole seconds (at least 1) until `n` tokens could be spent, for Retry-After */
  tokensRetryAfterSeconds(n: number, model: string): number;
}
export interface Guard {
  /**
   * rejects with a GatewayError (401/403/429 with retryAfterSeconds, 431,
   * 400; a ModelHiddenError, 404, for a model the tenant may not use, which
   * the routes answer as for a model the server does not have) when denied;
   * denied requests are audited by admit itself
   */
  admit(request: GuardRequest): Promise<Admission>;
}
