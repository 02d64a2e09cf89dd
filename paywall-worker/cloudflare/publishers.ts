// The publisher programme on the Cloudflare Worker: publishers from the EMI_PUBLISHERS variable, checked by the same
// schema as the config file's `publishers`; credits in one Durable Object per publisher; and `/p/<id>/` answered by
// the same sale points, credit hooks, storefront and admin route as on Node. A bad entry cannot stop a Worker the
// way it stops `emi serve`, so it closes the programme instead: every `/p/` request answers a JSON 500 naming the
// publisher and the field (logged), while the operator's own paths keep selling.
import { Hono } from 'hono';
import { ALGORAND_MAINNET } from '../../schemas/paid/terms.ts';
import { errorResponse, logToStderr } from '../app.ts';
import { workerClientIp } from '../arena-vote/client-ip.ts';
import type { SaleHooks } from '../core/decide.ts';
import type { SalePoint } from '../offers.ts';
import { createAdminRoute } from '../publishers/admin-route.ts';
import { PublisherConfigError, parsePublishers } from '../publishers/config.ts';
import type { Publisher } from '../publishers/config.ts';
import type { CreditLedger } from '../publishers/credit-ledger.ts';
import { PublisherOptInError, checkPublisherOptIns } from '../publishers/opt-in.ts';
import { creditHooks, publisherSalePoints } from '../publishers/sale-points.ts';
import { createStorefront } from '../publishers/storefront.ts';

type Env = Readonly<Record<string, unknown>>;
interface Assets {
  fetch(request: Request): Promise<Response>;
}

/** Gives the credit ledger of the configured publishers (the PUBLISHER_CREDITS Durable Objects in production). */
export type LedgerFor = (env: Env, publisherIds: readonly string[]) => CreditLedger;

/**
 * EMI_PUBLISHERS: a JSON list of publishers (or a config file's whole JSON, `{"publishers": [...]}`), as a string
 * variable or secret, or as a structured `[vars]` value. Throws PublisherConfigError (one line).
 */
export function publishersFromEnv(env: Env, operatorPayTo: string): Publisher[] {
  let raw = env.EMI_PUBLISHERS;
  if (raw === undefined || raw === '') return [];
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new PublisherConfigError('EMI_PUBLISHERS is not valid JSON (a list of publishers)');
    }
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'publishers' in raw) {
    raw = (raw as { publishers: unknown }).publishers;
  }
  return parsePublishers(raw, operatorPayTo);
}

export interface WorkerProgramme {
  publishers: Publisher[];
  ledger: CreditLedger | null;
  /** Why `/p/` cannot sell (a bad entry, no ledger binding); null when it can. */
  problem: string | null;
  /** For the paywall app: the publishers' sale points and the credit hooks (none when there is a problem). */
  salePoints: SalePoint[];
  hooks?: SaleHooks;
}

function ledgerOrNull(env: Env, ledgerFor: LedgerFor): CreditLedger | null {
  try {
    return ledgerFor(env, []);
  } catch {
    return null;
  }
}

/** Reads the programme once per isolate; never throws (a problem closes `/p/` and is logged). */
export function programmeFromEnv(env: Env, operatorPayTo: string, ledgerFor: LedgerFor): WorkerProgramme {
  try {
    const publishers = publishersFromEnv(env, operatorPayTo);
    // No storefront sells, but the ledger keeps the books of publishers removed from the list: the admin route
    // still gives their statements and withdrawals (a Worker without the binding has none to give).
    if (publishers.length === 0)
      return { publishers, ledger: ledgerOrNull(env, ledgerFor), problem: null, salePoints: [] };
    const ledger = ledgerFor(
      env,
      publishers.map((p) => p.id),
    );
    return {
      publishers,
      ledger,
      problem: null,
      salePoints: publisherSalePoints(publishers),
      hooks: creditHooks(publishers, ledger, logToStderr),
    };
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    logToStderr({ level: 'error', event: 'publishers_misconfigured', detail: problem });
    return { publishers: [], ledger: null, problem, salePoints: [] };
  }
}

