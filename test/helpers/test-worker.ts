// The Cloudflare Worker under `wrangler dev` for the tests, on free ports, with the settings every such test gives
// it: the payee, the development facilitator (also answering as the indexer), its own base URL, and the simulated
// fixtures allowed for sale.
import { startWranglerDev } from '../../deploy/cloudflare/run.ts';
import type { WranglerDev } from '../../deploy/cloudflare/run.ts';
import { freePort } from '../free-port.ts';

export interface TestWorkerOptions {
  persistTo: string;
  assetsDir: string;
  payTo: string;
  facilitatorUrl: string;
  /** Added to (or replacing) the common settings. */
  vars?: Readonly<Record<string, string>>;
  /** Where its two ports come from (default: any free port). */
  ports?: () => Promise<number>;
}

export async function startTestWorker(options: TestWorkerOptions): Promise<WranglerDev> {
  const ports = options.ports ?? freePort;
  const port = await ports();
  return startWranglerDev({
    port,
    inspectorPort: await ports(),
    persistTo: options.persistTo,
    assetsDir: options.assetsDir,
    vars: {
      EMI_PAYTO: options.payTo,
      EMI_FACILITATOR_URL: options.facilitatorUrl,
      EMI_INDEXER_URL: options.facilitatorUrl,
      EMI_BASE_URL: `http://127.0.0.1:${port}`,
      EMI_ALLOW_SIMULATED: '1', // the fixtures are the simulated examples
      ...options.vars,
    },
  });
}
