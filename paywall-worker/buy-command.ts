// `emi buy PATH` as a reader uses it: the body alone on stdout (so that `| jq` works), every status line on
// stderr, one plain line for each way it can go wrong, and an exit code per outcome (BUY_EXIT_CODES).
// One purchase signs one payment. Once it has been sent the buyer may be charged whatever comes back, so until the
// site answers definitely (the file, or a refusal) the same PAYMENT-SIGNATURE is sent again, never a new one: the
// paywall delivers a settled payment again to the same header and settles one payment at most once. When the
// retries run out, the header is handed over (a file and the command that sends it) so the file can be collected
// later (README "Decisions": a client retries with the payment it kept).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import {
  FundingRefused,
  PAID_REQUEST_TIMEOUT_MS,
  UNPAID_REQUEST_TIMEOUT_MS,
  sendSignedPayment,
  signDevPayment,
} from './buy.ts';
import { apiUrlProblem } from './config.ts';
import type { PaidAttempt, SignedPayment } from './buy.ts';
import { formatUsdc } from '../generator/buyer/challenge.ts';
import { refusedBeforeSettling } from '../schemas/paid/not-for-sale.ts';
import { retryAfterSeconds } from '../schemas/retry-after.ts';
import { IN_FLIGHT_LEASE_MS } from './payment-book.ts';

/** Exit codes of `emi buy`, documented in the README and in `emi buy --help`. */
export const BUY_EXIT_CODES = {
  /** Paid, settled and the file delivered. */
  paid: 0,
  /** The payment was refused or did not settle: nothing delivered (see the reason on stderr). */
  notSettled: 1,
  /**
   * The path, the base URL, the facilitator URL, --retry-for or --payment-signature given is not usable, or the
   * facilitator would not fund a development wallet (a production one): nothing was paid.
   */
  usage: 2,
  /** The path is free: it answered 200 without asking for payment. Nothing was paid; the body is on stdout. */
  free: 3,
  /** The site or the development facilitator could not be reached. */
  unreachable: 4,
  /** The site answered something other than 402 or 200 (404, 503...), before any payment. */
  refused: 5,
  /**
   * The payment was sent but its file did not reach stdout: no definite answer came before the retries ran out (it
   * may have settled), or it settled and stdout could not take the file (a full disk, a reader gone). The signed
   * header is kept in a file; `--payment-signature @FILE` sends it again and collects the file (never charged twice).
   */
  paymentKept: 6,
} as const;

/**
 * How long `emi buy` keeps resending a payment without a definite answer, by default: longer than a paywall that was
 * cut short (restarted) holds the payment as in progress (IN_FLIGHT_LEASE_MS), so such a payment is still collected.
 */
export const DEFAULT_RETRY_FOR_SECONDS = IN_FLIGHT_LEASE_MS / 1000 + 30;
/** The longest --retry-for accepted: a payment's validity window is shorter than this anyway. */
const MAX_RETRY_FOR_SECONDS = 3_600;
/** Sends of one payment at most, however long --retry-for is. */
const MAX_SENDS = 20;
/** A server's Retry-After is honoured up to this (the paywall asks for 30 s). */
const MAX_RETRY_AFTER_SECONDS = 30;
/** Waits between sends without a Retry-After: doubling from 1 s up to this. */
const MAX_BACKOFF_SECONDS = 10;

export interface BuyCommandOptions {
  path: string;
  baseUrl: string;
  facilitatorUrl: string;
  /** --retry-for as given: seconds to keep resending the payment (DEFAULT_RETRY_FOR_SECONDS without it). */
  retryFor?: string;
  /** --payment-signature as given: a kept header, or @FILE holding one; sent again instead of paying. */
  paymentSignature?: string;
}

export interface BuyIo {
  /**
   * Writes to stdout. A promise (writeOutput's) is awaited, and rejects when the text could not be written; any other
   * value (a stream's write() boolean, nothing) counts as written.
   */
  stdout(text: string): unknown;
  stderr(line: string): void;
  fetch?: typeof fetch;
  /** How long each request before the payment waits for an answer: UNPAID_REQUEST_TIMEOUT_MS without it. */
  unpaidTimeoutMs?: number;
}

