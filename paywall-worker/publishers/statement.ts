// A publisher's statement: every sale made through its storefront, with what it needs to reconcile with the chain
// (the transaction id, the address paid, the payer, the exact amount in USDC atomic units), and every grant or
// withdrawal of credits with the operator's note (an invoice number), to reconcile with what the publisher bought.
// Pure formatting.
// Sales settled by the development facilitator share the ledger with real ones: they are kept apart here by their
// network, `development`, so that test money is never counted as paid to the publisher.
import { USDC_ASA_ID, USDC_DECIMALS } from '../../schemas/paid/terms.ts';
import type { CreditBalance, GrantRecord, SaleRecord } from './credit-ledger.ts';

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

export const GRANT_COLUMNS = ['time', 'publisher', 'credits', 'note'] as const;

/**
 * The credits are written bare, never defused: a signed whole number the ledger made, which a spreadsheet must read
 * as a number (a defused "'-2" would be text and drop out of a sum). The note is operator text: csvField.
 */
const grantRow = (grant: GrantRecord): string =>
  [csvField(grant.at), csvField(grant.publisherId), String(grant.credits), csvField(grant.note ?? '')].join(
    ',',
  );

export function grantsCsv(grants: readonly GrantRecord[]): string {
  return [GRANT_COLUMNS.join(','), ...grants.map(grantRow)].map((line) => `${line}\r\n`).join('');
}

/** Characters JSON quoting leaves as they are that a terminal still acts on: DEL and C1 controls, line breaks, bidi. */
const INVISIBLE_CONTROLS = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A note as one quoted line of text: JSON quoting (newlines, escape sequences and quotes escaped), and the controls
 * it leaves escaped too, so that no note can end the line, move the cursor or reorder what follows.
 */
export const quotedNote = (note: string): string =>
  JSON.stringify(note).replace(
    INVISIBLE_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

const signed = (credits: number): string => (credits > 0 ? `+${credits}` : String(credits));

const grantLine = (grant: GrantRecord): string =>
  `${grant.at}  ${signed(grant.credits)} credit(s)  ${grant.note === null ? 'no note' : quotedNote(grant.note)}`;

export interface CreditTotals {
  granted: number;
  /** Positive: the credits taken back. */
  withdrawn: number;
  /** By every sale, test money included (a test sale consumes a credit as a real one does). */
  consumed: number;
}

export function creditTotals(grants: readonly GrantRecord[], sales: readonly SaleRecord[]): CreditTotals {
  return {
    granted: grants.reduce((sum, g) => sum + Math.max(0, g.credits), 0),
    withdrawn: grants.reduce((sum, g) => sum - Math.min(0, g.credits), 0),
    consumed: sales.reduce((sum, s) => sum + s.credits, 0),
  };
}

/**
 * The line that reconciles the credits: granted - withdrawn - consumed = the balance on the books, held + available.
 * With `since`, the balance before it is what makes the sum (derived from the books, not read). Without, a sum that
 * differs from the balance is said, not hidden: a sale delivered after its credits were withdrawn takes none below 0.
 */
export function creditTotalsLine(totals: CreditTotals, balance: CreditBalance, since?: string): string {
  const net = totals.granted - totals.withdrawn - totals.consumed;
  const opening = since ? `${balance.balance - net} before ${since} + ` : '';
  const line =
    `credits: ${opening}${totals.granted} granted - ${totals.withdrawn} withdrawn - ${totals.consumed} consumed ` +
    `by sales = ${balance.balance} on the books (${balance.reserved} held by sales in progress, ` +
    `${balance.available} available now)`;
  if (since || net === balance.balance) return line;
  return (
    `${line}; the grants and sales listed make ${net}, not ${balance.balance} ` +
    '(a sale delivered after its credits were withdrawn takes none below zero)'
  );
}

/** One line per grant or withdrawal, oldest first (`--grants` prints these alone). */
export function grantsText(publisherId: string, grants: readonly GrantRecord[], since?: string): string[] {
  const { granted, withdrawn } = creditTotals(grants, []);
  return [
    `grants of publisher ${publisherId}${since ? ` since ${since}` : ''}`,
    ...grants.map(grantLine),
    `${grants.length} grant(s) and withdrawal(s): ${granted} credit(s) granted, ${withdrawn} withdrawn`,
  ];
}

/** The statement's text with the grants after the sales, and the line that reconciles the credits. */
export function statementWithGrantsText(
  publisherId: string,
  books: { sales: readonly SaleRecord[]; grants: readonly GrantRecord[]; balance: CreditBalance },
  since?: string,
): string[] {
  return [
    ...statementText(publisherId, books.sales, since),
    ...grantsText(publisherId, books.grants, since).slice(1),
    creditTotalsLine(creditTotals(books.grants, books.sales), books.balance, since),
  ];
}
