/**
 * The supervisor of one tenant group's server process: forks it, waits for
 * it to be ready, registers the front's shared memory with it, and restarts
 * it with backoff when it exits. Runs on the front's JS thread; every field
 * belongs to it.
 *
 * A process has a generation (1, 2, ...): a request leases the generation it
 * was sent to, so that an exit answers exactly the requests that process had
 * (503 naming the exit), while the next generation starts.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError } from '../errors.js';
import { CONTROL_HEADER, type WorkerMessage, type WorkerStart, type WorkerStop } from './messages.js';
import { type ResolvedGroup, type ResolvedIsolation, exitDescription } from './options.js';
import { ShmPool } from './shm-pool.js';

export type GroupState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

/** A group's state as `gateway.groups()` reports it. */
export interface GroupStatus {
  name: string;
  state: GroupState;
  /** The process id of the current process (undefined while none runs). */
  pid: number | undefined;
  /** Processes started so far (1 after the first start). */
  generation: number;
  /** Restarts since the front started. */
  restarts: number;
  /** How the last process ended, e.g. 'signal SIGKILL'. */
  lastExit: string | undefined;
  /** Models ready in the group's process, as it last said. */
  models: string[];
  /** Inference requests whose binary inputs went through shared memory. */
  sharedMemoryRequests: number;
  /** Inference requests whose body went through the socket (JSON, too large, or no free slot). */
  socketRequests: number;
  /** Request body bytes sent over the socket to the process. */
  socketBytes: number;
  /** The Unix socket the process listens on. */
  socketPath: string;
}

/** What a request holds while the group's process serves it. */
export interface Lease {
  generation: number;
  socketPath: string;
  agent: http.Agent;
  pool: ShmPool | undefined;
  /** Resolves with how the process ended, once it ends. */
  exited: Promise<string>;
  /** The process's gRPC socket (`unix:` address), when it serves gRPC. */
  grpcAddress: string | undefined;
  /** The front's token for this process: sent with the requests it moved into its region. */
  controlToken: string;
}

/** The worker entry: the built one next to the gateway bundle, or the source under tsx. */
function workerEntry(): { path: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) return { path: join(here, '..', 'worker.ts'), execArgv: ['--import', 'tsx'] };
  return { path: join(here, '..', 'gateway-worker.js'), execArgv: [] };
}

interface Running {
  child: ChildProcess;
  generation: number;
  agent: http.Agent;
  pool: ShmPool | undefined;
  exited: Promise<string>;
  startedAt: number;
  grpc: boolean;
  /** The secret this process wants on shared memory register and unregister (only the front has it). */
  controlToken: string;
}

export class GroupProcess {
  readonly config: ResolvedGroup;
  readonly #options: ResolvedIsolation;
  readonly #socketDir: string;
  #state: GroupState = 'starting';
  #running: Running | undefined;
  #generation = 0;
  #restarts = 0;
  #inARow = 0;
  #lastExit: string | undefined;
  #failure: string | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #models: string[] = [];
  readonly #onChange: (event: string, detail: object) => void;
  readonly counters = { sharedMemoryRequests: 0, socketRequests: 0, socketBytes: 0 };

  constructor(
    config: ResolvedGroup,
    options: ResolvedIsolation,
    socketDir: string,
    onChange: (event: string, detail: object) => void,
  ) {
    this.config = config;
    this.#options = options;
    this.#socketDir = socketDir;
    this.#onChange = onChange;
  }

  get name(): string {
    return this.config.name;
  }

  get ready(): boolean {
    return this.#state === 'ready';
  }

  get models(): string[] {
    return this.#models;
  }