/** `value` as an absolute http(s) URL, or null. */
function httpUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/** A scheme such as `ftp:` or `localhost:` (not a path), or whitespace (not one path). */
const NOT_A_PATH = /^[a-z][a-z0-9+.-]*:|\s/i;

/**
 * A path ("/api/x402-atlas.php", or "api/x402-atlas.php") joined to the base URL, or an http(s) URL as given; null
 * when it is neither, or when the base URL is not an http(s) URL.
 */
export function buyUrl(path: string, baseUrl: string): string | null {
  if (/^https?:\/\//i.test(path)) return httpUrl(path)?.href ?? null;
  if (path === '' || NOT_A_PATH.test(path) || !httpUrl(baseUrl)) return null;
  return httpUrl(`${baseUrl.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}`)?.href ?? null;
}

/** What makes the command line unusable, as one line naming the value (exit code 2), or null. */
export function buyUsageProblem(options: BuyCommandOptions): string | null {
  const base = httpUrl(options.baseUrl);
  if (!base) {
    return (
      `base URL "${options.baseUrl}" is not an http(s) URL such as http://127.0.0.1:8080 ` +
      '(--base-url or EMI_BASE_URL)'
    );
  }
  // Paths are appended to both: a query or a fragment would swallow them, and fetch refuses user:pass@. The value
  // is not repeated, since it may hold a secret.
  const baseProblem = apiUrlProblem(base);
  if (baseProblem) return `the base URL (--base-url or EMI_BASE_URL) ${baseProblem}`;
  const facilitator = httpUrl(options.facilitatorUrl);
  if (!facilitator) {
    return (
      `facilitator URL "${options.facilitatorUrl}" is not an http(s) URL such as http://127.0.0.1:4021 ` +
      '(--facilitator-url or EMI_FACILITATOR_URL)'
    );
  }
  const facilitatorProblem = apiUrlProblem(facilitator);
  if (facilitatorProblem)
    return `the facilitator URL (--facilitator-url or EMI_FACILITATOR_URL) ${facilitatorProblem}`;
  // The x402 AVM client asks its algod (here the facilitator) at the URL's origin, whatever path follows it.
  if (facilitator.pathname !== '/') {
    return (
      'the facilitator URL (--facilitator-url or EMI_FACILITATOR_URL) must be an origin such as ' +
      'http://127.0.0.1:4021, without a path: the payment client reads /v2/transactions/params from the origin'
    );
  }
  if (buyUrl(options.path, options.baseUrl) === null) {
    return `"${options.path}" is not a path (/api/x402-atlas.php) or an http(s) URL (https://...)`;
  }
  if (retryForSeconds(options.retryFor) === null) {
    return `--retry-for "${options.retryFor}" is not a whole number of seconds from 0 to ${MAX_RETRY_FOR_SECONDS}`;
  }
  return null;
}

/** --retry-for in seconds (the default without one), or null when it is not a whole number in range. */
export function retryForSeconds(value: string | undefined): number | null {
  if (value === undefined) return DEFAULT_RETRY_FOR_SECONDS;
  if (!/^\d+$/.test(value.trim())) return null;
  const seconds = Number(value);
  return seconds <= MAX_RETRY_FOR_SECONDS ? seconds : null;
}

const NO_ANSWER_IN_TIME = 'no answer in time';

/** A timeout as said on stderr: "30 s" (a shortened one in tests: "0.05 s"). */
const seconds = (ms: number): string => `${ms / 1000} s`;

/** "connection refused" / "host not found" from undici's `fetch failed`, whose reason sits in `cause`. */
export function networkReason(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'timed out',
    UND_ERR_CONNECT_TIMEOUT: 'timed out',
  };
  if (error.name === 'TimeoutError') return NO_ANSWER_IN_TIME; // our own AbortSignal.timeout
  if (code && reasons[code]) return reasons[code];
  return error.message === 'fetch failed' ? (cause?.message ?? 'network error') : null;
}

