// `npm run preview:cloudflare -- --port P`: the Cloudflare recipe in workerd, as `wrangler deploy` would ship it.
// Uploads the paid files to the local R2 bucket, then runs `wrangler dev` on 127.0.0.1:P with the development
// facilitator on 127.0.0.1:4021 when no EMI_FACILITATOR_URL is set, in the foreground until Ctrl-C. The publishers
// of EMI_CONFIG's file are passed as EMI_PUBLISHERS (the Worker checks them), and EMI_ADMIN_TOKEN, EMI_ALGOD_URL,
// EMI_ALGOD_TOKEN and EMI_VOTE_EXPORT_TOKEN when set. The Worker sells what is in R2, not what is in paid/: whenever
// a generator run changes paid/, the files are uploaded again (as `npm run upload:r2` does for a deployed Worker),
// or it would sell the first upload's data until it is too old to sell (503 data_stale).
import { realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import algosdk from 'algosdk';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { startWranglerDev, uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import { checkPaywallEnvironment } from '../generator/config-file.ts';
import { paywallEnv } from '../paywall-worker/local.ts';
import { parsePublishers } from '../paywall-worker/publishers/config.ts';
import { readConfigJson } from '../paywall-worker/publishers/node.ts';
import { DEV_FACILITATOR_PORT, startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { onShutdown, portOption } from './cli-args.ts';

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: 'string', default: '8787' },
        dir: { type: 'string', default: 'dist' },
        paid: { type: 'string', default: 'paid' },
        'persist-to': { type: 'string', default: '.wrangler/preview' },
      },
    });
  } catch (error) {
    console.error(
      `preview:cloudflare: ${(error as Error).message.split('\n')[0]} (usage: npm run preview:cloudflare -- ` +
        '[--port 8787] [--dir dist] [--paid paid] [--persist-to .wrangler/preview])',
    );
    process.exit(2);
  }
})();

/** How often paid/ is looked at for a new generation. */
const PAID_CHECK_MS = 2000;

/** What paid/ holds now: the generation folder it points to and each paid file's identity (a new run changes it). */
async function paidState(dir: string): Promise<string> {
  const real = await realpath(dir).catch(() => dir);
  const files = await Promise.all(
    PAID_RESOURCES.map(async ({ file }) => {
      const found = await stat(join(real, file)).catch(() => null);
      return found ? `${file}:${found.ino}:${found.size}:${found.mtimeMs}` : `${file}:-`;
    }),
  );
  return [real, ...files].join('|');
}
const port = portOption(values.port);
const dist = resolve(values.dir);
const paid = resolve(values.paid);
const persistTo = resolve(values['persist-to']);
for (const [what, file] of [
  [dist, join(dist, 'index.html')],
  [paid, join(paid, 'x402-market-regime.json')],
]) {
  if (!(await stat(file as string).catch(() => null))) {
    console.error(
      `preview:cloudflare: nothing built in ${what}: run \`npx emi generate && npx emi build\` first`,
    );
    process.exit(2);
  }
}

// The configuration `emi paywall` would refuse (EMI_CONFIG's file, the EMI_* settings): one line, exit 2, as it does.
await checkPaywallEnvironment().catch((error: Error) => {
  console.error(`preview:cloudflare: ${error.message.split('\n')[0]}`);
  process.exit(2);
});

const env = paywallEnv();
const payTo = env.payTo ?? algosdk.generateAccount().addr.toString();
const publishers = env.configFile ? (await readConfigJson(env.configFile)).publishers : undefined;
// Development: the publishers' addresses can receive test USDC too (one that is the operator's payee is left for the
// Worker to name: the entries were checked above).
const publisherAddresses = (() => {
  try {
    return parsePublishers(publishers, payTo).map((p) => p.payTo);
  } catch {
    return [];
  }
})();
const facilitator = env.facilitatorUrl
  ? null
  : await startDevFacilitator({ optIn: [payTo, ...publisherAddresses], port: DEV_FACILITATOR_PORT });
const facilitatorUrl = env.facilitatorUrl ?? (facilitator?.url as string);

console.log(`uploading the paid files of ${paid} to the local R2 bucket (${persistTo})`);
let uploaded = await paidState(paid);
await uploadPaidFiles(paid, { persistTo });
const worker = await startWranglerDev({
  port,
  inspectorPort: port + 1,
  persistTo,
  assetsDir: dist,
  vars: {
    EMI_PAYTO: payTo,
    EMI_FACILITATOR_URL: facilitatorUrl,
    EMI_BASE_URL: env.baseUrl ?? `http://127.0.0.1:${port}`,
    // Test money buys test data: with the development facilitator the simulated market is sold, and says so.
    EMI_ALLOW_SIMULATED: (env.allowSimulated ?? facilitator !== null) ? '1' : '0',
    ...(env.indexerUrl || facilitator ? { EMI_INDEXER_URL: env.indexerUrl ?? facilitatorUrl } : {}),
    ...(env.maxDataAgeSeconds ? { EMI_MAX_DATA_AGE_SECONDS: String(env.maxDataAgeSeconds) } : {}),
    ...(publishers === undefined ? {} : { EMI_PUBLISHERS: JSON.stringify(publishers) }),
    ...(process.env.EMI_ADMIN_TOKEN ? { EMI_ADMIN_TOKEN: process.env.EMI_ADMIN_TOKEN } : {}),
    // The payee's and publishers' USDC opt-in asked there, and the votes' export route, as on a deployed Worker.
    ...(env.algodUrl ? { EMI_ALGOD_URL: env.algodUrl } : {}),
    ...(env.algodToken ? { EMI_ALGOD_TOKEN: env.algodToken } : {}),
    ...(env.voteExportToken ? { EMI_VOTE_EXPORT_TOKEN: env.voteExportToken } : {}),
  },
}).catch(async (error: unknown) => {
  await facilitator?.close();
  throw error;
});

console.log(`workerd (wrangler dev ${worker.pid}): ${worker.url}/`);
console.log(`x402 paywall: pays to ${payTo}${env.payTo ? '' : ' (throwaway development payee)'}`);
console.log(
  `x402 facilitator: ${facilitator ? `development facilitator on ${facilitatorUrl}` : facilitatorUrl}`,
);
console.log(
  `paid files: uploaded again to the local R2 bucket whenever ${paid} changes (a generator run); ` +
    'a deployed Worker needs `npm run upload:r2 -- --paid paid` after every run instead',
);
console.log('Ctrl-C stops wrangler, workerd and the facilitator.');

// One upload at a time; a change seen during one is uploaded by the next look.
let uploading: Promise<void> | null = null;
const watch = setInterval(() => {
  if (uploading) return;
  uploading = (async () => {
    const now = await paidState(paid);
    if (now === uploaded) return;
    await uploadPaidFiles(paid, { persistTo });
    uploaded = now;
    console.log(`${new Date().toISOString()} paid files changed: uploaded again to the local R2 bucket`);
  })()
    .catch((error: unknown) => {
      // Said once per try, and tried again at the next look (a run may have been switching paid/ just then).
      console.error(
        `paid files changed, but the upload failed (tried again shortly): ${(error as Error).message.split('\n')[0]}`,
      );
    })
    .finally(() => {
      uploading = null;
    });
}, PAID_CHECK_MS);

onShutdown(async () => {
  clearInterval(watch);
  await uploading;
  await worker.stop();
  await facilitator?.close();
});
