// The paywall as the local stack runs it: with a configured facilitator and payee, or, when no facilitator URL is
// configured, with the development facilitator on loopback (and a throwaway development payee if none is set).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import algosdk from 'algosdk';
import { Hono } from 'hono';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { createPaywallApp } from './app.ts';
import { createArenaVoteApp } from './arena-vote/app.ts';
import { nodeClientIp } from './arena-vote/client-ip.ts';
import { openSqliteVoteStore } from './arena-vote/store-sqlite.ts';
import type { SqliteVoteStore } from './arena-vote/store-sqlite.ts';
import { DEFAULT_MAX_DATA_AGE_SECONDS, PaywallConfigError, settingsFromEnv } from './config.ts';
import type { EnvSettings } from './config.ts';
import { logToStderr } from './core/log.ts';
import { createPayeeGate } from './core/payee-gate.ts';
import { payeeOptInProblem } from './opt-in.ts';
import { buyerFileReader, defaultLedgerFile, startPublisherProgramme } from './publishers/node.ts';
import type { PublisherProgramme } from './publishers/node.ts';
import { isClosed } from './publishers/closure.ts';
import type { Publisher } from './publishers/config.ts';
import { createStorefront } from './publishers/storefront.ts';
import { DEV_FACILITATOR_PORT, startDevFacilitator } from './dev-facilitator/server.ts';
import type { DevFacilitator } from './dev-facilitator/server.ts';
import { createFsStorage } from './storage-fs.ts';
import { VOTE_STORE_FILE, stateFolder } from '../generator/defaults.ts';
import { DEFAULT_PAYMENT_BOOK_FILE, SqlitePaymentBook } from './payment-book-sqlite.ts';
import { DEFAULT_LEDGER_FILE } from './publishers/credit-ledger-sqlite.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer, fetchPaidThrough } from '../mcp/server.ts';

export interface LocalPaywallOptions {
  paidDir: string;
  baseUrl: string;
  payTo?: string;
  facilitatorUrl?: string;
  facilitatorTimeoutMs?: number;
  /** CAIP-2 network; default Algorand mainnet (the development ledger answers for it). */
  network?: string;
  /** Port of the development facilitator when one is started; default 4021, 0 for any free port. */
  devFacilitatorPort?: number;
  /** Sell simulated or replayed data; default: only with the development facilitator (test money). */
  allowSimulated?: boolean;
  maxDataAgeSeconds?: number;
  /** Indexer API for reconciling lost settle answers; default the development facilitator, or a public one. */
  indexerUrl?: string;
  /** The config file (`--config` / EMI_CONFIG) whose `publishers` resell under their brand at `/p/<id>/`. */
  configFile?: string;
  /**
   * Algod API (EMI_ALGOD_URL): publishers' USDC opt-in is checked there at start, and the payee's too with a
   * configured facilitator (the development facilitator opts its payees in on its own ledger).
   */
  algodUrl?: string;
  /** The token of that node, when it asks for one (EMI_ALGOD_TOKEN, sent as X-Algo-API-Token). */
  algodToken?: string;
  /** The publishers' credit ledger; default `publishers.sqlite` in EMI_STATE_DIR or `var`. */
  ledgerFile?: string;
  /**
   * The payment book with a configured facilitator (real money); default `payments.sqlite` in EMI_STATE_DIR or
   * `var`. The development facilitator's ledger lives in memory, so its payment book does too.
   */
  paymentBookFile?: string;
  /** The built buyer page (`dist/x402-buyer`) and its faucet URL, for the publishers' branded storefronts. */
  buyerPage?: { dir: string; devFundUrl?: string };
  /** SQLite file of POST /arena/vote (the generator imports it from its state folder); no vote route without it. */
  voteStorePath?: string;
  /**
   * Bearer token of GET /arena/votes/export (EMI_VOTE_EXPORT_TOKEN, as on the Worker), for a generator on another
   * machine (EMI_VOTE_EXPORT_URL); without one that route does not exist.
   */
  voteExportToken?: string;
  /** Built site folder: when set, `mcp` answers the MCP endpoint over this site and this paywall. */
  siteDir?: string;
}