/** Why a write failed, for one line: "ENOSPC: no space left on device, write". */
const writeFault = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const bodyText = (body: unknown): string =>
  typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`;

const errorField = (body: unknown, field: string): string | undefined => {
  const value = (body as Record<string, unknown> | null)?.[field];
  return typeof value === 'string' ? value : undefined;
};

/** Runs one purchase and returns the exit code. Never throws for a reader's mistake or a network failure. */
export async function runBuy(options: BuyCommandOptions, io: BuyIo): Promise<number> {
  // Checked before anything is asked: nothing is fetched, funded or paid with a bad value.
  const problem = buyUsageProblem(options);
  if (problem !== null) {
    io.stderr(`emi buy: ${problem}`);
    return BUY_EXIT_CODES.usage;
  }
  const url = buyUrl(options.path, options.baseUrl)!;
  const retryFor = retryForSeconds(options.retryFor)!;
  if (options.paymentSignature !== undefined) {
    const kept = await readKeptPayment(options.paymentSignature);
    if ('problem' in kept) {
      io.stderr(`emi buy: ${kept.problem}`);
      return BUY_EXIT_CODES.usage;
    }
    io.stderr('emi buy: sending the kept PAYMENT-SIGNATURE again: nothing new is signed or paid');
    return deliver({ url, header: kept.header, keptFile: kept.file, retryFor, options, io });
  }
  const unpaid = { fetch: io.fetch ?? fetch, timeoutMs: io.unpaidTimeoutMs ?? UNPAID_REQUEST_TIMEOUT_MS };
  // Asked once without payment first: a free path or a missing file is said plainly, and no wallet is funded.
  // The timeout covers the body too: a site that sends headers and then stalls is as unreachable.
  let probe: Response;
  let probeText: string;
  try {
    probe = await unpaid.fetch(url, { signal: AbortSignal.timeout(unpaid.timeoutMs) });
    probeText = await probe.text();
  } catch (error) {
    const reason = networkReason(error);
    if (reason === null) throw error;
    const origin = new URL(url).origin;
    io.stderr(
      reason === NO_ANSWER_IN_TIME
        ? `emi buy: no answer from ${origin} within ${seconds(unpaid.timeoutMs)} (it took the connection but did ` +
            'not answer); nothing was paid'
        : `emi buy: cannot reach ${origin} (${reason}); is \`emi up\` running, or is --base-url wrong?`,
    );
    return BUY_EXIT_CODES.unreachable;
  }
  if (probe.status === 200) {
    io.stderr(`emi buy: ${url} is free (200 without a payment request): nothing was paid`);
    try {
      await io.stdout(probeText.endsWith('\n') ? probeText : `${probeText}\n`);
    } catch (error) {
      // Nothing was paid: said as the CLI says any output it cannot write; a reader gone (EPIPE) stays quiet.
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') return BUY_EXIT_CODES.free;
      io.stderr(`emi buy: cannot write the output: ${writeFault(error)}; nothing was paid`);
      return BUY_EXIT_CODES.notSettled;
    }
    return BUY_EXIT_CODES.free;
  }
  if (probe.status !== 402) {
    const body = safeJson(probeText);
    // A JSON error's message, else the first line of a text body; an HTML page is named, never printed.
    const text = probeText.trim();
    const detail =
      errorField(body, 'message') ??
      (text.startsWith('<') ? '(an HTML page)' : (text.split('\n')[0] ?? '').slice(0, 200));
    io.stderr(`emi buy: ${url} answered ${probe.status} before any payment${detail ? `: ${detail}` : ''}`);
    return BUY_EXIT_CODES.refused;
  }

  io.stderr(
    `emi buy: paying with test money on the local ledger (development facilitator ${options.facilitatorUrl}); ` +
      'no real USDC moves',
  );
  // Only funding and signing talk to the facilitator: a failure after the payment is sent is the site's.
  let payment: SignedPayment;
  try {
    const challenge = { header: (name: string) => probe.headers.get(name), bodyText: probeText };
    payment = await signDevPayment(challenge, options.facilitatorUrl, unpaid);
  } catch (error) {
    if (error instanceof FundingRefused) {
      io.stderr(`emi buy: ${error.message} Nothing was signed or paid.`);
      return BUY_EXIT_CODES.usage;
    }
    const reason = networkReason(error);
    if (reason === null) throw error;
    io.stderr(
      reason === NO_ANSWER_IN_TIME
        ? `emi buy: no answer from the development facilitator at ${options.facilitatorUrl} within ` +
            `${seconds(unpaid.timeoutMs)} (it took the connection but did not answer); nothing was signed or paid`
        : `emi buy: cannot reach the development facilitator at ${options.facilitatorUrl} (${reason}); start ` +
            '`emi up`, or set --facilitator-url',
    );
    return BUY_EXIT_CODES.unreachable;
  }
  // The price comes from the 402 itself (a storefront may ask more than the base price): said before it is sent.
  io.stderr(
    `emi buy: payer ${payment.payer} signed one payment of ${formatUsdc(payment.amountAtomic)} ` +
      `(${payment.amountAtomic} atomic units of test money: the price asked, and the most it could sign); ` +
      'a retry sends this same payment',
  );
  return deliver({ url, header: payment.header, keptFile: null, retryFor, options, io });
}

