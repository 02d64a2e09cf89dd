// The local preview: the built site on one origin, with the headers a real host would add, the reasoning
// query mapped to its per-asset file, JSON errors, and the worker's paths handed to the paywall worker.
import type { Stats } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { errorResponse, notFoundError } from '../../schemas/error.ts';
import {
  BUYER_CONFIG_PATH,
  errorAnswer,
  contentTypeFor,
  fileAgeSeconds,
  fileHeaders,
  isNotModified,
  normalisedRequest,
  notFoundFor,
  paywallDownError,
  preflightAnswer,
  RETRY_AFTER_SECONDS,
  routedPath,
  routeRequest,
  SITE_HEADERS,
} from '../../schemas/delivery.ts';
import { isClientAbort } from '../../paywall-worker/client-abort.ts';
import { logToStderr } from '../../paywall-worker/core/log.ts';
import { describeError } from '../../paywall-worker/facilitator-errors.ts';
import { resolveStaticFile, resolveStaticRequest } from './static-files.ts';
import { validatorsOf } from './validators.ts';

export interface PreviewOptions {
  /** Folder to serve (the Eleventy output, `dist/`). */
  root: string;
  /**
   * Answers every path the policy hands to the worker (paid files, health, votes, `/p/`; `/mcp` is `mcp`'s); without
   * it they answer 503 with a JSON explanation. `env`: Node's bindings (the socket), which the vote route reads the
   * client address from.
   */
  paywall?: { fetch(request: Request, env?: unknown): Response | Promise<Response> };
  /** Served as /x402-buyer/config.json: tells the buyer page whom to pay and whether this is development. */
  buyerConfig?: Record<string, unknown>;
  /**
   * Base URL of the development facilitator. When set, its faucet (POST /dev/fund) and its round parameters
   * (GET /v2/transactions/params) are forwarded under /x402-dev-facilitator/ for loopback callers, so the buyer
   * page can use them from its own origin.
   */
  devFacilitatorUrl?: string;
  /** Answers the MCP streamable HTTP endpoint (`/mcp`, mcp/http.ts); without it `/mcp` is a 404. */
  mcp?: { fetch(request: Request): Response | Promise<Response> };
}

export const DEV_FACILITATOR_PREFIX = '/x402-dev-facilitator';
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** The caller's address as Node saw it (undefined outside Node). */
function remoteAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

export function createPreviewApp(options: PreviewOptions): Hono {
  // Every route below, and whatever a request is handed on to, sees the path as every host routes it
  // (`//api/x402-atlas.php` is the paid path, as nginx reads it).
  const app = new Hono({ getPath: routedPath });

  const { buyerConfig, devFacilitatorUrl } = options;
  if (buyerConfig) {
    app.get(BUYER_CONFIG_PATH, () => Response.json(buyerConfig, { headers: fileHeaders(BUYER_CONFIG_PATH) }));
  }
  if (devFacilitatorUrl) {
    const forwardToFacilitator = (path: string) => async (c: Context) => {
      if (!LOOPBACK.test(remoteAddress(c) ?? '')) return errorAnswer(404, notFoundError());
      const upstream = await fetch(`${devFacilitatorUrl}${path}`, {
        method: c.req.method,
        // The caller's content type is passed on unchanged: the faucet refuses anything but JSON, so that a
        // plain form post from a web page in the developer's browser cannot fund addresses.
        headers: { 'content-type': c.req.header('content-type') ?? 'application/octet-stream' },
        body: c.req.method === 'POST' ? await c.req.text() : undefined,
      });
      return new Response(await upstream.text(), {
        status: upstream.status,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
      });
    };
    app.post(`${DEV_FACILITATOR_PREFIX}/dev/fund`, forwardToFacilitator('/dev/fund'));
    app.get(
      `${DEV_FACILITATOR_PREFIX}/v2/transactions/params`,
      forwardToFacilitator('/v2/transactions/params'),
    );
  }

  const { mcp } = options;
  if (mcp) app.all('/mcp', (c) => mcp.fetch(normalisedRequest(c.req.raw)));

  // Everything else follows the delivery policy, as every deploy recipe does. The development facilitator's
  // routes above carry no CORS headers on purpose: no other origin may reach its faucet.
  app.all('*', async (c) => {
    const route = routeRequest(c.req.method, c.req.path, c.req.query('asset'));
    switch (route.kind) {
      case 'preflight':
        return preflightAnswer(route.path);
      case 'paid':
        return options.paywall ? options.paywall.fetch(normalisedRequest(c.req.raw), c.env) : paywallDown();
      case 'error':
        return errorAnswer(route.status, route.body);
      case 'file':
        return serveFile(options.root, route.path, c.req.raw);
    }
  });

  // Hono's default answers text and prints a stack trace: a client that hung up mid-body is no error at all, and
  // anything else is one JSON line on stderr and a JSON 500 in the errors module's shape.
  app.onError((error, c) => {
    if (isClientAbort(error)) {
      return errorAnswer(400, errorResponse('bad_request', 'The request ended before its body did.'));
    }
    logToStderr({
      level: 'error',
      event: 'unhandled',
      method: c.req.method,
      path: c.req.path,
      detail: describeError(error),
    });
    return errorAnswer(
      500,
      errorResponse('internal_error', 'The preview server could not handle this request.'),
    );
  });

  return app;
}

