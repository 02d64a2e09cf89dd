// The x402 v2 exchange with the paywall, without any DOM: ask for the report, read and check the 402, sign once,
// send PAYMENT-SIGNATURE, read the answer. Every failure comes back as a `Problem` worded for people.
//
// No double charge on retry: once the wallet has signed, the PAYMENT-SIGNATURE header is kept (in memory and in
// sessionStorage, so a reload keeps it too) and every retry of the same request resends those exact bytes. The same
// signed transaction has one id and can land on the ledger at most once, and it expires after its validity window.
// The kept payment is dropped only when the server has given a definite answer (200, a 402 refusal other than
// "this payment is still being processed", or a refusal to sell the file that names no transaction: see notForSale).
// A 409 (its payment id belongs to another payment) refuses only the signature sent: the kept payment stays.
import type { ChallengeCheck, PaymentRequirement } from '../../../generator/buyer/challenge.ts';
import { checkChallenge } from '../../../generator/buyer/challenge.ts';
import type { ChallengeSource } from '../../../generator/buyer/x402-codec.ts';
import { decodeBase64Json, encodeBase64Json, readChallenge } from '../../../generator/buyer/x402-codec.ts';
import {
  HUMAN_REPORT_AMOUNT,
  HUMAN_REPORT_PATH,
  USDC_ASSET_ID,
} from '../../../generator/buyer/human-report-terms.ts';
import type { LedgerParams } from './ledger-params.ts';
import { WrongNetworkError, parseAlgodParams } from './ledger-params.ts';
import { refusedBeforeSettling } from '../../../schemas/paid/not-for-sale.ts';
import { retryAfterSeconds as secondsFromRetryAfter } from '../../../schemas/retry-after.ts';
import { newPaymentId, PAYMENT_IDENTIFIER } from '../../../schemas/paid/payment-identifier.ts';
import type { DataFacts } from './data-mode.ts';
import { readDataFacts } from './data-mode.ts';
import type { BuyerWallet } from './wallets/types.ts';
import { WalletError } from './wallets/types.ts';

export type ProblemKind =
  | 'wallet-rejected'
  | 'wallet-closed'
  | 'wrong-network'
  | 'wallet-unavailable'
  | 'facilitator-unavailable'
  | 'not-for-sale'
  | 'settlement-refused'
  | 'payment-refused'
  | 'payment-in-progress'
  | 'timeout'
  | 'network'
  | 'server'
  | 'bad-challenge';

export interface Problem {
  kind: ProblemKind;
  message: string;
  /** True when Retry resends the same signed payment (never a new signature). */
  retrySafe: boolean;
  /** Id of the signed transfer, when one exists, so the person can look it up. */
  txId?: string;
  /** The server asked for this long a wait (Retry-After) before the same payment is sent again. */
  retryAfterSeconds?: number;
  /**
   * The refusal is permanent (HTTP 410, a storefront closed for good): no check or retry on this page can change it,
   * so none is offered, and the page points to where the report is still sold.
   */
  final?: true;
}

export interface SettleResponse {
  success: boolean;
  transaction: string;
  network: string;
  payer?: string;
  errorReason?: string;
  errorMessage?: string;
}

export type ChallengeResult =
  | {
      kind: 'challenge';
      source: ChallengeSource;
      paymentRequired: unknown;
      check: ChallengeCheck;
      /** Live, replayed or simulated, and when generated: shown before anything can be paid. */
      data: DataFacts;
    }
  | { kind: 'problem'; problem: Problem };

export interface PendingPayment {
  url: string;
  header: string;
  txId: string;
  requirement: PaymentRequirement;
}

export type PaidResult =
  | {
      kind: 'paid';
      report: unknown;
      rawText: string;
      settlement: SettleResponse | null;
      payment: PendingPayment;
    }
  | { kind: 'problem'; problem: Problem };

export const CHALLENGE_TIMEOUT_MS = 15_000;
/** Settlement waits for on-chain confirmation (a few seconds on mainnet): leave room for a slow facilitator. */
export const PAYMENT_TIMEOUT_MS = 60_000;

