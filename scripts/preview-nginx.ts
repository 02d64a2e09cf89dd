// `npm run preview:nginx -- --port P`: the nginx recipe for real. Renders deploy/nginx for the built dist/, runs
// Debian's nginx on 127.0.0.1:P in front of the Node paywall worker as `emi paywall --site dist` runs it (the paid
// paths, /mcp, the arena votes and the publishers' storefronts), and the development facilitator on 127.0.0.1:4021
// when no EMI_FACILITATOR_URL is set, in the foreground until Ctrl-C, then stops all it started. Run as root,
// nginx's workers read dist/ as its owner.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { renderNginxSite } from '../deploy/nginx/render.ts';
import { startNginx } from '../deploy/nginx/run.ts';
import { MCP_PATH } from '../schemas/delivery.ts';
import { createLocalPaywall, paywallEnv } from '../paywall-worker/local.ts';
import { paywallFolders } from '../paywall-worker/cli.ts';
import { checkPaywallEnvironment } from '../generator/config-file.ts';
import { stateFolder } from '../generator/defaults.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { onShutdown, portOption } from './cli-args.ts';

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: 'string', default: '8080' },
        dir: { type: 'string', default: 'dist' },
        paid: { type: 'string', default: 'paid' },
      },
    });
  } catch (error) {
    console.error(
      `preview:nginx: ${(error as Error).message.split('\n')[0]} (usage: npm run preview:nginx -- ` +
        '[--port 8080] [--dir dist] [--paid paid])',
    );
    process.exit(2);
  }
})();
const { values } = parsed;
const port = portOption(values.port);
const root = resolve(values.dir);
if (!(await stat(join(root, 'index.html')).catch(() => null))) {
  console.error(
    `preview:nginx: ${root} holds no built site: run \`npx emi generate && npx emi build\` first`,
  );
  process.exit(2);
}

// The configuration `emi paywall` would refuse (EMI_CONFIG's file, the EMI_* settings): one line, exit 2, as it does.
await checkPaywallEnvironment().catch((error: Error) => {
  console.error(`preview:nginx: ${error.message.split('\n')[0]}`);
  process.exit(2);
});

const url = `http://127.0.0.1:${port}`;
const paywall = await createLocalPaywall({
  ...paywallEnv(),
  paidDir: resolve(values.paid),
  baseUrl: url,
  // As `emi paywall --site dist` behind the recipe: /mcp, the storefronts, the votes (and their export with
  // EMI_VOTE_EXPORT_TOKEN), the payment book and the credit ledger in the state folder (EMI_STATE_DIR, else var).
  ...paywallFolders(root, stateFolder()),
}).catch((error: unknown) => {
  // What is left is the machine's or the chain's state (a payee without USDC, a port in use): exit 1, as emi's.
  console.error(`preview:nginx: ${(error as Error).message.split('\n')[0]}`);
  process.exit(1);
});
const { app, mcp } = paywall;
const worker = await listen({
  fetch: (request, env) =>
    (mcp && new URL(request.url).pathname === MCP_PATH ? mcp : app).fetch(request, env),
});
const prefix = await mkdtemp(join(tmpdir(), 'emi-nginx-'));
const rendered = await renderNginxSite({
  root,
  listen: `127.0.0.1:${port}`,
  paywallUpstream: `127.0.0.1:${worker.port}`,
});
// The http block the recipe goes in is Debian's nginx.conf's, which says `gzip on` (the recipe sets gzip_types).
const site = `gzip on;\n${rendered}`;
// Ready once nginx serves a file of the site (200), not when it answers at all: its workers must read dist/.
const nginx = await startNginx(prefix, site, `${url}/index.html`, { siteRoot: root }).catch(
  async (error: unknown) => {
    await worker.close();
    await paywall.close();
    await rm(prefix, { recursive: true, force: true });
    console.error(`preview:nginx: ${(error as Error).message}`);
    process.exit(1);
  },
);

console.log(`nginx ${nginx.pid}: ${url}/ (configuration and logs in ${prefix})`);
console.log(
  `paywall worker: ${worker.url} behind nginx on the four x402 paths, /x402/health and ${url}${MCP_PATH}`,
);
for (const line of paywall.describe()) console.log(line);
console.log('Ctrl-C stops nginx, the worker and the facilitator.');

onShutdown(async () => {
  await nginx.stop();
  await worker.close();
  await paywall.close();
  await rm(prefix, { recursive: true, force: true });
});