export interface LocalPaywall {
  app: Hono;
  payTo: string;
  facilitatorUrl: string;
  /** The development facilitator, when one was started. */
  devFacilitator: DevFacilitator | null;
  /** The publisher programme, when the config file names publishers. */
  publishers: PublisherProgramme | null;
  /** The `/mcp` streamable HTTP route (when `siteDir` was given): paid tools go through `app` itself. */
  mcp: Hono | null;
  /** One line per fact worth printing at start. */
  describe(): string[];
  close(): Promise<void>;
}

/**
 * The paywall settings of this process's environment (`settingsFromEnv`), plus EMI_CONFIG, EMI_ALGOD_URL,
 * EMI_ALGOD_TOKEN and EMI_VOTE_EXPORT_TOKEN.
 */
export const paywallEnv = (
  env: NodeJS.ProcessEnv = process.env,
): EnvSettings & Pick<LocalPaywallOptions, 'configFile' | 'algodUrl' | 'algodToken' | 'voteExportToken'> => ({
  ...settingsFromEnv(env),
  configFile: env.EMI_CONFIG || undefined,
  algodUrl: env.EMI_ALGOD_URL || undefined,
  algodToken: env.EMI_ALGOD_TOKEN || undefined,
  voteExportToken: env.EMI_VOTE_EXPORT_TOKEN || undefined,
});

/**
 * The paywall's files in one state folder (`--state`, else EMI_STATE_DIR or `var`): the arena votes, the payment
 * book and the publishers' credit ledger, so that `emi paywall`, `emi serve` and `emi up` keep each where the others
 * (and `emi publisher`, `emi generate`) look for it.
 */
export const stateFiles = (
  state: string,
): Required<Pick<LocalPaywallOptions, 'voteStorePath' | 'paymentBookFile' | 'ledgerFile'>> => ({
  voteStorePath: resolve(state, VOTE_STORE_FILE),
  paymentBookFile: resolve(state, DEFAULT_PAYMENT_BOOK_FILE),
  ledgerFile: resolve(state, DEFAULT_LEDGER_FILE),
});

/**
 * How many of the paid files are there at start, so that a mistyped `--paid`, or a worker started before the first
 * run, is seen at once rather than as a 503 on every paid path.
 */
function paidFilesPresent(paidDir: string): string {
  const missing = PAID_RESOURCES.filter((r) => !existsSync(join(paidDir, r.file))).map((r) => r.file);
  const total = PAID_RESOURCES.length;
  if (missing.length === 0) return `all ${total} there`;
  const until = 'their paths answer 503 until `emi generate` writes them';
  if (missing.length === total) return `none of the ${total} there yet: ${until}`;
  return `${total - missing.length} of ${total} there, missing ${missing.join(', ')}: ${until}`;
}

/** The paywall behind the publishers' storefront pages (`/p/<id>/x402-buyer/`), which are answered first. */
function withStorefronts(
  paywall: Hono,
  programme: PublisherProgramme,
  buyerPage: NonNullable<LocalPaywallOptions['buyerPage']>,
  development: boolean,
): Hono {
  const app = new Hono();
  app.route(
    '/',
    createStorefront({
      publishers: programme.publishers,
      buyerConfig: {
        network: ALGORAND_MAINNET,
        facilitatorMode: development ? 'development' : 'production',
        ...(development && buyerPage.devFundUrl ? { devFundUrl: buyerPage.devFundUrl } : {}),
      },
      readBuyerFile: buyerFileReader(buyerPage.dir),
      closedAt: programme.closedAt,
    }),
  );
  app.all('*', (c) => paywall.fetch(c.req.raw, c.env)); // c.env: Node's socket, for the vote route's client address
  return app;
}

