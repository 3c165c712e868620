/**
 * The pins of a shared server (`server.share()`, `Server.attach()`) across
 * threads. The owner stores its pins in the addon, where every attached
 * server reads them; its BroadcastChannel only says that they changed. Any
 * thread that knows the share id can post on that channel, so no message is
 * ever read for pins: a message that is not the owner's hint is ignored and
 * counted (a process warning says so once), and a hint only makes the
 * attached server read the owner's pins again.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { is } from '../base/is.js';

/** The one message the owner posts: its pins changed, and their generation now. */
const HINT_KIND = 'triton-node/pins-changed';

interface PinsHint {
  kind: typeof HINT_KIND;
  generation: number;
}

function isHint(data: unknown): data is PinsHint {
  if (!is.object(data) || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  const hint = data as Partial<PinsHint>;
  return (
    keys.length === 2 &&
    hint.kind === HINT_KIND &&
    Number.isSafeInteger(hint.generation) &&
    (hint.generation as number) >= 1
  );
}

/** [model, version] pairs as the owner wrote them, or undefined for anything else. */
function parsePins(text: string): [string, number][] | undefined {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(list)) return undefined;
  const out: [string, number][] = [];
  for (const p of list) {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string') return undefined;
    if (!Number.isSafeInteger(p[1]) || p[1] < 1) return undefined;
    out.push([p[0], p[1]]);
  }
  return out;
}

/** The owner's side: stores each change (`write` returns its generation), then posts the hint. */
export class PinsPublisher {
  readonly #channel: BroadcastChannel;
  readonly #write: (pins: string) => number;

  constructor(channel: string, write: (pins: string) => number) {
    this.#channel = new BroadcastChannel(channel);
    this.#channel.unref();
    this.#write = write;
  }

  publish(pins: readonly (readonly [string, number])[]): void {
    const generation = this.#write(JSON.stringify(pins));
    const hint: PinsHint = { kind: HINT_KIND, generation };
    this.#channel.postMessage(hint);
  }

  close(): void {
    this.#channel.close();
  }
}

/**
 * An attached server's side: reads the owner's pins (`read`: generation and
 * JSON list) now and at each hint, and hands them to `apply`. Never throws
 * from a message.
 */
export class PinsFollower {
  readonly #channel: BroadcastChannel;
  readonly #read: () => [number, string];
  readonly #apply: (pins: [string, number][]) => void;
  #generation = 0;
  #ignored = 0;

  constructor(channel: string, read: () => [number, string], apply: (pins: [string, number][]) => void) {
    this.#read = read;
    this.#apply = apply;
    // Listening before the first read: a change between the two is not missed.
    this.#channel = new BroadcastChannel(channel);
    this.#channel.unref();
    this.#channel.onmessage = (event: unknown) => this.#onMessage(event);
    this.#channel.onmessageerror = () => this.#ignore('a message that could not be deserialized');
    this.refresh();
  }

  /** Messages on the channel that were not the owner's hints. */
  get ignored(): number {
    return this.#ignored;
  }

  /** Reads the owner's pins; applies them when they changed. False when what was read is not pins. */
  refresh(): boolean {
    const [generation, text] = this.#read();
    if (generation === this.#generation) return true;
    const pins = parsePins(text);
    if (pins === undefined) return false;
    this.#generation = generation;
    this.#apply(pins);
    return true;
  }

  close(): void {
    this.#channel.close();
  }

  #onMessage(event: unknown): void {
    try {
      const data = (event as { data?: unknown } | null)?.data;
      if (!isHint(data)) {
        this.#ignore("not the owner's hint ({ kind, generation })");
        return;
      }
      // The owner stores its pins before it posts their generation: a
      // higher one was never published.
      if (data.generation > this.#read()[0]) {
        this.#ignore(`generation ${data.generation}, which the owner never published`);
        return;
      }
      if (!this.refresh()) this.#ignore("the owner's pins did not read as [model, version] pairs");
    } catch (err) {
      this.#ignore(`reading it failed: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  #ignore(why: string): void {
    this.#ignored++;
    if (this.#ignored !== 1) return;
    process.emitWarning(
      `triton-node: an attached server ignored a message on its owner's pins channel (${why}); ` +
        'attached servers take pins from the owner only, so another thread of this process posted it. ' +
        'Further ones are ignored without a warning.',
      'TritonWarning',
    );
  }
}