const PENDING_KEY = 'x402-buyer:pending:';

/** Kept signed payments, one per URL. */
export const pendingPayments = {
  load(url: string): PendingPayment | null {
    try {
      const raw = sessionStorage.getItem(PENDING_KEY + url);
      return raw ? (JSON.parse(raw) as PendingPayment) : null;
    } catch {
      return null;
    }
  },
  save(payment: PendingPayment): void {
    sessionStorage.setItem(PENDING_KEY + payment.url, JSON.stringify(payment));
  },
  clear(url: string): void {
    sessionStorage.removeItem(PENDING_KEY + url);
  },
};

async function fetchWithTimeout(
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<Response | Problem> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    return await fetch(url, { ...init, cache: 'no-store', signal: controller.signal });
  } catch {
    return controller.signal.aborted
      ? {
          kind: 'timeout',
          message: `The server did not answer within ${timeoutMs / 1000} seconds.`,
          retrySafe: true,
        }
      : { kind: 'network', message: 'The server could not be reached (network error).', retrySafe: true };
  } finally {
    clearTimeout(timer);
  }
}

const isProblem = (value: Response | Problem): value is Problem => !(value instanceof Response);

/** The longest wait the page counts down for a server's Retry-After: ten minutes. */
const MAX_RETRY_AFTER_SECONDS = 600;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), kept within 1..600; null without one. */
export const retryAfterSeconds = (header: string | null, now = Date.now()): number | null =>
  secondsFromRetryAfter(header, now, MAX_RETRY_AFTER_SECONDS);

/** An earlier send of these same bytes is still being settled: keep them, a resend cannot charge twice. */
const inProgress = (txId: string, wait: number | null): PaidResult => ({
  kind: 'problem',
  problem: {
    kind: 'payment-in-progress',
    message:
      'The server is still processing this signed payment from an earlier attempt. ' +
      (wait ? `Try again in about ${wait} seconds` : 'Try again in a moment') +
      ': Retry sends the same signed payment, which cannot be charged twice.',
    retrySafe: true,
    txId,
    ...(wait ? { retryAfterSeconds: wait } : {}),
  },
});

/** A payment signed on this tab before a reload, with no final answer (paid or refused) seen by the page. */
export const keptPaymentProblem = (kept: PendingPayment): Problem => ({
  kind: 'timeout',
  message:
    'A payment signed earlier on this tab has no final answer yet: this page saw neither the report nor a ' +
    'refusal for it. Retry sends that same payment; it cannot be charged twice.',
  retrySafe: true,
  txId: kept.txId,
});

interface ErrorBody {
  code: string | null;
  /** The body's message (else its code); empty when the body is not JSON. */
  message: string;
  /** The transaction the body names (the paywall's `transaction`): the payment may have been settled. */
  transaction: string | null;
}

/**
 * The error code, message and transaction of a JSON error body. Anything else (an HTML error page from a proxy or a
 * host in between) is not shown: the caller says what happened with the HTTP status instead of raw markup.
 */
async function readErrorBody(response: Response): Promise<ErrorBody> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown; transaction?: unknown };
    const code = typeof body.error === 'string' ? body.error : null;
    const message = typeof body.message === 'string' ? body.message : code;
    const transaction = typeof body.transaction === 'string' && body.transaction ? body.transaction : null;
    if (message !== null) return { code, message, transaction };
  } catch {
    // not JSON
  }
  return { code: null, message: '', transaction: null };
}

const bodyMessage = async (response: Response): Promise<string> => (await readErrorBody(response)).message;

/** A bare machine code such as `invalid_exact_avm_payload_signature`, sent where a readable message was expected. */
const isMachineCode = (text: string): boolean => /^[a-z0-9_]+$/.test(text);

/** The text as a sentence of its own: trimmed, ending with a full stop unless it already ends a sentence. */
const asSentence = (text: string): string => {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
};

/** The server's words after a colon, or the status alone when it gave none (an HTML page, an empty body). */
const refusalReason = (message: string): string => (message ? `: ${asSentence(message)}` : ' (HTTP 402).');

