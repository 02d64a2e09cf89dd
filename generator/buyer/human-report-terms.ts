// The terms the buyer page holds the atlas human report's 402 challenge to. Plain constants without zod so the
// browser bundle stays small; test/buyer-challenge.test.ts pins them to the registry and schemas/paid/terms.ts.

export const HUMAN_REPORT_PATH = '/api/x402-atlas-human-report.php';
/** 0.10 USDC in atomic units (6 decimals). */
export const HUMAN_REPORT_AMOUNT = '100000';
export const USDC_ASSET_ID = '31566704';
export const USDC_DECIMALS = 6;
export const ALGORAND_MAINNET_GENESIS_HASH = 'wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=';
/** Both CAIP-2 spellings of Algorand mainnet: the 32-char prefix (emitted by our worker) and the full hash. */
export const ALGORAND_MAINNET_IDS: readonly string[] = [
  'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73k',
  `algorand:${ALGORAND_MAINNET_GENESIS_HASH}`,
];
export const isAlgorandMainnet = (network: string): boolean => ALGORAND_MAINNET_IDS.includes(network);
