// The whole service on one local origin: the built site, the paywall worker on the four x402 paths, and the
// development facilitator when no real one is configured.
import { join } from 'node:path';
import { createLocalPaywall, paywallEnv } from '../paywall-worker/local.ts';
import { ALGORAND_MAINNET } from '../schemas/paid/terms.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { DEV_FACILITATOR_PREFIX, createPreviewApp } from './serve/preview.ts';

export interface LocalStackOptions {
  port: number;
  host: string;
  /** Built site folder (dist/). */
  dir: string;
  /** Paid bodies folder (paid/). */
  paid: string;
  /** Port of the development facilitator (default 4021, 0 for any free port). */
  devFacilitatorPort?: number;
  /** Config file (`--config`, else EMI_CONFIG): its `publishers` get storefronts under /p/<id>/. */
  config?: string;
  /** The publishers' credit ledger; default `publishers.sqlite` in EMI_STATE_DIR or `var`. */
  ledgerFile?: string;
  /** The payment book with a configured facilitator; default `payments.sqlite` in EMI_STATE_DIR or `var`. */
  paymentBookFile?: string;
  /** SQLite file of wallet-signed votes (POST /arena/vote), imported by the generator at each run. */
  voteStorePath?: string;
  log?: (line: string) => void;
  /**
   * Runs once the server listens, before its address is announced: whoever reads the address (a person, a test, a
   * second `emi up`) then finds it recorded too.
   */
  onListening?: (url: string) => Promise<void>;
}

export interface LocalStack {
  url: string;
  close(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? console.log;
  // Unset or empty variables mean the defaults (an empty folder name would be the working folder).
  const baseUrl = process.env.EMI_BASE_URL || `http://${options.host}:${options.port}`;
  // The environment first: what this call says explicitly wins over it.
  const paywall = await createLocalPaywall({
    ...paywallEnv(),
    paidDir: options.paid,
    baseUrl,
    devFacilitatorPort: options.devFacilitatorPort,
    ...(options.config ? { configFile: options.config } : {}),
    ledgerFile: options.ledgerFile,
    paymentBookFile: options.paymentBookFile,
    voteStorePath: options.voteStorePath,
    buyerPage: { dir: join(options.dir, 'x402-buyer'), devFundUrl: `${DEV_FACILITATOR_PREFIX}/dev/fund` },
    siteDir: options.dir,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    throw new Error(
      `the development facilitator's port ${options.devFacilitatorPort} is in use (another emi serve or up?): choose another with --dev-facilitator-port`,
    );
  });
  try {
    const app = createPreviewApp({
      root: options.dir,
      paywall: paywall.app,
      buyerConfig: {
        merchantAddress: paywall.payTo,
        network: ALGORAND_MAINNET,
        facilitatorMode: paywall.devFacilitator ? 'development' : 'production',
        ...(paywall.devFacilitator ? { devFundUrl: `${DEV_FACILITATOR_PREFIX}/dev/fund` } : {}),
      },
      devFacilitatorUrl: paywall.devFacilitator ? paywall.facilitatorUrl : undefined,
      mcp: paywall.mcp ?? undefined,
    });
    const server = await listen(app, options.port, options.host);
    await options.onListening?.(server.url);
    log(`site: ${server.url}/ (free API under ${server.url}/api/, docs, llms.txt, openapi.json)`);
    for (const line of paywall.describe()) log(line);
    log(`buyer page: ${server.url}/x402-buyer/`);
    log(`MCP (streamable HTTP): ${server.url}/mcp`);
    return {
      url: server.url,
      close: async () => {
        await server.close();
        await paywall.close();
      },
    };
  } catch (error) {
    await paywall.close();
    throw error;
  }
}
