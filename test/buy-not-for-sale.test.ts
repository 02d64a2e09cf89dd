// How `emi buy` reads the paywall's answers to the payment it sent (readOutcome in paywall-worker/buy-command.ts),
// with the error bodies the paywall really writes (errorBody): a refusal to sell the file that names no transaction
// was decided before anything was settled, so the buyer is told nothing was charged and nothing is resent; a
// payment in progress or an outcome the paywall does not know yet is sent again.
import { describe, expect, it } from 'vitest';
import { errorBody } from '../paywall-worker/core/decide.ts';
import type { ErrorStatus } from '../paywall-worker/core/decide.ts';
import { readOutcome } from '../paywall-worker/buy-command.ts';
import { NOT_FOR_SALE_ERRORS } from '../schemas/paid/not-for-sale.ts';

const ORIGIN = 'http://127.0.0.1:8080';
const answer = (status: ErrorStatus, error: string, transaction?: string) => ({
  kind: 'answer' as const,
  status,
  body: errorBody(status, error, 'the paywall says why', null, transaction),
  settlement: null,
  retryAfter: null,
});

describe('emi buy after sending its payment', () => {
  it.each([...NOT_FOR_SALE_ERRORS])(
    '%s naming no transaction: nothing was charged, nothing is resent',
    (error) => {
      const outcome = readOutcome(answer(503, error), ORIGIN);
      expect(outcome).toEqual({ kind: 'refused', reason: `${error} (nothing was charged)` });
    },
  );

  it('a payment in progress, or an outcome not known yet, is sent again', () => {
    expect(readOutcome(answer(503, 'payment_in_progress'), ORIGIN).kind).toBe('retry');
    expect(readOutcome(answer(504, 'settlement_unknown', 'TXID'), ORIGIN)).toMatchObject({
      kind: 'retry',
      transaction: 'TXID',
    });
    // Not for sale now, but naming this payment's transaction: it may have landed before, so it is kept.
    expect(readOutcome(answer(503, 'paid_resource_unavailable', 'TXID'), ORIGIN).kind).toBe('retry');
  });
});
