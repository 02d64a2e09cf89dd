// Payment terms shared by the paid schemas, the paywall worker and the buyer tooling (x402 v2, exact scheme).
import * as z from 'zod';

export const X402_VERSION = 2;
/** CAIP-2 id of Algorand mainnet, short form (first 32 chars of the url-safe genesis hash). Emitted everywhere. */
export const ALGORAND_MAINNET = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k';
/** The same network written with the full genesis hash; accepted on input, never emitted. */
export const ALGORAND_MAINNET_LONG = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=';
export const ALGORAND_MAINNET_GENESIS_HASH = 'wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=';
/** USDC on Algorand mainnet (6 decimals). */
export const USDC_ASA_ID = '31566704';
/** Algorand testnet (short form) and Circle's test USDC there. */
export const ALGORAND_TESTNET = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDe';
export const USDC_TESTNET_ASA_ID = '10458941';
/** The USDC asset of a network (short-form CAIP-2 id): testnet's test USDC, mainnet's USDC otherwise. */
export const usdcAssetFor = (network: string): string =>
  network === ALGORAND_TESTNET ? USDC_TESTNET_ASA_ID : USDC_ASA_ID;
export { USDC_DECIMALS } from '../usdc.ts';
export const ECOSYSTEM = 'x402 v2 on Algorand (USDC, ASA 31566704)';
/** Public schema version of the atlas and the human report (spec 9). */
export const ATLAS_SCHEMA_VERSION = '0.1.0';
export const PAYMENT_SETTLED = 'settled';

/** Both spellings of an Algorand network id: `algorand:` + 32 chars, or + the full 44-char genesis hash. */
export const AlgorandNetworkId = z.string().regex(/^algorand:[A-Za-z0-9+/_=-]{32}([A-Za-z0-9+/_=-]{12})?$/);
export const AtomicAmount = z.string().regex(/^(0|[1-9][0-9]{0,19})$/, 'an integer amount in atomic units');
export const AlgorandAddress = z.string().regex(/^[A-Z2-7]{58}$/, 'a 58-character Algorand address');

/** Marks every paid body: it is only ever served after a settled payment, and it says so. */
export const PaymentStatus = z.literal(PAYMENT_SETTLED);

/**
 * Present only in a body bought through a publisher's storefront (`/p/<id>/...`): who sold it and which address
 * was paid. The rest of the body is the same report, unchanged.
 */
export const PublisherBlock = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    contact_url: z.string(),
    terms_url: z.string(),
    pay_to: AlgorandAddress,
    price_usd: z.string(),
    note: z.string(),
  })
  .describe('the publisher that sold this copy; the payment went directly to its address');