  get socketPath(): string {
    return join(this.#socketDir, `${this.name}.sock`);
  }

  status(): GroupStatus {
    return {
      name: this.name,
      state: this.#state,
      pid: this.#running?.child.pid,
      generation: this.#generation,
      restarts: this.#restarts,
      lastExit: this.#lastExit,
      models: [...this.#models],
      ...this.counters,
      socketPath: this.socketPath,
    };
  }

  /** The process to send a request to, or a 503 saying why there is none. */
  lease(): Lease {
    const r = this.#running;
    if (this.#state === 'ready' && r !== undefined) {
      return {
        generation: r.generation,
        socketPath: this.socketPath,
        agent: r.agent,
        pool: r.pool,
        exited: r.exited,
        grpcAddress: r.grpc ? `unix:${this.socketPath}.grpc` : undefined,
        controlToken: r.controlToken,
      };
    }
    throw this.unavailable();
  }

  /** The 503 for a request the group cannot take now. */
  unavailable(exit = this.#lastExit): GatewayError {
    let message: string;
    if (this.#state === 'failed') message = `group '${this.name}' is down: ${this.#failure}; not restarting`;
    else if (this.#state === 'stopped')
      message = `group '${this.name}' is stopped: the server is shutting down`;
    else if (exit === undefined) message = `group '${this.name}' is starting`;
    else message = `group '${this.name}' process exited (${exit}); restarting`;
    const err = new GatewayError(503, message, 'UNAVAILABLE');
    (err as GatewayError & { retryAfterSeconds?: number }).retryAfterSeconds = 1;
    return err;
  }

  /** Asks the process which models it has ready (after a load through the front, say). */
  async refreshModels(): Promise<void> {
    const r = this.#running;
    if (this.#state !== 'ready' || r === undefined) return;
    try {
      const answer = await requestOverSocket(
        this.socketPath,
        r.agent,
        '/v2/repository/index',
        '{"ready":true}',
      );
      if (answer.code !== 200 || this.#running !== r) return;
      const index = JSON.parse(answer.body) as Array<{ name: string }>;
      this.#models = index.map((m) => m.name);
    } catch {
      // The process is going away; its exit is handled where it is seen.
    }
  }

  /** Starts the first process; rejects (and leaves the group stopped) when it cannot start. */
  async start(): Promise<void> {
    try {
      await this.#spawn();
    } catch (err) {
      this.#state = 'stopped';
      this.#running?.child.kill('SIGKILL');
      throw err;
    }
  }

  /** Forks a process and resolves once it is ready (rejects with why it is not). */
  async #spawn(): Promise<void> {
    this.#state = this.#generation === 0 ? 'starting' : 'restarting';
    const generation = ++this.#generation;
    const entry = workerEntry();
    const child = fork(entry.path, [], {
      execArgv: entry.execArgv,
      env: { ...process.env, ...this.config.env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    let onExit!: (how: string) => void;
    const exited = new Promise<string>((resolve) => {
      onExit = resolve;
    });
    const running: Running = {
      child,
      generation,
      agent: new http.Agent({ keepAlive: true, maxSockets: 256 }),
      pool: undefined,
      exited,
      startedAt: Date.now(),
      grpc: false,
      controlToken: randomBytes(16).toString('hex'),
    };
    this.#running = running;
    let ended = false;
    const end = (how: string) => {
      if (ended) return;
      ended = true;
      onExit(how);
      this.#exited(running, how);
    };
    child.once('exit', (code, signal) => end(exitDescription(code, signal)));
    // A process that could not be forked emits 'error' and never 'exit'; a
    // message to one that is gone emits 'error' too (its 'exit' follows).
    child.on('error', (err) => {
      if (child.pid === undefined) end(`not forked: ${err.message}`);
    });
    const message = await this.#awaitReady(running, exited);
    this.#models = message.models;
    running.grpc = message.grpc;
    await this.#attachPool(running);
    // The group may have been stopped meanwhile (the narrowing above does not know).
    if (this.#running !== running || (this.#state as GroupState) === 'stopped') throw this.unavailable();
    this.#state = 'ready';
    this.#onChange('group ready', { pid: child.pid, generation, models: this.#models });
  }

  /** The worker's first message (ready), or a rejection naming why it did not start. */
  #awaitReady(running: Running, exited: Promise<string>): Promise<{ models: string[]; grpc: boolean }> {
    const { child } = running;
    const start: WorkerStart = {
      type: 'start',
      group: this.name,
      socketPath: this.socketPath,
      server: this.config.server,
      maxBodyBytes: this.#options.maxBodyBytes,
      controlToken: running.controlToken,
    };
    child.send(start);
    const prefix = `group '${this.name}' failed to start`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${prefix}: not ready after ${this.#options.startTimeoutMs} ms`));
        child.kill('SIGKILL');
      }, this.#options.startTimeoutMs);
      let said: string | undefined;
      child.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') {
          clearTimeout(timer);
          resolve({ models: m.models, grpc: m.grpc });
        } else if (m.type === 'failed') said = m.error;
      });
      void exited.then((how) => {
        clearTimeout(timer);
        reject(new Error(`${prefix}: ${said ?? 'its process exited'} (${how})`));
      });
    });
  }

  /** Creates the shared memory of this process and registers it there. */
  async #attachPool(running: Running): Promise<void> {
    const shm = this.#options.sharedMemory;
    if (shm === false) return;
    const pool = new ShmPool(this.name, shm.slots, shm.slotBytes);
    try {
      const body = JSON.stringify({ key: pool.key, offset: 0, byte_size: shm.slots * shm.slotBytes });
      const status = await requestOverSocket(
        this.socketPath,
        running.agent,
        `/v2/systemsharedmemory/region/${pool.region}/register`,
        body,
        { [CONTROL_HEADER]: running.controlToken },
      );
      if (status.code !== 200) {
        throw new Error(`group '${this.name}': registering shared memory failed: ${status.body}`);
      }
    } catch (err) {
      pool.close();
      throw err;
    } finally {
      pool.unlink();
    }
    running.pool = pool;
  }

  /** A process ended: answer its requests, and restart it unless the group is stopping. */
  #exited(running: Running, how: string): void {
    running.agent.destroy();
    running.pool?.close();
    if (this.#running !== running) return;
    this.#running = undefined;
    this.#lastExit = how;
    const wasReady = this.#state === 'ready';
    if (this.#state === 'stopped' || this.#state === 'failed') return;
    if (!wasReady && this.#generation === 1) return; // the first start reports it itself
    this.#state = 'restarting';
    if (Date.now() - running.startedAt >= this.#options.stableMs) this.#inARow = 0;
    this.#onChange('group process exited; restarting', { pid: running.child.pid, exit: how });
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.#inARow >= this.config.maxRestarts) {
      this.#state = 'failed';
      this.#failure = `its process exited (${this.#lastExit}) after ${this.#inARow} restarts in a row`;
      this.#onChange('group down: not restarting', { failure: this.#failure });
      return;
    }
    const delay = Math.min(this.config.backoffMs * 2 ** this.#inARow, 30_000);
    this.#inARow++;
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#state !== 'restarting') return;
      this.#restarts++;
      this.#spawn().catch((err: Error) => {
        this.#failure = err.message;
        this.#onChange('group restart failed', { err: err.message });
        // An exit during the start schedules the next try (#exited); a
        // start that failed without exiting is killed, which does the same.
        if (this.#running?.child.exitCode === null) this.#running.child.kill('SIGKILL');
      });
    }, delay);
  }

  /**
   * Stops the process once the front's drain is over: told to stop (it
   * cancels what still runs at once, stops its server and exits; SIGTERM when
   * its channel is gone), then SIGKILL after `timeoutMs`. Resolves once it has exited.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.#state = 'stopped';
    clearTimeout(this.#restartTimer);
    const running = this.#running;
    if (running === undefined || running.child.exitCode !== null || running.child.signalCode !== null) return;
    const stop: WorkerStop = { type: 'stop' };
    if (running.child.connected) running.child.send(stop);
    else running.child.kill('SIGTERM');
    const timer = setTimeout(() => running.child.kill('SIGKILL'), timeoutMs);
    const how = await running.exited;
    clearTimeout(timer);
    this.#onChange('group stopped', { exit: how });
  }
}

/** One small request to a group's process (a JSON POST, or a GET without a body); resolves with its status and body. */
export function requestOverSocket(
  socketPath: string,
  agent: http.Agent,
  path: string,
  body: string | undefined,
  extraHeaders: Record<string, string> = {},
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        agent,
        path,
        method: body === undefined ? 'GET' : 'POST',
        headers:
          body === undefined
            ? extraHeaders
            : {
                ...extraHeaders,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
              },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
