// The worked example of /docs/agents/ (site/docs/examples/mcp-pay.mjs) run as written, with node, against the
// local stack's MCP endpoint and development facilitator: it pays for a paid tool and prints the body.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { createMcpRoute } from '../mcp/http.ts';
import { readTextFrom } from '../mcp/published-fs.ts';
import { createMcpServer, fetchPaidThrough } from '../mcp/server.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';

const run = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });

describe('the MCP worked example', () => {
  let root: string;
  let paywall: LocalPaywall;
  let mcp: Listening;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'emi-mcp-example-'));
    const asOf = Math.floor(Date.now() / 60_000) * 60_000;
    const paths = { outDir: join(root, 'site'), paidDir: join(root, 'paid'), stateDir: join(root, 'state') };
    expect((await runPipeline({ ...paths, source: 'sim', seed: 7, asOf })).status).toBe('ok');
    paywall = await createLocalPaywall({
      paidDir: paths.paidDir,
      baseUrl: 'http://127.0.0.1:8080',
      devFacilitatorPort: 0,
    });
    const route = createMcpRoute(() =>
      createMcpServer({
        readText: readTextFrom(paths.outDir),
        fetchPaid: fetchPaidThrough((path, init) => paywall.app.request(path, init)),
        baseUrl: 'http://127.0.0.1:8080',
      }),
    );
    mcp = await listen(route, 0);
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await paywall?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('pays for paid_main_brain and prints the body; the payee receives exactly the price', async () => {
    const ledger = paywall.devFacilitator!.ledger;
    const before = ledger.assetBalance(paywall.payTo);
    const result = await run(['site/docs/examples/mcp-pay.mjs', `${mcp.url}/mcp`], {
      EMI_DEV_FACILITATOR_URL: paywall.facilitatorUrl,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/settled: [A-Z2-7]{52} \(simulated data\)/);
    expect((JSON.parse(result.stdout) as { coins?: unknown }).coins).toBeDefined();
    expect(ledger.assetBalance(paywall.payTo) - before).toBe(10_000n);
  });

  it('says how to run it when the facilitator is not given', async () => {
    const result = await run(['site/docs/examples/mcp-pay.mjs', `${mcp.url}/mcp`], {
      EMI_DEV_FACILITATOR_URL: '',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/usage: EMI_DEV_FACILITATOR_URL=/);
  });
});
