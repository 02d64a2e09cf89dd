// The delivery policy: how every host answers a request for the published site, declared once. The preview server
// and the Cloudflare worker route with `routeRequest`; the nginx, Netlify and Cloudflare rule files are rendered
// from the same constants (scripts/render-deploy.ts), and the tests check each rendered file against them.
import { CACHE_SECONDS, TRACKED_ASSETS } from './common.ts';
import { errorResponse, invalidAssetError, notFoundError } from './error.ts';
import type { ErrorResponse } from './error.ts';
import { FREE_RESOURCES, PAID_RESOURCES, reasoningFileFor } from './resources.ts';

export const PAID_PATHS: readonly string[] = PAID_RESOURCES.map((r) => r.path);
export const FREE_PATHS: readonly string[] = FREE_RESOURCES.map((r) => r.path);
export const REASONING_PATH = '/api/reasoning.php';
/** The paywall worker's health check (paid files for sale? facilitator answers?), routed to the worker. */
export const HEALTH_PATH = '/x402/health';
/** Wallet-signed arena votes (POST), answered by the worker where a vote store is configured. */
export const VOTE_PATH = '/arena/vote';
/** Accepted votes for the generator's import (bearer token), on the worker. */
export const VOTE_EXPORT_PATH = '/arena/votes/export';
/** The MCP server's streamable HTTP endpoint (free tools, history, x402 paid tools), on the worker. */
export const MCP_PATH = '/mcp';
/** The last run's status (status, data mode, age, sources), written by the generator with the site. */
export const STATUS_PATH = '/status.json';
/** Paths every host hands to the paywall worker. */
export const WORKER_PATHS: readonly string[] = [
  ...PAID_PATHS,
  HEALTH_PATH,
  VOTE_PATH,
  VOTE_EXPORT_PATH,
  MCP_PATH,
];
/** Publishers' storefronts and paid paths (`/p/<id>/...`): the worker answers them too. */
export const PUBLISHER_PREFIX = '/p/';
/** Folders whose missing files answer the JSON 404 (the docs pages keep the HTML 404 page). */
export const API_PREFIXES = ['/api/', '/arena/'] as const;

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
/** What the paths served by POST alone take (the votes, MCP, a publisher's admin credits): GET there is refused. */
export const POST_METHODS = 'POST, OPTIONS';
/** A publisher's admin credits (`/p/<id>/admin/credits`), on the worker; a regular expression source, anchored. */
export const PUBLISHER_CREDITS_PATTERN = '^/p/[^/]+/admin/credits$';
const PUBLISHER_CREDITS = new RegExp(PUBLISHER_CREDITS_PATTERN);
/** The paths that answer POST; every other path answers GET and HEAD only (the 405 of the policy or the worker). */
export const POST_PATHS: readonly string[] = [VOTE_PATH, MCP_PATH];
const takesPost = (path: string): boolean => POST_PATHS.includes(path) || PUBLISHER_CREDITS.test(path);
/**
 * What a preflight at `path` allows: only what the path answers, so that a browser is not told a POST would be
 * taken where it gets a 405.
 */
export const preflightMethodsFor = (path: string): string =>
  takesPost(path) ? POST_METHODS : ALLOWED_METHODS;
/**
 * Every request header the official clients send: x402's v2 and v1 payments and what `@x402/fetch` adds, and the
 * MCP streamable HTTP client's (a browser agent on another origin posts to `/mcp`).
 */
export const ALLOWED_REQUEST_HEADERS =
  'PAYMENT-SIGNATURE, X-PAYMENT, Access-Control-Expose-Headers, Content-Type, Accept, Mcp-Session-Id, ' +
  'Mcp-Protocol-Version, Last-Event-ID';
export const EXPOSED_HEADERS = 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, Mcp-Session-Id, Mcp-Protocol-Version';