/**
 * What a storefront can sell now: a sale consumes one credit, and without one its paths answer 503 before any 402
 * (`not_available_from_seller`), which looks like an outage unless the start says so.
 */
function creditsNote(id: string, available: number): string {
  if (available > 0) return `${available} credit(s) available`;
  return `0 credits: answers 503 until \`emi publisher credit ${id} N\``;
}

/**
 * A publisher's start-up line, with the credits it can sell with; a closed storefront says so (its paths answer 410
 * to new sales), as `emi publisher list` does, rather than look as if it sold.
 */
function storefrontLine(publisher: Publisher, available: number, now = Date.now()): string {
  const { id, payTo, products, closedAt } = publisher;
  const storefront = `publisher ${id}: /p/${id}/`;
  const sells = `${payTo} (${products.map((x) => x.slug).join(', ')})`;
  if (isClosed(closedAt, now)) {
    const since = new Date(closedAt).toISOString();
    return `${storefront} closed since ${since}: sells nothing new (410), still delivers payments already made to ${sells}`;
  }
  const closes = closedAt === null ? '' : `; closes at ${new Date(closedAt).toISOString()}`;
  return `${storefront} pays ${sells}${closes}; ${creditsNote(id, available)}`;
}

/** Each publisher's credits available at start, by id (the ledger is read once: the start-up lines are a snapshot). */
async function availableCredits(programme: PublisherProgramme): Promise<Map<string, number>> {
  const { ledger, publishers } = programme;
  const books = await Promise.all(publishers.map((p) => ledger.balance(p.id)));
  return new Map(books.map((b) => [b.publisherId, b.available]));
}

