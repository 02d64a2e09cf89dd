// `emi publisher list | add | close ID | credit ID N | statement ID [--since] [--csv] [--grants]`: the operator's
// side of the programme.
// Publishers live in the config file (`--config` / EMI_CONFIG); credits and sales in the ledger of the state folder,
// the same file the running worker uses, so a credit added here counts at the next sale, and a close (written to the
// config file, which the running worker reads again when it changes) stops new sales at once. With `--worker URL`,
// `credit` and `statement` act on a Cloudflare Worker's Durable Object ledger through its admin route instead.
// A usage mistake (an unknown id, a bad option, a configuration that cannot be changed safely) exits 2 before
// anything is written.
import { chmod, lstat, readlink, realpath, rename, stat, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { CREDITS_RULE, MAX_CREDITS } from './admin-api.ts';
import { parseWorkerUrl } from './admin-client.ts';
import { isClosed } from './closure.ts';
import { sinceTime } from './credit-ledger.ts';
import type { CreditBalance, GrantRecord, SaleRecord } from './credit-ledger.ts';
import { PUBLISHER_ID, PUBLISHER_ID_RULE } from './ids.ts';
import { stateFolder } from '../../generator/defaults.ts';
import { USAGE_EXIT_CODE, usageError } from '../../generator/cli-options.ts';
import {
  IN_FLIGHT_LEASE_MS as PAYMENT_LEASE_MS,
  RECORD_TTL_MS as PAYMENT_RECORD_TTL_MS,
} from '../payment-book.ts';

interface CommonFlags {
  config?: string;
  state?: string;
}

const configFile = (flags: CommonFlags): string | undefined => flags.config ?? process.env.EMI_CONFIG;

/** The ledger file of the state folder (the name is credit-ledger-sqlite.ts's DEFAULT_LEDGER_FILE). */
const ledgerFile = (flags: CommonFlags): string => resolve(flags.state ?? stateFolder(), 'publishers.sqlite');

async function openLedger(flags: CommonFlags) {
  const { SqliteCreditLedger } = await import('./credit-ledger-sqlite.ts');
  return new SqliteCreditLedger(ledgerFile(flags));
}

/** What the ledger holds for each publisher it knows; a ledger file not there yet is not created to say so. */
async function ledgerBooks(flags: CommonFlags) {
  if (!existsSync(ledgerFile(flags))) return [];
  const ledger = await openLedger(flags);
  try {
    return await ledger.list();
  } finally {
    ledger.close();
  }
}

/** The config file as JSON, refused (PublisherConfigError) with an unknown top-level key, as `emi serve` refuses it. */
async function readConfig(file: string): Promise<Record<string, unknown>> {
  const { readConfigJson } = await import('./node.ts');
  const { PublisherConfigError } = await import('./config.ts');
  const { configKeysProblem } = await import('../../generator/config-file.ts');
  const config = await readConfigJson(file);
  const problem = configKeysProblem(file, config);
  if (problem) throw new PublisherConfigError(problem);
  return config;
}

async function configuredPublishers(flags: CommonFlags) {
  const file = configFile(flags);
  if (!file) return [];
  const { parsePublishers } = await import('./config.ts');
  return parsePublishers((await readConfig(file)).publishers);
}

/** An id that cannot be a publisher's (a usage mistake): checked even where no configuration says which ones are. */
function assertIdShape(id: string): void {
  if (!PUBLISHER_ID.test(id)) throw usageError(`not a publisher id (${PUBLISHER_ID_RULE}): ${id}`);
}

/**
 * Credits for an id the configuration does not name would sit where no sale can use them (a typo loses them): a
 * usage mistake naming the configured ids. Without a configuration the id must have books in the ledger. `ledgerToo`:
 * an id the ledger knows is accepted as well (a statement of a publisher whose entry was deleted).
 */
async function assertConfigured(
  id: string,
  flags: CommonFlags,
  unchanged = 'no credits were changed',
  ledgerToo = false,
): Promise<void> {
  assertIdShape(id);
  const file = configFile(flags);
  if (!file) {
    // Only the ledger can vouch for the id then: one it has no books for is most likely a typo.
    const booked = (await ledgerBooks(flags)).map((b) => b.publisherId);
    if (!booked.includes(id)) {
      const has = booked.length > 0 ? ` (it has: ${booked.join(', ')})` : '';
      throw usageError(
        `no configuration file (--config or EMI_CONFIG) to check "${id}" against, and ${ledgerFile(flags)} has ` +
          `no books for it${has}: give --config; ${unchanged}`,
      );
    }
    console.error(
      `emi publisher: no configuration file (--config or EMI_CONFIG): "${id}" is checked against its books only`,
    );
    return;
  }
  const booked = ledgerToo ? (await ledgerBooks(flags)).map((b) => b.publisherId) : [];
  let ids: string[];
  try {
    ids = (await configuredPublishers(flags)).map((p) => p.id);
  } catch (error) {
    // A reader of the ledger alone (a statement) is not stopped by a fault of the file elsewhere in it.
    if (!ledgerToo || (error as Error).name !== 'PublisherConfigError' || !booked.includes(id)) throw error;
    console.error(
      `emi publisher: warning: configuration file ${file} is refused (${(error as Error).message}): "${id}" is read ` +
        `from its books in ${ledgerFile(flags)} alone`,
    );
    return;
  }
  if (ids.includes(id)) return;
  if (booked.includes(id)) return;
  const known = ids.length > 0 ? `configured: ${ids.join(', ')}` : 'it names no publishers';
  const inLedger = ledgerToo
    ? ` and has no books in ${ledgerFile(flags)}${booked.length > 0 ? ` (which has: ${booked.join(', ')})` : ''}`
    : '';
  throw usageError(`publisher "${id}" is not in ${file} (${known})${inLedger}; ${unchanged}`);
}

/** A whole number of credits within the limit of one grant, without sign, leading zeros or exponent; else null. */
const creditsOf = (value: string): number | null =>
  /^-?[1-9][0-9]*$/.test(value) && Math.abs(Number(value)) <= MAX_CREDITS ? Number(value) : null;

/** `credit ID N`: the rule the Worker's admin route states too (zero is a whole number, but grants nothing). */
const parseCredits = (value: string): number => {
  const credits = creditsOf(value);
  if (credits === null) {
    throw usageError(`N must be ${CREDITS_RULE} (negative withdraws unused credits): ${value}`);
  }
  return credits;
};

/** `add --credits N`: a new publisher has nothing to withdraw, so only a positive number makes sense. */
const parseStartCredits = (value: string): number => {
  const credits = creditsOf(value);
  if (credits === null || credits < 0) {
    throw usageError(
      `--credits wants a positive whole number of at most ${MAX_CREDITS} (credits to start with): ${value}`,
    );
  }
  return credits;
};

const parseSince = (value: string): string => {
  const since = sinceTime(value);
  if (!since) throw usageError(`--since wants an ISO date or time (e.g. 2026-11-01): ${value}`);
  return since;
};

/** `--product SLUG=PRICE`, repeatable; a second price for the same product would silently replace the first. */
const collectProduct = (value: string, previous: Array<[string, string]>): Array<[string, string]> => {
  const [slug, priceUsd, ...rest] = value.split('=');
  if (!slug || !priceUsd || rest.length > 0) {
    throw usageError(`--product wants SLUG=PRICE (e.g. atlas-human-report=0.15): ${value}`);
  }
  if (previous.some(([known]) => known === slug)) throw usageError(`product ${slug} is given twice`);
  return [...previous, [slug, priceUsd]];
};

/**
 * Runs an action; a configuration the worker would refuse (PublisherConfigError, named so that config.ts and
 * its packages load only when used) exits 2, as other usage mistakes do. The message is printed by `main`.
 */
const refusingBadConfig =
  <A extends unknown[]>(action: (...args: A) => Promise<void>) =>
  async (...args: A): Promise<void> => {
    try {
      await action(...args);
    } catch (error) {
      if ((error as Error).name === 'PublisherConfigError') process.exitCode = USAGE_EXIT_CODE;
      throw error;
    }
  };

function withCommon(command: Command): Command {
  return command
    .option('--config <file>', 'JSON configuration file holding `publishers` (default: EMI_CONFIG)')
    .option('--state <dir>', 'folder holding the credit ledger (default: EMI_STATE_DIR or var)');
}

async function list(flags: CommonFlags): Promise<void> {
  const { isTestSale } = await import('./statement.ts');
  const publishers = await configuredPublishers(flags);
  const ledger = await openLedger(flags);
  try {
    const ids = new Set([...publishers.map((p) => p.id), ...(await ledger.list()).map((b) => b.publisherId)]);
    if (ids.size === 0) console.log('no publishers (add one with: emi publisher add --config FILE ...)');
    for (const id of [...ids].sort()) {
      const publisher = publishers.find((p) => p.id === id);
      const b = await ledger.balance(id);
      const tests = b.sales > 0 ? (await ledger.statement(id)).filter(isTestSale).length : 0;
      const products = publisher
        ? publisher.products.map((p) => `${p.slug} ${p.priceUsd}`).join(', ')
        : 'not in the configuration';
      const closed = publisher?.closedAt != null ? `  ${closedNote(publisher.closedAt)}` : '';
      console.log(
        `${id}  ${publisher ? `"${publisher.brand.name}" pays ${publisher.payTo}` : ''}  ` +
          `credits ${b.balance} (${b.reserved} held, ${b.available} available)  sales ${b.sales}` +
          `${tests > 0 ? ` (${tests} of test money)` : ''}  [${products}]` +
          closed,
      );
    }
  } finally {
    ledger.close();
  }
}

interface AddFlags extends CommonFlags {
  id: string;
  name: string;
  payTo: string;
  contact: string;
  terms: string;
  logo?: string;
  accent?: string;
  product: Array<[string, string]>;
  credits?: number;
  keepLedger?: boolean;
}

/**
 * The ledger's books are kept by id alone: a new publisher under an id that has them would inherit another's
 * credits and sales (and its statement would list sales paid to another address). Refused unless `--keep-ledger`
 * says this is the same publisher coming back.
 */
async function assertNewBooks(flags: AddFlags): Promise<void> {
  const books = (await ledgerBooks(flags)).find((b) => b.publisherId === flags.id);
  if (!books || flags.keepLedger) return;
  const ledger = await openLedger(flags);
  let paidTo: string[];
  try {
    paidTo = [...new Set((await ledger.statement(flags.id)).map((sale) => sale.payTo))];
  } finally {
    ledger.close();
  }
  const sales =
    books.sales > 0 ? `${books.sales} sale(s) paid to ${paidTo.join(', ')}` : `${books.sales} sale(s)`;
  throw usageError(
    `publisher id "${flags.id}" already has books in ${ledgerFile(flags)}: ${books.balance} credit(s), ` +
      `${sales}; a new publisher under this id would inherit them. Choose another id, or pass --keep-ledger if ` +
      'this is the same publisher coming back; nothing was written',
  );
}

/** `add` creates the file, not its folder: a folder that is not there is a usage mistake, said before anything. */
function assertFolderOf(file: string): void {
  const folder = dirname(resolve(file));
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    // not there, or a file in its path: the same mistake
  }
  if (!isFolder) {
    throw usageError(
      `no folder ${folder} for the configuration file (--config ${file}): create it first, or give another ` +
        '--config; nothing was written',
    );
  }
}

