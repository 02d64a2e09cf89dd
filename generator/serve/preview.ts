// The local preview: the built site on one origin, with the headers a real host would add, the reasoning
// query mapped to its per-asset file, JSON errors, and the four x402 paths handed to the paywall worker.
import { readFile } from 'node:fs/promises';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { TRACKED_ASSETS } from '../../schemas/common.ts';
import { errorResponse, invalidAssetError, notFoundError } from '../../schemas/error.ts';
import type { ErrorResponse } from '../../schemas/error.ts';
import { PAID_RESOURCES, reasoningFileFor } from '../../schemas/resources.ts';
import { contentTypeFor, resolveStaticFile } from './static-files.ts';

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
}

export const DEV_FACILITATOR_PREFIX = '/x402-dev-facilitator';
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** The caller's address as Node saw it (undefined outside Node). */
function remoteAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

// One CORS policy for the whole origin, the same the deploy recipes set (the paywall adds its own on its paths).
const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, PAYMENT-SIGNATURE',
  'Access-Control-Expose-Headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE',
};

function jsonError(c: Context, status: 400 | 404 | 405 | 503, body: ErrorResponse) {
  c.header('Cache-Control', 'no-store');
  return c.json(body, status);
}

const simpleError = errorResponse;

/** `reasoning.php` without a query is the default asset (BTC); with `?asset=X` it is X's own file. */
export function reasoningTarget(asset: string | undefined): { file: string } | { invalid: string } {
  if (asset === undefined) return { file: 'api/reasoning.php' };
  return (TRACKED_ASSETS as readonly string[]).includes(asset)
    ? { file: reasoningFileFor(asset) }
    : { invalid: asset };
}

export function createPreviewApp(options: PreviewOptions): Hono {
  const app = new Hono();

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(COMMON_HEADERS)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  });

  for (const resource of PAID_RESOURCES) {
    app.all(resource.path, (c) =>
      options.paywall
        ? options.paywall.fetch(c.req.raw)
        : jsonError(
            c,
            503,
            simpleError('paywall_unavailable', 'The paywall worker is not running in this preview.'),
          ),
    );
  }

  app.options('*', (c) => c.body(null, 204));

  const { buyerConfig, devFacilitatorUrl } = options;
  if (buyerConfig) {
    app.get('/x402-buyer/config.json', (c) => {
      c.header('Cache-Control', 'no-store');
      return c.json(buyerConfig);
    });
  }
  if (devFacilitatorUrl) {
    const forwardToFacilitator = (path: string) => async (c: Context) => {
      if (!LOOPBACK.test(remoteAddress(c) ?? '')) {
        return jsonError(c, 404, notFoundError());
      }
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

  app.on(['GET', 'HEAD'], '*', async (c) => {
    let relative = c.req.path;
    if (relative === '/api/reasoning.php') {
      const target = reasoningTarget(c.req.query('asset'));
      if ('invalid' in target) return jsonError(c, 400, invalidAssetError());
      relative = `/${target.file}`;
    }
    const file = await resolveStaticFile(options.root, relative);
    if (!file) return jsonError(c, 404, notFoundError());
    c.header('Content-Type', contentTypeFor(file));
    c.header('Cache-Control', 'public, max-age=60');
    if (c.req.method === 'HEAD') return c.body(null);
    return c.body(await readFile(file));
  });

  app.all('*', (c) => {
    c.header('Allow', 'GET, HEAD, OPTIONS');
    return jsonError(c, 405, simpleError('method_not_allowed', 'Only GET, HEAD and OPTIONS are supported.'));
  });

  return app;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** Starts a Hono app on the given host and port (0 picks a free one). */
export function listen(
  app: { fetch: Hono['fetch'] },
  port: number,
  host = '127.0.0.1',
): Promise<RunningServer> {
  return new Promise((resolvePromise, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
      resolvePromise({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
    server.once('error', reject);
  });
}