/** `HTTP 503` alone, or followed by the server's words when it gave some. */
const httpDetail = (status: number, detail: string): string =>
  detail.trim() ? `HTTP ${status}: ${detail.trim()}` : `HTTP ${status}`;

/** A refusal to sell the file that settled nothing (schemas/paid/not-for-sale.ts): nothing to keep or resend. */
const notForSale = (status: number, body: ErrorBody): boolean =>
  refusedBeforeSettling(status, body.code, body.transaction);

/** Why a price check got no payment request: a plain sentence, the server's own words, then the HTTP detail. */
function notForSaleMessage(status: number, serverMessage: string): string {
  const lead = 'This report cannot be bought here right now';
  const said = serverMessage.trim();
  if (!said) return `${lead} (HTTP ${status}).`;
  if (isMachineCode(said)) return `${lead} (code: ${said}, HTTP ${status}).`;
  return `${lead}. ${asSentence(said)} (HTTP ${status})`;
}

/** HTTP 410 Gone: the sale point was closed for good (a publisher's `seller_closed`); asking again cannot help. */
const GONE = 410;
/** HTTP 409 Conflict: the payment's id belongs to another payment (`payment_id_conflict`); this one was refused. */
const CONFLICT = 409;

/**
 * Why a price check met a permanent refusal, in the page's own words: the server's message names its API path,
 * not a page a person can buy from (the page links to the site's own buyer page instead, see main.ts).
 */
function closedMessage(code: string | null): string {
  const lead =
    code === 'seller_closed'
      ? 'This storefront no longer sells this report: its publisher has closed it'
      : 'This report is no longer sold here';
  return `${lead} (HTTP ${GONE}). No payment was requested and nothing was charged.`;
}

/**
 * Asks for the report without paying and checks the 402 challenge against the page's terms: the configured payee,
 * the exact amount (the base price unless config.json names a publisher's) and the path the page asked for.
 */
export async function requestChallenge(
  url: string,
  merchantAddress: string,
  amount: string = HUMAN_REPORT_AMOUNT,
): Promise<ChallengeResult> {
  const response = await fetchWithTimeout(
    url,
    { headers: { Accept: 'application/json' } },
    CHALLENGE_TIMEOUT_MS,
  );
  if (isProblem(response)) return { kind: 'problem', problem: response };
  if (response.status === GONE) {
    const { code } = await readErrorBody(response);
    return {
      kind: 'problem',
      problem: { kind: 'not-for-sale', message: closedMessage(code), retrySafe: false, final: true },
    };
  }
  if (response.status !== 402) {
    return {
      kind: 'problem',
      problem: {
        kind: response.status >= 500 ? 'facilitator-unavailable' : 'server',
        message: notForSaleMessage(response.status, await bodyMessage(response)),
        retrySafe: true,
      },
    };
  }
  const bodyText = await response.text();
  const read = readChallenge(response.headers.get('PAYMENT-REQUIRED'), bodyText);
  if ('error' in read)
    return { kind: 'problem', problem: { kind: 'bad-challenge', message: read.error, retrySafe: true } };
  const check = checkChallenge(read.paymentRequired, {
    amount,
    asset: USDC_ASSET_ID,
    payTo: merchantAddress,
    resourcePath: URL.canParse(url) ? new URL(url).pathname : HUMAN_REPORT_PATH,
  });
  return {
    kind: 'challenge',
    source: read.source,
    paymentRequired: read.paymentRequired,
    check,
    data: readDataFacts(read.paymentRequired, bodyText),
  };
}

export class ParamsUnavailableError extends Error {}

export async function fetchLedgerParams(algodUrl: string): Promise<LedgerParams> {
  const response = await fetchWithTimeout(`${algodUrl}/v2/transactions/params`, {}, CHALLENGE_TIMEOUT_MS);
  if (isProblem(response) || !response.ok) {
    throw new ParamsUnavailableError(
      'The Algorand node that supplies the current round did not answer. Nothing was signed.',
    );
  }
  return parseAlgodParams(await response.json());
}

