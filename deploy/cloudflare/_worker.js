// Cloudflare Pages, advanced mode: copy into dist/ next to _headers after `emi build` (see deploy/README.md).
// Pages redirects cannot match query strings or proxy elsewhere, so this worker does the three things a static
// host cannot: reasoning.php?asset=X -> /api/reasoning/X.json (JSON 400 for an unknown asset), the four x402
// paths -> the paywall worker (env.PAYWALL_ORIGIN), and JSON 404s under /api/ and /arena/. Everything else is
// the static site (env.ASSETS). The lists below must match schemas/common.ts and schemas/resources.ts; a test
// (test/deploy-static-hosts.test.ts) checks that they do.

export const TRACKED_ASSETS = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR'];
export const PAID_PATHS = [
  '/api/x402-market-regime.php',
  '/api/x402-main-brain.php',
  '/api/x402-atlas.php',
  '/api/x402-atlas-human-report.php',
];
const NEVER_CACHED = ['/api/x402-atlas.php', '/api/x402-atlas-human-report.php'];

export const INVALID_ASSET = {
  success: false,
  error: 'invalid_asset',
  message: `Unknown asset. Use one of ${TRACKED_ASSETS.join(', ')}; without the parameter the default is BTC.`,
  allowed_values: TRACKED_ASSETS,
};
export const NOT_FOUND = {
  success: false,
  error: 'not_found',
  message: 'No resource at this path. The list of endpoints is at /openapi.json and /llms.txt.',
};
const PAYWALL_DOWN = {
  success: false,
  error: 'paywall_unavailable',
  message: 'The payment service is not reachable right now. Nothing was charged; try again shortly.',
};

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'PAYMENT-SIGNATURE, Content-Type',
  'Access-Control-Expose-Headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE',
};

const isApiPath = (path) => path.startsWith('/api/') || path.startsWith('/arena/');

/** Copies a response with the site's CORS headers (replacing any others) and the given extra headers. */
function withHeaders(response, extra = {}) {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries({ ...CORS, ...extra })) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

const json = (status, body) =>
  withHeaders(new Response(JSON.stringify(body), { status }), {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });

async function serveStatic(request, env, path) {
  const response = await env.ASSETS.fetch(new Request(new URL(path, request.url), request));
  if (response.status === 404 && isApiPath(new URL(request.url).pathname)) return json(404, NOT_FOUND);
  if (!response.ok || !isApiPath(path)) return withHeaders(response);
  return withHeaders(response, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'public, max-age=60',
  });
}

async function proxyToPaywall(request, env, url) {
  if (!env.PAYWALL_ORIGIN) return json(503, PAYWALL_DOWN);
  try {
    const upstream = await fetch(
      new Request(new URL(url.pathname + url.search, env.PAYWALL_ORIGIN), request),
    );
    return withHeaders(
      upstream,
      NEVER_CACHED.includes(url.pathname) ? { 'Cache-Control': 'no-store, max-age=0' } : {},
    );
  } catch {
    return json(503, PAYWALL_DOWN);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method === 'OPTIONS') return withHeaders(new Response(null, { status: 204 }));
    if (PAID_PATHS.includes(url.pathname)) return proxyToPaywall(request, env, url);
    if (url.pathname === '/api/reasoning.php') {
      if (!url.searchParams.has('asset')) return serveStatic(request, env, url.pathname); // the default asset
      const asset = url.searchParams.get('asset');
      if (!TRACKED_ASSETS.includes(asset)) return json(400, INVALID_ASSET);
      return serveStatic(request, env, `/api/reasoning/${asset}.json`);
    }
    return serveStatic(request, env, url.pathname);
  },
};
