/**
 * The OpenAI-compatible routes: `POST /v1/completions`, `POST
 * /v1/chat/completions` (JSON, or Server-Sent Events `data: {...}` chunks
 * ending with `data: [DONE]`), `GET /v1/models` and `GET /v1/models/{id}`.
 * Each request is admitted by the gateway's guard (when there is one) before
 * its body is read (an anonymous caller gets 401 whatever it sends), is
 * told its model once the body names it, spends its generated tokens
 * against the tenant's limit as they come, and is audited once when it
 * ends, whatever ended it. A client that goes away cancels the Triton
 * request. A request for `n` choices runs `n` Triton requests at once (choice
 * i with seed + i where a seed is given) and answers them as one: each
 * choice with its index, the usage summed, every one cancelled together.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferStream } from 'triton-node';
import type { ExtraRoutes, GatewayContext } from '../context.js';
import type { Exchange } from '../exchange.js';
import type { Admission } from '../guard/types.js';
import { readBody } from '../http/body.js';
import { httpGuardContext } from '../http/server.js';
import { ROUTES } from '../routes.js';
import {
  type HeldResponses,
  awaitClient,
  endWithin,
  slowClientMessage,
  slowClientOverflow,
} from '../slow-client.js';
import { EmbeddingsRoute, wrongKind } from './embeddings.js';
import { ModelInputs, type ModelResponse, countTokens, readResponse, tritonRequest } from './generate.js';
import { OpenAIMetrics } from './metrics.js';
import type { ResolvedOpenAIModel } from './options.js';
import {
  type Generation,
  OpenAIError,
  chatRequest,
  completionRequest,
  invalid,
  modelNotFound,
  own,
  toOpenAIError,
} from './protocol.js';

type Kind = 'completions' | 'chat';

/** One request being served: its exchange (admission, tokens, audit outcome) and the node:http pair. */
interface Call {
  ex: Exchange;
  req: IncomingMessage;
  res: ServerResponse;
  created: number;
}

/** One choice of a generation: its own Triton request, and what it produced so far. */
interface Choice {
  index: number;
  stream: InferStream;
  /** Its text (answers not streamed). */
  text: string;
  /** Tokens generated: the model's count where it reports one, else as the entry's tokenCount says. */
  tokens: number;
  /** The prompt's tokens, where the model reports them. */
  promptTokens: number | undefined;
  /** The model's finish reason, where it reports one. */
  reason: ModelResponse['finishReason'];
  /** When its first text and its last response came (performance.now()). */
  first: number | undefined;
  last: number;
}

/** The responses all choices' streams hold for a slow client, and how to cancel them all. */
function heldBy(choices: readonly Choice[]): HeldResponses {
  return {
    get buffered() {
      return choices.reduce((n, c) => n + c.stream.buffered, 0);
    },
    get bufferedBytes() {
      return choices.reduce((n, c) => n + c.stream.bufferedBytes, 0);
    },
    cancel() {
      for (const c of choices) c.stream.cancel();
    },
  };
}

/**
 * Runs `each` on every choice at once; the first failure cancels every
 * choice's request and, once all settled, is thrown (the others' own
 * failures, their cancellation among them, are its consequences).
 */
