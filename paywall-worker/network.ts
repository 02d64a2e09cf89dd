// Algorand network ids in CAIP-2 form. Both spellings are accepted on input (`algorand:` + the first 32 characters
// of the genesis hash, or + the full hash); the short one is the only one emitted.
import { ALGORAND_MAINNET, ALGORAND_MAINNET_LONG, ALGORAND_TESTNET } from '../schemas/paid/terms.ts';

const ALGORAND_TESTNET_LONG = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=';

const SHORT_FORM: Readonly<Record<string, string>> = {
  [ALGORAND_MAINNET]: ALGORAND_MAINNET,
  [ALGORAND_MAINNET_LONG]: ALGORAND_MAINNET,
  [ALGORAND_TESTNET]: ALGORAND_TESTNET,
  [ALGORAND_TESTNET_LONG]: ALGORAND_TESTNET,
};

/** The short CAIP-2 id of a known Algorand network; an unknown id is returned unchanged. */
export const normalizeNetwork = (network: string): string => SHORT_FORM[network] ?? network;

export const isKnownAlgorandNetwork = (network: string): boolean => network in SHORT_FORM;
