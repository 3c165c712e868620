import type { ServerOptions } from 'triton-node';
/**
 * The options of an isolating front (`createIsolatedGateway`): tenant groups,
 * each served by a server process of its own, and how they are supervised.
 * Validated once here; the rest of the module reads the resolved shapes.
 */
import { optionError } from 'triton-node/internal';
import type { GatewayLogger } from '../context.js';
import type { Guard } from '../guard/types.js';

/** How a group's process is restarted after it exits. */
export interface RestartPolicy {
  /**
   * Restarts allowed in a row (default 5); the count starts again once a
   * restarted process has stayed up for `stableMs`. Past it the group stays
   * down and its requests get 503.
   */
  maxRestarts?: number;
  /** Wait before the first restart, doubled for each further one in a row up to 30 s (default 500 ms). */
  backoffMs?: number;
}

/** One tenant group: its tenants and the server process that serves them. */
export interface IsolatedGroupOptions {
  /** The tenants (as the guard names them) whose requests this group serves. */
  tenants?: string[];
  /**
   * The group's Server (`Server.create` options: its own model repository,
   * models, library). Plain JSON: it is sent to the group's process.
   */
  server: Partial<ServerOptions>;
  /** Environment of the group's process on top of the front's, e.g. `{ CUDA_VISIBLE_DEVICES: '0' }`. */
  env?: Record<string, string>;
  /** Restart policy of the group's process. */
  restart?: RestartPolicy;
}

/** Shared memory between the front and each group's process, for binary tensors. */
export interface IsolationSharedMemoryOptions {
  /** Slots of each group's region: binary requests in flight that can use it at once (default 16). */
  slots?: number;
  /** Bytes of each slot (default 4 MiB): a request's binary inputs larger than this go over the socket. */
  slotBytes?: number;
}

/** Options of `createIsolatedGateway()`. */
export interface IsolatedGatewayOptions {
  /** The tenant groups by name (names: letters, digits, `_` and `-`). */
  groups: Record<string, IsolatedGroupOptions>;
  /**
   * The guard (authentication and tenants) of the front: each request is
   * admitted, and goes to the group of the tenant it was admitted as.
   * Without one, a request goes to the group whose process has its model ready.
   */
  guard?: Guard;
  /**
   * Honour an `x-triton-group: <name>` request header to pick the group
   * (default false; for tests and trusted callers only: with it any caller
   * picks any group). Ignored when a guard is set.
   */
  groupHeader?: boolean;
  /** Shared memory for binary input tensors (default on); false sends every body over the socket. */
  sharedMemory?: IsolationSharedMemoryOptions | false;
  /** Largest request body accepted by the front, in bytes (default 64 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** How long a group's process may take to start its server and load its models (default 120 s). */
  startTimeoutMs?: number;
  /** How long a stopping group's process may take after SIGTERM before it gets SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** How long a restarted process must stay up before its restart count starts again (default 30 s). */
  stableMs?: number;
  /** Where the front logs its groups' starts, exits and restarts (pino's shape); default: nowhere. */
  logger?: GatewayLogger;
}

export interface ResolvedGroup {
  name: string;
  tenants: string[];
  server: Partial<ServerOptions>;
  env: Record<string, string>;
  maxRestarts: number;
  backoffMs: number;
}

export interface ResolvedIsolation {
  groups: ResolvedGroup[];
  guard: Guard | undefined;
  groupHeader: boolean;
  sharedMemory: { slots: number; slotBytes: number } | false;
  maxBodyBytes: number;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  stableMs: number;
  logger: GatewayLogger;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function whole(v: unknown, what: string, fallback: number, min = 0): number {
  const n = v ?? fallback;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) {
    throw optionError(what, min > 0 ? 'a positive whole number' : 'a non-negative whole number', v);
  }
  return n;
}

function stringRecord(v: unknown, what: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isObject(v) || Object.values(v).some((s) => typeof s !== 'string')) {
    throw optionError(what, 'an object of strings', v);
  }
  return v as Record<string, string>;
}

function resolveGroup(name: string, g: unknown, owners: Map<string, string>): ResolvedGroup {
  const at = `groups.${name}`;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw optionError('a group name', 'letters, digits, _ and - (1 to 64)', name);
  }
  if (!isObject(g)) throw optionError(at, 'an object', g);
  if (!isObject(g.server)) throw optionError(`${at}.server`, 'an object of Server options', g.server);
  const tenants = g.tenants ?? [];
  if (!Array.isArray(tenants) || tenants.some((t) => typeof t !== 'string' || t === '')) {
    throw optionError(`${at}.tenants`, 'an array of tenant names', g.tenants);
  }
  for (const t of tenants as string[]) {
    const other = owners.get(t);
    if (other !== undefined) {
      throw new TypeError(`Tenant '${t}' is in two groups, '${other}' and '${name}': a tenant has one group`);
    }
    owners.set(t, name);
  }
  const restart = g.restart ?? {};
  if (!isObject(restart)) throw optionError(`${at}.restart`, 'an object', restart);
  return {
    name,
    tenants: tenants as string[],
    server: g.server as Partial<ServerOptions>,
    env: stringRecord(g.env, `${at}.env`),
    maxRestarts: whole(restart.maxRestarts, `${at}.restart.maxRestarts`, 5),
    backoffMs: whole(restart.backoffMs, `${at}.restart.backoffMs`, 500),
  };
}

function resolveSharedMemory(v: unknown): ResolvedIsolation['sharedMemory'] {
  if (v === false) return false;
  if (v !== undefined && !isObject(v)) throw optionError('sharedMemory', 'an object or false', v);
  const o = (v ?? {}) as Record<string, unknown>;
  return {
    slots: whole(o.slots, 'sharedMemory.slots', 16, 1),
    slotBytes: whole(o.slotBytes, 'sharedMemory.slotBytes', 4 * 1024 * 1024, 1),
  };
}

function resolveLogger(v: unknown): GatewayLogger {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null) throw optionError('logger', 'a pino-like logger', v);
  return v as GatewayLogger;
}

/** Checks the options and fills in defaults; mistakes throw a TypeError naming the option. */
export function resolveIsolation(options: IsolatedGatewayOptions): ResolvedIsolation {
  if (!isObject(options)) throw optionError('createIsolatedGateway options', 'an object', options);
  if (!isObject(options.groups) || Object.keys(options.groups).length === 0) {
    throw optionError('groups', 'an object with at least one group', options.groups);
  }
  const owners = new Map<string, string>();
  const groups = Object.entries(options.groups).map(([name, g]) => resolveGroup(name, g, owners));
  const guard = options.guard;
  if (guard !== undefined && typeof (guard as Partial<Guard>).admit !== 'function') {
    throw optionError('guard', 'a Guard (an object with admit())', guard);
  }
  const groupHeader = options.groupHeader ?? false;
  if (typeof groupHeader !== 'boolean') throw optionError('groupHeader', 'a boolean', groupHeader);
  return {
    groups,
    guard,
    groupHeader,
    sharedMemory: resolveSharedMemory(options.sharedMemory),
    maxBodyBytes: whole(options.maxBodyBytes, 'maxBodyBytes', 64 * 1024 * 1024, 1),
    startTimeoutMs: whole(options.startTimeoutMs, 'startTimeoutMs', 120_000, 1),
    stopTimeoutMs: whole(options.stopTimeoutMs, 'stopTimeoutMs', 10_000),
    stableMs: whole(options.stableMs, 'stableMs', 30_000),
    logger: resolveLogger(options.logger),
  };
}

/** An exit as a person reads it: `signal SIGKILL` or `code 1`. */
export function exitDescription(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `code ${code}`;
}
