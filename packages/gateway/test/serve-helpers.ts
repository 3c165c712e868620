/** A `triton-node serve` child process, for the tests that run the command. */
import { type ChildProcess, spawn } from 'node:child_process';

interface Serving {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  httpPort: number;
  exit: Promise<number | null>;
  /** Resolves with the first log line (already logged or to come) whose msg is `msg`. */
  logged(msg: string): Promise<Record<string, unknown>>;
  /** Resolves once stdout ends: every process holding it (a grandchild too) has exited. */
  closed: Promise<void>;
}

/** Spawns a `serve` and resolves at its "serving" line (rejects if it exits first). */
export function startServing(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<Serving> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    ...(cwd === undefined ? {} : { cwd }),
  });
  const lines: Array<Record<string, unknown>> = [];
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const waiting: Array<{ msg: string; resolve: (line: Record<string, unknown>) => void }> = [];
  const logged = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.find((l) => l.msg === msg);
      if (seen !== undefined) resolve(seen);
      else waiting.push({ msg, resolve });
    });
  const closed = new Promise<void>((resolve) => child.stdout!.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue;
        }
        lines.push(parsed);
        for (const w of waiting.filter((x) => x.msg === parsed.msg)) w.resolve(parsed);
        if (parsed.msg === 'serving')
          resolve({ child, lines, exit, logged, closed, httpPort: parsed.httpPort as number });
      }
    });
    void exit.then((code) => reject(new Error(`serve exited ${code} before serving: ${stderr}`)));
  });
}
