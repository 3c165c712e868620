/**
 * The routes a front without a chosen group answers for all its groups: the
 * repository index and statistics (each ready group's, merged) and
 * `/metrics` (the front's own supervision metrics, then each ready group's
 * metrics with a `group` label).
 */
import type { IncomingMessage } from 'node:http';
import type { BodyCharge } from '../exchange.js';
import type { Admission } from '../guard/types.js';
import { readBody } from '../http/body.js';
import { parseJsonHeader } from '../kserve/codec.js';
import type { GroupProcess } from './group.js';
import { requestOverSocket } from './group.js';

/** Asks one group; undefined when it is not ready or does not answer 200. */
async function ask(group: GroupProcess, path: string, body: string | undefined): Promise<string | undefined> {
  let lease: ReturnType<GroupProcess['lease']>;
  try {
    lease = group.lease();
  } catch {
    return undefined;
  }
  try {
    const answer = await requestOverSocket(lease.socketPath, lease.agent, path, body);
    return answer.code === 200 ? answer.body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `/v2/repository/index` (the request's body passed on to each group) or
 * `/v2/models/stats`, merged over the ready groups.
 */
export async function mergedDocument(
  groups: GroupProcess[],
  req: IncomingMessage,
  path: string,
  maxBodyBytes: number,
  charge: BodyCharge | undefined,
): Promise<unknown> {
  const index = path === '/v2/repository/index';
  let body: string | undefined;
  if (index) {
    const raw = await readBody(req, maxBodyBytes, charge);
    body =
      raw.length === 0 ? '{}' : JSON.stringify(parseJsonHeader(raw.toString('utf8'), 'the index request'));
  }
  const answers = await Promise.all(groups.map((g) => ask(g, path, body)));
  const parsed = answers.flatMap((a) => (a === undefined ? [] : [JSON.parse(a) as unknown]));
  if (index) return parsed.flatMap((p) => (Array.isArray(p) ? p : []));
  return { model_stats: parsed.flatMap((p) => (p as { model_stats?: unknown[] }).model_stats ?? []) };
}

/** An index or statistics document with only the models `admission`'s tenant may see. */
export function visibleOnly(doc: unknown, admission: Admission | undefined): unknown {
  if (admission === undefined) return doc;
  const seen = (entry: unknown) => {
    const name = (entry as { name?: unknown } | null)?.name;
    return typeof name === 'string' && admission.canSee(name);
  };
  if (Array.isArray(doc)) return doc.filter(seen);
  const stats = (doc as { model_stats?: unknown }).model_stats;
  if (Array.isArray(stats)) return { ...(doc as object), model_stats: stats.filter(seen) };
  const models = (doc as { models?: unknown }).models;
  if (Array.isArray(models)) return { ...(doc as object), models: models.filter(seen) };
  return doc;
}

/** A metrics line with `group="name"` added to its labels. */
function labelled(line: string, group: string): string {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  if (brace !== -1 && brace < space) {
    const close = line.indexOf('}', brace);
    const inner = line.slice(brace + 1, close);
    return `${line.slice(0, brace)}{group="${group}"${inner === '' ? '' : ','}${line.slice(brace + 1)}`;
  }
  return `${line.slice(0, space)}{group="${group}"}${line.slice(space)}`;
}

function frontMetrics(groups: GroupProcess[]): string[] {
  const lines = [
    '# HELP triton_node_isolation_group_ready Whether the group process is ready (1) or not (0).',
    '# TYPE triton_node_isolation_group_ready gauge',
    ...groups.map((g) => `triton_node_isolation_group_ready{group="${g.name}"} ${g.ready ? 1 : 0}`),
    '# HELP triton_node_isolation_group_restarts_total Restarts of the group process.',
    '# TYPE triton_node_isolation_group_restarts_total counter',
    ...groups.map(
      (g) => `triton_node_isolation_group_restarts_total{group="${g.name}"} ${g.status().restarts}`,
    ),
    '# HELP triton_node_isolation_shared_memory_requests_total Inferences whose tensors went through shared memory.',
    '# TYPE triton_node_isolation_shared_memory_requests_total counter',
    ...groups.map(
      (g) =>
        `triton_node_isolation_shared_memory_requests_total{group="${g.name}"} ${g.counters.sharedMemoryRequests}`,
    ),
  ];
  return lines;
}

/** The front's metrics and every ready group's, each group's samples labelled with it. */
export async function groupMetrics(groups: GroupProcess[]): Promise<string> {
  // Families keep their HELP and TYPE once and their samples together, from every group.
  const families = new Map<string, { meta: string[]; samples: string[] }>();
  const texts = await Promise.all(groups.map((g) => ask(g, '/metrics', undefined)));
  for (const [i, text] of texts.entries()) {
    if (text === undefined) continue;
    let family = '';
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const meta = /^# (?:HELP|TYPE) (\S+)/.exec(line);
      if (meta !== null) family = meta[1]!;
      let f = families.get(family);
      if (f === undefined) {
        f = { meta: [], samples: [] };
        families.set(family, f);
      }
      if (meta !== null) {
        if (!f.meta.includes(line)) f.meta.push(line);
      } else if (!line.startsWith('#')) f.samples.push(labelled(line, groups[i]!.name));
    }
  }
  const lines = frontMetrics(groups);
  for (const f of families.values()) lines.push(...f.meta, ...f.samples);
  return `${lines.join('\n')}\n`;
}
