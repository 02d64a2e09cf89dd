// Checks an x402 v2 402 challenge against what the buyer expects to pay, before anything is signed. Pure: no I/O,
// no zod (it runs in the browser bundle and in the tests), every refusal worded for a person.
import { USDC_DECIMALS, isAlgorandMainnet } from './human-report-terms.ts';

/** The part of an x402 v2 `PaymentRequirements` entry the buyer relies on. */
export interface PaymentRequirement {
  scheme: 'exact';
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { feePayer?: string } & Record<string, unknown>;
}

export interface ChallengeExpectations {
  /** Exact price in atomic units. */
  amount: string;
  /** Algorand Standard Asset id. */
  asset: string;
  /** The merchant address this page was configured with. */
  payTo: string;
  /** Path of the resource being bought; the challenge's resource URL must end with it. */
  resourcePath?: string;
}

export type ChallengeCheck = { ok: true; requirement: PaymentRequirement } | { ok: false; reasons: string[] };

const ADDRESS = /^[A-Z2-7]{58}$/;

/**
 * The form of an Algorand address: 58 characters of the base32 alphabet, 290 bits that hold the 36 bytes of a
 * 32-byte public key and its 4-byte checksum (the 2 spare bits are ignored, as algosdk ignores them). Whether the
 * checksum is right needs SHA-512/256, which WebCrypto lacks: algosdk checks it (see the buyer page's payee.ts).
 */
export const isAlgorandAddressForm = (text: string): boolean => ADDRESS.test(text);
const ATOMIC = /^(0|[1-9][0-9]{0,19})$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** 100000 -> "0.10 USDC"; at least two decimals, more when the amount needs them. */
export function formatUsdc(atomic: string): string {
  if (!ATOMIC.test(atomic)) return `${atomic} (not a whole number of units)`;
  const padded = atomic.padStart(USDC_DECIMALS + 1, '0');
  const whole = padded.slice(0, -USDC_DECIMALS);
  const fraction = padded.slice(-USDC_DECIMALS).replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${fraction} USDC`;
}

const short = (address: string): string =>
  address.length > 16 ? `${address.slice(0, 6)}…${address.slice(-6)}` : address;

/** Every way one `accepts` entry differs from the expectations, in plain words. Empty means it matches. */
export function describeMismatches(entry: unknown, expected: ChallengeExpectations): string[] {
  if (!isRecord(entry)) return ['The payment offer is not a JSON object.'];
  const reasons: string[] = [];
  const { scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra } = entry;
  if (scheme !== 'exact') {
    reasons.push(`The offer uses the payment scheme "${String(scheme)}"; this page only pays with "exact".`);
  }
  if (typeof network !== 'string' || !isAlgorandMainnet(network)) {
    reasons.push(`The offer is on the network "${String(network)}", not Algorand mainnet.`);
  }
  if (typeof amount !== 'string' || !ATOMIC.test(amount)) {
    reasons.push(`The price "${String(amount)}" is not a whole number of atomic units.`);
  } else if (amount !== expected.amount) {
    reasons.push(
      `The price asked is ${formatUsdc(amount)} (${amount} units), but this report costs exactly ` +
        `${formatUsdc(expected.amount)} (${expected.amount} units).`,
    );
  }
  if (asset !== expected.asset) {
    reasons.push(`The offer asks for asset ${String(asset)}, not USDC (asset ${expected.asset}).`);
  }
  if (payTo !== expected.payTo) {
    reasons.push(
      `The money would go to ${typeof payTo === 'string' ? short(payTo) : 'an unnamed address'}, not to the ` +
        `merchant address this page was configured with (${short(expected.payTo)}).`,
    );
  }
  if (
    typeof maxTimeoutSeconds !== 'number' ||
    !Number.isInteger(maxTimeoutSeconds) ||
    maxTimeoutSeconds <= 0
  ) {
    reasons.push('The offer has no valid time limit (maxTimeoutSeconds).');
  }
  if (!isRecord(extra)) {
    reasons.push('The offer has no "extra" object.');
  } else if (
    extra.feePayer !== undefined &&
    (typeof extra.feePayer !== 'string' || !isAlgorandAddressForm(extra.feePayer))
  ) {
    reasons.push('The fee payer named in the offer is not an Algorand address.');
  }
  return reasons;
}

function resourceMismatch(paymentRequired: Record<string, unknown>, path: string | undefined): string | null {
  if (path === undefined) return null;
  const resource = paymentRequired.resource;
  const url = isRecord(resource) ? resource.url : undefined;
  if (typeof url !== 'string') return 'The challenge does not say which resource it is for.';
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return `The challenge names a resource that is not a URL ("${url}").`;
  }
  return pathname.endsWith(path) ? null : `The challenge is for ${pathname}, not for ${path}.`;
}

/**
 * Accepts the challenge only if it is x402 version 2, is for the expected resource, and offers an `exact` payment on
 * Algorand mainnet of exactly `amount` of `asset` to `payTo`. With several offers, the matching one is chosen; when
 * none matches, the reasons of the closest offer are returned.
 */
export function checkChallenge(paymentRequired: unknown, expected: ChallengeExpectations): ChallengeCheck {
  if (!isRecord(paymentRequired))
    return { ok: false, reasons: ['The payment challenge is not a JSON object.'] };
  const { x402Version, accepts } = paymentRequired;
  if (x402Version !== 2) {
    return {
      ok: false,
      reasons: [`The challenge uses x402 version ${String(x402Version)}; this page only speaks version 2.`],
    };
  }
  const resourceProblem = resourceMismatch(paymentRequired, expected.resourcePath);
  if (resourceProblem) return { ok: false, reasons: [resourceProblem] };
  if (!Array.isArray(accepts) || accepts.length === 0) {
    return { ok: false, reasons: ['The challenge offers no way to pay (its "accepts" list is empty).'] };
  }
  let closest: string[] | null = null;
  for (const entry of accepts) {
    const reasons = describeMismatches(entry, expected);
    if (reasons.length === 0) return { ok: true, requirement: entry as PaymentRequirement };
    if (!closest || reasons.length < closest.length) closest = reasons;
  }
  return { ok: false, reasons: closest ?? [] };
}
