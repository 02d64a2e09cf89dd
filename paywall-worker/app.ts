// The paywall worker: a Hono app on web-standard Request/Response that guards exactly the four paid paths of the
// registry with x402 v2. Unpaid: 402 with PAYMENT-REQUIRED and the spec's body. Paid: the paid file is loaded and
// validated first (503 if it cannot be served, so nobody is charged for nothing), then the payment is claimed
// against replays, verified and settled through the facilitator, and only then is the file served.
import { Hono } from 'hono';
import type { Context } from 'hono';
import algosdk from 'algosdk';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { FacilitatorClient } from '@x402/core/server';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { SettleError, VerifyError } from '@x402/core/types';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactAvmScheme } from '@x402/avm/exact/server';
import { DISCLAIMER, PROJECT } from '../schemas/common.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import type { PaidResource } from '../schemas/resources.ts';
import type { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { resolveConfig } from './config.ts';
import type { PaywallConfig } from './config.ts';
import { endpointName } from './copy.ts';
import { classifyFacilitatorError } from './facilitator-errors.ts';
import type { UpstreamFailure } from './facilitator-errors.ts';
import { normalizeNetwork } from './network.ts';
import { buildOffer, challenge } from './offers.ts';
import type { Offer } from './offers.ts';
import { base64ToBytes, decodePaymentHeader } from './payment-header.ts';
import { ReplayGuard } from './replay-guard.ts';
import type { PaidFileStorage } from './storage.ts';

export type { PaywallConfig } from './config.ts';
export { PaywallConfigError } from './config.ts';

const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE',
};
const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  ...CORS_HEADERS,
  'Cache-Control': 'no-store',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'PAYMENT-SIGNATURE, Content-Type',
  'Access-Control-Max-Age': '600',
};
const JSON_TYPE = 'application/json; charset=utf-8';
const RETRY_AFTER_SECONDS = 30;

/** Reads `/supported` in the short network spelling, whichever one the facilitator uses. */
function normalizingClient(client: FacilitatorClient): FacilitatorClient {
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
    async getSupported() {
      const supported = await client.getSupported();
      const kinds = supported.kinds.map((k) => ({
        ...k,
        network: normalizeNetwork(k.network) as typeof k.network,
      }));
      return { ...supported, kinds };
    },
  };
}

/** A `PaywallErrorBody` answer with CORS and no-store (also used by the Workers entry when misconfigured). */
export function errorResponse(
  status: 404 | 405 | 500 | 502 | 503 | 504,
  error: string,
  message: string,
  resource: PaidResource | null,
  transaction: string | null = null,
): Response {
  const retryAfter = status === 503 ? RETRY_AFTER_SECONDS : null;
  const body: PaywallErrorBody = {
    success: false,
    status,
    error,
    message,
    project: PROJECT,
    endpoint: resource ? endpointName(resource) : null,
    retry_after_seconds: retryAfter,
    transaction,
    disclaimer: DISCLAIMER,
  };
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'Content-Type': JSON_TYPE,
    'Cache-Control': 'no-store',
  };
  if (retryAfter) headers['Retry-After'] = String(retryAfter);
  if (status === 405) headers.Allow = 'GET, HEAD, OPTIONS';
  return new Response(JSON.stringify(body), { status, headers });
}

const upstreamResponse = (failure: UpstreamFailure, resource: PaidResource): Response =>
  errorResponse(failure.status, failure.error, failure.message, resource);

function paymentRequired(
  offer: Offer,
  error: string,
  detail?: string,
  settlement?: SettleResponse,
): Response {
  const { header, body } =
    error === 'payment_required' && !detail ? offer.unpaid : challenge(offer, error, detail);
  const headers: Record<string, string> = {
    'Content-Type': JSON_TYPE,
    'Cache-Control': 'no-store',
    'PAYMENT-REQUIRED': header,
  };
  if (settlement) headers['PAYMENT-RESPONSE'] = encodePaymentResponseHeader(settlement);
  return new Response(body, { status: 402, headers });
}

