// The whole site as one Cloudflare Worker: the built dist/ on Workers static assets, routed by the delivery policy
// (the same `routeRequest` as the preview server), and the four x402 paths and the publishers' `/p/` paths answered
// by the paywall core with the paid files in R2 (or KV), the payment book and the publishers' credits in Durable
// Objects. Importable in Node: nothing here needs `cloudflare:workers` (the entry module adds the object classes).
import {
  MCP_PATH,
  PUBLISHER_PREFIX,
  VOTE_EXPORT_PATH,
  VOTE_PATH,
  errorAnswer,
  fileHeaders,
  isNotModified,
  normalisedRequest,
  notFoundFor,
  preflightAnswer,
  routeRequest,
} from '../../schemas/delivery.ts';
import { notFoundError } from '../../schemas/error.ts';
import { createMcpRoute } from '../../mcp/http.ts';
import { createMcpServer, fetchPaidThrough } from '../../mcp/server.ts';
import type { ReadText } from '../../mcp/published.ts';
import type { Hono } from 'hono';
import { createArenaVoteApp } from '../arena-vote/app.ts';
import { workerClientIp } from '../arena-vote/client-ip.ts';
import { durableObjectVoteStore } from '../arena-vote/store-durable-object.ts';
import type { DoNamespace } from '../arena-vote/store-durable-object.ts';
import { createPaywallApp, errorResponse, logToStderr } from '../app.ts';
import type { PaywallApp } from '../app.ts';
import { unhandledAnswer } from '../unhandled.ts';
import type { PayeeGate } from '../core/payee-gate.ts';
import { checkSettings, settingsFromEnv } from '../config.ts';
import { createPayeeGate } from '../core/payee-gate.ts';
import { payeeOptInProblem } from '../opt-in.ts';
import type { PaymentBook } from '../payment-book.ts';
import { programmeFromEnv, publisherRoutes } from './publishers.ts';
import type { LedgerFor } from './publishers.ts';
import { createKvStorage, createR2Storage } from '../storage-cloudflare.ts';
import { etagForEncoding, runtimeCompresses } from './runtime-encoding.ts';
import type { KvNamespaceLike, R2BucketLike } from '../storage-cloudflare.ts';

export interface SiteWorkerEnv {
  /** The Workers static assets binding (the built dist/). */
  ASSETS: { fetch(request: Request): Promise<Response> };
  PAID_FILES?: R2BucketLike;
  PAID_KV?: KvNamespaceLike;
  /** Worker variables and secrets: EMI_PAYTO, EMI_FACILITATOR_URL, EMI_BASE_URL, ... (see settingsFromEnv). */
  [variable: string]: unknown;
}

interface Built {
  paywall: PaywallApp;
  /** The `/p/` answer: storefronts, publishers' sale points and the admin route. */
  publishers(request: Request): Promise<Response>;
}

function buildPaywall(env: SiteWorkerEnv, book: PaymentBook, ledgerFor: LedgerFor, origin: string): Built {
  const storage = env.PAID_FILES
    ? createR2Storage(env.PAID_FILES)
    : env.PAID_KV
      ? createKvStorage(env.PAID_KV)
      : null;
  if (!storage) throw new Error('no paid-file binding: configure PAID_FILES (R2) or PAID_KV (KV)');
  const settings = settingsFromEnv(env);
  checkSettings(settings); // names the variable to mend, as `emi` does
  if (!settings.payTo || !settings.facilitatorUrl) {
    throw new Error(
      'EMI_PAYTO and EMI_FACILITATOR_URL must be set (wrangler.toml [vars] or wrangler secret put)',
    );
  }
  const programme = programmeFromEnv(env, settings.payTo, ledgerFor);
  const paywall = createPaywallApp(
    {
      ...settings,
      payTo: settings.payTo,
      facilitatorUrl: settings.facilitatorUrl,
      baseUrl: settings.baseUrl ?? origin,
      storage,
    },
    {
      paymentBook: book,
      salePoints: programme.salePoints,
      hooks: programme.hooks,
      payee: payeeGate(settings.payTo, settings.network, env),
    },
  );
  return {
    paywall,
    publishers: publisherRoutes({ programme, env, paywall, origin }),
  };
}