/** The operator's own buyer config.json (network, algod, mode) from the static assets; the payee is replaced. */
async function operatorBuyerConfig(assets: Assets, origin: string): Promise<Record<string, unknown>> {
  const fallback = { network: ALGORAND_MAINNET, facilitatorMode: 'production' };
  const response = await assets.fetch(new Request(new URL('/x402-buyer/config.json', origin)));
  if (!response.ok) return fallback;
  const config = (await response.json().catch(() => null)) as unknown;
  return typeof config === 'object' && config !== null && !Array.isArray(config)
    ? (config as Record<string, unknown>)
    : fallback;
}

/** A file of the built buyer page from the static assets (the asset server answers the folder for index.html). */
const assetReader =
  (assets: Assets, origin: string) =>
  async (name: string): Promise<Uint8Array | null> => {
    const path = name === 'index.html' ? '/x402-buyer/' : `/x402-buyer/${name}`;
    const response = await assets.fetch(new Request(new URL(path, origin)));
    return response.ok ? new Uint8Array(await response.arrayBuffer()) : null;
  };

/**
 * The answer while a publisher's opt-in is not shown: the log names the algod asked (its origin only), the answer
 * none (hosted algod services put their token in the URL). An algod that could not answer is a passing state, 503
 * `payee_unchecked`; an address that has not opted in is the entry's mistake, 500 `publishers_misconfigured`.
 */
function optInRefusal(error: unknown): Response {
  const refused = error instanceof PublisherOptInError ? error : null;
  const detail = error instanceof Error ? error.message : String(error);
  const event = refused?.unchecked ? 'payee_unchecked' : 'publishers_misconfigured';
  logToStderr({ level: 'error', event, detail });
  const message = refused?.problem.message ?? "A publisher's payee could not be checked.";
  return refused?.unchecked
    ? errorResponse(503, 'payee_unchecked', message)
    : errorResponse(500, 'publishers_misconfigured', message);
}

const isAdminPath = (path: string): boolean => /^\/p\/[^/]+\/admin\//.test(path);

export interface PublisherRoutesOptions {
  programme: WorkerProgramme;
  env: Env & { ASSETS: Assets };
  /** The paywall app holding the publishers' sale points. */
  paywall: { fetch(request: Request): Response | Promise<Response> };
  origin: string;
}

/** The `/p/` answer: admin route, branded storefront, then the paywall's sale points (JSON 404 for the rest). */
export function publisherRoutes(options: PublisherRoutesOptions): (request: Request) => Promise<Response> {
  const { programme, env, paywall, origin } = options;
  const text = (name: string) => (typeof env[name] === 'string' && env[name] ? env[name] : undefined);
  const algodUrl = text('EMI_ALGOD_URL');
  let optIns: Promise<void> | null = null;
  let app: Promise<Hono> | null = null;

  const build = async (): Promise<Hono> => {
    const routes = new Hono();
    if (programme.ledger) {
      const token = text('EMI_ADMIN_TOKEN');
      // Wrong tokens count per CF-Connecting-IP, which Cloudflare's edge sets.
      const admin = { publishers: programme.publishers, ledger: programme.ledger, clientIp: workerClientIp };
      routes.route('/', createAdminRoute({ ...admin, ...(token ? { token } : {}) }));
    }
    routes.route(
      '/',
      createStorefront({
        publishers: programme.publishers,
        buyerConfig: await operatorBuyerConfig(env.ASSETS, origin),
        readBuyerFile: assetReader(env.ASSETS, origin),
      }),
    );
    routes.all('*', (c) => paywall.fetch(c.req.raw));
    return routes;
  };

  return async (request) => {
    if (programme.problem) return errorResponse(500, 'publishers_misconfigured', programme.problem);
    // The USDC opt-in of each publisher's address, where an algod API is configured: checked once per isolate
    // before the first sale (a payment to an address without it fails at settlement, after the buyer signed).
    if (algodUrl && programme.publishers.length > 0 && !isAdminPath(new URL(request.url).pathname)) {
      optIns ??= checkPublisherOptIns(programme.publishers, {
        algodUrl,
        algodToken: text('EMI_ALGOD_TOKEN'),
      });
      try {
        await optIns;
      } catch (error) {
        optIns = null; // asked again at the next request
        return optInRefusal(error);
      }
    }
    app ??= build().catch((error: unknown) => {
      app = null;
      throw error;
    });
    return (await app).fetch(request);
  };
}
