// `emi paywall` (run the worker on Node) and `emi buy PATH` (pay for a path with a development wallet). The
// paywall's settings (its options and EMI_* variables) and its configuration file (--config or EMI_CONFIG) are
// checked before it starts, by the configuration hook (generator/config-file.ts): a bad one is a usage mistake,
// exit code 2. A payee that cannot receive USDC, or an algod that cannot be asked, stops the start with exit code 1:
// the machine's or the chain's state, not a typo.
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createLocalPaywall, paywallEnv, stateFiles } from './local.ts';
import type { LocalPaywallOptions } from './local.ts';
import { MCP_PATH } from '../mcp/http.ts';
import { normalisedRequest } from '../schemas/delivery.ts';
import { listen } from './node-listen.ts';
import { BUY_EXIT_CODES, BUY_EXIT_HELP, DEFAULT_RETRY_FOR_SECONDS, runBuy } from './buy-command.ts';
import { writeOutput } from '../generator/output.ts';
import type { BuyCommandOptions } from './buy-command.ts';
import { DEV_FACILITATOR_PORT } from './dev-facilitator/server.ts';
import { parsePort, requireFolder, requireFolderPath, usageError } from '../generator/cli-options.ts';
import { VOTE_STORE_FILE, stateFolder } from '../generator/defaults.ts';
import { DEFAULT_BASE_URL } from '../generator/discovery/urls.ts';

type BuyCliOptions = Omit<BuyCommandOptions, 'path'>;

const VOTES_HELP = [
  'Arena votes:',
  `  POST /arena/vote keeps wallet-signed votes in <state>/${VOTE_STORE_FILE}; the next \`emi generate\``,
  '  with the same state folder imports them. With EMI_VOTE_EXPORT_TOKEN set, GET /arena/votes/export',
  '  hands them to a generator on another machine (its EMI_VOTE_EXPORT_URL and the same token).',
  "  Rate limits are kept in this process's memory, per wallet and per client address: the connection's,",
  '  or, from a proxy on loopback (the nginx recipe), the last X-Forwarded-For entry, which the proxy',
  '  appends; an IPv6 client counts by its /64.',
].join('\n');

/**
 * The built site's parts and the state folder's files, as `emi paywall` passes them (shared with `npm run
 * preview:nginx`, which runs the worker as `emi paywall --site dist` does).
 */
export function paywallFolders(
  site: string | undefined,
  state: string,
): Pick<LocalPaywallOptions, 'siteDir' | 'buyerPage' | 'voteStorePath' | 'paymentBookFile' | 'ledgerFile'> {
  return {
    // The built site: /mcp over it, and the publishers' storefronts from its buyer page.
    ...(site ? { siteDir: resolve(site), buyerPage: { dir: join(resolve(site), 'x402-buyer') } } : {}),
    // POST /arena/vote (proxied here by the nginx and Netlify recipes) stores where the generator imports from; the
    // payment book and the credit ledger are where `emi up`, `emi serve` and `emi publisher` keep theirs.
    ...stateFiles(state),
  };
}

/** A port in use says which option chooses another; any other failure to listen is said as it is. */
function listenError(error: NodeJS.ErrnoException, what: string, option: string): Error {
  if (error.code !== 'EADDRINUSE') return error;
  return new Error(`${what} is in use (another emi paywall, serve or up?): choose another with ${option}`);
}