/** Loads and validates the paid body before any payment is touched; null when it cannot be served. */
async function loadPaidBody(storage: PaidFileStorage, resource: PaidResource): Promise<string | null> {
  try {
    const text = await storage.read(resource.file);
    if (text === null) return null;
    return resource.schema.safeParse(JSON.parse(text)).success ? text : null;
  } catch {
    return null;
  }
}

/** The payment's Algorand transaction id: the replay key, and proof the transaction at least decodes. */
function paymentTransactionId(base64Txn: string): string | null {
  try {
    return algosdk.decodeSignedTransaction(base64ToBytes(base64Txn)).txn.txID();
  } catch {
    return null;
  }
}

export interface PaywallAppOptions {
  /** Shared between apps in one process, or replaced in tests; default one guard per app. */
  replayGuard?: ReplayGuard;
  /** Facilitator client override (e.g. with auth headers); default an HTTPFacilitatorClient on facilitatorUrl. */
  facilitatorClient?: FacilitatorClient;
}

export function createPaywallApp(config: PaywallConfig, options: PaywallAppOptions = {}): Hono {
  const settings = resolveConfig(config); // throws PaywallConfigError: never start with a bad payee
  const storage = config.storage;
  const guard = options.replayGuard ?? new ReplayGuard();
  const facilitator =
    options.facilitatorClient ??
    new HTTPFacilitatorClient({ url: settings.facilitatorUrl, timeoutMs: settings.facilitatorTimeoutMs });
  const server = new x402ResourceServer(normalizingClient(facilitator)).register(
    settings.network,
    new ExactAvmScheme(),
  );

  // Offers need the facilitator's /supported (fee payer); built on first use, retried after a failure.
  let offers: Promise<Map<string, Offer>> | null = null;
  const loadOffers = (): Promise<Map<string, Offer>> => {
    offers ??= (async () => {
      await server.initialize();
      const built = await Promise.all(PAID_RESOURCES.map((r) => buildOffer(server, r, settings)));
      return new Map(built.map((offer) => [offer.resource.path, offer]));
    })().catch((error: unknown) => {
      offers = null;
      throw error;
    });
    return offers;
  };

  async function settlePaid(
    offer: Offer,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    txid: string,
    body: string,
  ) {
    const resource = offer.resource;
    const refused = (reason: string, message: string, settlement?: SettleResponse) =>
      paymentRequired(offer, reason, `${message}.`, settlement);
    try {
      const verification = await server.verifyPayment(payload, requirements);
      if (!verification.isValid) {
        guard.release(txid);
        const reason = verification.invalidReason ?? 'payment_invalid';
        return refused(
          reason,
          `The facilitator refused the payment: ${verification.invalidMessage ?? reason}`,
        );
      }
    } catch (error) {
      guard.release(txid);
      if (!(error instanceof VerifyError)) return upstreamResponse(classifyFacilitatorError(error), resource);
      return refused(
        error.invalidReason ?? 'payment_invalid',
        `The facilitator refused the payment: ${error.message}`,
      );
    }

    let settlement: SettleResponse;
    try {
      settlement = await server.settlePayment(payload, requirements);
    } catch (error) {
      if (!(error instanceof SettleError)) {
        const failure = classifyFacilitatorError(error);
        // Unreachable: nothing was submitted, the payment may be retried. Timeout or garbage: it may have landed.
        if (failure.error === 'facilitator_unreachable') {
          guard.release(txid);
          return upstreamResponse(failure, resource);
        }
        guard.markUsed(txid);
        // The buyer may have been charged without getting the body: give them the transaction id to prove it.
        return errorResponse(
          failure.status,
          failure.error,
          `${failure.message} The payment ${txid} may still be confirmed and will not be accepted again; ` +
            'look it up on an explorer and quote it to the operator if you were charged.',
          resource,
          txid,
        );
      }
      settlement = {
        success: false,
        errorReason: error.errorReason,
        errorMessage: error.errorMessage,
        payer: error.payer,
        transaction: error.transaction ?? '',
        network: error.network ?? requirements.network,
      };
    }
    if (!settlement.success) {
      // A failure that names a transaction came after submission ("submitted but confirmation failed"): the
      // payment may still land, so it is never accepted again. Without one, the facilitator submitted nothing.
      if (settlement.transaction) guard.markUsed(txid);
      else guard.release(txid);
      const reason = settlement.errorReason ?? 'settlement_failed';
      return refused(reason, `Settlement was refused: ${settlement.errorMessage ?? reason}`, settlement);
    }
    guard.markUsed(txid);
    return new Response(body, {
      status: 200,
      headers: {
        'Content-Type': JSON_TYPE,
        'Cache-Control': 'no-store',
        'PAYMENT-RESPONSE': encodePaymentResponseHeader(settlement),
      },
    });
  }

  async function handle(c: Context, resource: PaidResource): Promise<Response> {
    const method = c.req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      return errorResponse(405, 'method_not_allowed', 'Paid resources answer GET only.', resource);
    }
    let offer: Offer | undefined;
    try {
      offer = (await loadOffers()).get(resource.path);
    } catch (error) {
      return upstreamResponse(classifyFacilitatorError(error), resource);
    }
    if (!offer) return errorResponse(404, 'not_found', 'No such paid resource.', resource);

    const header = c.req.header('PAYMENT-SIGNATURE');
    // HEAD never pays: it would settle and then return no body.
    if (method === 'HEAD' || header === undefined) {
      const legacy = c.req.header('X-PAYMENT') !== undefined;
      return legacy
        ? paymentRequired(
            offer,
            'x402_v1_not_supported',
            'X-PAYMENT (x402 v1) is not accepted here; use x402 v2.',
          )
        : paymentRequired(offer, 'payment_required');
    }

    const decoded = decodePaymentHeader(header);
    if (!decoded.ok) return paymentRequired(offer, decoded.error, `${decoded.message}.`);
    const requirements = server.findMatchingRequirements(offer.accepts, decoded.payload);
    if (!requirements) {
      return paymentRequired(
        offer,
        'payment_does_not_match',
        'The payment does not accept any of the offered requirements (accepted must be an unchanged copy).',
      );
    }
    if (!server.validateExtensions(offer.paymentRequired, decoded.payload).valid) {
      return paymentRequired(
        offer,
        'extension_echo_mismatch',
        'The echoed extensions differ from the offered ones.',
      );
    }
    const txid = paymentTransactionId(decoded.paymentTransaction);
    if (!txid)
      return paymentRequired(
        offer,
        'invalid_payment_transaction',
        'The payment transaction does not decode.',
      );

    // Before any verification or settlement: never charge for a body that cannot be served.
    const body = await loadPaidBody(storage, resource);
    if (body === null) {
      return errorResponse(
        503,
        'paid_resource_unavailable',
        'The paid file is not available right now; no payment was verified or settled. Try again later.',
        resource,
      );
    }

    const claim = guard.claim(txid);
    if (claim !== 'claimed') {
      return claim === 'in_flight'
        ? paymentRequired(
            offer,
            'payment_in_progress',
            'This payment is already being processed by another request.',
          )
        : paymentRequired(
            offer,
            'payment_already_used',
            'This payment has already been used; sign a new one.',
          );
    }
    return settlePaid(offer, decoded.payload, requirements, txid, body);
  }

  const app = new Hono();
  app.use('*', async (c, next) => {
    if (c.req.method === 'OPTIONS') return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });
    await next();
    for (const [name, value] of Object.entries(CORS_HEADERS)) c.res.headers.set(name, value);
  });
  for (const resource of PAID_RESOURCES) app.all(resource.path, (c) => handle(c, resource));
  app.notFound(() => errorResponse(404, 'not_found', 'The paywall serves only the four x402 paths.', null));
  app.onError(() => errorResponse(500, 'internal_error', 'The paywall could not handle this request.', null));
  return app;
}
