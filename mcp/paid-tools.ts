// The four paid products as tools, over the x402 v2 MCP transport: an unpaid call answers a tool error carrying
// the same PaymentRequired as the HTTP 402; the payment comes in `_meta["x402/payment"]`; the settlement goes back
// in `_meta["x402/payment-response"]`. Every decision is the HTTP paywall's own: the tools call it through
// `fetchPaid` (in production the paywall app's `app.request`), so verify, settle, delivery, the payment book and
// the replay guard are shared, never re-implemented.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import algosdk from 'algosdk';
import { base64ToBytes } from '../paywall-worker/payment-header.ts';
import { paymentIdOf } from '../schemas/paid/payment-identifier.ts';
import { retryAfterSeconds } from '../schemas/retry-after.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import type { PaidResource } from '../schemas/resources.ts';
import { DataFacts, factsOfBody } from './facts.ts';
import * as z from 'zod';
import { schemaProblems, toolNameOf, toolPurpose } from './free-tools.ts';
import { oncePerBody, publishedObject } from './json-schema.ts';
import { structuredResult, toolError } from './results.ts';
import { strictInput } from './strict-input.ts';

/** Asks the paywall for a paid path, with the payment as a `PAYMENT-SIGNATURE` header value when there is one. */
export type FetchPaid = (path: string, paymentSignatureHeader?: string) => Promise<Response>;

/**
 * The longest a paid call waits for the whole answer of a paywall elsewhere (`--paywall-url`). A sound paywall
 * answers well within it: its facilitator calls give up after 10 s each (settle, then the chain lookup).
 */
export const PAYWALL_TIMEOUT_MS = 30_000;

/** A paywall elsewhere sent no complete answer in time; the message names it and the time waited. */
export class PaywallTimeoutError extends Error {
  override name = 'PaywallTimeoutError';
}

/**
 * The request to the paywall never left this process (its URL is not an absolute http(s) URL, say): nothing
 * reached the paywall, so nothing was paid.
 */
export class PaywallNotSentError extends Error {
  override name = 'PaywallNotSentError';
}

/** The longest wait an agent is told of (a Retry-After beyond it is read as this): ten minutes, as the buyer page. */
const MAX_RETRY_AFTER_SECONDS = 600;

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';

/** Why `_meta["x402/payment"]` is not a payment: an x402 v1 payload, or anything else that is not a v2 one. */
export type InvalidPaymentCode = 'invalid_x402_version' | 'invalid_payload';

/**
 * The payment in `_meta`, encoded as the HTTP header; an error message when it is not a payment object, with the
 * x402 reason code the payment-required result carries (`code`).
 */
export function paymentHeaderOf(meta: Record<string, unknown> | undefined): {
  header?: string;
  payment?: PaymentPayload;
  error?: string;
  code?: InvalidPaymentCode;
} {
  const payment = meta?.[PAYMENT_META];
  if (payment === undefined) return {};
  if (payment === null || typeof payment !== 'object' || Array.isArray(payment)) {
    return {
      code: 'invalid_payload',
      error:
        `_meta["${PAYMENT_META}"] must be an x402 v2 PaymentPayload object (x402Version, accepted, payload), ` +
        `got ${payment === null ? 'null' : Array.isArray(payment) ? 'an array' : typeof payment}.`,
    };
  }
  const record = payment as Record<string, unknown>;
  if (record.x402Version !== 2 || typeof record.accepted !== 'object' || typeof record.payload !== 'object') {
    return {
      code: record.x402Version === 1 ? 'invalid_x402_version' : 'invalid_payload',
      error: `_meta["${PAYMENT_META}"] is not an x402 v2 PaymentPayload: it needs x402Version 2, accepted and payload.`,
    };
  }
  return {
    header: encodePaymentSignatureHeader(payment as PaymentPayload),
    payment: payment as PaymentPayload,
  };
}

/** The id of the signed payment transaction of an Algorand exact payment (paymentGroup[paymentIndex]), or null. */
export function paymentTransactionOf(payment: PaymentPayload | undefined): string | null {
  const { paymentGroup, paymentIndex } = (payment?.payload ?? {}) as {
    paymentGroup?: unknown;
    paymentIndex?: unknown;
  };
  const signed =
    Array.isArray(paymentGroup) && typeof paymentIndex === 'number' ? paymentGroup[paymentIndex] : null;
  if (typeof signed !== 'string') return null;
  try {
    return algosdk.decodeSignedTransaction(base64ToBytes(signed)).txn.txID();
  } catch {
    return null;
  }
}