/** What one answer to a sent payment means for the buyer. */
type Outcome =
  | { kind: 'delivered'; body: unknown; transaction: string | null }
  /** A definite no: the payment did not settle and never will from this header. */
  | { kind: 'refused'; reason: string | undefined }
  /** No definite answer: sending the same header again may deliver the file. */
  | { kind: 'retry'; why: string; waitSeconds: number | null; transaction: string | undefined }
  /** No answer, for a reason a resend cannot be expected to mend (not a network failure). */
  | { kind: 'stuck'; why: string; transaction: undefined };

/** Reads one send's result; `origin` names the site in what is said. */
export function readOutcome(attempt: PaidAttempt, origin: string, now = Date.now()): Outcome {
  if (attempt.kind === 'no-answer') {
    const reason = networkReason(attempt.error);
    const error = attempt.error instanceof Error ? attempt.error.message : String(attempt.error);
    if (reason === null) {
      return { kind: 'stuck', why: `sending the payment failed (${error})`, transaction: undefined };
    }
    const what =
      reason === 'connection refused'
        ? `cannot reach ${origin} (connection refused)`
        : reason === NO_ANSWER_IN_TIME
          ? `no answer from ${origin} within ${PAID_REQUEST_TIMEOUT_MS / 1000} s after the payment was sent`
          : `${origin} dropped the connection after the payment was sent (${reason})`;
    return {
      kind: 'retry',
      why: `${what}; the payment may have settled`,
      waitSeconds: null,
      transaction: undefined,
    };
  }
  const { status, body, settlement } = attempt;
  const code = errorField(body, 'error');
  const transaction = errorField(body, 'transaction') ?? (settlement?.transaction || undefined);
  if (status === 200) {
    return { kind: 'delivered', body, transaction: settlement?.success ? settlement.transaction : null };
  }
  if (refusedBeforeSettling(status, code, transaction)) {
    // Refused before anything was settled (stale data, a missing file...): a resend cannot help, nothing was charged.
    return { kind: 'refused', reason: `${code} (nothing was charged)` };
  }
  if (status === 409) {
    // This signature's payment id belongs to another payment: refused before anything was settled (README
    // "Decisions": one payment id, one payment). The site's message names that payment.
    const said = errorField(body, 'message');
    return { kind: 'refused', reason: `${code ?? status} (nothing was charged)${said ? `: ${said}` : ''}` };
  }
  const answered = `${origin} answered ${status}${code ? ` ${code}` : ''}`;
  const stillSettling = code === 'payment_in_progress'; // 503; 402 from a paywall of an earlier version
  if (stillSettling || status === 408 || status === 429 || status >= 500) {
    const why = stillSettling
      ? `${answered}: it is still settling this payment`
      : `${answered} after the payment was sent; the payment may have settled`;
    return {
      kind: 'retry',
      why,
      waitSeconds: retryAfterSeconds(attempt.retryAfter, now, MAX_RETRY_AFTER_SECONDS),
      transaction,
    };
  }
  // A 402 (a failed settlement, a refused payment) or another client error: the site will not take this payment.
  const reason = settlement?.errorReason ?? code ?? errorField(body, 'message');
  return { kind: 'refused', reason: reason ?? `${status}` };
}