/**
 * A Worker has no start to refuse: with EMI_ALGOD_URL, the payee's USDC opt-in is asked at the first paid request of
 * each isolate, and again at the next one until algod shows it, as the publishers' are; until then the operator's
 * paid paths answer 503 instead of a 402 (see createPayeeGate).
 */
function payeeGate(payTo: string, network: string | undefined, env: SiteWorkerEnv): PayeeGate | undefined {
  const text = (name: string) => (typeof env[name] === 'string' && env[name] ? env[name] : undefined);
  const algodUrl = text('EMI_ALGOD_URL');
  if (!algodUrl) return undefined;
  const algodToken = text('EMI_ALGOD_TOKEN');
  return createPayeeGate(
    () => payeeOptInProblem(payTo, { algodUrl, algodToken, network }),
    // The operator's log names the algod asked (its origin); the 503s, health and MCP never name it.
    (detail) => logToStderr({ level: 'error', event: 'payee_opt_in', detail }),
  );
}

/** A path whose last segment has no extension and no trailing slash: on this site, a folder (`/x402-buyer`). */
const isFolderWithoutSlash = (path: string): boolean => path !== '/' && /\/[^/.]+$/.test(path);

/** The request headers the static assets server answers conditionally (304) or in part (206) on: passed on. */
const FORWARDED_HEADERS = ['If-None-Match', 'If-Modified-Since', 'Range', 'If-Range'] as const;
/** What the policy's answer keeps of the assets server's: the validators a cache revalidates with, a range's place. */
const KEPT_HEADERS = ['ETag', 'Last-Modified', 'Content-Range'] as const;
/**
 * The runtime compresses text answers (br, gzip) by the client's Accept-Encoding after the Worker answers: a shared
 * cache must keep one copy per encoding. Not in the policy's file headers: `emi serve` sends files as they are, and
 * nginx says it itself where it compresses (`gzip_vary`).
 */
const VARY_ENCODING = { Vary: 'Accept-Encoding' } as const;

/** The headers of `headers` among `names`, as a record (absent ones left out). */
function pick(headers: Headers, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) picked[name] = value;
  }
  return picked;
}

/** Whether the client already has the version the assets server answered with (its 304, or one it missed). */
function clientHasCurrent(request: Request, asset: Response): boolean {
  if (asset.status === 304) return true; // it matches a lone tag only: a list of tags and `*` are ours to match
  const etag = asset.headers.get('etag');
  if (etag === null) return false;
  const conditional = {
    ifNoneMatch: request.headers.get('if-none-match'),
    ifModifiedSince: request.headers.get('if-modified-since'),
  };
  return isNotModified(conditional, { etag, lastModified: asset.headers.get('last-modified') });
}

/**
 * The client's Accept-Encoding. Not the request's header: the runtime hands the Worker its own (`br, gzip`) and the
 * client's in `cf.clientAcceptEncoding`, by which it compresses the answer (wrangler dev does the same).
 */
function clientAcceptEncoding(request: Request): string | null {
  const { cf } = request as { cf?: { clientAcceptEncoding?: unknown } };
  const sent = cf?.clientAcceptEncoding;
  return typeof sent === 'string' ? sent : request.headers.get('accept-encoding');
}

/** Whether the runtime compresses the answer with `headers` to a client that accepts `acceptEncoding`. */
const compressedFor = (acceptEncoding: string | null, headers: Record<string, string>): boolean =>
  runtimeCompresses(acceptEncoding, headers['Content-Type'] ?? null);

/** A request for a file, and the client's Accept-Encoding (the runtime compresses the answer by it). */
interface Asked {
  request: Request;
  acceptEncoding: string | null;
}

/**
 * The answer carrying `file`'s body (none to a HEAD). One the runtime sends as it is carries the body's length, as
 * nginx and `emi serve` send it, a HEAD's included: the asset server names no length, and workerd sends one only for
 * a body whose length it knows (not the pages'), never for a HEAD, so the body is read to count it. One the runtime
 * compresses carries none: its length is known only once compressed (sent chunked, and the HEAD says nothing).
 */
