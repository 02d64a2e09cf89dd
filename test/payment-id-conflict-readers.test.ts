// Every reader of the paywall's answers meets its 409 `payment_id_conflict` (a new signature sent with a payment id
// that belongs to another payment; nothing verified or settled) and says so: the buyer page (final for the
// signature, a payment it keeps is kept), `emi buy` (refused, exit 1, the site's words), the MCP paid tools (an
// isError result carrying the code and message, in MCP terms), and the OpenAPI document's paid paths.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorBody } from '../paywall-worker/core/decide.ts';
import { paymentIdConflictMessage } from '../paywall-worker/core/answers.ts';
import { readOutcome } from '../paywall-worker/buy-command.ts';
import { toolResultOf } from '../mcp/paid-tools.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { pendingPayments, sendPayment } from '../site/x402-buyer/src/x402-flow.ts';
import { HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import { pendingPayment } from './helpers/pending-payment.ts';
import { stubSessionStorage } from './helpers/session-storage.ts';

const OTHER = 'OTHERTXIDOFTHEPAYMENTTHEIDBELONGSTO';
const conflictBody = () => errorBody(409, 'payment_id_conflict', paymentIdConflictMessage(OTHER), null);

describe('the buyer page', () => {
  const url = `http://127.0.0.1:9${HUMAN_REPORT_PATH}`;
  const payment = pendingPayment(url);
  beforeEach(() => {
    stubSessionStorage();
    vi.stubGlobal('fetch', async () => Response.json(conflictBody(), { status: 409 }));
    pendingPayments.save(payment);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('refuses this signature for good, keeps the payment it holds and says what the server said', async () => {
    const result = await sendPayment(payment);
    expect(result).toMatchObject({
      kind: 'problem',
      problem: { kind: 'payment-refused', retrySafe: false, txId: 'TXID' },
    });
    const problem = result.kind === 'problem' ? result.problem : null;
    expect(problem?.message).toContain('it was not charged (HTTP 409: payment_id_conflict)');
    expect(problem?.message).toContain(`another payment (transaction ${OTHER})`);
    expect(problem?.final).toBeUndefined();
    expect(pendingPayments.load(url)).toEqual(payment);
  });
});

describe('emi buy', () => {
  it('reads a 409 as a refusal (exit 1) that charged nothing, with the site’s words', () => {
    const outcome = readOutcome(
      { kind: 'answer', status: 409, body: conflictBody(), settlement: null, retryAfter: null },
      'http://127.0.0.1:8080',
    );
    expect(outcome.kind).toBe('refused');
    const reason = outcome.kind === 'refused' ? outcome.reason : '';
    expect(reason).toMatch(/^payment_id_conflict \(nothing was charged\): This payment id already belongs/);
    expect(reason).toContain(OTHER);
  });
});

describe('the MCP paid tools', () => {
  it('answer a 409 with an isError result carrying the code and the message in MCP terms', async () => {
    const resource = PAID_RESOURCES[0]!;
    const result = await toolResultOf(Response.json(conflictBody(), { status: 409 }), resource, Date.now());
    expect(result.isError).toBe(true);
    const content = result.structuredContent as { status: number; error: string; message: string };
    expect(content).toMatchObject({ status: 409, error: 'payment_id_conflict' });
    expect(content.message).toContain(OTHER);
    expect(content.message).toContain('(the same _meta["x402/payment"], with its payment id)');
    expect(content.message).not.toContain('PAYMENT-SIGNATURE');
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain(`${resource.path} refused this payment (409 payment_id_conflict)`);
  });
});

describe('the OpenAPI document', () => {
  it('lists the 409 payment_id_conflict among the paid paths’ answers', () => {
    const doc = buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as {
      paths: Record<string, { get: { responses: Record<string, { $ref?: string }> } }>;
      components: { responses: Record<string, { description: string }> };
    };
    const ref = doc.paths[PAID_RESOURCES[0]!.path]!.get.responses['409']?.$ref;
    expect(ref).toBeDefined();
    expect(doc.components.responses[ref!.split('/').at(-1)!]!.description).toContain('`payment_id_conflict`');
  });
});