function waitForShutdown(close: () => Promise<void>): void {
  const stop = () => {
    void close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export function registerPaywallCommands(program: Command): void {
  program
    .command('paywall')
    .description(
      'run the x402 v2 paywall worker on Node (the development facilitator when no facilitator URL is set)',
    )
    .option('--port <n>', 'port to listen on', parsePort, 8402)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--pay-to <address>', 'Algorand payee address (env EMI_PAYTO)')
    .option('--facilitator-url <url>', 'x402 facilitator base URL (env EMI_FACILITATOR_URL)')
    .option(
      '--paid <dir>',
      'folder holding the paid bodies (env EMI_PAID_DIR)',
      // Unset or empty means the default (an empty folder name would be the working folder).
      process.env.EMI_PAID_DIR || 'paid',
    )
    .option('--base-url <url>', 'public base URL (env EMI_BASE_URL)')
    .option(
      '--site <dir>',
      "the built site (dist/): also answer the MCP endpoint /mcp over it and the publishers' storefronts (/p/<id>/x402-buyer/)",
    )
    .option(
      '--state <dir>',
      `state folder (env EMI_STATE_DIR): the wallet-signed arena votes (${VOTE_STORE_FILE}, which \`emi generate\` ` +
        `imports from its own --state), the payment book and the publishers' credit ledger`,
      stateFolder(),
    )
    // Read and checked as `emi serve` reads it (generator/config-file.ts): a bad file is exit code 2 before a start.
    .option('--config <file>', 'JSON configuration file, e.g. its publishers (default: EMI_CONFIG)')
    .option(
      '--dev-facilitator-port <n>',
      'port of the development facilitator, when no facilitator URL is set (0: any free port)',
      parsePort,
      DEV_FACILITATOR_PORT,
    )
    .option(
      '--production',
      'refuse to start without a payee (EMI_PAYTO) and a facilitator URL (EMI_FACILITATOR_URL): never the ' +
        'development facilitator and its throwaway payee (the systemd unit passes it)',
    )
    .addHelpText('after', `\n${VOTES_HELP}\n`)
    .action(
      async (o: {
        port: number;
        host: string;
        payTo?: string;
        facilitatorUrl?: string;
        paid: string;
        baseUrl?: string;
        site?: string;
        state: string;
        config?: string;
        devFacilitatorPort: number;
        production?: boolean;
      }) => {
        const env = paywallEnv();
        const payTo = o.payTo ?? env.payTo;
        const facilitatorUrl = o.facilitatorUrl ?? env.facilitatorUrl;
        // An empty environment file must not start a production worker on test money that says it is healthy.
        if (o.production && (!payTo || !facilitatorUrl)) {
          throw usageError(
            `--production needs ${[!payTo && 'a payee (EMI_PAYTO or --pay-to)', !facilitatorUrl && 'a facilitator URL (EMI_FACILITATOR_URL or --facilitator-url)'].filter(Boolean).join(' and ')}`,
          );
        }
        // A --site that names no folder would serve no /mcp and no storefront, silently.
        if (o.site) {
          requireFolder(o.site, {
            refusal: 'no MCP endpoint or storefront to serve',
            option: '--site',
            writtenBy: ['emi build', '--out'],
          });
        }
        // Its votes, payment book and credit ledger go there: a file in the way is said now, not as a raw EEXIST.
        await requireFolderPath(o.state, 'state folder');
        // Its 402 answers name the resource at the base URL: --port 0 without one is chosen before, never said as :0.
        const explicitBase = o.baseUrl ?? env.baseUrl;
        const port =
          o.port === 0 && !explicitBase
            ? await (await import('../generator/state/instance-lock.ts')).pickFreePort(o.host)
            : o.port;
        const baseUrl = explicitBase ?? `http://${o.host}:${port}`;
        const paywall = await createLocalPaywall({
          ...env,
          paidDir: resolve(o.paid),
          baseUrl,
          payTo,
          facilitatorUrl,
          configFile: o.config ?? env.configFile,
          devFacilitatorPort: o.devFacilitatorPort,
          ...paywallFolders(o.site, o.state),
        }).catch((error: NodeJS.ErrnoException) => {
          throw listenError(
            error,
            `the development facilitator's port ${o.devFacilitatorPort}`,
            '--dev-facilitator-port',
          );
        });
        const { app, mcp } = paywall;
        // Nothing may keep running when the worker cannot listen: the development facilitator is closed too.
        const server = await listen(
          {
            // `env` carries Node's socket: the vote route's client address. The path as every host routes it
            // (`//mcp` is /mcp), for MCP and the storefronts as for the paywall's own routes.
            fetch: (raw, env) => {
              const request = normalisedRequest(raw);
              return (mcp && new URL(request.url).pathname === MCP_PATH ? mcp : app).fetch(request, env);
            },
          },
          port,
          o.host,
        ).catch(async (error: NodeJS.ErrnoException) => {
          await paywall.close();
          throw listenError(error, `port ${port} on ${o.host}`, '--port');
        });
        console.log(`x402 paywall listening on http://${o.host}:${server.port}`);
        for (const line of paywall.describe()) console.log(line);
        waitForShutdown(async () => {
          await server.close();
          await paywall.close();
        });
      },
    );

  program
    .command('buy')
    .description(
      'pay for a paid path with test money: a development wallet funded by the development facilitator',
    )
    .argument('<path>', 'paid path (e.g. /api/x402-atlas.php) or full URL')
    .option(
      '--base-url <url>',
      'where the site runs (env EMI_BASE_URL)',
      process.env.EMI_BASE_URL || DEFAULT_BASE_URL,
    )
    .option(
      '--facilitator-url <url>',
      'development facilitator (env EMI_FACILITATOR_URL)',
      process.env.EMI_FACILITATOR_URL || `http://127.0.0.1:${DEV_FACILITATOR_PORT}`,
    )
    .option(
      '--retry-for <seconds>',
      'after the payment is sent, resend the same payment for up to this long until the file or a refusal ' +
        `comes (default ${DEFAULT_RETRY_FOR_SECONDS}; 0: send once)`,
    )
    .option(
      '--payment-signature <header|@file>',
      'send a payment kept by an earlier `emi buy` (exit code 6) again instead of paying: never charged twice',
    )
    .addHelpText('after', `\nStatus lines go to stderr, only the body to stdout.\n${BUY_EXIT_HELP}`)
    .action(async (path: string, o: BuyCliOptions) => {
      const code = await runBuy(
        { path, ...o },
        { stdout: (text) => writeOutput(process.stdout, text), stderr: (line) => console.error(line) },
      );
      process.exitCode = code;
      // The official client asks the facilitator for the ledger's parameters without a deadline of its own: past
      // ours that socket may stay open for minutes, and nothing more can come of it. The timer is unref'd, so it
      // fires only while something else still holds the process (nothing was written to stdout on this path).
      if (code === BUY_EXIT_CODES.unreachable) setTimeout(() => process.exit(), 1000).unref();
    });
}