async function add(flags: AddFlags): Promise<void> {
  const file = configFile(flags);
  if (!file)
    throw usageError('emi publisher add needs the configuration file: --config FILE (or EMI_CONFIG)');
  assertFolderOf(file);
  const config = existsSync(file) ? await readConfig(file) : {};
  if (config.publishers !== undefined && !Array.isArray(config.publishers)) {
    throw usageError(
      `"publishers" in ${file} is not a list (the worker refuses it too): mend it by hand; nothing was written`,
    );
  }
  const products = Object.fromEntries(flags.product.map(([slug, priceUsd]) => [slug, { priceUsd }]));
  const entry = {
    id: flags.id,
    brand: {
      name: flags.name,
      contactUrl: flags.contact,
      termsUrl: flags.terms,
      ...(flags.logo ? { logoUrl: flags.logo } : {}),
      ...(flags.accent ? { accentColor: flags.accent } : {}),
    },
    payTo: flags.payTo,
    products,
  };
  const publishers = [...((config.publishers as unknown[] | undefined) ?? []), entry];
  await checkPublishers(publishers);
  await assertNewBooks(flags);
  await writePublishers(file, config, publishers);
  console.log(
    `added publisher ${flags.id} to ${file}; restart emi serve, emi up or emi paywall to open its storefront`,
  );
  if (flags.credits) await credit(flags.id, flags.credits, flags);
  else await sayCreditsKept(flags);
}

