// The buyer page's /x402-buyer/config.json on a deployed site: whom the page pays, on which network. The page refuses
// to pay without it ("This site has no payment configuration"), and no static host generates it (only `emi serve`
// and `emi up` answer it themselves, for their development stack), so the build writes it:
//
// - the operator's own `site/x402-buyer/config.json` when there is one (for an algod node of their own, say),
//   checked as the page will check it, and refused when it pays another address than EMI_PAYTO;
// - otherwise, from the settings the paywall reads (EMI_PAYTO, EMI_NETWORK), checked as the paywall checks them:
//   `{ merchantAddress, network, facilitatorMode: "production" }`;
// - and none without a payee: the page then says the site has no payment configuration, which is the truth.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { ALGORAND_MAINNET } from '../../schemas/paid/terms.ts';
import { PaywallConfigError, checkSettings } from '../../paywall-worker/config.ts';
import { isKnownAlgorandNetwork, normalizeNetwork } from '../../paywall-worker/network.ts';
import { HUMAN_REPORT_PATH } from '../buyer/human-report-terms.ts';
import { parseBuyerConfig } from '../../site/x402-buyer/src/config.ts';

/** Where the page reads it (next to itself), and where an operator's own file sits in the site's templates. */
export const BUYER_CONFIG_PATH = 'x402-buyer/config.json';

const text = (env: NodeJS.ProcessEnv, name: string): string | undefined => env[name] || undefined;

/** The payee and network a build writes into the page, checked as the paywall checks them (a PaywallConfigError). */
export function checkBuyerSettings(env: NodeJS.ProcessEnv = process.env): {
  payTo?: string;
  network?: string;
} {
  const settings = { payTo: text(env, 'EMI_PAYTO'), network: text(env, 'EMI_NETWORK') };
  checkSettings(settings);
  return settings;
}

/** The operator's own file, checked; null when there is none. */
function operatorConfig(
  file: string,
  baseUrl: string,
  payTo: string | undefined,
  network: string | undefined,
): string | null {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new PaywallConfigError(`${file} is not JSON: ${(error as Error).message}`);
  }
  const record = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const named = record.network;
  if (typeof named !== 'string' || !isKnownAlgorandNetwork(normalizeNetwork(named))) {
    throw new PaywallConfigError(
      `${file}: network is not a supported Algorand network: ${JSON.stringify(named)}`,
    );
  }
  // Checked as the page checks it; the page pays on mainnet only, which it says itself for a testnet file.
  const page = `${baseUrl}/x402-buyer/`;
  // The page checks a payee's checksum only once algosdk is loaded (at the first wallet); the build checks it now.
  const checked = parseBuyerConfig(
    { ...record, network: ALGORAND_MAINNET },
    `${page}config.json`,
    `${baseUrl}${HUMAN_REPORT_PATH}`,
    (address) => algosdk.isValidAddress(address),
  );
  if (!checked.ok) throw new PaywallConfigError(`${file}: ${checked.reason}`);
  if (network !== undefined && normalizeNetwork(String(record.network)) !== normalizeNetwork(network)) {
    throw new PaywallConfigError(
      `${file} names the network ${String(record.network)}, but EMI_NETWORK is ${network}: make them the same, ` +
        'or remove the file',
    );
  }
  if (payTo !== undefined && record.merchantAddress !== payTo) {
    throw new PaywallConfigError(
      `${file} pays ${String(record.merchantAddress)}, but EMI_PAYTO is ${payTo}: the page would refuse every ` +
        "402 of this paywall (it pays only its config's address); make them the same, or remove the file",
    );
  }
  return raw;
}

/**
 * The text of /x402-buyer/config.json for this build, or null for none. Throws a PaywallConfigError naming the
 * variable or the file when either is wrong: a build never publishes a page that would pay the wrong address.
 */
export function buyerConfigJson(
  siteDir: string,
  baseUrl: string,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const { payTo, network } = checkBuyerSettings(env);
  const own = operatorConfig(join(siteDir, BUYER_CONFIG_PATH), baseUrl.replace(/\/+$/, ''), payTo, network);
  if (own !== null) return own;
  if (payTo === undefined) return null;
  const config = {
    merchantAddress: payTo,
    network: normalizeNetwork(network ?? ALGORAND_MAINNET),
    facilitatorMode: 'production',
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