/** A paid path while no paywall answers: 503 with Retry-After, as the nginx recipe answers it. */
function paywallDown(): Response {
  const answer = errorAnswer(503, paywallDownError());
  answer.headers.set('Retry-After', String(RETRY_AFTER_SECONDS));
  return answer;
}

/** The page every host sends with a missing file's 404 (what `notFoundFor` names outside the API folders). */
const NOT_FOUND_PAGE: Extract<ReturnType<typeof notFoundFor>, { page: string }>['page'] = '/404.html';

/** One version of a file, its identity and its bytes read through the same handle (a rename between them is moot). */
async function readVersion(
  file: string,
  headOnly: boolean,
): Promise<{ info: Stats; body: Uint8Array<ArrayBuffer> | null } | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch {
    return null; // gone since it was found: answered as missing
  }
  try {
    const info = await handle.stat();
    return { info, body: headOnly ? null : await readFile(handle) };
  } finally {
    await handle.close();
  }
}

async function serveFile(root: string, path: string, request: Request): Promise<Response> {
  const headOnly = request.method === 'HEAD';
  const found = await resolveStaticRequest(root, path, new URL(request.url).search);
  // A folder without its trailing slash: its page's relative links would resolve one folder too high.
  if (found?.kind === 'redirect')
    return new Response(null, { status: 301, headers: { ...SITE_HEADERS, Location: found.location } });
  // The 404 page asked for by its own name is answered as what it stands for, a missing file, with a 404.
  const file = found && found.file !== join(root, NOT_FOUND_PAGE) ? found.file : null;
  const version = file ? await readVersion(file, headOnly) : null;
  if (file && version) {
    const validators = validatorsOf(version.info);
    // A free file's cache lifetime runs from when it was written, as nginx counts it (`freeCacheFor`).
    const age = fileAgeSeconds(version.info.mtimeMs, Date.now());
    const headers: Record<string, string> = {
      ...fileHeaders(path, contentTypeFor(file), age),
      ETag: validators.etag,
      'Last-Modified': validators.lastModified,
    };
    const conditional = {
      ifNoneMatch: request.headers.get('if-none-match'),
      ifModifiedSince: request.headers.get('if-modified-since'),
    };
    if (isNotModified(conditional, validators)) {
      // What a cache needs to refresh its copy (RFC 9110 15.4.5), and the site's headers; no representation type.
      const { 'Content-Type': _type, ...kept } = headers;
      return new Response(null, { status: 304, headers: kept });
    }
    return new Response(version.body, { headers: { ...headers, ...lengthOf(version) } });
  }
  const missing = notFoundFor(path);
  if ('json' in missing) return errorAnswer(404, missing.json);
  const pageFile = await resolveStaticFile(root, missing.page);
  const page = pageFile ? await readVersion(pageFile, headOnly) : null;
  return page
    ? new Response(page.body, { status: 404, headers: { ...fileHeaders(missing.page), ...lengthOf(page) } })
    : errorAnswer(404, notFoundError());
}

/** The body's length, which a HEAD is told too (it has no body to count), as nginx tells it. */
const lengthOf = (version: { info: Stats; body: Uint8Array | null }): { 'Content-Length': string } => ({
  'Content-Length': String(version.body?.byteLength ?? version.info.size),
});