/**
 * Without --credits the storefront has only what the ledger kept for the id (`--keep-ledger`): none is a storefront
 * that answers 503 to every buyer, said now rather than found at the first sale.
 */
async function sayCreditsKept(flags: AddFlags): Promise<void> {
  const books = (await ledgerBooks(flags)).find((b) => b.publisherId === flags.id);
  const available = books?.available ?? 0;
  if (available > 0) {
    console.log(`publisher ${flags.id}: ${available} credit(s) available, kept in ${ledgerFile(flags)}`);
    return;
  }
  console.log(`publisher ${flags.id}: 0 credits: answers 503 until \`emi publisher credit ${flags.id} N\``);
}

/** Checks a `publishers` list whole, as the worker will at start (against the operator's payee when this shell has it). */
async function checkPublishers(publishers: unknown[]): Promise<void> {
  const { parsePublishers } = await import('./config.ts');
  parsePublishers(publishers, process.env.EMI_PAYTO || undefined);
}

/**
 * The file a write to `file` must replace: a symlink's target (followed to the end), so that the link stays a link
 * and the file it names is the one changed. A link whose target is not there yet names where it will be.
 */
async function writtenPath(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const link = await lstat(file).catch(() => null);
    return link?.isSymbolicLink() ? resolve(dirname(file), await readlink(file)) : file;
  }
}

