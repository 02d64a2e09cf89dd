// The "pay from code" examples exactly as published: the Node example file is run with node against the local
// stack (paywall worker + development facilitator, test money), and the curl example decodes the real 402.
import { execFile } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  // Between the example and the site, a proxy that passes the first paid request on (the payment settles, the file
  // is sent) and then loses the answer: `drop` resets the connection, `gateway` answers the 504 a host gives when
  // the paywall's answer did not come back, naming the transaction.
  it.each(['drop', 'gateway'] as const)(
    'the Node example sends the same payment again when the answer is lost (%s): the file, charged once',
    async (loss) => {
      const resource = resourceById('paidMarketRegime');
      const target = new URL(stack.url(resource));
      const signatures: string[] = [];
      const proxy = createServer((req, res) => {
        const signature = req.headers['payment-signature'];
        if (typeof signature === 'string') signatures.push(signature);
        const upstream = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            if (typeof signature === 'string' && signatures.length === 1) {
              answer.resume();
              answer.on('end', () => {
                if (loss === 'drop') return req.socket.destroy();
                res.writeHead(504, { 'Content-Type': 'application/json', 'Retry-After': '1' });
                res.end(
                  JSON.stringify({ success: false, error: 'paywall_outcome_unknown', transaction: 'X' }),
                );
              });
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const balance = stack.facilitator.ledger.assetBalance(stack.payTo);
        const { port } = proxy.address() as AddressInfo;
        const result = await run(
          process.execPath,
          ['site/docs/examples/pay-from-code.mjs', `http://127.0.0.1:${port}${target.pathname}`],
          { EMI_DEV_FACILITATOR_URL: stack.facilitator.url },
        );
        expect(result.stderr).toMatch(/same payment again/);
        expect(result.stderr).toMatch(/status 200; settled: true; transaction: [A-Z2-7]{52}/);
        expect(result.code).toBe(0);
        expect(resource.schema.safeParse(JSON.parse(result.stdout)).success).toBe(true);
        expect(signatures.length).toBe(2);
        expect(new Set(signatures).size).toBe(1); // the same payment, never a new signature
        expect(stack.facilitator.ledger.assetBalance(stack.payTo) - balance).toBe(
          BigInt(resource.amountAtomic),
        );
      } finally {
        proxy.closeAllConnections();
        await new Promise<void>((resolve) => proxy.close(() => resolve()));
      }
    },
    90_000,
  );

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