/** Whether the payment carries an id (x402's payment-identifier extension): only then is it delivered again. */
export function hasPaymentId(payment: PaymentPayload | undefined): boolean {
  const found = paymentIdOf(payment?.extensions);
  return 'id' in found && found.id !== null;
}

/** The paywall's readable `message` in a JSON answer (its 402 body or error body), or null. */
export function messageOf(text: string): string | null {
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    return typeof message === 'string' && message.trim() ? message : null;
  } catch {
    return null;
  }
}

/**
 * The paywall's readable reason in MCP terms. Its messages are written for HTTP (the payment in the
 * PAYMENT-SIGNATURE header); over MCP the payment travels in `_meta["x402/payment"]` of a call of the same tool.
 */
export function inMcpTerms(message: string, resource: PaidResource): string {
  const tool = toolNameOf(resource.id);
  const meta = `_meta["${PAYMENT_META}"]`;
  return (
    message
      .replace(
        /repeat this request with the base64 payment in the PAYMENT-SIGNATURE header/g,
        `call ${tool} again with the PaymentPayload in ${meta}`,
      )
      .replace(
        /send the same request with the same PAYMENT-SIGNATURE again/g,
        `call ${tool} again with the same ${meta}, not a new payment,`,
      )
      .replace(/send (?:this|the) same PAYMENT-SIGNATURE again/g, `call ${tool} again with the same ${meta}`)
      .replace(/the Retry-After delay/g, 'the retry delay ("Retry after" in this result)')
      // Any other mention of the header.
      .replace(/(?:(?:the|a|this) )?(same )?PAYMENT-SIGNATURE(?: header)?/g, (_match, same?: string) =>
        same ? `the same ${meta}` : `the payment in ${meta}`,
      )
  );
}

/**
 * The x402 MCP transport's payment-required result: the PaymentRequired in `structuredContent` and as JSON in the
 * first text, with the paywall's readable reason beside its code (`message`, and a second text an agent can quote).
 * A refused settlement's SettleResponse, when the paywall sent one, goes in `_meta["x402/payment-response"]`.
 */
export function paymentRequiredResult(
  resource: PaidResource,
  paymentRequired: PaymentRequired,
  message: string | null,
  settlement?: SettleResponse,
  facts?: DataFacts,
): CallToolResult {
  const readable = message === null ? null : inMcpTerms(message, resource);
  const content = { ...paymentRequired, ...facts, ...(readable ? { message: readable } : {}) };
  const code = paymentRequired.error ?? 'payment_required';
  const what =
    code === 'payment_required'
      ? `${resource.path} needs a payment (${code})`
      : `${resource.path} refused the payment (${code})`;
  return {
    isError: true,
    structuredContent: content as unknown as Record<string, unknown>,
    content: [
      { type: 'text', text: JSON.stringify(content) },
      { type: 'text', text: readable ? `${what}: ${readable}` : `${what}.` },
    ],
    ...(settlement ? { _meta: { [PAYMENT_RESPONSE_META]: settlement } } : {}),
  };
}

async function errorDetail(
  response: Response,
): Promise<{ error: string; message: string; transaction: string | null }> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; transaction?: unknown };
    return {
      error: String(body.error ?? response.status),
      message: String(body.message ?? ''),
      transaction: typeof body.transaction === 'string' && body.transaction ? body.transaction : null,
    };
  } catch {
    return { error: String(response.status), message: text.slice(0, 200), transaction: null };
  }
}

