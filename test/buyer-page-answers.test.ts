// How the buyer page reads the paywall's answers to a signed payment (site/x402-buyer/src/x402-flow.ts), with the
// error bodies the paywall really writes (errorBody in paywall-worker/core/decide.ts): a refusal to sell the file
// that names no transaction was decided before anything was settled (nothing charged, the payment dropped); one
// that names a transaction, an unknown outcome or a payment in progress keeps it for a resend. A body that is not
// JSON (a proxy's HTML page) is never shown.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorBody } from '../paywall-worker/core/decide.ts';
import type { ErrorStatus } from '../paywall-worker/core/decide.ts';
import { pendingPayments, sendPayment } from '../site/x402-buyer/src/x402-flow.ts';
import { HUMAN_REPORT_PATH } from '../generator/buyer/human-report-terms.ts';
import { pendingPayment } from './helpers/pending-payment.ts';
import { stubSessionStorage } from './helpers/session-storage.ts';

const url = `http://127.0.0.1:9${HUMAN_REPORT_PATH}`;
const payment = pendingPayment(url);

describe('the answer to a signed payment', () => {
  let answer: Response;
  beforeEach(() => {
    stubSessionStorage();
    vi.stubGlobal('fetch', async () => answer);
    pendingPayments.save(payment);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  const paywallAnswer = (status: ErrorStatus, error: string, message: string, transaction?: string) =>
    Response.json(errorBody(status, error, message, null, transaction ?? null), { status });

  it.each([
    [503, 'data_stale', 'This report was generated 200 s ago, past the 180 s this service sells.'],
    [503, 'data_not_live', 'This report is built from simulated data, which this service does not sell.'],
    [503, 'paid_resource_unavailable', 'The paid file is not available right now.'],
    [503, 'not_available_from_seller', 'No credit is left for this sale; no payment was settled.'],
    [503, 'payee_not_opted_in', 'The payee has not opted in to USDC.'],
    [410, 'seller_closed', 'This publisher has closed.'],
  ] as const)(
    '%i %s without a transaction: nothing charged, the payment dropped',
    async (status, error, why) => {
      answer = paywallAnswer(status, error, why);
      const result = await sendPayment(payment);
      expect(result).toMatchObject({ kind: 'problem', problem: { kind: 'not-for-sale', retrySafe: false } });
      const problem = result.kind === 'problem' ? result.problem : null;
      expect(problem?.txId).toBeUndefined();
      expect(problem?.message).toMatch(/^Nothing was charged/);
      expect(problem?.message).toContain(why);
      expect(problem?.message).toContain(`(HTTP ${status})`);
      expect(problem?.message).not.toMatch(/unavailable right now|is kept/);
      expect(pendingPayments.load(url)).toBeNull();
    },
  );

  it.each([
    [503, 'payment_in_progress', 'payment-in-progress'],
    [502, 'settlement_unknown', 'facilitator-unavailable'],
    [504, 'facilitator_timeout', 'facilitator-unavailable'],
    // A refusal to sell that still names the transaction: it may have landed (an earlier try was resumed).
    [503, 'data_stale', 'facilitator-unavailable'],
  ] as const)('%i %s naming the transaction: kept, Retry resends it', async (status, error, kind) => {
    answer = paywallAnswer(status, error, 'Whether payment TXID landed is not known yet.', 'TXID');
    const result = await sendPayment(payment);
    expect(result).toMatchObject({ kind: 'problem', problem: { kind, retrySafe: true, txId: 'TXID' } });
    expect(pendingPayments.load(url)).toEqual(payment);
  });

  it('keeps the payment when the service is unreachable before any settlement (503, no transaction)', async () => {
    answer = paywallAnswer(503, 'facilitator_unreachable', 'The payment facilitator cannot be reached.');
    const result = await sendPayment(payment);
    expect(result).toMatchObject({ problem: { kind: 'facilitator-unavailable', retrySafe: true } });
    expect(pendingPayments.load(url)).toEqual(payment);
  });

  it.each([502, 500, 402])(
    'shows no HTML from a proxy in between (HTTP %i): the status alone',
    async (status) => {
      answer = new Response('<html><body><h1>Bad Gateway</h1><p>nginx</p></body></html>', {
        status,
        headers: { 'Content-Type': 'text/html' },
      });
      const result = await sendPayment(payment);
      const message = result.kind === 'problem' ? result.problem.message : '';
      expect(message).not.toMatch(/<|Bad Gateway|nginx/);
      expect(message).toContain(`HTTP ${status}`);
    },
  );
});
