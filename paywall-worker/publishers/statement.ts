// A publisher's statement: every sale made through its storefront, with what it needs to reconcile with the chain
// (the transaction id, the address paid, the payer, the exact amount in USDC atomic units). Pure formatting.
// Sales settled by the development facilitator share the ledger with real ones: they are kept apart here by their
// network, `development`, so that test money is never counted as paid to the publisher.
import { USDC_ASA_ID, USDC_DECIMALS } from '../../schemas/paid/terms.ts';
import type { SaleRecord } from './credit-ledger.ts';

/**
 * The network of a sale settled by the development facilitator (test money on an in-memory ledger). Not a CAIP-2
 * id on purpose: no chain has it, so nobody looks for its transaction on one.
 */
export const DEVELOPMENT_NETWORK = 'development';

export const isTestSale = (sale: Pick<SaleRecord, 'network'>): boolean =>
  sale.network === DEVELOPMENT_NETWORK;

const TEST_MONEY_MARK = '(test money, development ledger)';

export const STATEMENT_COLUMNS = [
  'time',
  'publisher',
  'product',
  'path',
  'price_usd',
  'amount_atomic',
  'asset',
  'network',
  'pay_to',
  'payer',
  'transaction',
  'credits',
] as const;

const row = (sale: SaleRecord): string[] => [
  sale.at,
  sale.publisherId,
  sale.product,
  sale.path,
  sale.priceUsd,
  sale.amountAtomic,
  USDC_ASA_ID,
  sale.network,
  sale.payTo,
  sale.payer,
  sale.transaction,
  String(sale.credits),
];

/** RFC 4180 quoting; a leading formula character is defused so a spreadsheet shows the text, not a formula. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function statementCsv(sales: readonly SaleRecord[]): string {
  return [STATEMENT_COLUMNS.join(','), ...sales.map((sale) => row(sale).map(csvField).join(','))]
    .map((line) => `${line}\r\n`)
    .join('');
}

/** 100000n as "0.100000": every decimal, no unit (the statement says "USDC" itself). */
function sixDecimalUsdc(atomic: bigint): string {
  const unit = 10n ** BigInt(USDC_DECIMALS);
  return `${atomic / unit}.${(atomic % unit).toString().padStart(USDC_DECIMALS, '0')}`;
}

export interface StatementTotals {
  sales: number;
  credits: number;
  amountAtomic: bigint;
}

export function statementTotals(sales: readonly SaleRecord[]): StatementTotals {
  return sales.reduce(
    (totals, sale) => ({
      sales: totals.sales + 1,
      credits: totals.credits + sale.credits,
      amountAtomic: totals.amountAtomic + BigInt(sale.amountAtomic),
    }),
    { sales: 0, credits: 0, amountAtomic: 0n },
  );
}

const saleLine = (s: SaleRecord): string =>
  `${s.at}  ${s.product}  ${s.priceUsd} USDC  pay_to ${s.payTo}  payer ${s.payer}  tx ${s.transaction}  ` +
  `credits ${s.credits}${isTestSale(s) ? `  ${TEST_MONEY_MARK}` : ''}`;

/**
 * Human-readable lines: one per sale (with the address it paid; a test sale marked), then the totals: real sales
 * (what was paid directly to the publisher), and, when there are any, test sales apart.
 */
export function statementText(publisherId: string, sales: readonly SaleRecord[], since?: string): string[] {
  const real = statementTotals(sales.filter((sale) => !isTestSale(sale)));
  const test = statementTotals(sales.filter(isTestSale));
  return [
    `statement of publisher ${publisherId}${since ? ` since ${since}` : ''}`,
    ...sales.map(saleLine),
    `${real.sales} sale(s), ${sixDecimalUsdc(real.amountAtomic)} USDC paid directly to the publisher, ` +
      `${real.credits} credit(s) consumed`,
    ...(test.sales > 0
      ? [
          `${test.sales} test sale(s), ${sixDecimalUsdc(test.amountAtomic)} USDC of test money on the development ` +
            `ledger (not paid to the publisher), ${test.credits} credit(s) consumed`,
        ]
      : []),
  ];
}