async function allChoices(choices: readonly Choice[], each: (c: Choice) => Promise<void>): Promise<void> {
  let failure: { err: unknown } | undefined;
  await Promise.all(
    choices.map((c) =>
      each(c).catch((err: unknown) => {
        if (failure !== undefined) return;
        failure = { err };
        for (const o of choices) o.stream.cancel();
      }),
    ),
  );
  if (failure !== undefined) throw failure.err;
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

export class OpenAIRoutes implements ExtraRoutes {
  readonly #ctx: GatewayContext;
  readonly #models: Map<string, ResolvedOpenAIModel>;
  readonly #inputs: ModelInputs;
  readonly #metrics: OpenAIMetrics | undefined;
  readonly #embeddings: EmbeddingsRoute;
  readonly #created = Math.floor(Date.now() / 1000);

  constructor(ctx: GatewayContext, models: Map<string, ResolvedOpenAIModel>) {
    this.#ctx = ctx;
    this.#models = models;
    this.#inputs = new ModelInputs(ctx);
    this.#metrics = ctx.options.metrics ? new OpenAIMetrics(ctx.server) : undefined;
    this.#embeddings = new EmbeddingsRoute(ctx, models, this.#metrics);
  }

  /** Serves one request under `/v1/`; answers every error itself (never rejects). */
  async handle(ex: Exchange, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const call: Call = { ex, req, res, created: Math.floor(Date.now() / 1000) };
    const path = ex.match.path ?? '/';
    res.setHeader('X-Request-Id', ex.requestId);
    try {
      await this.#route(call, path);
    } catch (err) {
      const e = toOpenAIError(err);
      ex.error = e.message;
      this.#ctx.log(
        e.status >= 500 ? 'error' : 'info',
        { status: e.status, err: e.message, path },
        'request failed',
      );
      if (res.headersSent) res.destroy();
      else
        sendJson(
          res,
          e.status,
          e.body(),
          e.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(e.retryAfterSeconds) },
        );
    } finally {
      ex.end({
        status: res.headersSent ? res.statusCode : 499,
        tokens: ex.tokens,
        ...(ex.modelVersion === undefined ? {} : { version: ex.modelVersion }),
        ...(ex.error === undefined ? {} : { error: ex.error }),
      });
    }
  }

  /** Admits the request (its credentials and the tenant's limits) before anything of its body is read. */
  async #admit(call: Call): Promise<void> {
    const guard = this.#ctx.guard;
    if (guard === undefined) return;
    const context = httpGuardContext(call.req, this.#ctx.options.maxBodyBytes);
    await call.ex.admit(guard, context, () => ({ status: 499 }));
  }

  async #route(call: Call, path: string): Promise<void> {
    const method = call.req.method;
    const clean = path.length > 4 && path.endsWith('/') ? path.slice(0, -1) : path;
    const route = call.ex.route;
    const kind: Kind | undefined =
      route === ROUTES.completions ? 'completions' : route === ROUTES.chat ? 'chat' : undefined;
    await this.#admit(call);
    const admission = call.ex.admission;
    if (route === ROUTES.openaiModels || route === ROUTES.openaiModel) {
      if (method !== 'GET') throw new OpenAIError(405, `Method ${method} is not allowed on ${clean}`);
      if (route === ROUTES.openaiModels) return this.#list(call, admission);
      const id = call.ex.match.id;
      if (id === undefined) throw invalid(`malformed percent-encoding in the path: '${clean}'`, null);
      return this.#retrieve(call, admission, id);
    }
    if (route === ROUTES.embeddings) return this.#embeddings.serve(call.ex, call.req, call.res);
    if (kind === undefined)
      throw new OpenAIError(404, `Unknown route ${method} ${path}`, null, 'unknown_url');
    if (method !== 'POST') throw new OpenAIError(405, `Method ${method} is not allowed on ${clean}`);
    return this.#generate(call, kind);
  }

  #modelDocument(entry: ResolvedOpenAIModel) {
    return { id: entry.id, object: 'model', created: this.#created, owned_by: entry.ownedBy };
  }

  #list(call: Call, admission: Admission | undefined): void {
    const data = [...this.#models.values()]
      .filter((entry) => admission === undefined || admission.canSee(entry.model))
      .map((entry) => this.#modelDocument(entry));
    sendJson(call.res, 200, { object: 'list', data });
  }

  #retrieve(call: Call, admission: Admission | undefined, id: string): void {
    const entry = this.#models.get(id);
    if (entry === undefined || (admission !== undefined && !admission.canSee(entry.model)))
      throw modelNotFound(id);
    sendJson(call.res, 200, this.#modelDocument(entry));
  }

  /** Reads the body, tells the admission its model, checks it, and generates. */
  async #generate(call: Call, kind: Kind): Promise<void> {
    const raw = await readBody(call.req, this.#ctx.options.maxBodyBytes);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw invalid(`The request body is not valid JSON: ${(err as Error).message}`, null);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalid('The request body must be a JSON object', null);
    const id = own(body, 'model');
    if (typeof id !== 'string' || id === '') throw invalid("'model' must be a non-empty string", 'model');
    const entry = this.#models.get(id);
    // Unknown and forbidden ids answer alike: the guard sees the Triton name, or the id when unknown.
    const admission = call.ex.admission;
    if (admission !== undefined) {
      const model = entry?.model ?? id;
      try {
        if (admission.forModel !== undefined) await admission.forModel(model, raw.length);
        else if (!admission.canSee(model)) throw modelNotFound(id);
      } catch (err) {
        // The guard's 404 would name the Triton model behind the id.
        throw (err as { status?: unknown }).status === 404 ? modelNotFound(id) : err;
      }
    }
    if (entry === undefined) throw modelNotFound(id);
    if (entry.kind !== 'generation') throw wrongKind(entry, call.ex.route);
    if (this.#ctx.draining) throw new OpenAIError(503, 'the server is shutting down');
    const b = body as Record<string, unknown>;
    const g = kind === 'chat' ? chatRequest(b, entry) : completionRequest(b, entry);
    const inputs = await this.#inputs.get(entry);
    // A model that counts its prompt's tokens says so in its responses: counted at the end then.
    const promptReported = inputs.has('return_num_input_tokens');
    if (!promptReported) this.#metrics?.prompt(entry.id, countTokens(entry, g.prompt));
    const seed = g.sampling.seed as number | undefined;
    const requests = Array.from({ length: g.n }, (_, i) =>
      tritonRequest(entry, inputs, g, seed === undefined ? undefined : seed + i),
    );
    const model = this.#ctx.server.model(entry.model, entry.version);
    const choices = requests.map(
      (request, index): Choice => ({
        index,
        stream: model.stream(request),
        text: '',
        tokens: 0,
        promptTokens: undefined,
        reason: undefined,
        first: undefined,
        last: call.ex.arrived,
      }),
    );
    try {
      await this.#run(call, kind, entry, g, choices);
    } finally {
      if (promptReported) this.#metrics?.prompt(entry.id, this.#promptTokens(entry, g, choices));
    }
  }

  /**
   * Runs the Triton stream to its end, cancelled by a client that leaves or by
   * a shutdown past its deadline (which also cuts a client its answer waits for).
   */
  async #run(call: Call, kind: Kind, entry: ResolvedOpenAIModel, g: Generation, choices: Choice[]) {
    const gone = () => {
      for (const c of choices) c.stream.cancel();
    };
    const cancel = () => {
      gone();
      if (call.res.writableNeedDrain) call.res.destroy();
    };
    this.#ctx.cancels.add(cancel);
    call.res.once('close', gone);
    // The client may have left while the body was read and the requests built.
    if (call.res.destroyed) gone();
    try {
      if (g.stream) await this.#streamed(call, kind, entry, g, choices);
      else await this.#whole(call, kind, entry, g, choices);
    } finally {
      this.#ctx.cancels.delete(cancel);
      call.res.off('close', gone);
      gone();
      // Each choice is a generation of its own: its time to first token and per token.
      for (const c of choices) this.#metrics?.record(entry.id, call.ex.arrived, c.first, c.last, c.tokens);
    }
  }

  /**
   * Writes one event, then waits while the client's socket is full: the next
   * response is not taken from the model's stream until it drained, and the
   * stream may hold only so much meanwhile (slow-client.ts; past it the
   * model's request is cancelled and this throws). A client that takes
   * nothing for `streams.writeTimeoutMs` is cut (its connection closed, which
   * cancels the model's request); its audit line and the log say why.
   */
  async #write(call: Call, value: unknown, stream: HeldResponses): Promise<void> {
    const res = call.res;
    if (res.destroyed) return;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (res.write(`data: ${text}\n\n`)) return;
    const limits = this.#ctx.options.streams;
    const how = await awaitClient(res, stream, limits);
    if (how === 'overflow') throw new OpenAIError(503, slowClientOverflow(limits), null, 'unavailable');
    if (how === 'drained') return;
    call.ex.error = slowClientMessage(limits.writeTimeoutMs);
    this.#ctx.log('warn', { requestId: call.ex.requestId, err: call.ex.error }, 'stream cut');
    res.destroy();
  }

  /**
   * The next piece of a choice's text, its tokens spent (the model's count
   * where it reports one); undefined at the end.
   */
  async #next(call: Call, entry: ResolvedOpenAIModel, choice: Choice): Promise<string | undefined> {
    const next = await choice.stream.next();
    if (next.done) return undefined;
    const result = next.value;
    call.ex.modelVersion = String(result.version);
    let response: ModelResponse;
    try {
      response = readResponse(result);
    } finally {
      result.dispose();
    }
    const text = response.text;
    if (response.finishReason !== undefined) choice.reason = response.finishReason;
    if (response.inputTokens !== undefined) choice.promptTokens = response.inputTokens;
    const tokens = response.outputTokens ?? countTokens(entry, text, text === '' ? 0 : 1);
    if (
      tokens > 0 &&
      call.ex.admission !== undefined &&
      !(await call.ex.admission.spendTokens(tokens, entry.model))
    )
      throw new OpenAIError(
        429,
        'generated tokens over the rate limit of this tenant',
        null,
        'rate_limit_exceeded',
        call.ex.admission.tokensRetryAfterSeconds(tokens, entry.model),
      );
    call.ex.tokens += tokens;
    choice.tokens += tokens;
    const now = performance.now();
    if (choice.first === undefined && text !== '') choice.first = now;
    choice.last = now;
    return text;
  }

  /** The model's finish reason where it reported one, else 'length' once max_tokens were generated. */
  #finishReason(g: Generation, choice: Choice): string {
    if (choice.reason !== undefined) return choice.reason;
    return g.maxTokens !== undefined && choice.tokens >= g.maxTokens ? 'length' : 'stop';
  }

  /** The prompt's tokens: the model's count where it reported one, else the entry's tokenCount. */
  #promptTokens(entry: ResolvedOpenAIModel, g: Generation, choices: readonly Choice[]): number {
    return choices.find((c) => c.promptTokens !== undefined)?.promptTokens ?? countTokens(entry, g.prompt);
  }

  /** The prompt once (every choice reads the same), the tokens of all choices. */
  #usage(call: Call, entry: ResolvedOpenAIModel, g: Generation, choices: readonly Choice[]) {
    const prompt = this.#promptTokens(entry, g, choices);
    return {
      prompt_tokens: prompt,
      completion_tokens: call.ex.tokens,
      total_tokens: prompt + call.ex.tokens,
    };
  }

  async #whole(
    call: Call,
    kind: Kind,
    entry: ResolvedOpenAIModel,
    g: Generation,
    choices: Choice[],
  ): Promise<void> {
    await allChoices(choices, async (c) => {
      for (let piece = await this.#next(call, entry, c); piece !== undefined; ) {
        c.text += piece;
        piece = await this.#next(call, entry, c);
      }
    });
    const head = {
      id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${call.ex.requestId}`,
      created: call.created,
    };
    const answers = choices.map((c) => {
      const finish_reason = this.#finishReason(g, c);
      return kind === 'chat'
        ? {
            index: c.index,
            message: { role: 'assistant', content: c.text, refusal: null },
            logprobs: null,
            finish_reason,
          }
        : { index: c.index, text: c.text, logprobs: null, finish_reason };
    });
    sendJson(call.res, 200, {
      ...head,
      object: kind === 'chat' ? 'chat.completion' : 'text_completion',
      model: entry.id,
      choices: answers,
      usage: this.#usage(call, entry, g, choices),
    });
  }

  async #streamed(
    call: Call,
    kind: Kind,
    entry: ResolvedOpenAIModel,
    g: Generation,
    choices: Choice[],
  ): Promise<void> {
    const res = call.res;
    const chunk = (choice: Record<string, unknown> | undefined, extra: object = {}) => ({
      id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${call.ex.requestId}`,
      object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
      created: call.created,
      model: entry.id,
      choices: choice === undefined ? [] : [{ ...choice, logprobs: null }],
      ...extra,
    });
    // Each chunk carries one choice, by its index.
    const piece = (index: number, text: string, finish_reason: string | null) =>
      chunk(
        kind === 'chat'
          ? { index, delta: text === '' ? {} : { content: text }, finish_reason }
          : { index, text, finish_reason },
      );
    // The first response of every choice (or a request's error) decides the status.
    const firsts: Array<string | undefined> = [];
    await allChoices(choices, async (c) => {
      firsts[c.index] = await this.#next(call, entry, c);
    });
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    const held = heldBy(choices);
    const send = (value: unknown) => this.#write(call, value, held);
    if (kind === 'chat')
      for (const c of choices)
        await send(chunk({ index: c.index, delta: { role: 'assistant', content: '' }, finish_reason: null }));
    try {
      // The choices' chunks interleave as their models answer; each ends with its finish reason.
      await allChoices(choices, async (c) => {
        for (let text = firsts[c.index]; text !== undefined; text = await this.#next(call, entry, c)) {
          if (text !== '') await send(piece(c.index, text, null));
          if (res.destroyed) return;
        }
        await send(piece(c.index, '', this.#finishReason(g, c)));
      });
    } catch (err) {
      // Mid-stream: the error is the last event (the client raises it).
      const e = toOpenAIError(err);
      call.ex.error = e.message;
      this.#ctx.log(
        e.status >= 500 ? 'error' : 'info',
        { requestId: call.ex.requestId, status: e.status, err: e.message },
        'stream failed',
      );
      await send(e.body()).catch(() => undefined);
      endWithin(res, this.#ctx.options.streams.writeTimeoutMs);
      return;
    }
    if (res.destroyed) return;
    if (g.includeUsage) await send(chunk(undefined, { usage: this.#usage(call, entry, g, choices) }));
    await send('[DONE]');
    endWithin(res, this.#ctx.options.streams.writeTimeoutMs);
  }
}
