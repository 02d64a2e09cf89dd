// The publisher programme on Node (`emi serve`, `emi up`, `emi publisher`): publishers from the config file
// (`--config` or EMI_CONFIG), checked once at start; the credit ledger in the state folder; the paywall's extra
// sale points and hooks; and the branded storefronts.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { PaywallLogEntry, SaleHooks } from '../core/decide.ts';
import type { SalePoint } from '../offers.ts';
import { PublisherConfigError, parsePublishers } from './config.ts';
import type { Publisher } from './config.ts';
import { DEFAULT_LEDGER_FILE, SqliteCreditLedger } from './credit-ledger-sqlite.ts';
import { checkPublisherOptIns } from './opt-in.ts';
import { stateFolder } from '../../generator/defaults.ts';
import { creditHooks, publisherSalePoints } from './sale-points.ts';

/** The state folder holds the ledger: EMI_STATE_DIR, else `var` (the arena store's folder). */
export const defaultLedgerFile = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(stateFolder(env), DEFAULT_LEDGER_FILE);

/** The whole config file as JSON; `publishers` is this module's part (other keys belong to others). */
export async function readConfigJson(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PublisherConfigError(`cannot read configuration ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PublisherConfigError(`configuration ${path} is not valid JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new PublisherConfigError(`configuration ${path} is not a JSON object`);
  }
  return json as Record<string, unknown>;
}

export interface PublisherProgrammeOptions {
  /** The config file (`--config` / EMI_CONFIG); without one there are no publishers. */
  configFile?: string;
  /** Checked against the publishers' addresses: a publisher never shares the operator's payee. */
  operatorPayTo: string;
  /** When set (EMI_ALGOD_URL), each publisher's USDC opt-in is checked at start. */
  algodUrl?: string;
  algodToken?: string;
  ledgerFile?: string;
  log(entry: PaywallLogEntry): void;
}

export interface PublisherProgramme {
  publishers: Publisher[];
  salePoints: SalePoint[];
  hooks: SaleHooks;
  ledger: SqliteCreditLedger;
  close(): void;
}

/** Loads and checks the publishers; throws PublisherConfigError (one line) on a bad entry. Null without any. */
export async function startPublisherProgramme(
  options: PublisherProgrammeOptions,
): Promise<PublisherProgramme | null> {
  if (!options.configFile) return null;
  const config = await readConfigJson(options.configFile);
  const publishers = parsePublishers(config.publishers, options.operatorPayTo);
  if (publishers.length === 0) return null;
  if (options.algodUrl) {
    await checkPublisherOptIns(publishers, { algodUrl: options.algodUrl, algodToken: options.algodToken });
  }
  const ledger = new SqliteCreditLedger(options.ledgerFile ?? defaultLedgerFile());
  return {
    publishers,
    salePoints: publisherSalePoints(publishers),
    hooks: creditHooks(publishers, ledger, options.log),
    ledger,
    close: () => ledger.close(),
  };
}

/** Reads a file of the built buyer page from `dir` (`dist/x402-buyer`); null when it is not there. */
export const buyerFileReader =
  (dir: string) =>
  async (name: string): Promise<Uint8Array | null> => {
    try {
      return await readFile(join(dir, name));
    } catch {
      return null;
    }
  };
