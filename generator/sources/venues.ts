// Facts about each venue that both the adapters and the simulator need: where it lives and how it names things.

export const VENUE_IDS = [
  'binance-spot',
  'binance-usdm',
  'okx',
  'coinbase',
  'kraken',
  'coingecko',
  'bybit',
  'hyperliquid',
] as const;
export type VenueId = (typeof VENUE_IDS)[number];

/**
 * Canonical base URL of each venue's public REST API. Adapters always build URLs on these origins (so recordings and
 * the simulator are keyed the same way whatever the deployment); a live transport may route an origin elsewhere.
 */
export const VENUE_BASE_URLS: Readonly<Record<VenueId, string>> = {
  'binance-spot': 'https://api.binance.com',
  'binance-usdm': 'https://fapi.binance.com',
  okx: 'https://www.okx.com',
  coinbase: 'https://api.exchange.coinbase.com',
  kraken: 'https://api.kraken.com',
  coingecko: 'https://api.coingecko.com',
  bybit: 'https://api.bybit.com',
  hyperliquid: 'https://api.hyperliquid.xyz',
};

/** Binance spot, Binance USDⓈ-M and Bybit linear name a USDT market by concatenation: BTC -> BTCUSDT. */
export const binanceSymbol = (symbol: string): string => `${symbol}USDT`;

/** OKX names the underlying of a USDT swap with a dash: BTC -> BTC-USDT (the instrument is BTC-USDT-SWAP). */
export const okxUnderlying = (symbol: string): string => `${symbol}-USDT`;
export const okxSwap = (symbol: string): string => `${okxUnderlying(symbol)}-SWAP`;

/** Coinbase Exchange trades the tracked assets against USD: BTC -> BTC-USD. */
export const coinbaseProduct = (symbol: string): string => `${symbol}-USD`;

/** Kraken calls bitcoin XBT. */
export const krakenPair = (symbol: string): string => `${symbol === 'BTC' ? 'XBT' : symbol}USD`;

/** Kraken answers older pairs under their legacy names (XXBTZUSD); newer ones keep the name asked for (SOLUSD). */
const KRAKEN_LEGACY_PAIRS: Readonly<Record<string, string>> = {
  BTC: 'XXBTZUSD',
  ETH: 'XETHZUSD',
  XRP: 'XXRPZUSD',
  XLM: 'XXLMZUSD',
};

/** The keys under which Kraken may answer a symbol's USD pair, most likely first. */
export const krakenResultKeys = (symbol: string): string[] => {
  const pair = krakenPair(symbol);
  const legacy = KRAKEN_LEGACY_PAIRS[symbol];
  return legacy ? [legacy, pair] : [pair];
};

/** CoinGecko's coin ids; a symbol without one is not served by CoinGecko. */
export const COINGECKO_IDS: Readonly<Record<string, string>> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  XRP: 'ripple',
  SOL: 'solana',
  ALGO: 'algorand',
  XLM: 'stellar',
  HBAR: 'hedera-hashgraph',
};

/**
 * Coins per contract of OKX's USDT swaps (the instruments endpoint's `ctVal`), needed because OKX reports
 * liquidation sizes in contracts. Values as listed by OKX for these swaps; a live deployment should refresh them
 * from `/api/v5/public/instruments?instType=SWAP`. Any other coin (the synthetic benchmark symbols) counts 1 coin.
 */
const OKX_CONTRACT_VALUES: Readonly<Record<string, number>> = {
  BTC: 0.01,
  ETH: 0.1,
  XRP: 100,
  SOL: 1,
  ALGO: 10,
  XLM: 100,
  HBAR: 100,
};

export const okxContractValue = (symbol: string): number => OKX_CONTRACT_VALUES[symbol] ?? 1;
