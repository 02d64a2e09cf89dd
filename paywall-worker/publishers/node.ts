// The publisher programme on Node (`emi paywall`, `serve`, `up`, `emi publisher`): publishers from the config file
// (`--config` or EMI_CONFIG), checked once at start, whose closures (`closedAt`, written by `emi publisher close`)
// are read again whenever the file changes; the credit ledger in the state folder; the paywall's extra sale points
// and hooks; and the branded storefronts.
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { PaywallLogEntry, SaleHooks } from '../core/decide.ts';
import type { SalePoint } from '../offers.ts';
import { isClosed } from './closure.ts';
import { PublisherConfigError, parsePublishers } from './config.ts';
import type { Publisher } from './config.ts';
import { DEFAULT_LEDGER_FILE, SqliteCreditLedger } from './credit-ledger-sqlite.ts';
import { checkPublisherOptIns } from './opt-in.ts';
import { stateFolder } from '../../generator/defaults.ts';
import { creditHooks, publisherSalePoints } from './sale-points.ts';

/** The state folder holds the ledger: EMI_STATE_DIR, else `var` (the arena store's folder). */
export const defaultLedgerFile = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(stateFolder(env), DEFAULT_LEDGER_FILE);

/**
 * The whole config file as JSON; `publishers` is this module's part (other keys belong to others). Read as every
 * `emi` command reads it (generator/config-file.ts): a misspelt key, invalid JSON or anything but an object is a
 * PublisherConfigError (one line, the same line as the configuration check's), not a worker selling nothing.
 */
export async function readConfigJson(path: string): Promise<Record<string, unknown>> {
  // Loaded here only: the worker reads a file only when it has one.
  const { readConfigObject } = await import('../../generator/config-file.ts');
  return readConfigObject(path).catch((error: Error) => {
    throw new PublisherConfigError(error.message, { cause: error });
  });
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
  /** Sales are settled by the development facilitator: recorded as test money (see CreditHooksOptions). */
  development?: boolean;
  log(entry: PaywallLogEntry): void;
}

export interface PublisherProgramme {
  publishers: Publisher[];
  salePoints: SalePoint[];
  hooks: SaleHooks;
  ledger: SqliteCreditLedger;
  /** Each storefront's closing time as the config file says now, and why the file is not applied (liveClosures). */
  closedAt: LiveClosures;
  close(): void;
}

