// POST /arena/vote: a vote signed by the voter's Algorand wallet, checked in order of cost (size, rate per IP,
// shape, signature, rate per address, content, round rules) and stored once. Every refusal is a 4xx JSON error
// and never touches the store. GET /arena/votes/export hands accepted votes to the generator (bearer token, checked
// as operator-token.ts says). Every JSON answer of this app carries the disclaimer (spec section 1), as the paywall's.
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { roundFromId, voteWindowProblem } from '../../generator/engines/arena/rules.ts';
import { operatorTokenCheck } from '../operator-token.ts';
import { DISCLAIMER } from '../../schemas/common.ts';
import { CORS_HEADERS, VOTE_PATH } from '../../schemas/delivery.ts';
import { apiSecurityHeaders } from '../security-headers.ts';
import { answerUnhandled } from '../unhandled.ts';
import { parseVoteMessage } from './message.ts';
import { createRateLimiter, type RateLimit } from './rate-limit.ts';
import type { VoteStore } from './store.ts';
import { verifySignedVote, type SignedVote } from './verify.ts';

export const MAX_VOTE_BODY_BYTES = 4096;
export const DEFAULT_LIMITS = {
  perIp: { max: 30, windowMs: 60_000 },
  perAddress: { max: 5, windowMs: 60_000 },
} satisfies Record<string, RateLimit>;

export interface ArenaVoteOptions {
  store: VoteStore;
  /** The site's origin as voters sign it, e.g. "https://example.org"; a vote for another site is refused. */
  site: string;
  now?: () => number;
  limits?: { perIp: RateLimit; perAddress: RateLimit };
  /** Bearer token of the export route; without one the route does not exist. */
  exportToken?: string;
  /**
   * The key the per-IP limit counts a request under, as the runtime can vouch for it: `workerClientIp` on Cloudflare,
   * `nodeClientIp` on Node (client-ip.ts). No default: a header a client writes itself must never be the key.
   */
  clientIp: (c: Context) => string;
}

type ErrorCode =
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'malformed_body'
  | 'bad_signature'
  | 'bad_message'
  | 'wrong_site'
  | 'unknown_round'
  | 'round_closed'
  | 'already_voted'
  | 'replayed_signature';

const refuse = (c: Context, status: 400 | 401 | 409 | 413 | 415 | 429, error: ErrorCode, message: string) =>
  c.json({ success: false, error, message, disclaimer: DISCLAIMER }, status);

/**
 * The paid paths' CORS headers (CORS_HEADERS) on every answer of the vote route, refusals included: the host's
 * preflight lets a page on another origin post a vote, and that page must then be able to read the answer.
 */
const withCors: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(CORS_HEADERS)) c.res.headers.set(name, value);
};

const base64ToBytes = (text: unknown): Uint8Array | null => {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
};
const bytesToBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

/** The body forms: {form:"data", address, message, signature} or {form:"transaction", signed_transaction}. */
const signedVoteOf = (body: unknown): SignedVote | string => {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  if (b.form === 'data') {
    const signature = base64ToBytes(b.signature);
    if (typeof b.address !== 'string' || typeof b.message !== 'string' || !signature) {
      return 'form "data" needs address, message and a base64 signature';
    }
    return { kind: 'data', address: b.address, message: b.message, signature };
  }
  if (b.form === 'transaction') {
    const signedTransaction = base64ToBytes(b.signed_transaction);
    if (!signedTransaction) return 'form "transaction" needs signed_transaction in base64';
    return { kind: 'transaction', signedTransaction };
  }
  return 'form must be "data" or "transaction"';
};

/**
 * A Content-Type's media type as HTTP compares it (RFC 9110 8.3.1): case-insensitive, without its parameters; so
 * `APPLICATION/JSON; charset=utf-8` is JSON and `application/jsonx` is not.
 */
const mediaTypeOf = (contentType: string | undefined): string =>
  (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();

/**
 * The body, read only up to `max` bytes: null as soon as it is longer, the rest never read (the stream is cancelled;
 * Node's adapter then discards what the client still sends, unbuffered, and closes the connection).
 */
async function readAtMost(request: Request, max: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const body = new Uint8Array(max);
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return body.subarray(0, size);
    if (size + value.length > max) {
      await reader.cancel().catch(() => {});
      return null;
    }
    body.set(value, size);
    size += value.length;
  }
}