async function fileAnswer(
  asked: Asked,
  file: Response,
  status: number,
  headers: Record<string, string>,
): Promise<Response> {
  const headOnly = asked.request.method === 'HEAD';
  if (compressedFor(asked.acceptEncoding, headers)) {
    if (headOnly) await file.body?.cancel();
    return new Response(headOnly ? null : file.body, { status, headers });
  }
  const bytes = await file.arrayBuffer();
  return new Response(headOnly ? null : bytes, {
    status,
    headers: { ...headers, 'Content-Length': String(bytes.byteLength) },
  });
}

async function serveAsset(asked: Asked, env: SiteWorkerEnv, path: string): Promise<Response> {
  const { request } = asked;
  const url = new URL(request.url);
  // A HEAD is asked as a GET: its answer's length is the body's (fileAnswer).
  const asset = await env.ASSETS.fetch(
    new Request(new URL(path, url), { headers: pick(request.headers, FORWARDED_HEADERS) }),
  );
  if (asset.status === 404) {
    const missing = notFoundFor(path);
    if ('json' in missing) return errorAnswer(404, missing.json);
    const page = await env.ASSETS.fetch(new Request(new URL(missing.page, url)));
    const headers = { ...fileHeaders(missing.page, page.headers.get('content-type')), ...VARY_ENCODING };
    return fileAnswer(asked, page, 404, headers);
  }
  if (!asset.ok && asset.status !== 304) return asset; // redirects of the asset server pass unchanged
  const type = asset.headers.get('content-type');
  // The site's pages are folders' index.html; the asset server answers a folder asked for without its slash with the
  // page itself, whose relative links (app.js, config.json) would then resolve one folder too high: redirect to the
  // slashed URL as nginx and `emi serve` do.
  if (isFolderWithoutSlash(path) && type?.startsWith('text/html')) {
    await asset.body?.cancel();
    return new Response(null, {
      status: 301,
      headers: {
        ...fileHeaders(`${path}/`, 'text/html'),
        Location: `${path.replace(/^\/+/, '/')}/${url.search}`,
      },
    });
  }
  // The static assets carry no modification time, so a free file's age is unknown here: it is revalidated (its ETag)
  // at every use rather than cached past the next file's due time (schemas/delivery.ts `freeCacheFor`).
  const headers: Record<string, string> = {
    ...fileHeaders(path, type, null),
    ...VARY_ENCODING,
    ...pick(asset.headers, KEPT_HEADERS),
  };
  if (headers.ETag)
    headers.ETag = etagForEncoding(headers.ETag, compressedFor(asked.acceptEncoding, headers));
  if (clientHasCurrent(request, asset)) {
    await asset.body?.cancel();
    // What a cache needs to refresh its copy (RFC 9110 15.4.5), and the site's headers; no representation type.
    const { 'Content-Type': _type, ...kept } = headers;
    return new Response(null, { status: 304, headers: kept });
  }
  return fileAnswer(asked, asset, asset.status, headers);
}

/**
 * The built site as the MCP server reads it, through the static assets binding: a published file, null when it is not
 * there (404), an error when it cannot be read.
 */
export const assetsReader =
  (env: Pick<SiteWorkerEnv, 'ASSETS'>, origin: string): ReadText =>
  async (file) => {
    const response = await env.ASSETS.fetch(new Request(new URL(file, `${origin}/`)));
    if (response.status === 404) return null;
    // Anything else is no answer to "is it published?": an agent must not be told "not published yet" for it.
    if (!response.ok) throw new Error(`the static assets answered HTTP ${response.status} for ${file}`);
    return response.text();
  };

/** The MCP endpoint: free tools read the assets, paid tools go through the paywall app's own rules. */
function mcpAnswer(request: Request, env: SiteWorkerEnv, built: Built, origin: string) {
  const server = () =>
    createMcpServer({
      readText: assetsReader(env, origin),
      fetchPaid: fetchPaidThrough((path, init) => built.paywall.request(path, init)),
      baseUrl: origin,
    });
  return createMcpRoute(server).fetch(request);
}

/**
 * POST /arena/vote (and the generator's export route) with the votes in the ARENA_VOTES Durable Object; null without
 * that binding. Built once per isolate, like the paywall: its rate limiters count in memory across requests.
 */
