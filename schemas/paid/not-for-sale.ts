// The paywall's refusals to sell a file at all (paywall-worker/core/decide.ts): stale or simulated data, the file
// missing, no seller credit, a payee not opted in or not checked, a closed seller. Decided before anything is
// settled: with no `transaction` in the body, a payment sent with the request was not settled, and sending it again
// cannot help until the file is on sale again. The buyer page and `emi buy` read them as "nothing was charged".
export const NOT_FOR_SALE_ERRORS: ReadonlySet<string> = new Set([
  'data_stale',
  'data_not_live',
  'paid_resource_unavailable',
  'not_available_from_seller',
  'payee_not_opted_in',
  'payee_unchecked',
  'seller_closed',
]);

/** Whether an answer to a request carrying a payment refused the sale before settling anything. */
export const refusedBeforeSettling = (
  status: number,
  error: string | null | undefined,
  transaction: string | null | undefined,
): boolean => (status === 503 || status === 410) && !!error && NOT_FOR_SALE_ERRORS.has(error) && !transaction;