export const createArenaVoteApp = (options: ArenaVoteOptions): Hono => {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const perIp = createRateLimiter(limits.perIp);
  const perAddress = createRateLimiter(limits.perAddress);
  const clientIp = options.clientIp;
  const app = new Hono();
  // nosniff, the API policy and no referrer on every answer, on Node (mounted on the paywall app) and in workerd
  // (on its own); only under /arena/, so that the paywall's paths on the app this is mounted on stay untouched.
  app.use('/arena/*', apiSecurityHeaders);
  app.use(VOTE_PATH, withCors);

  app.post(VOTE_PATH, async (c) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > MAX_VOTE_BODY_BYTES) {
      return refuse(c, 413, 'payload_too_large', `a vote is at most ${MAX_VOTE_BODY_BYTES} bytes`);
    }
    if (mediaTypeOf(c.req.header('content-type')) !== 'application/json') {
      return refuse(c, 415, 'unsupported_media_type', 'send the vote as application/json');
    }
    const wait = perIp(clientIp(c), now());
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return refuse(c, 429, 'rate_limited', `too many votes from this address; retry in ${wait} s`);
    }
    // A chunked body declares no length: it is counted as it arrives, and never buffered past the limit.
    const raw = await readAtMost(c.req.raw, MAX_VOTE_BODY_BYTES);
    if (raw === null) {
      return refuse(c, 413, 'payload_too_large', `a vote is at most ${MAX_VOTE_BODY_BYTES} bytes`);
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch {
      return refuse(c, 400, 'malformed_body', 'the body is not valid UTF-8 JSON');
    }
    const signed = signedVoteOf(body);
    if (typeof signed === 'string') return refuse(c, 400, 'malformed_body', signed);
    const verified = await verifySignedVote(signed);
    if (typeof verified === 'string') return refuse(c, 401, 'bad_signature', verified);
    const addressWait = perAddress(verified.address, now());
    if (addressWait > 0) {
      c.header('Retry-After', String(addressWait));
      return refuse(c, 429, 'rate_limited', `too many votes from this wallet; retry in ${addressWait} s`);
    }
    const message = parseVoteMessage(verified.message);
    if (typeof message === 'string') return refuse(c, 400, 'bad_message', message);
    if (message.site !== options.site) {
      return refuse(c, 400, 'wrong_site', `this vote was signed for ${JSON.stringify(message.site)}`);
    }
    const round = roundFromId(message.roundId);
    if (!round || round.asset !== message.asset) {
      return refuse(
        c,
        400,
        'unknown_round',
        `${message.roundId} is not a ${message.asset} round of the schedule`,
      );
    }
    const receivedAt = now();
    const closed = voteWindowProblem(round, receivedAt);
    if (closed) return refuse(c, 409, 'round_closed', closed);
    const result = await options.store.add({
      address: verified.address,
      asset: message.asset,
      prediction: message.prediction,
      roundId: round.id,
      nonce: message.nonce,
      receivedAt,
      form: signed.kind,
      signature: bytesToBase64(verified.signature),
    });
    if (result === 'already_voted') {
      return refuse(c, 409, 'already_voted', `this wallet has already voted in round ${round.id}`);
    }
    if (result === 'signature_used') {
      return refuse(c, 409, 'replayed_signature', 'this signed vote has already been received');
    }
    return c.json(
      {
        success: true,
        round_id: round.id,
        address: verified.address,
        prediction: message.prediction,
        received_at: new Date(receivedAt).toISOString(),
        note: 'Counted in the round once the next generator run imports it; one vote per wallet per round.',
        disclaimer: DISCLAIMER,
      },
      201,
    );
  });

  if (options.exportToken) {
    const checkToken = operatorTokenCheck({
      token: options.exportToken,
      variable: 'EMI_VOTE_EXPORT_TOKEN',
      clientIp,
      now,
    });
    app.get('/arena/votes/export', async (c) => {
      const refused = await checkToken(c);
      if (refused) return refused;
      const after = Number(c.req.query('after') ?? 0);
      if (!Number.isSafeInteger(after) || after < 0) {
        return c.json({ success: false, error: 'after must be a whole number', disclaimer: DISCLAIMER }, 400);
      }
      return c.json({ success: true, votes: await options.store.since(after, 1000), disclaimer: DISCLAIMER });
    });
  }
  // The Worker calls this app's fetch itself: without this, a failing vote store is Hono's text/plain 500.
  app.onError(answerUnhandled('The vote service could not handle this request.'));
  return app;
};
