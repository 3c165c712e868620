/**
 * The text model of the vLLM example's shape that the gateway's LLM tests
 * run on, chosen by the library under test: the fake engine's
 * fake_text_stream backend (test/models/text_words, which repeats the
 * prompt's words), or on real Triton our Python LLM model of
 * test/backends/python-llm.ts (a Markov chain over a corpus), written into a temp
 * repository served beside test/models. The tests compare texts with each
 * other (streamed and not, with and without a stop), so one test serves both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'triton-node';
import { afterAll } from 'vitest';
import { BACKEND_DIR, MODELS, library, needsBackend } from '../helpers.js';
import { readLlmReports, writeLlmModel } from './python-llm.js';

export interface LlmUnderTest {
  /** Why the tests skip (real Triton without the Python backend), else false. */
  skip: string | false;
  /** The Triton model. */
  model: string;
  /** The server's model repositories. */
  repositories: string[];
  /** Which model it is, for test names. */
  describe: string;
  /**
   * The completion of `full` cut by the stop string `stop`: vLLM's rule
   * (the text before the stop string) on real Triton; the fake stops before
   * a word equal to it.
   */
  stopped(full: string, stop: string): string;
  /** Tokens the model generates for a prompt of `words` words that sets no max_tokens. */
  defaultTokens(words: number): number;
  /**
   * The finish reason the model reports then: 'stop' on the fake (it ends with the prompt, as at
   * an end-of-sequence token), 'length' on the Python model (its default max_tokens, 16, as vLLM's).
   */
  defaultFinish: 'stop' | 'length';
  /** Requests the model saw cancelled so far (the fake's statistics; the Python model's report file). */
  cancelled(server: Server): Promise<number>;
}

/** The per-token delay of both models here, ms: a cancelled request of 2,000 tokens would run 4 s. */
export const TOKEN_DELAY_MS = 2;

/**
 * The LLM for this library; `name` the Python model's name on real Triton (default 'text_llm').
 * Call it before the file's useServer().
 */
export function llmUnderTest(name = 'text_llm'): LlmUnderTest {
  if (library().isFake) {
    return {
      skip: false,
      model: 'text_words',
      repositories: [MODELS],
      describe: 'the fake engine’s fake_text_stream (test/models/text_words)',
      stopped(full, stop) {
        const words = full.split(' ');
        const at = words.indexOf(stop);
        return at < 0 ? full : words.slice(0, at).join(' ');
      },
      defaultTokens: (words) => words,
      defaultFinish: 'stop',
      async cancelled(server) {
        const [stats] = await server.model('text_words').statistics();
        return Object.values(stats!.responseStats).reduce((n, s) => n + s.cancel.count, 0);
      },
    };
  }
  const noPython = needsBackend('python');
  if (noPython !== false) {
    return {
      skip: noPython,
      model: name,
      repositories: [MODELS],
      describe: 'none',
      stopped: () => '',
      defaultTokens: () => 0,
      defaultFinish: 'stop',
      cancelled: async () => 0,
    };
  }
  const repo = mkdtempSync(join(tmpdir(), 'tn-llm-'));
  // After the file's tests: hooks after run last-registered first (vitest's 'stack'), so this one,
  // registered before the file's useServer(), runs once the server (and the model's stub) stopped.
  afterAll(() => rmSync(repo, { recursive: true, force: true }));
  const reportFile = join(repo, 'report.jsonl');
  writeLlmModel(repo, { name, tokenDelayMs: TOKEN_DELAY_MS, reportFile });
  return {
    skip: false,
    model: name,
    repositories: [MODELS, repo],
    describe: 'the Python LLM model of test/backends/python-llm.ts',
    stopped(full, stop) {
      const at = full.indexOf(stop);
      return at < 0 ? full : full.slice(0, at);
    },
    defaultTokens: () => 16,
    defaultFinish: 'length',
    cancelled: async () => readLlmReports(reportFile).filter((r) => r.reason === 'cancelled').length,
  };
}
