// The operator's bearer tokens: EMI_ADMIN_TOKEN (the publishers' admin route, admin-route.ts) and
// EMI_VOTE_EXPORT_TOKEN (the vote export, arena-vote/app.ts), checked the same way on both routes.
// - A token shorter than MIN_OPERATOR_TOKEN_LENGTH could be guessed: `emi` refuses to start with one (exit 2), and a
//   Worker, which has no start to refuse, answers the route 503 naming the variable (never the token).
// - The scheme is matched in any case (`bearer`, `BEARER`): RFC 9110 11.1 makes it case-insensitive.
// - The token is compared through digests, so the time taken tells nothing of how much of a guess was right.
// - A client that keeps sending wrong tokens is held off (429, Retry-After) for the rest of its minute: per client
//   address, in memory, as the vote limits are (one isolate, one process).
import type { Context } from 'hono';
import { DISCLAIMER } from '../schemas/common.ts';
import { NO_STORE } from '../schemas/delivery.ts';
import { createRateLimiter } from './arena-vote/rate-limit.ts';
import type { RateLimit } from './arena-vote/rate-limit.ts';

export const MIN_OPERATOR_TOKEN_LENGTH = 32;

/** Wrong tokens one client address may send in a window before every request of it is refused 429. */
export const WRONG_TOKEN_LIMIT: RateLimit = { max: 10, windowMs: 60_000 };

/** Why `token` cannot guard a route, naming `variable` and how to make a good one; null when it can. */
export function operatorTokenProblem(variable: string, token: string): string | null {
  if (token.length >= MIN_OPERATOR_TOKEN_LENGTH) return null;
  return (
    `${variable} is shorter than ${MIN_OPERATOR_TOKEN_LENGTH} characters, so it could be guessed: ` +
    'make one with `openssl rand -hex 32`'
  );
}

/** The token of an `Authorization: Bearer <token>` header, the scheme in any case; undefined for anything else. */
export const bearerTokenOf = (header: string | undefined): string | undefined =>
  /^bearer +(.+)$/i.exec(header ?? '')?.[1];

/** Compares digests, so the time taken does not tell how much of a guessed token was right. */
export async function sameToken(given: string, expected: string): Promise<boolean> {
  const digest = async (text: string) =>
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  return a.reduce((difference, byte, i) => difference | (byte ^ (b[i] ?? 0)), 0) === 0;
}

export interface OperatorTokenOptions {
  token: string;
  /** The variable it comes from, named when it is too short. */
  variable: string;
  /** The key wrong tokens are counted under: the client address as the runtime vouches for it (client-ip.ts). */
  clientIp: (c: Context) => string;
  now?: () => number;
  wrongTokens?: RateLimit;
}

const refusal = (c: Context, status: 401 | 429 | 503, error: string, message: string): Response => {
  c.header('Cache-Control', NO_STORE);
  if (status === 401) c.header('WWW-Authenticate', 'Bearer');
  return c.json({ success: false, error, message, disclaimer: DISCLAIMER }, status);
};

/**
 * The check of a route's operator token: resolves null when the request carries it, else the refusal to answer
 * (503 for a token too short to use, 429 for a client over its wrong-token limit, 401 otherwise).
 */
export function operatorTokenCheck(options: OperatorTokenOptions): (c: Context) => Promise<Response | null> {
  const { token, variable, clientIp } = options;
  const problem = operatorTokenProblem(variable, token);
  const now = options.now ?? Date.now;
  const wrongTokens = createRateLimiter(options.wrongTokens ?? WRONG_TOKEN_LIMIT);
  return async (c) => {
    if (problem) return refusal(c, 503, 'operator_token_too_short', problem);
    const client = clientIp(c);
    // Checked before the token: a client over its limit learns nothing, not even from a right guess.
    const wait = wrongTokens.waiting(client, now());
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return refusal(c, 429, 'rate_limited', `too many wrong tokens from this address; retry in ${wait} s`);
    }
    const given = bearerTokenOf(c.req.header('authorization'));
    if (given && (await sameToken(given, token))) return null;
    // Only a token sent counts as a guess: a request without one (a crawler) never holds its address off.
    if (given) wrongTokens(client, now());
    return refusal(
      c,
      401,
      'unauthorized',
      `This route wants the operator token: Authorization: Bearer <${variable}>`,
    );
  };
}