/** On every answer, whatever its status. */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED_HEADERS,
};
/**
 * The site's Content-Security-Policy, one for every page (README "Decisions"). Scripts come only from the site
 * itself: no inline script, no inline handler, no eval. Styles also allow inline `style` (the API reference and
 * the wallet connect dialogs inject style elements; charts and storefront branding use style attributes) and the
 * Google Fonts stylesheet the wallet dialogs link. `connect-src` allows any https/wss origin: Pera and Defly choose
 * their WalletConnect bridge servers at run time from files they fetch, and the operator names the algod node in
 * the buyer's config.json, so a list of hosts would break payments the day either changes. Images and media from
 * https: a publisher's logo, the wallet dialogs' sounds.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline' https://fonts.googleapis.com",
  "font-src 'self' data: https://fonts.gstatic.com",
  "img-src 'self' data: blob: https:",
  "media-src 'self' https:",
  "connect-src 'self' https: wss:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Also on every answer (a preflight's allow lists are harmless elsewhere and keep one header set per host); a
 * preflight at a path served by POST says `preflightMethodsFor` instead.
 */
export const SITE_HEADERS: Readonly<Record<string, string>> = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': ALLOWED_METHODS,
  'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
};
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

export const JSON_TYPE = 'application/json; charset=utf-8';
/** Errors, 402 challenges and paid bodies: never stored by any cache. */
export const NO_STORE = 'no-store';
/** Seconds a client is asked to wait (`Retry-After`) before trying again after a 503. */
export const RETRY_AFTER_SECONDS = 30;

/** The Content-Security-Policy of a JSON/API answer: no source of any kind, no framing. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";
/**
 * On every JSON/API answer of the worker, on Node and in workerd: nosniff, the API policy and no referrer
 * (paywall-worker/security-headers.ts says why; the site's pages keep CONTENT_SECURITY_POLICY).
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': API_CONTENT_SECURITY_POLICY,
  'Referrer-Policy': 'no-referrer',
};
/**
 * The headers of a JSON answer of the worker's routes (paywall, MCP, votes) and of the Node listener's early errors,
 * the same on every host: CORS, the API security headers, JSON, never stored.
 */
export const API_JSON_HEADERS: Readonly<Record<string, string>> = {
  ...CORS_HEADERS,
  ...API_SECURITY_HEADERS,
  'Content-Type': JSON_TYPE,
  'Cache-Control': NO_STORE,
};

/** The host could not reach the paywall at all: it read no request, so no payment (503). */
export const paywallDownError = (): ErrorResponse =>
  errorResponse(
    'paywall_unavailable',
    'The payment service is not reachable right now. Nothing was charged; try again shortly.',
  );
/**
 * The paywall got the request and gave the host no answer (too slow, or gone mid-request; 502 or 504): a payment
 * it got may have been settled. The same payment sent again is never charged twice (a transaction lands at most
 * once); with its payment-identifier id it collects the body it bought, while one without an id that was already
 * delivered gets 402 `payment_already_used` (README "Paid endpoints and x402").
 */
export const paywallOutcomeUnknownError = (): ErrorResponse =>
  errorResponse(
    'paywall_outcome_unknown',
    'The payment service did not complete its answer, so the outcome is unknown: if you sent a payment, it may ' +
      'have been settled. Send the same payment again (the same PAYMENT-SIGNATURE, with its payment-identifier id) ' +
      'to collect what it bought: it is not charged twice. A payment sent without an id that was already ' +
      'delivered is answered 402 payment_already_used: look its transaction up before paying again.',
  );
export const methodNotAllowedError = (): ErrorResponse =>
  errorResponse('method_not_allowed', `Only ${ALLOWED_METHODS} are supported.`);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  php: JSON_TYPE, // the spec's endpoints are static JSON at .php paths, never executed
  json: JSON_TYPE,
  html: 'text/html; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  yaml: 'application/yaml; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  webmanifest: 'application/manifest+json',
};

