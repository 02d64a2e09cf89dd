// The asset offered follows the network: testnet sales ask for Circle's test USDC (ASA 10458941), mainnet sales
// for USDC (ASA 31566704). A facilitator that supports the network is stood in (no testnet is reachable here).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createPaywallApp } from '../paywall-worker/app.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { ALGORAND_MAINNET, ALGORAND_TESTNET } from '../schemas/paid/terms.ts';
import { resourceById, supportedOnlyFacilitator, writePaidFixtures } from './paywall-harness.ts';

describe('USDC asset per network', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-networks-'));
    await writePaidFixtures(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    [ALGORAND_TESTNET, '10458941'],
    [ALGORAND_MAINNET, '31566704'],
  ])('%s asks for ASA %s', async (network, asset) => {
    const app = createPaywallApp(
      {
        payTo: algosdk.generateAccount().addr.toString(),
        facilitatorUrl: 'http://127.0.0.1:1',
        baseUrl: 'https://emi.test',
        network,
        storage: createFsStorage(dir),
        allowSimulated: true,
      },
      { facilitatorClient: supportedOnlyFacilitator(network) },
    );
    const response = await app.request(resourceById('paidMarketRegime').path);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get('PAYMENT-REQUIRED')!);
    expect(required.accepts[0]).toMatchObject({ network, asset });
    expect(((await response.json()) as { message?: string }).message ?? '').not.toContain(
      asset === '10458941' ? '31566704' : '10458941',
    );
  });
});