export async function createLocalPaywall(options: LocalPaywallOptions): Promise<LocalPaywall> {
  if (options.facilitatorUrl && !options.payTo) {
    throw new PaywallConfigError(
      'a payee address (EMI_PAYTO) is required when a facilitator URL is configured',
    );
  }
  if (options.payTo && !algosdk.isValidAddress(options.payTo)) {
    throw new PaywallConfigError(`payTo is not a valid Algorand address: ${JSON.stringify(options.payTo)}`);
  }
  const payTo = options.payTo ?? algosdk.generateAccount().addr.toString();
  // A payee that cannot receive USDC stops the start: every buyer would sign a payment the facilitator refuses.
  const { algodUrl, algodToken, network } = options;
  const payee =
    algodUrl && options.facilitatorUrl
      ? createPayeeGate(() => payeeOptInProblem(payTo, { algodUrl, algodToken, network }))
      : undefined;
  // The operator reads this one: it names the algod asked (its origin only: a hosted node's token is in its path).
  const problem = await payee?.check();
  if (problem) throw new PaywallConfigError(problem.detail);
  // Bad publishers stop the start before anything listens. The ledger's path is said at start: resolved here.
  const ledgerFile = resolve(options.ledgerFile ?? defaultLedgerFile());
  const publishers = await startPublisherProgramme({
    configFile: options.configFile,
    operatorPayTo: payTo,
    algodUrl: options.algodUrl,
    algodToken: options.algodToken,
    ledgerFile,
    // Without a facilitator URL the development facilitator settles (started below): its sales are test money.
    development: !options.facilitatorUrl,
    log: logToStderr,
  });
  const credits = publishers
    ? await availableCredits(publishers).catch((error: unknown) => {
        publishers.close();
        throw error;
      })
    : new Map<string, number>();
  const devFacilitator = options.facilitatorUrl
    ? null
    : await startDevFacilitator({
        // Development: the publishers' addresses can receive test USDC too.
        optIn: [payTo, ...(publishers?.publishers.map((p) => p.payTo) ?? [])],
        port: options.devFacilitatorPort ?? DEV_FACILITATOR_PORT,
      }).catch((error: unknown) => {
        publishers?.close();
        throw error;
      });
  const facilitatorUrl = options.facilitatorUrl ?? (devFacilitator as DevFacilitator).url;
  // Test money buys test data: the development stack sells the simulated market, and says so in every 402.
  const allowSimulated = options.allowSimulated ?? devFacilitator !== null;
  let book: SqlitePaymentBook | null = null;
  let votes: SqliteVoteStore | null = null;
  try {
    const bookFile = devFacilitator
      ? null
      : (options.paymentBookFile ?? resolve(stateFolder(), DEFAULT_PAYMENT_BOOK_FILE));
    book = bookFile ? new SqlitePaymentBook(bookFile) : null;
    const app = createPaywallApp(
      {
        payTo,
        facilitatorUrl,
        baseUrl: options.baseUrl,
        storage: createFsStorage(options.paidDir),
        facilitatorTimeoutMs: options.facilitatorTimeoutMs,
        network: options.network,
        indexerUrl: options.indexerUrl ?? devFacilitator?.url,
        allowSimulated,
        maxDataAgeSeconds: options.maxDataAgeSeconds,
      },
      {
        salePoints: publishers?.salePoints,
        hooks: publishers?.hooks,
        publishersConfigRefusal: publishers?.closedAt.refusal,
        payee,
        paymentBook: book ?? undefined,
      },
    );
    votes = options.voteStorePath ? openSqliteVoteStore(options.voteStorePath) : null;
    if (votes) {
      app.route(
        '/',
        createArenaVoteApp({
          store: votes,
          site: new URL(options.baseUrl).origin,
          // The socket's address (from loopback: the last X-Forwarded-For entry, the proxy's); a server that
          // composes this app must hand Node's bindings (`env`) on to its fetch.
          clientIp: nodeClientIp,
          ...(options.voteExportToken ? { exportToken: options.voteExportToken } : {}),
        }),
      );
    }
    const siteDir = options.siteDir;
    const mcp = siteDir
      ? createMcpRoute(() =>
          createMcpServer({
            readText: readTextFrom(siteDir),
            fetchPaid: fetchPaidThrough((path, init) => app.request(path, init)),
            baseUrl: options.baseUrl,
          }),
        )
      : null;
    return {
      app:
        publishers && options.buyerPage
          ? withStorefronts(app, publishers, options.buyerPage, devFacilitator !== null)
          : app,
      mcp,
      payTo,
      facilitatorUrl,
      devFacilitator,
      publishers,
      describe: () => [
        `x402 paywall: pays to ${payTo}${options.payTo ? '' : ' (throwaway development payee)'}`,
        devFacilitator
          ? `x402 facilitator: development facilitator on ${facilitatorUrl} (in-memory ledger, POST /dev/fund)`
          : `x402 facilitator: ${facilitatorUrl}`,
        `x402 paid files: ${options.paidDir} (${paidFilesPresent(options.paidDir)})`,
        bookFile
          ? `x402 payment book: ${bookFile} (settled payments are delivered again for an hour, across restarts)`
          : 'x402 payment book: in memory, like the development ledger',
        ...(options.voteStorePath
          ? [
              `arena votes: POST /arena/vote kept in ${options.voteStorePath}${options.voteExportToken ? ', exported at /arena/votes/export (EMI_VOTE_EXPORT_TOKEN)' : ''}`,
            ]
          : []),
        `x402 sells: ${allowSimulated ? 'simulated, replayed or live data (each 402 says which)' : 'live data only'}, at most ${options.maxDataAgeSeconds ?? DEFAULT_MAX_DATA_AGE_SECONDS} s old`,
        ...(publishers
          ? [
              `publisher credits: ${ledgerFile}`,
              ...publishers.publishers.map((p) => storefrontLine(p, credits.get(p.id) ?? 0)),
            ]
          : []),
      ],
      close: async () => {
        votes?.close();
        book?.close();
        await devFacilitator?.close();
        publishers?.close();
      },
    };
  } catch (error) {
    votes?.close();
    book?.close();
    await devFacilitator?.close();
    publishers?.close();
    throw error;
  }
}