/** The content type the policy gives a path's extension; undefined for paths without a known one. */
export const contentTypeFor = (path: string): string | undefined =>
  CONTENT_TYPES[/\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? ''];

export const isApiPath = (path: string): boolean => API_PREFIXES.some((prefix) => path.startsWith(prefix));

/** Files whose name changes with their content: kept for a year, never asked about again. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** Stored, but asked about (ETag) before every use: an entry script whose chunks' names it holds may change. */
export const REVALIDATE_CACHE = 'no-cache';
/**
 * The cache hint of a free API file `ageSeconds` old (whole seconds since it was written, by its modification time):
 * cached until the next file is due, CACHE_SECONDS after this one was published, and revalidated (ETag) after that, so
 * that no cache serves a body much past its `next_update_due` (/docs/freshness/). It is what nginx's
 * `expires modified +60s` sends (max-age counted down to 0, then no-cache), so the nginx recipe needs no script. A host
 * that cannot know the file's age (`null`: the Cloudflare Worker's static assets, Netlify) revalidates every use.
 */
export function freeCacheFor(ageSeconds: number | null): string {
  if (ageSeconds === null) return REVALIDATE_CACHE;
  const left = CACHE_SECONDS - Math.floor(ageSeconds);
  // A modification time ahead of the clock (a copy from a host whose clock runs ahead, a clock stepped back) never
  // buys more than CACHE_SECONDS; nginx's `expires modified` cannot cap it (deploy/README.md says so).
  return left < 0 ? REVALIDATE_CACHE : `max-age=${Math.min(left, CACHE_SECONDS)}`;
}
/** A file's age as nginx counts it: whole seconds of the clock less whole seconds of its modification time. */
export const fileAgeSeconds = (modifiedMs: number, nowMs: number): number =>
  Math.floor(nowMs / 1000) - Math.floor(modifiedMs / 1000);
/** The buyer page's settings (whom it pays): never stored, so that a changed payee is seen at once. */
export const BUYER_CONFIG_PATH = '/x402-buyer/config.json';
/**
 * The chunks of the site's two browser programs, as esbuild names them (generator/buyer/bundle.ts): `[name]-[hash].js`
 * in these folders (nothing else is written there), the hash 8 characters of base32 (A-Z, 2-7). The pattern is a
 * regular expression source, unanchored: the nginx recipe renders it as is.
 */
export const HASHED_CHUNK_FOLDERS = ['/assets/x402-buyer/', '/assets/arena-vote/'] as const;
export const HASHED_CHUNK_PATTERN = `(?:${HASHED_CHUNK_FOLDERS.join('|')})[^/]+-[A-Z2-7]{8}\\.js`;
const HASHED_CHUNK = new RegExp(`^${HASHED_CHUNK_PATTERN}$`);
/** The programs' entry scripts: their names never change, and each names the chunks of its build. */
export const ENTRY_SCRIPTS: readonly string[] = ['/x402-buyer/app.js', '/assets/arena-vote/main.js'];

/**
 * The cache hint of a static file: API files are cached until the next one is due (`freeCacheFor`, by the file's
 * `ageSeconds`, null where the host cannot know it), the run status and the buyer's config never, hashed chunks for a
 * year and the entry scripts revalidated every time (a stale app.js would ask for chunks the next build removed);
 * pages are left to the host.
 */
export function cacheFor(path: string, ageSeconds: number | null = null): string | null {
  if (path === STATUS_PATH || path === BUYER_CONFIG_PATH) return NO_STORE;
  if (isApiPath(path)) return freeCacheFor(ageSeconds);
  if (HASHED_CHUNK.test(path)) return IMMUTABLE_CACHE;
  return ENTRY_SCRIPTS.includes(path) ? REVALIDATE_CACHE : null;
}

/** `asset` is matched case-insensitively (`eth` is ETH); null when it names no tracked asset. */
export function assetFromQuery(value: string): string | null {
  const upper = value.toUpperCase();
  return (TRACKED_ASSETS as readonly string[]).includes(upper) ? upper : null;
}

