/**
 * A thread of the process that knows a shared server's id (it saw a
 * `share()` value, a log line, the channel's name) and posts on the
 * BroadcastChannel the owner tells its pin changes on. Before: an attached
 * server took each message as a pin (`[model, 99]` sent every unversioned
 * request of each worker to version 99) and `null` killed every worker with
 * an uncaught TypeError. Now a message is only a hint to read the owner's
 * pins, which only the owner's thread can write (in the addon): anything
 * else is ignored, counted and warned about once, and never throws.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { MODELS, serverOptions } from '@triton-node/test-support/helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addon } from '../../lib/addon/load.js';
import { Server } from '../../lib/index.js';
import { startWorker } from '../lifecycle/shared-workers.js';

describe("a hostile thread and a shared server's pins", () => {
  let repo: string;
  let owner: Server;
  beforeAll(async () => {
    repo = mkdtempSync(join(tmpdir(), 'triton-node-hostile-pins-'));
    cpSync(join(MODELS, 'two_versions'), join(repo, 'two_versions'), { recursive: true });
    owner = await Server.create(serverOptions({ modelRepository: repo }));
    await owner.loadModel('two_versions', { versions: [1] });
    // Both versions loaded, 1 pinned: Triton's own choice would be 2.
    await owner.deploy('two_versions', { version: 2 });
    await owner.rollback('two_versions');
  });
  afterAll(async () => {
    await owner?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  it('messages posted on the pins channel change no pin and kill no worker: ignored, counted, warned once', async () => {
    expect(owner.pinnedVersion('two_versions')).toBe(1);
    const shared = owner.share();
    const w = startWorker(shared, 'pins', { model: 'two_versions' });
    expect(await w.next()).toEqual({ pinned: 1, served: 1 });
    const rogue = new BroadcastChannel(`triton-node/shared-server/${shared.id}`);
    try {
      const forged: unknown[] = [
        ['two_versions', 99],
        ['two_versions', 2],
        ['two_versions', null],
        null,
        undefined,
        'two_versions',
        42,
        [],
        {},
        new Map([['two_versions', 2]]),
        new Uint8Array(8),
        // The owner's hint, with a generation it never published.
        { kind: 'triton-node/pins-changed', generation: 1_000_000 },
        { kind: 'triton-node/pins-changed', generation: -1 },
        { kind: 'triton-node/pins-changed', generation: '1' },
        // Its shape with pins riding along.
        { kind: 'triton-node/pins-changed', generation: 1, pins: [['two_versions', 2]] },
      ];
      for (const message of forged) rogue.postMessage(message);
      w.worker.postMessage({ ignored: forged.length });
      const r = await w.next();
      expect(r).toMatchObject({ reached: true, ignored: forged.length, pinned: 1, served: 1 });
      const about = r.warnings.filter((m: string) => /pins channel/.test(m));
      expect(about).toHaveLength(1);
      expect(about[0]).toMatch(/another thread of this process posted it/);
      // A hint the owner did publish, replayed, only makes the worker read
      // the owner's pins again: still 1, and nothing counted.
      rogue.postMessage({ kind: 'triton-node/pins-changed', generation: 1 });
      rogue.postMessage(null);
      w.worker.postMessage({ ignored: forged.length + 1 });
      expect(await w.next()).toMatchObject({
        reached: true,
        ignored: forged.length + 1,
        pinned: 1,
        served: 1,
      });
      // The owner's own changes still reach it.
      await owner.rollback('two_versions', { to: 2 });
      w.worker.postMessage({ pinned: 2 });
      expect(await w.next()).toEqual({ reached: true, pinned: 2, served: 2 });
      await owner.rollback('two_versions', { to: 1 });
      w.worker.postMessage({ pinned: 1 });
      expect(await w.next()).toEqual({ reached: true, pinned: 1, served: 1 });
      expect(w.errors).toEqual([]);
    } finally {
      rogue.close();
      await w.worker.terminate();
    }
  });

  it("a thread that attaches with the id cannot write the owner's pins: the addon refuses it", async () => {
    const shared = owner.share();
    const pinned = owner.pinnedVersion('two_versions');
    const raw = addon().attachServer(shared.id, () => {});
    try {
      expect(() => raw.setPins(JSON.stringify([['two_versions', 99]]))).toThrow(TypeError);
      expect(() => raw.setPins(JSON.stringify([['two_versions', 99]]))).toThrow(
        /only the thread that created/,
      );
      const [, pins] = raw.pins();
      expect(JSON.parse(pins)).toEqual([['two_versions', pinned]]);
      // A server attached afterwards starts with the owner's pin.
      const attached = await Server.attach(shared);
      expect(attached.pinnedVersion('two_versions')).toBe(1);
      expect((await attached.infer('two_versions', { inputs: { INPUT0: Float32Array.of(1) } })).version).toBe(
        1,
      );
      await attached.stop();
    } finally {
      await raw.stop();
    }
  });
});
