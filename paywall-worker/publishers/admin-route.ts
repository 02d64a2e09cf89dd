// The operator's credit management over HTTP (`admin-api.ts`), for a worker whose ledger the `emi publisher`
// commands cannot open: the Cloudflare Worker's Durable Objects. Without a configured token the routes do not exist
// (404), so a Worker never exposes them by accident; with one, the token is checked as operator-token.ts says (a
// token too short answers 503, a wrong one 401, a client sending wrong ones again and again 429), and an id the
// Worker does not configure is a 404 `unknown_publisher` naming those it does, unless the ledger has books for it (a
// publisher removed from the list: its statement, and a withdrawal of its unused credits, 409 for a grant).
import { Hono } from 'hono';
import type { Context } from 'hono';
import { NO_STORE } from '../../schemas/delivery.ts';
import { errorResponse } from '../app.ts';
import { operatorTokenCheck } from '../operator-token.ts';
import { apiSecurityHeaders } from '../security-headers.ts';
import { answerUnhandled } from '../unhandled.ts';
import type { Publisher } from './config.ts';
import { CreditError, sinceTime } from './credit-ledger.ts';
import type { CreditLedger } from './credit-ledger.ts';
import type { CreditRequest, StatementAnswer } from './admin-api.ts';
import { CREDITS_RULE, MAX_CREDITS } from './admin-api.ts';

export interface AdminRouteOptions {
  publishers: readonly Publisher[];
  ledger: CreditLedger;
  /** The bearer token (EMI_ADMIN_TOKEN); without one every admin path answers 404. */
  token?: string;
  /** The key wrong tokens are counted under: `workerClientIp` on Cloudflare (arena-vote/client-ip.ts). */
  clientIp: (c: Context) => string;
}

const refuse = (c: Context, status: 400 | 409, error: string, message: string) => {
  c.header('Cache-Control', NO_STORE);
  return c.json({ success: false, error, message }, status);
};

const creditRequestOf = (body: unknown): CreditRequest | null => {
  if (typeof body !== 'object' || body === null) return null;
  const { credits, note } = body as Record<string, unknown>;
  if (typeof credits !== 'number' || !Number.isSafeInteger(credits) || credits === 0) return null;
  if (Math.abs(credits) > MAX_CREDITS) return null;
  if (note !== undefined && (typeof note !== 'string' || note.length > 200)) return null;
  return { credits, ...(note ? { note } : {}) };
};

/** Whether the ledger has anything for `id`: credits, a sale or a grant (an id never configured has none). */
async function hasBooks(ledger: CreditLedger, id: string): Promise<boolean> {
  const { balance, sales } = await ledger.balance(id);
  return balance > 0 || sales > 0 || (await ledger.grants(id)).length > 0;
}

export function createAdminRoute(options: AdminRouteOptions): Hono {
  const app = new Hono();
  const known = new Set(options.publishers.map((p) => p.id));
  const token = options.token;
  const checkToken = token
    ? operatorTokenCheck({ token, variable: 'EMI_ADMIN_TOKEN', clientIp: options.clientIp })
    : null;
  const notFound = () => errorResponse(404, 'not_found', 'No such publisher storefront.');

  // nosniff, the API policy and no referrer on every answer, refusals included.
  app.use('/p/:id/admin/*', apiSecurityHeaders);
  app.use('/p/:id/admin/*', async (c, next) => {
    if (!checkToken) return notFound();
    const refused = await checkToken(c);
    if (refused) return refused;
    // Only the operator gets this far: it may learn which publishers the Worker has.
    const id = c.req.param('id') ?? '';
    // A publisher removed from the list keeps its books: its statement, and a withdrawal of its unused credits.
    if (!known.has(id) && !(await hasBooks(options.ledger, id))) {
      return errorResponse(
        404,
        'unknown_publisher',
        `publisher "${id}" is not in this Worker's EMI_PUBLISHERS (configured: ${[...known].join(', ')})`,
      );
    }
    await next();
    c.header('Cache-Control', NO_STORE);
  });

  app.post('/p/:id/admin/credits', async (c) => {
    const request = creditRequestOf(await c.req.json().catch(() => null));
    if (!request) {
      return refuse(
        c,
        400,
        'malformed_body',
        `the body must be {"credits": N, "note"?: text}: N ${CREDITS_RULE}`,
      );
    }
    const id = c.req.param('id');
    if (!known.has(id) && request.credits > 0) {
      return refuse(
        c,
        409,
        'publisher_removed',
        `publisher "${id}" is no longer in this Worker's EMI_PUBLISHERS: its unused credits can be withdrawn ` +
          '(a negative N), none added',
      );
    }
    try {
      return c.json(await options.ledger.credit(id, request.credits, request.note));
    } catch (error) {
      if (error instanceof CreditError) return refuse(c, 409, 'credits_held', error.message);
      throw error;
    }
  });

  app.get('/p/:id/admin/statement', async (c) => {
    const raw = c.req.query('since');
    const since = raw === undefined ? null : sinceTime(raw);
    if (raw !== undefined && !since) {
      return refuse(c, 400, 'invalid_since', `since wants an ISO date or time (e.g. 2026-11-01): ${raw}`);
    }
    const id = c.req.param('id');
    const answer: StatementAnswer = {
      publisher: id,
      since,
      balance: await options.ledger.balance(id),
      sales: await options.ledger.statement(id, since ?? undefined),
      grants: await options.ledger.grants(id, since ?? undefined),
    };
    return c.json(answer);
  });

  // Mounted on the Worker's `/p/` routes, whose fetch the Worker calls itself (Hono's text 500 otherwise).
  app.onError(answerUnhandled("The publishers' admin route could not handle this request."));
  return app;
}
