// The paywall worker for HTTP: a Hono app on web-standard Request/Response that guards exactly the paid paths.
// The decision (challenge, refuse, upstream failure, serve) is made by the core in `core/decide.ts`; this file only
// wires its dependencies from the configuration (the facilitator client wrapped as facilitator-client.ts says) and
// renders each decision as an HTTP answer, the same on Node and in workerd.
import { Hono } from 'hono';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { ExactAvmScheme } from '@x402/avm/exact/server';
import {
  ALLOWED_METHODS,
  API_JSON_HEADERS,
  HEALTH_PATH,
  RETRY_AFTER_SECONDS,
  preflightAnswer,
  routedPath,
} from '../schemas/delivery.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { resolveConfig } from './config.ts';
import type { PaywallConfig } from './config.ts';
import { createIndexerLookup } from './core/chain-lookup.ts';
import { createPaywallCore, errorBody } from './core/decide.ts';
import type { Decision, ErrorStatus, PaywallLogEntry, SaleHooks } from './core/decide.ts';
import { checkHealth, facilitatorProbe } from './core/health.ts';
import { logToStderr } from './core/log.ts';
import { PaidFileReader } from './core/paid-file.ts';
import type { PayeeGate } from './core/payee-gate.ts';
import { ownSalePoints } from './offers.ts';
import type { SalePoint } from './offers.ts';
import { normalizingClient } from './facilitator-client.ts';
import { MemoryPaymentBook } from './payment-book.ts';
import { unsoldStorefrontMessage } from './publishers/sale-points.ts';
import type { PaymentBook } from './payment-book.ts';
import { answerUnhandled } from './unhandled.ts';

export type { PaywallConfig } from './config.ts';
export { PaywallConfigError } from './config.ts';

/** One JSON line per event on stderr, every level (core/log.ts): each sale, and each settle that may have landed. */
export { logToStderr };

/**
 * On every answer of this app, on Node and in workerd: CORS, JSON, no-store, and nosniff, the API policy and no
 * referrer (API_JSON_HEADERS). Written into each answer rather than added by a middleware: a middleware makes every
 * answer asynchronous and reads the answer's headers back, and the unpaid 402 answers on Hono's synchronous path
 * (README "Decisions"; about a fifth of its throughput on Node, measured with bench/paywall.ts).
 */
function errorHeaders(status: number): Record<string, string> {
  const headers: Record<string, string> = { ...API_JSON_HEADERS };
  if (status === 503) headers['Retry-After'] = String(RETRY_AFTER_SECONDS);
  if (status === 405) headers.Allow = ALLOWED_METHODS;
  return headers;
}

/**
 * A `PaywallErrorBody` answer with CORS, no-store and the API security headers (also used by the Workers entry when
 * misconfigured, and by the publishers' routes).
 */
export function errorResponse(status: ErrorStatus, error: string, message: string): Response {
  return new Response(JSON.stringify(errorBody(status, error, message, null)), {
    status,
    headers: errorHeaders(status),
  });
}

/** Renders a decision of the core as an HTTP answer. */
export function renderDecision(decision: Decision): Response {
  switch (decision.kind) {
    case 'payment_required': {
      const headers: Record<string, string> = { ...API_JSON_HEADERS, 'PAYMENT-REQUIRED': decision.header };
      if (decision.settlement) headers['PAYMENT-RESPONSE'] = encodePaymentResponseHeader(decision.settlement);
      return new Response(decision.body, { status: 402, headers });
    }
    case 'error': {
      const headers = errorHeaders(decision.status);
      if (decision.settlement) headers['PAYMENT-RESPONSE'] = encodePaymentResponseHeader(decision.settlement);
      return new Response(JSON.stringify(decision.body), { status: decision.status, headers });
    }
    case 'serve':
      return new Response(decision.body, {
        status: 200,
        headers: {
          ...API_JSON_HEADERS,
          'PAYMENT-RESPONSE': encodePaymentResponseHeader(decision.settlement),
        },
      });
  }
}

