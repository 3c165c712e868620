/**
 * The C++ side: runs `bench_driver` (bench/native/driver.cc) as a child
 * process on the same library and model repository, and reads the one JSON
 * line it prints.
 */
import { spawn } from 'node:child_process';
import type { BenchCase } from './cases.js';
import type { RunResult, ServerBreakdown, Side } from './results.js';

export interface DriverSettings {
  driver: string;
  library: string;
  repository: string;
  backendDirectory?: string;
  durationS: number;
  warmupS: number;
}

/** The driver's JSON line (see main() in driver.cc). */
interface DriverOutput {
  concurrency: number;
  requests: number;
  durationS: number;
  throughput: number;
  latencyUs: { p50: number; p90: number; p99: number; max: number; mean: number };
  responsesPerSec?: number;
  server: {
    requests: number;
    executions: number;
    queueUs: number;
    computeInputUs: number;
    computeInferUs: number;
    computeOutputUs: number;
  };
  serverResponses?: { responses: number; computeInferUs: number; computeOutputUs: number };
  errors: number;
  firstError?: string;
}

export function driverArgs(c: BenchCase, s: DriverSettings, inCallback: boolean): string[] {
  const args = [
    '--library',
    s.library,
    '--repository',
    s.repository,
    '--model',
    c.model,
    '--case',
    c.kind,
    '--input',
    c.input,
    '--concurrency',
    String(c.concurrency),
    '--duration',
    String(s.durationS),
    '--warmup',
    String(s.warmupS),
  ];
  if (s.backendDirectory !== undefined) args.push('--backend-dir', s.backendDirectory);
  if (c.kind === 'stream') {
    args.push('--responses', String(c.responses ?? 0));
  } else {
    args.push('--shape', c.shape.join(','), '--datatype', c.datatype);
  }
  if (inCallback) args.push('--resubmit-in-callback');
  return args;
}

export async function runDriver(c: BenchCase, s: DriverSettings, side: Side): Promise<RunResult> {
  const args = driverArgs(c, s, side === 'cpp-callback');
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(s.driver, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
      });
      child.on('error', (e) => reject(new Error(`cannot run the C++ driver '${s.driver}': ${e.message}`)));
      child.on('close', (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
    },
  );
  const line = stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (line === undefined) {
    throw new Error(
      `the C++ driver exited with code ${code} and printed no result for case ${c.name}` +
        (stderr.trim() ? `: ${stderr.trim().slice(-2000)}` : '') +
        `\n  command: ${s.driver} ${args.join(' ')}`,
    );
  }
  const out = JSON.parse(line) as DriverOutput;
  const server: ServerBreakdown = { ...out.server };
  if (out.serverResponses !== undefined) {
    server.responses = out.serverResponses.responses;
    server.responseComputeUs = out.serverResponses.computeInferUs + out.serverResponses.computeOutputUs;
  }
  const result: RunResult = {
    side,
    caseName: c.name,
    concurrency: out.concurrency,
    requests: out.requests,
    durationS: out.durationS,
    throughput: out.throughput,
    latencyUs: out.latencyUs,
    server,
    errors: out.errors,
  };
  if (out.responsesPerSec !== undefined) result.responsesPerSec = out.responsesPerSec;
  if (out.firstError !== undefined) result.firstError = out.firstError;
  return result;
}