/**
 * Writes the config file with a new `publishers` list, checked whole; written to a temporary file beside it, then
 * renamed, so that a failed write never leaves half a configuration (and a running worker sees a new version of the
 * file). A symlinked file is written at its target, and an existing file keeps its permissions (a 600 file stays 600).
 */
async function writePublishers(
  file: string,
  config: Record<string, unknown>,
  publishers: unknown[],
): Promise<void> {
  await checkPublishers(publishers);
  const target = await writtenPath(file);
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => null,
  );
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ ...config, publishers }, null, 2)}\n`, {
    mode: mode ?? 0o666,
  });
  // writeFile's mode is cut by the umask: the file's own permissions are set as they were.
  if (mode !== null) await chmod(temporary, mode);
  await rename(temporary, target);
}

/**
 * When a storefront closes (a `closedAt` written by hand may lie ahead), and when its entry may go: after the
 * payment book has forgotten the last payment made before the close (a sale begun just before it ends within the
 * book's in-flight lease; its record is kept RECORD_TTL_MS from then). True for `emi serve` / `emi up`, which take
 * the close at once; a Cloudflare Worker takes it at the deploy that carries it.
 */
function closedNote(closedAt: number, now = Date.now()): string {
  const at = new Date(closedAt).toISOString();
  const deletable = new Date(closedAt + PAYMENT_LEASE_MS + PAYMENT_RECORD_TTL_MS).toISOString();
  return `${isClosed(closedAt, now) ? 'closed since' : 'closes at'} ${at} (its entry may be deleted after ${deletable})`;
}

/**
 * Closes a storefront without stranding anyone: the entry stays, marked `closedAt`, so that its paths refuse new
 * sales (410) but still deliver payments already made, such as one whose settle answer was lost; deleting the entry
 * at once would turn those into 404s.
 */
async function close(id: string, flags: CommonFlags): Promise<void> {
  const file = configFile(flags);
  if (!file) {
    throw usageError('emi publisher close needs the configuration file: --config FILE (or EMI_CONFIG)');
  }
  await assertConfigured(id, flags, 'nothing was changed');
  const config = await readConfig(file);
  const entries = config.publishers as Array<Record<string, unknown>>;
  const entry = entries.find((candidate) => candidate.id === id);
  if (typeof entry?.closedAt === 'string') {
    console.log(
      `publisher ${id} already has a closedAt, unchanged: ${closedNote(Date.parse(entry.closedAt))}`,
    );
    return;
  }
  const closedAt = Date.now();
  const publishers = entries.map((candidate) =>
    candidate === entry ? { ...candidate, closedAt: new Date(closedAt).toISOString() } : candidate,
  );
  await writePublishers(file, config, publishers);
  console.log(
    `closed publisher ${id} in ${file}: from now on its paths sell nothing new (410), on a running emi serve, ` +
      `emi up or emi paywall at its next request, and still deliver payments already made; ${closedNote(closedAt)}. ` +
      'A Cloudflare Worker stops selling when EMI_PUBLISHERS with this closedAt is deployed: keep the entry there ' +
      'an hour longer than that deploy',
  );
}

type WorkerFlags = CommonFlags & { worker?: string };

async function credit(id: string, amount: number, flags: WorkerFlags & { note?: string }): Promise<void> {
  let b: { balance: number; reserved: number };
  if (flags.worker) {
    assertIdShape(id);
    const { adminTokenFromEnv, creditThroughWorker } = await import('./admin-client.ts');
    const admin = { url: flags.worker, token: adminTokenFromEnv() };
    b = await creditThroughWorker(admin, id, {
      credits: amount,
      ...(flags.note ? { note: flags.note } : {}),
    });
  } else {
    // A publisher removed from the file keeps its books: its unused credits can be withdrawn, none added.
    const unchanged =
      amount > 0 && (await ledgerBooks(flags)).some((b) => b.publisherId === id)
        ? 'no credits were changed (its unused credits can be withdrawn, a negative N; none added)'
        : 'no credits were changed';
    await assertConfigured(id, flags, unchanged, amount < 0);
    const ledger = await openLedger(flags);
    try {
      b = await ledger.credit(id, amount, flags.note);
    } finally {
      ledger.close();
    }
  }
  console.log(`publisher ${id}: ${b.balance} credit(s) (${b.reserved} held by sales in progress)`);
}

type StatementFlags = WorkerFlags & { since?: string; csv?: boolean; grants?: boolean };

/** What a statement prints from: `grants` is null when an older Worker answered without them. */
interface Books {
  sales: SaleRecord[];
  grants: GrantRecord[] | null;
  balance: CreditBalance;
}

async function booksOf(id: string, flags: StatementFlags): Promise<Books> {
  if (flags.worker) {
    assertIdShape(id);
    const { adminTokenFromEnv, statementThroughWorker } = await import('./admin-client.ts');
    const admin = { url: flags.worker, token: adminTokenFromEnv() };
    const answer = await statementThroughWorker(admin, id, flags.since);
    return {
      sales: answer.sales,
      grants: Array.isArray(answer.grants) ? answer.grants : null,
      balance: answer.balance,
    };
  }
  // A publisher whose entry was deleted still has its statement: the ledger knows the id.
  await assertConfigured(id, flags, 'no statement', true);
  const ledger = await openLedger(flags);
  try {
    return {
      sales: await ledger.statement(id, flags.since),
      grants: await ledger.grants(id, flags.since),
      balance: await ledger.balance(id),
    };
  } finally {
    ledger.close();
  }
}

/**
 * The sales (text or `--csv`, whose columns readers depend on), the grants after them in the text form, or with
 * `--grants` the grants alone. An older Worker lists no grants: said on stderr, and an error when they were asked for.
 */
async function statement(id: string, flags: StatementFlags): Promise<void> {
  const text = await import('./statement.ts');
  const books = await booksOf(id, flags);
  if (books.grants === null) {
    const { noGrantsLine } = await import('./admin-client.ts');
    if (flags.grants) throw new Error(noGrantsLine(flags.worker ?? ''));
    console.error(`emi publisher: ${noGrantsLine(flags.worker ?? '')}`);
  }
  const { sales, grants, balance } = books;
  if (flags.csv) {
    process.stdout.write(flags.grants ? text.grantsCsv(grants ?? []) : text.statementCsv(sales));
    return;
  }
  const lines = flags.grants
    ? text.grantsText(id, grants ?? [], flags.since)
    : grants === null
      ? text.statementText(id, sales, flags.since)
      : text.statementWithGrantsText(id, { sales, grants, balance }, flags.since);
  for (const line of lines) console.log(line);
}

const WORKER_OPTION = [
  '--worker <url>',
  "a deployed Worker's origin: use its admin route (token from EMI_ADMIN_TOKEN) instead of the local ledger",
  parseWorkerUrl,
] as const;

export function registerPublisherCommands(program: Command): void {
  const publisher = program
    .command('publisher')
    .description(
      'the publisher programme: branded resale paid straight to the publisher, credits, statements',
    );

  withCommon(publisher.command('list').description('publishers, their credits and sales')).action(
    refusingBadConfig(list),
  );

  withCommon(
    publisher
      .command('add')
      .description('add a publisher to the configuration file (checked as the worker checks it at start)')
      .requiredOption('--id <slug>', 'storefront id: /p/<slug>/')
      .requiredOption('--name <text>', 'brand name')
      .requiredOption('--pay-to <address>', "the publisher's Algorand address (opted in to USDC)")
      .requiredOption('--contact <url>', 'contact link (https: or mailto:)')
      .requiredOption('--terms <url>', "the publisher's terms (https:)")
      .option('--logo <url>', 'logo (https:)')
      .option('--accent <#rrggbb>', 'accent colour')
      .option('--product <slug=price>', 'a resold product and its price in USD (repeat)', collectProduct, [])
      .option('--credits <n>', 'credits to start with (a positive number)', parseStartCredits)
      .option(
        '--keep-ledger',
        'the id already has credits or sales in the ledger and this is the same publisher coming back: keep them',
      ),
  ).action(refusingBadConfig(add));

  withCommon(
    publisher
      .command('close')
      .description(
        'close a storefront: its paths sell nothing new but still deliver payments already made (the entry stays)',
      )
      .argument('<id>', 'publisher id'),
  ).action(refusingBadConfig(close));

  withCommon(
    publisher
      .command('credit')
      .description('add N credits to a publisher (negative N withdraws unused ones)')
      .argument('<id>', 'publisher id')
      .argument('<n>', 'credits', parseCredits)
      .option('--note <text>', 'kept with the grant')
      .option(...WORKER_OPTION),
  ).action(refusingBadConfig(credit));

  withCommon(
    publisher
      .command('statement')
      .description(
        "a publisher's sales, to reconcile with the chain, then its credit grants and withdrawals with their notes",
      )
      .argument('<id>', 'publisher id')
      .option('--since <iso>', 'only sales and grants at or after this time', parseSince)
      .option('--csv', 'CSV (RFC 4180) instead of text: the sales table (or with --grants, the grants table)')
      .option('--grants', 'only the grants and withdrawals of credits, with their notes')
      .option(...WORKER_OPTION),
  ).action(refusingBadConfig(statement));
}