/** Seconds to wait before send number `send` + 1: the server's Retry-After, else doubling from 1 s. */
export const waitBeforeResend = (send: number, retryAfter: number | null): number =>
  retryAfter ?? Math.min(MAX_BACKOFF_SECONDS, 2 ** (send - 1));

interface Delivery {
  url: string;
  header: string;
  /** Where the header is kept: the reader's own @FILE, or one written here once a resend is needed. */
  keptFile: string | null;
  retryFor: number;
  options: BuyCommandOptions;
  io: BuyIo;
}

/**
 * Sends the signed header until a definite answer (the file: exit 0; a refusal: exit 1), resending the same bytes
 * after a lost or unsettled answer within --retry-for and MAX_SENDS. Without one, hands the header over (exit 6).
 */
async function deliver(delivery: Delivery): Promise<number> {
  const { url, header, retryFor, io } = delivery;
  const origin = new URL(url).origin;
  const deadline = Date.now() + retryFor * 1000;
  let keptFile = delivery.keptFile;
  let transaction: string | undefined;
  for (let send = 1; ; send++) {
    const outcome = readOutcome(await sendSignedPayment(url, header, io.fetch ?? fetch), origin);
    if (outcome.kind === 'delivered') {
      io.stderr(
        outcome.transaction
          ? `emi buy: settled, transaction ${outcome.transaction}`
          : 'emi buy: delivered (the site sent no settlement details)',
      );
      try {
        await io.stdout(bodyText(outcome.body));
      } catch (error) {
        // Paid, and the file lost on the way out: the payment is kept as for a lost answer, never a reason to pay
        // again (the paywall delivers a settled payment again to the same header).
        keptFile ??= await keepPayment(header);
        io.stderr(undeliveredLine({ ...delivery, keptFile }, outcome.transaction, writeFault(error)));
        return BUY_EXIT_CODES.paymentKept;
      }
      // Removed only once the file is written: until then the kept payment is the way to collect it.
      await dropKeptFile(keptFile, delivery.keptFile);
      return BUY_EXIT_CODES.paid;
    }
    if (outcome.kind === 'refused') {
      io.stderr(`emi buy: not settled${outcome.reason ? `: ${outcome.reason}` : ''}; nothing was delivered`);
      await dropKeptFile(keptFile, delivery.keptFile);
      return BUY_EXIT_CODES.notSettled;
    }
    transaction = outcome.transaction ?? transaction;
    keptFile ??= await keepPayment(header);
    const left = Math.floor((deadline - Date.now()) / 1000);
    if (outcome.kind === 'stuck' || left <= 0 || send >= MAX_SENDS) {
      io.stderr(`emi buy: ${outcome.why}`);
      handOver({ ...delivery, keptFile, transaction, sends: send });
      return BUY_EXIT_CODES.paymentKept;
    }
    const wait = Math.min(waitBeforeResend(send, outcome.waitSeconds), left);
    io.stderr(
      `emi buy: ${outcome.why}. Resending the same PAYMENT-SIGNATURE in ${wait} s ` +
        `(send ${send + 1} of at most ${MAX_SENDS}, within ${retryFor} s)`,
    );
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

/** Says the payment may have settled, where its header is kept and the command that collects the file with it. */
function handOver(
  state: Delivery & { keptFile: string | null; transaction: string | undefined; sends: number },
): void {
  const { io, keptFile, transaction, sends } = state;
  io.stderr(
    `emi buy: no file after ${sends} send${sends === 1 ? '' : 's'} of the same payment; it may have settled` +
      `${transaction ? ` as ${transaction}` : ''}. Do not buy again: send this payment again later, it is ` +
      'never charged twice.',
  );
  if (keptFile) io.stderr(`emi buy: the signed payment is kept in ${keptFile}; collect the file with:`);
  else io.stderr('emi buy: the signed payment could not be written to a file; collect the file with:');
  io.stderr(`  ${collectCommand(state, keptFile)}`);
}

/** The command that sends the kept payment again: `emi buy PATH [--base-url URL] --payment-signature @FILE`. */
function collectCommand(state: Delivery, keptFile: string | null): string {
  const { options } = state;
  const signature = keptFile ? `@${keptFile}` : state.header;
  const base = /^https?:\/\//i.test(options.path) ? [] : ['--base-url', options.baseUrl];
  return ['emi', 'buy', options.path, ...base, '--payment-signature', signature].map(shellWord).join(' ');
}

/** One line: paid, the file not written to stdout (why), and the command that collects it with the kept payment. */
function undeliveredLine(state: Delivery, transaction: string | null, fault: string): string {
  const paid = transaction ? `settled as transaction ${transaction}` : 'no settlement details';
  const kept = state.keptFile
    ? `the payment is kept in ${state.keptFile}`
    : 'the payment could not be written to a file';
  return (
    `emi buy: paid (${paid}) but the file could not be written to stdout (${fault}); ${kept}: do not buy ` +
    `again, collect the file, never charged twice, with: ${collectCommand(state, state.keptFile)}`
  );
}

/** Writes the header to a new private file (a bearer of the purchase: whoever sends it gets the file). */
async function keepPayment(header: string): Promise<string | null> {
  try {
    const dir = await mkdtemp(join(tmpdir(), 'emi-buy-'));
    const file = join(dir, 'payment-signature.txt');
    await writeFile(file, `${header}\n`, { mode: 0o600 });
    return file;
  } catch {
    return null; // handOver then prints the header itself
  }
}

/** The file keepPayment writes: `<tmpdir>/emi-buy-XXXXXX/payment-signature.txt`. */
const isKeptByUs = (file: string): boolean =>
  /^emi-buy-[A-Za-z0-9]{6}$/.test(basename(dirname(file))) &&
  basename(file) === 'payment-signature.txt' &&
  resolve(dirname(dirname(file))) === resolve(tmpdir());

/**
 * Removes a file keepPayment wrote once the answer is definite, also when it came back as --payment-signature
 * (a signed payment left lying in /tmp could collect the file again within the hour); a reader's own file is left.
 */
async function dropKeptFile(file: string | null, readersFile: string | null): Promise<void> {
  if (file === null || (file === readersFile && !isKeptByUs(file))) return;
  await rm(dirname(file), { recursive: true, force: true }).catch(() => undefined);
}

/** --payment-signature: the header itself, or @FILE holding it; checked to be an x402 payment. */
export async function readKeptPayment(
  value: string,
): Promise<{ header: string; file: string | null } | { problem: string }> {
  const file = value.startsWith('@') ? value.slice(1) : null;
  let header = value;
  if (file !== null) {
    try {
      header = await readFile(file, 'utf8');
    } catch (error) {
      return { problem: `--payment-signature: cannot read ${file} (${(error as Error).message})` };
    }
  }
  header = header.trim();
  try {
    decodePaymentSignatureHeader(header);
  } catch {
    return {
      problem:
        `--payment-signature${file === null ? '' : ` (${file})`} is not a PAYMENT-SIGNATURE header ` +
        '(the base64 x402 payment that `emi buy` kept)',
    };
  }
  return { header, file };
}

/** A word as a POSIX shell reads it back: as it is when plain, else single-quoted. */
const shellWord = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The exit codes as help text. */
export const BUY_EXIT_HELP = [
  'Exit codes:',
  '  0  paid, settled and delivered (the body is on stdout)',
  '  1  the payment was refused or did not settle (nothing delivered)',
  '  2  the path, --base-url, --facilitator-url, --retry-for or --payment-signature is not usable, or the',
  '     facilitator is not a development one (nothing was paid)',
  '  3  the path is free: nothing was paid (the body is on stdout)',
  '  4  the site or the development facilitator cannot be reached (before any payment was sent)',
  '  5  the site answered neither 402 nor 200 (e.g. 404, 503) before any payment',
  '  6  the payment was sent but its file did not reach stdout: no definite answer came (it may have settled),',
  '     or it settled and stdout could not take the file (a full disk, a reader gone); the signed payment is',
  '     kept in a file named on stderr; `emi buy PATH --payment-signature @FILE` collects the file, never',
  '     paying twice',
].join('\n');
