// `emi buy PATH` as a reader uses it: the body alone on stdout (so that `| jq` works), every status line on
// stderr, one plain line for each way it can go wrong, and an exit code per outcome (BUY_EXIT_CODES).
import { buyWithDevWallet } from './buy.ts';
import type { BuyResult } from './buy.ts';

/** Exit codes of `emi buy`, documented in the README and in `emi buy --help`. */
export const BUY_EXIT_CODES = {
  /** Paid, settled and the file delivered. */
  paid: 0,
  /** The payment was refused or did not settle: nothing delivered (see the reason on stderr). */
  notSettled: 1,
  /** The path, the base URL or the facilitator URL given is not usable. */
  usage: 2,
  /** The path is free: it answered 200 without asking for payment. Nothing was paid; the body is on stdout. */
  free: 3,
  /** The site or the development facilitator could not be reached. */
  unreachable: 4,
  /** The site answered something other than 402 or 200 (404, 503...), before any payment. */
  refused: 5,
} as const;

export interface BuyCommandOptions {
  path: string;
  baseUrl: string;
  facilitatorUrl: string;
}

export interface BuyIo {
  stdout(text: string): void;
  stderr(line: string): void;
  fetch?: typeof fetch;
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
  if (!httpUrl(options.baseUrl)) {
    return (
      `base URL "${options.baseUrl}" is not an http(s) URL such as http://127.0.0.1:8080 ` +
      '(--base-url or EMI_BASE_URL)'
    );
  }
  if (!httpUrl(options.facilitatorUrl)) {
    return (
      `facilitator URL "${options.facilitatorUrl}" is not an http(s) URL such as http://127.0.0.1:4021 ` +
      '(--facilitator-url or EMI_FACILITATOR_URL)'
    );
  }
  if (buyUrl(options.path, options.baseUrl) === null) {
    return `"${options.path}" is not a path (/api/x402-atlas.php) or an http(s) URL (https://...)`;
  }
  return null;
}

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
  if (code && reasons[code]) return reasons[code];
  return error.message === 'fetch failed' ? (cause?.message ?? 'network error') : null;
}

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
  const doFetch = io.fetch ?? fetch;
  // Asked once without payment first: a free path or a missing file is said plainly, and no wallet is funded.
  let probe: Response;
  try {
    probe = await doFetch(url);
  } catch (error) {
    const reason = networkReason(error);
    if (reason === null) throw error;
    io.stderr(
      `emi buy: cannot reach ${new URL(url).origin} (${reason}); is \`emi up\` running, or is --base-url wrong?`,
    );
    return BUY_EXIT_CODES.unreachable;
  }
  const probeText = await probe.text();
  if (probe.status === 200) {
    io.stderr(`emi buy: ${url} is free (200 without a payment request): nothing was paid`);
    io.stdout(probeText.endsWith('\n') ? probeText : `${probeText}\n`);
    return BUY_EXIT_CODES.free;
  }
  if (probe.status !== 402) {
    const body = safeJson(probeText);
    const detail = errorField(body, 'message') ?? probeText.slice(0, 200).trim();
    io.stderr(`emi buy: ${url} answered ${probe.status} before any payment${detail ? `: ${detail}` : ''}`);
    return BUY_EXIT_CODES.refused;
  }

  io.stderr(
    `emi buy: paying with test money on the local ledger (development facilitator ${options.facilitatorUrl}); ` +
      'no real USDC moves',
  );
  let result: BuyResult;
  try {
    result = await buyWithDevWallet({ url, facilitatorUrl: options.facilitatorUrl });
  } catch (error) {
    const reason = networkReason(error);
    if (reason === null) throw error;
    io.stderr(
      `emi buy: cannot reach the development facilitator at ${options.facilitatorUrl} (${reason}); start ` +
        '`emi up`, or set --facilitator-url',
    );
    return BUY_EXIT_CODES.unreachable;
  }
  io.stderr(`emi buy: status ${result.status}, payer ${result.payer}`);
  if (result.status === 200 && result.transaction) {
    io.stderr(`emi buy: settled, transaction ${result.transaction}`);
    io.stdout(bodyText(result.body));
    return BUY_EXIT_CODES.paid;
  }
  const reason =
    result.settlement?.errorReason ?? errorField(result.body, 'error') ?? errorField(result.body, 'message');
  io.stderr(`emi buy: not settled${reason ? `: ${reason}` : ''}; nothing was delivered`);
  const transaction = errorField(result.body, 'transaction');
  if (transaction)
    io.stderr(`emi buy: the payment may have settled as ${transaction}: retry to receive the file`);
  return BUY_EXIT_CODES.notSettled;
}

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
  '  2  the path, --base-url or --facilitator-url is not usable (nothing was asked or paid)',
  '  3  the path is free: nothing was paid (the body is on stdout)',
  '  4  the site or the development facilitator cannot be reached',
  '  5  the site answered neither 402 nor 200 (e.g. 404, 503) before any payment',
].join('\n');
