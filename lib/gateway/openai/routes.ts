/**
 * The OpenAI-compatible routes: `POST /v1/completions`, `POST
 * /v1/chat/completions` (JSON, or Server-Sent Events `data: {...}` chunks
 * ending with `data: [DONE]`), `GET /v1/models` and `GET /v1/models/{id}`.
 * Each request is admitted by the gateway's guard (when there is one) before
 * its body is read (an anonymous caller gets 401 whatever it sends), is
 * told its model once the body names it, spends its generated tokens
 * against the tenant's limit as they come, and is audited once when it
 * ends, whatever ended it. A client that goes away cancels the Triton
 * request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferStream } from 'triton-node';
import type { ExtraRoutes, GatewayContext } from '../context.js';
import type { Exchange } from '../exchange.js';
import type { Admission } from '../guard/types.js';
import { readBody } from '../http/body.js';
import { httpGuardContext } from '../http/server.js';
import { ROUTES } from '../routes.js';
import { awaitClient, endWithin, slowClientMessage, slowClientOverflow } from '../slow-client.js';
import { EmbeddingsRoute, wrongKind } from './embeddings.js';
import { ModelInputs, countTokens, responseText, tritonRequest } from './generate.js';
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
    this.#metrics?.prompt(entry.id, countTokens(entry, g.prompt));
    const request = tritonRequest(entry, await this.#inputs.get(entry), g);
    const stream = this.#ctx.server.model(entry.model, entry.version).stream(request);
    await this.#run(call, kind, entry, g, stream);
  }

  /**
   * Runs the Triton stream to its end, cancelled by a client that leaves or by
   * a shutdown past its deadline (which also cuts a client its answer waits for).
   */
  async #run(call: Call, kind: Kind, entry: ResolvedOpenAIModel, g: Generation, stream: InferStream) {
    const gone = () => stream.cancel();
    const cancel = () => {
      stream.cancel();
      if (call.res.writableNeedDrain) call.res.destroy();
    };
    this.#ctx.cancels.add(cancel);
    call.res.once('close', gone);
    // The client may have left while the body was read and the request built.
    if (call.res.destroyed) gone();
    const timing = { first: undefined as number | undefined, last: call.ex.arrived };
    try {
      if (g.stream) await this.#streamed(call, kind, entry, g, stream, timing);
      else await this.#whole(call, kind, entry, g, stream, timing);
    } finally {
      this.#ctx.cancels.delete(cancel);
      call.res.off('close', gone);
      stream.cancel();
      this.#metrics?.record(entry.id, call.ex.arrived, timing.first, timing.last, call.ex.tokens);
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
  async #write(call: Call, value: unknown, stream: InferStream): Promise<void> {
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

  /** The next piece of generated text, its tokens spent; undefined at the end. */
  async #next(
    call: Call,
    entry: ResolvedOpenAIModel,
    stream: InferStream,
    timing: { first: number | undefined; last: number },
  ): Promise<string | undefined> {
    const next = await stream.next();
    if (next.done) return undefined;
    const result = next.value;
    call.ex.modelVersion = String(result.version);
    let text: string;
    try {
      text = responseText(result);
    } finally {
      result.dispose();
    }
    const tokens = countTokens(entry, text, text === '' ? 0 : 1);
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
    const now = performance.now();
    if (timing.first === undefined && text !== '') timing.first = now;
    timing.last = now;
    return text;
  }

  #finishReason(g: Generation, call: Call): 'length' | 'stop' {
    return g.maxTokens !== undefined && call.ex.tokens >= g.maxTokens ? 'length' : 'stop';
  }

  #usage(call: Call, entry: ResolvedOpenAIModel, g: Generation) {
    const prompt = countTokens(entry, g.prompt);
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
    stream: InferStream,
    timing: { first: number | undefined; last: number },
  ): Promise<void> {
    let text = '';
    for (let piece = await this.#next(call, entry, stream, timing); piece !== undefined; ) {
      text += piece;
      piece = await this.#next(call, entry, stream, timing);
    }
    const finish_reason = this.#finishReason(g, call);
    const head = {
      id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${call.ex.requestId}`,
      created: call.created,
    };
    const choice =
      kind === 'chat'
        ? {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason,
          }
        : { index: 0, text, logprobs: null, finish_reason };
    sendJson(call.res, 200, {
      ...head,
      object: kind === 'chat' ? 'chat.completion' : 'text_completion',
      model: entry.id,
      choices: [choice],
      usage: this.#usage(call, entry, g),
    });
  }

  async #streamed(
    call: Call,
    kind: Kind,
    entry: ResolvedOpenAIModel,
    g: Generation,
    stream: InferStream,
    timing: { first: number | undefined; last: number },
  ): Promise<void> {
    const res = call.res;
    const chunk = (choice: Record<string, unknown> | undefined, extra: object = {}) => ({
      id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${call.ex.requestId}`,
      object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
      created: call.created,
      model: entry.id,
      choices: choice === undefined ? [] : [{ index: 0, ...choice, logprobs: null }],
      ...extra,
    });
    const piece = (text: string, finish_reason: string | null) =>
      chunk(
        kind === 'chat'
          ? { delta: text === '' ? {} : { content: text }, finish_reason }
          : { text, finish_reason },
      );
    // The first response (or the request's error) decides the status.
    let text = await this.#next(call, entry, stream, timing);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    const send = (value: unknown) => this.#write(call, value, stream);
    if (kind === 'chat')
      await send(chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
    try {
      while (text !== undefined) {
        if (text !== '') await send(piece(text, null));
        if (res.destroyed) return;
        text = await this.#next(call, entry, stream, timing);
      }
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
    await send(piece('', this.#finishReason(g, call)));
    if (g.includeUsage) await send(chunk(undefined, { usage: this.#usage(call, entry, g) }));
    await send('[DONE]');
    endWithin(res, this.#ctx.options.streams.writeTimeoutMs);
  }
}
