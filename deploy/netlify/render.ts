// Renders Netlify's `_headers` and `_redirects` from the delivery policy (schemas/delivery.ts). The committed
// files in deploy/netlify/ are this output (`npm run render:deploy` writes them, a test checks they agree).
// Netlify serves the static site; the four x402 paths are proxied to a paywall worker running elsewhere (the
// Cloudflare Worker or `emi paywall` on Node), named by PAYWALL_ORIGIN.
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import {
  BUYER_CONFIG_PATH,
  CORS_HEADERS,
  ENTRY_SCRIPTS,
  FREE_PATHS,
  HASHED_CHUNK_FOLDERS,
  IMMUTABLE_CACHE,
  REVALIDATE_CACHE,
  JSON_TYPE,
  NO_STORE,
  errorAnswerHeaders,
  PUBLISHER_PREFIX,
  STATUS_PATH,
  WORKER_PATHS,
  REASONING_PATH,
  SITE_HEADERS,
  freeCacheFor,
} from '../../schemas/delivery.ts';
import { invalidAssetError } from '../../schemas/error.ts';
import { reasoningFileFor } from '../../schemas/resources.ts';

export const PAYWALL_ORIGIN_PLACEHOLDER = 'PAYWALL_ORIGIN';
/** Written by `emi build` (generator/site): the JSON error bodies of the policy as static files. */
export const NOT_FOUND_FILE = '/errors/not-found.json';

const block = (path: string, headers: Readonly<Record<string, string>>): string =>
  [path, ...Object.entries(headers).map(([name, value]) => `  ${name}: ${value}`)].join('\n');

/** The buyer page's chunk folder: every file in it is a hashed chunk (no entry script shares it). */
const BUYER_CHUNK_FOLDER = HASHED_CHUNK_FOLDERS[0];

const INVALID_ASSET_FUNCTION = '/.netlify/functions/invalid-asset';

/**
 * netlify/functions/invalid-asset.mjs: a self-contained Netlify Function for reasoning.php?asset= values the static
 * rules do not list. A tracked asset in another case (`Eth`) is redirected to its upper-case spelling, which the
 * rules serve (the policy reads `asset` in any case); anything else gets the policy's JSON 400.
 */
export function renderInvalidAssetFunction(): string {
  return [
    '// Rendered from schemas/delivery.ts by `npm run render:deploy`: do not edit. reasoning.php?asset= with a value',
    '// the static rules do not list (Netlify Functions v2): a tracked asset in another case is redirected to its',
    "// upper-case spelling, any other value gets the delivery policy's JSON 400.",
    `const ASSETS = ${JSON.stringify(TRACKED_ASSETS)};`,
    `const BODY = ${JSON.stringify(invalidAssetError())};`,
    `const HEADERS = ${JSON.stringify(errorAnswerHeaders(400))};`,
    `const CORS = ${JSON.stringify(CORS_HEADERS)};`,
    '',
    'export default (request) => {',
    "  const asset = (new URL(request.url).searchParams.get('asset') ?? '').toUpperCase();",
    '  if (ASSETS.includes(asset)) {',
    `    const location = \`${REASONING_PATH}?asset=\${asset}\`;`,
    "    return new Response(null, { status: 301, headers: { ...CORS, Location: location, 'Cache-Control': 'no-store' } });",
    '  }',
    '  return new Response(JSON.stringify(BODY), { status: 400, headers: HEADERS });',
    '};',
    '',
  ].join('\n');
}

/**
 * A rule here cannot know when a file was published (Netlify sends no age of the deploy's files to a rule): the free
 * files are revalidated (ETag) at every use rather than cached past the next file's due time (`freeCacheFor`).
 */
const FREE_CACHE_UNKNOWN_AGE = freeCacheFor(null);

export function renderNetlifyHeaders(): string {
  const freeJson = { 'Content-Type': JSON_TYPE, 'Cache-Control': FREE_CACHE_UNKNOWN_AGE };
  return [
    '# Rendered from schemas/delivery.ts by `npm run render:deploy`: do not edit. Copy into dist/ after `emi build`.',
    block('/*', SITE_HEADERS),
    '',
    '# The free endpoints, listed one by one and never as /api/*, so that no cache rule can reach a paid path. No rule',
    "# can know a file's age, so they are revalidated (ETag) at every use, never served past the next file's due time.",
    ...FREE_PATHS.map((path) => `${block(path, freeJson)}\n`),
    block('/api/reasoning/*', freeJson),
    '',
    '# History day files, latest and index (JSON and CSV twins: Netlify types them by extension).',
    block('/api/history/*', { 'Cache-Control': FREE_CACHE_UNKNOWN_AGE }),
    '',
    block('/errors/*', { 'Content-Type': JSON_TYPE, 'Cache-Control': NO_STORE }),
    '',
    block(STATUS_PATH, { 'Content-Type': JSON_TYPE, 'Cache-Control': NO_STORE }),
    '',
    "# The buyer page's settings (whom it pays): never stored, so that a changed payee is seen at once.",
    block(BUYER_CONFIG_PATH, { 'Cache-Control': NO_STORE }),
    '',
    "# The browser programs: their entry scripts revalidated every time, the buyer page's chunks (the folder holds",
    "# nothing else, each name carries its content hash) kept for a year. The vote form's chunks share their folder",
    "# with its entry script, which a Netlify path cannot tell apart: they keep Netlify's default (revalidated).",
    ...ENTRY_SCRIPTS.map((path) => `${block(path, { 'Cache-Control': REVALIDATE_CACHE })}\n`),
    block(`${BUYER_CHUNK_FOLDER}*`, { 'Cache-Control': IMMUTABLE_CACHE }),
    '',
  ].join('\n');
}

export function renderNetlifyRedirects(): string {
  // Query values are matched as written: the upper- and lower-case spellings of each asset are listed (other
  // mixed spellings get the JSON 400, which lists the allowed values).
  const spellings = TRACKED_ASSETS.flatMap((asset) => [asset, asset.toLowerCase()].map((s) => [s, asset]));
  return [
    '# Rendered from schemas/delivery.ts by `npm run render:deploy`: do not edit. Copy into dist/ after `emi build`',
    `# and replace ${PAYWALL_ORIGIN_PLACEHOLDER} with the paywall worker's origin. The first matching rule wins.`,
    '',
    '# reasoning.php?asset=X -> the per-asset file. Forced (200!): reasoning.php exists and would shadow the rule.',
    ...spellings.map(
      ([spelling, asset]) => `${REASONING_PATH}  asset=${spelling}  /${reasoningFileFor(asset!)}  200!`,
    ),
    '# Any other asset value: the JSON 400 with the allowed values, from a function (a static `400!` rule is',
    '# answered as a redirect by `netlify dev`).',
    `${REASONING_PATH}  asset=:other  ${INVALID_ASSET_FUNCTION}  200!`,
    '',
    '# The four x402 products and the health check: proxied to the paywall worker (402 or the paid body, no-store).',
    `${PUBLISHER_PREFIX}*  ${PAYWALL_ORIGIN_PLACEHOLDER}${PUBLISHER_PREFIX}:splat  200!`,
    ...WORKER_PATHS.map((path) => `${path}  ${PAYWALL_ORIGIN_PLACEHOLDER}${path}  200!`),
    '',
    '# Missing API files answer the JSON 404; the docs pages fall back to 404.html.',
    `/api/*  ${NOT_FOUND_FILE}  404`,
    `/arena/*  ${NOT_FOUND_FILE}  404`,
    '',
  ].join('\n');
}