export interface PaywallAppOptions {
  /** The payment book; default one in this process's memory. Durable books keep it across isolates and restarts. */
  paymentBook?: PaymentBook;
  /** Facilitator client override (e.g. with auth headers); default an HTTPFacilitatorClient on facilitatorUrl. */
  facilitatorClient?: FacilitatorClient;
  /** More places that sell the paid files (publishers' storefronts), beside the four registry paths. */
  salePoints?: readonly SalePoint[];
  /** What a sale needs beyond the payment (publisher credits). */
  hooks?: SaleHooks;
  /** The payee's USDC opt-in, asked before every new sale until it is confirmed (default: not checked). */
  payee?: PayeeGate;
  /** Why the publishers' config file as it is now is not applied (a running worker re-reads it for closures). */
  publishersConfigRefusal?: () => Promise<string | null>;
  log?: (entry: PaywallLogEntry) => void;
  now?: () => number;
}

export interface PaywallApp extends Hono {
  /** The decision for one paid request, for adapters other than HTTP (MCP). */
  decide: ReturnType<typeof createPaywallCore>['decide'];
}

export function createPaywallApp(config: PaywallConfig, options: PaywallAppOptions = {}): PaywallApp {
  const settings = resolveConfig(config); // throws PaywallConfigError: never start with a bad payee
  const facilitator =
    options.facilitatorClient ??
    new HTTPFacilitatorClient({ url: settings.facilitatorUrl, timeoutMs: settings.facilitatorTimeoutMs });
  const server = new x402ResourceServer(normalizingClient(facilitator)).register(
    settings.network,
    new ExactAvmScheme(),
  );
  const now = options.now ?? (() => Date.now()); // read at each call: a test may shift the clock
  const log = options.log ?? logToStderr;
  const points = [...ownSalePoints(PAID_RESOURCES, settings.payTo), ...(options.salePoints ?? [])];
  const reader = new PaidFileReader(config.storage, 1000, now);
  const freshness = { allowSimulated: settings.allowSimulated, maxAgeSeconds: settings.maxDataAgeSeconds };
  const core = createPaywallCore({
    server,
    offerSettings: settings,
    points: new Map(points.map((point) => [point.path, point])),
    reader,
    freshness,
    groupPolicy: { maxFeePayerFeeMicroAlgos: settings.maxFeePayerFeeMicroAlgos },
    book: options.paymentBook ?? new MemoryPaymentBook(),
    lookup: createIndexerLookup(settings.indexerUrl, settings.facilitatorTimeoutMs),
    hooks: options.hooks,
    payee: options.payee,
    log,
    now,
  });
  const facilitatorState = facilitatorProbe(facilitator, log, now);

  // Paths matched as every host routes them: a proxy that hands on the client's spelling (`//api/x402-atlas.php`)
  // reaches the same sale point.
  const app = new Hono({ getPath: routedPath }) as PaywallApp;
  app.decide = core.decide;
  // Every answer carries CORS (rendered with it); the preflight is answered here for every path, allowing what the
  // path answers (the routed path: the one the routes below match).
  app.options('*', (c) => preflightAnswer(c.req.path));
  // For operators and monitors: 200 when every paid file is for sale, the payee can be paid and the facilitator
  // answers, else 503.
  app.get(HEALTH_PATH, async () => {
    const health = await checkHealth({
      points,
      reader,
      freshness,
      facilitator: facilitatorState,
      payee: options.payee,
      hooks: options.hooks,
      publishersConfigRefusal: options.publishersConfigRefusal,
      now,
    });
    return new Response(JSON.stringify(health, null, 2), {
      status: health.ok ? 200 : 503,
      headers: API_JSON_HEADERS,
    });
  });
  for (const point of points) {
    app.all(point.path, (c): Response | Promise<Response> => {
      const decision = core.decide({
        path: point.path,
        method: c.req.method,
        paymentSignature: c.req.header('PAYMENT-SIGNATURE'),
        legacyPayment: c.req.header('X-PAYMENT') !== undefined,
      });
      // An answer known at once is returned at once: Hono and its Node server then skip their async path.
      return decision instanceof Promise ? decision.then(renderDecision) : renderDecision(decision);
    });
  }
  app.notFound((c) =>
    errorResponse(
      404,
      'not_found',
      unsoldStorefrontMessage(c.req.path, points) ?? 'The paywall serves only the paid paths.',
    ),
  );
  app.onError(answerUnhandled('The paywall could not handle this request.', log));
  return app;
}