/** A percent-encoded octet; what routing decodes: RFC 3986's unreserved characters (6.2.2.2) and the slash. */
const ENCODED_OCTET = /%[0-9A-Fa-f]{2}/g;
const DECODED_FOR_ROUTING = /^[A-Za-z0-9\-._~/]$/;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/**
 * RFC 3986's remove_dot_segments (5.2.4) for an absolute path: `.` dropped, `..` dropping the segment before it, never
 * above the root (nginx answers 400 there; this stays on the site, where `/../x` is `/x`).
 */
function removeDotSegments(path: string): string {
  if (!DOT_SEGMENT.test(path)) return path;
  const segments = path.split('/').slice(1);
  const kept: string[] = [];
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '..') kept.pop();
    if (segment === '.' || segment === '..') {
      if (last) kept.push(''); // `/a/b/..` is the folder `/a/`
    } else kept.push(segment);
  });
  return `/${kept.join('/')}`;
}

/**
 * A URL path as every host routes it, whatever the client's spelling, as nginx reads a path before it matches a
 * location: unreserved characters and slashes decoded (`/api/x402%2Datlas.php`, `/api%2Fx402-atlas.php`), repeated
 * slashes merged (`//api/x402-atlas.php`), then the dot segments decoding revealed resolved (`/api/..%2fapi/x.php`
 * is `/api/x.php`; the URL parsers of Node and workerd resolve the plain ones before this). Anything else stays
 * encoded for the file lookup to decode once. A path with no `%` and no `//` is returned as it is (the common case,
 * the 402 challenge's).
 */
export function normalisePath(path: string): string {
  if (!path.includes('%') && !path.includes('//')) return path; // the common case, untouched
  const decoded = path
    .replace(ENCODED_OCTET, (octet) => {
      const char = String.fromCharCode(Number.parseInt(octet.slice(1), 16));
      return DECODED_FOR_ROUTING.test(char) ? char : octet;
    })
    .replace(/\/{2,}/g, '/');
  return path.startsWith('/') ? removeDotSegments(decoded) : decoded;
}

/**
 * The normalised path of a request's URL (a Hono `getPath` for the hosts' apps). Read from the URL string, as Hono's
 * own getPath does: a URL object per request took the 402 challenge from 95 to 89 % of a bare route.
 */
export function routedPath(request: Request): string {
  const { url } = request;
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return '/';
  const query = url.indexOf('?', start);
  const fragment = url.indexOf('#', start);
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return normalisePath(end === -1 ? url.slice(start) : url.slice(start, end));
}

/**
 * The request a host hands on (to the paywall, the votes, MCP, the storefronts): at its normalised path, so that
 * whatever answers it matches the path the host routed. The request itself when its path already is.
 */
export function normalisedRequest(request: Request): Request {
  // Fetch's Request cannot carry CONNECT, TRACE or TRACK (building one throws): such a request is handed on as it
  // came, for what answers it to refuse its method.
  if (/^(?:CONNECT|TRACE|TRACK)$/i.test(request.method)) return request;
  const url = new URL(request.url);
  const path = normalisePath(url.pathname);
  if (path === url.pathname) return request;
  url.pathname = path;
  return new Request(url, request);
}