const randomNonce = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');

/** Builds the group, has the wallet sign the buyer's transfer only, and keeps the resulting header for retries. */
export async function signPayment(
  url: string,
  paymentRequired: { resource?: unknown; extensions?: Record<string, unknown> },
  requirement: PaymentRequirement,
  wallet: BuyerWallet,
  params: LedgerParams,
): Promise<PendingPayment> {
  // With algosdk: imported on demand, so the price check and the offer come without it (about 490 KB).
  const { buildPaymentGroup, checkSignedPayment, encodePaymentGroup } = await import('./payment-group.ts');
  const group = buildPaymentGroup(requirement, wallet.address, params, randomNonce());
  const signed = await wallet.signPayment(group.txns, group.paymentIndex);
  checkSignedPayment(group, signed);
  const header = encodeBase64Json({
    x402Version: 2,
    ...(paymentRequired.resource ? { resource: paymentRequired.resource } : {}),
    accepted: requirement, // verbatim: the server matches it against its own terms
    payload: { paymentGroup: encodePaymentGroup(group, signed), paymentIndex: group.paymentIndex },
    // With an id (kept in the header), a retry after a lost answer collects the file: the signed bytes alone do not,
    // since anyone can copy them from the chain once the payment has landed.
    ...(paymentRequired.extensions?.[PAYMENT_IDENTIFIER]
      ? { extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: newPaymentId() } } } }
      : {}),
  });
  const payment: PendingPayment = { url, header, txId: group.paymentTxId, requirement };
  pendingPayments.save(payment);
  return payment;
}

/** Why a payment could not be prepared or signed, before anything was sent. */
export function preparationProblem(error: unknown): Problem {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof WalletError) {
    const kinds = {
      rejected: 'wallet-rejected',
      closed: 'wallet-closed',
      'wrong-network': 'wrong-network',
      unavailable: 'wallet-unavailable',
    } as const;
    return { kind: kinds[error.failure], message, retrySafe: false };
  }
  if (error instanceof WrongNetworkError) return { kind: 'wrong-network', message, retrySafe: false };
  if (error instanceof ParamsUnavailableError) return { kind: 'network', message, retrySafe: false };
  return {
    kind: 'wallet-unavailable',
    message: `The payment could not be prepared: ${message}`,
    retrySafe: false,
  };
}

function readSettlement(response: Response): SettleResponse | null {
  const header = response.headers.get('PAYMENT-RESPONSE');
  const decoded = header ? decodeBase64Json(header) : null;
  return decoded && typeof decoded === 'object' ? (decoded as SettleResponse) : null;
}

