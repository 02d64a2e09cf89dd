// The local preview: the built site on one origin, with the headers a real host would add, the reasoning
// query mapped to its per-asset file, JSON errors, and the four x402 paths handed to the paywall worker.
import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { notFoundError } from '../../schemas/error.ts';
import {
  errorAnswer,
  contentTypeFor,
  fileHeaders,
  NO_STORE,
  notFoundFor,
  paywallDownError,
  preflightAnswer,
  routeRequest,
  SITE_HEADERS,
} from '../../schemas/delivery.ts';
import { resolveStaticFile, resolveStaticRequest } from './static-files.ts';

export interface PreviewOptions {
  /** Folder to serve (the Eleventy output, `dist/`). */
  root: string;
  /** Handles the four x402 paths; without it they answer 503 with a JSON explanation. */
  paywall?: { fetch(request: Request): Response | Promise<Response> };
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
  const app = new Hono();

  const { buyerConfig, devFacilitatorUrl } = options;
  if (buyerConfig) {
    app.get('/x402-buyer/config.json', () =>
      Response.json(buyerConfig, { headers: { ...fileHeaders('/config.json'), 'Cache-Control': NO_STORE } }),
    );
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
  if (mcp) app.all('/mcp', (c) => mcp.fetch(c.req.raw));

  // Everything else follows the delivery policy, as every deploy recipe does. The development facilitator's
  // routes above carry no CORS headers on purpose: no other origin may reach its faucet.
  app.all('*', async (c) => {
    const route = routeRequest(c.req.method, c.req.path, c.req.query('asset'));
    switch (route.kind) {
      case 'preflight':
        return preflightAnswer();
      case 'paid':
        return options.paywall ? options.paywall.fetch(c.req.raw) : errorAnswer(503, paywallDownError());
      case 'error':
        return errorAnswer(route.status, route.body);
      case 'file':
        return serveFile(options.root, route.path, c.req.method === 'HEAD', new URL(c.req.url).search);
    }
  });

  return app;
}

async function serveFile(root: string, path: string, headOnly: boolean, search: string): Promise<Response> {
  const found = await resolveStaticRequest(root, path, search);
  // A folder without its trailing slash: its page's relative links would resolve one folder too high.
  if (found?.kind === 'redirect')
    return new Response(null, { status: 301, headers: { ...SITE_HEADERS, Location: found.location } });
  const file = found?.file;
  if (file)
    return new Response(headOnly ? null : await readFile(file), {
      headers: fileHeaders(path, contentTypeFor(file)),
    });
  const missing = notFoundFor(path);
  if ('json' in missing) return errorAnswer(404, missing.json);
  const page = await resolveStaticFile(root, missing.page);
  return page
    ? new Response(headOnly ? null : await readFile(page), {
        status: 404,
        headers: fileHeaders(missing.page),
      })
    : errorAnswer(404, notFoundError());
}
