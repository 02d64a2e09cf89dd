// The "pay from code" examples exactly as published: the Node example file is run with node against the local
// stack (paywall worker + development facilitator, test money), and the curl example decodes the real 402.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceById, startStack } from './paywall-harness.ts';
import type { Stack } from './paywall-harness.ts';

const run = (file: string, args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe('pay from code examples', () => {
  it('the Node example pays with @x402/fetch and prints the paid body', async () => {
    const resource = resourceById('paidMarketRegime');
    const balance = stack.facilitator.ledger.assetBalance(stack.payTo);
    const result = await run(
      process.execPath,
      ['site/docs/examples/pay-from-code.mjs', stack.url(resource)],
      {
        EMI_DEV_FACILITATOR_URL: stack.facilitator.url,
      },
    );
    expect(result.stderr).toMatch(/status 200; settled: true; transaction: [A-Z2-7]{52}/);
    expect(result.code).toBe(0);
    expect(resource.schema.safeParse(JSON.parse(result.stdout)).success).toBe(true);
    expect(stack.facilitator.ledger.assetBalance(stack.payTo) - balance).toBe(BigInt(resource.amountAtomic));
  }, 90_000);

  it('the Node example refuses to run without a wallet, in one line', async () => {
    const result = await run(
      process.execPath,
      ['site/docs/examples/pay-from-code.mjs', 'http://127.0.0.1:1/x'],
      {
        EMI_DEV_FACILITATOR_URL: '',
        AVM_PRIVATE_KEY: '',
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(/^set AVM_PRIVATE_KEY/);
  });

  it('the curl example shows the 402 decoded', async () => {
    const resource = resourceById('atlas');
    const result = await run('bash', ['site/docs/examples/see-the-402.sh', stack.url(resource)]);
    expect(result.code).toBe(0);
    const decoded = JSON.parse(result.stdout) as {
      x402Version: number;
      accepts: { amount: string; payTo: string }[];
    };
    expect(decoded.x402Version).toBe(2);
    expect(decoded.accepts[0]).toMatchObject({ amount: resource.amountAtomic, payTo: stack.payTo });
  });
});
