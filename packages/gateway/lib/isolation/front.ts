/**
 * The isolating front's state: its groups, which group a request goes to,
 * and the requests in flight (what a drain waits for).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError, badRequest, errorMessage } from '../errors.js';
import { InFlight } from '../exchange.js';
import type { Admission } from '../guard/types.js';
import { unknownModelMessage } from '../kserve/absent.js';
import { ROUTES, type RouteMatch } from '../routes.js';
import { GroupProcess } from './group.js';
import type { ResolvedIsolation } from './options.js';

/**
 * Routes that may be open to callers of no group (health, metrics, server
 * metadata): they see the whole front (server metadata: any group's, one library).
 */
const SERVER_WIDE: ReadonlySet<string> = new Set([ROUTES.live.name, ROUTES.metrics.name, ROUTES.server.name]);

/** The front's state: its groups, routing and the requests in flight. @internal */
export class Front {
  readonly options: ResolvedIsolation;
  readonly groups: GroupProcess[];
  readonly #byTenant = new Map<string, GroupProcess>();
  readonly #socketDir: string;
  #lastRefresh = 0;
  /** The requests being served now: what a drain waits for. */
  readonly ledger = new InFlight();
  draining = false;

  constructor(options: ResolvedIsolation) {
    this.options = options;
    // A directory of this user's alone (mode 0700): no other local user can
    // reach a group's socket.
    this.#socketDir = mkdtempSync(join(tmpdir(), 'triton-node-isolation-'));
    const log = (group: string) => (event: string, detail: object) => {
      try {
        const level = event.startsWith('group ready') || event === 'group stopped' ? 'info' : 'warn';
        options.logger[level]?.({ group, ...detail }, event);
      } catch {
        // A failing logger must not stop the supervisor.
      }
    };
    this.groups = options.groups.map((g) => new GroupProcess(g, options, this.#socketDir, log(g.name)));
    for (const g of this.groups) for (const t of g.config.tenants) this.#byTenant.set(t, g);
  }

  async start(): Promise<void> {
    const results = await Promise.allSettled(this.groups.map((g) => g.start()));
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [errorMessage(r.reason)] : []));
    if (failed.length === 0) return;
    await this.stop();
    throw new Error(`the isolated groups did not start: ${failed.join('; ')}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.groups.map((g) => g.stop(this.options.stopTimeoutMs)));
    rmSync(this.#socketDir, { recursive: true, force: true });
  }

  /** The group a request goes to; undefined for a server-wide route with nothing to choose by. */
  choose(
    headers: Record<string, unknown>,
    admission: Admission | undefined,
    target: RouteMatch,
  ): GroupProcess | undefined {
    if (admission !== undefined) {
      const group = this.#byTenant.get(admission.tenant);
      // Health, metrics and server metadata may be open to callers of no group:
      // they see the whole front (server metadata: any group's, one library).
      const serverWide = SERVER_WIDE.has(target.route.name);
      if (group === undefined && serverWide) return undefined;
      if (group === undefined) {
        throw new GatewayError(403, `tenant '${admission.tenant}' is in no isolated group`, 'UNAVAILABLE');
      }
      return group;
    }
    const header = headers['x-triton-group'];
    if (this.options.groupHeader && typeof header === 'string') {
      const group = this.groups.find((g) => g.name === header);
      if (group === undefined) throw badRequest(`unknown group '${header}' in x-triton-group`);
      return group;
    }
    if (target.model === undefined) return undefined;
    const group = this.#byModel(target.model);
    if (group === undefined) {
      throw new GatewayError(404, unknownModelMessage(target.model), 'NOT_FOUND');
    }
    return group;
  }

  #byModel(model: string): GroupProcess | undefined {
    const found = this.groups.find((g) => g.models.includes(model));
    if (found !== undefined) return found;
    // A model loaded since a process said what it has: ask again, at most once a second.
    if (Date.now() - this.#lastRefresh >= 1000) {
      this.#lastRefresh = Date.now();
      for (const g of this.groups) void g.refreshModels();
    }
    return undefined;
  }
}
