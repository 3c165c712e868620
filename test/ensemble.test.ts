// Ensembles: models of platform "ensemble" whose steps run other models,
// on the fake and on real Triton (test/models/ensemble_*).
import { describe, expect, it } from 'vitest';
import { Server } from '../lib/index.js';
import { addon } from '../lib/native.js';
import { serverOptions, useServer } from './helpers.js';

const IN = Float32Array.of(1.5, -2, 3);

async function inferIdentity(server: Server): Promise<number[]> {
  const r = await server.infer('ensemble_identity', { inputs: { IN } });
  return Array.from(r.outputs.OUT!.data as Float32Array);
}

describe('an ensemble while other servers of the process come and go', () => {
  // Triton's process-wide memory managers are torn down by the delete of
  // any server (and by a failed ServerNew): the addon keeps stopped servers
  // undeleted while another one runs, and sets the managers up again after
  // a failed start (native/triton/server_handles.h).
  const server = useServer(['ensemble_identity']);

  it('keeps answering after another server stopped', async () => {
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
    const other = await Server.create(serverOptions());
    await other.stop();
    expect(addon().addonStats().parkedServers).toBeGreaterThan(0);
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
  });

  it('keeps answering after another server failed to start', async () => {
    await expect(Server.create(serverOptions({ modelRepository: '/nonexistent' }))).rejects.toMatchObject({
      name: 'TritonError',
    });
    expect(await inferIdentity(server())).toEqual([1.5, -2, 3]);
  });

  it('deletes the parked servers with the last one', async () => {
    const other = await Server.create(serverOptions());
    await other.stop();
    await server().stop();
    expect(addon().addonStats().parkedServers).toBe(0);
  });
});