/** Maps the paywall's HTTP answer to the MCP tool result of the x402 transport. */
export async function toolResultOf(
  response: Response,
  resource: PaidResource,
  now: number,
  payment?: PaymentPayload,
): Promise<CallToolResult> {
  if (response.status === 402) {
    const header = response.headers.get('PAYMENT-REQUIRED');
    if (!header) return toolError(`${resource.path} answered 402 without a PAYMENT-REQUIRED header.`);
    const paymentRequired = decodePaymentRequiredHeader(header);
    const refused = response.headers.get('PAYMENT-RESPONSE');
    const settlement = refused ? decodePaymentResponseHeader(refused) : undefined;
    const text = await response.text();
    return paymentRequiredResult(
      resource,
      paymentRequired,
      messageOf(text),
      settlement,
      offeredFacts(text, now),
    );
  }
  if (response.status === 200) {
    // The money rule, kept here too: a paid body only with a successful settlement of this very payment. Another
    // host behind --paywall-url (a static copy, a cache replaying someone else's answer) must not hand one out.
    const settlementHeader = response.headers.get('PAYMENT-RESPONSE');
    const settlement = settlementHeader ? decodePaymentResponseHeader(settlementHeader) : null;
    const txid = paymentTransactionOf(payment);
    if (!settlement?.success || txid === null || settlement.transaction !== txid) {
      await response.body?.cancel();
      return toolError(
        `${resource.path} answered 200 without a settlement of ${txid ? `payment ${txid}` : 'a payment'}, so ` +
          `the body is withheld: the paid tools must go to the x402 paywall itself.${payment ? ` ${ifSettledElsewhere(resource, payment, txid)}` : ''}`,
      );
    }
    // Settled: this payment's money was taken, so its bytes are always delivered, whatever this server thinks of
    // them. A body that fails the local schema (a paywall elsewhere running a newer one, say) is delivered as text
    // with a warning, never withheld: a retry would only get the same bytes, and the agent would have nothing.
    const text = await response.text();
    const json = jsonOrUndefined(text);
    const parsed = resource.schema.safeParse(json);
    const notes = [
      ...(parsed.success
        ? []
        : [
            `${resource.path} settled payment ${txid} and delivered a body that does not match this server's ` +
              `schema for it [${schemaProblems(parsed.error)}]: it is delivered unchecked, as text in body_text. ` +
              `Quote transaction ${txid} to the seller if it is not what was paid for.`,
          ]),
      ...(hasPaymentId(payment) ? [] : [withoutIdDelivered(txid)]),
    ];
    const warning = notes.length ? notes.join(' ') : undefined;
    const content = parsed.success
      ? { ...factsOfBody(parsed.data, now), body: parsed.data }
      : { ...factsOfBody(json, now), body_text: text };
    const result = structuredResult(
      { ...content, ...(warning ? { warning } : {}) },
      { [PAYMENT_RESPONSE_META]: settlement },
    );
    return warning ? { ...result, content: [...result.content, { type: 'text', text: warning }] } : result;
  }
  const detail = await errorDetail(response);
  const { error, transaction } = detail;
  const message = inMcpTerms(detail.message, resource);
  const retryAfter = retryAfterSeconds(response.headers.get('Retry-After'), now, MAX_RETRY_AFTER_SECONDS);
  // The paywall names the transaction when the payment may have landed, and keeps that payment pending: the same
  // bytes, id or not, are settled at most once and delivered if it landed. Signing a new payment instead could
  // charge the agent twice.
  const sameAgain =
    transaction && !message.includes(`again with the same _meta["${PAYMENT_META}"]`)
      ? ` Do not sign a new payment: ${callAgainWithSamePayment(resource)}.`
      : '';
  // 409: this payment's id belongs to another payment; refused before anything was settled (the message says which).
  const lead = response.status === 409 ? 'refused this payment' : 'is not available';
  const result = toolError(
    `${resource.path} ${lead} (${response.status} ${error})${message ? `: ${message}` : ''}` +
      `${retryAfter ? ` Retry after ${retryAfter} s.` : ''}${sameAgain}`,
    { status: response.status, error, message, ...(transaction ? { transaction } : {}) },
  );
  // The facilitator's failed settlement, when the paywall passed it on (submitted, not confirmed).
  const failed = response.headers.get('PAYMENT-RESPONSE');
  return failed
    ? { ...result, _meta: { [PAYMENT_RESPONSE_META]: decodePaymentResponseHeader(failed) } }
    : result;
}

/** What the file on offer is, from a 402's body (its `data`: mode and generation time), as every result says it. */
const offeredFacts = (text: string, now: number): DataFacts =>
  factsOfBody((jsonOrUndefined(text) as { data?: unknown } | undefined)?.data, now);

const jsonOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

const callAgainWithSamePayment = (resource: PaidResource) =>
  `call ${toolNameOf(resource.id)} again with the same _meta["${PAYMENT_META}"], not a new payment`;

const PAYMENT_ID_HINT =
  'Give future payments an id (the x402 payment-identifier extension, which the PaymentRequired declares) so that ' +
  'the same payment sent again collects its file.';