/** Sends a (new or kept) signed payment and interprets the answer. */
export async function sendPayment(payment: PendingPayment): Promise<PaidResult> {
  const response = await fetchWithTimeout(
    payment.url,
    { headers: { Accept: 'application/json', 'PAYMENT-SIGNATURE': payment.header } },
    PAYMENT_TIMEOUT_MS,
  );
  const txId = payment.txId;
  if (isProblem(response)) {
    return {
      kind: 'problem',
      problem: { ...response, message: `${response.message} Your signed payment is kept.`, txId },
    };
  }
  const settlement = readSettlement(response);
  if (response.status === 200) {
    pendingPayments.clear(payment.url);
    const rawText = await response.text();
    try {
      return { kind: 'paid', report: JSON.parse(rawText) as unknown, rawText, settlement, payment };
    } catch {
      return {
        kind: 'problem',
        problem: {
          kind: 'server',
          message: 'The server confirmed payment but sent an unreadable report.',
          retrySafe: false,
          txId,
        },
      };
    }
  }
  if (response.status === 402) {
    if (settlement) {
      pendingPayments.clear(payment.url);
      const why = settlement.errorMessage ?? settlement.errorReason ?? 'no reason given';
      // payment_not_settled: the paywall checked the chain and the payment's window is over, so it never lands.
      const submitted =
        settlement.errorReason === 'payment_not_settled'
          ? ' Its validity window has passed without it landing, so it never will: you were not charged.'
          : settlement.transaction
            ? ' The transaction was submitted and may still land: look it up before paying again.'
            : '';
      return {
        kind: 'problem',
        problem: {
          kind: 'settlement-refused',
          message: `The payment was not settled: ${why}.${submitted}`,
          retrySafe: false,
          txId,
        },
      };
    }
    const refusal = await readErrorBody(response);
    if (refusal.code === 'payment_in_progress') return inProgress(txId, null); // a paywall of an earlier version
    pendingPayments.clear(payment.url);
    const message =
      refusal.code === 'payment_already_used'
        ? 'This signed payment was already presented in an earlier attempt whose answer did not reach this ' +
          'page, and the server takes each payment once. It may have been charged: look the transaction up ' +
          'before paying again.'
        : isMachineCode(refusal.message)
          ? `The payment was refused (code: ${refusal.message}). Check in your wallet that it signed for the ` +
            'account you meant and that this account holds enough USDC, then check the price again. If an ' +
            'earlier attempt timed out, that payment may have gone through: look the transaction up before ' +
            'paying again.'
          : `The server did not accept the signed payment${refusalReason(refusal.message)} If an earlier attempt ` +
            'timed out, that payment may have gone through: look the transaction up before paying again.';
    return { kind: 'problem', problem: { kind: 'payment-refused', message, retrySafe: false, txId } };
  }
  const body = await readErrorBody(response);
  if (response.status === CONFLICT) return { kind: 'problem', problem: idConflictProblem(body, txId) };
  if (response.status === 503 && body.code === 'payment_in_progress')
    return inProgress(txId, retryAfterSeconds(response.headers.get('Retry-After')));
  if (notForSale(response.status, body)) {
    pendingPayments.clear(payment.url);
    return { kind: 'problem', problem: notForSaleProblem(response.status, body) };
  }
  if (response.status === 502 || response.status === 503 || response.status === 504) {
    return {
      kind: 'problem',
      problem: {
        kind: 'facilitator-unavailable',
        message: `The payment service is unavailable right now (${httpDetail(response.status, body.message)}). Your signed payment is kept.`,
        retrySafe: true,
        txId,
      },
    };
  }
  return {
    kind: 'problem',
    problem: {
      kind: 'server',
      message: `The server answered ${httpDetail(response.status, body.message)}`,
      retrySafe: true,
      txId,
    },
  };
}

/**
 * A signature refused before anything was verified or settled, because its payment id belongs to another payment
 * (the server names it): final for this signature, so Retry does not resend it; a payment the page keeps is not
 * dropped (a page signs a new id with every payment, so a 409 here means something is wrong, not that money is safe
 * to forget).
 */
function idConflictProblem(body: ErrorBody, txId: string): Problem {
  const said = body.message ? ` The server said: ${asSentence(body.message)}` : '';
  return {
    kind: 'payment-refused',
    message:
      `The server refused this signed payment before settling it: it was not charged (${httpDetail(CONFLICT, body.code ?? '')}).` +
      `${said} Look up the transaction the server names before paying again.`,
    retrySafe: false,
    txId,
  };
}

/**
 * The file stopped being on sale between the price check and Pay: nothing was charged, the payment is dropped. A
 * refusal for good (410) offers no new price check: it would meet the same refusal.
 */
function notForSaleProblem(status: number, body: ErrorBody): Problem {
  const why = isMachineCode(body.message) ? `code ${body.message}.` : asSentence(body.message);
  const gone = status === GONE;
  return {
    kind: 'not-for-sale',
    message:
      'Nothing was charged: the server refused to sell this report before settling your signed payment, so ' +
      `that payment was not sent on and has been discarded. Why (HTTP ${status}): ${why} ` +
      (gone
        ? 'It is no longer sold here.'
        : 'Check the price again to see whether it is on sale now; a new payment is signed only if you press ' +
          'Pay again.'),
    retrySafe: false,
    ...(gone ? { final: true as const } : {}),
  };
}
