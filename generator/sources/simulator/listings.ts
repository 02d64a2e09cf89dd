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

// The spot chain (candles, ticker, book: Binance spot, Coinbase, Kraken, CoinGecko) is walked the same way; the gaps
// are chosen so that every spot adapter parses at least one asset and every asset still ends with every kind of data.

/**
 * Binance spot (simulated) lists the four largest coins only: its multi-symbol ticker call then fails whole (-1121)
 * and is split per symbol, as live; ALGO, XLM and HBAR fall through to Coinbase.
 */
export const BINANCE_SPOT_UNLISTED: ReadonlySet<string> = new Set(['ALGO', 'XLM', 'HBAR']);

/**
 * Coinbase (simulated) answers its public rate limit (HTTP 429 `{"message": "Public rate limit exceeded"}`) to these
 * calls: XLM's candles and stats, HBAR's stats. They fall through to Kraken (ALGO gets all three from Coinbase).
 */
export const COINBASE_THROTTLED: Readonly<Record<'candles' | 'stats', ReadonlySet<string>>> = {
  candles: new Set(['XLM']),
  stats: new Set(['XLM', 'HBAR']),
};

/**
 * Kraken (simulated) has no HBAR pair: a Ticker call naming it fails whole with `EQuery:Unknown asset pair` in the
 * envelope over HTTP 200 and is split per pair, as live; HBAR's price then comes from CoinGecko.
 */
export const KRAKEN_UNLISTED: ReadonlySet<string> = new Set(['HBAR']);