/** The warning on a delivery of a payment sent without an id: this result is its one delivery. */
const withoutIdDelivered = (txid: string | null) =>
  `This payment${txid ? ` (transaction ${txid})` : ''} carries no payment id, so the paywall delivers its file ` +
  'once: calling again with the same payment is refused (payment_already_used). Keep this result. ' +
  PAYMENT_ID_HINT;

/** What a withheld 200 means for a payment the paywall may nonetheless have settled. */
function ifSettledElsewhere(resource: PaidResource, payment: PaymentPayload, txid: string | null): string {
  if (hasPaymentId(payment)) {
    return (
      'If the paywall settled this payment, it delivers the file again without charging it twice to the same ' +
      `_meta["${PAYMENT_META}"] (it carries a payment id): ${callAgainWithSamePayment(resource)}, once the paid ` +
      'tools reach the paywall itself.'
    );
  }
  return (
    'This payment carries no payment id: if the paywall settled it, it may not be collectable again (a settled ' +
    'payment without an id is delivered once, and that delivery may have been this withheld answer)' +
    `${txid ? `; quote transaction ${txid} to the seller` : ''}. ` +
    PAYMENT_ID_HINT
  );
}

/**
 * The answer to a `_meta["x402/payment"]` that is not an x402 v2 PaymentPayload (the x402 MCP transport's "Payment
 * Invalid"): the payment-required result, with the reason code and the readable sentence, as a refused payment over
 * HTTP gets its 402. The PaymentRequired is the paywall's own (an unpaid ask of the path); when it gives none (the
 * file is not for sale now, the paywall cannot be reached), the sentence alone, as a tool error.
 */
export async function invalidPaymentResult(
  resource: PaidResource,
  fetchPaid: FetchPaid,
  invalid: { error: string; code: InvalidPaymentCode },
  now: number,
): Promise<CallToolResult> {
  try {
    const response = await fetchPaid(resource.path);
    const header = response.status === 402 ? response.headers.get('PAYMENT-REQUIRED') : null;
    if (header) {
      const offered = decodePaymentRequiredHeader(header);
      const facts = offeredFacts(await response.text(), now);
      return paymentRequiredResult(
        resource,
        { ...offered, error: invalid.code },
        invalid.error,
        undefined,
        facts,
      );
    }
    await response.body?.cancel();
  } catch {
    // no PaymentRequired to give: the sentence alone
  }
  return toolError(invalid.error, { error: invalid.code, message: invalid.error });
}

/** Error codes that mean the request never left this process: nothing reached the paywall, so nothing was paid. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_INVALID_URL']);
/** fetch's own refusals before any connection (the Fetch standard's blocked ports, a scheme it cannot fetch). */
const NOT_SENT_MESSAGES = new Set(['bad port', 'unknown scheme']);

