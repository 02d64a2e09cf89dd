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
import type { PaymentPayload } from '@x402/core/types';
import algosdk from 'algosdk';
import { base64ToBytes } from '../paywall-worker/payment-header.ts';
import { noteFor } from '../generator/discovery/endpoint-notes.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import type { PaidResource } from '../schemas/resources.ts';
import { DataFacts, factsOfBody } from './facts.ts';
import * as z from 'zod';
import { toolNameOf } from './free-tools.ts';
import { structuredResult, toolError } from './results.ts';

/** Asks the paywall for a paid path, with the payment as a `PAYMENT-SIGNATURE` header value when there is one. */
export type FetchPaid = (path: string, paymentSignatureHeader?: string) => Promise<Response>;

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';

/** The payment in `_meta`, encoded as the HTTP header; an error message when it is not a payment object. */
export function paymentHeaderOf(meta: Record<string, unknown> | undefined): {
  header?: string;
  payment?: PaymentPayload;
  error?: string;
} {
  const payment = meta?.[PAYMENT_META];
  if (payment === undefined) return {};
  if (payment === null || typeof payment !== 'object' || Array.isArray(payment)) {
    return {
      error:
        `_meta["${PAYMENT_META}"] must be an x402 v2 PaymentPayload object (x402Version, accepted, payload), ` +
        `got ${payment === null ? 'null' : Array.isArray(payment) ? 'an array' : typeof payment}.`,
    };
  }
  const record = payment as Record<string, unknown>;
  if (record.x402Version !== 2 || typeof record.accepted !== 'object' || typeof record.payload !== 'object') {
    return {
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
    return {
      isError: true,
      structuredContent: paymentRequired as unknown as Record<string, unknown>,
      content: [{ type: 'text', text: JSON.stringify(paymentRequired) }],
    };
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
          'the body is withheld: the paid tools must go to the x402 paywall itself. A payment that was settled is ' +
          `delivered again, never charged twice, when the tool is called again with the same _meta["${PAYMENT_META}"].`,
      );
    }
    const parsed = resource.schema.safeParse(await response.json());
    if (!parsed.success) return toolError(`${resource.path} delivered a body that fails its schema.`);
    return structuredResult(
      { ...factsOfBody(parsed.data, now), body: parsed.data },
      { [PAYMENT_RESPONSE_META]: settlement },
    );
  }
  const { error, message, transaction } = await errorDetail(response);
  const retryAfter = response.headers.get('Retry-After');
  // The paywall names the transaction when the payment may have landed; its advice speaks of the HTTP header, so
  // say what that means here: signing a new payment instead could charge the agent twice.
  const sameAgain = transaction
    ? ` Over MCP: call ${toolNameOf(resource.id)} again with the same _meta["${PAYMENT_META}"], not a new payment.`
    : '';
  return toolError(
    `${resource.path} is not available (${response.status} ${error})${message ? `: ${message}` : ''}` +
      `${retryAfter ? ` Retry after ${retryAfter} s.` : ''}${sameAgain}`,
    { status: response.status, error, message, ...(transaction ? { transaction } : {}) },
  );
}

/**
 * One object schema for both answers of a paid tool: a delivery (the data facts and the body) and, in an
 * `isError` result, the x402 `PaymentRequired` (x402Version, error, resource, accepts, extensions). MCP clients
 * check any structured content against the declared schema, error results included, so both must fit it.
 */
export function paidToolOutput(body: z.ZodType) {
  const facts = Object.fromEntries(
    Object.entries(DataFacts).map(([key, schema]) => [key, schema.optional()]),
  );
  return z.object({
    ...facts,
    body: body.optional().describe('the paid body, after payment and settlement'),
    x402Version: z.literal(2).optional().describe('payment required: the x402 version'),
    error: z.string().optional().describe('payment required: why the payment is needed or was refused'),
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
}

export function registerPaidTools(server: McpServer, fetchPaid: FetchPaid, now: () => number): string[] {
  return PAID_RESOURCES.map((resource) => {
    const name = toolNameOf(resource.id);
    server.registerTool(
      name,
      {
        title: resource.title,
        description:
          `${noteFor(resource).purpose} Paid: ${resource.priceUsd} USDC on Algorand per call over x402 v2 ` +
          `(call without payment to get the PaymentRequired, then again with _meta["${PAYMENT_META}"]).`,
        inputSchema: {},
        outputSchema: paidToolOutput(resource.schema),
        annotations: { readOnlyHint: true, openWorldHint: true },
        _meta: {
          'x402/price': { amount: resource.amountAtomic, usd: resource.priceUsd },
          'x402/path': resource.path,
        },
      },
      async (_args, extra) => {
        const payment = paymentHeaderOf(extra._meta as Record<string, unknown> | undefined);
        if (payment.error) return toolError(payment.error);
        try {
          const response = await fetchPaid(resource.path, payment.header);
          return await toolResultOf(response, resource, now(), payment.payment);
        } catch (error) {
          return toolError(
            `${resource.path}: the paywall could not be reached (${(error as Error).message}).`,
          );
        }
      },
    );
    return name;
  });
}
