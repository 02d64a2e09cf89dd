// Which tracked assets each simulated venue leaves out, so that the default simulated run walks the fallback chain
// the way live runs do (a venue without a contract, a halted one, a delisted one). The market behind every venue is
// the same seeded model: whichever venue serves an asset, the normalised value is the same.

/** Binance USDⓈ-M (simulated) lists the four largest coins only: ALGO, XLM and HBAR fall through to Bybit. */
export const BINANCE_USDM_UNLISTED: ReadonlySet<string> = new Set(['ALGO', 'XLM', 'HBAR']);

/** Bybit (simulated) has no XLM contract and shows HBAR halted, its fields empty: HBAR falls through to OKX. */
export const BYBIT_UNLISTED: ReadonlySet<string> = new Set(['XLM']);
export const BYBIT_HALTED: ReadonlySet<string> = new Set(['HBAR']);

/** OKX (simulated) answers 51001 for XLM's funding and open interest (its liquidations stay): XLM ends on Hyperliquid. */
export const OKX_UNLISTED: ReadonlySet<string> = new Set(['XLM']);

/** A coin Hyperliquid keeps in its universe after delisting it (`isDelisted: true`, zeros in its context). */
export const HYPERLIQUID_DELISTED_COIN = 'LUNA';

/** Dated futures Bybit lists among linear contracts (empty funding fields); the symbol is the contract's base. */
export const BYBIT_DATED_FUTURES: readonly string[] = ['BTC', 'ETH'];