function neverSent(error: unknown): boolean {
  if (error instanceof PaywallNotSentError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  return (
    (typeof cause?.code === 'string' && NOT_SENT_CODES.has(cause.code)) ||
    (typeof cause?.message === 'string' && NOT_SENT_MESSAGES.has(cause.message))
  );
}

/**
 * The result when the paywall gave no (complete) answer: it timed out, or the connection failed. After a payment
 * was sent the paywall may have settled it: the agent is told so, with the transaction, and how to collect the
 * file with the same payment. The paywall settles a payment at most once; it delivers a settled payment again
 * only to a payment with an id, so a payment without one is told plainly that it may not be collectable.
 */
export function paywallUnansweredResult(
  resource: PaidResource,
  error: unknown,
  payment?: PaymentPayload,
): CallToolResult {
  const timedOut = error instanceof PaywallTimeoutError;
  const code = timedOut ? 'paywall_timeout' : 'paywall_unreachable';
  const what = timedOut
    ? `the paywall did not answer in time (${error.message})`
    : `the paywall could not be reached (${error instanceof Error ? error.message : String(error)})`;
  if (!payment || (!timedOut && neverSent(error))) {
    const message = `${what}. ${payment ? 'The payment was not sent' : 'No payment was sent'}: nothing was taken; try again later.`;
    return toolError(`${resource.path}: ${message}`, { error: code, message });
  }
  const txid = paymentTransactionOf(payment);
  const sent = `${what} after the payment${txid ? ` (transaction ${txid})` : ''} was sent, so it may have been taken.`;
  const message = hasPaymentId(payment)
    ? `${sent} Do not sign a new payment: ${callAgainWithSamePayment(resource)}. The paywall settles a payment at ` +
      'most once, and delivers a settled payment with an id again without charging it twice.'
    : `${sent} Do not sign a new payment: call ${toolNameOf(resource.id)} again once with the same ` +
      `_meta["${PAYMENT_META}"]; the paywall settles a payment at most once, and that call collects the file if ` +
      'the paywall had not finished with it. But this ' +
      'payment carries no payment id: if the paywall settled it and answered, it is not delivered again ' +
      '(payment_already_used), and the file cannot be collected with it' +
      `${txid ? `: quote transaction ${txid} to the seller` : ''}. ${PAYMENT_ID_HINT}`;
  return toolError(`${resource.path}: ${message}`, {
    error: code,
    message,
    ...(txid ? { transaction: txid } : {}),
  });
}

/**
 * One object schema for both answers of a paid tool: a delivery (the data facts and the body) and, in an
 * `isError` result, the x402 `PaymentRequired` (x402Version, error, resource, accepts, extensions) or another
 * refusal (error, message, status, transaction). MCP clients check any structured content against the declared
 * schema, error results included, so every answer must fit it.
 */
export const paidToolOutput = oncePerBody((body) => {
  const facts = Object.fromEntries(
    Object.entries(DataFacts).map(([key, schema]) => [key, schema.optional()]),
  );
  return publishedObject({
    ...facts,
    body: body.optional().describe('the paid body, after payment and settlement'),
    body_text: z
      .string()
      .optional()
      .describe(
        "instead of body: the paid bytes as delivered, unchecked, when they do not match this server's schema " +
          '(a paywall elsewhere with a newer schema, say); see warning',
      ),
    warning: z
      .string()
      .optional()
      .describe(
        'a delivery to read with care: a body that failed the schema, or a payment without an id (delivered once)',
      ),
    x402Version: z.literal(2).optional().describe('payment required: the x402 version'),
    error: z
      .string()
      .optional()
      .describe(
        'an error: its code (why the payment is needed or was refused, or why nothing was delivered)',
      ),
    message: z.string().optional().describe("an error: the paywall's readable reason and what to do"),
    status: z
      .number()
      .int()
      .optional()
      .describe("an error other than payment required: the paywall's HTTP status"),
    resource: z.looseObject({ url: z.string() }).optional().describe('payment required: what is sold'),
    accepts: z.array(z.looseObject({})).optional().describe('payment required: the payment requirements'),
    extensions: z.looseObject({}).optional(),
    transaction: z
      .string()
      .optional()
      .describe(
        'an error after which the payment may have landed: its transaction (call again with the same payment)',
      ),
  });
});

export function registerPaidTools(server: McpServer, fetchPaid: FetchPaid, now: () => number): string[] {
  return PAID_RESOURCES.map((resource) => {
    const name = toolNameOf(resource.id);
    server.registerTool(
      name,
      {
        title: resource.title,
        description:
          `${toolPurpose(resource)} Paid: ${resource.priceUsd} USDC on Algorand per call over x402 v2 ` +
          `(call without payment to get the PaymentRequired, then again with _meta["${PAYMENT_META}"]; give the ` +
          'payment an id (its payment-identifier extension) so that the same payment sent again collects the file).',
        inputSchema: strictInput(name, {}),
        outputSchema: paidToolOutput(resource.schema),
        // Not read-only: a call with a payment settles a USDC transfer, and a client may approve a read-only tool
        // without asking. Nothing is destroyed, and the same payment again is delivered again, never charged again.
        annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
        _meta: {
          'x402/price': { amount: resource.amountAtomic, usd: resource.priceUsd },
          'x402/path': resource.path,
        },
      },
      async (_args, extra) => {
        const payment = paymentHeaderOf(extra._meta as Record<string, unknown> | undefined);
        if (payment.error) {
          const invalid = { error: payment.error, code: payment.code ?? 'invalid_payload' } as const;
          return invalidPaymentResult(resource, fetchPaid, invalid, now());
        }
        try {
          const response = await fetchPaid(resource.path, payment.header);
          return await toolResultOf(response, resource, now(), payment.payment);
        } catch (error) {
          return paywallUnansweredResult(resource, error, payment.payment);
        }
      },
    );
    return name;
  });
}