/** What identifies one version of a file: a rename (as `emi publisher` writes) or an edit in place changes it. */
async function fileVersion(file: string): Promise<string> {
  const s = await stat(file, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** Each storefront's closing time as the config file says now, and why the file as it is now is not applied. */
export type LiveClosures = ((publisher: Publisher) => Promise<number | null>) & {
  /** Null while the file is applied; else since when and why not, in fixed words (no path: health is public). */
  refusal(): Promise<string | null>;
};

export interface LiveClosuresOptions {
  configFile: string;
  /** The publishers the worker started with (their sale points stay until a restart). */
  publishers: readonly Publisher[];
  /** The config file's version when `publishers` were read from it (see fileVersion). */
  version: string | null;
  operatorPayTo: string;
  log(entry: PaywallLogEntry): void;
  now?: () => number;
}

/** A storefront's closing time after the file changed: once reached (or its entry seen gone), it is kept. */
export function nextClosure(seen: number | null, inFile: Publisher | undefined, now: number): number | null {
  if (isClosed(seen, now)) return seen; // once closed, closed until a restart
  return inFile ? inFile.closedAt : now;
}

/** What only a restart applies: everything but the closing time, products in a stable order. */
const startedSettings = (publisher: Publisher) => ({
  ...publisher,
  closedAt: null,
  products: [...publisher.products].sort((a, b) => a.slug.localeCompare(b.slug)),
});

/** The ids the file adds or changes (closedAt aside) against the publishers the worker started with. */
export function publishersAwaitingRestart(
  started: readonly Publisher[],
  inFile: readonly Publisher[],
): string[] {
  const startedById = new Map(started.map((p) => [p.id, p]));
  return inFile
    .filter((p) => {
      const before = startedById.get(p.id);
      return !before || !isDeepStrictEqual(startedSettings(before), startedSettings(p));
    })
    .map((p) => (startedById.has(p.id) ? p.id : `${p.id} (new)`));
}

/**
 * Each publisher's closing time, from the config file as it is now: at every sale the file is stat'ed (one system
 * call) and read again only when it changed, so that `emi publisher close` stops new sales at once rather than at
 * the next restart. Only closures are taken: anything else in the file (a new publisher, a price) waits for a
 * restart, and a file that differs from the start-up publishers in it is logged once per version
 * (`publishers_config_changed`), since `emi publisher list` shows the file, not what the worker sells. An entry that
 * disappeared is closed from when that was seen (its paths stay until the restart, still delivering payments already
 * made). A closure once reached is kept until the restart, even if the entry comes back without `closedAt`: the
 * storefront would reopen with its start-up payee, price and brand, not the file's. A `closedAt` not reached yet may
 * still be moved or removed. A file that cannot be read or that the worker would refuse at start (read by the same
 * strict reader: a misspelt key too, which `emi publisher` would refuse to write to as well) changes nothing, and is
 * logged once per version.
 */
export function liveClosures(options: LiveClosuresOptions): LiveClosures {
  const now = options.now ?? Date.now;
  const closures = new Map(options.publishers.map((p) => [p.id, p.closedAt]));
  let known = options.version;
  let refreshing: Promise<void> | null = null;
  let refusal: string | null = null;

  const refresh = async (): Promise<void> => {
    let version: string;
    let readable = true;
    try {
      version = await fileVersion(options.configFile);
    } catch (error) {
      version = `unreadable: ${(error as Error).message}`;
      readable = false;
    }
    if (version === known) return;
    known = version;
    let inFile: Publisher[];
    try {
      const config = await readConfigJson(options.configFile);
      inFile = parsePublishers(config.publishers, options.operatorPayTo);
    } catch (error) {
      options.log({
        level: 'error',
        event: 'publishers_config_refused',
        detail: `${(error as Error).message}; the storefronts' closures stay as they were until it is mended`,
      });
      const why = readable ? 'would be refused at start' : 'cannot be read';
      refusal = `since ${new Date(now()).toISOString()} the config file ${why}: closures written since are not applied (see the log's publishers_config_refused)`;
      return;
    }
    refusal = null;
    const inFileById = new Map(inFile.map((p) => [p.id, p]));
    const at = now();
    for (const { id } of options.publishers) {
      closures.set(id, nextClosure(closures.get(id) ?? null, inFileById.get(id), at));
    }
    const awaiting = publishersAwaitingRestart(options.publishers, inFile);
    if (awaiting.length > 0) {
      options.log({
        level: 'warn',
        event: 'publishers_config_changed',
        detail:
          `publishers ${awaiting.join(', ')} differ in the config file from what this worker started with: ` +
          'restart to apply (until then the storefronts keep the settings they started with)',
      });
    }
  };

  // Requests arriving together share one look at the file.
  const look = async (): Promise<void> => {
    refreshing ??= refresh().finally(() => (refreshing = null));
    await refreshing;
  };
  const closedAt = async (publisher: Publisher) => {
    await look();
    return closures.get(publisher.id) ?? null;
  };
  return Object.assign(closedAt, { refusal: () => look().then(() => refusal) });
}

/** Loads and checks the publishers; throws PublisherConfigError (one line) on a bad entry. Null without any. */
export async function startPublisherProgramme(
  options: PublisherProgrammeOptions,
): Promise<PublisherProgramme | null> {
  if (!options.configFile) return null;
  const configFile = resolve(options.configFile);
  // Its version before it is read: a change made while it is read is seen at the first sale.
  const version = await fileVersion(configFile).catch(() => null);
  const config = await readConfigJson(configFile);
  const publishers = parsePublishers(config.publishers, options.operatorPayTo);
  if (publishers.length === 0) return null;
  if (options.algodUrl) {
    await checkPublisherOptIns(publishers, { algodUrl: options.algodUrl, algodToken: options.algodToken });
  }
  const ledger = new SqliteCreditLedger(options.ledgerFile ?? defaultLedgerFile());
  const closedAt = liveClosures({
    configFile,
    publishers,
    version,
    operatorPayTo: options.operatorPayTo,
    log: options.log,
  });
  return {
    publishers,
    salePoints: publisherSalePoints(publishers),
    hooks: creditHooks(publishers, ledger, options.log, { closedAt, development: options.development }),
    ledger,
    closedAt,
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