/** The opaque tags of an If-None-Match list, weak ones included (`W/"x"` compares as `"x"`). */
const opaqueTagsOf = (header: string): string[] =>
  [...header.matchAll(/(?:W\/)?("[^"]*")/g)].map((m) => m[1] ?? '');

/**
 * Whether the client's copy of a static file is current (RFC 9110 13.1.2 and 13.1.3, the weak comparison of
 * If-None-Match): then a GET or HEAD is answered 304. If-None-Match, when sent, decides alone; If-Modified-Since
 * counts only when it is exactly the file's Last-Modified (nginx's default `if_modified_since exact`), and not at all
 * for a file sent without one. Never for the paid paths, which are the paywall's.
 */
export function isNotModified(
  request: { ifNoneMatch?: string | null; ifModifiedSince?: string | null },
  validators: { etag: string; lastModified?: string | null },
): boolean {
  const { ifNoneMatch, ifModifiedSince } = request;
  if (ifNoneMatch !== undefined && ifNoneMatch !== null) {
    const current = validators.etag.replace(/^W\//, '');
    return ifNoneMatch.trim() === '*' || opaqueTagsOf(ifNoneMatch).includes(current);
  }
  if (!ifModifiedSince || !validators.lastModified) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && since === Date.parse(validators.lastModified);
}

export type DeliveryRoute =
  /** A CORS preflight (OPTIONS) at `path`: answered by the host itself, allowing what `path` answers. */
  | { kind: 'preflight'; path: string }
  /** A path the paywall worker answers (WORKER_PATHS: the paid files, its health check, the votes, MCP; and `/p/`). */
  | { kind: 'paid'; path: string }
  /** A static file of the built site (`path` is the URL path of the file to serve). */
  | { kind: 'file'; path: string }
  | { kind: 'error'; status: 400 | 404 | 405; body: ErrorResponse };

/**
 * Where a request goes. `asset` is the `asset` query parameter (undefined when absent). A `file` route whose file
 * does not exist answers `notFoundFor(path)`.
 */
export function routeRequest(method: string, path: string, asset: string | undefined): DeliveryRoute {
  if (method === 'OPTIONS') return { kind: 'preflight', path };
  if (WORKER_PATHS.includes(path) || path.startsWith(PUBLISHER_PREFIX)) return { kind: 'paid', path };
  if (method !== 'GET' && method !== 'HEAD')
    return { kind: 'error', status: 405, body: methodNotAllowedError() };
  if (path === REASONING_PATH && asset !== undefined) {
    const tracked = assetFromQuery(asset);
    if (!tracked) return { kind: 'error', status: 400, body: invalidAssetError() };
    return { kind: 'file', path: `/${reasoningFileFor(tracked)}` };
  }
  return { kind: 'file', path };
}

/** A missing file: the JSON 404 under the API folders, the site's HTML 404 page elsewhere. */
export const notFoundFor = (path: string): { json: ErrorResponse } | { page: '/404.html' } =>
  isApiPath(path) ? { json: notFoundError() } : { page: '/404.html' };

/**
 * The headers of a static file served at URL `path`. The policy's type for the path's extension wins (`.php` is
 * JSON); otherwise `servedType`, the type of the file actually sent (a folder's index.html). `ageSeconds`: the file's
 * age where the host knows it (`cacheFor`).
 */
export function fileHeaders(
  path: string,
  servedType?: string | null,
  ageSeconds: number | null = null,
): Record<string, string> {
  const cache = cacheFor(path, ageSeconds);
  return {
    ...SITE_HEADERS,
    'Content-Type': contentTypeFor(path) ?? servedType ?? 'application/octet-stream',
    ...(cache ? { 'Cache-Control': cache } : {}),
  };
}

/** The headers of a JSON error answer of the site (never stored). */
export function errorAnswerHeaders(status: number): Record<string, string> {
  const headers: Record<string, string> = {
    ...SITE_HEADERS,
    'Content-Type': JSON_TYPE,
    'Cache-Control': NO_STORE,
  };
  if (status === 405) headers.Allow = ALLOWED_METHODS;
  return headers;
}

export const errorAnswer = (status: number, body: ErrorResponse): Response =>
  new Response(JSON.stringify(body), { status, headers: errorAnswerHeaders(status) });

/** The answer to a CORS preflight at (routed) `path`. */
export const preflightAnswer = (path: string): Response =>
  new Response(null, {
    status: 204,
    headers: {
      ...SITE_HEADERS,
      'Access-Control-Allow-Methods': preflightMethodsFor(path),
      'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
      'Cache-Control': NO_STORE,
    },
  });
