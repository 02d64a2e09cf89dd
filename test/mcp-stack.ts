// The local stack the MCP agent tests run against: a simulated generation in a folder of its own and the paywall
// (with the development facilitator) listening on 127.0.0.1.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runPipeline } from '../generator/pipeline.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';

export const BASE_URL = 'http://127.0.0.1:8080';

export interface McpStack {
  /** Holds `site/`, `paid/` and `state/` of one generation. */
  root: string;
  paywall: LocalPaywall;
  paywallServer: Listening;
}

/** Generates the simulated market of `seed` at this minute and starts the paywall over its paid files. */
export async function startMcpStack(prefix: string, seed: number): Promise<McpStack> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const asOf = Math.floor(Date.now() / 60_000) * 60_000;
  const paths = { outDir: join(root, 'site'), paidDir: join(root, 'paid'), stateDir: join(root, 'state') };
  expect((await runPipeline({ ...paths, source: 'sim', seed, asOf })).status).toBe('ok');
  const paywall = await createLocalPaywall({
    paidDir: paths.paidDir,
    baseUrl: BASE_URL,
    devFacilitatorPort: 0,
  });
  const paywallServer = await listen(paywall.app, 0, '127.0.0.1');
  return { root, paywall, paywallServer };
}

export async function stopMcpStack(stack: Partial<McpStack>): Promise<void> {
  await stack.paywallServer?.close();
  await stack.paywall?.close();
  if (stack.root) await rm(stack.root, { recursive: true, force: true });
}