function buildVoteApp(env: SiteWorkerEnv, origin: string): Hono | null {
  if (!env.ARENA_VOTES) return null;
  const token = typeof env.EMI_VOTE_EXPORT_TOKEN === 'string' ? env.EMI_VOTE_EXPORT_TOKEN : undefined;
  const { baseUrl } = settingsFromEnv(env);
  if (baseUrl !== undefined) checkSettings({ baseUrl }); // names EMI_BASE_URL, as the paywall's check does
  const site = baseUrl === undefined ? origin : new URL(baseUrl).origin;
  const app = createArenaVoteApp({
    store: durableObjectVoteStore(env.ARENA_VOTES as DoNamespace),
    site,
    clientIp: workerClientIp, // CF-Connecting-IP: Cloudflare's edge sets it
    ...(token ? { exportToken: token } : {}),
  });
  // Another method (GET /arena/vote), or the export without its token: the JSON 404 `emi paywall` answers, with
  // CORS, rather than Hono's plain-text one.
  return app.notFound(() => errorResponse(404, 'not_found', 'The paywall serves only the paid paths.'));
}

/** A configuration the worker cannot run with: the 500 naming what to mend (not built, so asked again next time). */
function misconfigured(error: unknown): Response {
  const message = error instanceof Error ? error.message : 'invalid configuration';
  return errorResponse(500, 'paywall_misconfigured', message);
}

const noLedger: LedgerFor = () => {
  throw new Error('no PUBLISHER_CREDITS Durable Object binding (see wrangler.toml)');
};

/**
 * The Worker's fetch handler; `bookFor` gives the payment book and `ledgerFor` the publishers' credit ledger
 * (Durable Objects in production).
 */
export function createSiteWorker(
  bookFor: (env: SiteWorkerEnv) => PaymentBook,
  ledgerFor: LedgerFor = noLedger,
) {
  let built: Built | null = null; // built once per isolate
  let votes: Hono | null | undefined; // likewise (null: no ARENA_VOTES binding)
  return {
    async fetch(incoming: Request, env: SiteWorkerEnv): Promise<Response> {
      try {
        return await answer(incoming, env);
      } catch (error) {
        // What no app caught (the assets binding failing, a value that is not an Error): a logged JSON 500 with
        // CORS rather than the platform's error page, which a browser on another origin cannot even read.
        const path = new URL(incoming.url).pathname;
        return unhandledAnswer(
          error,
          { method: incoming.method, path },
          'The site could not handle this request.',
        );
      }
    },
  };

  async function answer(incoming: Request, env: SiteWorkerEnv): Promise<Response> {
    // Routed, and handed on, at the path every host reads (`//api/x402-atlas.php` is the paid path).
    const request = normalisedRequest(incoming);
    const url = new URL(request.url);
    const route = routeRequest(request.method, url.pathname, url.searchParams.get('asset') ?? undefined);
    switch (route.kind) {
      case 'preflight':
        return preflightAnswer(route.path);
      case 'error':
        return errorAnswer(route.status, route.body);
      case 'file':
        return serveAsset({ request, acceptEncoding: clientAcceptEncoding(incoming) }, env, route.path);
      case 'paid':
        if (route.path === VOTE_PATH || route.path === VOTE_EXPORT_PATH) {
          try {
            if (votes === undefined) votes = buildVoteApp(env, url.origin);
          } catch (error) {
            return misconfigured(error);
          }
          return votes ? votes.fetch(request) : errorAnswer(404, notFoundError());
        }
        try {
          built ??= buildPaywall(env, bookFor(env), ledgerFor, url.origin);
        } catch (error) {
          // A misconfigured worker refuses every paid request rather than take payments it cannot honour.
          return misconfigured(error);
        }
        // The publishers' sales pay the publishers, whose opt-ins publisherRoutes checks.
        if (route.path.startsWith(PUBLISHER_PREFIX)) return built.publishers(request);
        if (route.path === MCP_PATH) return mcpAnswer(request, env, built, url.origin);
        return built.paywall.fetch(request);
    }
  }
}
